/**
 * What the PVC and PV protection controllers share (kube's pkg/controller/volume/protectionutil):
 * which objects need the finalizer added, which are deletion candidates, and the two writes.
 */
import { isNotFound, type StoredObject } from '@plinth/api';
import type { ResourceStore, RequestScope } from '../registry/store.js';

/** Not being deleted and without the finalizer (kube's NeedToAddFinalizer). */
export function needsFinalizer(obj: StoredObject, finalizer: string): boolean {
  return !obj.metadata.deletionTimestamp && !(obj.metadata.finalizers ?? []).includes(finalizer);
}

/** Being deleted and still held by the finalizer (kube's IsDeletionCandidate). */
export function isDeletionCandidate(obj: StoredObject, finalizer: string): boolean {
  return !!obj.metadata.deletionTimestamp && (obj.metadata.finalizers ?? []).includes(finalizer);
}

/** Adds the finalizer unless the object is gone, being deleted, or has it already. */
export async function addFinalizer(store: ResourceStore, scope: RequestScope, name: string, finalizer: string): Promise<void> {
  try {
    await store.modify(scope, name, (obj) => {
      if (needsFinalizer(obj, finalizer)) obj.metadata.finalizers = [...(obj.metadata.finalizers ?? []), finalizer];
    });
  } catch (e) {
    if (!isNotFound(e)) throw e;
  }
}

/** Removes the finalizer (the store deletes an object being deleted once it has none left). */
export async function removeFinalizer(store: ResourceStore, scope: RequestScope, name: string, finalizer: string): Promise<void> {
  try {
    await store.modify(scope, name, (obj) => {
      const list = obj.metadata.finalizers ?? [];
      if (list.includes(finalizer)) obj.metadata.finalizers = list.filter((f) => f !== finalizer);
    });
  } catch (e) {
    if (!isNotFound(e)) throw e;
  }
}
