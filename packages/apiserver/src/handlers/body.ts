/** Reading and decoding a request body for the endpoint's kind. */
import type { StoredObject } from '@plinth/api';
import { bodyEncoding } from '../negotiation.js';
import { parseBody, readBody } from '../http.js';
import { decodeInto } from '../registry/codec.js';
import type { ResourceRequest } from './scope.js';

export async function readObject(r: ResourceRequest): Promise<StoredObject> {
  const encoding = bodyEncoding(r.req.headers['content-type']);
  const raw = parseBody(await readBody(r.req), encoding);
  return decodeInto(r.def, r.catalog, raw);
}
