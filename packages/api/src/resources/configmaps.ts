/**
 * core/v1 ConfigMaps as kube-apiserver 1.24 has them (pkg/apis/core/validation ValidateConfigMap,
 * ValidateConfigMapUpdate; pkg/registry/core/configmap).
 */
import type { ResourceDefinition, ResourceStrategy } from '../catalog.js';
import { type FieldError, fieldErr } from '../field-errors.js';
import { type Schema, s } from '../schema.js';
import { configMapTable } from '../tables.js';
import { type StoredObject, isPlainObject } from '../types.js';
import { nameIsDNSSubdomain } from '../validation.js';
import { MAX_SECRET_SIZE, isConfigMapKey } from './core.js';

const configMapSchema: Schema = s.obj(
  {
    immutable: s.bool(
      'Immutable, if set to true, ensures that data stored in the ConfigMap cannot be updated (only object metadata can be modified). If not set to true, the field can be modified at any time. Defaulted to nil.',
    ),
    data: s.map(s.str(), {
      description:
        "Data contains the configuration data. Each key must consist of alphanumeric characters, '-', '_' or '.'. Values with non-UTF-8 byte sequences must use the BinaryData field. The keys stored in Data must not overlap with the keys in the BinaryData field, this is enforced during validation process.",
    }),
    binaryData: s.map(s.bytes(), {
      description:
        "BinaryData contains the binary data. Each key must consist of alphanumeric characters, '-', '_' or '.'. BinaryData can contain byte sequences that are not in the UTF-8 range. The keys stored in BinaryData must not overlap with the ones in the Data field, this is enforced during validation process. Using this field will require 1.10+ apiserver and kubelet.",
    }),
  },
  { description: 'ConfigMap holds configuration data for pods to consume.', 'x-go-type': 'v1.ConfigMap' },
);

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

export const configmaps: ResourceDefinition = {
  group: '',
  version: 'v1',
  kind: 'ConfigMap',
  listKind: 'ConfigMapList',
  plural: 'configmaps',
  singular: 'configmap',
  shortNames: ['cm'],
  categories: [],
  namespaced: true,
  verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
  storage: 'etcd',
  subresources: [],
  nameValidator: nameIsDNSSubdomain,
  allowCreateOnUpdate: false,
  returnDeletedObject: false,
  schema: configMapSchema,
  strategy: configMapStrategy,
  table: configMapTable,
};
