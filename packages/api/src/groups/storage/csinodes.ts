/**
 * storage.k8s.io/v1 CSINodes as kube-apiserver 1.24 has them (pkg/registry/storage/csinode):
 * cluster-scoped, named as nodes; a driver already listed cannot change. Table: NAME DRIVERS AGE.
 */
import type { ResourceStrategy } from '../../catalog.js';
import { age, ageColumn, col, countOf, fieldAt, nameColumn, type TableDefinition } from '../../tables.js';
import { defineResource } from '../define.js';
import { STORAGE_GROUP } from './names.js';
import { validateCSINode, validateCSINodeUpdate } from './validation.js';

const csiNodeStrategy: ResourceStrategy = {
  validate: validateCSINode,
  // kube's ValidateUpdate runs ValidateCSINode, then ValidateCSINodeUpdate, which runs it again.
  validateUpdate: validateCSINodeUpdate,
};

const csiNodeTable: TableDefinition = {
  columns: [nameColumn, col('Drivers', 'integer', 'The number of CSI drivers registered on the node.'), ageColumn],
  cells: (obj, now) => [obj.metadata.name ?? '', countOf(fieldAt(obj, 'spec', 'drivers')), age(obj, now)],
};

export const csinodes = defineResource({
  group: STORAGE_GROUP,
  version: 'v1',
  kind: 'CSINode',
  plural: 'csinodes',
  // kube's ReturnDeletedObject: DELETE answers with the deleted object, not a Status.
  returnDeletedObject: true,
  namespaced: false,
  description: 'A CSINode lists the CSI drivers installed on one node.',
  strategy: csiNodeStrategy,
  table: csiNodeTable,
});
