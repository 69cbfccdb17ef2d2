/**
 * storage.k8s.io: v1 (storageclasses, volumeattachments, csinodes, csidrivers,
 * csistoragecapacities) and v1beta1 csistoragecapacities (deprecated in 1.24, removed in 1.27,
 * and the storage version of both in 1.24). Resources in kube 1.24's discovery order.
 */
import { defineGroup } from '../define.js';
import { csidrivers } from './csidrivers.js';
import { csinodes } from './csinodes.js';
import { csistoragecapacities, csistoragecapacitiesV1beta1 } from './csistoragecapacities.js';
import { storageclasses } from './storageclasses.js';
import { volumeattachments } from './volumeattachments.js';

export const storageGroup = defineGroup({
  group: 'storage.k8s.io',
  versions: [{ version: 'v1' }, { version: 'v1beta1', deprecated: { in: '1.24', removedIn: '1.27' } }],
  resources: [csidrivers, csinodes, csistoragecapacities, storageclasses, volumeattachments, csistoragecapacitiesV1beta1],
});

export { csidrivers, csinodes, csistoragecapacities, csistoragecapacitiesV1beta1, storageclasses, volumeattachments };
export { BETA_IS_DEFAULT_CLASS_ANNOTATION, IS_DEFAULT_CLASS_ANNOTATION, isDefaultStorageClass } from './storageclasses.js';
export { STORAGE_GROUP } from './names.js';
