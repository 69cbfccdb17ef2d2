/**
 * The watch caches of one process: a Cacher per resource, the watch on `compact_rev_key` that
 * tells them what etcd has compacted, and the bookmark ticker.
 */
import type { StoredObject } from '@plinth/api';
import type { EtcdStore } from './etcd-store.js';
import { Cacher } from './cacher.js';
import { COMPACT_REV_KEY } from './compactor.js';
import type { RawWatch } from './watch-mux.js';

export interface WatchCachesOptions {
  /** How often watchers that asked for bookmarks get one (ms). */
  bookmarkIntervalMs?: number;
  /** See CacherOptions.consistentReadsFromCache (default true). */
  consistentReadsFromCache?: boolean;
  onError?: (msg: string, err: unknown) => void;
}

export class WatchCaches {
  readonly #etcd: EtcdStore;
  #cachers: Cacher[] = [];
  readonly #opts: WatchCachesOptions;
  #compactWatch: RawWatch | undefined;
  #timer: NodeJS.Timeout | undefined;
  #started = false;
  #stopped = false;

  constructor(etcd: EtcdStore, opts: WatchCachesOptions = {}) {
    this.#etcd = etcd;
    this.#opts = opts;
  }

  /**
   * A cache for the resource stored under `prefix` (ending in '/'). Added after `start()` (a
   * custom resource), it fills in the background; until it is ready its reads and watches go to
   * etcd, so it serves at once.
   */
  add(prefix: string, apiVersion: string, kind: string, index?: (obj: StoredObject) => string): Cacher {
    if (this.#stopped) throw new Error('watch caches are stopped');
    const c = new Cacher({
      etcd: this.#etcd,
      prefix,
      apiVersion,
      kind,
      ...(index ? { index } : {}),
      ...(this.#opts.onError ? { onError: this.#opts.onError } : {}),
      ...(this.#opts.consistentReadsFromCache === false ? { consistentReadsFromCache: false } : {}),
    });
    this.#cachers.push(c);
    // Its first sync reads a snapshot newer than any compaction seen so far.
    if (this.#started) void c.start();
    return c;
  }

  /** Closes and forgets a cache (a custom resource no longer served); its watchers end. */
  async remove(cacher: Cacher): Promise<void> {
    const before = this.#cachers.length;
    this.#cachers = this.#cachers.filter((c) => c !== cacher);
    if (this.#cachers.length !== before) await cacher.close();
  }

  all(): readonly Cacher[] {
    return this.#cachers;
  }

  /** Fills every cache (in parallel) and starts following compactions and sending bookmarks. */
  async start(): Promise<void> {
    await this.#followCompactions();
    this.#started = true;
    await Promise.all(this.#cachers.map((c) => c.start()));
    const interval = this.#opts.bookmarkIntervalMs ?? 2000;
    this.#timer = setInterval(() => void this.#bookmarks(), interval);
    this.#timer.unref();
  }

  async #followCompactions(): Promise<void> {
    const apply = (value: Buffer | undefined): void => {
      const rev = Number(value?.toString() ?? '0');
      if (rev > 0) for (const c of this.#cachers) c.onCompacted(rev);
    };
    const current = await this.#etcd.client.get(COMPACT_REV_KEY).exec();
    apply(current.kvs[0]?.value);
    this.#compactWatch = await this.#etcd.watchFeed(COMPACT_REV_KEY, true, Number(current.header.revision) + 1, {
      onEvents: (events) => {
        for (const e of events) if (e.type === 'Put') apply(e.kv.value);
      },
      onCancel: ({ message }) => {
        this.#opts.onError?.(`compaction watch ended: ${message}`, undefined);
        this.#compactWatch = undefined;
        setTimeout(() => void this.#followCompactions().catch((e: unknown) => this.#opts.onError?.('compaction watch restart failed', e)), 1000).unref();
      },
    });
  }

  async #bookmarks(): Promise<void> {
    const wanting = this.#cachers.filter((c) => c.hasBookmarkWatchers());
    if (wanting.length === 0) return;
    // Quiet caches are brought up to etcd's revision first, where etcd shows nothing changed.
    const target = await this.#etcd.freshRevision().catch(() => 0);
    await Promise.all(wanting.map((c) => (target > 0 ? c.catchUp(target) : undefined)));
    for (const c of wanting) c.sendBookmarks();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer) clearInterval(this.#timer);
    this.#compactWatch?.cancel();
    await Promise.all(this.#cachers.map((c) => c.close()));
  }
}
