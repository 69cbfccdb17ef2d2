/**
 * The system PriorityClasses (kube's `scheduling/bootstrap-system-priority-classes` post-start
 * hook, pkg/registry/scheduling/rest): created at start when missing, existing ones left as they
 * are; and kube's priorityclass REST.Delete, which refuses to delete them.
 */
import { SYSTEM_PRIORITY_CLASSES, forbidden, isAlreadyExists, isNotFound, isSystemPriorityClass, type UserInfo } from '@plinth/api';
import type { ResourceStore, StoreHooks } from '../registry/store.js';

const CONTROLLER_USER: UserInfo = { name: 'system:apiserver', groups: ['system:masters'] };

export async function ensureSystemPriorityClasses(store: ResourceStore): Promise<void> {
  const scope = { user: CONTROLLER_USER, namespace: '' };
  for (const spc of SYSTEM_PRIORITY_CLASSES) {
    try {
      await store.get(scope, spc.name);
      continue;
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
    try {
      await store.create(scope, { apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name: spc.name }, value: spc.value, description: spc.description, preemptionPolicy: 'PreemptLowerPriority' });
    } catch (e) {
      if (!isAlreadyExists(e)) throw e;
    }
  }
}

/** kube's REST.Delete of priorityclasses: a system class is never deleted (deletecollection goes around it, as kube's). */
export const priorityClassHooks: StoreHooks = {
  beforeDelete(name) {
    if (isSystemPriorityClass(name)) throw forbidden({ group: 'scheduling.k8s.io', resource: 'priorityclasses' }, name, 'this is a system priority class and cannot be deleted');
  },
};
