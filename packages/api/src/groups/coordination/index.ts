/** coordination.k8s.io: v1's Leases. */
import { defineGroup } from '../define.js';
import { leases } from './leases.js';

export const coordinationGroup = defineGroup({
  group: 'coordination.k8s.io',
  versions: [{ version: 'v1' }],
  resources: [leases],
});

export { COORDINATION_GROUP, leases, validateLease } from './leases.js';
