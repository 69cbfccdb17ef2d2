/**
 * The watch cache of one resource (kube's Cacher): one etcd watch feeds an in-memory copy of
 * every object and a bounded history of events. It serves client watches and `resourceVersion=0`
 * reads from memory, and consistent reads (resourceVersion unset) once it has caught up with
 * etcd's current revision. Writes, paged and exact reads go to etcd.
 *
 * Objects are held as their stored JSON text (CachedObject) and decoded only when a reader needs
 * them; reads that can be answered with bytes (getJson, listJson) never decode. Objects handed out
 * are shared with the cache and every other reader: callers must not mutate them.
 */
import type { IEvent } from 'etcd3';
import type { StoredObject } from '@plinth/api';
import type { CachedBytes, CreateOptions, DeleteOptions, GetOptions, ListOptions, ListResult, ObjectEvent, Store, StoredState, UpdateFunc, UpdateOptions, WatchOptions, Watcher } from './interface.js';
import { StorageError } from './errors.js';
import { TOO_LARGE_WAIT_MS, type EtcdStore } from './etcd-store.js';
import { CachedObject, type ReadDefaults } from './cached-object.js';
import { writtenStored } from './object-codec.js';
import { parseResourceVersion } from './resource-version.js';
import { decodeContinue, encodeContinue } from './continue.js';
import type { RawWatch } from './watch-mux.js';
import { CacheWatcher, LazyEvents, type CacheEvent } from './cache-watcher.js';
import { WatcherSet } from './watcher-set.js';

export interface CacherOptions {
  etcd: EtcdStore;
  /** The resource's key prefix, ending in '/'. */
  prefix: string;
  /** apiVersion and kind of the resource, for BOOKMARK objects. */
  apiVersion: string;
  kind: string;
  /** Events kept for watches that resume from an older resourceVersion. */
  historyLimit?: number;
  /**
   * Consistent reads (resourceVersion unset) answered from the cache once it provably caught up
   * (plinth's ConsistentListFromCache gate, default true); false: they go to etcd.
   */
  consistentReadsFromCache?: boolean;
  /**
   * The resource's watch index (kube's TriggerFunc): the value of its index field in an object. A
   * watch whose `indexValue` is set is offered only the events of objects with that value.
   */
  index?: (obj: StoredObject) => string;
  onError?: (msg: string, err: unknown) => void;
}

/** Counters for tests and metrics. */
export interface CacherStats {
  objects: number;
  watchers: number;
  resourceVersion: number;
  historyFloor: number;
  consistentReadsFromCache: number;
  consistentReadsFallback: number;
  /** Consistent reads sent to etcd because consistentReadsFromCache is off. */
  consistentReadsFromEtcd: number;
  /** getJson and listJson calls answered with stored bytes (no decode, no encode). */
  bytesResponses: number;
  /**
   * Cached versions this process wrote, known from their write to be servable as bytes (not
   * decoded and encoded again to check it).
   */
  provenByWrite: number;
  /** Updates not given the cached copy as their first state: older than the caller's resourceVersion. */
  staleSuggestionsSkipped: number;
}

/** At most this many writes wait for their event in #written (past it the map starts again). */
const MAX_WRITTEN = 4096;

export class Cacher implements Store, CachedBytes {
  readonly #etcd: EtcdStore;
  readonly #prefix: string;
  readonly #apiVersion: string;
  readonly #kind: string;
  readonly #historyLimit: number;
  readonly #onError: (msg: string, err: unknown) => void;

  readonly #objects = new Map<string, CachedObject>();
  /** Writes of this process whose event has yet to come (see #noteWritten), by key. */
  readonly #written = new Map<string, { revision: number; text: string; cut: number | undefined }>();
  #sortedKeys: string[] | undefined;
  /**
   * Sorted keys of each narrower prefix read lately (namespaces), so that a write does not make
   * the next read of a namespace sort or scan the whole collection. Kept up to date as keys come
   * and go; bounded in count. A key that does not sort last is appended and the list marked in
   * `#unsortedScopes`, sorted when next read: inserting it in place moved every key after it on
   * each create (a namespace of 6,000 pods read once, e.g. by the quota controller's recount, made
   * each later create there pay for it); V8's sort of a sorted run with a short tail is linear.
   */
  readonly #scopeKeys = new Map<string, string[]>();
  readonly #unsortedScopes = new WeakSet<string[]>();
  /** The revision the cache reflects. */
  #rv = 0;
  /** History holds every event after this revision. */
  #floor = 0;
  #history: CacheEvent[] = [];
  #historyHead = 0;
  readonly #watchers: WatcherSet;
  #ready = false;
  #feed: RawWatch | undefined;
  #closed = false;
  #waiters: Array<{ rv: number; resolve: () => void }> = [];
  /** The etcd read proving the cache current, shared by concurrent consistent reads. */
  #proof: { target: number; after: number; p: Promise<{ count: number; modRevisions: number[] }> } | undefined;
  /**
   * The ADDED event of each object version, while at least one watcher streams initial events:
   * concurrent watchers share them (and so their encoding). Dropped when none streams, so the
   * encodings do not outlive the watches that needed them.
   */
  #addedEvents: WeakMap<CachedObject, ObjectEvent> | undefined;
  #initialStreams = 0;
  /**
   * Per prefix (a namespace a client listed), a revision up to which etcd showed nothing under it
   * changed after what the cache had applied then: the cache's state of the prefix is its state at
   * any revision from its own up to that one, until an event under the prefix arrives.
   */
  readonly #provenTo = new Map<string, number>();
  readonly #stats = { consistentReadsFromCache: 0, consistentReadsFallback: 0, consistentReadsFromEtcd: 0, bytesResponses: 0, provenByWrite: 0, staleSuggestionsSkipped: 0 };
  readonly #consistentFromCache: boolean;

