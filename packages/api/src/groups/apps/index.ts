/**
 * apps: apps/v1 (kube 1.24 serves no other apps version), its resources in discovery order.
 */
import { defineGroup } from '../define.js';
import { controllerrevisions } from './controllerrevisions.js';
import { daemonsets } from './daemonsets.js';
import { deployments } from './deployments.js';
import { replicasets } from './replicasets.js';
import { statefulsets } from './statefulsets.js';

export const appsGroup = defineGroup({
  group: 'apps',
  versions: [{ version: 'v1' }],
  resources: [controllerrevisions, daemonsets, deployments, replicasets, statefulsets],
});

export { controllerrevisions, daemonsets, deployments, replicasets, statefulsets };
