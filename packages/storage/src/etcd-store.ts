/**
 * The etcd-backed `Store`. resourceVersion is etcd's mod_revision; creates are a txn on
 * create_revision == 0, updates and deletes compare mod_revision; lists read one revision across
 * pages; watches run on one shared raw watch stream.
 */
import type { Etcd3, IRangeResponse } from 'etcd3';
import { cloneJson, stringifyJson, type StoredObject } from '@plinth/api';
import type {
  CreateOptions,
  DeleteOptions,
  GetOptions,
  ListOptions,
  ListResult,
  Preconditions,
  Store,
  StoredState,
  UpdateFunc,
  UpdateOptions,
  WatchOptions,
  Watcher,
  EtcdOperation,
  EtcdRequestObserver,
} from './interface.js';
import { StorageError, isEtcdFutureRevError, isEtcdTooLargeError } from './errors.js';
import { prefixEnd } from './keys.js';
import { WatchMux, type RawWatch, type RawWatchHandlers } from './watch-mux.js';
import { decodeObject, encodeForWrite, sameContent, writtenObject } from './object-codec.js';
import { CachedObject, type ReadDefaults } from './cached-object.js';
import { DEFAULT_WATCHER_LIMITS, QueueWatcher, type WatcherLimits } from './watcher.js';
import { parseResourceVersion } from './resource-version.js';
import { forceCompaction } from './compactor.js';
import { LeaseManager, type LeaseManagerOptions } from './lease-manager.js';
import type { FastKV } from './fast-kv.js';
import { createEtcdTransport, isCutCall, type EtcdTransport } from './etcd-transport.js';
import { QuorumReads, TOO_LARGE_WAIT_MS } from './etcd-quorum-reads.js';
import { EtcdInitialEvents, translateEvent } from './etcd-watch-events.js';
import { GuardedWrite } from './guarded-write.js';
import { ListReader } from './etcd-list-reader.js';
import { observeSince } from './etcd-instrumentation.js';

export { decodeObject, encodeObject, writtenJson } from './object-codec.js';
export { isCutCall, isUnsentCall } from './etcd-transport.js';
export { TOO_LARGE_WAIT_MS } from './etcd-quorum-reads.js';

export interface EtcdStoreOptions {
  /** Client URLs, e.g. `http://127.0.0.1:2379`. */
  endpoints: string[];
  /** How far a watcher's consumer may fall behind live events before it is dropped. */
  watcherLimits?: Partial<WatcherLimits>;
  /** Deadline of each etcd request (ms), default 10 s. */
  requestTimeoutMs?: number;
  /**
   * etcd's `--max-request-bytes` (etcd's default: 1.5 MiB). A write that would not fit is refused
   * before it is sent: an oversized request must cost nothing but its own 413.
   */
  maxRequestBytes?: number;
  /** Target bytes of one page when a range is read (lists, cache fills, initial watch events). */
  pageBytes?: number;
  /** How leases of writes with a TTL are reused (kube's defaults otherwise). */
  leases?: LeaseManagerOptions;
  /** Told of each create, get, list, update and delete and its latency (metrics). */
  observer?: EtcdRequestObserver;
  /** Client TLS: the CA that signed etcd's serving certificates, and a client certificate (PEM). */
  tls?: { ca: Buffer; cert?: Buffer; key?: Buffer };
  /** etcd user and password, for an etcd with auth enabled (every call carries etcd's token). */
  auth?: { username: string; password: string };
  /** The hot path's HTTP/2 keepalive (default: kube's etcd client, 30 s / 10 s). */
  keepalive?: { timeMs: number; timeoutMs: number };
}

/** A list as its items' JSON (without apiVersion/kind), with the list metadata. */
export interface ListJson {
  itemsJson: string[];
  resourceVersion: string;
  continue: string;
  remainingItemCount?: number;
}

/** Stored bytes and mod revision of a key as read from etcd. */
type RawState = StoredState;

/** etcd's default `--max-request-bytes`. */
export const ETCD_MAX_REQUEST_BYTES = 1.5 * 1024 * 1024;
/** A txn's bytes besides the value and its three copies of the key (compare, put, failure range). */
const TXN_OVERHEAD_BYTES = 256;
/** Initial watch events come from etcd a page at a time: a smaller page bounds a stalled watcher. */
const WATCH_PAGE_BYTES = 1024 * 1024;

