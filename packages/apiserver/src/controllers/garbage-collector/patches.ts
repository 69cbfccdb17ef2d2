/**
 * The garbage collector's two writes besides DELETE (kube's GenerateDeleteOwnerRefStrategicMergeBytes
 * / deleteOwnerRefJSONMergePatch and removeFinalizer): each applied to the object as it is now,
 * only while its UID is the one the graph knows, and not written when nothing changes.
 */
import { isNotFound } from '@plinth/api';
import type { GCClient } from './client.js';
import type { Identity } from './graph.js';

/** Removes the ownerReferences to `ownerUids` from the object (the field goes when empty, as kube's patch leaves it). */
export async function removeOwnerRefs(client: GCClient, identity: Identity, ownerUids: ReadonlySet<string>): Promise<void> {
  await client.patch(identity, (obj) => {
    const refs = obj.metadata.ownerReferences ?? [];
    const kept = refs.filter((r) => !ownerUids.has(r.uid));
    if (kept.length === refs.length) return false;
    if (kept.length > 0) obj.metadata.ownerReferences = kept;
    else delete obj.metadata.ownerReferences;
    return true;
  });
}

/** Removes `finalizer` from the object; an object already gone is fine (kube's removeFinalizer). */
export async function removeFinalizer(client: GCClient, identity: Identity, finalizer: string): Promise<void> {
  try {
    await client.patch(identity, (obj) => {
      const finalizers = obj.metadata.finalizers ?? [];
      if (!finalizers.includes(finalizer)) return false;
      const kept = finalizers.filter((f) => f !== finalizer);
      if (kept.length > 0) obj.metadata.finalizers = kept;
      else delete obj.metadata.finalizers;
      return true;
    });
  } catch (e) {
    if (!isNotFound(e)) throw e;
  }
}
