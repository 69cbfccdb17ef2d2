/**
 * storage.k8s.io/v1 StorageClasses as kube-apiserver 1.24 has them (pkg/registry/storage/storageclass):
 * cluster-scoped, short name `sc`. Defaults reclaimPolicy Delete and volumeBindingMode Immediate
 * (SetDefaults_StorageClass); provisioner, parameters, reclaimPolicy and volumeBindingMode cannot
 * change. Table: kube's printStorageClass, "(default)" after the default class's name.
 */
import type { ResourceStrategy } from '../../catalog.js';
import { age, ageColumn, col, fieldAt, nameColumn, type TableDefinition } from '../../tables.js';
import type { StoredObject } from '../../types.js';
import { defineResource } from '../define.js';
import { STORAGE_GROUP } from './names.js';
import { validateStorageClass, validateStorageClassUpdate } from './validation.js';

/** The annotation that marks the default class, and its beta form (pkg/apis/storage/util). */
export const IS_DEFAULT_CLASS_ANNOTATION = 'storageclass.kubernetes.io/is-default-class';
export const BETA_IS_DEFAULT_CLASS_ANNOTATION = 'storageclass.beta.kubernetes.io/is-default-class';

/** kube's storageutil.IsDefaultAnnotation. */
export function isDefaultStorageClass(obj: StoredObject): boolean {
  const a = obj.metadata.annotations;
  return a?.[IS_DEFAULT_CLASS_ANNOTATION] === 'true' || a?.[BETA_IS_DEFAULT_CLASS_ANNOTATION] === 'true';
}

const storageClassStrategy: ResourceStrategy = {
  defaults(obj) {
    if (typeof obj['reclaimPolicy'] !== 'string') obj['reclaimPolicy'] = 'Delete';
    if (typeof obj['volumeBindingMode'] !== 'string') obj['volumeBindingMode'] = 'Immediate';
  },
  validate: validateStorageClass,
  validateUpdate: validateStorageClassUpdate,
};

const storageClassTable: TableDefinition = {
  columns: [
    nameColumn,
    col('Provisioner', 'string', 'The volume plugin or CSI driver that provisions volumes of the class.'),
    col('ReclaimPolicy', 'string', 'What happens to provisioned volumes when released.'),
    col('VolumeBindingMode', 'string', 'When claims of the class are bound and provisioned.'),
    col('AllowVolumeExpansion', 'string', 'Whether claims of the class may grow.'),
    ageColumn,
  ],
  cells: (obj, now) => [
    `${obj.metadata.name ?? ''}${isDefaultStorageClass(obj) ? ' (default)' : ''}`,
    String(obj['provisioner'] ?? ''),
    String(obj['reclaimPolicy'] ?? 'Delete'),
    String(obj['volumeBindingMode'] ?? 'Immediate'),
    fieldAt(obj, 'allowVolumeExpansion') === true,
    age(obj, now),
  ],
};

export const storageclasses = defineResource({
  group: STORAGE_GROUP,
  version: 'v1',
  kind: 'StorageClass',
  plural: 'storageclasses',
  // kube's ReturnDeletedObject: DELETE answers with the deleted object, not a Status.
  returnDeletedObject: true,
  shortNames: ['sc'],
  namespaced: false,
  description: 'A StorageClass names a provisioner and its parameters, for claims to get volumes of a kind.',
  strategy: storageClassStrategy,
  table: storageClassTable,
});
