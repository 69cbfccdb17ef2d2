/**
 * The etcd-backed `Store`. resourceVersion is etcd's mod_revision; creates are a txn on
 * create_revision == 0, updates and deletes compare mod_revision; lists read one revision across
 * pages; watches run on one shared raw watch stream.
 */
import { Etcd3, type IKeyValue, type IRangeResponse, type IEvent } from 'etcd3';
import { type StoredObject, resourceExpired } from '@plinth/api';
import type {
  DeleteOptions,
  GetOptions,
  ListOptions,
  ListResult,
  Preconditions,
  Store,
  UpdateFunc,
  UpdateOptions,
  WatchEvent,
  WatchOptions,
  Watcher,
} from './interface.js';
import { StorageError, isEtcdCompactedError, isEtcdFutureRevError } from './errors.js';
import { decodeContinue, encodeContinue } from './continue.js';
import { prefixEnd } from './keys.js';
import { WatchMux, type RawWatch, type RawWatchHandlers } from './watch-mux.js';
import { decodeObject, encodeObject, sameContent } from './object-codec.js';

export { decodeObject, encodeObject } from './object-codec.js';
import { QueueWatcher } from './watcher.js';

export interface EtcdStoreOptions {
  /** Client URLs, e.g. `http://127.0.0.1:2379`. */
  endpoints: string[];
  /** Events buffered per watcher before it is dropped as too slow. */
  watchBufferLimit?: number;
  /** Deadline of each etcd request (ms), default 10 s. */
  requestTimeoutMs?: number;
}

/** Stored bytes and mod revision of a key as read from etcd. */
interface RawState {
  data: Buffer;
  modRevision: number;
}

/** How long a read waits for a resourceVersion the server has not reached (kube: 3 s). */
export const TOO_LARGE_WAIT_MS = 3000;

const EXPIRED_LIST = 'The resourceVersion for the provided list is too old.';
const INCONSISTENT_CONTINUE =
  'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.';

/** Parses a non-negative integer resourceVersion; throws a StorageError-free Error on junk. */
export function parseResourceVersion(rv: string | undefined): number {
  if (!rv) return 0;
  if (!/^\d+$/.test(rv)) throw new InvalidResourceVersionError(rv);
  return Number(rv);
}

export class InvalidResourceVersionError extends Error {
  constructor(readonly resourceVersion: string) {
    super(`invalid resource version "${resourceVersion}"`);
  }
}

export class EtcdStore implements Store {
  readonly #client: Etcd3;
  /** Client watches served straight from etcd (watch cache off, or resumes older than the cache). */
  readonly #mux: WatchMux;
  /** The watch caches' feeds; kept apart so a catching-up client watch never delays their progress. */
  readonly #feedMux: WatchMux;
  readonly #watchBufferLimit: number;
  #revisionReadInFlight: Promise<number> | undefined;
  #nextRevisionRead: Promise<number> | undefined;

