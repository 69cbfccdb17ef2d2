/** One client watch served by a watch cache: its key range, selector and bounded queue. */
import type { StoredObject } from '@plinth/api';
import type { Predicate, WatchEvent } from './interface.js';
import { QueueWatcher } from './watcher.js';

/** A change as the cache saw it; `natural` is the event for a watcher without a selector. */
export interface CacheEvent {
  key: string;
  rev: number;
  /** The new state; for DELETED the last state, with the deletion's resourceVersion. */
  obj: StoredObject;
  /** The state before (undefined for a create). */
  prev: StoredObject | undefined;
  natural: WatchEvent;
}

export class CacheWatcher {
  readonly queue: QueueWatcher;
  readonly #key: string;
  readonly #exact: boolean;
  readonly #predicate: Predicate | undefined;
  readonly bookmarks: boolean;
  /** The newest resourceVersion this watcher has been sent (events or bookmarks). */
  lastRv: number;

  constructor(opts: { key: string; exact: boolean; predicate?: Predicate; bookmarks: boolean; startRv: number; limit: number; onStop: () => void }) {
    this.#key = opts.key;
    this.#exact = opts.exact;
    this.#predicate = opts.predicate;
    this.bookmarks = opts.bookmarks;
    this.lastRv = opts.startRv;
    this.queue = new QueueWatcher(opts.limit, opts.onStop);
  }

  matchesKey(key: string): boolean {
    return this.#exact ? key === this.#key : key.startsWith(this.#key);
  }

  matches(obj: StoredObject): boolean {
    return !this.#predicate || this.#predicate(obj);
  }

  /**
   * Sends the event as this watcher sees it: with a selector, an object entering the selection
   * is ADDED and one leaving it is DELETED (kube's cacheWatcher semantics).
   */
  deliver(e: CacheEvent): void {
    if (!this.matchesKey(e.key)) return;
    this.lastRv = e.rev;
    const p = this.#predicate;
    if (!p) {
      this.queue.push(e.natural);
      return;
    }
    const type = e.natural.type;
    if (type === 'DELETED') {
      if (p(e.obj)) this.queue.push(e.natural);
      return;
    }
    const cur = p(e.obj);
    const prev = e.prev !== undefined && p(e.prev);
    if (cur && prev) this.queue.push(e.natural);
    else if (cur) this.queue.push(type === 'ADDED' ? e.natural : { type: 'ADDED', object: e.obj });
    else if (prev) this.queue.push({ type: 'DELETED', object: e.obj });
  }
}
