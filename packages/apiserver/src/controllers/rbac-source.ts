/**
 * The RBAC authorizer's source: one informer per kind (Roles, ClusterRoles, RoleBindings,
 * ClusterRoleBindings) over the registry stores, so authorization reads only memory.
 */
import type { UserInfo } from '@plinth/api';
import type { RBACSource } from '@plinth/auth';
import type { ResourceStore } from '../registry/store.js';
import type { Logger } from '../log.js';
import { runInformer } from './informer.js';

const READER: UserInfo = { name: 'system:apiserver', groups: ['system:masters'] };

/** Relists this often (a relist replaces what was known, so a missed deletion is forgotten). */
const RESYNC_MS = 10 * 60_000;

export function createRBACSource(deps: { storeOf(kind: string): ResourceStore; log: Logger }): RBACSource {
  return {
    subscribe(kind, handlers) {
      const informer = runInformer({
        store: deps.storeOf(kind),
        scope: { user: READER, namespace: '' },
        log: deps.log,
        resyncMs: RESYNC_MS,
        onList: (items) => handlers.replace(items),
        onObject: (type, obj) => {
          if (type === 'DELETED') handlers.remove(obj);
          else handlers.upsert(obj);
        },
      });
      return () => informer.stop();
    },
  };
}
