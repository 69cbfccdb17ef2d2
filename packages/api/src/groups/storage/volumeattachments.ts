/**
 * storage.k8s.io/v1 VolumeAttachments as kube-apiserver 1.24 has them
 * (pkg/registry/storage/volumeattachment): cluster-scoped, with a `status` sub-resource. Create
 * clears the status; an update keeps the old status and may not change the spec; `/status` keeps
 * the old spec and metadata. Table: kube's printVolumeAttachment.
 */
import type { ResourceStrategy } from '../../catalog.js';
import { age, ageColumn, col, fieldAt, nameColumn, type TableDefinition } from '../../tables.js';
import { keepMember } from '../core/helpers/keep-member.js';
import { resetObjectMetaForStatus } from '../core/helpers/pod-strategy.js';
import { defineResource } from '../define.js';
import { STORAGE_GROUP } from './names.js';
import { validateVolumeAttachment, validateVolumeAttachmentUpdate, validateVolumeAttachmentV1 } from './validation.js';

const volumeAttachmentStrategy: ResourceStrategy = {
  prepareForCreate(obj) {
    obj['status'] = { attached: false };
  },
  prepareForUpdate(obj, old) {
    keepMember(obj, old, 'status');
  },
  validate: (obj) => [...validateVolumeAttachment(obj), ...validateVolumeAttachmentV1(obj)],
  // kube's ValidateUpdate: ValidateVolumeAttachment (twice, once inside the update rule) and the spec fixed.
  validateOnUpdate: false,
  validateUpdate: (obj, old) => [...validateVolumeAttachment(obj), ...validateVolumeAttachmentUpdate(obj, old)],
};

const volumeAttachmentStatusStrategy: ResourceStrategy = {
  prepareForUpdate(obj, old) {
    keepMember(obj, old, 'spec');
    resetObjectMetaForStatus(obj, old);
  },
  validate: () => [],
  validateUpdate: (obj, old) => [...validateVolumeAttachment(obj), ...validateVolumeAttachmentUpdate(obj, old)],
};

const volumeAttachmentTable: TableDefinition = {
  columns: [
    nameColumn,
    col('Attacher', 'string', 'The CSI driver that attaches the volume.', { format: 'name' }),
    col('PV', 'string', 'The persistent volume attached.'),
    col('Node', 'string', 'The node the volume is attached to.'),
    col('Attached', 'boolean', 'Whether the volume is attached.'),
    ageColumn,
  ],
  cells: (obj, now) => [
    obj.metadata.name ?? '',
    String(fieldAt(obj, 'spec', 'attacher') ?? ''),
    String(fieldAt(obj, 'spec', 'source', 'persistentVolumeName') ?? ''),
    String(fieldAt(obj, 'spec', 'nodeName') ?? ''),
    fieldAt(obj, 'status', 'attached') === true,
    age(obj, now),
  ],
};

export const volumeattachments = defineResource({
  group: STORAGE_GROUP,
  version: 'v1',
  kind: 'VolumeAttachment',
  plural: 'volumeattachments',
  // kube's ReturnDeletedObject: DELETE answers with the deleted object, not a Status.
  returnDeletedObject: true,
  namespaced: false,
  description: 'A VolumeAttachment asks for a volume to be attached to a node, and reports whether it is.',
  subresources: [{ name: 'status', verbs: ['get', 'patch', 'update'], strategy: volumeAttachmentStatusStrategy }],
  strategy: volumeAttachmentStrategy,
  table: volumeAttachmentTable,
});
