/**
 * core/v1 ConfigMaps as kube-apiserver 1.24 has them (pkg/apis/core/validation ValidateConfigMap,
 * ValidateConfigMapUpdate; pkg/registry/core/configmap; pkg/printers/internalversion printConfigMap).
 */
import type { ResourceStrategy } from '../../catalog.js';
import { type FieldError, fieldErr } from '../../field-errors.js';
import { age, col, countOf, nameColumn, ageColumn, type TableDefinition } from '../../tables.js';
import { type StoredObject, isPlainObject } from '../../types.js';
import { defineResource } from '../define.js';
import { NAME_WATCH_INDEX } from '../../selectors/fields.js';
import { MAX_SECRET_SIZE, isConfigMapKey } from './secrets.js';

function bag(obj: StoredObject, key: 'data' | 'binaryData'): Record<string, unknown> {
  const v = obj[key];
  return isPlainObject(v) ? v : {};
}

/** The decoded length of canonical (padded, newline-free) base64, without decoding it. */
function base64Length(v: unknown): number {
  if (typeof v !== 'string' || v.length === 0) return 0;
  const pad = v.endsWith('==') ? 2 : v.endsWith('=') ? 1 : 0;
  return (v.length / 4) * 3 - pad;
}

/**
 * kube's `ValidateConfigMap` minus object metadata: valid keys, no key in both data and binaryData,
 * at most MaxSecretSize (1 MiB) of values in total — reported against the whole object, whose path
 * kube prints as `[]`.
 */
export function validateConfigMap(obj: StoredObject): FieldError[] {
  const errs: FieldError[] = [];
  const data = bag(obj, 'data');
  const binaryData = bag(obj, 'binaryData');
  let total = 0;
  for (const [key, value] of Object.entries(data)) {
    for (const m of isConfigMapKey(key)) errs.push(fieldErr.invalid(`data[${key}]`, key, m));
    if (Object.hasOwn(binaryData, key)) errs.push(fieldErr.invalid(`data[${key}]`, key, 'duplicate of key present in binaryData'));
    total += typeof value === 'string' ? Buffer.byteLength(value, 'utf8') : 0;
  }
  for (const [key, value] of Object.entries(binaryData)) {
    for (const m of isConfigMapKey(key)) errs.push(fieldErr.invalid(`binaryData[${key}]`, key, m));
    total += base64Length(value);
  }
  if (total > MAX_SECRET_SIZE) errs.push(fieldErr.tooLong('[]', '', MAX_SECRET_SIZE));
  return errs;
}

/** Both bags are stored in canonical form (strings, canonical base64), so string equality is equality. */
function sameBag(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && a[k] === b[k]);
}

/**
 * kube's `ValidateConfigMapUpdate` minus object metadata (ValidateConfigMap runs via `validate`):
 * once `immutable` is true, it stays true and data/binaryData stay as they are.
 */
export function validateConfigMapUpdate(obj: StoredObject, old: StoredObject): FieldError[] {
  if (old['immutable'] !== true) return [];
  const errs: FieldError[] = [];
  const immutable = 'field is immutable when `immutable` is set';
  if (obj['immutable'] !== true) errs.push(fieldErr.forbidden('immutable', immutable));
  if (!sameBag(bag(obj, 'data'), bag(old, 'data'))) errs.push(fieldErr.forbidden('data', immutable));
  if (!sameBag(bag(obj, 'binaryData'), bag(old, 'binaryData'))) errs.push(fieldErr.forbidden('binaryData', immutable));
  return errs;
}

/** kube's configMapStrategy: nothing to reset (no status), validation only. */
export const configMapStrategy: ResourceStrategy = {
  validate: validateConfigMap,
  validateUpdate: validateConfigMapUpdate,
};

/** kube's printConfigMap: NAME, DATA (entries of data and binaryData together), AGE. */
const configMapTable: TableDefinition = {
  columns: [nameColumn, col('Data', 'string', 'The number of entries in data and binaryData.'), ageColumn],
  cells: (obj, now) => [obj.metadata.name ?? '', countOf(obj['data']) + countOf(obj['binaryData']), age(obj, now)],
};

export const configmaps = defineResource({
  group: '',
  version: 'v1',
  kind: 'ConfigMap',
  plural: 'configmaps',
  shortNames: ['cm'],
  namespaced: true,
  description: 'A ConfigMap holds configuration data as keys and values for pods to consume.',
  strategy: configMapStrategy,
  table: configMapTable,
  // kube's configmap.NameTriggerFunc: each kubelet watches the ConfigMaps its pods use by name
  // (kube-root-ca.crt in every namespace with pods on the node).
  fieldSelector: { index: NAME_WATCH_INDEX },
});
