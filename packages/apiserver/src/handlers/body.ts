/** Reading and decoding a request body for the endpoint's kind. */
import type { IncomingMessage } from 'node:http';
import { unsupportedMediaType, type Catalog, type KindDefinition, type StoredObject } from '@plinth/api';
import { servesProtobuf } from '../protobuf/codec.js';
import { bodyEncoding } from '../negotiation.js';
import { parseBody, readBody } from '../http.js';
import { decodeInto } from '../registry/codec.js';
import type { ResourceRequest } from './scope.js';
import { auditRequestObject } from '../audit/filter.js';

/** The body (JSON, YAML or Protobuf by Content-Type) decoded into `kind`, defaults applied. */
export async function readKind(req: IncomingMessage, kind: KindDefinition, catalog: Catalog): Promise<StoredObject> {
  const encoding = bodyEncoding(req.headers['content-type']);
  // A kind without a Protobuf form takes JSON and YAML only (kube: 415 naming them).
  if (encoding === 'protobuf' && !servesProtobuf(kind)) throw unsupportedMediaType(['application/json', 'application/yaml']);
  const raw = parseBody(await readBody(req), encoding);
  const obj = decodeInto(kind, catalog, raw);
  auditRequestObject(req, obj);
  return obj;
}

export function readObject(r: ResourceRequest): Promise<StoredObject> {
  return readKind(r.req, r.def, r.catalog);
}
