/**
 * kube 1.24's default Roles and RoleBindings in kube-system and kube-public
 * (plugin/pkg/auth/authorizer/rbac/bootstrappolicy/namespace_policy.go): the authentication
 * config map reader, the bootstrap signer, the cloud provider, the token cleaner and the
 * configmap-based leader-locking roles of the controller manager and the scheduler.
 */
import {
  eventsRule,
  legacy,
  namespacedRole,
  roleBinding,
  rule,
  serviceAccount,
  users,
  type RoleBindingObject,
  type RoleObject,
} from './bootstrap-policy-builders.js';
import { CONTROLLER_ROLE_PREFIX } from './bootstrap-policy-controllers.js';

const SYSTEM = 'kube-system';
const PUBLIC = 'kube-public';

/** kube's NamespaceRoles(): kube-system's, then kube-public's. */
export function namespaceRoles(): RoleObject[] {
  return [
    namespacedRole(SYSTEM, 'extension-apiserver-authentication-reader', [
      rule(['get', 'list', 'watch'], [legacy], ['configmaps'], ['extension-apiserver-authentication']),
    ]),
    namespacedRole(SYSTEM, `${CONTROLLER_ROLE_PREFIX}bootstrap-signer`, [rule(['get', 'list', 'watch'], [legacy], ['secrets'])]),
    // Deprecated since 1.10, still reconciled.
    namespacedRole(SYSTEM, `${CONTROLLER_ROLE_PREFIX}cloud-provider`, [rule(['create', 'get', 'list', 'watch'], [legacy], ['configmaps'])]),
    namespacedRole(SYSTEM, `${CONTROLLER_ROLE_PREFIX}token-cleaner`, [rule(['get', 'list', 'watch', 'delete'], [legacy], ['secrets']), eventsRule()]),
    namespacedRole(SYSTEM, 'system::leader-locking-kube-controller-manager', [
      rule(['watch'], [legacy], ['configmaps']),
      rule(['get', 'update'], [legacy], ['configmaps'], ['kube-controller-manager']),
    ]),
    namespacedRole(SYSTEM, 'system::leader-locking-kube-scheduler', [
      rule(['watch'], [legacy], ['configmaps']),
      rule(['get', 'update'], [legacy], ['configmaps'], ['kube-scheduler']),
    ]),
    namespacedRole(PUBLIC, `${CONTROLLER_ROLE_PREFIX}bootstrap-signer`, [
      rule(['get', 'list', 'watch'], [legacy], ['configmaps']),
      rule(['update'], [legacy], ['configmaps'], ['cluster-info']),
      eventsRule(),
    ]),
  ];
}

/** kube's NamespaceRoleBindings(): kube-system's, then kube-public's. */
export function namespaceRoleBindings(): RoleBindingObject[] {
  return [
    roleBinding(SYSTEM, 'extension-apiserver-authentication-reader', users('system:kube-controller-manager', 'system:kube-scheduler'), 'system::extension-apiserver-authentication-reader'),
    roleBinding(SYSTEM, 'system::leader-locking-kube-controller-manager', [...users('system:kube-controller-manager'), serviceAccount(SYSTEM, 'kube-controller-manager')]),
    roleBinding(SYSTEM, 'system::leader-locking-kube-scheduler', [...users('system:kube-scheduler'), serviceAccount(SYSTEM, 'kube-scheduler')]),
    roleBinding(SYSTEM, `${CONTROLLER_ROLE_PREFIX}bootstrap-signer`, [serviceAccount(SYSTEM, 'bootstrap-signer')]),
    roleBinding(SYSTEM, `${CONTROLLER_ROLE_PREFIX}cloud-provider`, [serviceAccount(SYSTEM, 'cloud-provider')]),
    roleBinding(SYSTEM, `${CONTROLLER_ROLE_PREFIX}token-cleaner`, [serviceAccount(SYSTEM, 'token-cleaner')]),
    roleBinding(PUBLIC, `${CONTROLLER_ROLE_PREFIX}bootstrap-signer`, [serviceAccount(SYSTEM, 'bootstrap-signer')]),
  ];
}
