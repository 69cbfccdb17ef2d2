/**
 * The garbage collector's dependency graph (kube 1.24 pkg/controller/garbagecollector/graph.go):
 * one node per UID, observed (seen through an informer) or virtual (only named by an ownerRef),
 * each knowing its owners (its ownerReferences) and its dependents (nodes naming it as owner).
 */
import type { OwnerReference } from '@plinth/api';

/** kube's objectReference: an owner reference's coordinates plus a namespace ('' cluster-scoped). */
export interface Identity {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  namespace: string;
}

/** kube's objectReference.String(): `[apiVersion/kind, namespace: ns, name: n, uid: u]`. */
export function identityString(i: Identity): string {
  return `[${i.apiVersion}/${i.kind}, namespace: ${i.namespace}, name: ${i.name}, uid: ${i.uid}]`;
}

/** A key for maps and the absent-owner cache (every field of the identity). */
export function identityKey(i: Identity): string {
  return `${i.apiVersion}\u0000${i.kind}\u0000${i.namespace}\u0000${i.name}\u0000${i.uid}`;
}

export function sameIdentity(a: Identity, b: Identity): boolean {
  return a.apiVersion === b.apiVersion && a.kind === b.kind && a.name === b.name && a.uid === b.uid && a.namespace === b.namespace;
}

/** kube's ownerReferenceMatchesCoordinates: apiVersion, kind, name and uid equal. */
export function refMatches(ref: OwnerReference, i: Pick<Identity, 'apiVersion' | 'kind' | 'name' | 'uid'>): boolean {
  return ref.uid === i.uid && ref.name === i.name && ref.kind === i.kind && ref.apiVersion === i.apiVersion;
}

/** The identity an ownerRef names, in `namespace` (kube: the dependent's). */
export function refIdentity(ref: OwnerReference, namespace: string): Identity {
  return { apiVersion: ref.apiVersion, kind: ref.kind, name: ref.name, uid: ref.uid, namespace };
}

const NO_DEPENDENTS: ReadonlySet<GraphNode> = new Set();

/** The owners of a node that has none: one shared empty list (the graph holds every object). */
export const NO_OWNERS: readonly OwnerReference[] = Object.freeze([]);

// GraphNode's flags, packed in one small integer: the graph holds a node for every object of every
// resource (200,000 ServiceAccounts, 200,000 nodes), and five boolean fields cost 40 bytes a node.
const VIRTUAL = 1;
const BEING_DELETED = 2;
const DELETING_DEPENDENTS = 4;
const ORPHAN_FINALIZER = 8;
const FOREGROUND_FINALIZER = 16;

export class GraphNode {
  identity: Identity;
  owners: readonly OwnerReference[];
  /** Created with the first dependent: most objects have none, and the graph holds every object. */
  #dependents: Set<GraphNode> | undefined;
  #flags: number;

  constructor(init: { identity: Identity; virtual: boolean; owners?: readonly OwnerReference[]; beingDeleted?: boolean; deletingDependents?: boolean }) {
    this.identity = init.identity;
    this.owners = init.owners && init.owners.length > 0 ? init.owners : NO_OWNERS;
    this.#dependents = undefined;
    this.#flags = (init.virtual ? VIRTUAL : 0) | (init.beingDeleted ? BEING_DELETED : 0) | (init.deletingDependents ? DELETING_DEPENDENTS : 0);
  }

