/**
 * core/v1 PersistentVolumes as kube-apiserver 1.24 has them (pkg/registry/core/persistentvolume):
 * cluster-scoped, short name `pv`, every verb, and a `status` sub-resource.
 *
 * - Defaults: kube's SetObjectDefaults_PersistentVolume (reclaim policy Retain, volumeMode
 *   Filesystem, status.phase Pending, the volume sources' defaults, capacity rounded up to milli
 *   units in canonical form).
 * - Create clears the status (kube's PrepareForCreate); kube's storage decoder defaults the phase
 *   again on the way back, so the object reads with `status.phase: Pending`: plinth stores that.
 * - Updates of the resource keep the old status; `/status` keeps the old spec.
 * - Validation: ValidatePersistentVolume and the mount-options plugin check on create; on update
 *   both again with the old object's options, then ValidatePersistentVolumeUpdate (source,
 *   volumeMode and node affinity immutable). `/status` checks ValidatePersistentVolumeStatusUpdate.
 * - Field selectors: kube registers no conversion for PVs, so only metadata.name and
 *   metadata.namespace (its selectable "name" is unreachable through v1).
 * - Table: kube's printPersistentVolume.
 */
import type { ResourceStrategy } from '../../catalog.js';
import { age, ageColumn, col, fieldAt, nameColumn, type TableDefinition } from '../../tables.js';
import { defineResource } from '../define.js';
import { objectMember } from './defaults/json.js';
import { setDefaultsResourceList } from './defaults/resource-list.js';
import { setDefaultsPersistentVolume } from './defaults/storage.js';
import { keepMember } from './helpers/keep-member.js';
import { accessModesAsString, quantityCell, storageClassOf } from './helpers/storage-print.js';
import {
  persistentVolumeValidationOptions,
  validatePersistentVolume,
  validatePersistentVolumeStatusUpdate,
  validatePersistentVolumeUpdate,
} from './validation/persistentvolume.js';

const persistentVolumeStrategy: ResourceStrategy = {
  defaults(obj) {
    setDefaultsPersistentVolume(obj);
    const spec = objectMember(obj, 'spec');
    if (spec) setDefaultsResourceList(spec['capacity']);
  },
  prepareForCreate(obj) {
    obj['status'] = { phase: 'Pending' };
  },
  prepareForUpdate(obj, old) {
    keepMember(obj, old, 'status');
  },
  validate: (obj) => validatePersistentVolume(obj, persistentVolumeValidationOptions()),
  // kube's ValidateUpdate validates the new object with the old one's options, then the update rules.
  validateOnUpdate: false,
  validateUpdate(obj, old) {
    const opts = persistentVolumeValidationOptions(old);
    return [...validatePersistentVolume(obj, opts), ...validatePersistentVolumeUpdate(obj, old, opts)];
  },
};

const persistentVolumeStatusStrategy: ResourceStrategy = {
  prepareForUpdate(obj, old) {
    keepMember(obj, old, 'spec');
  },
  validate: () => [],
  validateUpdate: validatePersistentVolumeStatusUpdate,
};

/** kube's printPersistentVolume: the claim as namespace/name, Terminating once deleted, VOLUMEMODE wide. */
const persistentVolumeTable: TableDefinition = {
  columns: [
    nameColumn,
    col('Capacity', 'string', 'The storage capacity of the volume.'),
    col('Access Modes', 'string', 'The ways the volume can be mounted.'),
    col('Reclaim Policy', 'string', 'What happens to the volume when its claim is released.'),
    col('Status', 'string', 'The phase of the volume.'),
    col('Claim', 'string', 'The claim bound to the volume.'),
    col('StorageClass', 'string', 'StorageClass of the pv'),
    col('Reason', 'string', 'Why the volume is in its phase.'),
    ageColumn,
    col('VolumeMode', 'string', 'Whether the volume is a filesystem or a raw block device.', { priority: 1 }),
  ],
  cells: (obj, now) => {
    const claim = fieldAt(obj, 'spec', 'claimRef');
    const claimCell = claim && typeof claim === 'object' ? `${String(fieldAt(claim, 'namespace') ?? '')}/${String(fieldAt(claim, 'name') ?? '')}` : '';
    const mode = fieldAt(obj, 'spec', 'volumeMode');
    return [
      obj.metadata.name ?? '',
      quantityCell(fieldAt(obj, 'spec', 'capacity'), 'storage'),
      accessModesAsString(fieldAt(obj, 'spec', 'accessModes')),
      String(fieldAt(obj, 'spec', 'persistentVolumeReclaimPolicy') ?? ''),
      obj.metadata.deletionTimestamp ? 'Terminating' : String(fieldAt(obj, 'status', 'phase') ?? ''),
      claimCell,
      storageClassOf(obj),
      String(fieldAt(obj, 'status', 'reason') ?? ''),
      age(obj, now),
      typeof mode === 'string' ? mode : '<unset>',
    ];
  },
};

export const persistentvolumes = defineResource({
  group: '',
  version: 'v1',
  kind: 'PersistentVolume',
  plural: 'persistentvolumes',
  // kube's ReturnDeletedObject: DELETE answers with the deleted object, not a Status.
  returnDeletedObject: true,
  shortNames: ['pv'],
  namespaced: false,
  description: 'A PersistentVolume is a piece of storage in the cluster, for claims to bind to.',
  subresources: [{ name: 'status', verbs: ['get', 'patch', 'update'], strategy: persistentVolumeStatusStrategy }],
  strategy: persistentVolumeStrategy,
  table: persistentVolumeTable,
});
