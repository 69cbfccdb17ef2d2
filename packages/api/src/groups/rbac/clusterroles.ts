/**
 * rbac.authorization.k8s.io/v1 ClusterRoles (kube's pkg/registry/rbac/clusterrole): create on PUT,
 * names that are path segments, the default printer.
 */
import type { ResourceStrategy } from '../../catalog.js';
import { nameIsPathSegment } from '../../validation.js';
import { defineResource } from '../define.js';
import { RBAC_GROUP, validateAggregationRule, validateRules } from './shared.js';

/** kube's ClusterRole strategy: its rules (cluster-wide) and aggregation rule. */
const clusterRoleStrategy: ResourceStrategy = {
  validate: (obj) => [...validateRules(obj, false), ...validateAggregationRule(obj)],
};

export const clusterroles = defineResource({
  group: RBAC_GROUP,
  version: 'v1',
  kind: 'ClusterRole',
  plural: 'clusterroles',
  namespaced: false,
  description: 'A ClusterRole is a set of permissions, across the cluster or to bind in a namespace.',
  nameValidator: nameIsPathSegment,
  allowCreateOnUpdate: true,
  strategy: clusterRoleStrategy,
});
