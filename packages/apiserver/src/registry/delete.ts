/**
 * DELETE of one object, as kube 1.24's generic store does it (apiserver
 * pkg/registry/generic/registry/store.go `Delete`, `updateForGracefulDeletionAndFinalizers`,
 * `deletionFinalizersForGarbageCollection`, `markAsDeleting`; pkg/registry/rest/delete.go
 * `BeforeDelete`): preconditions, graceful deletion (a strategy's `checkGracefulDelete`), the
 * garbage-collection finalizers `orphan` / `foregroundDeletion` that `propagationPolicy` and
 * `orphanDependents` ask for (or the resource's default policy), and the two-phase deletion of an
 * object with finalizers. Dependents themselves are collected by a garbage collector, not here.
 */
import {
  cloneJson,
  conflict,
  internalError,
  notFound,
  groupResourceOf,
  storageDefOf,
  type GarbageCollectionPolicy,
  type ResourceDefinition,
  type StoredObject,
} from '@plinth/api';
import type { Preconditions, Store } from '@plinth/storage';
import { now } from './meta.js';

/** metav1.FinalizerOrphanDependents. */
export const FINALIZER_ORPHAN = 'orphan';
/** metav1.FinalizerDeleteDependents. */
export const FINALIZER_FOREGROUND = 'foregroundDeletion';

export type PropagationPolicy = 'Foreground' | 'Background' | 'Orphan';

/** kube's DeleteOptions, validated (the handler answers 422 for bad ones). */
export interface DeleteOptions {
  dryRun?: boolean;
  preconditions?: Preconditions;
  propagationPolicy?: PropagationPolicy;
  /** The deprecated form of propagationPolicy Orphan (true) / Background (false). */
  orphanDependents?: boolean;
  gracePeriodSeconds?: number;
}

/** What a delete did: `object` is the object as it now is (not deleted) or as it was (deleted). */
export interface DeleteOutcome {
  object: StoredObject;
  deleted: boolean;
  /**
   * Whether the answer is kube's finalizeDelete of `object` (a success Status naming it, unless
   * the resource returns deleted objects) rather than `object` itself (kube: the object an
   * update left with finalizers or a grace period to run, or a dry run's updated object).
   */
  finalize: boolean;
}

/** Everything the delete of one object needs from its store. */
export interface DeleteTarget {
  def: ResourceDefinition;
  storage: Store;
  key: string;
  name: string;
  /** An object as the store hands it out (read defaults). */
  read(obj: StoredObject): StoredObject;
  /** kube's deleteValidation: DELETE admission (mutating, then validating) of the current object. */
  admit(current: StoredObject): Promise<void>;
  /** kube's Store.EnableGarbageCollection (`--enable-garbage-collector`): off, deletes leave GC finalizers alone. */
  garbageCollection?: boolean;
}

/** Whether a pending graceful deletion or finalizers keep the object (kube: metadata.finalizers, plus a namespace's spec.finalizers). */
export function hasPendingFinalizers(def: ResourceDefinition, obj: StoredObject): boolean {
  return (obj.metadata.finalizers?.length ?? 0) > 0 || !!def.strategy.hasPendingFinalizers?.(obj);
}

/**
 * The resource's default GC policy; with garbage collection off, kube's
 * deletionFinalizersForGarbageCollection changes no finalizer ('Disabled').
 */
function gcPolicyOf(t: Pick<DeleteTarget, 'def' | 'garbageCollection'>): GarbageCollectionPolicy | 'Disabled' | undefined {
  if (t.garbageCollection === false) return 'Disabled';
  return t.def.strategy.defaultGarbageCollectionPolicy?.({ group: t.def.group, version: t.def.version });
}

/** kube's shouldOrphanDependents. */
export function shouldOrphanDependents(policy: GarbageCollectionPolicy | undefined, finalizers: readonly string[], opts: DeleteOptions): boolean {
  if (policy === 'Unsupported') return false;
  if (opts.orphanDependents !== undefined) return opts.orphanDependents;
  if (opts.propagationPolicy !== undefined) return opts.propagationPolicy === 'Orphan';
  for (const f of finalizers) {
    if (f === FINALIZER_ORPHAN) return true;
    if (f === FINALIZER_FOREGROUND) return false;
  }
  return policy === 'OrphanDependents';
}

