/**
 * apiextensions.k8s.io/v1 customresourcedefinitions: defaults (apis/apiextensions/v1/defaults.go),
 * the REST strategies (registry/customresourcedefinition/strategy.go) and the resource entry. The
 * validation and the compiled schemas of custom resources are apiextensions/.
 */
import type { ResourceStrategy } from '../../catalog.js';
import { isPlainObject, type StoredObject } from '../../types.js';
import { stringifyJson } from '../../number-codec.js';
import { validateCRD, validateCRDStatus, validateCRDUpdate } from '../../apiextensions/crd-validation.js';
import { defineResource } from '../define.js';

export const APIEXTENSIONS_GROUP = 'apiextensions.k8s.io';

type Raw = Record<string, unknown>;
const rec = (v: unknown): Raw | undefined => (isPlainObject(v) ? v : undefined);

function ensure(obj: Raw, key: string): Raw {
  const cur = obj[key];
  if (isPlainObject(cur)) return cur;
  const fresh: Raw = {};
  obj[key] = fresh;
  return fresh;
}

/** kube's SetDefaults_CustomResourceDefinition(Spec) and SetDefaults_ServiceReference (v1). */
export function defaultCRD(obj: StoredObject): void {
  const spec = ensure(obj, 'spec');
  const names = ensure(spec, 'names');
  const kind = typeof names['kind'] === 'string' ? names['kind'] : '';
  if (!names['singular']) names['singular'] = kind.toLowerCase();
  if (!names['listKind'] && kind) names['listKind'] = `${kind}List`;
  if (!isPlainObject(spec['conversion'])) spec['conversion'] = { strategy: 'None' };
  const service = rec(rec(rec(rec(spec['conversion'])?.['webhook'])?.['clientConfig'])?.['service']);
  if (service && (service['port'] === undefined || service['port'] === null)) service['port'] = 443;
}

/** The storage version's name, if exactly one is marked. */
function storageVersion(obj: StoredObject): string | undefined {
  const versions = rec(obj['spec'])?.['versions'];
  if (!Array.isArray(versions)) return undefined;
  const v = versions.map(rec).find((x) => x?.['storage'] === true);
  return typeof v?.['name'] === 'string' ? v['name'] : undefined;
}

/** Appends the storage version to status.storedVersions if missing (kube's strategy). */
function recordStorageVersion(obj: StoredObject): void {
  const status = ensure(obj, 'status');
  const stored = Array.isArray(status['storedVersions']) ? (status['storedVersions'] as unknown[]) : [];
  const v = storageVersion(obj);
  if (v && !stored.includes(v)) stored.push(v);
  status['storedVersions'] = stored;
}

/**
 * kube 1.24 has CEL rules (`x-kubernetes-validations`) behind the alpha, disabled
 * CustomResourceValidationExpressions gate: its strategy drops them from CRDs that did not have
 * them. plinth does the same (it does not evaluate CEL).
 */
function dropValidationRules(obj: StoredObject, old?: StoredObject): void {
  const had = old && stringifyJson(old['spec'] ?? {}).includes('"x-kubernetes-validations"');
  if (had) return;
  const strip = (s: unknown, depth: number): void => {
    if (depth > 1000) return;
    if (Array.isArray(s)) {
      for (const x of s) strip(x, depth + 1);
      return;
    }
    if (!isPlainObject(s)) return;
    delete s['x-kubernetes-validations'];
    for (const k of ['items', 'not', 'additionalProperties', 'allOf', 'anyOf', 'oneOf']) strip(s[k], depth + 1);
    for (const k of ['properties', 'patternProperties', 'definitions']) {
      const m = rec(s[k]);
      if (m) for (const v of Object.values(m)) strip(v, depth + 1);
    }
  };
  const versions = rec(obj['spec'])?.['versions'];
  if (Array.isArray(versions)) for (const v of versions) strip(rec(rec(v)?.['schema'])?.['openAPIV3Schema'], 0);
}

