/** Reading and decoding a request body for the endpoint's kind. */
import type { IncomingMessage } from 'node:http';
import { badRequest, fieldErr, invalid, unsupportedMediaType, type Catalog, type KindDefinition, type StoredObject } from '@plinth/api';
import { servesProtobuf } from '../protobuf/codec.js';
import { bodyEncoding } from '../negotiation.js';
import { parseBody, readBody } from '../http.js';
import { decodeInto } from '../registry/codec.js';
import type { ResourceRequest } from './scope.js';
import { auditRequestObject } from '../audit/filter.js';

/**
 * The body (JSON, YAML or Protobuf by Content-Type) decoded into `kind`, defaults applied; unknown
 * fields' paths go to `unknown`, a YAML body's duplicate keys (yaml.v2's messages) to `duplicates`.
 */
export async function readKind(req: IncomingMessage, kind: KindDefinition, catalog: Catalog, unknown?: string[], duplicates?: string[]): Promise<StoredObject> {
  const encoding = bodyEncoding(req.headers['content-type']);
  // A kind without a Protobuf form takes JSON and YAML only (kube: 415 naming them).
  if (encoding === 'protobuf' && !servesProtobuf(kind)) throw unsupportedMediaType(['application/json', 'application/yaml']);
  const raw = await parseBody(await readBody(req), encoding, duplicates ? { duplicateKeys: duplicates } : {});
  // A JSON body is JSON.parse's (or the exact parser's) fresh tree: conformed in place. YAML's
  // aliases can share one object between two places, so YAML and Protobuf bodies are copied.
  const obj = decodeInto(kind, catalog, raw, true, unknown, encoding === 'json');
  auditRequestObject(req, obj);
  return obj;
}

/** The body decoded for the endpoint; unknown fields reported as `validation` says. */
export async function readObject(r: ResourceRequest, validation: FieldValidation = 'Ignore'): Promise<StoredObject> {
  if (validation === 'Ignore') return readKind(r.req, r.def, r.catalog);
  const unknown: string[] = [];
  const duplicates: string[] = [];
  const obj = await readKind(r.req, r.def, r.catalog, unknown, duplicates);
  reportUnknownFields(r, validation, r.def, unknown, duplicates);
  return obj;
}

/** How unknown fields in a body are treated (kube's `fieldValidation` directive). */
export type FieldValidation = 'Ignore' | 'Warn' | 'Strict';

const FIELD_VALIDATIONS = ['', 'Ignore', 'Strict', 'Warn'];

/**
 * The `fieldValidation` parameter (kube's ValidateFieldValidation: another value → 422) and the
 * directive in force: Ignore unless ServerSideFieldValidation is on, then Warn when absent.
 */
export function fieldValidationOf(r: ResourceRequest, kind: 'CreateOptions' | 'UpdateOptions' | 'PatchOptions'): FieldValidation {
  const v = r.query.get('fieldValidation') ?? '';
  if (!FIELD_VALIDATIONS.includes(v)) throw invalid({ group: 'meta.k8s.io', kind }, '', [fieldErr.notSupported('fieldValidation', v, FIELD_VALIDATIONS)]);
  if (!r.features.enabled('ServerSideFieldValidation')) return 'Ignore';
  return v === '' ? 'Warn' : (v as FieldValidation);
}

/**
 * Strict: a 400 naming every unknown field and YAML duplicate key (kube's strict decoding error:
 * the YAML decoder's errors first, as one error); Warn: a warning each.
 */
export function reportUnknownFields(r: ResourceRequest, validation: FieldValidation, kind: KindDefinition, unknown: readonly string[], duplicates: readonly string[] = []): void {
  if ((unknown.length === 0 && duplicates.length === 0) || validation === 'Ignore') return;
  const errs = unknown.map((path) => `unknown field ${JSON.stringify(path)}`);
  if (validation === 'Strict') {
    if (duplicates.length > 0) errs.unshift(`yaml: unmarshal errors:\n  ${duplicates.join('\n  ')}`);
    throw badRequest(`${kind.kind} in version ${JSON.stringify(kind.version)} cannot be handled as a ${kind.kind}: strict decoding error: ${errs.join(', ')}`);
  }
  for (const e of [...duplicates, ...errs]) r.scope.warn?.(e);
}
