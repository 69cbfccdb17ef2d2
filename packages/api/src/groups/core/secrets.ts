/**
 * core/v1 Secrets as kube-apiserver 1.24 has them: the v1 conversion's stringData merge and the
 * default type (pkg/apis/core/v1), validation (pkg/apis/core/validation ValidateSecret*), the
 * strategy (pkg/registry/core/secret), the printer and the field selectors.
 */
import type { ResourceStrategy } from '../../catalog.js';
import { type FieldError, fieldErr } from '../../field-errors.js';
import { setMember } from '../../json.js';
import { JsonNumberRangeError, parseJson } from '../../number-codec.js';
import { age, ageColumn, col, countOf, nameColumn, type TableDefinition } from '../../tables.js';
import { type StoredObject, isPlainObject } from '../../types.js';
import { defineResource } from '../define.js';
import { NAME_WATCH_INDEX } from '../../selectors/fields.js';
import { isConfigMapKey } from './validation/basic.js';

/** kube's `validation.IsConfigMapKey`. */
export { isConfigMapKey };

function asRecord(v: unknown): Record<string, unknown> | undefined {
  return isPlainObject(v) ? v : undefined;
}

/** Returns `obj[key]` as an object, creating it when absent or not an object. */
function ensureObject(obj: Record<string, unknown>, key: string): Record<string, unknown> {
  const cur = obj[key];
  if (isPlainObject(cur)) return cur;
  const fresh: Record<string, unknown> = {};
  obj[key] = fresh;
  return fresh;
}

export const MAX_SECRET_SIZE = 1024 * 1024;
export const SECRET_TYPE_OPAQUE = 'Opaque';
export const SECRET_TYPE_SERVICE_ACCOUNT_TOKEN = 'kubernetes.io/service-account-token';
export const SECRET_TYPE_DOCKERCFG = 'kubernetes.io/dockercfg';
export const SECRET_TYPE_DOCKER_CONFIG_JSON = 'kubernetes.io/dockerconfigjson';
export const SECRET_TYPE_BASIC_AUTH = 'kubernetes.io/basic-auth';
export const SECRET_TYPE_SSH_AUTH = 'kubernetes.io/ssh-auth';
export const SECRET_TYPE_TLS = 'kubernetes.io/tls';
export const SERVICE_ACCOUNT_NAME_KEY = 'kubernetes.io/service-account.name';

/** kube's v1→internal Secret conversion: stringData entries overwrite data entries, then vanish. */
function mergeStringData(obj: StoredObject): void {
  const sd = asRecord(obj['stringData']);
  if (sd && Object.keys(sd).length > 0) {
    const data = ensureObject(obj, 'data');
    for (const [k, v] of Object.entries(sd)) setMember(data, k, Buffer.from(typeof v === 'string' ? v : '', 'utf8').toString('base64'));
  }
  delete obj['stringData'];
}

function secretData(obj: StoredObject): Record<string, unknown> {
  return asRecord(obj['data']) ?? {};
}

function decodedBytes(v: unknown): Buffer {
  return Buffer.from(typeof v === 'string' ? v : '', 'base64');
}

/** Go's `json.Unmarshal(b, &map[string]interface{}{})` error text, or undefined when it succeeds. */
export function goJSONMapError(bytes: Buffer): string | undefined {
  const text = bytes.toString('utf8');
  let parsed: unknown;
  try {
    parsed = parseJson(text);
  } catch (e) {
    if (e instanceof JsonNumberRangeError) return e.message;
    if (text.trim() === '') return 'unexpected end of JSON input';
    const msg = e instanceof Error ? e.message : String(e);
    if (/Unexpected end of JSON input|Unterminated|end of data/i.test(msg)) return 'unexpected end of JSON input';
    const pos = /position (\d+)/.exec(msg);
    const at = pos ? Number(pos[1]) : text.search(/\S/);
    const ch = text[at] ?? '';
    return `invalid character '${ch}' looking for beginning of value`;
  }
  if (parsed === null || isPlainObject(parsed)) return undefined;
  const t = Array.isArray(parsed) ? 'array' : typeof parsed === 'number' ? 'number' : typeof parsed === 'boolean' ? 'bool' : 'string';
  return `json: cannot unmarshal ${t} into Go value of type map[string]interface {}`;
}

