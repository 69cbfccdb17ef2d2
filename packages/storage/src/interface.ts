/**
 * The versioned store plinth's registry works against (kube's `storage.Interface`). Objects are
 * decoded JSON; `metadata.resourceVersion` is always the etcd `mod_revision` of the key (of a
 * list: the revision the list was read at). Versions are never invented.
 */
import type { StoredObject } from '@plinth/api';
import type { StorageError } from './errors.js';
import type { ReadDefaults } from './cached-object.js';

/** Filters list and watch results (label/field selectors). */
export type Predicate = (obj: StoredObject) => boolean;

export interface Preconditions {
  uid?: string;
  resourceVersion?: string;
}

export type ResourceVersionMatch = '' | 'Exact' | 'NotOlderThan';

export interface GetOptions {
  /** '' (most recent, quorum read), '0' (any), or N (not older than N). */
  resourceVersion?: string;
}

export interface ListOptions {
  resourceVersion?: string;
  resourceVersionMatch?: ResourceVersionMatch;
  /**
   * Maximum items to return; 0 or unset for all. A watch cache serving resourceVersion '0' returns
   * every item (kube's cacher ignores the limit there too).
   */
  limit?: number;
  /** An opaque continue token from a previous page. */
  continue?: string;
  predicate?: Predicate;
  /** Whether a predicate is a real selector (remainingItemCount is then omitted). */
  hasSelector?: boolean;
  /**
   * Only apiVersion, kind and metadata are read (kube's metadata informers): a store that decodes
   * on demand (the watch cache) may give each item as partialObject() gives it, without the rest of
   * the object and without metadata.managedFields; others give whole objects. Ignored with a
   * predicate (a selector may read any field).
   */
  metadataOnly?: boolean;
}

/** `opts` without metadataOnly: for a store that converts the items it lists, which needs them whole. */
export function wholeObjects(opts: ListOptions | undefined): ListOptions | undefined {
  if (!opts?.metadataOnly) return opts;
  const { metadataOnly: _m, ...rest } = opts;
  return rest;
}

export interface ListResult {
  items: StoredObject[];
  /** The revision the list was read at, as a resourceVersion string. */
  resourceVersion: string;
  /** Token for the next page, or '' at the end. */
  continue: string;
  /** Items after this page, when known and no selector was given. */
  remainingItemCount?: number;
  /** The items are shared with a cache and must not be changed (else they are the caller's). */
  shared?: boolean;
}

/**
 * Computes the new state of an object from its current state. `current` is undefined when the key
 * does not exist (only when the caller allowed create). Throw to abort; return `current` itself to
 * make no write.
 */
export type UpdateFunc = (current: StoredObject | undefined) => StoredObject | Promise<StoredObject>;

/**
 * Another key a create depends on, compared in the create's own etcd txn: the object is created
 * only while `key`'s mod_revision is the one `revision()` gives (0: absent), asked when a create
 * is about to be tried (it may throw to refuse it). When the key has moved, `recheck` gets its
 * current object (undefined: absent) and revision, and either throws to refuse the create or
 * returns, and the create is tried again against that revision. A custom resource's create holds
 * its CRD this way: once the CRD is marked for deletion no create can land, so the cleanup, which
 * lists after that mark, finds every object created before it, on every replica.
 */
export interface GuardKey {
  key: string;
  revision(): number;
  recheck(current: StoredObject | undefined, modRevision: number): void | Promise<void>;
}

export interface CreateOptions {
  dryRun?: boolean;
  /** See GuardKey (not checked on a dry run, which writes nothing). */
  guardKey?: GuardKey;
  /**
   * Seconds the object lives (kube's TTLFunc): it is written with an etcd lease and etcd deletes
   * it — a DELETED watch event — once the lease expires. Unset or 0: no expiry.
   */
  ttlSeconds?: number;
}