/** kube's shouldDeleteDependents (no default policy asks for foreground deletion). */
export function shouldDeleteDependents(policy: GarbageCollectionPolicy | undefined, finalizers: readonly string[], opts: DeleteOptions): boolean {
  if (policy === 'Unsupported') return false;
  if (opts.orphanDependents !== undefined) return false;
  if (opts.propagationPolicy !== undefined) return opts.propagationPolicy === 'Foreground';
  for (const f of finalizers) {
    if (f === FINALIZER_FOREGROUND) return true;
    if (f === FINALIZER_ORPHAN) return false;
  }
  return false;
}

/**
 * kube's deletionFinalizersForGarbageCollection: the finalizers after this delete (both GC
 * finalizers removed, then `orphan` and `foregroundDeletion` added as the options and policy
 * say), or undefined when the set does not change.
 */
export function deletionFinalizers(policy: GarbageCollectionPolicy | 'Disabled' | undefined, finalizers: readonly string[], opts: DeleteOptions): string[] | undefined {
  if (policy === 'Disabled') return undefined;
  const next = finalizers.filter((f) => f !== FINALIZER_ORPHAN && f !== FINALIZER_FOREGROUND);
  if (shouldOrphanDependents(policy, finalizers, opts)) next.push(FINALIZER_ORPHAN);
  if (shouldDeleteDependents(policy, finalizers, opts)) next.push(FINALIZER_FOREGROUND);
  const before = new Set(finalizers);
  const after = new Set(next);
  if (before.size === after.size && [...after].every((f) => before.has(f))) return undefined;
  return next;
}

/** RFC 3339 (second precision, as metav1.Time writes it) of `ms`. */
function timeText(ms: number): string {
  return `${new Date(Math.floor(ms / 1000) * 1000).toISOString().slice(0, 19)}Z`;
}

/**
 * kube's rest.BeforeDelete on `obj` (a copy: it may set deletionTimestamp, the grace period and
 * generation) and `opts` (its grace period may be defaulted or capped). `graceful`: the object
 * is to be updated for a graceful deletion; `pending`: a graceful deletion at least as short is
 * under way, nothing to do. Throws kube's 409 when a precondition fails.
 */
export function beforeDelete(def: ResourceDefinition, obj: StoredObject, opts: DeleteOptions): { graceful: boolean; pending: boolean } {
  const meta = obj.metadata;
  const pre = opts.preconditions;
  if (pre) {
    // kube names the kind here (its objectMetaAndKind), not the resource.
    const gr = { group: storageDefOf(def).group, resource: def.kind };
    const name = meta.name ?? '';
    if (pre.uid && pre.uid !== meta.uid) {
      throw conflict(gr, name, `the UID in the precondition (${pre.uid}) does not match the UID in record (${meta.uid ?? ''}). The object might have been deleted and then recreated`);
    }
    if (pre.resourceVersion && pre.resourceVersion !== meta.resourceVersion) {
      throw conflict(gr, name, `the ResourceVersion in the precondition (${pre.resourceVersion}) does not match the ResourceVersion in record (${meta.resourceVersion ?? ''}). The object might have been modified`);
    }
  }
  // A negative grace period counts as 1 s on the delete path.
  if (opts.gracePeriodSeconds !== undefined && opts.gracePeriodSeconds < 0) opts.gracePeriodSeconds = 1;
  if (meta.deletionGracePeriodSeconds !== undefined && meta.deletionGracePeriodSeconds < 0) meta.deletionGracePeriodSeconds = 1;
  const strategy = def.strategy;
  if (!strategy.checkGracefulDelete) return { graceful: false, pending: false };
  if (meta.deletionTimestamp) {
    const current = meta.deletionGracePeriodSeconds;
    // Gracefully deleted before without a grace period, or with 0 (a delete cut after its
    // update): delete now.
    if (current === undefined || current === 0) return { graceful: false, pending: false };
    if (opts.gracePeriodSeconds === undefined) {
      opts.gracePeriodSeconds = current;
      return { graceful: false, pending: true };
    }
    // Only a shorter grace period changes anything: the deadline moves as much earlier.
    if (opts.gracePeriodSeconds >= current) return { graceful: false, pending: true };
    const started = Date.parse(meta.deletionTimestamp) - current * 1000;
    meta.deletionTimestamp = timeText(started + opts.gracePeriodSeconds * 1000);
    meta.deletionGracePeriodSeconds = opts.gracePeriodSeconds;
    return { graceful: true, pending: false };
  }
  if (!strategy.checkGracefulDelete(obj, opts)) return { graceful: false, pending: false };
  if (opts.gracePeriodSeconds === undefined) throw internalError(new Error('options.GracePeriodSeconds should not be nil'));
  meta.deletionTimestamp = timeText(Date.now() + opts.gracePeriodSeconds * 1000);
  meta.deletionGracePeriodSeconds = opts.gracePeriodSeconds;
  // Controllers see a deleting object as a new generation.
  if (meta.generation !== undefined && meta.generation > 0) meta.generation++;
  return { graceful: true, pending: false };
}

