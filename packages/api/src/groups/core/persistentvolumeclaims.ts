/**
 * core/v1 PersistentVolumeClaims as kube-apiserver 1.24 has them
 * (pkg/registry/core/persistentvolumeclaim, pkg/api/persistentvolumeclaim): namespaced, short
 * name `pvc`, every verb, and a `status` sub-resource.
 *
 * - Defaults: kube's SetObjectDefaults_PersistentVolumeClaim (volumeMode Filesystem, status.phase
 *   Pending, every ResourceList rounded up to milli units in canonical form).
 * - Create clears the status (read back with phase Pending, as kube's storage decoder defaults it),
 *   then KEP 1495's data source rules with 1.24's gates (AnyVolumeDataSource on): a `dataSource`
 *   other than a PVC or a VolumeSnapshot is dropped unless `dataSourceRef` is set, and each of the
 *   two fills the other when only one is given. Updates apply the same rules against the old claim.
 * - Updates of the resource keep the old status; `/status` keeps the old spec and drops what the
 *   RecoverVolumeExpansionFailure gate (off in 1.24) guards (`allocatedResources`, `resizeStatus`)
 *   unless the old claim had it.
 * - Validation: ValidatePersistentVolumeClaim; on update, again with the old claim's options, then
 *   ValidatePersistentVolumeClaimUpdate (the spec is immutable but for a bound claim's storage
 *   request, which may only grow). `/status`: ValidatePersistentVolumeClaimStatusUpdate.
 * - Field selectors: kube registers no conversion for PVCs: metadata.name and metadata.namespace.
 * - Table: kube's printPersistentVolumeClaim.
 */
import type { ResourceStrategy } from '../../catalog.js';
import { type JsonObject, isJsonObject } from '../../json.js';
import { age, ageColumn, col, fieldAt, nameColumn, type TableDefinition } from '../../tables.js';
import type { StoredObject } from '../../types.js';
import { defineResource } from '../define.js';
import { ensureObject, objectMember } from './defaults/json.js';
import { setDefaultsResourceList } from './defaults/resource-list.js';
import { setDefaultsPersistentVolumeClaim } from './defaults/storage.js';
import { keepMember } from './helpers/keep-member.js';
import { accessModesAsString, quantityCell, storageClassOf } from './helpers/storage-print.js';
import {
  enforceDataSourceBackwardsCompatibility,
  normalizeDataSources,
  persistentVolumeClaimValidationOptions,
  validatePersistentVolumeClaim,
  validatePersistentVolumeClaimStatusUpdate,
  validatePersistentVolumeClaimUpdate,
} from './validation/persistentvolumeclaim.js';

/** The members of a claim's status that 1.24's disabled RecoverVolumeExpansionFailure gate guards. */
const GATED_STATUS_FIELDS = ['allocatedResources', 'resizeStatus'];

function setDefaultsClaimResourceLists(obj: StoredObject): void {
  const resources = objectMember(objectMember(obj, 'spec') ?? {}, 'resources');
  if (resources) {
    setDefaultsResourceList(resources['limits']);
    setDefaultsResourceList(resources['requests']);
  }
  const status = objectMember(obj, 'status');
  if (status) {
    setDefaultsResourceList(status['capacity']);
    setDefaultsResourceList(status['allocatedResources']);
  }
}

/**
 * The old claim as kube validates an update against it: with its data sources normalized (kube
 * normalizes the old object in PrepareForUpdate). A copy, only when that changes something: the
 * stored object may be shared with the watch cache.
 */
function normalizedOld(old: StoredObject): StoredObject {
  const spec = objectMember(old, 'spec');
  if (!spec || isJsonObject(spec['dataSource']) === isJsonObject(spec['dataSourceRef'])) return old;
  const copy: StoredObject = { ...old, spec: structuredClone(spec) };
  normalizeDataSources(copy['spec'] as JsonObject);
  return copy;
}