export interface UpdateOptions {
  preconditions?: Preconditions;
  /** Call tryUpdate with `undefined` instead of failing with NotFound (create on update). */
  ignoreNotFound?: boolean;
  /** Run tryUpdate and return the result without writing. */
  dryRun?: boolean;
  /** The caller's guess at the current object (e.g. from a cache); verified by the write's txn. */
  suggestion?: StoredObject;
  /** The guess as stored (the watch cache's bytes and revision), used before `suggestion`. */
  suggestedState?: StoredState;
  /**
   * The caller, and tryUpdate, only read the object they are handed (the current one, or what the
   * store returns for it): the suggestion is handed over as it is instead of copied. It may be
   * shared (e.g. with the watch cache), so nothing may change it.
   */
  shareSuggestion?: boolean;
  /**
   * The resourceVersion the caller's object carries (the version it read, its precondition): a
   * cached copy of the key older than it is known stale, so a cache does not suggest it (an
   * update attempted on it would fail its precondition and be run again on etcd's state).
   */
  knownRevision?: number;
  /** As CreateOptions.ttlSeconds: a written update gets a fresh lease (a skipped write keeps the old). */
  ttlSeconds?: number;
  /** As CreateOptions.guardKey, for a write that creates the key (ignoreNotFound). */
  guardKey?: GuardKey;
}

export interface DeleteOptions {
  preconditions?: Preconditions;
  /** Runs against the current object before the delete (e.g. admission); throw to refuse. */
  validateDeletion?: (current: StoredObject) => void | Promise<void>;
  dryRun?: boolean;
  /** The caller's guess at the current object (e.g. from a cache); verified by the delete's txn. */
  suggestion?: StoredObject;
  /** The guess as stored (the watch cache's bytes and revision), used before `suggestion`. */
  suggestedState?: StoredState;
  /**
   * The caller, and validateDeletion, only read the object they are handed (the current one,
   * which the delete returns): the suggestion is handed over as it is instead of copied. It may
   * be shared (e.g. with the watch cache), so nothing may change it.
   */
  shareSuggestion?: boolean;
}

/**
 * An object as etcd holds it: the stored bytes (no resourceVersion; or their UTF-8 text, as the
 * watch cache keeps them) and their mod revision.
 */
export interface StoredState {
  data: Buffer | string;
  modRevision: number;
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

/** A change to an object, or a BOOKMARK (an object with only metadata.resourceVersion). */
export interface ObjectEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK';
  object: StoredObject;
  /** The object's stored size in bytes, when known: what a queued event is charged. */
  size?: number;
  /**
   * The object with only apiVersion, kind and metadata (kube's PartialObjectMetadata; its
   * managedFields may be left out), cheaper than `object` where the store decodes on demand (the
   * watch cache); absent elsewhere.
   */
  partialObject?(): StoredObject;
  /**
   * The object's stored JSON text (without its resourceVersion), where the store keeps it (the
   * watch cache): a consumer can tell from it, undecoded, that an event cannot concern it.
   */
  storedJson?(): string;
  /** The object's storage key, where the store tells it (the watch cache's change events). */
  key?: string;
}

/** The last event of a watch that failed (e.g. Compacted: its start is older than etcd's history). */
export interface ErrorEvent {
  type: 'ERROR';
  error: StorageError;
}

export type WatchEvent = ObjectEvent | ErrorEvent;

export interface WatchOptions {
  /** '' or '0': synthetic ADDED for current state, then changes; N: changes after N. */
  resourceVersion?: string;
  predicate?: Predicate;
  /**
   * The value the predicate requires of the watch cache's index field (see CacherOptions.index):
   * the watch is offered only the events whose object had or has this value there.
   */
  indexValue?: string;
  /** Only this one key (a watch on a single object). */
  exactKey?: boolean;
  /**
   * Send BOOKMARK events now and then (allowWatchBookmarks): the watch cache does, every few
   * seconds; a watch served straight from etcd sends none (bookmarks are never guaranteed).
   */
  bookmarks?: boolean;
}

/**
 * A running watch. Initial (synthetic ADDED) events are produced as they are read, never copied
 * up front; live events are queued up to a bound in events and in bytes, and a watcher that falls
 * further behind is ended. `stop()` ends it and releases what it holds.
 */
export interface Watcher {
  /** Resolves with the next event, or undefined once the watch has ended. */
  next(): Promise<WatchEvent | undefined>;
  /** The next event if one is ready now, without waiting (undefined otherwise): lets a writer batch. */
  poll(): WatchEvent | undefined;
  /**
   * Optional: arms `wake`, called once and synchronously when poll() may give an event or the
   * watch ended, instead of a next() promise; false (nothing armed) when the caller is to use
   * next() (an event may be ready, initial events are pending, the watch ended). See QueueWatcher.
   */
  notify?(wake: () => void): boolean;
  stop(): void;
}