/** kube's markAsDeleting: deletion of an object kept by finalizers (no grace period). */
export function markAsDeleting(obj: StoredObject): void {
  const meta = obj.metadata;
  if (!meta.deletionTimestamp && meta.generation !== undefined && meta.generation > 0) meta.generation++;
  const ts = now();
  if (!meta.deletionTimestamp || Date.parse(meta.deletionTimestamp) > Date.parse(ts)) meta.deletionTimestamp = ts;
  meta.deletionGracePeriodSeconds = 0;
}

/** Thrown out of the update when nothing keeps the object: delete it (kube's errDeleteNow). */
const DELETE_NOW = Symbol('deleteNow');
/** Thrown out of the update when a graceful deletion is already under way (errAlreadyDeleting). */
const ALREADY_DELETING = Symbol('alreadyDeleting');
/** Thrown out of the storage delete when finalizers appeared since the read: start again. */
const FINALIZERS_APPEARED = Symbol('finalizersAppeared');

/**
 * Deletes `t.key` as kube's Store.Delete does. Storage errors are thrown as they are (the store
 * translates them); 409 on a failed precondition; admission's own errors.
 */
export async function deleteObject(t: DeleteTarget, requested: DeleteOptions): Promise<DeleteOutcome> {
  for (;;) {
    try {
      return await deleteOnce(t, { ...requested });
    } catch (e) {
      if (e !== FINALIZERS_APPEARED) throw e;
    }
  }
}

async function deleteOnce(t: DeleteTarget, opts: DeleteOptions): Promise<DeleteOutcome> {
  const { def, storage, key } = t;
  const stored = await storage.get(key);
  const current = t.read(stored);
  // The read object may be shared with the watch cache: BeforeDelete works on a copy (of its
  // metadata: the only part it changes).
  const { graceful, pending } = beforeDelete(def, { ...current, metadata: { ...current.metadata } }, opts);
  // A deletion in progress: DeleteOptions can no longer change it.
  if (pending) return { object: current, deleted: false, finalize: true };
  const policy = gcPolicyOf(t);
  const gcChange = deletionFinalizers(policy, current.metadata.finalizers ?? [], opts) !== undefined;
  let ignoreNotFound = false;
  let lastExisting: StoredObject | undefined;
  let out: StoredObject | undefined;
  // The delete's guess at the current object: what was read, or what the update just wrote (the
  // watch cache has yet to see that write: its copy would fail the delete's compare once).
  let guess: StoredObject | undefined = stored;
  const preconditions: Preconditions | undefined = opts.preconditions ? { ...opts.preconditions } : undefined;
  if (graceful || hasPendingFinalizers(def, current) || gcChange) {
    const u = await updateForGracefulDeletionAndFinalizers(t, opts, preconditions, policy, current, stored);
    if (!u.deleteImmediately) return { object: u.out!, deleted: false, finalize: u.alreadyDeleting };
    ignoreNotFound = u.ignoreNotFound;
    lastExisting = u.lastExisting;
    out = u.out;
    if (out) guess = u.written;
    // The update changed the resourceVersion a precondition may name.
    if (out && preconditions?.resourceVersion) preconditions.resourceVersion = out.metadata.resourceVersion!;
  }
  // A dry run stops here, answering with the object the (dry) update made.
  if (opts.dryRun && out) return { object: out, deleted: true, finalize: false };
  try {
    const last = await storage.delete(key, {
      ...(preconditions ? { preconditions } : {}),
      // Neither the check nor the caller changes the object: the store need not copy it (the
      // object the update just wrote is then answered from the bytes it wrote).
      ...(guess ? { suggestion: guess, shareSuggestion: true } : {}),
      dryRun: !!opts.dryRun,
      validateDeletion: async (cur) => {
        const obj = t.read(cur);
        // kube deletes whatever it finds here; plinth starts again when finalizers this delete
        // would keep arrived since the read, so they are honoured.
        if (keepsObject(def, policy, obj, opts)) throw FINALIZERS_APPEARED;
        await t.admit(obj);
      },
    });
    return { object: t.read(last), deleted: true, finalize: true };
  } catch (e) {
    // A graceful delete with grace 0 races with others deleting the object: theirs is as good.
    if (ignoreNotFound && lastExisting && isNotFoundStorageError(e)) return { object: lastExisting, deleted: true, finalize: true };
    throw e;
  }
}

