/**
 * A watch cache's watchers, indexed as kube's cacher indexes them (`indexedTrigger`,
 * `valueWatchers`): a watcher whose selector requires one value of the resource's index field
 * (pods: `spec.nodeName`; nodes, ConfigMaps, Secrets: `metadata.name`) is filed under that value
 * and offered only the events whose object had or has it; every other watcher is offered every
 * event. With a thousand kubelets each watching its own pods, an event then costs the one
 * watcher it concerns instead of a thousand selector evaluations. Unindexed watchers without a
 * selector get every event of their key or prefix unchanged: those of one key or prefix read one
 * shared feed (watcher.ts's SharedFeed), so an event costs them one append.
 */
import type { StoredObject } from '@plinth/api';
import type { CacheEvent, CacheWatcher } from './cache-watcher.js';
import { SharedFeed } from './watcher.js';

/** The watchers of one key or prefix without a selector, and the feed they read. */
interface FeedGroup {
  readonly feed: SharedFeed;
  /** The key, or the prefix of the keys, whose events the feed carries. */
  readonly key: string;
  readonly exact: boolean;
  members: number;
}

export class WatcherSet implements Iterable<CacheWatcher> {
  readonly #all = new Set<CacheWatcher>();
  /** Watchers offered every event (each translates it: a selector). */
  readonly #unindexed = new Set<CacheWatcher>();
  /** Shared feeds by CacheWatcher.feedKey, and each member's group. */
  readonly #feeds = new Map<string, FeedGroup>();
  readonly #groupOf = new Map<CacheWatcher, FeedGroup>();
  /** Index value → the watchers filed under it. */
  readonly #byValue = new Map<string, Set<CacheWatcher>>();
  /** The watcher → its index value, for removal. */
  readonly #valueOf = new Map<CacheWatcher, string>();
  readonly #index: ((obj: StoredObject) => string) | undefined;

  /** `index` reads the index field off an object; absent: no index, every watcher sees every event. */
  constructor(index?: (obj: StoredObject) => string) {
    this.#index = index;
  }

  get size(): number {
    return this.#all.size;
  }

  [Symbol.iterator](): Iterator<CacheWatcher> {
    return this.#all[Symbol.iterator]();
  }

  /** Adds a watcher, filed under `indexValue` when the set has an index and one is given. */
  add(w: CacheWatcher, indexValue?: string): void {
    this.#all.add(w);
    if (this.#index === undefined || indexValue === undefined) {
      const feedKey = w.feedKey;
      let g = feedKey === undefined ? undefined : this.#feeds.get(feedKey);
      // A feed bounds each reader by its own limits: a watcher with others has its own queue.
      if (feedKey === undefined || (g && g.feed.limits !== w.limits)) {
        this.#unindexed.add(w);
        return;
      }
      if (!g) this.#feeds.set(feedKey, (g = { feed: new SharedFeed(w.limits), key: feedKey.slice(1), exact: feedKey[0] === '=', members: 0 }));
      g.members++;
      this.#groupOf.set(w, g);
      w.queue.attach(g.feed);
      return;
    }
    let set = this.#byValue.get(indexValue);
    if (!set) this.#byValue.set(indexValue, (set = new Set()));
    set.add(w);
    this.#valueOf.set(w, indexValue);
  }

  delete(w: CacheWatcher): void {
    if (!this.#all.delete(w)) return;
    if (this.#unindexed.delete(w)) return;
    const g = this.#groupOf.get(w);
    if (g) {
      this.#groupOf.delete(w);
      if (--g.members === 0) this.#feeds.delete(g.exact ? `=${g.key}` : `^${g.key}`);
      return;
    }
    const v = this.#valueOf.get(w)!;
    this.#valueOf.delete(w);
    const set = this.#byValue.get(v);
    set?.delete(w);
    if (set?.size === 0) this.#byValue.delete(v);
  }

  /** Ends every watcher's stream and forgets them all. */
  endAll(): void {
    const all = [...this.#all];
    this.#all.clear();
    this.#unindexed.clear();
    this.#feeds.clear();
    this.#groupOf.clear();
    this.#byValue.clear();
    this.#valueOf.clear();
    for (const w of all) w.queue.end();
  }

  /** Offers a change to the watchers it may concern. */
  deliver(e: CacheEvent): void {
    for (const g of this.#feeds.values()) {
      if (g.exact ? e.key === g.key : e.key.startsWith(g.key)) g.feed.append(e.natural, e.rev);
    }
    for (const w of this.#unindexed) w.deliver(e);
    if (this.#byValue.size === 0) return;
    const index = this.#index!;
    // The object's value now, and before (a pod bound, a name unchanged): either selection may
    // hold the watcher (an object entering or leaving it is ADDED or DELETED for it).
    const now = index(e.obj);
    this.#byValue.get(now)?.forEach((w) => w.deliver(e));
    const prev = e.prev;
    if (prev === undefined) return;
    const before = index(prev);
    if (before !== now) this.#byValue.get(before)?.forEach((w) => w.deliver(e));
  }
}
