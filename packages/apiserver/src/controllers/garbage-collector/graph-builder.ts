/**
 * kube 1.24's GraphBuilder (pkg/controller/garbagecollector/graph_builder.go): turns the
 * monitors' events, and the workers' virtual delete events, into the uid graph, and queues the
 * nodes whose state calls for work — dependents whose owner went or looks wrong to
 * attemptToDelete, owners starting an orphan deletion to attemptToOrphan, owners starting a
 * foreground deletion (with their dependents) to attemptToDelete. JavaScript runs one event at a
 * time, so each event is applied when it arrives (kube serialises them through its
 * graph_changes queue).
 */
import type { OwnerReference, StoredObject } from '@plinth/api';
import { AbsentOwnerCache, Graph, GraphNode, NO_OWNERS, alternateOwnerIdentity, identityString, partitionDependents, refIdentity, refMatches, referencesDiffs, sameIdentity, type Identity } from './graph.js';

/** metav1.FinalizerOrphanDependents / FinalizerDeleteDependents. */
export const FINALIZER_ORPHAN = 'orphan';
export const FINALIZER_FOREGROUND = 'foregroundDeletion';

/** One change of the graph: an object seen (add/update) or gone (delete; virtual from a worker's GET). */
export interface GraphEvent {
  type: 'add' | 'update' | 'delete';
  /** A worker found the object absent (or replaced): kube's virtual delete event. */
  virtual: boolean;
  identity: Identity;
  owners: readonly OwnerReference[];
  beingDeleted: boolean;
  orphan: boolean;
  foreground: boolean;
}

/**
 * One copy of each namespace name for the graph's identities (every decoded object brings its own
 * copy, and the graph keeps an identity per object). Forgotten wholesale past a bound: only the
 * sharing is lost.
 */
const namespaceNames = new Map<string, string>();
const MAX_NAMESPACE_NAMES = 10_000;

function sharedNamespace(ns: string | undefined): string {
  if (!ns) return '';
  const known = namespaceNames.get(ns);
  if (known !== undefined) return known;
  if (namespaceNames.size >= MAX_NAMESPACE_NAMES) namespaceNames.clear();
  namespaceNames.set(ns, ns);
  return ns;
}

/** The event of an object a monitor of `apiVersion`/`kind` saw. */
export function eventOf(type: GraphEvent['type'], obj: StoredObject, apiVersion: string, kind: string): GraphEvent {
  const m = obj.metadata;
  const finalizers = m.finalizers ?? [];
  const owners = m.ownerReferences;
  return {
    type,
    virtual: false,
    identity: { apiVersion, kind, name: m.name ?? '', uid: m.uid ?? '', namespace: sharedNamespace(m.namespace) },
    owners: owners && owners.length > 0 ? owners : NO_OWNERS,
    beingDeleted: !!m.deletionTimestamp,
    orphan: finalizers.includes(FINALIZER_ORPHAN),
    foreground: finalizers.includes(FINALIZER_FOREGROUND),
  };
}

/** An event of an object the graph holds by its identity alone: no owners, deletion or GC finalizer. */
function isPlain(e: GraphEvent): boolean {
  return e.owners.length === 0 && !e.beingDeleted && !e.orphan && !e.foreground;
}

export interface GraphBuilderDeps {
  /** Queues a node (by UID) for attemptToDelete. */
  attemptToDelete(uid: string): void;
  /** Queues a node rate-limited for attemptToDelete (kube's AddRateLimited). */
  attemptToDeleteRateLimited(uid: string): void;
  attemptToOrphan(uid: string): void;
  /** kube's eventRecorder.Eventf(dependent, Warning, reason, message). */
  warn(object: Identity, reason: string, message: string): void;
}

export class GraphBuilder {
  readonly graph = new Graph();
  readonly absentOwnerCache = new AbsentOwnerCache(500);
  readonly #deps: GraphBuilderDeps;

  constructor(deps: GraphBuilderDeps) {
    this.#deps = deps;
  }

