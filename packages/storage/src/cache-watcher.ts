/** One client watch served by a watch cache: its key range, selector and bounded queue. */
import type { StoredObject } from '@plinth/api';
import type { ObjectEvent, Predicate, WatchEvent } from './interface.js';
import type { CachedObject } from './cached-object.js';
import { QueueWatcher, type InitialEvents, type WatcherLimits } from './watcher.js';

/** A change as the cache saw it; `natural` is the event for a watcher without a selector. */
export interface CacheEvent {
  key: string;
  rev: number;
  /** The new state; for DELETED the last state, with the deletion's resourceVersion. */
  obj: StoredObject;
  /** The state before (undefined for a create). */
  prev: StoredObject | undefined;
  natural: ObjectEvent;
  /** The event as selector watchers see an object entering / leaving their selection: made once, shared. */
  asAdded?: ObjectEvent;
  asDeleted?: ObjectEvent;
  /** The new state as stored (its JSON text; `cached.json()` gives bytes to serve when plain). */
  cached?: CachedObject;
}

export interface CacheWatcherOptions {
  key: string;
  exact: boolean;
  predicate?: Predicate;
  bookmarks: boolean;
  startRv: number;
  limits: WatcherLimits;
  onStop: () => void;
  initial?: InitialEvents;
}

export class CacheWatcher {
  readonly queue: QueueWatcher;
  readonly #key: string;
  readonly #exact: boolean;
  readonly #predicate: Predicate | undefined;
  readonly bookmarks: boolean;
  readonly limits: WatcherLimits;
  #lastRv: number;

  constructor(opts: CacheWatcherOptions) {
    this.#key = opts.key;
    this.#exact = opts.exact;
    this.#predicate = opts.predicate;
    this.bookmarks = opts.bookmarks;
    this.limits = opts.limits;
    this.#lastRv = opts.startRv;
    this.queue = new QueueWatcher(opts.limits, opts.onStop, opts.initial);
  }

  /** The newest resourceVersion this watcher has been sent (events, from a shared feed too, or bookmarks). */
  get lastRv(): number {
    const fed = this.queue.feedRev();
    return fed > this.#lastRv ? fed : this.#lastRv;
  }

  set lastRv(rv: number) {
    this.#lastRv = rv;
  }

  /**
   * Where its events come from in a WatcherSet: `undefined` when it needs its own translation
   * (a selector), else the key (`=` exact, `^` prefix) of the shared feed it may read.
   */
  get feedKey(): string | undefined {
    return this.#predicate ? undefined : `${this.#exact ? '=' : '^'}${this.#key}`;
  }

  matchesKey(key: string): boolean {
    if (this.#exact) return key === this.#key;
    // The cache offers each event to every watcher in turn, and many watch the same prefix (a
    // namespace, the whole resource): the last answer is reused for the same key and prefix.
    // (String#startsWith costs ~0.15 µs, most of a fan-out's per-watcher work.)
    if (key === memo.key && this.#key === memo.prefix) return memo.result;
    const result = key.length >= this.#key.length && key.slice(0, this.#key.length) === this.#key;
    memo.key = key;
    memo.prefix = this.#key;
    memo.result = result;
    return result;
  }

  matches(obj: StoredObject): boolean {
    return !this.#predicate || this.#predicate(obj);
  }

  /** Queues a live change as this watcher sees it. */
  deliver(e: CacheEvent): void {
    const out = this.translate(e);
    if (out) this.queue.push(out);
  }

  /**
   * The event this watcher is sent for a change, if any: with a selector, an object entering the
   * selection is ADDED and one leaving it is DELETED (kube's cacheWatcher semantics). Events are
   * the cache's own objects, shared by every watcher, so each is encoded once.
   */
  translate(e: CacheEvent): WatchEvent | undefined {
    if (!this.matchesKey(e.key)) return undefined;
    this.lastRv = e.rev;
    const p = this.#predicate;
    if (!p) return e.natural;
    const type = e.natural.type;
    if (type === 'DELETED') return p(e.obj) ? e.natural : undefined;
    const cur = p(e.obj);
    const prev = e.prev !== undefined && p(e.prev);
    if (cur && prev) return e.natural;
    if (cur) return type === 'ADDED' ? e.natural : (e.asAdded ??= { type: 'ADDED', object: e.obj, ...sizeOf(e) });
    // kube's cacheWatcher: the object as it was before it left, with the event's resourceVersion.
    if (prev) return (e.asDeleted ??= { type: 'DELETED', object: { ...e.prev!, metadata: { ...e.prev!.metadata, resourceVersion: String(e.rev) } }, ...sizeOf(e) });
    return undefined;
  }
}

/** The last prefix match (see CacheWatcher.matchesKey). */
const memo = { key: '', prefix: '', result: false };

function sizeOf(e: CacheEvent): { size?: number } {
  return e.natural.size === undefined ? {} : { size: e.natural.size };
}

/**
 * Initial events over an array captured when the watch started (a snapshot of the cache's objects,
 * or the history to replay), turned into events only as the client reads them: a watcher holds one
 * pointer array, never a copy of the collection or of its encoding.
 */
export class LazyEvents<T> implements InitialEvents {
  #items: readonly T[] | undefined;
  #i = 0;
  readonly #eventOf: (item: T) => WatchEvent | undefined;
  readonly #onClose: (() => void) | undefined;

  constructor(items: readonly T[], eventOf: (item: T) => WatchEvent | undefined, onClose?: () => void) {
    this.#items = items;
    this.#eventOf = eventOf;
    this.#onClose = onClose;
  }

  get done(): boolean {
    return !this.#items || this.#i >= this.#items.length;
  }

  poll(): WatchEvent | undefined {
    const items = this.#items;
    while (items && this.#i < items.length) {
      const e = this.#eventOf(items[this.#i++]!);
      if (e) return e;
    }
    return undefined;
  }

  fill(): Promise<void> {
    return Promise.resolve();
  }

  close(): void {
    if (!this.#items) return;
    this.#items = undefined;
    this.#onClose?.();
  }
}
