/**
 * Reading a key range from etcd in pages bounded in bytes as well as in keys. etcd can only limit
 * a range by key count, so the page size adapts to the sizes seen so far: 1,000 keys of 10 KB
 * would be a 10 MB response, and one page of a collection of 1 MB objects must not be 1 GB. A
 * response that is still too large for the client (RESOURCE_EXHAUSTED) is asked for again at half
 * the count. Every page is read at the revision of the first, so the pages form one snapshot.
 */
import type { IKeyValue, IRangeResponse } from 'etcd3';
import { isEtcdTooLargeError } from './errors.js';

/** One etcd range request, as EtcdStore issues it (future-revision waits included). */
export type RangeFn = (req: { key: Buffer; range_end: Buffer; limit: number; revision: number; serializable: boolean }) => Promise<IRangeResponse>;

export interface PagerOptions {
  key: Buffer;
  rangeEnd: Buffer;
  /** 0: the first page's header revision fixes the snapshot. */
  revision?: number;
  serializable?: boolean;
  /** Target bytes (keys and values) per page. */
  pageBytes?: number;
  /** Average bytes per key seen by an earlier read of this range (sizes the first page). */
  averageHint?: number;
}

export interface Page {
  kvs: IKeyValue[];
  /** Whether keys remain after this page. */
  more: boolean;
  /** Keys in the range from this page's first key on (etcd's count), at the snapshot revision. */
  count: number;
  /** The snapshot revision. */
  revision: number;
}

/** Default target of one page: a few MiB, well inside any receive limit and cheap for etcd. */
export const DEFAULT_PAGE_BYTES = 8 * 1024 * 1024;
/** Keys in the first page, before any size is known (bounded: objects may be 1.5 MiB each). */
const FIRST_PAGE_KEYS = 32;
/** Never more keys than this in one page (kube's largest list batch). */
export const MAX_PAGE_KEYS = 10_000;

export class RangePager {
  readonly #range: RangeFn;
  readonly #rangeEnd: Buffer;
  readonly #serializable: boolean;
  readonly #pageBytes: number;
  #key: Buffer;
  #revision: number;
  #seenKeys = 0;
  #seenBytes = 0;
  #more = true;

  constructor(range: RangeFn, opts: PagerOptions) {
    this.#range = range;
    this.#key = opts.key;
    this.#rangeEnd = opts.rangeEnd;
    this.#revision = opts.revision ?? 0;
    this.#serializable = !!opts.serializable;
    this.#pageBytes = opts.pageBytes ?? DEFAULT_PAGE_BYTES;
    if (opts.averageHint && opts.averageHint > 0) {
      this.#seenKeys = 1;
      this.#seenBytes = opts.averageHint;
    }
  }

  /** Average bytes per key seen so far (0 before the first page). */
  get averageBytes(): number {
    return this.#seenKeys === 0 ? 0 : this.#seenBytes / this.#seenKeys;
  }

  /** Whether keys remain to be read. */
  get more(): boolean {
    return this.#more;
  }

  /** The snapshot revision (0 until the first page is read). */
  get revision(): number {
    return this.#revision;
  }

  /** Restarts reading at `key` (the next page starts there), at the same revision. */
  seek(key: Buffer): void {
    this.#key = key;
    this.#more = true;
  }

  /** The next page: at most `want` keys (and fewer when the objects are large). */
  async next(want = MAX_PAGE_KEYS): Promise<Page> {
    let limit = Math.max(1, Math.min(want, this.#pageKeys()));
    for (;;) {
      let res: IRangeResponse;
      try {
        res = await this.#range({ key: this.#key, range_end: this.#rangeEnd, limit, revision: this.#revision, serializable: this.#serializable });
      } catch (e) {
        if (limit > 1 && isEtcdTooLargeError(e)) {
          limit = Math.max(1, Math.floor(limit / 2));
          continue;
        }
        throw e;
      }
      if (this.#revision === 0) this.#revision = Number(res.header.revision);
      for (const kv of res.kvs) this.#seenBytes += kv.key.length + kv.value.length;
      this.#seenKeys += res.kvs.length;
      const last = res.kvs[res.kvs.length - 1];
      this.#more = !!res.more && !!last;
      if (last) this.#key = Buffer.concat([last.key, Buffer.from([0])]);
      return { kvs: res.kvs, more: this.#more, count: Number(res.count), revision: this.#revision };
    }
  }

  /** Keys that fit the byte target at the average size seen so far. */
  #pageKeys(): number {
    if (this.#seenKeys === 0) return FIRST_PAGE_KEYS;
    const avg = this.#seenBytes / this.#seenKeys;
    return Math.max(1, Math.min(MAX_PAGE_KEYS, Math.floor(this.#pageBytes / Math.max(avg, 1))));
  }
}
