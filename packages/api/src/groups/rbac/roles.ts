/**
 * rbac.authorization.k8s.io/v1 Roles (kube's pkg/registry/rbac/role): create on PUT,
 * names that are path segments, the default printer.
 */
import type { ResourceStrategy } from '../../catalog.js';
import { nameIsPathSegment } from '../../validation.js';
import { defineResource } from '../define.js';
import { RBAC_GROUP, validateRules } from './shared.js';

/** kube's Role strategy: its rules (namespaced: no non-resource URLs). */
const roleStrategy: ResourceStrategy = {
  validate: (obj) => validateRules(obj, true),
};

export const roles = defineResource({
  group: RBAC_GROUP,
  version: 'v1',
  kind: 'Role',
  plural: 'roles',
  namespaced: true,
  description: 'A Role is a set of permissions within a namespace.',
  nameValidator: nameIsPathSegment,
  allowCreateOnUpdate: true,
  strategy: roleStrategy,
});
