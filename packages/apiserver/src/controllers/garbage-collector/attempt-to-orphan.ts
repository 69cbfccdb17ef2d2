/**
 * kube 1.24's attemptToOrphan worker (pkg/controller/garbagecollector/garbagecollector.go
 * `attemptToOrphanWorker`, `orphanDependents`): an owner deleted with the `orphan` finalizer has
 * its ownerReference removed from every dependent (which survive), then loses the finalizer, so
 * the apiserver completes its deletion.
 */
import { isNotFound } from '@plinth/api';
import type { Logger } from '../../log.js';
import { FINALIZER_ORPHAN, type GraphBuilder } from './graph-builder.js';
import { identityString } from './graph.js';
import type { GCClient } from './client.js';
import { removeFinalizer, removeOwnerRefs } from './patches.js';

export interface AttemptToOrphanDeps {
  builder: GraphBuilder;
  client: GCClient;
  log: Logger;
}

export async function attemptToOrphanWorker(deps: AttemptToOrphanDeps, uid: string): Promise<'forget' | 'requeue'> {
  const owner = deps.builder.graph.get(uid);
  if (!owner) return 'forget';
  const identity = { ...owner.identity };
  const errors: string[] = [];
  await Promise.all(
    [...owner.dependents].map(async (dep) => {
      try {
        await removeOwnerRefs(deps.client, dep.identity, new Set([uid]));
      } catch (e) {
        if (!isNotFound(e)) errors.push(`orphaning ${identityString(dep.identity)} failed, ${String(e)}`);
      }
    }),
  );
  if (errors.length > 0) {
    deps.log.v(2, `garbage collector: failed to orphan dependents of owner ${identityString(identity)}, got errors: ${errors.join(', ')}`);
    return 'requeue';
  }
  try {
    await removeFinalizer(deps.client, identity, FINALIZER_ORPHAN);
  } catch (e) {
    deps.log.v(2, 'garbage collector: removing the orphan finalizer failed', { owner: identityString(identity), error: String(e) });
    return 'requeue';
  }
  return 'forget';
}