const persistentVolumeClaimStrategy: ResourceStrategy = {
  defaults(obj) {
    setDefaultsPersistentVolumeClaim(obj);
    setDefaultsClaimResourceLists(obj);
  },
  prepareForCreate(obj) {
    obj['status'] = { phase: 'Pending' };
    const spec = ensureObject(obj, 'spec');
    enforceDataSourceBackwardsCompatibility(spec);
    normalizeDataSources(spec);
  },
  prepareForUpdate(obj, old) {
    keepMember(obj, old, 'status');
    const spec = ensureObject(obj, 'spec');
    enforceDataSourceBackwardsCompatibility(spec, objectMember(old, 'spec'));
    normalizeDataSources(spec);
  },
  validate: (obj) => validatePersistentVolumeClaim(obj, persistentVolumeClaimValidationOptions()),
  // kube's ValidateUpdate validates the new claim with the old one's options, then the update rules.
  validateOnUpdate: false,
  validateUpdate(obj, old) {
    const opts = persistentVolumeClaimValidationOptions(objectMember(old, 'spec'));
    return [...validatePersistentVolumeClaim(obj, opts), ...validatePersistentVolumeClaimUpdate(obj, normalizedOld(old), opts)];
  },
};

const persistentVolumeClaimStatusStrategy: ResourceStrategy = {
  prepareForUpdate(obj, old) {
    keepMember(obj, old, 'spec');
    const status = objectMember(obj, 'status');
    const oldStatus = objectMember(old, 'status');
    if (!status) return;
    for (const f of GATED_STATUS_FIELDS) if (!(oldStatus && oldStatus[f] !== undefined && oldStatus[f] !== null)) delete status[f];
  },
  validate: () => [],
  validateUpdate: validatePersistentVolumeClaimStatusUpdate,
};

/** kube's printPersistentVolumeClaim: capacity and access modes from the status once a volume is named. */
const persistentVolumeClaimTable: TableDefinition = {
  columns: [
    nameColumn,
    col('Status', 'string', 'The phase of the claim.'),
    col('Volume', 'string', 'The volume bound to the claim.'),
    col('Capacity', 'string', 'The capacity of the bound volume.'),
    col('Access Modes', 'string', 'The access modes of the bound volume.'),
    col('StorageClass', 'string', 'StorageClass of the pvc'),
    ageColumn,
    col('VolumeMode', 'string', 'Whether the claim asks for a filesystem or a raw block device.', { priority: 1 }),
  ],
  cells: (obj, now) => {
    const volume = fieldAt(obj, 'spec', 'volumeName');
    const bound = typeof volume === 'string' && volume !== '';
    const mode = fieldAt(obj, 'spec', 'volumeMode');
    return [
      obj.metadata.name ?? '',
      obj.metadata.deletionTimestamp ? 'Terminating' : String(fieldAt(obj, 'status', 'phase') ?? ''),
      bound ? volume : '',
      bound ? quantityCell(fieldAt(obj, 'status', 'capacity'), 'storage') : '',
      bound ? accessModesAsString(fieldAt(obj, 'status', 'accessModes')) : '',
      storageClassOf(obj),
      age(obj, now),
      typeof mode === 'string' ? mode : '<unset>',
    ];
  },
};

export const persistentvolumeclaims = defineResource({
  group: '',
  version: 'v1',
  kind: 'PersistentVolumeClaim',
  plural: 'persistentvolumeclaims',
  // kube's ReturnDeletedObject: DELETE answers with the deleted object, not a Status.
  returnDeletedObject: true,
  shortNames: ['pvc'],
  namespaced: true,
  description: "A PersistentVolumeClaim is a user's request for storage, bound to a PersistentVolume.",
  subresources: [{ name: 'status', verbs: ['get', 'patch', 'update'], strategy: persistentVolumeClaimStatusStrategy }],
  strategy: persistentVolumeClaimStrategy,
  table: persistentVolumeClaimTable,
});
