/** POST to a collection: create. 201 with the stored object (also for dry-run, as kube). */
import { servesProtobuf } from '../protobuf/codec.js';
import { negotiate } from '../negotiation.js';
import { writeObject } from '../http.js';
import { parseDryRun, parseFieldManager } from './options.js';
import { fieldValidationOf, readObject } from './body.js';
import type { ResourceRequest } from './scope.js';

export async function handleCreate(r: ResourceRequest): Promise<void> {
  const format = negotiate(r.req.headers.accept, { allowTable: false, allowProtobuf: servesProtobuf(r.def) });
  const dryRun = parseDryRun(r.query, 'CreateOptions');
  const manager = parseFieldManager(r.query, r.req.headers['user-agent'], 'CreateOptions');
  const obj = await readObject(r, fieldValidationOf(r, 'CreateOptions'));
  // ServerSideApply off: kube builds no field manager, so managedFields are not tracked.
  const out = await r.store.create(r.scope, obj, { dryRun, manager: r.features.enabled('ServerSideApply') ? manager : undefined, fieldManager: r.query.get('fieldManager') || undefined });
  writeObject(r.req, r.res, r.query, 201, out, format);
}
