/** GET of one object. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { servesProtobuf } from '../protobuf/codec.js';
import { negotiate, type ResponseFormat } from '../negotiation.js';
import { isPretty, writeObject } from '../http.js';
import { auditRecordsResponseObject, auditResponseObject } from '../audit/filter.js';
import { parseIncludeObject, tableOfObject } from '../table.js';
import type { ResourceRequest } from './scope.js';
import { resourceVersionParam } from './options.js';

export async function handleGet(r: ResourceRequest): Promise<void> {
  const format = negotiate(r.req.headers.accept, { allowTable: true, allowProtobuf: servesProtobuf(r.def) });
  const rv = resourceVersionParam(r.query);
  if (isPlainJson(r, format)) {
    // The watch cache's stored bytes, when they are exactly what encoding the object would write.
    const out = await r.store.getJson(r.scope, r.info.name, rv);
    if (typeof out === 'string') writeJsonBody(r.req, r.res, out, format);
    else writeObject(r.req, r.res, r.query, 200, out, format);
    return;
  }
  const include = format.table ? parseIncludeObject(r.query) : 'Metadata';
  const obj = await r.store.get(r.scope, r.info.name, rv);
  writeObject(r.req, r.res, r.query, 200, format.table ? tableOfObject(r.def, obj, include, format.table) : obj, format);
}

/** Compact JSON of the object itself (no table, no protobuf or YAML, not pretty): bytes may be served. */
export function isPlainJson(r: ResourceRequest, format: ResponseFormat): boolean {
  return format.encoding === 'json' && format.table === undefined && !isPretty(r.query, r.req);
}

/** writeObject for a body already encoded as compact JSON (its audit record decodes it only if kept). */
export function writeJsonBody(req: IncomingMessage, res: ServerResponse, json: string, format: ResponseFormat): void {
  if (auditRecordsResponseObject(req)) auditResponseObject(req, JSON.parse(json));
  const body = `${json}\n`;
  res.statusCode = 200;
  res.setHeader('Content-Type', format.contentType);
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(req.method === 'HEAD' ? undefined : body);
}
