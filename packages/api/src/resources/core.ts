/**
 * core/v1 resources: namespaces, serviceaccounts, secrets — schemas, defaults and validation as
 * kube-apiserver 1.24 has them (pkg/apis/core/v1 defaults, pkg/apis/core/validation,
 * pkg/registry/core/{namespace,serviceaccount,secret}).
 */
import { namespaceTable, serviceAccountTable, secretTable } from '../tables.js';
import { tokenRequestKind } from './authentication.js';
import type { ResourceDefinition, ResourceStrategy } from '../catalog.js';
import { type FieldError, fieldErr } from '../field-errors.js';
import { type Schema, s } from '../schema.js';
import { type StoredObject, isPlainObject } from '../types.js';
import { JsonNumberRangeError, parseJson } from '../number-codec.js';
import { DNS1123_SUBDOMAIN_MAX, isQualifiedName, nameIsDNSLabel, nameIsDNSSubdomain } from '../validation.js';
import { setMember } from '../json.js';

/** A `$ref` that also names its Go type, so decode errors read `[]v1.ObjectReference` as kube's do. */
function ref(name: string, goType: string, description?: string): Schema {
  return { $ref: name, 'x-go-type': goType, ...(description ? { description } : {}) };
}

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

// ---------------------------------------------------------------------------------------------
// Shared core definitions
// ---------------------------------------------------------------------------------------------

export const coreDefinitions: Record<string, Schema> = {
  NamespaceCondition: s.obj(
    {
      type: s.str('Type of namespace controller condition.'),
      status: s.str('Status of the condition, one of True, False, Unknown.'),
      lastTransitionTime: s.time('Last time the condition transitioned from one status to another.'),
      reason: s.str('Unique, one-word, CamelCase reason for the condition\'s last transition.'),
      message: s.str('Human-readable message indicating details about last transition.'),
    },
    {
      description: 'NamespaceCondition contains details about state of namespace.',
      required: ['type', 'status'],
      'x-go-type': 'v1.NamespaceCondition',
    },
  ),
};

// ---------------------------------------------------------------------------------------------
// Namespaces
// ---------------------------------------------------------------------------------------------

export const FINALIZER_KUBERNETES = 'kubernetes';
/** kube's `v1.LabelMetadataName`, set on every namespace to its own name. */
export const LABEL_METADATA_NAME = 'kubernetes.io/metadata.name';
/** kube's `helper.IsStandardFinalizerName`: finalizers allowed without a domain prefix. */
const STANDARD_FINALIZERS = new Set([FINALIZER_KUBERNETES, 'orphan', 'foregroundDeletion']);

const namespaceSchema: Schema = s.obj(
  {
    spec: s.obj(
      {
        finalizers: s.arr(s.str(), {
          description:
            'Finalizers is an opaque list of values that must be empty to permanently remove object from storage.',
          'x-kubernetes-list-type': 'set',
        }),
      },
      { description: 'Spec defines the behavior of the Namespace.', 'x-go-type': 'v1.NamespaceSpec' },
    ),
    status: s.obj(
      {
        phase: s.str('Phase is the current lifecycle phase of the namespace.', { enum: ['Active', 'Terminating'] }),
        conditions: s.arr(ref('NamespaceCondition', 'v1.NamespaceCondition'), {
          description: "Represents the latest available observations of a namespace's current state.",
          'x-kubernetes-patch-strategy': 'merge',
          'x-kubernetes-patch-merge-key': 'type',
        }),
      },
      { description: 'Status describes the current status of a Namespace.', 'x-go-type': 'v1.NamespaceStatus' },
    ),
  },
  { description: 'Namespace provides a scope for Names. Use of multiple namespaces is optional.', 'x-go-type': 'v1.Namespace' },
);

/** kube's `validateFinalizerName` (core): a qualified name, and a standard name if it has no prefix. */
export function validateFinalizerName(value: string, field: string): FieldError[] {
  const errs: FieldError[] = [];
  for (const m of isQualifiedName(value)) errs.push(fieldErr.invalid(field, value, m));
  if (value.split('/').length === 1 && !STANDARD_FINALIZERS.has(value)) {
    errs.push(fieldErr.invalid(field, value, 'name is neither a standard finalizer name nor is it fully qualified'));
  }
  return errs;
}

function specFinalizers(obj: StoredObject): unknown[] {
  const spec = asRecord(obj['spec']);
  const f = spec?.['finalizers'];
  return Array.isArray(f) ? f : [];
}

/** kube's `SetDefaults_Namespace` and the strategy's Canonicalize: label the namespace with its name. */
function labelWithName(obj: StoredObject): void {
  const name = obj.metadata.name;
  if (!name) return;
  obj.metadata.labels = { ...(obj.metadata.labels ?? {}), [LABEL_METADATA_NAME]: name };
}

