/**
 * kube 1.24's attemptToDelete worker (pkg/controller/garbagecollector/garbagecollector.go
 * `attemptToDeleteWorker`, `attemptToDeleteItem`, `classifyReferences`, `isDangling`,
 * `processDeletingDependentsItem`): each ownerRef of the object is solid (owner there),
 * dangling (owner absent, or another object under that name) or waiting (owner being deleted in
 * the foreground); with a solid owner only the other refs are removed, else the object is deleted.
 */
import { isNotFound, type OwnerReference } from '@plinth/api';
import type { Logger } from '../../log.js';
import { FINALIZER_FOREGROUND, FINALIZER_ORPHAN, type GraphBuilder } from './graph-builder.js';
import type { GraphNode } from './graph.js';
import { NAMESPACED_OWNER_OF_CLUSTER_SCOPED, RestMappingError, type GCClient } from './client.js';
import { removeFinalizer, removeOwnerRefs } from './patches.js';

/** The virtual delete event is queued instead: nothing to retry. */
const VIRTUAL_DELETE_ENQUEUED = new Error('enqueued virtual delete event');

export interface AttemptToDeleteDeps {
  builder: GraphBuilder;
  client: GCClient;
  /** Queues a node for attemptToDelete. */
  enqueue(uid: string): void;
  log: Logger;
}

/** kube's attemptToDeleteWorker for the node of `uid`: forget it, or retry it rate-limited. */
export async function attemptToDeleteWorker(deps: AttemptToDeleteDeps, uid: string): Promise<'forget' | 'requeue'> {
  const n = deps.builder.graph.get(uid);
  // Gone from the graph: nothing left to do for it.
  if (!n) return 'forget';
  try {
    await attemptToDeleteItem(deps, n);
  } catch (e) {
    if (e === VIRTUAL_DELETE_ENQUEUED) return 'forget';
    if (e === NAMESPACED_OWNER_OF_CLUSTER_SCOPED) {
      deps.log.v(2, 'garbage collector: object is cluster-scoped, but refers to a namespaced owner', { object: n.identity.name, uid });
      return 'forget';
    }
    deps.log.v(e instanceof RestMappingError ? 5 : 2, 'garbage collector: error syncing item', { uid, kind: n.identity.kind, name: n.identity.name, error: String(e) });
    return 'requeue';
  }
  // A virtual node is checked again until it is observed or removed (kube issue 56121).
  return deps.builder.graph.get(uid)?.virtual ? 'requeue' : 'forget';
}

async function attemptToDeleteItem(deps: AttemptToDeleteDeps, item: GraphNode): Promise<void> {
  const { client, builder } = deps;
  // Being deleted, not waiting for dependents: its final deletion will come.
  if (item.beingDeleted && !item.deletingDependents) return;
  const identity = { ...item.identity };
  let latest;
  try {
    latest = await client.get(identity);
  } catch (e) {
    if (!isNotFound(e)) throw e;
    builder.virtualDelete(identity);
    throw VIRTUAL_DELETE_ENQUEUED;
  }
  if (latest.metadata.uid !== identity.uid) {
    builder.virtualDelete(identity);
    throw VIRTUAL_DELETE_ENQUEUED;
  }
  if (item.deletingDependents) return processDeletingDependents(deps, item);
  const refs = latest.metadata.ownerReferences ?? [];
  if (refs.length === 0) return;
  const { solid, dangling, waiting } = await classifyReferences(deps, item, refs);
  if (solid.length > 0) {
    if (dangling.length === 0 && waiting.length === 0) return;
    // Some owner stays: only the references to the others go.
    await removeOwnerRefs(client, identity, new Set([...dangling, ...waiting].map((r) => r.uid)));
    return;
  }
  if (waiting.length > 0 && item.dependents.size > 0) {
    // An owner waits for its dependents and this one has some: delete in the foreground too.
    // A dependent already deleting its own dependents could wait for this one forever: unblock.
    if ([...item.dependents].some((d) => d.deletingDependents)) {
      await client.patch(identity, (obj) => {
        const owned = obj.metadata.ownerReferences ?? [];
        if (!owned.some((r) => r.blockOwnerDeletion === true)) return false;
        obj.metadata.ownerReferences = owned.map((r) => ({ ...r, blockOwnerDeletion: false }));
        return true;
      });
    }
    deps.log.v(2, 'garbage collector: deleting object', { namespace: identity.namespace, name: identity.name, uid: identity.uid, kind: identity.kind, propagationPolicy: 'Foreground' });
    return deleteObject(deps, identity, 'Foreground');
  }
  const finalizers = latest.metadata.finalizers ?? [];
  const policy = finalizers.includes(FINALIZER_ORPHAN) ? 'Orphan' : finalizers.includes(FINALIZER_FOREGROUND) ? 'Foreground' : 'Background';
  deps.log.v(2, 'garbage collector: deleting object', { namespace: identity.namespace, name: identity.name, uid: identity.uid, kind: identity.kind, propagationPolicy: policy });
  return deleteObject(deps, identity, policy);
}

