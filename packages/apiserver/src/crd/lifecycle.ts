/**
 * What the served versions of one CRD share about the CRD itself, kept current by the CRD
 * controller from its informer, and the guard every create of its custom resources holds.
 *
 * kube's crdHandler refuses creates once the CRD's Terminating condition is set (in the same
 * write as its deletionTimestamp), but it reads the CRD from an informer: a create that passed
 * that check on a replica whose informer lags (or just before the mark) can land after the
 * finalizer listed the objects to delete, and the object outlives its CRD — and comes back with
 * a CRD of the same name (kube's finalizer even notes that a stale server may still create).
 * plinth closes that window in etcd: each create compares the CRD key's mod_revision, as this
 * replica last saw it, in its own txn (GuardKey). Any write to the CRD — marking it for
 * deletion first of all — makes that compare fail; the create then reads the CRD as etcd has it
 * and is refused when the CRD is being deleted (405, kube's answer) or gone (404), else tried
 * again. Every create that landed did so before the mark, so the cleanup, which lists after it,
 * deletes it; no replica's view of the CRD can be behind etcd's.
 */
import { StatusError, groupResourceOf, methodNotSupported, pathNotFound, type ResourceDefinition, type StoredObject } from '@plinth/api';
import type { GuardKey } from '@plinth/storage';
import { isConditionTrue, type CRD } from './types.js';

export interface CRDLifecycle {
  /** The CRD is being deleted: creates are refused (kube: the Terminating condition). */
  terminating: boolean;
  /** The CRD served (a CRD created again under the same name has another uid). */
  readonly uid: string;
  /** The CRD's etcd key. */
  readonly key: string;
  /** The CRD's highest mod_revision this replica has seen. */
  revision: number;
}

/** Whether a CRD is being deleted: Terminating, or marked for deletion at all. */
export function isTerminating(crd: CRD): boolean {
  return isConditionTrue(crd, 'Terminating') || !!crd.metadata.deletionTimestamp;
}

/** The lifecycle of `crd` as read (its key is where the CRD store keeps it). */
export function lifecycleOf(crd: CRD, key: string): CRDLifecycle {
  return { terminating: isTerminating(crd), uid: crd.metadata.uid ?? '', key, revision: Number(crd.metadata.resourceVersion ?? 0) || 0 };
}

/** Takes what a newer read of the same CRD says. */
export function observe(lifecycle: CRDLifecycle, crd: CRD): void {
  lifecycle.terminating = isTerminating(crd);
  const revision = Number(crd.metadata.resourceVersion ?? 0) || 0;
  if (revision > lifecycle.revision) lifecycle.revision = revision;
}

/** kube's crdHandler answer to a create while the CRD is terminating (405). */
export function terminatingError(def: ResourceDefinition): StatusError {
  const e = methodNotSupported(groupResourceOf(def), 'create');
  return new StatusError({ code: e.code, reason: e.reason, message: 'create not allowed while custom resource definition is terminating', ...(e.details ? { details: e.details } : {}) });
}

/** The guard key of every create of `def` (a version of the CRD of `lifecycle`). */
export function crdGuardKey(lifecycle: CRDLifecycle, def: ResourceDefinition): GuardKey {
  const recheck = (current: StoredObject | undefined, revision: number): void => {
    const crd = current as CRD | undefined;
    // Gone, or deleted and created again: this definition no longer serves anything.
    if (!crd || crd.metadata.uid !== lifecycle.uid) throw pathNotFound();
    if (isTerminating(crd)) {
      lifecycle.terminating = true;
      throw terminatingError(def);
    }
    if (revision > lifecycle.revision) lifecycle.revision = revision;
  };
  return {
    key: lifecycle.key,
    // The revision held is one of a CRD seen not terminating: a create that commits against it
    // committed before the CRD was marked. Once this replica knows of the mark, none is tried.
    revision() {
      if (lifecycle.terminating) throw terminatingError(def);
      return lifecycle.revision;
    },
    recheck,
  };
}
