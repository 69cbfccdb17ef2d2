/**
 * rbac.authorization.k8s.io/v1 ClusterRoleBindings (kube's pkg/registry/rbac/clusterrolebinding): create on PUT,
 * names that are path segments.
 */
import type { ResourceStrategy } from '../../catalog.js';
import { nameIsPathSegment } from '../../validation.js';
import { defineResource } from '../define.js';
import { RBAC_GROUP, defaultBinding, validateBinding, validateRoleRefUnchanged, bindingTable } from './shared.js';

/** kube's ClusterRoleBinding strategy: roleRef and subjects defaulted and checked; roleRef immutable. */
const clusterRoleBindingStrategy: ResourceStrategy = {
  defaults: defaultBinding,
  validate: (obj) => validateBinding(obj, false),
  validateUpdate: validateRoleRefUnchanged,
};

export const clusterrolebindings = defineResource({
  group: RBAC_GROUP,
  version: 'v1',
  kind: 'ClusterRoleBinding',
  plural: 'clusterrolebindings',
  namespaced: false,
  description: 'A ClusterRoleBinding grants a ClusterRole to subjects across the cluster.',
  nameValidator: nameIsPathSegment,
  allowCreateOnUpdate: true,
  strategy: clusterRoleBindingStrategy,
  table: bindingTable(),
});