/** Attempts of a write whose earlier attempt was cut (see `EtcdStore.#write`). */
const CUT_WRITE_ATTEMPTS = 3;

export class EtcdStore implements Store {
  readonly #transport: EtcdTransport;
  readonly #client: Etcd3;
  /** Range and Txn without grpc-js's call stack (see fast-kv.ts); etcd3 serves what they cannot. */
  readonly #readKv: FastKV;
  readonly #writeKv: FastKV;
  readonly #writeTimeoutMs: number;
  /** Client watches served straight from etcd (watch cache off, or resumes older than the cache). */
  readonly #mux: WatchMux;
  /** The watch caches' feeds; kept apart so a catching-up client watch never delays their progress. */
  readonly #feedMux: WatchMux;
  readonly #watcherLimits: WatcherLimits;
  readonly #maxRequestBytes: number;
  readonly #lists: ListReader;
  readonly #leases: LeaseManager;
  readonly #quorum: QuorumReads;
  readonly #observer: EtcdRequestObserver | undefined;

  constructor(opts: EtcdStoreOptions) {
    if (opts.endpoints.length === 0) throw new Error('etcd store: at least one endpoint is required');
    const timeout = opts.requestTimeoutMs ?? 10_000;
    this.#transport = createEtcdTransport({ endpoints: opts.endpoints, timeoutMs: timeout, tls: opts.tls, auth: opts.auth, keepalive: opts.keepalive });
    this.#client = this.#transport.client;
    this.#readKv = this.#transport.readKv;
    this.#writeKv = this.#transport.writeKv;
    this.#writeTimeoutMs = timeout;
    this.#mux = new WatchMux(this.#client);
    this.#feedMux = new WatchMux(this.#client);
    this.#watcherLimits = { ...DEFAULT_WATCHER_LIMITS, ...opts.watcherLimits };
    this.#maxRequestBytes = opts.maxRequestBytes ?? ETCD_MAX_REQUEST_BYTES;
    this.#leases = new LeaseManager(async (ttl) => (await this.#client.leaseClient.leaseGrant({ TTL: ttl })).ID, opts.leases);
    this.#observer = opts.observer;
    this.#quorum = new QuorumReads(this.#readKv, opts.observer);
    this.#lists = new ListReader({ range: (req) => this.#range(req), quorum: this.#quorum, pageBytes: opts.pageBytes });
  }

  /** etcd's answers are decoded: the stored bytes are served by the watch cache (Cacher). */
  readonly cachedBytes = undefined;

  #observe(operation: EtcdOperation, key: string, t0: number): void {
    observeSince(this.#observer!, operation, key, t0);
  }

  /**
   * The key's current value (empty with `keysOnly`) and mod_revision (undefined: no such key): a
   * linearizable read, batched with concurrent ones (see QuorumReads).
   */
  latest(key: string, keysOnly = false): Promise<{ value: Buffer; modRevision: number } | undefined> {
    return this.#quorum.latest(key, keysOnly);
  }

  /** etcd's current revision, read after this call began (see QuorumReads). */
  freshRevision(): Promise<number> {
    return this.#quorum.freshRevision();
  }

  currentRevision(): Promise<number> {
    return this.#quorum.currentRevision();
  }

  /** Resolves once etcd has reached `minRv`; ResourceVersionTooLarge after about 3 s (see QuorumReads). */
  waitForRevision(minRv: number, key: string, timeoutMs = TOO_LARGE_WAIT_MS): Promise<void> {
    return this.#quorum.waitForRevision(minRv, key, timeoutMs);
  }

  /** The etcd client itself, for the compactor (which needs a compare on a key's version). */
  get client(): Etcd3 {
    return this.#client;
  }

  /** etcd watches currently open (client watches plus watch-cache feeds). */
  get activeEtcdWatches(): number {
    return this.#mux.activeWatches + this.#feedMux.activeWatches;
  }

  /** How far a watcher may fall behind before it is dropped (the watch caches use the same). */
  get watcherLimits(): WatcherLimits {
    return this.#watcherLimits;
  }

