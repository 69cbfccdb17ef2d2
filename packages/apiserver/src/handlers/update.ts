/** PUT of one object: update, or create where the resource allows it (200 / 201). */
import { servesProtobuf } from '../protobuf/codec.js';
import { badRequest } from '@plinth/api';
import { negotiate } from '../negotiation.js';
import { writeObject } from '../http.js';
import { parseDryRun, parseFieldManager } from './options.js';
import { fieldValidationOf, readObject } from './body.js';
import type { ResourceRequest } from './scope.js';

export async function handleUpdate(r: ResourceRequest): Promise<void> {
  const format = negotiate(r.req.headers.accept, { allowTable: false, allowProtobuf: servesProtobuf(r.def) });
  const dryRun = parseDryRun(r.query, 'UpdateOptions');
  const manager = parseFieldManager(r.query, r.req.headers['user-agent'], 'UpdateOptions');
  const obj = await readObject(r, fieldValidationOf(r, 'UpdateOptions'));
  checkName(r, obj.metadata.name, obj.metadata.namespace);
  obj.metadata.name = r.target.name;
  // ServerSideApply off: kube builds no field manager, so managedFields are not tracked.
  const { object, created } = await r.store.update(r.scope, r.target.name, obj, { dryRun, manager: r.features.enabled('ServerSideApply') ? manager : undefined, fieldManager: r.query.get('fieldManager') || undefined });
  writeObject(r.req, r.res, r.query, created ? 201 : 200, object, format);
}

/** kube's checkName: the body must name the object of the URL; its namespace may be omitted. */
export function checkName(r: ResourceRequest, name: string | undefined, namespace: string | undefined): void {
  if (!name) throw badRequest(`the name of the object (${r.target.name} based on URL) was undeterminable: name must be provided`);
  if (name !== r.target.name) {
    throw badRequest(`the name of the object (${name}) does not match the name on the URL (${r.target.name})`);
  }
  if (r.def.namespaced && namespace && namespace !== r.scope.namespace) {
    throw badRequest(`the namespace of the object (${namespace}) does not match the namespace on the request (${r.scope.namespace})`);
  }
}
