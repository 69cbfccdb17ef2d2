/**
 * GET of a computed resource (registry/computed.ts): one object, or the list, as JSON, YAML,
 * Protobuf or a Table. kube's componentstatus REST ignores list options except selectors, which
 * it applies with no selectable fields: any label or field selector matches nothing (after the
 * field labels are checked as for every list).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { apiVersionOf, methodNotSupported, type ObjectList, type ResourceDefinition, type StoredObject, type UserInfo } from '@plinth/api';
import { servesProtobuf } from '../protobuf/codec.js';
import { negotiate } from '../negotiation.js';
import { writeObject } from '../http.js';
import { parseIncludeObject, tableOfList, tableOfObject } from '../table.js';
import { partialOfList, partialOfObject } from '../partial-metadata.js';
import type { ComputedStorage } from '../registry/computed.js';
import { parseListOptions } from './options.js';
import type { ResourceTarget } from './target.js';

export interface ComputedRequest {
  req: IncomingMessage;
  res: ServerResponse;
  query: URLSearchParams;
  verb: string;
  target: ResourceTarget;
  storage: ComputedStorage;
  user: UserInfo;
}

/** Serves get and list of a computed resource; any other verb is a 405. */
export async function serveComputed(c: ComputedRequest): Promise<void> {
  const def: ResourceDefinition = c.target.def;
  const verb = c.verb;
  if ((verb !== 'get' && verb !== 'list') || !def.verbs.includes(verb) || c.target.subresource) throw methodNotSupported(undefined, verb);
  const format = negotiate(c.req.headers.accept, { allowTable: true, allowProtobuf: servesProtobuf(def), allowPartial: true });
  const include = format.table ? parseIncludeObject(c.query) : 'Metadata';
  const ctx = { user: c.user, namespace: c.target.namespace };
  if (verb === 'get') {
    const obj = await c.storage.get(ctx, c.target.name);
    const out = format.table ? tableOfObject(def, obj, include, format.table) : format.partial ? partialOfObject(def, obj, format.partial) : obj;
    writeObject(c.req, c.res, c.query, 200, out, format);
    return;
  }
  const opts = parseListOptions(def, c.query, false);
  const items: StoredObject[] = opts.hasSelector ? [] : await c.storage.list(ctx);
  // Items of a typed list carry no apiVersion/kind (kube encodes them without TypeMeta).
  const list: ObjectList<StoredObject> = {
    apiVersion: apiVersionOf(def),
    kind: def.listKind,
    metadata: {},
    items: items.map(({ apiVersion: _a, kind: _k, ...rest }) => rest as StoredObject),
  };
  const out = format.table ? tableOfList(def, list, include, format.table) : format.partial ? partialOfList(def, list, format.partial) : list;
  writeObject(c.req, c.res, c.query, 200, out, format);
}
