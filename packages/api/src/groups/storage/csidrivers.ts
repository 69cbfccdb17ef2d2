/**
 * storage.k8s.io/v1 CSIDrivers as kube-apiserver 1.24 has them (pkg/registry/storage/csidriver):
 * cluster-scoped. Defaults (SetDefaults_CSIDriver, with 1.24's CSIStorageCapacity,
 * CSIVolumeFSGroupPolicy and CSIInlineVolume gates on): attachRequired true, podInfoOnMount false,
 * storageCapacity false, fsGroupPolicy ReadWriteOnceWithFSType, volumeLifecycleModes [Persistent],
 * requiresRepublish false. attachRequired, fsGroupPolicy, podInfoOnMount and volumeLifecycleModes
 * are immutable in 1.24; a change of tokenRequests or requiresRepublish bumps metadata.generation.
 */
import type { ResourceStrategy } from '../../catalog.js';
import { age, ageColumn, col, fieldAt, nameColumn, type TableDefinition } from '../../tables.js';
import { isPlainObject } from '../../types.js';
import { ensureObject } from '../core/defaults/json.js';
import { semanticEqual } from '../core/validation/semantic.js';
import { defineResource } from '../define.js';
import { STORAGE_GROUP } from './names.js';
import { validateCSIDriverSpec, validateCSIDriverUpdate } from './validation.js';

const csiDriverStrategy: ResourceStrategy = {
  defaults(obj) {
    const spec = ensureObject(obj, 'spec');
    if (typeof spec['attachRequired'] !== 'boolean') spec['attachRequired'] = true;
    if (typeof spec['podInfoOnMount'] !== 'boolean') spec['podInfoOnMount'] = false;
    if (typeof spec['storageCapacity'] !== 'boolean') spec['storageCapacity'] = false;
    if (typeof spec['fsGroupPolicy'] !== 'string') spec['fsGroupPolicy'] = 'ReadWriteOnceWithFSType';
    if (!Array.isArray(spec['volumeLifecycleModes']) || spec['volumeLifecycleModes'].length === 0) spec['volumeLifecycleModes'] = ['Persistent'];
    if (typeof spec['requiresRepublish'] !== 'boolean') spec['requiresRepublish'] = false;
  },
  prepareForUpdate(obj, old) {
    const spec = isPlainObject(obj['spec']) ? obj['spec'] : {};
    const prev = isPlainObject(old['spec']) ? old['spec'] : {};
    if (!semanticEqual(spec['tokenRequests'] ?? null, prev['tokenRequests'] ?? null) || !semanticEqual(spec['requiresRepublish'] ?? null, prev['requiresRepublish'] ?? null)) {
      obj.metadata.generation = (old.metadata.generation ?? 0) + 1;
    }
  },
  validate: validateCSIDriverSpec,
  // kube's ValidateCSIDriverUpdate checks the spec itself.
  validateOnUpdate: false,
  validateUpdate: validateCSIDriverUpdate,
};

const boolCell = (v: unknown, dflt: boolean): boolean => (typeof v === 'boolean' ? v : dflt);

/** kube's printCSIDriver (with the StorageCapacity column of the gate on in 1.24). */
const csiDriverTable: TableDefinition = {
  columns: [
    nameColumn,
    col('AttachRequired', 'boolean', 'Whether volumes of the driver need attaching.'),
    col('PodInfoOnMount', 'boolean', 'Whether the driver gets pod information at mount.'),
    col('StorageCapacity', 'boolean', 'Whether the scheduler considers the driver\'s storage capacity.'),
    col('TokenRequests', 'string', 'The audiences of the tokens the driver gets.'),
    col('RequiresRepublish', 'boolean', 'Whether the driver wants NodePublishVolume called periodically.'),
    col('Modes', 'string', 'The volume lifecycle modes the driver supports.'),
    ageColumn,
  ],
  cells: (obj, now) => {
    const spec = fieldAt(obj, 'spec');
    const tokens = fieldAt(spec, 'tokenRequests');
    const modes = fieldAt(spec, 'volumeLifecycleModes');
    const modeText = Array.isArray(modes) ? modes.map(String).join(',') : '';
    return [
      obj.metadata.name ?? '',
      boolCell(fieldAt(spec, 'attachRequired'), true),
      boolCell(fieldAt(spec, 'podInfoOnMount'), false),
      boolCell(fieldAt(spec, 'storageCapacity'), false),
      Array.isArray(tokens) ? tokens.map((t) => String(fieldAt(t, 'audience') ?? '')).join(',') : '<unset>',
      boolCell(fieldAt(spec, 'requiresRepublish'), false),
      modeText || '<none>',
      age(obj, now),
    ];
  },
};

export const csidrivers = defineResource({
  group: STORAGE_GROUP,
  version: 'v1',
  kind: 'CSIDriver',
  plural: 'csidrivers',
  // kube's ReturnDeletedObject: DELETE answers with the deleted object, not a Status.
  returnDeletedObject: true,
  namespaced: false,
  description: 'A CSIDriver tells the cluster how to treat the volumes of one installed CSI driver.',
  strategy: csiDriverStrategy,
  table: csiDriverTable,
});