  /**
   * A monitor's (re)list of one kind (the informer's Replace): every object is an add (an update
   * for one known), every observed node of the kind missing from it a delete.
   */
  replace(apiVersion: string, kind: string, items: readonly StoredObject[]): void {
    const present = new Set<string>();
    for (const item of items) if (item.metadata.uid) present.add(item.metadata.uid);
    const gone = [...this.graph.observedUidsOf(apiVersion, kind)].filter((uid) => !present.has(uid)).map((uid) => this.graph.get(uid)!);
    for (const n of gone) this.process({ type: 'delete', virtual: false, identity: n.identity, owners: n.owners, beingDeleted: n.beingDeleted, orphan: false, foreground: false });
    for (const item of items) this.process(eventOf('add', item, apiVersion, kind));
  }

  /** kube's enqueueVirtualDeleteEvent: a worker verified `identity` absent. */
  virtualDelete(identity: Identity): void {
    this.process({ type: 'delete', virtual: true, identity, owners: NO_OWNERS, beingDeleted: false, orphan: false, foreground: false });
  }

  /** kube's processGraphChanges for one event. */
  process(event: GraphEvent): void {
    const uid = event.identity.uid;
    if (!uid) return;
    // An object held by its identity alone (see Graph): seen again with nothing the graph keeps, or
    // gone, it needs no node.
    if (!event.virtual && this.graph.plain(uid)) {
      if (event.type === 'delete') {
        this.graph.delete(uid);
        return;
      }
      if (isPlain(event)) return;
    }
    let existing = this.graph.get(uid);
    if (existing && !event.virtual && existing.virtual) {
      // The object a virtual node stood for is seen: dependents that named it with other
      // coordinates (or from another namespace) are checked again.
      const observed = event.identity;
      if (!sameIdentity(observed, existing.identity)) {
        for (const dep of partitionDependents(existing.dependents, observed).nonmatching) {
          if (observed.namespace !== '' && dep.identity.namespace !== observed.namespace) this.#reportInvalidNamespaceOwnerRef(dep, uid);
          this.#deps.attemptToDelete(dep.identity.uid);
        }
        existing.identity = observed;
      }
      existing.virtual = false;
    }
    if (event.type !== 'delete') {
      if (!existing) {
        if (isPlain(event)) {
          this.graph.setPlain(event.identity);
          return;
        }
        const n = new GraphNode({ identity: event.identity, virtual: false, owners: event.owners, beingDeleted: event.beingDeleted, deletingDependents: event.beingDeleted && event.foreground });
        this.graph.set(n);
        this.#addDependentToOwners(n, n.owners);
        this.#processTransitions(undefined, event, n);
      } else {
        const { added, removed, changed } = referencesDiffs(existing.owners, event.owners);
        if (added.length + removed.length + changed.length > 0) {
          this.#addUnblockedOwnersToDeleteQueue(removed, changed);
          existing.owners = event.owners;
          this.#addDependentToOwners(existing, added);
          this.#removeDependentFromOwners(existing, removed);
        }
        const old = { beingDeleted: existing.beingDeleted, orphan: existing.orphanFinalizer, foreground: existing.foregroundFinalizer };
        if (event.beingDeleted) existing.beingDeleted = true;
        this.#processTransitions(old, event, existing);
      }
      return;
    }
    if (!existing) return;
    let remove = true;
    if (event.virtual) {
      const deleted = event.identity;
      if (existing.virtual) {
        // Dependents may name this UID with other coordinates: only the verified ones are dangling.
        const { matching, nonmatching } = partitionDependents(existing.dependents, deleted);
        if (nonmatching.length > 0) {
          remove = false;
          if (matching.length > 0) {
            this.absentOwnerCache.add(deleted);
            for (const dep of matching) this.#deps.attemptToDelete(dep.identity.uid);
          }
          if (sameIdentity(existing.identity, deleted)) {
            const alternate = alternateOwnerIdentity(nonmatching, deleted);
            if (alternate) {
              existing.identity = alternate;
              this.#deps.attemptToDeleteRateLimited(uid);
            }
          }
        }
      } else if (!sameIdentity(existing.identity, deleted)) {
        // The object is there; coordinates some dependent used are not.
        remove = false;
        const { matching } = partitionDependents(existing.dependents, deleted);
        if (matching.length > 0) {
          this.absentOwnerCache.add(deleted);
          for (const dep of matching) this.#deps.attemptToDelete(dep.identity.uid);
        }
      }
    }
    if (!remove) return;
    existing = existing as GraphNode;
    this.graph.delete(uid);
    this.#removeDependentFromOwners(existing, existing.owners);
    // Its dependents' next GET of it is answered from memory.
    if (existing.dependents.size > 0) this.absentOwnerCache.add(event.identity);
    for (const dep of existing.dependents) this.#deps.attemptToDelete(dep.identity.uid);
    // A foreground owner waiting for this one may now finish.
    for (const ref of existing.owners) {
      const owner = this.graph.get(ref.uid);
      if (owner?.deletingDependents) this.#deps.attemptToDelete(owner.identity.uid);
    }
  }