/** kube's `ValidateNamespace` minus object metadata: `spec.finalizers` entries. */
function validateNamespace(obj: StoredObject): FieldError[] {
  const errs: FieldError[] = [];
  for (const f of specFinalizers(obj)) errs.push(...validateFinalizerName(typeof f === 'string' ? f : String(f), 'spec.finalizers'));
  return errs;
}

export const namespaceStrategy: ResourceStrategy = {
  defaults(obj) {
    labelWithName(obj);
    // SetDefaults_NamespaceStatus (status is a struct in Go, so it is always there to default)
    const status = ensureObject(obj, 'status');
    if (!status['phase']) status['phase'] = 'Active';
  },
  prepareForCreate(obj) {
    obj['status'] = { phase: 'Active' };
    const spec = ensureObject(obj, 'spec');
    const finalizers = Array.isArray(spec['finalizers']) ? (spec['finalizers'] as unknown[]) : [];
    if (!finalizers.includes(FINALIZER_KUBERNETES)) spec['finalizers'] = [...finalizers, FINALIZER_KUBERNETES];
    labelWithName(obj);
  },
  prepareForUpdate(obj, old) {
    // Only the finalize sub-resource changes spec.finalizers, only status changes status.
    const spec = ensureObject(obj, 'spec');
    const oldSpec = asRecord(old['spec']);
    if (oldSpec && oldSpec['finalizers'] !== undefined) spec['finalizers'] = structuredClone(oldSpec['finalizers']);
    else delete spec['finalizers'];
    if (old['status'] !== undefined) obj['status'] = structuredClone(old['status']);
    else delete obj['status'];
    labelWithName(obj);
  },
  validate: validateNamespace,
  hasPendingFinalizers: (obj) => specFinalizers(obj).length > 0,
  beginDeletion(obj) {
    ensureObject(obj, 'status')['phase'] = 'Terminating';
  },
};

/** The `namespaces/status` strategy: only status changes; phase must agree with deletion state. */
export const namespaceStatusStrategy: ResourceStrategy = {
  prepareForUpdate(obj, old) {
    if (old['spec'] !== undefined) obj['spec'] = structuredClone(old['spec']);
    else delete obj['spec'];
  },
  validate: () => [],
  validateUpdate(obj) {
    const phase = asRecord(obj['status'])?.['phase'] ?? '';
    if (!obj.metadata.deletionTimestamp) {
      if (phase !== 'Active') return [fieldErr.invalid('status.Phase', phase, "may only be 'Active' if `deletionTimestamp` is empty")];
    } else if (phase !== 'Terminating') {
      return [fieldErr.invalid('status.Phase', phase, "may only be 'Terminating' if `deletionTimestamp` is not empty")];
    }
    return [];
  },
};

/** The `namespaces/finalize` strategy: only spec.finalizers changes (kube's ValidateNamespaceFinalizeUpdate). */
export const namespaceFinalizeStrategy: ResourceStrategy = {
  prepareForUpdate(obj, old) {
    if (old['status'] !== undefined) obj['status'] = structuredClone(old['status']);
    else delete obj['status'];
  },
  validate: () => [],
  validateUpdate(obj) {
    const errs: FieldError[] = [];
    specFinalizers(obj).forEach((f, i) => errs.push(...validateFinalizerName(String(f), `spec.finalizers[${i}]`)));
    return errs;
  },
};

export const namespaces: ResourceDefinition = {
  group: '',
  version: 'v1',
  kind: 'Namespace',
  listKind: 'NamespaceList',
  plural: 'namespaces',
  singular: 'namespace',
  shortNames: ['ns'],
  categories: [],
  namespaced: false,
  verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
  storage: 'etcd',
  subresources: [
    { name: 'finalize', verbs: ['update'], strategy: namespaceFinalizeStrategy },
    { name: 'status', verbs: ['get', 'patch', 'update'], strategy: namespaceStatusStrategy },
  ],
  nameValidator: nameIsDNSLabel,
  allowCreateOnUpdate: false,
  returnDeletedObject: true,
  schema: namespaceSchema,
  strategy: namespaceStrategy,
  table: namespaceTable,
};

// ---------------------------------------------------------------------------------------------
// ServiceAccounts
// ---------------------------------------------------------------------------------------------

const serviceAccountSchema: Schema = s.obj(
  {
    secrets: s.arr(ref('ObjectReference', 'v1.ObjectReference'), {
      description: 'Secrets is the list of secrets allowed to be used by pods running using this ServiceAccount.',
      'x-kubernetes-patch-strategy': 'merge',
      'x-kubernetes-patch-merge-key': 'name',
    }),
    imagePullSecrets: s.arr(ref('LocalObjectReference', 'v1.LocalObjectReference'), {
      description: 'ImagePullSecrets is a list of references to secrets in the same namespace to use for pulling any images in pods that reference this ServiceAccount.',
    }),
    automountServiceAccountToken: s.bool('AutomountServiceAccountToken indicates whether pods running as this service account should have an API token automatically mounted.'),
  },
  {
    description: 'ServiceAccount binds together: a name, understood by users, and perhaps by peripheral systems, for an identity; a principal that can be authenticated and authorized; a set of secrets.',
    'x-go-type': 'v1.ServiceAccount',
  },
);

