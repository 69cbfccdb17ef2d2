/**
 * kube-apiserver 1.24's default RBAC policy, complete: what its `rbac/bootstrap-roles` post-start
 * hook reconciles (pkg/registry/rbac/rest/storage_rbac.go: `ClusterRoles()` then
 * `ControllerRoles()`, `ClusterRoleBindings()` then `ControllerRoleBindings()`,
 * `NamespaceRoles()`, `NamespaceRoleBindings()`). The data lives beside this file, one file per
 * kube source: bootstrap-policy-cluster.ts (policy.go), bootstrap-policy-controllers.ts
 * (controller_policy.go), bootstrap-policy-namespaced.ts (namespace_policy.go). Each call
 * returns fresh objects.
 */
import { policyClusterRoleBindings, policyClusterRoles } from './bootstrap-policy-cluster.js';
import { controllerPolicy } from './bootstrap-policy-controllers.js';
import { namespaceRoleBindings, namespaceRoles } from './bootstrap-policy-namespaced.js';
import type { BootstrapPolicyOptions, ClusterRoleBindingObject, ClusterRoleObject, RoleBindingObject, RoleObject } from './bootstrap-policy-builders.js';

export {
  AGGREGATE_TO_ADMIN,
  AGGREGATE_TO_EDIT,
  AGGREGATE_TO_VIEW,
  AUTOUPDATE_ANNOTATION,
  BOOTSTRAP_LABELS,
  RBAC_API_GROUP,
  type BootstrapPolicyOptions,
  type ClusterRoleBindingObject,
  type ClusterRoleObject,
  type LabelSelectorObject,
  type RoleBindingObject,
  type RoleObject,
} from './bootstrap-policy-builders.js';
export { CONTROLLER_ROLE_PREFIX } from './bootstrap-policy-controllers.js';

/** Every default ClusterRole: the user-facing and system roles, then the controllers'. */
export function bootstrapClusterRoles(opts: BootstrapPolicyOptions = {}): ClusterRoleObject[] {
  return [...policyClusterRoles(opts), ...controllerPolicy(opts).roles];
}

/** Every default ClusterRoleBinding: the system bindings, then the controllers'. */
export function bootstrapClusterRoleBindings(opts: BootstrapPolicyOptions = {}): ClusterRoleBindingObject[] {
  return [...policyClusterRoleBindings(), ...controllerPolicy(opts).bindings];
}

/** The default Roles of kube-system and kube-public. */
export function bootstrapRoles(): RoleObject[] {
  return namespaceRoles();
}

/** The default RoleBindings of kube-system and kube-public. */
export function bootstrapRoleBindings(): RoleBindingObject[] {
  return namespaceRoleBindings();
}
