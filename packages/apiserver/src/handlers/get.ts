/** GET of one object. */
import { servesProtobuf } from '../protobuf/codec.js';
import { negotiate } from '../negotiation.js';
import { writeObject } from '../http.js';
import { parseIncludeObject, tableOfObject } from '../table.js';
import type { ResourceRequest } from './scope.js';
import { resourceVersionParam } from './options.js';

export async function handleGet(r: ResourceRequest): Promise<void> {
  const format = negotiate(r.req.headers.accept, { allowTable: true, allowProtobuf: servesProtobuf(r.def) });
  const include = format.table ? parseIncludeObject(r.query) : 'Metadata';
  const rv = resourceVersionParam(r.query);
  const obj = await r.store.get(r.scope, r.info.name, rv);
  writeObject(r.req, r.res, r.query, 200, format.table ? tableOfObject(r.def, obj, include, format.table) : obj, format);
}
