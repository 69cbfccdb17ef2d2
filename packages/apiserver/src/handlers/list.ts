/** GET of a collection: list, or watch when asked. */
import { servesProtobuf } from '../protobuf/codec.js';
import { negotiate } from '../negotiation.js';
import { writeObject } from '../http.js';
import { parseIncludeObject, tableOfList } from '../table.js';
import { parseListOptions } from './options.js';
import { serveWatch } from './watch.js';
import type { ResourceRequest } from './scope.js';

export async function handleList(r: ResourceRequest, watch: boolean): Promise<void> {
  const format = negotiate(r.req.headers.accept, { allowTable: true, allowProtobuf: servesProtobuf(r.def) });
  const include = format.table ? parseIncludeObject(r.query) : 'Metadata';
  const opts = parseListOptions(r.def, r.query, watch);
  if (watch) {
    await serveWatch(r, opts, format, include);
    return;
  }
  const list = await r.store.list(r.scope, opts);
  writeObject(r.req, r.res, r.query, 200, format.table ? tableOfList(r.def, list, include, format.table) : list, format);
}
