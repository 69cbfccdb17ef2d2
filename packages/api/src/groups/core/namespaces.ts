/**
 * core/v1 Namespaces as kube-apiserver 1.24 has them: defaults (pkg/apis/core/v1 SetDefaults_Namespace,
 * SetDefaults_NamespaceStatus), validation (pkg/apis/core/validation ValidateNamespace*), the
 * strategies of the resource and its status and finalize sub-resources
 * (pkg/registry/core/namespace) and the printer.
 */
import type { ResourceStrategy } from '../../catalog.js';
import { type FieldError, fieldErr } from '../../field-errors.js';
import { age, ageColumn, col, fieldAt, nameColumn, type TableDefinition } from '../../tables.js';
import { type StoredObject, isPlainObject } from '../../types.js';
import { isQualifiedName, nameIsDNSLabel } from '../../validation.js';
import { defineResource } from '../define.js';

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

export const FINALIZER_KUBERNETES = 'kubernetes';
/** kube's `v1.LabelMetadataName`, set on every namespace to its own name. */
export const LABEL_METADATA_NAME = 'kubernetes.io/metadata.name';
/** kube's `helper.IsStandardFinalizerName`: finalizers allowed without a domain prefix. */
const STANDARD_FINALIZERS = new Set([FINALIZER_KUBERNETES, 'orphan', 'foregroundDeletion']);
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

/** kube's printNamespace: NAME, STATUS, AGE. */
const namespaceTable: TableDefinition = {
  columns: [nameColumn, col('Status', 'string', 'The phase of the namespace.'), ageColumn],
  cells: (obj, now) => [obj.metadata.name ?? '', String(fieldAt(obj, 'status', 'phase') ?? ''), age(obj, now)],
};

export const namespaces = defineResource({
  group: '',
  version: 'v1',
  kind: 'Namespace',
  plural: 'namespaces',
  shortNames: ['ns'],
  namespaced: false,
  description: 'A Namespace is a scope for the names of namespaced objects.',
  verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
  subresources: [
    { name: 'finalize', verbs: ['update'], strategy: namespaceFinalizeStrategy },
    { name: 'status', verbs: ['get', 'patch', 'update'], strategy: namespaceStatusStrategy },
  ],
  nameValidator: nameIsDNSLabel,
  returnDeletedObject: true,
  strategy: namespaceStrategy,
  table: namespaceTable,
  // NamespaceToSelectableFields, with kube's backward-compatible "name" key (unreachable through
  // the v1 conversion func); AddFieldLabelConversionsForNamespace.
  fieldSelector: {
    labels: ['status.phase', 'metadata.name'],
    fields: (obj, out) => {
      out['status.phase'] = String(fieldAt(obj, 'status', 'phase') ?? '');
      out['name'] = String(fieldAt(obj, 'metadata', 'name') ?? '');
    },
  },
});