  /**
   * Reads every object under `prefix` at one revision, in pages bounded in bytes (a watch cache's
   * initial state). Returns [key, object] pairs in key order and the revision read at.
   */
  async snapshot(prefix: string): Promise<{ entries: Array<[string, CachedObject]>; revision: number }> {
    const pager = this.#lists.pager(Buffer.from(prefix), prefixEnd(Buffer.from(prefix)), 0);
    const entries: Array<[string, CachedObject]> = [];
    do {
      const page = await pager.next();
      // Held as stored text, decoded only when a reader needs the object.
      for (const kv of page.kvs) entries.push([kv.key.toString(), CachedObject.fromBuffer(kv.value, Number(kv.mod_revision))]);
    } while (pager.more);
    return { entries, revision: pager.revision };
  }

  /**
   * A raw etcd watch on the feed stream, from `startRevision` (watch caches use it). Its events
   * carry no `prev_kv`: a feed's reader keeps the previous states itself.
   */
  watchFeed(keyOrPrefix: string, exactKey: boolean, startRevision: number, handlers: RawWatchHandlers): Promise<RawWatch> {
    const key = Buffer.from(keyOrPrefix);
    return this.#feedMux.watch(key, exactKey ? undefined : prefixEnd(key), startRevision, handlers, false);
  }

