/**
 * A Store whose writes expire (kube's `TTLFunc` of a registry store, e.g. Events under
 * kube-apiserver's `--event-ttl`): creates and updates go to `inner` with `ttlSeconds`, so etcd
 * deletes each object that long after its last write. Reads, watches and deletes pass through.
 */
import type { StoredObject } from '@plinth/api';
import type { CachedBytes, CreateOptions, DeleteOptions, GetOptions, ListOptions, ListResult, Store, UpdateFunc, UpdateOptions, WatchOptions, Watcher } from './interface.js';

/** `inner` with every write living `ttlSeconds` (> 0). */
export function withTTL(inner: Store, ttlSeconds: number): Store {
  if (!(ttlSeconds > 0)) throw new Error(`withTTL: the TTL must be positive, got ${ttlSeconds}`);
  return new TTLStore(inner, ttlSeconds);
}

class TTLStore implements Store {
  readonly #inner: Store;
  readonly #ttl: number;

  constructor(inner: Store, ttlSeconds: number) {
    this.#inner = inner;
    this.#ttl = ttlSeconds;
  }

  /** Reads are the inner store's: so are its stored bytes (Events under --event-ttl keep them). */
  get cachedBytes(): CachedBytes | undefined {
    return this.#inner.cachedBytes;
  }

  create(key: string, obj: StoredObject, opts: CreateOptions = {}): Promise<StoredObject> {
    return this.#inner.create(key, obj, { ...opts, ttlSeconds: this.#ttl });
  }

  guaranteedUpdate(key: string, tryUpdate: UpdateFunc, opts: UpdateOptions = {}): Promise<StoredObject> {
    return this.#inner.guaranteedUpdate(key, tryUpdate, { ...opts, ttlSeconds: this.#ttl });
  }

  get(key: string, opts?: GetOptions): Promise<StoredObject> {
    return this.#inner.get(key, opts);
  }

  list(prefix: string, opts?: ListOptions): Promise<ListResult> {
    return this.#inner.list(prefix, opts);
  }

  delete(key: string, opts?: DeleteOptions): Promise<StoredObject> {
    return this.#inner.delete(key, opts);
  }

  watch(keyOrPrefix: string, opts?: WatchOptions): Promise<Watcher> {
    return this.#inner.watch(keyOrPrefix, opts);
  }

  currentRevision(): Promise<number> {
    return this.#inner.currentRevision();
  }

  compact(revision: number): Promise<void> {
    return this.#inner.compact(revision);
  }

  /** The inner store is shared: closing this view closes nothing. */
  async close(): Promise<void> {}
}
