/**
 * The RBAC authorizer's source: one informer per kind (Roles, ClusterRoles, RoleBindings,
 * ClusterRoleBindings) over the registry stores, so authorization reads only memory.
 */
import type { RBACSource } from '@plinth/auth';
import type { ResourceStore } from '../registry/store.js';
import type { Logger } from '../log.js';
import { createInformerSource } from './informer-source.js';

export function createRBACSource(deps: { storeOf(kind: string): ResourceStore; log: Logger }): RBACSource {
  return createInformerSource(deps);
}