/** The status a new CRD starts with: nothing accepted yet, the storage version recorded. */
function initialStatus(): Raw {
  return { conditions: [], acceptedNames: { plural: '', kind: '' }, storedVersions: [] };
}

/** The finalizer the CRD finalizer controller removes once every custom resource is gone. */
export const CUSTOM_RESOURCE_CLEANUP_FINALIZER = 'customresourcecleanup.apiextensions.k8s.io';

/**
 * kube's CRD registry Delete: the first delete of a CRD always marks it (deletionTimestamp) and
 * adds the cleanup finalizer and a Terminating condition; the finalizer controller then deletes
 * every custom resource and removes the finalizer (through status), and the CRD goes.
 */
const crdDeletion: Pick<ResourceStrategy, 'hasPendingFinalizers' | 'beginDeletion'> = {
  hasPendingFinalizers: (obj) => !obj.metadata.deletionTimestamp,
  beginDeletion(obj) {
    const finalizers = (obj.metadata.finalizers ??= []);
    if (!finalizers.includes(CUSTOM_RESOURCE_CLEANUP_FINALIZER)) finalizers.push(CUSTOM_RESOURCE_CLEANUP_FINALIZER);
    const status = (rec(obj['status']) ?? (obj['status'] = initialStatus())) as { conditions?: unknown };
    const conditions = (Array.isArray(status.conditions) ? status.conditions : []).filter((c) => rec(c)?.['type'] !== 'Terminating');
    conditions.push({
      type: 'Terminating',
      status: 'True',
      lastTransitionTime: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
      reason: 'InstanceDeletionPending',
      message: 'CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon',
    });
    status.conditions = conditions;
  },
};

export const customResourceDefinitionStrategy: ResourceStrategy = {
  ...crdDeletion,
  defaults: defaultCRD,
  prepareForCreate(obj) {
    obj['status'] = initialStatus();
    obj.metadata.generation = 1;
    recordStorageVersion(obj);
    dropValidationRules(obj);
  },
  prepareForUpdate(obj, old) {
    obj['status'] = old['status'] !== undefined ? structuredClone(old['status']) : initialStatus();
    if (stringifyJson(obj['spec']) !== stringifyJson(old['spec'])) obj.metadata.generation = (old.metadata.generation ?? 0) + 1;
    recordStorageVersion(obj);
    dropValidationRules(obj, old);
  },
  validate: validateCRD,
  validateUpdate: validateCRDUpdate,
};

/** customresourcedefinitions/status: only status changes (kube's statusStrategy). */
export const customResourceDefinitionStatusStrategy: ResourceStrategy = {
  prepareForUpdate(obj, old) {
    if (old['spec'] !== undefined) obj['spec'] = structuredClone(old['spec']);
    else delete obj['spec'];
    const meta = obj.metadata;
    const oldMeta = old.metadata;
    for (const k of ['labels', 'annotations', 'ownerReferences', 'generation', 'selfLink'] as const) {
      if (oldMeta[k] !== undefined) meta[k] = structuredClone(oldMeta[k]) as never;
      else delete meta[k];
    }
  },
  validate: () => [],
  validateUpdate: validateCRDStatus,
};

/**
 * apiextensions.k8s.io/v1 CustomResourceDefinition: cluster-scoped, short names crd and crds,
 * category api-extensions, a status subresource; kube prints it with the default columns
 * (NAME, CREATED AT).
 */
export const customresourcedefinitions = defineResource({
  group: APIEXTENSIONS_GROUP,
  version: 'v1',
  kind: 'CustomResourceDefinition',
  plural: 'customresourcedefinitions',
  shortNames: ['crd', 'crds'],
  categories: ['api-extensions'],
  namespaced: false,
  description: 'A CustomResourceDefinition adds a resource to the API, with the schema of each of its versions.',
  subresources: [{ name: 'status', verbs: ['get', 'patch', 'update'], strategy: customResourceDefinitionStatusStrategy }],
  strategy: customResourceDefinitionStrategy,
});