/** kube's `ValidateSecret` minus object metadata. */
export function validateSecret(obj: StoredObject): FieldError[] {
  const errs: FieldError[] = [];
  const data = secretData(obj);
  let total = 0;
  for (const [key, value] of Object.entries(data)) {
    for (const m of isConfigMapKey(key)) errs.push(fieldErr.invalid(`data[${key}]`, key, m));
    total += decodedBytes(value).length;
  }
  if (total > MAX_SECRET_SIZE) errs.push(fieldErr.tooLong('data', '', MAX_SECRET_SIZE));

  const has = (k: string): boolean => Object.prototype.hasOwnProperty.call(data, k);
  const type = typeof obj['type'] === 'string' ? obj['type'] : '';
  switch (type) {
    case SECRET_TYPE_SERVICE_ACCOUNT_TOKEN:
      if (!obj.metadata.annotations?.[SERVICE_ACCOUNT_NAME_KEY]) {
        errs.push(fieldErr.required(`metadata.annotations[${SERVICE_ACCOUNT_NAME_KEY}]`));
      }
      break;
    case SECRET_TYPE_DOCKERCFG:
    case SECRET_TYPE_DOCKER_CONFIG_JSON: {
      const key = type === SECRET_TYPE_DOCKERCFG ? '.dockercfg' : '.dockerconfigjson';
      if (!has(key)) {
        errs.push(fieldErr.required(`data[${key}]`));
        break;
      }
      const bad = goJSONMapError(decodedBytes(data[key]));
      if (bad !== undefined) errs.push(fieldErr.invalid(`data[${key}]`, '<secret contents redacted>', bad));
      break;
    }
    case SECRET_TYPE_BASIC_AUTH:
      // username or password may be empty, but one of the keys must be present. The odd
      // `data[%s][...]` path is kube's own.
      if (!has('username') && !has('password')) {
        errs.push(fieldErr.required('data[%s][username]'), fieldErr.required('data[%s][password]'));
      }
      break;
    case SECRET_TYPE_SSH_AUTH:
      if (decodedBytes(data['ssh-privatekey']).length === 0) errs.push(fieldErr.required('data[%s][ssh-privatekey]'));
      break;
    case SECRET_TYPE_TLS:
      if (!has('tls.crt')) errs.push(fieldErr.required('data[tls.crt]'));
      if (!has('tls.key')) errs.push(fieldErr.required('data[tls.key]'));
      break;
    default:
      break;
  }
  return errs;
}

function sameData(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  const ak = Object.keys(a);
  if (ak.length !== Object.keys(b).length) return false;
  return ak.every((k) => Object.prototype.hasOwnProperty.call(b, k) && decodedBytes(a[k]).equals(decodedBytes(b[k])));
}

/** kube's `ValidateSecretUpdate` minus object metadata (ValidateSecret runs via `validate`). */
export function validateSecretUpdate(obj: StoredObject, old: StoredObject): FieldError[] {
  const errs: FieldError[] = [];
  const newType = obj['type'] ?? '';
  if (newType !== (old['type'] ?? '')) errs.push(fieldErr.invalid('type', newType, 'field is immutable'));
  if (old['immutable'] === true) {
    if (obj['immutable'] !== true) errs.push(fieldErr.forbidden('immutable', 'field is immutable when `immutable` is set'));
    if (!sameData(secretData(obj), secretData(old))) errs.push(fieldErr.forbidden('data', 'field is immutable when `immutable` is set'));
  }
  return errs;
}

export const secretStrategy: ResourceStrategy = {
  defaults(obj) {
    mergeStringData(obj);
    if (!obj['type']) obj['type'] = SECRET_TYPE_OPAQUE;
  },
  // Also here, in case a body reaches the strategy without going through `defaults`.
  prepareForCreate: mergeStringData,
  prepareForUpdate: (obj) => mergeStringData(obj),
  validate: validateSecret,
  validateUpdate: validateSecretUpdate,
};

/** kube's printSecret: NAME, TYPE, DATA (how many keys), AGE. */
const secretTable: TableDefinition = {
  columns: [nameColumn, col('Type', 'string', 'The type of the secret.'), col('Data', 'string', 'The number of keys in data.'), ageColumn],
  cells: (obj, now) => [obj.metadata.name ?? '', String(obj['type'] ?? ''), countOf(obj['data']), age(obj, now)],
};

export const secrets = defineResource({
  group: '',
  version: 'v1',
  kind: 'Secret',
  plural: 'secrets',
  namespaced: true,
  description: 'A Secret holds data of a given type, such as credentials, for pods and controllers.',
  strategy: secretStrategy,
  table: secretTable,
  // SecretToSelectableFields; AddFieldLabelConversionsForSecret.
  fieldSelector: {
    labels: ['type', 'metadata.namespace', 'metadata.name'],
    fields: (obj, out) => {
      out['type'] = typeof obj['type'] === 'string' ? obj['type'] : '';
    },
    // kube's secret.NameTriggerFunc: each kubelet watches the secrets its pods use by name.
    index: NAME_WATCH_INDEX,
  },
});