  #set(flag: number, on: boolean): void {
    this.#flags = on ? this.#flags | flag : this.#flags & ~flag;
  }

  /** Only named by ownerRefs so far (kube's `virtual`, cleared by markObserved). */
  get virtual(): boolean {
    return (this.#flags & VIRTUAL) !== 0;
  }
  set virtual(on: boolean) {
    this.#set(VIRTUAL, on);
  }

  /** Has a deletionTimestamp. */
  get beingDeleted(): boolean {
    return (this.#flags & BEING_DELETED) !== 0;
  }
  set beingDeleted(on: boolean) {
    this.#set(BEING_DELETED, on);
  }

  /** Being deleted in the foreground: waits for its blocking dependents. */
  get deletingDependents(): boolean {
    return (this.#flags & DELETING_DEPENDENTS) !== 0;
  }
  set deletingDependents(on: boolean) {
    this.#set(DELETING_DEPENDENTS, on);
  }

  /** The GC finalizers last observed (to see a transition start, kube's processTransitions). */
  get orphanFinalizer(): boolean {
    return (this.#flags & ORPHAN_FINALIZER) !== 0;
  }
  set orphanFinalizer(on: boolean) {
    this.#set(ORPHAN_FINALIZER, on);
  }

  get foregroundFinalizer(): boolean {
    return (this.#flags & FOREGROUND_FINALIZER) !== 0;
  }
  set foregroundFinalizer(on: boolean) {
    this.#set(FOREGROUND_FINALIZER, on);
  }

  get dependents(): ReadonlySet<GraphNode> {
    return this.#dependents ?? NO_DEPENDENTS;
  }

  addDependent(n: GraphNode): void {
    (this.#dependents ??= new Set()).add(n);
  }

  deleteDependent(n: GraphNode): void {
    this.#dependents?.delete(n);
  }

  /** kube's blockingDependents: dependents whose ownerRef to this node has blockOwnerDeletion. */
  blockingDependents(): GraphNode[] {
    const uid = this.identity.uid;
    return [...this.dependents].filter((d) => d.owners.some((r) => r.uid === uid && r.blockOwnerDeletion === true));
  }
}

/**
 * The uid → node map (kube's concurrentUIDToNode; here single-threaded). An observed object with
 * no owners, no dependents, no deletion and no GC finalizer (most objects of a cluster) is held by
 * its identity alone: its node is made when first asked for (get), so the graph costs such an
 * object its identity and a map entry instead of a node too.
 */
export class Graph {
  readonly #nodes = new Map<string, GraphNode | Identity>();

  /** The node of `uid` (made now for an object held by its identity). */
  get(uid: string): GraphNode | undefined {
    const v = this.#nodes.get(uid);
    if (v === undefined || v instanceof GraphNode) return v;
    const n = new GraphNode({ identity: v, virtual: false });
    this.#nodes.set(uid, n);
    return n;
  }
  /** The identity of `uid` when it is held by its identity alone (see the class comment). */
  plain(uid: string): Identity | undefined {
    const v = this.#nodes.get(uid);
    return v === undefined || v instanceof GraphNode ? undefined : v;
  }
  set(n: GraphNode): void {
    this.#nodes.set(n.identity.uid, n);
  }
  /** An observed object that needs no node (no owners, dependents, deletion or GC finalizer). */
  setPlain(identity: Identity): void {
    this.#nodes.set(identity.uid, identity);
  }
  delete(uid: string): void {
    this.#nodes.delete(uid);
  }
  get size(): number {
    return this.#nodes.size;
  }
  /** UIDs of the observed objects of one kind (a monitor's, for its relist). */
  *observedUidsOf(apiVersion: string, kind: string): Iterable<string> {
    for (const [uid, v] of this.#nodes) {
      const i = v instanceof GraphNode ? (v.virtual ? undefined : v.identity) : v;
      if (i && i.apiVersion === apiVersion && i.kind === kind) yield uid;
    }
  }
}

/**
 * kube's partitionDependents: dependents whose ref to `owner`'s UID matches its coordinates (and,
 * for a namespaced owner, whose namespace is the owner's), and those with a mismatch.
 */
export function partitionDependents(dependents: Iterable<GraphNode>, owner: Identity): { matching: GraphNode[]; nonmatching: GraphNode[] } {
  const matching: GraphNode[] = [];
  const nonmatching: GraphNode[] = [];
  const namespaced = owner.namespace !== '';
  for (const dep of dependents) {
    let match = false;
    let mismatch = false;
    if (namespaced && owner.namespace !== dep.identity.namespace) mismatch = true;
    else {
      for (const r of dep.owners) {
        if (r.uid !== owner.uid) continue;
        if (refMatches(r, owner)) match = true;
        else mismatch = true;
      }
    }
    if (match) matching.push(dep);
    if (mismatch) nonmatching.push(dep);
  }
  return { matching, nonmatching };
}

function identityLess(a: Identity, b: Identity): boolean {
  if (a.kind !== b.kind) return a.kind < b.kind;
  if (a.apiVersion !== b.apiVersion) return a.apiVersion < b.apiVersion;
  if (a.namespace !== b.namespace) return a.namespace < b.namespace;
  if (a.name !== b.name) return a.name < b.name;
  return a.uid < b.uid;
}

/**
 * kube's getAlternateOwnerIdentity: after `absent` was verified absent, the next coordinates some
 * dependent names the same UID with (the first after `absent` in kube's order, else the first).
 */
export function alternateOwnerIdentity(dependents: Iterable<GraphNode>, absent: Identity): Identity | undefined {
  const clusterScoped = absent.namespace === '';
  const seen = new Set([identityKey(absent)]);
  let first: Identity | undefined;
  let following: Identity | undefined;
  for (const dep of dependents) {
    for (const r of dep.owners) {
      if (r.uid !== absent.uid) continue;
      if (refMatches(r, absent) && (clusterScoped || absent.namespace === dep.identity.namespace)) continue;
      const ref = refIdentity(r, dep.identity.namespace);
      if (clusterScoped && ref.apiVersion === absent.apiVersion && ref.kind === absent.kind) ref.namespace = '';
      const key = identityKey(ref);
      if (seen.has(key)) continue;
      seen.add(key);
      if (!first || identityLess(ref, first)) first = ref;
      if (identityLess(absent, ref) && (!following || identityLess(ref, following))) following = ref;
    }
  }
  return following ?? first;
}

/** kube's referencesDiffs, by UID. */
export function referencesDiffs(old: readonly OwnerReference[], next: readonly OwnerReference[]): { added: OwnerReference[]; removed: OwnerReference[]; changed: { old: OwnerReference; next: OwnerReference }[] } {
  const oldByUid = new Map(old.map((r) => [r.uid, r]));
  const added: OwnerReference[] = [];
  const changed: { old: OwnerReference; next: OwnerReference }[] = [];
  for (const r of next) {
    const o = oldByUid.get(r.uid);
    if (!o) added.push(r);
    else {
      oldByUid.delete(r.uid);
      if (!sameRef(o, r)) changed.push({ old: o, next: r });
    }
  }
  return { added, removed: [...oldByUid.values()], changed };
}

function sameRef(a: OwnerReference, b: OwnerReference): boolean {
  return a.apiVersion === b.apiVersion && a.kind === b.kind && a.name === b.name && a.uid === b.uid && a.controller === b.controller && a.blockOwnerDeletion === b.blockOwnerDeletion;
}

/** kube's ReferenceCache (an LRU of identities known absent; 500 entries in the GC). */
export class AbsentOwnerCache {
  readonly #max: number;
  readonly #keys = new Set<string>();

  constructor(max = 500) {
    this.#max = max;
  }

  add(i: Identity): void {
    const k = identityKey(i);
    this.#keys.delete(k);
    this.#keys.add(k);
    if (this.#keys.size > this.#max) this.#keys.delete(this.#keys.values().next().value as string);
  }

  has(i: Identity): boolean {
    const k = identityKey(i);
    if (!this.#keys.has(k)) return false;
    // Recently used: to the end.
    this.#keys.delete(k);
    this.#keys.add(k);
    return true;
  }
}