  get #kv(): FastKV {
    return this.#readKv;
  }

  async create(key: string, obj: StoredObject, opts: CreateOptions = {}): Promise<StoredObject> {
    if (!this.#observer) return this.#create(key, obj, opts);
    const t0 = performance.now();
    try {
      return await this.#create(key, obj, opts);
    } finally {
      this.#observe('create', key, t0);
    }
  }

  async #create(key: string, obj: StoredObject, opts: CreateOptions = {}): Promise<StoredObject> {
    const { data, text, metaEnd, typeCut, roundTrips } = encodeForWrite(obj);
    const k = Buffer.from(key);
    this.#checkSize(k, data);
    if (opts.dryRun) {
      const existing = await this.#rangeOne(k, 0);
      if (existing) throw new StorageError('KeyExists', key, `key exists: ${key}`);
      return decodeObject(data, 0);
    }
    const lease = await this.#lease(opts.ttlSeconds);
    const guard = opts.guardKey ? new GuardedWrite(opts.guardKey) : undefined;
    for (;;) {
      const { res, cut } = await this.#write(k, data, {
        compare: [{ key: k, target: 'Create', result: 'Equal', create_revision: 0 }, ...(guard ? [guard.compare()] : [])],
        success: [{ request_put: { key: k, value: data, ...lease } }],
        failure: [{ request_range: { key: k } }, ...(guard ? [guard.range()] : [])],
      });
      if (res.succeeded) return writtenObject(obj, Number(res.header.revision), text, metaEnd, typeCut, roundTrips);
      // After a cut attempt, a key holding exactly these bytes (a new uid and timestamp among
      // them) is this create, applied by the cut attempt.
      const kv = res.responses[0]?.response_range?.kvs[0];
      if (cut && kv?.value.equals(data)) return writtenObject(obj, Number(kv.mod_revision), text, metaEnd, typeCut, roundTrips);
      if (kv || !guard) throw new StorageError('KeyExists', key, `key exists: ${key}`);
      // The key is free: the guard key moved. Its recheck refuses, or the create goes again.
      await guard.moved(res.responses[1]?.response_range?.kvs[0]);
    }
  }

  async get(key: string, opts: GetOptions = {}): Promise<StoredObject> {
    if (!this.#observer) return this.#get(key, opts);
    const t0 = performance.now();
    try {
      return await this.#get(key, opts);
    } finally {
      this.#observe('get', key, t0);
    }
  }

  async #get(key: string, opts: GetOptions = {}): Promise<StoredObject> {
    const minRv = parseResourceVersion(opts.resourceVersion);
    if (minRv > 0) await this.waitForRevision(minRv, key);
    const res = await this.#range({ key: Buffer.from(key), serializable: opts.resourceVersion === '0' });
    const kv = res.kvs[0];
    if (!kv) throw new StorageError('NotFound', key, `key not found: ${key}`);
    return decodeObject(kv.value, Number(kv.mod_revision));
  }

  async list(prefix: string, opts: ListOptions = {}): Promise<ListResult> {
    if (!this.#observer) return this.#list(prefix, opts);
    const t0 = performance.now();
    try {
      return await this.#list(prefix, opts);
    } finally {
      this.#observe('list', prefix, t0);
    }
  }

  async #list(prefix: string, opts: ListOptions = {}): Promise<ListResult> {
    const items: StoredObject[] = [];
    const predicate = opts.predicate;
    if (opts.metadataOnly && !predicate) {
      // Metadata readers: each item decoded as far as its metadata (see CachedObject.partialObject).
      const page = await this.#lists.page(prefix, opts, (kv) => items.push(CachedObject.fromBuffer(kv.value, Number(kv.mod_revision)).partialObject()));
      return { items, ...page };
    }
    const page = await this.#lists.page(prefix, opts, (kv) => {
      const obj = decodeObject(kv.value, Number(kv.mod_revision));
      if (predicate && !predicate(obj)) return 0;
      return items.push(obj);
    });
    return { items, ...page };
  }

  /**
   * list() without a predicate, as the items' JSON: each item's stored text with its
   * resourceVersion injected and without apiVersion/kind, when that is byte for byte what encoding
   * the decoded item would write (CachedObject's check; `known` gives the watch cache's entry for
   * a key at a revision, whose check is already done). An item that fails it is decoded and
   * encoded as the general path does. The items' JSON joined with ',' is then exactly the
   * `items` of the list object JSON.stringify writes.
   */
  async listJson(
    prefix: string,
    opts: ListOptions,
    apiVersion: string,
    kind: string,
    known?: (key: string, rev: number) => CachedObject | undefined,
    readDefaults?: ReadDefaults,
  ): Promise<ListJson> {
    if (opts.predicate) throw new Error('etcd store: listJson takes no predicate');
    const itemsJson: string[] = [];
    const page = await this.#lists.page(prefix, opts, (kv) => {
      const rev = Number(kv.mod_revision);
      const o = known?.(kv.key.toString(), rev) ?? CachedObject.fromBuffer(kv.value, rev);
      const json = o.itemJson(apiVersion, kind, readDefaults);
      if (json !== undefined) return itemsJson.push(json);
      const { apiVersion: _v, kind: _k, ...item } = readDefaults ? readDefaults(o.object()) : o.object();
      return itemsJson.push(stringifyJson(item));
    });
    return { itemsJson, ...page };
  }

  async guaranteedUpdate(key: string, tryUpdate: UpdateFunc, opts: UpdateOptions = {}): Promise<StoredObject> {
    if (!this.#observer) return this.#guaranteedUpdate(key, tryUpdate, opts);
    const t0 = performance.now();
    try {
      return await this.#guaranteedUpdate(key, tryUpdate, opts);
    } finally {
      this.#observe('update', key, t0);
    }
  }

  async #guaranteedUpdate(key: string, tryUpdate: UpdateFunc, opts: UpdateOptions = {}): Promise<StoredObject> {
    const k = Buffer.from(key);
    const guard = opts.guardKey && opts.ignoreNotFound ? new GuardedWrite(opts.guardKey) : undefined;
    // A suggested current state (the watch cache's copy) saves the read. It may be stale: a txn
    // on it fails and answers with the real state; anything else it makes us conclude (no change,
    // a failed precondition or tryUpdate) is re-checked against etcd first, as kube does.
    let fromSuggestion = !!(opts.suggestedState ?? opts.suggestion);
    // A suggested object is copied for the first attempt rather than encoded and decoded back;
    // its state's bytes stay empty (the unchanged check then compares content).
    let guess = opts.suggestedState ? undefined : opts.suggestion;
    let state: RawState | undefined = opts.suggestedState ?? (guess ? { data: '', modRevision: Number(guess.metadata.resourceVersion) } : await this.#rangeOne(k, 0));
    const refresh = async (): Promise<void> => {
      fromSuggestion = false;
      state = await this.#rangeOne(k, 0);
    };
    for (;;) {
      let next: StoredObject;
      let current: StoredObject | undefined;
      try {
        if (!state && !opts.ignoreNotFound) throw new StorageError('NotFound', key, `key not found: ${key}`);
        current = guess ? (opts.shareSuggestion ? guess : cloneJson(guess)) : state ? decodeObject(state.data, state.modRevision) : undefined;
        guess = undefined;
        if (current) checkPreconditions(key, current, opts.preconditions);
        next = await tryUpdate(current);
      } catch (e) {
        if (!fromSuggestion) throw e;
        await refresh();
        continue;
      }
      const { data, text, stored, metaEnd, typeCut, roundTrips } = encodeForWrite(next);
      this.#checkSize(k, data);
      // "Unchanged" is by content, not bytes: key order may differ (kube's typed encoding fixes it).
      if (state && current && ((typeof state.data === 'string' ? text === state.data : data.equals(state.data)) || sameContent(next, current))) {
        if (fromSuggestion) {
          await refresh();
          continue;
        }
        // Nothing changed: kube skips the write and answers with the current object.
        return current!;
      }
      if (opts.dryRun) {
        if (fromSuggestion) {
          await refresh();
          continue;
        }
        return decodeObject(data, state?.modRevision ?? 0);
      }
      const lease = await this.#lease(opts.ttlSeconds);
      // A write that creates the key holds the guard key too.
      const guarded = !state && guard ? guard : undefined;
      const { res, cut } = await this.#write(k, data, {
        compare: [
          state
            ? { key: k, target: 'Mod', result: 'Equal', mod_revision: state.modRevision }
            : { key: k, target: 'Create', result: 'Equal', create_revision: 0 },
          ...(guarded ? [guarded.compare()] : []),
        ],
        success: [{ request_put: { key: k, value: data, ...lease } }],
        failure: [{ request_range: { key: k } }, ...(guarded ? [guarded.range()] : [])],
      });
      // The object answered is the one stored, its resourceVersion added (last in metadata, as
      // reads from the watch cache's bytes have it).
      if (res.succeeded) return writtenObject(stored, Number(res.header.revision), text, metaEnd, typeCut, roundTrips);
      const kv = res.responses[0]?.response_range?.kvs[0];
      // After a cut attempt, the key holding exactly these bytes is this update, applied by it.
      if (cut && kv?.value.equals(data)) return writtenObject(stored, Number(kv.mod_revision), text, metaEnd, typeCut, roundTrips);
      if (guarded && !kv) await guarded.moved(res.responses[1]?.response_range?.kvs[0]);
      state = kv ? { data: kv.value, modRevision: Number(kv.mod_revision) } : undefined;
      fromSuggestion = false;
    }
  }

  async delete(key: string, opts: DeleteOptions = {}): Promise<StoredObject> {
    if (!this.#observer) return this.#delete(key, opts);
    const t0 = performance.now();
    try {
      return await this.#delete(key, opts);
    } finally {
      this.#observe('delete', key, t0);
    }
  }

  async #delete(key: string, opts: DeleteOptions = {}): Promise<StoredObject> {
    const k = Buffer.from(key);
    let fromSuggestion = !!(opts.suggestedState ?? opts.suggestion);
    // A suggested object (e.g. what the delete's graceful update just wrote) is copied for the
    // first attempt rather than encoded to bytes and decoded back (the same object, 10x dearer).
    let guess = opts.suggestedState ? undefined : opts.suggestion;
    let state: RawState | undefined = opts.suggestedState ?? (guess ? { data: '', modRevision: Number(guess.metadata.resourceVersion) } : await this.#rangeOne(k, 0));
    for (;;) {
      let current: StoredObject;
      try {
        if (!state) throw new StorageError('NotFound', key, `key not found: ${key}`);
        current = guess ? (opts.shareSuggestion ? guess : cloneJson(guess)) : decodeObject(state.data, state.modRevision);
        guess = undefined;
        checkPreconditions(key, current, opts.preconditions);
        if (opts.validateDeletion) await opts.validateDeletion(current);
      } catch (e) {
        if (!fromSuggestion) throw e;
        fromSuggestion = false;
        state = await this.#rangeOne(k, 0);
        continue;
      }
      if (opts.dryRun) {
        if (fromSuggestion) {
          fromSuggestion = false;
          state = await this.#rangeOne(k, 0);
          continue;
        }
        return current;
      }
      const { res, cut } = await this.#write(k, undefined, {
        compare: [{ key: k, target: 'Mod', result: 'Equal', mod_revision: state!.modRevision }],
        success: [{ request_delete_range: { key: k } }],
        failure: [{ request_range: { key: k } }],
      });
      if (res.succeeded) return current;
      const kv = res.responses[0]?.response_range?.kvs[0];
      // After a cut attempt, a key gone is taken as deleted by it (another client's delete in
      // that instant is the one case told wrong: this one then answers 200 instead of 404).
      if (cut && !kv) return current;
      state = kv ? { data: kv.value, modRevision: Number(kv.mod_revision) } : undefined;
      fromSuggestion = false;
    }
  }

  async watch(keyOrPrefix: string, opts: WatchOptions = {}): Promise<Watcher> {
    const key = Buffer.from(keyOrPrefix);
    const rangeEnd = opts.exactKey ? undefined : prefixEnd(key);
    const requested = parseResourceVersion(opts.resourceVersion);
    const predicate = opts.predicate;
    let initial: EtcdInitialEvents | undefined;
    let startRevision = requested + 1;
    // A version etcd has not reached: wait for it as reads do, then ResourceVersionTooLarge.
    if (requested > 0) await this.waitForRevision(requested, keyOrPrefix);
    if (requested === 0) {
      // Get state and start at most recent: synthetic ADDED events streamed a page at a time
      // from one snapshot as the client reads them (never the whole collection per watcher),
      // then the changes after that snapshot.
      const pager = this.#lists.pager(key, rangeEnd ?? Buffer.concat([key, Buffer.from([0])]), 0, false, WATCH_PAGE_BYTES);
      initial = new EtcdInitialEvents(pager, await pager.next(), keyOrPrefix, predicate);
      startRevision = pager.revision + 1;
    }
    let raw: RawWatch | undefined;
    const watcher = new QueueWatcher(this.#watcherLimits, () => raw?.cancel(), initial);
    raw = await this.#mux.watch(key, rangeEnd, startRevision, {
      onEvents: (events) => {
        for (const ev of events) {
          const out = translateEvent(ev, predicate);
          if (out) watcher.push(out);
        }
      },
      onCancel: ({ compactRevision, message }) => {
        if (compactRevision > 0) {
          const error = new StorageError('Compacted', keyOrPrefix, `too old resource version: ${requested} (${compactRevision})`, { revision: compactRevision });
          watcher.push({ type: 'ERROR', error });
        } else if (!watcher.ended) {
          watcher.push({ type: 'ERROR', error: new StorageError('Internal', keyOrPrefix, message) });
        }
        watcher.end();
      },
    });
    if (watcher.ended) raw.cancel();
    return watcher;
  }

  /** How many keys are under `prefix` (a count-only range; kube's Storage.Count for the object-count metric). */
  async count(prefix: string): Promise<number> {
    const t0 = performance.now();
    try {
      const key = Buffer.from(prefix);
      const res = await this.#range({ key, range_end: prefixEnd(key), count_only: true });
      return Number(res.count);
    } finally {
      if (this.#observer) this.#observe('listWithCount', prefix, t0);
    }
  }

  /** Compacts etcd and records it in compact_rev_key, so every replica's watch caches drop that history. */
  async compact(revision: number): Promise<void> {
    await forceCompaction(this.#client, revision);
  }

  /**
   * Whether etcd can still be read at `revision` (not compacted away): a one-key read at it. Any
   * other failure also answers false (the caller then reads etcd the usual way, which reports it).
   */
  async revisionAvailable(revision: number, key: string): Promise<boolean> {
    try {
      await this.#range({ key: Buffer.from(key), revision, keys_only: true, limit: 1 });
      return true;
    } catch {
      return false;
    }
  }

  /**
   * What changed under `prefix` (or at the one key, `exactKey`) after revision `after`, as of `at`: the mod revisions of
   * the keys modified since (keys only, no values) and how many keys the prefix holds then. A
   * watch cache at `after` holding `count` objects, with nothing modified, provably reflects `at`.
   * (etcd's count is the range's, before the min_mod_revision filter: deletions change it.)
   * This replaces etcd's stream-wide progress request, which etcd 3.4 answers out of band: the
   * answer can overtake events still queued on the stream, so it proves nothing.
   */
  async changesSince(prefix: string, after: number, at: number, exactKey = false, waitForFuture = true): Promise<{ count: number; modRevisions: number[] }> {
    const key = Buffer.from(prefix);
    const range = exactKey ? {} : { range_end: prefixEnd(key) };
    const req = { key, ...range, revision: at, keys_only: true, min_mod_revision: after + 1 };
    // waitForFuture false: a revision etcd has not reached fails at once.
    const res = await (waitForFuture ? this.#range(req) : this.#kv.range(req));
    return { count: Number(res.count), modRevisions: res.kvs.map((kv) => Number(kv.mod_revision)) };
  }

  async close(): Promise<void> {
    this.#mux.close();
    this.#feedMux.close();
    this.#transport.close();
  }

  /** The lease field of a put that lives `ttlSeconds` (none without a TTL). */
  async #lease(ttlSeconds: number | undefined): Promise<{ lease?: string }> {
    if (!ttlSeconds || ttlSeconds <= 0) return {};
    return { lease: await this.#leases.getLease(Math.ceil(ttlSeconds)) };
  }

  async #range(req: Parameters<Etcd3['kv']['range']>[0]): Promise<IRangeResponse> {
    try {
      return await this.#kv.range(req);
    } catch (e) {
      if (isEtcdFutureRevError(e) && req.revision) {
        await this.waitForRevision(Number(req.revision), req.key?.toString() ?? '');
        return this.#kv.range(req);
      }
      throw e;
    }
  }

  /**
   * Refuses a write etcd would refuse (`--max-request-bytes`), before it is sent: an oversized
   * request answered by etcd costs a round trip and used to count as an etcd failure.
   */
  #checkSize(key: Buffer, value: Buffer): void {
    const limit = this.#maxRequestBytes - 3 * key.length - TXN_OVERHEAD_BYTES;
    if (value.length > limit) {
      throw new StorageError('RequestTooLarge', key.toString(), `the object is ${value.length} bytes, more than the ${limit} bytes that can be stored`, {
        requested: value.length,
        limit,
      });
    }
  }

  /**
   * A write txn (a compare on the key's revision, then put or delete). A call cut while a member
   * had it (the member stopped) may or may not have been applied, so it is sent again, as
   * the same compare-and-swap, at most CUT_WRITE_ATTEMPTS times and within the request timeout;
   * `cut` tells the caller that an earlier attempt may have been applied, so a failed compare may
   * be its own write (kube's etcd client does not resend such a write and answers a 500).
   * An etcd configured with a smaller request limit than ours still answers RequestTooLarge.
   */
  async #write(key: Buffer, value: Buffer | undefined, req: Parameters<Etcd3['kv']['txn']>[0]): Promise<{ res: Awaited<ReturnType<Etcd3['kv']['txn']>>; cut: boolean }> {
    const t0 = Date.now();
    let cut = false;
    for (let attempt = 1; ; attempt++) {
      try {
        return { res: await this.#writeKv.txn(req), cut };
      } catch (e) {
        if (value && isEtcdTooLargeError(e)) {
          throw new StorageError('RequestTooLarge', key.toString(), `the object is ${value.length} bytes, more than etcd accepts in one request`, { requested: value.length });
        }
        if (!isCutCall(e) || attempt >= CUT_WRITE_ATTEMPTS || Date.now() - t0 > this.#writeTimeoutMs / 2) throw e;
        cut = true;
        await new Promise((r) => setTimeout(r, 50 * attempt));
      }
    }
  }

  async #rangeOne(key: Buffer, revision: number): Promise<RawState | undefined> {
    const res = await this.#range({ key, revision });
    const kv = res.kvs[0];
    return kv ? { data: kv.value, modRevision: Number(kv.mod_revision) } : undefined;
  }
}

function checkPreconditions(key: string, current: StoredObject, pre: Preconditions | undefined): void {
  if (!pre) return;
  if (pre.uid && pre.uid !== current.metadata.uid) {
    throw new StorageError('Conflict', key, `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${current.metadata.uid ?? ''}`);
  }
  if (pre.resourceVersion && pre.resourceVersion !== current.metadata.resourceVersion) {
    throw new StorageError(
      'Conflict',
      key,
      `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${current.metadata.resourceVersion ?? ''}`,
    );
  }
}

