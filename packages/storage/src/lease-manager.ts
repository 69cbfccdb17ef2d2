/**
 * etcd leases for writes with a time to live (kube's etcd3 `leaseManager`). A lease per write
 * would cost etcd a grant and a lease record per object; instead the last lease is reused while
 * it expires within a short window after the requested TTL: its TTL is granted that much longer,
 * so an object lives at least its TTL and at most the window more.
 */

/** Grants an etcd lease of `ttlSeconds`, resolving with its ID. */
export type GrantLease = (ttlSeconds: number) => Promise<string>;

export interface LeaseManagerOptions {
  /** Upper bound of the reuse window in seconds (kube: 60). */
  reuseDurationSeconds?: number;
  /** The reuse window as a fraction of the TTL, if smaller (kube: 0.05). */
  reuseDurationPercent?: number;
  /** The clock, in ms (tests). */
  now?: () => number;
}

export class LeaseManager {
  readonly #grant: GrantLease;
  readonly #reuseSeconds: number;
  readonly #reusePercent: number;
  readonly #now: () => number;
  #prevId = '';
  /** When the previous lease expires (ms). */
  #prevExpiry = 0;
  /** A grant in flight: concurrent writers wait for it rather than each granting one. */
  #granting: Promise<string> | undefined;

  constructor(grant: GrantLease, opts: LeaseManagerOptions = {}) {
    this.#grant = grant;
    this.#reuseSeconds = opts.reuseDurationSeconds ?? 60;
    this.#reusePercent = opts.reuseDurationPercent ?? 0.05;
    this.#now = opts.now ?? Date.now;
  }

  /** A lease that keeps a key at least `ttlSeconds` (whole seconds, > 0). */
  async getLease(ttlSeconds: number): Promise<string> {
    for (;;) {
      const now = this.#now();
      const reuse = Math.min(Math.floor(this.#reusePercent * ttlSeconds), this.#reuseSeconds);
      // Reusable when it outlives the TTL, but by no more than the reuse window.
      const valid = now + ttlSeconds * 1000 < this.#prevExpiry;
      const sufficient = now + (ttlSeconds + reuse) * 1000 >= this.#prevExpiry;
      if (this.#prevId && valid && sufficient) return this.#prevId;
      if (this.#granting) {
        await this.#granting.catch(() => undefined);
        continue;
      }
      const granted = ttlSeconds + reuse;
      const p = this.#grant(granted);
      this.#granting = p;
      try {
        const id = await p;
        this.#prevId = id;
        this.#prevExpiry = now + granted * 1000;
        return id;
      } finally {
        this.#granting = undefined;
      }
    }
  }
}