async function deleteObject(deps: AttemptToDeleteDeps, identity: GraphNode['identity'], policy: 'Foreground' | 'Background' | 'Orphan'): Promise<void> {
  try {
    await deps.client.delete(identity, policy);
  } catch (e) {
    // Gone already: its delete event does the rest.
    if (!isNotFound(e)) throw e;
  }
}

/** kube's processDeletingDependentsItem: the foreground owner loses its finalizer once no blocking dependent is left. */
async function processDeletingDependents(deps: AttemptToDeleteDeps, item: GraphNode): Promise<void> {
  const blocking = item.blockingDependents();
  if (blocking.length === 0) {
    await removeFinalizer(deps.client, item.identity, FINALIZER_FOREGROUND);
    return;
  }
  for (const dep of blocking) if (!dep.deletingDependents) deps.enqueue(dep.identity.uid);
}

/** kube's classifyReferences over isDangling. */
async function classifyReferences(deps: AttemptToDeleteDeps, item: GraphNode, refs: readonly OwnerReference[]): Promise<{ solid: OwnerReference[]; dangling: OwnerReference[]; waiting: OwnerReference[] }> {
  const solid: OwnerReference[] = [];
  const dangling: OwnerReference[] = [];
  const waiting: OwnerReference[] = [];
  for (const ref of refs) {
    const owner = await ownerOf(deps, ref, item);
    if (!owner) dangling.push(ref);
    else if (owner.deletionTimestamp && owner.finalizers.includes(FINALIZER_FOREGROUND)) waiting.push(ref);
    else solid.push(ref);
  }
  return { solid, dangling, waiting };
}

/**
 * kube's isDangling: the owner as it is, or undefined when it is absent — looked up in the
 * dependent's namespace (an owner in another namespace is absent), absent too when another
 * object has its name (owner never existed, or was replaced). Absent owners are remembered.
 */
async function ownerOf(deps: AttemptToDeleteDeps, ref: OwnerReference, item: GraphNode): Promise<{ deletionTimestamp: boolean; finalizers: string[] } | undefined> {
  const cache = deps.builder.absentOwnerCache;
  const key = { apiVersion: ref.apiVersion, kind: ref.kind, name: ref.name, uid: ref.uid, namespace: '' };
  if (cache.has(key)) return undefined;
  key.namespace = item.identity.namespace;
  if (cache.has(key)) return undefined;
  const namespaced = deps.client.isNamespaced(ref.apiVersion, ref.kind);
  if (!namespaced) key.namespace = '';
  if (item.identity.namespace === '' && namespaced) throw NAMESPACED_OWNER_OF_CLUSTER_SCOPED;
  let owner;
  try {
    owner = await deps.client.getOwner(ref, item.identity.namespace);
  } catch (e) {
    if (!isNotFound(e)) throw e;
    cache.add(key);
    return undefined;
  }
  if (owner.metadata.uid !== ref.uid) {
    cache.add(key);
    return undefined;
  }
  return { deletionTimestamp: !!owner.metadata.deletionTimestamp, finalizers: owner.metadata.finalizers ?? [] };
}