  constructor(opts: EtcdStoreOptions) {
    if (opts.endpoints.length === 0) throw new Error('etcd store: at least one endpoint is required');
    const timeout = opts.requestTimeoutMs ?? 10_000;
    // Every unary call gets a deadline, so a request never hangs on an unreachable etcd;
    // streams (watch) run until cancelled.
    this.#client = new Etcd3({
      hosts: opts.endpoints,
      dialTimeout: 5000,
      defaultCallOptions: (ctx) => (ctx.isStream ? {} : { deadline: Date.now() + timeout }),
    });
    this.#mux = new WatchMux(this.#client);
    this.#feedMux = new WatchMux(this.#client);
    this.#watchBufferLimit = opts.watchBufferLimit ?? 10_000;
  }

  /** The etcd client itself, for the compactor (which needs a compare on a key's version). */
  get client(): Etcd3 {
    return this.#client;
  }

  /** etcd watches currently open (client watches plus watch-cache feeds). */
  get activeEtcdWatches(): number {
    return this.#mux.activeWatches + this.#feedMux.activeWatches;
  }

  /** Buffered events per watcher before a watcher is dropped as too slow. */
  get watchBufferLimit(): number {
    return this.#watchBufferLimit;
  }

  /**
   * Reads every object under `prefix` at one revision, in pages (a watch cache's initial state).
   * Returns [key, object] pairs in key order and the revision read at.
   */
  async snapshot(prefix: string): Promise<{ entries: Array<[string, StoredObject]>; revision: number }> {
    const rangeEnd = prefixEnd(Buffer.from(prefix));
    let key = Buffer.from(prefix);
    let revision = 0;
    const entries: Array<[string, StoredObject]> = [];
    for (;;) {
      const res = await this.#range({ key, range_end: rangeEnd, limit: 1000, revision });
      if (revision === 0) revision = Number(res.header.revision);
      for (const kv of res.kvs) entries.push([kv.key.toString(), decodeObject(kv.value, Number(kv.mod_revision))]);
      const last = res.kvs[res.kvs.length - 1];
      if (!res.more || !last) return { entries, revision };
      key = Buffer.concat([last.key, Buffer.from([0])]);
    }
  }

  /** A raw etcd watch on the feed stream, from `startRevision` (watch caches use it). */
  watchFeed(keyOrPrefix: string, exactKey: boolean, startRevision: number, handlers: RawWatchHandlers): Promise<RawWatch> {
    const key = Buffer.from(keyOrPrefix);
    return this.#feedMux.watch(key, exactKey ? undefined : prefixEnd(key), startRevision, handlers);
  }

  get #kv() {
    return this.#client.kv;
  }

  async create(key: string, obj: StoredObject, opts: { dryRun?: boolean } = {}): Promise<StoredObject> {
    const data = encodeObject(obj);
    const k = Buffer.from(key);
    if (opts.dryRun) {
      const existing = await this.#rangeOne(k, 0);
      if (existing) throw new StorageError('KeyExists', key, `key exists: ${key}`);
      return decodeObject(data, 0);
    }
    const res = await this.#kv.txn({
      compare: [{ key: k, target: 'Create', result: 'Equal', create_revision: 0 }],
      success: [{ request_put: { key: k, value: data } }],
      failure: [],
    });
    if (!res.succeeded) throw new StorageError('KeyExists', key, `key exists: ${key}`);
    return decodeObject(data, Number(res.header.revision));
  }

  async get(key: string, opts: GetOptions = {}): Promise<StoredObject> {
    const minRv = parseResourceVersion(opts.resourceVersion);
    if (minRv > 0) await this.waitForRevision(minRv, key);
    const res = await this.#range({ key: Buffer.from(key), serializable: opts.resourceVersion === '0' });
    const kv = res.kvs[0];
    if (!kv) throw new StorageError('NotFound', key, `key not found: ${key}`);
    return decodeObject(kv.value, Number(kv.mod_revision));
  }

  async list(prefix: string, opts: ListOptions = {}): Promise<ListResult> {
    if (!prefix.endsWith('/')) prefix += '/';
    const limit = opts.limit && opts.limit > 0 ? opts.limit : 0;
    const rangeEnd = prefixEnd(Buffer.from(prefix));
    let key = Buffer.from(prefix);
    let revision = 0;
    let minRv = 0;
    const paging = !!opts.continue;
    let continueKey = '';
    if (opts.continue) {
      let decoded: { rv: number; startKey: string };
      try {
        decoded = decodeContinue(opts.continue, prefix);
      } catch (e) {
        throw new StorageError('InvalidContinue', prefix, (e as Error).message);
      }
      continueKey = decoded.startKey;
      key = Buffer.from(decoded.startKey);
      revision = decoded.rv > 0 ? decoded.rv : 0;
    } else {
      const rv = parseResourceVersion(opts.resourceVersion);
      const match = opts.resourceVersionMatch ?? '';
      if (opts.resourceVersion && rv > 0) {
        if (match === 'Exact' || (match === '' && limit > 0)) revision = rv;
        else minRv = rv;
      }
    }

    if (minRv > 0) await this.waitForRevision(minRv, prefix);
    const items: StoredObject[] = [];
    const predicate = opts.predicate;
    let batch = limit;
    let last: IKeyValue | undefined;
    let res: IRangeResponse;
    for (;;) {
      try {
        res = await this.#range({ key, range_end: rangeEnd, limit: batch, revision, serializable: opts.resourceVersion === '0' && !revision });
      } catch (e) {
        if (isEtcdCompactedError(e)) {
          if (paging) {
            const err = resourceExpired(INCONSISTENT_CONTINUE);
            throw Object.assign(err, { continueToken: encodeContinue(continueKey, prefix, -1) });
          }
          throw resourceExpired(EXPIRED_LIST);
        }
        throw e;
      }
      if (revision === 0) revision = Number(res.header.revision);
      let consumed = 0;
      for (const kv of res.kvs) {
        last = kv;
        consumed++;
        const obj = decodeObject(kv.value, Number(kv.mod_revision));
        if (predicate && !predicate(obj)) continue;
        items.push(obj);
        if (limit > 0 && items.length >= limit) break;
      }
      const full = limit > 0 && items.length >= limit;
      if (!res.more || full || !last) {
        const hasMore = consumed < res.kvs.length || res.more;
        if (!hasMore || !last) return { items, resourceVersion: String(revision), continue: '' };
        const out: ListResult = { items, resourceVersion: String(revision), continue: encodeContinue(`${last.key.toString()}\u0000`, prefix, revision) };
        // etcd's count covers the whole range from this batch's first key: what we did not
        // return is still to come. Selectors make it meaningless, so kube omits it then.
        if (!opts.hasSelector) out.remainingItemCount = Number(res.count) - consumed;
        return out;
      }
      // Filtered results fell short of the limit: read on from after the last key, at the same
      // revision, with a growing batch (kube doubles it, up to 10,000).
      key = Buffer.concat([last.key, Buffer.from([0])]);
      if (batch > 0) batch = Math.min(batch * 2, 10_000);
    }
  }

  async guaranteedUpdate(key: string, tryUpdate: UpdateFunc, opts: UpdateOptions = {}): Promise<StoredObject> {
    const k = Buffer.from(key);
    // A suggested current state (the watch cache's copy) saves the read. It may be stale: a txn
    // on it fails and answers with the real state; anything else it makes us conclude (no change,
    // a failed precondition or tryUpdate) is re-checked against etcd first, as kube does.
    let fromSuggestion = !!opts.suggestion;
    let state = opts.suggestion ? stateOf(opts.suggestion) : await this.#rangeOne(k, 0);
    const refresh = async (): Promise<void> => {
      fromSuggestion = false;
      state = await this.#rangeOne(k, 0);
    };
    for (;;) {
      let next: StoredObject;
      let current: StoredObject | undefined;
      try {
        if (!state && !opts.ignoreNotFound) throw new StorageError('NotFound', key, `key not found: ${key}`);
        current = state ? decodeObject(state.data, state.modRevision) : undefined;
        if (current) checkPreconditions(key, current, opts.preconditions);
        next = await tryUpdate(current);
      } catch (e) {
        if (!fromSuggestion) throw e;
        await refresh();
        continue;
      }
      const data = encodeObject(next);
      // "Unchanged" is by content, not bytes: key order may differ (kube's typed encoding fixes it).
      if (state && current && (data.equals(state.data) || sameContent(next, current))) {
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
      const res = await this.#kv.txn({
        compare: [
          state
            ? { key: k, target: 'Mod', result: 'Equal', mod_revision: state.modRevision }
            : { key: k, target: 'Create', result: 'Equal', create_revision: 0 },
        ],
        success: [{ request_put: { key: k, value: data } }],
        failure: [{ request_range: { key: k } }],
      });
      if (res.succeeded) return decodeObject(data, Number(res.header.revision));
      const kv = res.responses[0]?.response_range?.kvs[0];
      state = kv ? { data: kv.value, modRevision: Number(kv.mod_revision) } : undefined;
      fromSuggestion = false;
    }
  }

  async delete(key: string, opts: DeleteOptions = {}): Promise<StoredObject> {
    const k = Buffer.from(key);
    let fromSuggestion = !!opts.suggestion;
    let state = opts.suggestion ? stateOf(opts.suggestion) : await this.#rangeOne(k, 0);
    for (;;) {
      let current: StoredObject;
      try {
        if (!state) throw new StorageError('NotFound', key, `key not found: ${key}`);
        current = decodeObject(state.data, state.modRevision);
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
      const res = await this.#kv.txn({
        compare: [{ key: k, target: 'Mod', result: 'Equal', mod_revision: state!.modRevision }],
        success: [{ request_delete_range: { key: k } }],
        failure: [{ request_range: { key: k } }],
      });
      if (res.succeeded) return current;
      const kv = res.responses[0]?.response_range?.kvs[0];
      state = kv ? { data: kv.value, modRevision: Number(kv.mod_revision) } : undefined;
      fromSuggestion = false;
    }
  }

  async watch(keyOrPrefix: string, opts: WatchOptions = {}): Promise<Watcher> {
    const key = Buffer.from(keyOrPrefix);
    const rangeEnd = opts.exactKey ? undefined : prefixEnd(key);
    const requested = parseResourceVersion(opts.resourceVersion);
    const predicate = opts.predicate;
    let raw: { cancel(): void } | undefined;
    const watcher = new QueueWatcher(this.#watchBufferLimit, () => raw?.cancel());
    let startRevision: number;
    if (requested === 0) {
      // Get state and start at most recent: synthetic ADDED events, then changes after the list.
      const res = await this.#range({ key, ...(rangeEnd ? { range_end: rangeEnd } : {}) });
      for (const kv of res.kvs) {
        const obj = decodeObject(kv.value, Number(kv.mod_revision));
        if (!predicate || predicate(obj)) watcher.push({ type: 'ADDED', object: obj });
      }
      startRevision = Number(res.header.revision) + 1;
    } else {
      startRevision = requested + 1;
    }
    raw = await this.#mux.watch(key, rangeEnd, startRevision, {
      onEvents: (events) => {
        for (const ev of events) {
          const out = translateEvent(ev, predicate);
          if (out) watcher.push(out);
        }
      },
      onCancel: ({ compactRevision, message }) => {
        if (compactRevision > 0) {
          const status = resourceExpired(`too old resource version: ${requested} (${compactRevision})`).toStatus();
          watcher.push({ type: 'ERROR', object: status as unknown as StoredObject });
        } else if (!watcher.ended) {
          watcher.push({ type: 'ERROR', object: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason: 'InternalError', code: 500 } as unknown as StoredObject });
        }
        watcher.end();
      },
    });
    return watcher;
  }

  /**
   * etcd's current revision, read after this call began (what a linearizable read needs), with
   * concurrent callers sharing reads: a caller joins the next read to start, never one already in
   * flight (that one may predate its request). Under load this turns N reads into about two.
   */
  freshRevision(): Promise<number> {
    if (this.#nextRevisionRead) return this.#nextRevisionRead;
    const start = (): Promise<number> => {
      const p = this.currentRevision();
      this.#revisionReadInFlight = p;
      const clear = (): void => {
        if (this.#revisionReadInFlight === p) this.#revisionReadInFlight = undefined;
      };
      p.then(clear, clear);
      return p;
    };
    if (!this.#revisionReadInFlight) return start();
    const next = this.#revisionReadInFlight.then(
      () => undefined,
      () => undefined,
    ).then(() => {
      this.#nextRevisionRead = undefined;
      return start();
    });
    this.#nextRevisionRead = next;
    return next;
  }

  async currentRevision(): Promise<number> {
    const res = await this.#kv.range({ key: Buffer.from('\u0000plinth-revision-probe'), count_only: true });
    return Number(res.header.revision);
  }

  async compact(revision: number): Promise<void> {
    await this.#kv.compact({ revision, physical: false });
  }

  /**
   * Asks the feed stream for a progress notification: once it arrives, every watch cache has
   * seen every event up to the returned revision.
   */
  requestProgress(timeoutMs?: number): Promise<number> {
    return this.#feedMux.requestProgress(timeoutMs);
  }

  async close(): Promise<void> {
    this.#mux.close();
    this.#feedMux.close();
    this.#client.close();
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

  async #rangeOne(key: Buffer, revision: number): Promise<RawState | undefined> {
    const res = await this.#range({ key, revision });
    const kv = res.kvs[0];
    return kv ? { data: kv.value, modRevision: Number(kv.mod_revision) } : undefined;
  }

  /**
   * Resolves once etcd has reached `minRv`; after about 3 s throws ResourceVersionTooLarge
   * (504 "Too large resource version", as kube answers a version it has not seen).
   */
  async waitForRevision(minRv: number, key: string, timeoutMs = TOO_LARGE_WAIT_MS): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const current = await this.currentRevision();
      if (current >= minRv) return;
      if (Date.now() >= deadline) {
        throw new StorageError('ResourceVersionTooLarge', key, `Too large resource version: ${minRv}, current: ${current}`, current, minRv);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

function stateOf(obj: StoredObject): RawState {
  return { data: encodeObject(obj), modRevision: Number(obj.metadata.resourceVersion) };
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

/** etcd event → API watch event, applying the predicate to old and new state. */
function translateEvent(ev: IEvent, predicate: ((o: StoredObject) => boolean) | undefined): WatchEvent | undefined {
  const rev = Number(ev.kv.mod_revision);
  if (ev.type === 'Delete') {
    if (!ev.prev_kv) return undefined;
    const prev = decodeObject(ev.prev_kv.value, rev);
    return !predicate || predicate(prev) ? { type: 'DELETED', object: prev } : undefined;
  }
  const cur = decodeObject(ev.kv.value, rev);
  const created = !ev.prev_kv || ev.kv.create_revision === ev.kv.mod_revision;
  if (!predicate) return { type: created ? 'ADDED' : 'MODIFIED', object: cur };
  const curOk = predicate(cur);
  const prevOk = !created && ev.prev_kv ? predicate(decodeObject(ev.prev_kv.value, Number(ev.prev_kv.mod_revision))) : false;
  if (curOk && prevOk) return { type: 'MODIFIED', object: cur };
  if (curOk) return { type: 'ADDED', object: cur };
  if (prevOk) return { type: 'DELETED', object: cur };
  return undefined;
}