/** kube's `cleanSecretReferences`: secret references keep only their name. */
function cleanSecretReferences(obj: StoredObject): void {
  const secrets = obj['secrets'];
  if (!Array.isArray(secrets)) return;
  obj['secrets'] = secrets.map((r) => {
    const name = asRecord(r)?.['name'];
    return typeof name === 'string' && name !== '' ? { name } : {};
  });
}

export const serviceAccountStrategy: ResourceStrategy = {
  prepareForCreate: cleanSecretReferences,
  prepareForUpdate: (obj) => cleanSecretReferences(obj),
  validate: () => [],
};

export const serviceaccounts: ResourceDefinition = {
  group: '',
  version: 'v1',
  kind: 'ServiceAccount',
  listKind: 'ServiceAccountList',
  plural: 'serviceaccounts',
  singular: 'serviceaccount',
  shortNames: ['sa'],
  categories: [],
  namespaced: true,
  verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
  storage: 'etcd',
  // kube's TokenREST (pkg/registry/core/serviceaccount/storage/token.go).
  subresources: [{ name: 'token', verbs: ['create'], kind: tokenRequestKind }],
  nameValidator: nameIsDNSSubdomain,
  allowCreateOnUpdate: false,
  returnDeletedObject: false,
  schema: serviceAccountSchema,
  strategy: serviceAccountStrategy,
  table: serviceAccountTable,
};

// ---------------------------------------------------------------------------------------------
// Secrets
// ---------------------------------------------------------------------------------------------

export const MAX_SECRET_SIZE = 1024 * 1024;
export const SECRET_TYPE_OPAQUE = 'Opaque';
export const SECRET_TYPE_SERVICE_ACCOUNT_TOKEN = 'kubernetes.io/service-account-token';
export const SECRET_TYPE_DOCKERCFG = 'kubernetes.io/dockercfg';
export const SECRET_TYPE_DOCKER_CONFIG_JSON = 'kubernetes.io/dockerconfigjson';
export const SECRET_TYPE_BASIC_AUTH = 'kubernetes.io/basic-auth';
export const SECRET_TYPE_SSH_AUTH = 'kubernetes.io/ssh-auth';
export const SECRET_TYPE_TLS = 'kubernetes.io/tls';
export const SERVICE_ACCOUNT_NAME_KEY = 'kubernetes.io/service-account.name';

const secretSchema: Schema = s.obj(
  {
    immutable: s.bool('Immutable, if set to true, ensures that data stored in the Secret cannot be updated (only object metadata can be modified).'),
    data: s.map(s.bytes(), {
      description:
        'Data contains the secret data. Each key must consist of alphanumeric characters, \'-\', \'_\' or \'.\'. The serialized form of the secret data is a base64 encoded string.',
    }),
    stringData: s.map(s.str(), {
      description:
        'stringData allows specifying non-binary secret data in string form. It is provided as a write-only input field for convenience. All keys and values are merged into the data field on write, overwriting any existing values.',
    }),
    type: s.str('Used to facilitate programmatic handling of secret data.'),
  },
  { description: 'Secret holds secret data of a certain type. The total bytes of the values in the Data field must be less than MaxSecretSize bytes.', 'x-go-type': 'v1.Secret' },
);

const CONFIG_MAP_KEY_FMT = '[-._a-zA-Z0-9]+';
const configMapKeyRe = new RegExp(`^${CONFIG_MAP_KEY_FMT}$`);

/** kube's `validation.IsConfigMapKey`. */
export function isConfigMapKey(value: string): string[] {
  const errs: string[] = [];
  if (value.length > DNS1123_SUBDOMAIN_MAX) errs.push(`must be no more than ${DNS1123_SUBDOMAIN_MAX} characters`);
  if (!configMapKeyRe.test(value)) {
    errs.push(
      `a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '${CONFIG_MAP_KEY_FMT}')`,
    );
  }
  if (value === '.') errs.push("must not be '.'");
  else if (value === '..') errs.push("must not be '..'");
  else if (value.startsWith('..')) errs.push("must not start with '..'");
  return errs;
}

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

export const secrets: ResourceDefinition = {
  group: '',
  version: 'v1',
  kind: 'Secret',
  listKind: 'SecretList',
  plural: 'secrets',
  singular: 'secret',
  shortNames: [],
  categories: [],
  namespaced: true,
  verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
  storage: 'etcd',
  subresources: [],
  nameValidator: nameIsDNSSubdomain,
  allowCreateOnUpdate: false,
  returnDeletedObject: false,
  schema: secretSchema,
  strategy: secretStrategy,
  table: secretTable,
};
