/**
 * EtcdStore's reads of ranges: one page of a list (kube's GetList: continue tokens, exact and
 * minimum revisions, limits with selectors) and pagers bounded in bytes, which remember each
 * range's average object size so a page is one etcd read.
 */
import type { IKeyValue } from 'etcd3';
import type { ListOptions, ListResult } from './interface.js';
import { StorageError, isEtcdCompactedError } from './errors.js';
import { decodeContinue, encodeContinue } from './continue.js';
import { prefixEnd } from './keys.js';
import { parseResourceVersion } from './resource-version.js';
import { RangePager, type Page, type RangeFn } from './paging.js';
import type { QuorumReads } from './etcd-quorum-reads.js';

const EXPIRED_LIST = 'The resourceVersion for the provided list is too old.';
const INCONSISTENT_CONTINUE =
  'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.';

export interface ListReaderOptions {
  /** A range read that waits for a future revision (EtcdStore's). */
  readonly range: RangeFn;
  readonly quorum: QuorumReads;
  /** Target bytes of one page (RangePager's default otherwise). */
  readonly pageBytes: number | undefined;
}

export class ListReader {
  readonly #range: RangeFn;
  readonly #quorum: QuorumReads;
  readonly #pageBytes: number | undefined;
  /** Average object size per listed range (by its range end), so each page of a paged list is one etcd read. */
  readonly #sizeHints = new Map<string, number>();

  constructor(opts: ListReaderOptions) {
    this.#range = opts.range;
    this.#quorum = opts.quorum;
    this.#pageBytes = opts.pageBytes;
  }

  /**
   * One page of a list (kube's GetList): reads the range a page at a time from the continue
   * token's key or the prefix, handing each key-value to `take` (which returns how many items it
   * has kept, 0 for one it left out) until `limit` items are kept.
   */
  async page(prefix: string, opts: ListOptions, take: (kv: IKeyValue) => number): Promise<Omit<ListResult, 'items'>> {
    if (!prefix.endsWith('/')) prefix += '/';
    const limit = opts.limit && opts.limit > 0 ? opts.limit : 0;
    let key = Buffer.from(prefix);
    let revision = 0;
    let minRv = 0;
    let continueKey: string | undefined;
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
      if (rv > 0) {
        if (match === 'Exact' || (match === '' && limit > 0)) revision = rv;
        else minRv = rv;
      }
    }

    if (minRv > 0) await this.#quorum.waitForRevision(minRv, prefix);
    const rangeEnd = prefixEnd(Buffer.from(prefix));
    const hintKey = rangeEnd.toString('latin1');
    const pager = this.pager(key, rangeEnd, revision, opts.resourceVersion === '0' && !revision, this.#pageBytes, this.#sizeHints.get(hintKey));
    let kept = 0;
    // With a selector a page may fill slowly: ask for the limit first, then twice as much each
    // time (kube doubles its batch up to 10,000); the pager also keeps each page's bytes bounded.
    let batch = limit || undefined;
    for (;;) {
      let page: Page;
      try {
        page = await pager.next(batch);
      } catch (e) {
        if (!isEtcdCompactedError(e)) throw e;
        if (continueKey !== undefined) {
          throw new StorageError('Compacted', prefix, INCONSISTENT_CONTINUE, { continueToken: encodeContinue(continueKey, prefix, -1) });
        }
        throw new StorageError('Compacted', prefix, EXPIRED_LIST);
      }
      let consumed = 0;
      for (const kv of page.kvs) {
        consumed++;
        if (take(kv) === 0) continue;
        kept++;
        if (limit > 0 && kept >= limit) break;
      }
      const full = limit > 0 && kept >= limit;
      if (!full && page.more) {
        if (batch) batch = Math.min(batch * 2, 10_000);
        continue;
      }
      this.#rememberSize(hintKey, pager.averageBytes);
      const lastKv = page.kvs[consumed - 1];
      const hasMore = consumed < page.kvs.length || page.more;
      if (!full || !hasMore || !lastKv) return { resourceVersion: String(pager.revision), continue: '' };
      const out: Omit<ListResult, 'items'> = { resourceVersion: String(pager.revision), continue: encodeContinue(`${lastKv.key.toString()}\u0000`, prefix, pager.revision) };
      // etcd's count covers the whole range from this page's first key: what we did not
      // return is still to come. Selectors make it meaningless, so kube omits it then.
      if (!opts.hasSelector) out.remainingItemCount = page.count - consumed;
      return out;
    }
  }

  /** A pager over [key, rangeEnd) at `revision` (0: the first page's), pages bounded in bytes. */
  pager(key: Buffer, rangeEnd: Buffer, revision: number, serializable = false, pageBytes = this.#pageBytes, averageHint?: number): RangePager {
    return new RangePager(this.#range, { key, rangeEnd, revision, serializable, ...(pageBytes ? { pageBytes } : {}), ...(averageHint ? { averageHint } : {}) });
  }

  #rememberSize(hintKey: string, average: number): void {
    if (average <= 0) return;
    this.#sizeHints.delete(hintKey);
    this.#sizeHints.set(hintKey, average);
    // Bounded: the oldest range's hint goes first.
    if (this.#sizeHints.size > 1024) this.#sizeHints.delete(this.#sizeHints.keys().next().value!);
  }
}
