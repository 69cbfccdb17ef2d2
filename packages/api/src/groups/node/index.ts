/** node.k8s.io: v1 (preferred) and v1beta1 (deprecated in 1.22, removed in 1.25) RuntimeClasses, stored as v1. */
import { defineGroup } from '../define.js';
import { runtimeclassesV1, runtimeclassesV1beta1 } from './runtimeclasses.js';

export const nodeGroup = defineGroup({
  group: 'node.k8s.io',
  versions: [{ version: 'v1' }, { version: 'v1beta1', deprecated: { in: '1.22', removedIn: '1.25' } }],
  resources: [runtimeclassesV1, runtimeclassesV1beta1],
});

export { NODE_GROUP, runtimeclassesV1, runtimeclassesV1beta1, validateRuntimeClass } from './runtimeclasses.js';
