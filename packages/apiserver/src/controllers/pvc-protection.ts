/**
 * kube-controller-manager's `pvc-protection` controller (pkg/controller/volume/pvcprotection, 1.24):
 * a PersistentVolumeClaim being deleted loses its `kubernetes.io/pvc-protection` finalizer once no
 * pod of its namespace uses it, checked again when such a pod goes away, ends or is unscheduled;
 * a claim not being deleted gets the finalizer when it lacks it.
 */
import { isNotFound, isPlainObject, type StoredObject, type UserInfo } from '@plinth/api';
import { PVC_PROTECTION_FINALIZER } from '@plinth/admission';
import type { ResourceStore } from '../registry/store.js';
import type { Logger } from '../log.js';
import { runInformer, type Informer } from './informer.js';
import { createWorkQueue } from './work-queue.js';
import { addFinalizer, isDeletionCandidate, needsFinalizer, removeFinalizer } from './volume-protection.js';

const CONTROLLER_USER: UserInfo = { name: 'system:serviceaccount:kube-system:pvc-protection-controller', groups: ['system:masters'] };

type Obj = Record<string, unknown>;
const field = (o: unknown, k: string): unknown => (isPlainObject(o) ? o[k] : undefined);
const volumesOf = (pod: StoredObject): Obj[] => {
  const v = field(pod['spec'], 'volumes');
  return Array.isArray(v) ? v.filter(isPlainObject) : [];
};

/**
 * Whether a pod's stored JSON can have a volume with a claim (claimOf): it names a
 * `persistentVolumeClaim` or an `ephemeral` member somewhere. A false positive only costs a decode.
 */
export const mayReferenceClaims = (json: string): boolean => json.includes('"persistentVolumeClaim"') || json.includes('"ephemeral"');

/** The claim a pod volume names: its `persistentVolumeClaim`, or the `<pod>-<volume>` claim of an ephemeral volume. */
function claimOf(pod: StoredObject, volume: Obj): { name: string; ephemeral: boolean } | undefined {
  const claimName = field(volume['persistentVolumeClaim'], 'claimName');
  if (typeof claimName === 'string') return { name: claimName, ephemeral: false };
  if (isPlainObject(volume['ephemeral'])) return { name: `${pod.metadata.name}-${String(volume['name'])}`, ephemeral: true };
  return undefined;
}

/** Deleted with a zero grace period: kubelet is done with it, or it was force-deleted (kube's podIsShutDown). */
function isPodShutDown(pod: StoredObject): boolean {
  return !!pod.metadata.deletionTimestamp && pod.metadata.deletionGracePeriodSeconds === 0;
}

/** kube's volumeutil.IsPodTerminated: ended, or being deleted with no container running. */
export function isPodTerminated(pod: StoredObject): boolean {
  const status = pod['status'];
  const phase = field(status, 'phase');
  if (phase === 'Failed' || phase === 'Succeeded') return true;
  if (!pod.metadata.deletionTimestamp) return false;
  const statuses = field(status, 'containerStatuses');
  return !Array.isArray(statuses) || statuses.every((s) => field(field(s, 'state'), 'terminated') !== undefined || field(field(s, 'state'), 'waiting') !== undefined);
}

/**
 * Whether `pod` keeps `pvc` from going (kube's podUsesPVC): only a scheduled pod counts (kubelet
 * sees no other, and refuses to start one on a claim being deleted); an ephemeral volume's claim
 * counts only while the pod controls it and is not shut down.
 */
export function podUsesClaim(pod: StoredObject, pvc: StoredObject): boolean {
  if (!field(pod['spec'], 'nodeName')) return false;
  return volumesOf(pod).some((v) => {
    const claim = claimOf(pod, v);
    if (!claim || claim.name !== pvc.metadata.name) return false;
    if (!claim.ephemeral) return true;
    return !isPodShutDown(pod) && (pvc.metadata.ownerReferences ?? []).some((r) => r.controller === true && r.uid === pod.metadata.uid);
  });
}

export interface PVCProtectionDeps {
  persistentVolumeClaims: ResourceStore;
  pods: ResourceStore;
  log: Logger;
  /** Relist period of the claims (ms): missed work, such as a pod deleted while no watch was open, is redone then. */
  resyncMs?: number;
}

/** Starts the controller; returns a stop function. */
export function startPVCProtection(deps: PVCProtectionDeps): () => void {
  const all = { user: CONTROLLER_USER, namespace: '' };
  const queue = createWorkQueue({
    name: 'pvc-protection',
    log: deps.log,
    async process(key) {
      const slash = key.indexOf('/');
      const scope = { user: CONTROLLER_USER, namespace: key.slice(0, slash) };
      const name = key.slice(slash + 1);
      let pvc: StoredObject;
      try {
        pvc = await deps.persistentVolumeClaims.get(scope, name, '0');
      } catch (e) {
        if (isNotFound(e)) return;
        throw e;
      }
      if (isDeletionCandidate(pvc, PVC_PROTECTION_FINALIZER)) {
        // kube asks its informer, then lists live to be sure: here the live (etcd) list, once.
        const pods = (await deps.pods.list(scope, {})).items;
        if (!pods.some((p) => podUsesClaim(p, pvc))) {
          await removeFinalizer(deps.persistentVolumeClaims, scope, name, PVC_PROTECTION_FINALIZER);
          deps.log.v(3, 'pvc-protection: removed the finalizer', { namespace: scope.namespace, name });
          return;
        }
        deps.log.v(2, 'pvc-protection: keeping a claim in use', { namespace: scope.namespace, name });
      }
      if (needsFinalizer(pvc, PVC_PROTECTION_FINALIZER)) await addFinalizer(deps.persistentVolumeClaims, scope, name, PVC_PROTECTION_FINALIZER);
    },
  });
  const keyOf = (o: StoredObject, name = o.metadata.name!): string => `${o.metadata.namespace}/${name}`;
  const informers: Informer[] = [
    runInformer({
      store: deps.persistentVolumeClaims,
      scope: all,
      log: deps.log,
      resyncMs: deps.resyncMs ?? 60_000,
      types: ['ADDED', 'MODIFIED'],
      onObject: (_type, pvc) => {
        if (needsFinalizer(pvc, PVC_PROTECTION_FINALIZER) || isDeletionCandidate(pvc, PVC_PROTECTION_FINALIZER)) queue.add(keyOf(pvc));
      },
    }),
    runInformer({
      store: deps.pods,
      scope: all,
      log: deps.log,
      resyncMs: 300_000,
      // Only changes matter: the claims' own relist redoes what a missed pod event would have.
      changesOnly: true,
      // Only a pod with a claim volume can hold a claim: others are not decoded at all (every pod
      // create and status update passes here).
      textFilter: mayReferenceClaims,
      onObject: (type, pod) => {
        // Only a pod that went, ended or is unscheduled can free a claim (kube's enqueuePVCs).
        if (type !== 'DELETED' && !isPodTerminated(pod) && field(pod['spec'], 'nodeName')) return;
        for (const v of volumesOf(pod)) {
          const claim = claimOf(pod, v);
          if (claim) queue.add(keyOf(pod, claim.name));
        }
      },
    }),
  ];
  return () => {
    informers.forEach((i) => i.stop());
    queue.stop();
  };
}
