/**
 * EtcdStore's linearizable reads: a key's latest state and etcd's current revision, with
 * concurrent callers sharing round trips, and the wait for a revision etcd has yet to reach.
 */
import type { IRangeResponse } from 'etcd3';
import type { EtcdRequestObserver } from './interface.js';
import { StorageError } from './errors.js';
import type { FastKV } from './fast-kv.js';
import { observeSince } from './etcd-instrumentation.js';

/** etcd's default --max-txn-ops: the most operations one txn may carry. */
const MAX_TXN_OPS = 128;

interface LatestRead {
  key: string;
  /** Only the mod_revision is wanted (the value comes back empty). */
  keysOnly: boolean;
  resolve(v: { value: Buffer; modRevision: number } | undefined): void;
  reject(e: unknown): void;
  /** When it was asked (performance.now(), for the request-duration observer). */
  t0: number;
}

/** How long a read waits for a resourceVersion the server has not reached (kube: 3 s). */
export const TOO_LARGE_WAIT_MS = 3000;

export class QuorumReads {
  readonly #kv: FastKV;
  readonly #observer: EtcdRequestObserver | undefined;
  #revisionReadInFlight: Promise<number> | undefined;
  #nextRevisionRead: Promise<number> | undefined;

  /** `kv`: the read client; `observer` is told of each latest() as a `get`. */
  constructor(kv: FastKV, observer: EtcdRequestObserver | undefined) {
    this.#kv = kv;
    this.#observer = observer;
  }

  /**
   * The key's current value (empty with `keysOnly`) and mod_revision (undefined: no such key) — a
   * linearizable read, as a
   * quorum GET needs. Concurrent callers share etcd round trips: a read starts at once when none
   * is in flight, otherwise it joins the next batch, sent as one txn of ranges when the flight
   * lands. A batch starts after each of its reads arrived, so each still sees every write
   * acknowledged before it was asked (kube's quorum read, one etcd request per batch).
   */
  latest(key: string, keysOnly = false): Promise<{ value: Buffer; modRevision: number } | undefined> {
    return new Promise((resolve, reject) => {
      this.#latestQueue.push({ key, keysOnly, resolve, reject, t0: this.#observer ? performance.now() : 0 });
      if (!this.#latestInFlight) this.#flushLatest();
    });
  }

  #latestQueue: LatestRead[] = [];
  #latestInFlight = false;

  #flushLatest(): void {
    const batch = this.#latestQueue.splice(0, MAX_TXN_OPS);
    if (batch.length === 0) {
      this.#latestInFlight = false;
      return;
    }
    this.#latestInFlight = true;
    const done = (): void => {
      if (this.#observer) for (const r of batch) observeSince(this.#observer, 'get', r.key, r.t0);
      this.#flushLatest();
    };
    const read: Promise<Array<IRangeResponse | undefined>> =
      batch.length === 1
        ? this.#kv.range({ key: Buffer.from(batch[0]!.key), keys_only: batch[0]!.keysOnly }).then((r) => [r])
        : this.#kv.txn({ compare: [], success: batch.map((r) => ({ request_range: { key: Buffer.from(r.key), keys_only: r.keysOnly } })), failure: [] }).then((t) => t.responses.map((x) => x.response_range ?? undefined));
    read.then(
      (results) => {
        batch.forEach((r, i) => {
          const kv = results[i]?.kvs[0];
          r.resolve(kv ? { value: kv.value, modRevision: Number(kv.mod_revision) } : undefined);
        });
        done();
      },
      (e: unknown) => {
        for (const r of batch) r.reject(e);
        done();
      },
    );
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
        throw new StorageError('ResourceVersionTooLarge', key, `Too large resource version: ${minRv}, current: ${current}`, { revision: current, requested: minRv });
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}