  constructor(opts: CacherOptions) {
    if (!opts.prefix.endsWith('/')) throw new Error('cacher prefix must end in /');
    this.#etcd = opts.etcd;
    this.#prefix = opts.prefix;
    this.#apiVersion = opts.apiVersion;
    this.#kind = opts.kind;
    this.#historyLimit = opts.historyLimit ?? 10_000;
    this.#onError = opts.onError ?? (() => undefined);
    this.#consistentFromCache = opts.consistentReadsFromCache ?? true;
    this.#watchers = new WatcherSet(opts.index);
  }

  /** It answers reads with its stored bytes itself. */
  get cachedBytes(): CachedBytes {
    return this;
  }

  /** apiVersion and kind of the cached resource (its storage version). */
  get apiVersion(): string {
    return this.#apiVersion;
  }

  get kind(): string {
    return this.#kind;
  }

  /** The resource's key prefix (ending in '/'). */
  get prefix(): string {
    return this.#prefix;
  }

  get ready(): boolean {
    return this.#ready;
  }

  /**
   * The revision whose state this cache holds (every event up to it applied), undefined while it
   * does not serve reads: a list at resourceVersion 0 read at the same applied revision is the same.
   */
  get appliedRevision(): number | undefined {
    return this.#ready ? this.#rv : undefined;
  }

  stats(): CacherStats {
    return {
      objects: this.#objects.size,
      watchers: this.#watchers.size,
      resourceVersion: this.#rv,
      historyFloor: this.#floor,
      ...this.#stats,
    };
  }

  /** Fills the cache and starts its etcd watch; retries in the background until it succeeds. */
  async start(): Promise<void> {
    for (let attempt = 0; !this.#closed; attempt++) {
      try {
        await this.#sync();
        return;
      } catch (e) {
        this.#onError(`watch cache ${this.#prefix}: sync failed`, e);
        await new Promise((r) => setTimeout(r, Math.min(100 * 2 ** attempt, 5000)));
      }
    }
  }