  /** kube's addDependentToOwners. */
  #addDependentToOwners(n: GraphNode, owners: readonly OwnerReference[]): void {
    let potentiallyInvalid = false;
    for (const ref of owners) {
      let owner = this.graph.get(ref.uid);
      if (!owner) {
        // Named but not seen: a virtual node in the dependent's namespace, checked by a worker.
        owner = new GraphNode({ identity: refIdentity(ref, n.identity.namespace), virtual: true });
        this.graph.set(owner);
        owner.addDependent(n);
        this.#deps.attemptToDelete(ref.uid);
        continue;
      }
      owner.addDependent(n);
      if (potentiallyInvalid) continue;
      const ownerNamespaced = owner.identity.namespace !== '';
      if (ownerNamespaced && owner.identity.namespace !== n.identity.namespace) {
        if (!owner.virtual) this.#reportInvalidNamespaceOwnerRef(n, ref.uid);
        potentiallyInvalid = true;
      } else if (!refMatches(ref, owner.identity)) {
        potentiallyInvalid = true;
      } else if (!ownerNamespaced && owner.identity.namespace !== n.identity.namespace && owner.virtual) {
        potentiallyInvalid = true;
      }
    }
    if (potentiallyInvalid) this.#deps.attemptToDelete(n.identity.uid);
  }

  #removeDependentFromOwners(n: GraphNode, owners: readonly OwnerReference[]): void {
    for (const ref of owners) this.graph.get(ref.uid)?.deleteDependent(n);
  }

  /** kube's addUnblockedOwnersToDeleteQueue: a foreground owner no longer blocked re-checks. */
  #addUnblockedOwnersToDeleteQueue(removed: readonly OwnerReference[], changed: readonly { old: OwnerReference; next: OwnerReference }[]): void {
    for (const ref of removed) if (ref.blockOwnerDeletion === true && this.graph.get(ref.uid)) this.#deps.attemptToDelete(ref.uid);
    for (const c of changed) if (c.old.blockOwnerDeletion === true && c.next.blockOwnerDeletion !== true && this.graph.get(c.next.uid)) this.#deps.attemptToDelete(c.next.uid);
  }

  /**
   * kube's processTransitions: an object whose deletion starts (or is first seen, `old`
   * undefined — so a new leader resumes) with `orphan` is orphaned, with `foregroundDeletion`
   * waits for its dependents, which are queued.
   */
  #processTransitions(old: { beingDeleted: boolean; orphan: boolean; foreground: boolean } | undefined, e: GraphEvent, n: GraphNode): void {
    n.orphanFinalizer = e.orphan;
    n.foregroundFinalizer = e.foreground;
    const starts = (has: boolean, had: boolean | undefined): boolean => e.beingDeleted && has && (!old || !old.beingDeleted || !had);
    if (starts(e.orphan, old?.orphan)) {
      this.#deps.attemptToOrphan(n.identity.uid);
      return;
    }
    if (starts(e.foreground, old?.foreground)) {
      n.deletingDependents = true;
      for (const dep of n.dependents) this.#deps.attemptToDelete(dep.identity.uid);
      this.#deps.attemptToDelete(n.identity.uid);
    }
  }

  /** kube's reportInvalidNamespaceOwnerRef: a Warning on the dependent naming the ref as it reads in its namespace. */
  #reportInvalidNamespaceOwnerRef(n: GraphNode, ownerUid: string): void {
    const ref = n.owners.find((r) => r.uid === ownerUid);
    if (!ref) return;
    const invalid = refIdentity(ref, n.identity.namespace);
    this.#deps.warn(n.identity, 'OwnerRefInvalidNamespace', `ownerRef ${identityString(invalid)} does not exist in namespace ${JSON.stringify(n.identity.namespace)}`);
  }
}
