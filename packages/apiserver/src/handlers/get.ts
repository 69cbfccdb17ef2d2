/** GET of one object. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parseStoredJson } from '@plinth/api';
import { servesProtobuf } from '../protobuf/codec.js';
import { negotiate, type ResponseFormat } from '../negotiation.js';
import { isPretty, RESPONSE_WRITE_AHEAD_BYTES, sendBody, streamBody, writeObject } from '../http.js';
import { auditRecordsResponseObject, auditResponseObject } from '../audit/filter.js';
import { parseIncludeObject, tableOfObject } from '../table.js';
import { partialOfObject } from '../partial-metadata.js';
import type { ResourceRequest } from './scope.js';
import { resourceVersionParam } from './options.js';

export async function handleGet(r: ResourceRequest): Promise<void> {
  const format = negotiate(r.req.headers.accept, { allowTable: true, allowProtobuf: servesProtobuf(r.def), allowPartial: true });
  const rv = resourceVersionParam(r.query);
  if (isPlainJson(r, format)) {
    // The watch cache's stored bytes, when they are exactly what encoding the object would write.
    const out = await r.store.getJson(r.scope, r.target.name, rv);
    if (typeof out === 'string') writeJsonBody(r.req, r.res, out, format);
    else writeObject(r.req, r.res, r.query, 200, out, format);
    return;
  }
  const include = format.table ? parseIncludeObject(r.query) : 'Metadata';
  const obj = await r.store.get(r.scope, r.target.name, rv);
  const out = format.table ? tableOfObject(r.def, obj, include, format.table) : format.partial ? partialOfObject(r.def, obj, format.partial) : obj;
  writeObject(r.req, r.res, r.query, 200, out, format);
}

/**
 * Compact JSON of the object itself (no table or metadata-only form, no protobuf or YAML, not
 * pretty): the cache's stored bytes may be served.
 */
export function isPlainJson(r: ResourceRequest, format: ResponseFormat): boolean {
  return format.encoding === 'json' && format.table === undefined && format.partial === undefined && !isPretty(r.query, r.req);
}

/** writeObject for a body already encoded as compact JSON (its audit record decodes it only if kept). */
export function writeJsonBody(req: IncomingMessage, res: ServerResponse, json: string, format: ResponseFormat): void {
  if (auditRecordsResponseObject(req)) auditResponseObject(req, parseStoredJson(json));
  res.statusCode = 200;
  res.setHeader('Content-Type', format.contentType);
  sendBody(req, res, `${json}\n`);
}

/**
 * writeJsonBody for a list built from the items' JSON: `head`, the items joined with commas, and
 * `]}` go straight into buffers (no joined string, no second encoding pass over the body). A list
 * that fits one write goes out in one buffer; a larger one is encoded piece by piece as the
 * socket takes it (streamJsonList). `items` is the list's own array: it is emptied as it is written.
 */
export function writeJsonList(req: IncomingMessage, res: ServerResponse, head: string, items: string[], format: ResponseFormat): void {
  if (auditRecordsResponseObject(req)) auditResponseObject(req, parseStoredJson(`${head}${items.join(',')}]}`));
  res.statusCode = 200;
  res.setHeader('Content-Type', format.contentType);
  let chars = head.length + items.length + 3;
  let longest = head.length;
  for (const item of items) {
    chars += item.length;
    if (item.length > longest) longest = item.length;
  }
  if (chars > RESPONSE_WRITE_AHEAD_BYTES && req.method !== 'HEAD') {
    streamJsonList(res, head, items);
    return;
  }
  // UTF-8 takes at most 3 bytes per UTF-16 unit: room for the longest string's worst case means
  // a write is never cut short; an ASCII body never grows.
  let buf = Buffer.allocUnsafe(chars + 3 * longest);
  let off = 0;
  const put = (text: string): void => {
    if (off + 3 * text.length > buf.length) {
      const bigger = Buffer.allocUnsafe(Math.max(2 * buf.length, off + 3 * text.length));
      buf.copy(bigger, 0, 0, off);
      buf = bigger;
    }
    off += buf.write(text, off);
  };
  put(head);
  for (let i = 0; i < items.length; i++) {
    if (i > 0) buf[off++] = 0x2c; // ,
    put(items[i]!);
  }
  put(']}\n');
  res.setHeader('Content-Length', off);
  res.end(req.method === 'HEAD' ? undefined : buf.subarray(0, off));
}

const LIST_TAIL = ']}\n';

/**
 * The large-list half of writeJsonList: pieces of about RESPONSE_WRITE_AHEAD_BYTES encoded as the
 * socket drains, chunked (kube too writes any body over a few KiB chunked). The items are the
 * cache's text cut around their resourceVersion: encoding one makes V8 flatten it into a copy, so
 * each is encoded only when its turn comes and dropped once written — a client that reads slowly
 * or not at all holds a piece and the item array, not a copy of the list. (No Content-Length: its
 * byte count would flatten every item up front.)
 */
function streamJsonList(res: ServerResponse, head: string, items: string[]): void {
  let next = 0;
  let started = false;
  let ended = false;
  streamBody(res, () => {
    if (ended) return undefined;
    // Each piece is a buffer of its own: the socket may still hold the previous one.
    const buf = Buffer.allocUnsafe(Math.max(RESPONSE_WRITE_AHEAD_BYTES, started ? 0 : 3 * head.length + 1));
    let off = 0;
    if (!started) {
      off += buf.write(head, 0);
      started = true;
    }
    while (next < items.length) {
      const item = items[next]!;
      const need = 3 * item.length + 1;
      if (off + need > buf.length) {
        if (off > 0) return buf.subarray(0, off);
        // An item larger than a piece goes out as a piece of its own.
        items[next++] = '';
        return Buffer.from(next > 1 ? `,${item}` : item);
      }
      if (next > 0) buf[off++] = 0x2c; // ,
      off += buf.write(item, off);
      items[next++] = '';
    }
    if (off + LIST_TAIL.length > buf.length) return buf.subarray(0, off);
    off += buf.write(LIST_TAIL, off);
    ended = true;
    return buf.subarray(0, off);
  });
}
