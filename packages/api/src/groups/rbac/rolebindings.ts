/**
 * rbac.authorization.k8s.io/v1 RoleBindings (kube's pkg/registry/rbac/rolebinding): create on PUT,
 * names that are path segments.
 */
import type { ResourceStrategy } from '../../catalog.js';
import { nameIsPathSegment } from '../../validation.js';
import { defineResource } from '../define.js';
import { RBAC_GROUP, defaultBinding, validateBinding, validateRoleRefUnchanged, bindingTable } from './shared.js';

/** kube's RoleBinding strategy: roleRef and subjects defaulted and checked; roleRef immutable. */
const roleBindingStrategy: ResourceStrategy = {
  defaults: defaultBinding,
  validate: (obj) => validateBinding(obj, true),
  validateUpdate: validateRoleRefUnchanged,
};

export const rolebindings = defineResource({
  group: RBAC_GROUP,
  version: 'v1',
  kind: 'RoleBinding',
  plural: 'rolebindings',
  namespaced: true,
  description: 'A RoleBinding grants a Role or ClusterRole to subjects within a namespace.',
  nameValidator: nameIsPathSegment,
  allowCreateOnUpdate: true,
  strategy: roleBindingStrategy,
  table: bindingTable(),
});
