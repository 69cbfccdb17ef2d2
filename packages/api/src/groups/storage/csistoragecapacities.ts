/**
 * storage.k8s.io CSIStorageCapacities as kube-apiserver 1.24 has them
 * (pkg/registry/storage/csistoragecapacity): namespaced, served as v1 (preferred, new in 1.24) and
 * v1beta1 (deprecated in 1.24, removed in 1.27), stored as v1beta1 — kube 1.24's storage version
 * (pkg/kubeapiserver/default_storage_factory_builder.go), which moves to v1 only once a release
 * serves both. The two versions have the same fields, so the conversion renames the apiVersion.
 * kube validates a new object twice (its strategy calls ValidateCSIStorageCapacity twice), so
 * each cause appears twice, as with kube.
 */
import { deprecationWarning, type ResourceDefinition, type ResourceStrategy } from '../../catalog.js';
import { col, fieldAt, nameColumn, type TableDefinition } from '../../tables.js';
import type { StoredObject } from '../../types.js';
import { defineResource } from '../define.js';
import { STORAGE_GROUP } from './names.js';
import { validateCSIStorageCapacity, validateCSIStorageCapacityUpdate } from './validation.js';

const csiStorageCapacityStrategy: ResourceStrategy = {
  validate: (obj) => [...validateCSIStorageCapacity(obj), ...validateCSIStorageCapacity(obj)],
  validateOnUpdate: false,
  validateUpdate: (obj, old) => [...validateCSIStorageCapacity(obj), ...validateCSIStorageCapacityUpdate(obj, old)],
};

/** kube's printCSIStorageCapacity: no AGE column. */
const csiStorageCapacityTable: TableDefinition = {
  columns: [
    nameColumn,
    col('StorageClassName', 'string', 'The storage class the capacity is for.'),
    col('Capacity', 'string', 'The capacity reported for the class in the topology segment.'),
  ],
  cells: (obj) => {
    const capacity = fieldAt(obj, 'capacity');
    return [obj.metadata.name ?? '', String(fieldAt(obj, 'storageClassName') ?? ''), typeof capacity === 'string' ? capacity : '<unset>'];
  },
};

/** The object as `version`: a copy with that apiVersion (the fields are the same in both). */
function asVersion(obj: StoredObject, version: 'v1' | 'v1beta1'): StoredObject {
  return { ...obj, apiVersion: `${STORAGE_GROUP}/${version}`, kind: 'CSIStorageCapacity', metadata: structuredClone(obj.metadata) };
}

const DESCRIPTION = 'A CSIStorageCapacity reports the storage capacity of one class in one topology segment.';

/** storage.k8s.io/v1beta1 csistoragecapacities: kube 1.24's storage version. */
export const csistoragecapacitiesV1beta1: ResourceDefinition = defineResource({
  group: STORAGE_GROUP,
  version: 'v1beta1',
  kind: 'CSIStorageCapacity',
  plural: 'csistoragecapacities',
  namespaced: true,
  description: DESCRIPTION,
  strategy: csiStorageCapacityStrategy,
  table: csiStorageCapacityTable,
  deprecation: deprecationWarning({ group: STORAGE_GROUP, version: 'v1beta1', kind: 'CSIStorageCapacity' }, '1.24', '1.27', {
    group: STORAGE_GROUP,
    version: 'v1',
    kind: 'CSIStorageCapacity',
  }),
});

/** storage.k8s.io/v1 csistoragecapacities, stored as v1beta1. */
export const csistoragecapacities: ResourceDefinition = defineResource({
  group: STORAGE_GROUP,
  version: 'v1',
  kind: 'CSIStorageCapacity',
  plural: 'csistoragecapacities',
  namespaced: true,
  description: DESCRIPTION,
  strategy: csiStorageCapacityStrategy,
  table: csiStorageCapacityTable,
  conversion: {
    storage: csistoragecapacitiesV1beta1,
    toStorage: (obj) => asVersion(obj, 'v1beta1'),
    fromStorage: (obj) => asVersion(obj, 'v1'),
  },
});
