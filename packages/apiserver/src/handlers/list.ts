/** GET of a collection: list, or watch when asked. */
import { servesProtobuf } from '../protobuf/codec.js';
import { negotiate } from '../negotiation.js';
import { writeObject } from '../http.js';
import { parseIncludeObject, tableOfList } from '../table.js';
import { partialOfList } from '../partial-metadata.js';
import { parseListOptions } from './options.js';
import { serveWatch } from './watch.js';
import { isPlainJson, writeJsonList } from './get.js';
import type { ResourceRequest } from './scope.js';

export async function handleList(r: ResourceRequest, watch: boolean): Promise<void> {
  const format = negotiate(r.req.headers.accept, { allowTable: true, allowProtobuf: servesProtobuf(r.def), allowPartial: true });
  const include = format.table ? parseIncludeObject(r.query) : 'Metadata';
  // APIListChunking off: kube's storage ignores `limit` and `continue` (the whole list, no token).
  const query = watch || r.features.enabled('APIListChunking') || (!r.query.has('limit') && !r.query.has('continue')) ? r.query : withoutPaging(r.query);
  const opts = parseListOptions(r.def, query, watch);
  if (watch) {
    await serveWatch(r, opts, format, include);
    return;
  }
  if (isPlainJson(r, format)) {
    // From the watch cache's stored bytes when it serves the list and every item is plain.
    const out = await r.store.listJson(r.scope, opts);
    if (!('itemsJson' in out)) {
      writeObject(r.req, r.res, r.query, 200, out, format);
      return;
    }
    // As JSON.stringify writes the ObjectList (metadata: resourceVersion, continue, remainingItemCount).
    const remaining = out.remainingItemCount !== undefined ? `,"remainingItemCount":${JSON.stringify(out.remainingItemCount)}` : '';
    const head = `{"apiVersion":${JSON.stringify(out.apiVersion)},"kind":${JSON.stringify(out.kind)},"metadata":{"resourceVersion":${JSON.stringify(out.resourceVersion)},"continue":${JSON.stringify(out.continue ?? '')}${remaining}},"items":[`;
    writeJsonList(r.req, r.res, head, out.itemsJson, format);
    return;
  }
  const list = await r.store.list(r.scope, opts);
  const out = format.table ? tableOfList(r.def, list, include, format.table) : format.partial ? partialOfList(r.def, list, format.partial) : list;
  writeObject(r.req, r.res, r.query, 200, out, format);
}

function withoutPaging(query: URLSearchParams): URLSearchParams {
  const q = new URLSearchParams(query);
  q.delete('limit');
  q.delete('continue');
  return q;
}