/** A list as its items' JSON (without apiVersion and kind, as list items are written), with its metadata. */
export interface JsonList {
  itemsJson: string[];
  resourceVersion: string;
  continue?: string;
  remainingItemCount?: number;
}

/**
 * Reads answered with the stored bytes where they can be (the watch cache's): a response then
 * leaves without a decode and an encode. Only objects stored as `apiVersion`/`kind` whose stored
 * JSON is exactly what encoding them writes are served as bytes; anything else comes back as
 * objects, as get() and list() give them.
 */
export interface CachedBytes {
  /** The type the bytes are stored as (the resource's storage version). */
  readonly apiVersion: string;
  readonly kind: string;
  /** get(), as the object's JSON (resourceVersion included) where the bytes serve it. */
  getJson(key: string, opts?: GetOptions, readDefaults?: ReadDefaults): Promise<string | StoredObject>;
  /** list() without a predicate, as the items' JSON where every item's bytes serve it. */
  listJson(prefix: string, opts?: ListOptions, readDefaults?: ReadDefaults): Promise<JsonList | ListResult>;
}

export interface Store {
  /**
   * The stored bytes' reader behind this store, or undefined. Part of the contract so that a
   * wrapper (a TTL on writes, a conversion) decides what it does with it: one that does not change
   * what reads return forwards its inner store's; one that does, adapts it or gives none.
   */
  readonly cachedBytes: CachedBytes | undefined;
  /**
   * Creates `obj` at `key` when no object is there (txn on create_revision == 0, and on the
   * guard key's mod_revision with guardKey).
   * Throws KeyExists when the key is taken, RequestTooLarge when the encoded object is larger than
   * etcd accepts (checked before sending), what guardKey.recheck throws. Returns the stored
   * object with its resourceVersion. With ttlSeconds the key is deleted by etcd after about that long.
   */
  create(key: string, obj: StoredObject, opts?: CreateOptions): Promise<StoredObject>;
  /** Reads one object. Throws NotFound when absent, Compacted/TooLarge per resourceVersion. */
  get(key: string, opts?: GetOptions): Promise<StoredObject>;
  /**
   * Lists objects under a key prefix (which must end in '/'), paged and filtered. etcd is read in
   * pages bounded in bytes as well as keys, so no collection is too large to list.
   * Compacted for a continue token or an exact version older than etcd's history.
   */
  list(prefix: string, opts?: ListOptions): Promise<ListResult>;
  /**
   * Read-modify-write with optimistic concurrency: reads the current object, runs tryUpdate and
   * writes with a txn on mod_revision; on a lost race it re-reads and runs tryUpdate again.
   * NotFound when absent (unless ignoreNotFound); Conflict when preconditions fail;
   * RequestTooLarge when the new object is larger than etcd accepts.
   */
  guaranteedUpdate(key: string, tryUpdate: UpdateFunc, opts?: UpdateOptions): Promise<StoredObject>;
  /** Deletes the object at key and returns its last state. NotFound when absent. */
  delete(key: string, opts?: DeleteOptions): Promise<StoredObject>;
  /**
   * Watches a key prefix (or one key with exactKey). From a resourceVersion etcd has compacted: a
   * watcher whose one event is an ERROR with a Compacted StorageError. From one etcd has not
   * reached: ResourceVersionTooLarge after about 3 s, as reads.
   */
  watch(keyOrPrefix: string, opts?: WatchOptions): Promise<Watcher>;
  /** etcd's current revision, read with a cheap count-only range. */
  currentRevision(): Promise<number>;
  /** Compacts etcd history up to `revision`. */
  compact(revision: number): Promise<void>;
  close(): Promise<void>;
}

/** The etcd operations reported to an EtcdRequestObserver (kube's etcd_request_duration_seconds). */
export type EtcdOperation = 'get' | 'list' | 'create' | 'update' | 'delete' | 'listWithCount';

/**
 * Told of every etcd request the store makes on behalf of a caller (the API server's metrics);
 * storage itself has no metrics library. `key` is the object's key or the listed prefix;
 * `seconds` the request's latency, failed requests included. Called on the request path: it must
 * be cheap and must not throw.
 */
export interface EtcdRequestObserver {
  observe(operation: EtcdOperation, key: string, seconds: number): void;
}