/** Whether finalizers keep `obj` after this delete's change to its GC finalizers. */
function keepsObject(def: ResourceDefinition, policy: GarbageCollectionPolicy | 'Disabled' | undefined, obj: StoredObject, opts: DeleteOptions): boolean {
  if (def.strategy.hasPendingFinalizers?.(obj)) return true;
  const finalizers = obj.metadata.finalizers ?? [];
  return (deletionFinalizers(policy, finalizers, opts) ?? finalizers).length > 0;
}

function isNotFoundStorageError(e: unknown): boolean {
  return typeof e === 'object' && e !== null && (e as { code?: unknown }).code === 'NotFound';
}

interface GracefulUpdate {
  deleteImmediately: boolean;
  /** A graceful deletion was under way: nothing was written, `out` is the object first read. */
  alreadyDeleting: boolean;
  ignoreNotFound: boolean;
  out?: StoredObject;
  /** The object the update stored, as the storage returned it (the delete's first guess). */
  written?: StoredObject;
  lastExisting?: StoredObject;
}

/**
 * What the graceful deletion's update changes: a copy of `obj`'s metadata over the rest of it.
 * beforeDelete, markAsDeleting and the finalizer change only replace or remove members of the
 * metadata (never change one inside), so spec and status are shared with `obj` (the store's own
 * copy for this attempt). A strategy with beginDeletion (namespaces, CRDs) changes more: a deep
 * copy. (A pod's deep copy was ~40 µs of a delete's CPU, twice per delete.)
 */
function deletionCopy(def: ResourceDefinition, obj: StoredObject): StoredObject {
  return def.strategy.beginDeletion ? cloneJson(obj) : { ...obj, metadata: { ...obj.metadata } };
}

/** kube's updateForGracefulDeletionAndFinalizers. */
async function updateForGracefulDeletionAndFinalizers(
  t: DeleteTarget,
  opts: DeleteOptions,
  preconditions: Preconditions | undefined,
  policy: GarbageCollectionPolicy | 'Disabled' | undefined,
  readObject: StoredObject,
  stored: StoredObject | undefined,
): Promise<GracefulUpdate> {
  const { def } = t;
  let lastGraceful = 0;
  let pendingFinalizers = false;
  let lastExisting: StoredObject | undefined;
  let out: StoredObject;
  try {
    out = await t.storage.guaranteedUpdate(
      t.key,
      async (cur) => {
        if (!cur) throw notFound(groupResourceOf(def), t.name);
        const existing = t.read(cur);
        await t.admit(existing);
        const next = deletionCopy(def, existing);
        const { graceful, pending } = beforeDelete(def, next, opts);
        if (pending) throw ALREADY_DELETING;
        // After the pending check: once a graceful deletion runs, options change no finalizer.
        const finalizers = deletionFinalizers(policy, next.metadata.finalizers ?? [], opts);
        if (finalizers) {
          if (finalizers.length > 0) next.metadata.finalizers = finalizers;
          else delete next.metadata.finalizers;
        }
        pendingFinalizers = hasPendingFinalizers(def, next);
        if (!graceful) {
          if (!pendingFinalizers) throw DELETE_NOW;
          markAsDeleting(next);
          def.strategy.beginDeletion?.(next);
          return next;
        }
        def.strategy.beginDeletion?.(next);
        lastGraceful = opts.gracePeriodSeconds ?? 0;
        lastExisting = next;
        return next;
      },
      // The update starts from the object the delete read, not from a second decode of the watch
      // cache's bytes; a stale one fails the write and is re-read. The update changes a copy
      // (deletionCopy), so the store need not copy it first.
      { ...(preconditions ? { preconditions } : {}), ...(stored ? { suggestion: stored, shareSuggestion: true } : {}), dryRun: !!opts.dryRun },
    );
  } catch (e) {
    if (e === DELETE_NOW) return { deleteImmediately: true, alreadyDeleting: false, ignoreNotFound: false };
    // kube answers with the object it read first.
    if (e === ALREADY_DELETING) return { deleteImmediately: false, alreadyDeleting: true, ignoreNotFound: false, out: readObject };
    throw e;
  }
  const written = out;
  out = t.read(out);
  // Finalizers keep it; so does a grace period still to run.
  if (pendingFinalizers || lastGraceful > 0) return { deleteImmediately: false, alreadyDeleting: false, ignoreNotFound: false, out };
  // Deleted gracefully with grace 0: someone else may delete it first, which is as good.
  return { deleteImmediately: true, alreadyDeleting: false, ignoreNotFound: true, out, written, ...(lastExisting ? { lastExisting } : {}) };
}