  async #sync(): Promise<void> {
    const { entries, revision } = await this.#etcd.snapshot(this.#prefix);
    this.#objects.clear();
    this.#provenTo.clear();
    for (const [k, o] of entries) this.#objects.set(k, o);
    this.#sortedKeys = entries.map(([k]) => k);
    this.#scopeKeys.clear();
    this.#rv = revision;
    this.#floor = revision;
    this.#history = [];
    this.#historyHead = 0;
    this.#feed = await this.#etcd.watchFeed(this.#prefix, false, revision + 1, {
      onEvents: (events) => this.#onEvents(events),
      onCancel: ({ message }) => this.#onFeedLost(message),
    });
    this.#ready = true;
  }

  #onFeedLost(message: string): void {
    this.#ready = false;
    this.#feed = undefined;
    // Clients re-watch; those that resume from a version we no longer have go to etcd (or get 410).
    this.#watchers.endAll();
    if (this.#closed) return;
    this.#onError(`watch cache ${this.#prefix}: etcd watch ended (${message}), resyncing`, undefined);
    void this.start();
  }

  #onEvents(events: IEvent[]): void {
    for (const ev of events) {
      const key = ev.kv.key.toString();
      const rev = Number(ev.kv.mod_revision);
      const prev = this.#objects.get(key);
      let ce: CacheEvent;
      if (ev.type === 'Delete') {
        this.#rv = rev;
        if (!prev) continue;
        this.#objects.delete(key);
        this.#keysChanged(key, false);
        // The last state with the deletion's resourceVersion (the feed has no prev_kv: the cache
        // holds that state).
        ce = cacheEvent(key, rev, prev.at(rev), prev, 'DELETED', prev.size);
      } else {
        const cur = CachedObject.fromBuffer(ev.kv.value, rev);
        if (this.#written.size > 0) {
          const w = this.#written.get(key);
          if (w && w.revision <= rev) {
            this.#written.delete(key);
            if (w.revision === rev && w.text === cur.text && cur.provenPlain(w.cut)) this.#stats.provenByWrite++;
          }
        }
        this.#objects.set(key, cur);
        if (!prev) this.#keysChanged(key, true);
        ce = cacheEvent(key, rev, cur, prev, prev ? 'MODIFIED' : 'ADDED', cur.size);
      }
      this.#rv = rev;
      this.#pushHistory(ce);
      this.#watchers.deliver(ce);
    }
    this.#wake();
  }

  /**
   * A key came or went: the sorted list of every key is rebuilt when next read; the lists of the
   * narrower prefixes holding it (a namespace's few keys) take or lose it in place.
   */
  #keysChanged(key: string, added: boolean): void {
    this.#sortedKeys = undefined;
    if (this.#scopeKeys.size === 0) return;
    // The prefixes a key is under end at one of its '/' after the resource's prefix.
    for (let i = key.indexOf('/', this.#prefix.length); i >= 0; i = key.indexOf('/', i + 1)) {
      const keys = this.#scopeKeys.get(key.slice(0, i + 1));
      if (!keys) continue;
      if (added) {
        const last = keys[keys.length - 1];
        if (last !== undefined && compareKeys(last, key) >= 0) this.#unsortedScopes.add(keys);
        keys.push(key);
        continue;
      }
      sortScope(keys, this.#unsortedScopes);
      const at = lowerBound(keys, key);
      if (keys[at] === key) keys.splice(at, 1);
    }
  }

  #pushHistory(ce: CacheEvent): void {
    this.#history.push(ce);
    if (this.#history.length - this.#historyHead > this.#historyLimit) {
      this.#floor = this.#history[this.#historyHead]!.rev;
      this.#history[this.#historyHead++] = undefined as unknown as CacheEvent;
      if (this.#historyHead > 4096 && this.#historyHead * 2 > this.#history.length) {
        this.#history = this.#history.slice(this.#historyHead);
        this.#historyHead = 0;
      }
    }
  }

  /** etcd compacted up to `rev`: history at or below it is no longer served (watches from there get 410). */
  onCompacted(rev: number): void {
    if (rev <= this.#floor) return;
    this.#floor = Math.min(rev, this.#rv);
    while (this.#historyHead < this.#history.length && this.#history[this.#historyHead]!.rev <= this.#floor) {
      this.#history[this.#historyHead++] = undefined as unknown as CacheEvent;
    }
  }

  /** The cache provably reflects `rev`: every change under the prefix up to it is applied. */
  #advance(rev: number): void {
    if (rev > this.#rv) this.#rv = rev;
    this.#wake();
  }

  #wake(): void {
    if (this.#waiters.length === 0) return;
    const still: Array<{ rv: number; resolve: () => void }> = [];
    for (const w of this.#waiters) {
      if (w.rv <= this.#rv) w.resolve();
      else still.push(w);
    }
    this.#waiters = still;
  }

  /** Resolves once the cache's events reach `rv`, or after `timeoutMs`. */
  #eventsReach(rv: number, timeoutMs: number): Promise<void> {
    if (this.#rv >= rv) return Promise.resolve();
    return new Promise((resolve) => {
      const waiter = { rv, resolve: () => {
        clearTimeout(timer);
        resolve();
      } };
      const timer = setTimeout(() => {
        this.#waiters = this.#waiters.filter((w) => w !== waiter);
        resolve();
      }, timeoutMs);
      this.#waiters.push(waiter);
    });
  }

  /**
   * Waits until the cache provably reflects revision `rv`: its own events reach it, or etcd shows
   * that nothing under the prefix changed between what the cache has applied and `rv` (a quiet
   * resource). After `timeoutMs`: ResourceVersionTooLarge (kube's 504 "Too large resource
   * version"); etcd not having reached `rv` itself ends the same way.
   */
  async #waitUntil(rv: number, key: string, timeoutMs = TOO_LARGE_WAIT_MS): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.#rv < rv) {
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new StorageError('ResourceVersionTooLarge', key, `Too large resource version: ${rv}, current: ${this.#rv}`, { revision: this.#rv, requested: rv });
      }
      const pending = await this.#prove(rv);
      if (pending > 0) await this.#eventsReach(pending, Math.min(left, 100));
    }
  }

  /**
   * Asks etcd what changed under the prefix after the cache's revision, as of `target`. Nothing
   * changed and the key count matches: the cache reflects `target` (advanced). Otherwise returns
   * the revision of a change the cache has yet to apply (its event is on the way). Concurrent
   * callers share one etcd read.
   */
  async #prove(target: number): Promise<number> {
    let flight = this.#proof;
    if (!flight || flight.target < target) {
      const after = this.#rv;
      const size = this.#objects.size;
      const p = this.#etcd.changesSince(this.#prefix, after, target).then((r) => {
        // No change in (after, target]: events applied since are all newer than target.
        if (r.modRevisions.length === 0 && r.count === size) this.#advance(target);
        return r;
      });
      const f = { target, after, p };
      flight = this.#proof = f;
      const clear = (): void => {
        if (this.#proof === f) this.#proof = undefined;
      };
      p.then(clear, clear);
    }
    const r = await flight.p;
    if (this.#rv >= target) return 0;
    let needed = 0;
    for (const m of r.modRevisions) if (m <= target && m > needed) needed = m;
    // Only a count differs: a deletion the cache has not seen yet; any next event may be it.
    return needed > 0 ? needed : flight.after + 1;
  }

  /** Brings a quiet cache up to `target` when etcd shows it can be (bookmarks use it); never throws. */
  async catchUp(target: number, timeoutMs = 1000): Promise<void> {
    try {
      await this.#waitUntil(target, this.#prefix, timeoutMs);
    } catch {
      // Not now: the next round tries again.
    }
  }

  /**
   * Consistent read of `scope` (one key when `exact`, else a prefix): etcd's current revision once
   * the cache's copy of the scope provably reflects it; 0 (read etcd instead) after the wait limit.
   * A read of the whole resource brings the cache's revision up; a narrower one proves only its
   * own keys (one key for a get: as cheap as kube's quorum read), never a scan of the collection.
   */
  async #waitConsistent(scope: string, exact: boolean): Promise<number> {
    try {
      const target = await this.#etcd.freshRevision();
      if (!exact && scope === this.#prefix) await this.#waitUntil(target, scope);
      else await this.#proveScope(target, scope, exact);
      this.#stats.consistentReadsFromCache++;
      return target;
    } catch {
      this.#stats.consistentReadsFallback++;
      return 0;
    }
  }

  /** Waits until nothing in `scope` changed between what the cache applied and `target`. */
  async #proveScope(target: number, scope: string, exact: boolean): Promise<void> {
    const deadline = Date.now() + TOO_LARGE_WAIT_MS;
    while (this.#rv < target) {
      const left = deadline - Date.now();
      if (left <= 0) throw new StorageError('ResourceVersionTooLarge', scope, `Too large resource version: ${target}, current: ${this.#rv}`, { revision: this.#rv, requested: target });
      const after = this.#rv;
      const cached = exact ? (this.#objects.has(scope) ? 1 : 0) : this.#keysUnder(scope).length;
      const r = await this.#etcd.changesSince(scope, after, target, exact);
      if (r.modRevisions.length === 0 && r.count === cached) {
        if (!exact) this.#noteProof(scope, target);
        return;
      }
      let needed = after + 1;
      for (const m of r.modRevisions) if (m <= target && m > needed) needed = m;
      await this.#eventsReach(needed, Math.min(left, 100));
    }
  }

  /**
   * Remembers that nothing under `scope` changed between the revision the cache had applied and
   * `target` (a continuation at or below `target` then needs no new proof). Bounded: scopes are
   * namespaces a client listed.
   */
  #noteProof(scope: string, target: number): void {
    if ((this.#provenTo.get(scope) ?? 0) >= target) return;
    if (this.#provenTo.size >= 1024) this.#provenTo.clear();
    this.#provenTo.set(scope, target);
  }

  // --- Store: writes go to etcd --------------------------------------------------------------

  async create(key: string, obj: StoredObject, opts?: CreateOptions): Promise<StoredObject> {
    const out = await this.#etcd.create(key, obj, opts);
    this.#noteWritten(key, out);
    return out;
  }

  /**
   * Starts from the cached copy when there is one (kube's cacher does the same), as its stored
   * bytes: the store decodes them once for the update (decoding the cached copy and encoding it
   * again for the store to decode was twice the work).
   */
  async guaranteedUpdate(key: string, tryUpdate: UpdateFunc, opts: UpdateOptions = {}): Promise<StoredObject> {
    const suggestedState = this.#suggestedState(key, opts);
    const out = await this.#etcd.guaranteedUpdate(key, tryUpdate, suggestedState ? { ...opts, suggestedState } : opts);
    this.#noteWritten(key, out);
    return out;
  }

  /**
   * What this process wrote at `key` (the object a write returned) is served as bytes without the
   * check of its text (see CachedObject.provenPlain) when the cache's version of `key` has that
   * revision and the same text: now, when the write's event came first, or when it comes.
   */
  #noteWritten(key: string, out: StoredObject): void {
    const w = writtenStored(out);
    if (!w || !w.roundTrips || w.apiVersion !== this.#apiVersion || w.kind !== this.#kind) return;
    const cached = this.#objects.get(key);
    if (cached && cached.rev >= w.revision) {
      if (cached.rev === w.revision && cached.text === w.text && cached.provenPlain(w.typeCut)) this.#stats.provenByWrite++;
      return;
    }
    // Bounded: an entry waits only for its event, which comes unless the feed is lost.
    if (this.#written.size >= MAX_WRITTEN) this.#written.clear();
    this.#written.set(key, { revision: w.revision, text: w.text, cut: w.typeCut });
  }

  delete(key: string, opts: DeleteOptions = {}): Promise<StoredObject> {
    const suggestedState = this.#suggestedState(key, opts);
    return this.#etcd.delete(key, suggestedState ? { ...opts, suggestedState } : opts);
  }

  /** The cached copy of `key` as stored, unless the caller suggests its own. */
  #suggestedState(key: string, opts: UpdateOptions | DeleteOptions): StoredState | undefined {
    if (!this.#ready || opts.suggestion || opts.suggestedState) return undefined;
    const c = this.#objects.get(key);
    if (!c) return undefined;
    // Older than the version the caller read: the key changed since, and the cache has yet to see
    // it (e.g. a controller's back-to-back writes of one object). etcd's state is read instead.
    if ('knownRevision' in opts && opts.knownRevision !== undefined && c.rev < opts.knownRevision) {
      this.#stats.staleSuggestionsSkipped++;
      return undefined;
    }
    return { data: c.text, modRevision: c.rev };
  }

  currentRevision(): Promise<number> {
    return this.#etcd.currentRevision();
  }

  compact(revision: number): Promise<void> {
    return this.#etcd.compact(revision);
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#ready = false;
    this.#feed?.cancel();
    this.#watchers.endAll();
  }

  // --- Store: reads ---------------------------------------------------------------------------

  async get(key: string, opts: GetOptions = {}): Promise<StoredObject> {
    const r = await this.#getEntry(key, opts);
    return r instanceof CachedObject ? r.object() : r;
  }

  /**
   * A get answered as bytes where it can be: the object's JSON (resourceVersion included) when the
   * cache serves the read and the stored JSON is what JSON.stringify of the object writes with the
   * cache's apiVersion and kind; otherwise the object, as get() returns it.
   */
  async getJson(key: string, opts: GetOptions = {}, readDefaults?: ReadDefaults): Promise<string | StoredObject> {
    const r = await this.#getEntry(key, opts);
    if (!(r instanceof CachedObject)) return r;
    const json = r.json(this.#apiVersion, this.#kind, readDefaults);
    if (json === undefined) return r.object();
    this.#stats.bytesResponses++;
    return json;
  }

  async #getEntry(key: string, opts: GetOptions): Promise<CachedObject | StoredObject> {
    if (!this.#ready || !key.startsWith(this.#prefix)) return this.#etcd.get(key, opts);
    const rv = opts.resourceVersion ?? '';
    if (rv === '') {
      if (!this.#consistentFromCache) {
        this.#stats.consistentReadsFromEtcd++;
        return this.#etcd.get(key, opts);
      }
      return this.#latest(key);
    } else if (rv !== '0') {
      await this.#waitUntil(parseResourceVersion(rv), key);
    }
    const obj = this.#objects.get(key);
    if (!obj) throw new StorageError('NotFound', key, `key not found: ${key}`);
    return obj;
  }

  /**
   * A consistent get: the key's current state read from etcd (batched with concurrent reads);
   * the cache's own entry when it holds that very version (no decode, its JSON already checked).
   */
  async #latest(key: string): Promise<CachedObject> {
    // The current version first (no value: the cache usually holds it), the value only if not.
    const current = await this.#etcd.latest(key, true);
    if (!current) throw new StorageError('NotFound', key, `key not found: ${key}`);
    let cached = this.#objects.get(key);
    // A write this cache has yet to see (its event is on the way): wait for it briefly.
    if (cached?.rev !== current.modRevision && this.#rv < current.modRevision) {
      await this.#eventsReach(current.modRevision, 100);
      cached = this.#objects.get(key);
    }
    if (cached?.rev === current.modRevision) {
      this.#stats.consistentReadsFromCache++;
      return cached;
    }
    this.#stats.consistentReadsFallback++;
    const kv = await this.#etcd.latest(key);
    if (!kv) throw new StorageError('NotFound', key, `key not found: ${key}`);
    return CachedObject.fromBuffer(kv.value, kv.modRevision);
  }

  async list(prefix: string, opts: ListOptions = {}): Promise<ListResult> {
    const page = opts.predicate ? undefined : await this.#cachedPage(prefix, opts);
    const partial = opts.metadataOnly === true && !opts.predicate;
    if (page) {
      const { entries, ...meta } = page;
      return { items: entries.map((e) => (partial ? e.partialObject() : e.object())), ...meta, shared: true };
    }
    const r = await this.#listEntries(prefix, opts);
    if (!('entries' in r)) return r;
    const items: StoredObject[] = [];
    const predicate = opts.predicate;
    for (const e of r.entries) {
      if (partial) {
        items.push(e.partialObject());
        continue;
      }
      const obj = e.object();
      if (!predicate || predicate(obj)) items.push(obj);
    }
    return { items, resourceVersion: r.resourceVersion, continue: '', shared: true };
  }

  /**
   * A list answered as bytes where it can be: without a predicate, when the cache serves it and
   * every item's stored JSON is plain (see getJson), each item's JSON without apiVersion and kind
   * (kube's list items carry none) and resourceVersion included; otherwise what list() returns.
   */
  async listJson(prefix: string, opts: ListOptions = {}, readDefaults?: ReadDefaults): Promise<{ itemsJson: string[]; resourceVersion: string; continue?: string; remainingItemCount?: number } | ListResult> {
    if (opts.predicate) return this.list(prefix, opts);
    const page = await this.#cachedPage(prefix, opts);
    if (page) {
      const { entries, ...meta } = page;
      const itemsJson: string[] = new Array<string>(entries.length);
      for (let i = 0; i < entries.length; i++) {
        const j = entries[i]!.itemJson(this.#apiVersion, this.#kind, readDefaults);
        if (j === undefined) return { items: entries.map((e) => e.object()), ...meta, shared: true };
        itemsJson[i] = j;
      }
      this.#stats.bytesResponses++;
      return { itemsJson, ...meta };
    }
    // A list etcd answers (paged, exact) is built from its values' bytes too, each checked once
    // per stored version: by this cache when it holds that version.
    const r = await this.#listEntries(prefix, opts, (p, o) =>
      this.#etcd.listJson(
        p,
        o,
        this.#apiVersion,
        this.#kind,
        (key, rev) => {
          const c = this.#objects.get(key);
          return c?.rev === rev ? c : undefined;
        },
        readDefaults,
      ),
    );
    if (!('entries' in r)) {
      if ('itemsJson' in r) this.#stats.bytesResponses++;
      return r;
    }
    const itemsJson: string[] = new Array<string>(r.entries.length);
    for (let i = 0; i < r.entries.length; i++) {
      const j = r.entries[i]!.itemJson(this.#apiVersion, this.#kind, readDefaults);
      if (j === undefined) return { items: r.entries.map((e) => e.object()), resourceVersion: r.resourceVersion, continue: '', shared: true };
      itemsJson[i] = j;
    }
    this.#stats.bytesResponses++;
    return { itemsJson, resourceVersion: r.resourceVersion };
  }

  async #listEntries<E = ListResult>(
    prefix: string,
    opts: ListOptions,
    fromEtcd: (prefix: string, opts: ListOptions) => Promise<ListResult | E> = (p, o) => this.#etcd.list(p, o),
  ): Promise<ListResult | E | { entries: CachedObject[]; resourceVersion: string }> {
    if (!prefix.endsWith('/')) prefix += '/';
    const rv = opts.resourceVersion ?? '';
    // kube's shouldDelegateList: continuations, exact reads and limited reads at a version need
    // etcd's snapshot; everything else is served from memory.
    const delegate = !this.#ready || !prefix.startsWith(this.#prefix) || !!opts.continue || opts.resourceVersionMatch === 'Exact' || (!!opts.limit && rv !== '0');
    if (delegate) return fromEtcd(prefix, opts);
    if (rv === '') {
      if (!this.#consistentFromCache) {
        this.#stats.consistentReadsFromEtcd++;
        return fromEtcd(prefix, opts);
      }
      if (!(await this.#waitConsistent(prefix, false))) return fromEtcd(prefix, opts);
    } else if (rv !== '0') {
      await this.#waitUntil(parseResourceVersion(rv), prefix);
    }
    const keys = this.#keysUnder(prefix);
    const entries = new Array<CachedObject>(keys.length);
    for (let i = 0; i < keys.length; i++) entries[i] = this.#objects.get(keys[i]!)!;
    return { entries, resourceVersion: String(this.#rv) };
  }

  /**
   * One page of a limited list (no selector) from memory, where it is exactly the page etcd would
   * give. The first page of a consistent list (resourceVersion unset): once the cache provably
   * shows etcd's current state of the prefix, read at that revision. A continuation at revision R:
   * when the cache's state of the prefix is its state at R, either because the cache has applied
   * R and no event under the prefix came after it (etcd must still have R: a one-key read at it),
   * or because etcd shows nothing under the prefix changed between what the cache applied and R
   * (a read at R). A compacted R goes to etcd's path, which answers kube's 410. The continue
   * tokens and remainingItemCount are etcd's, so either path serves the next page. kube 1.24 sends
   * these to etcd; kube 1.33 serves them from its cache's snapshots. Undefined: read etcd.
   */
  async #cachedPage(prefix: string, opts: ListOptions): Promise<{ entries: CachedObject[]; resourceVersion: string; continue: string; remainingItemCount?: number } | undefined> {
    const limit = opts.limit ?? 0;
    if (limit <= 0 || !this.#ready || !this.#consistentFromCache || opts.resourceVersionMatch === 'Exact') return undefined;
    if (!prefix.endsWith('/')) prefix += '/';
    if (!prefix.startsWith(this.#prefix)) return undefined;
    let at: number;
    let start = prefix;
    if (opts.continue) {
      let decoded: { rv: number; startKey: string };
      try {
        decoded = decodeContinue(opts.continue, prefix);
      } catch {
        return undefined; // etcd's path words the error
      }
      // Keys compare as etcd's bytes only in ASCII (names are).
      if (decoded.rv <= 0 || !/^[\x00-\x7f]*$/.test(decoded.startKey)) return undefined;
      at = decoded.rv;
      start = decoded.startKey;
      const applied = this.#rv;
      if (at <= applied) {
        if (!this.#unchangedSince(prefix, at) || !(await this.#etcd.revisionAvailable(at, prefix))) return undefined;
      } else if ((this.#provenTo.get(prefix) ?? 0) >= at) {
        // Proven unchanged from what the cache applied up to `at` (and no event under it since:
        // checked below); etcd must still have `at`.
        if (!(await this.#etcd.revisionAvailable(at, prefix))) return undefined;
      } else {
        // Ask etcd (a read at `at`: compacted or not reached yet, it fails and etcd's path answers).
        const cachedCount = this.#keysUnder(prefix).length;
        const r = await this.#etcd.changesSince(prefix, applied, at, false, false).catch(() => undefined);
        if (!r || r.modRevisions.length > 0 || r.count !== cachedCount) return undefined;
        this.#noteProof(prefix, at);
      }
      // The cache may have moved while etcd answered.
      if (!this.#ready || !this.#unchangedSince(prefix, Math.min(at, applied))) return undefined;
      this.#stats.consistentReadsFromCache++;
    } else {
      // resourceVersion=0 lists the whole cache (kube ignores the limit there); N reads etcd's snapshot.
      if ((opts.resourceVersion ?? '') !== '') return undefined;
      const proven = await this.#waitConsistent(prefix, false);
      if (!proven) return undefined;
      // The prefix as of the proven revision, or of a later one the cache has applied since.
      at = Math.max(proven, this.#rv);
    }
    // Synchronous from here: the page is one state of the cache.
    const keys = this.#keysUnder(prefix);
    const end = keys.length;
    const first = lowerBound(keys, start);
    const stop = Math.min(end, first + limit);
    const entries = new Array<CachedObject>(Math.max(0, stop - first));
    for (let i = first; i < stop; i++) entries[i - first] = this.#objects.get(keys[i]!)!;
    const out: { entries: CachedObject[]; resourceVersion: string; continue: string; remainingItemCount?: number } = { entries, resourceVersion: String(at), continue: '' };
    if (stop < end) {
      out.continue = encodeContinue(`${keys[stop - 1]!}\u0000`, prefix, at);
      if (!opts.hasSelector) out.remainingItemCount = end - stop;
    }
    return out;
  }

  /**
   * Whether the cache's state under `prefix` is its state at revision `at`: the cache has reached
   * `at`, its history covers everything after it, and no event after it touched the prefix.
   */
  #unchangedSince(prefix: string, at: number): boolean {
    if (at > this.#rv || at < this.#floor) return false;
    for (let i = this.#history.length - 1; i >= this.#historyHead; i--) {
      const e = this.#history[i]!;
      if (e.rev <= at) break;
      if (e.key.startsWith(prefix)) return false;
    }
    return true;
  }

  /**
   * Keys under a prefix, in etcd's (byte) order. Shared arrays, changed in place as keys come and
   * go: callers must neither change them nor hold them across an await.
   */
  #keysUnder(prefix: string): string[] {
    if (prefix === this.#prefix) return (this.#sortedKeys ??= [...this.#objects.keys()].sort(compareKeys));
    let keys = this.#scopeKeys.get(prefix);
    if (keys) return sortScope(keys, this.#unsortedScopes);
    if (this.#sortedKeys) {
      const all = this.#sortedKeys;
      const from = lowerBound(all, prefix);
      let to = from;
      while (to < all.length && all[to]!.startsWith(prefix)) to++;
      keys = all.slice(from, to);
    } else {
      // One pass over the keys and a sort of the few under the prefix, not a sort of them all.
      keys = [];
      for (const k of this.#objects.keys()) if (k.startsWith(prefix)) keys.push(k);
      keys.sort(compareKeys);
    }
    // Only a prefix ending in '/' is kept up to date by #keysChanged.
    if (!prefix.endsWith('/')) return keys;
    if (this.#scopeKeys.size >= 1024) this.#scopeKeys.clear();
    this.#scopeKeys.set(prefix, keys);
    return keys;
  }

  async watch(keyOrPrefix: string, opts: WatchOptions = {}): Promise<Watcher> {
    if (!this.#ready || !keyOrPrefix.startsWith(this.#prefix)) return this.#etcd.watch(keyOrPrefix, opts);
    const rvText = opts.resourceVersion ?? '';
    const requested = parseResourceVersion(rvText);
    if (rvText === '') {
      if (!(await this.#waitConsistent(keyOrPrefix, !!opts.exactKey))) return this.#etcd.watch(keyOrPrefix, opts);
    } else if (requested > 0) {
      await this.#waitUntil(requested, keyOrPrefix);
      // Older than the history we hold: etcd still may have it (or answers 410 if compacted).
      if (requested < this.#floor) return this.#etcd.watch(keyOrPrefix, opts);
    }
    // From here to registration nothing awaits, so no event can slip between replay and live.
    // What came before (the objects as of now, or the history after the requested version) is
    // captured as an array of references and turned into events as the client reads them.
    let initial: LazyEvents<CachedObject> | LazyEvents<CacheEvent>;
    if (requested === 0) {
      const keys = opts.exactKey ? (this.#objects.has(keyOrPrefix) ? [keyOrPrefix] : []) : this.#keysUnder(keyOrPrefix);
      const objs = keys.map((k) => this.#objects.get(k)!);
      const added = this.#openInitialStream();
      const predicate = opts.predicate;
      initial = new LazyEvents(objs, (c) => (!predicate || predicate(c.object()) ? added(c) : undefined), () => this.#closeInitialStream());
    } else {
      const replay = this.#history.slice(this.#firstHistoryAfter(requested));
      initial = new LazyEvents(replay, (ce) => w.translate(ce));
    }
    const w: CacheWatcher = new CacheWatcher({
      key: keyOrPrefix,
      exact: !!opts.exactKey,
      ...(opts.predicate ? { predicate: opts.predicate } : {}),
      bookmarks: !!opts.bookmarks,
      startRv: requested > 0 ? requested : this.#rv,
      limits: this.#etcd.watcherLimits,
      onStop: () => this.#watchers.delete(w),
      initial,
    });
    this.#watchers.add(w, opts.indexValue);
    return w.queue;
  }

  /** Starts an initial-event stream; returns the shared ADDED event of an object version. */
  #openInitialStream(): (obj: CachedObject) => ObjectEvent {
    this.#initialStreams++;
    const memo = (this.#addedEvents ??= new WeakMap());
    return (c) => {
      let e = memo.get(c);
      if (!e) memo.set(c, (e = objectEvent('ADDED', c)));
      return e;
    };
  }

  #closeInitialStream(): void {
    if (--this.#initialStreams === 0) this.#addedEvents = undefined;
  }

  #firstHistoryAfter(rev: number): number {
    let lo = this.#historyHead;
    let hi = this.#history.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.#history[mid]!.rev <= rev) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Sends a BOOKMARK to each watcher that asked for them and is behind the cache's revision. */
  sendBookmarks(): void {
    const rv = this.#rv;
    for (const w of this.#watchers) {
      if (!w.bookmarks || w.lastRv >= rv) continue;
      w.lastRv = rv;
      w.queue.push({ type: 'BOOKMARK', object: { apiVersion: this.#apiVersion, kind: this.#kind, metadata: { resourceVersion: String(rv) } } });
    }
  }

  hasBookmarkWatchers(): boolean {
    for (const w of this.#watchers) if (w.bookmarks) return true;
    return false;
  }
}

/**
 * A watch event whose object is decoded when read: the history keeps only the stored text, and
 * readers holding the decoded object share it (CachedObject remembers it weakly).
 */
function objectEvent(type: ObjectEvent['type'], c: CachedObject, size?: number, key?: string): ObjectEvent {
  return {
    type,
    ...(key === undefined ? {} : { key }),
    get object(): StoredObject {
      return c.object();
    },
    partialObject: () => c.partialObject(),
    storedJson: () => c.text,
    ...(size === undefined ? {} : { size }),
  };
}

/** A change as the cache saw it, its objects decoded only when read. */
function cacheEvent(key: string, rev: number, cur: CachedObject, prev: CachedObject | undefined, type: 'ADDED' | 'MODIFIED' | 'DELETED', size: number | undefined): CacheEvent {
  return {
    key,
    rev,
    get obj(): StoredObject {
      return cur.object();
    },
    get prev(): StoredObject | undefined {
      return prev?.object();
    },
    natural: objectEvent(type, cur, size, key),
    cached: cur,
  };
}

/**
 * A scope's key list sorted in place if keys were appended out of order, duplicates dropped (a key
 * appended twice); the list itself.
 */
function sortScope(keys: string[], unsorted: WeakSet<string[]>): string[] {
  if (!unsorted.has(keys)) return keys;
  unsorted.delete(keys);
  keys.sort(compareKeys);
  let n = 0;
  for (let i = 0; i < keys.length; i++) if (n === 0 || keys[i] !== keys[n - 1]) keys[n++] = keys[i]!;
  keys.length = n;
  return keys;
}

/** Index of the first key not below `key` in sorted `keys`. */
function lowerBound(keys: string[], key: string): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareKeys(keys[mid]!, key) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function compareKeys(a: string, b: string): number {
  // etcd orders keys by bytes; for the ASCII keys of names this is code-unit order.
  return a < b ? -1 : a > b ? 1 : 0;
}
