/**
 * STAND-IN for apiextensions.k8s.io/v1 customresourcedefinitions until the crdlib branch lands
 * the real kind (schema, kube's CRD validation, defaults). It stores CRDs with minimal checks so
 * that serving can be built and tested; replace the import in resources/index.ts with crdlib's.
 */
import type { ResourceDefinition, ResourceStrategy } from '../catalog.js';
import { fieldErr, type FieldError } from '../field-errors.js';
import { s } from '../schema.js';
import type { StoredObject } from '../types.js';
import { nameIsDNSSubdomain } from '../validation.js';

interface CRDLike {
  spec?: { group?: string; names?: { plural?: string }; versions?: Array<{ name?: string; storage?: boolean }> };
  status?: { storedVersions?: string[] };
}

const storageVersion = (obj: StoredObject): string | undefined => (obj as CRDLike).spec?.versions?.find((v) => v.storage)?.name;

function addStoredVersion(obj: StoredObject): void {
  const v = storageVersion(obj);
  if (!v) return;
  const status = ((obj as CRDLike).status ??= {});
  if (!(status.storedVersions ?? []).includes(v)) status.storedVersions = [...(status.storedVersions ?? []), v];
}

/**
 * kube's CRD registry Delete: the first delete of a CRD always marks it (deletionTimestamp) and
 * adds the cleanup finalizer and a Terminating condition; the finalizer controller then deletes
 * every custom resource and removes the finalizer, and the CRD goes.
 */
export const crdDeletionHooks: Pick<ResourceStrategy, 'hasPendingFinalizers' | 'beginDeletion'> = {
  hasPendingFinalizers: (obj) => !obj.metadata.deletionTimestamp,
  beginDeletion(obj) {
    const finalizers = (obj.metadata.finalizers ??= []);
    if (!finalizers.includes('customresourcecleanup.apiextensions.k8s.io')) finalizers.push('customresourcecleanup.apiextensions.k8s.io');
    const status = ((obj['status'] ??= {}) as { conditions?: Array<Record<string, string>> });
    const conditions = (status.conditions ??= []).filter((c) => c['type'] !== 'Terminating');
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

const strategy: ResourceStrategy = {
  ...crdDeletionHooks,
  prepareForCreate(obj) {
    delete obj['status'];
    obj.metadata.generation = 1;
    addStoredVersion(obj);
  },
  prepareForUpdate(obj, old) {
    obj['status'] = structuredClone(old['status']);
    if (JSON.stringify(obj['spec']) !== JSON.stringify(old['spec'])) obj.metadata.generation = (old.metadata.generation ?? 0) + 1;
    addStoredVersion(obj);
  },
  validate(obj) {
    const errs: FieldError[] = [];
    const spec = (obj as CRDLike).spec;
    const want = `${spec?.names?.plural ?? ''}.${spec?.group ?? ''}`;
    if (obj.metadata.name !== want) errs.push(fieldErr.invalid('metadata.name', obj.metadata.name ?? '', `must be spec.names.plural+"."+spec.group`));
    if ((spec?.versions ?? []).filter((v) => v.storage).length !== 1) errs.push(fieldErr.invalid('spec.versions', '', 'must have exactly one version marked as storage version'));
    return errs;
  },
};

const statusStrategy: ResourceStrategy = {
  prepareForUpdate(obj, old) {
    const status = obj['status'];
    const finalizers = obj.metadata.finalizers;
    for (const k of Object.keys(obj)) delete obj[k];
    Object.assign(obj, structuredClone(old));
    obj['status'] = status;
    if (finalizers) obj.metadata.finalizers = finalizers;
    else delete obj.metadata.finalizers;
  },
  validate: () => [],
};

export const customresourcedefinitions: ResourceDefinition = {
  group: 'apiextensions.k8s.io',
  version: 'v1',
  kind: 'CustomResourceDefinition',
  listKind: 'CustomResourceDefinitionList',
  schema: s.obj({ spec: s.any(), status: s.any() }),
  strategy,
  plural: 'customresourcedefinitions',
  singular: 'customresourcedefinition',
  shortNames: ['crd', 'crds'],
  categories: ['api-extensions'],
  namespaced: false,
  verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
  storage: 'etcd',
  subresources: [{ name: 'status', verbs: ['get', 'patch', 'update'], strategy: statusStrategy }],
  nameValidator: nameIsDNSSubdomain,
  allowCreateOnUpdate: false,
  returnDeletedObject: false,
};
