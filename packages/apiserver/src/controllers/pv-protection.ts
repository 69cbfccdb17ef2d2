/**
 * kube-controller-manager's `pv-protection` controller (pkg/controller/volume/pvprotection, 1.24):
 * a PersistentVolume being deleted loses its `kubernetes.io/pv-protection` finalizer once it is not
 * bound (`status.phase` other than Bound); one not being deleted gets the finalizer when it lacks
 * it (volumes created while StorageObjectInUseProtection admission was off).
 */
import { isNotFound, isPlainObject, type StoredObject, type UserInfo } from '@plinth/api';
import { PV_PROTECTION_FINALIZER } from '@plinth/admission';
import type { ResourceStore } from '../registry/store.js';
import type { Logger } from '../log.js';
import { runInformer } from './informer.js';
import { createWorkQueue } from './work-queue.js';
import { addFinalizer, isDeletionCandidate, needsFinalizer, removeFinalizer } from './volume-protection.js';

const CONTROLLER_USER: UserInfo = { name: 'system:serviceaccount:kube-system:pv-protection-controller', groups: ['system:masters'] };

/** kube's isBeingUsed: the PV controller marks a volume bound to a claim with phase Bound. */
export function isPersistentVolumeInUse(pv: StoredObject): boolean {
  return isPlainObject(pv['status']) && pv['status']['phase'] === 'Bound';
}

export interface PVProtectionDeps {
  persistentVolumes: ResourceStore;
  log: Logger;
  /** Relist period (ms): missed work is retried then. */
  resyncMs?: number;
}

/** Starts the controller; returns a stop function. */
export function startPVProtection(deps: PVProtectionDeps): () => void {
  const scope = { user: CONTROLLER_USER, namespace: '' };
  const queue = createWorkQueue({
    name: 'pv-protection',
    log: deps.log,
    async process(name) {
      let pv: StoredObject;
      try {
        pv = await deps.persistentVolumes.get(scope, name, '0');
      } catch (e) {
        if (isNotFound(e)) return;
        throw e;
      }
      if (isDeletionCandidate(pv, PV_PROTECTION_FINALIZER)) {
        if (!isPersistentVolumeInUse(pv)) {
          await removeFinalizer(deps.persistentVolumes, scope, name, PV_PROTECTION_FINALIZER);
          deps.log.v(3, 'pv-protection: removed the finalizer', { name });
          return;
        }
        deps.log.v(4, 'pv-protection: keeping a bound volume', { name });
      }
      if (needsFinalizer(pv, PV_PROTECTION_FINALIZER)) await addFinalizer(deps.persistentVolumes, scope, name, PV_PROTECTION_FINALIZER);
    },
  });
  const informer = runInformer({
    store: deps.persistentVolumes,
    scope,
    log: deps.log,
    resyncMs: deps.resyncMs ?? 60_000,
    types: ['ADDED', 'MODIFIED'],
    onObject: (_type, pv) => {
      if (needsFinalizer(pv, PV_PROTECTION_FINALIZER) || isDeletionCandidate(pv, PV_PROTECTION_FINALIZER)) queue.add(pv.metadata.name!);
    },
  });
  return () => {
    informer.stop();
    queue.stop();
  };
}
