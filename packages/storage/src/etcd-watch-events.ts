/**
 * What etcd's watch and range answers become as API watch events, for a watch served straight
 * from etcd (EtcdStore.watch): live events filtered by the predicate, and initial events read a
 * page at a time.
 */
import type { IEvent } from 'etcd3';
import type { StoredObject } from '@plinth/api';
import type { WatchEvent } from './interface.js';
import { StorageError, isEtcdCompactedError } from './errors.js';
import { decodeObject } from './object-codec.js';
import type { InitialEvents } from './watcher.js';
import type { Page, RangePager } from './paging.js';

/** etcd event → API watch event, applying the predicate to old and new state. */
export function translateEvent(ev: IEvent, predicate: ((o: StoredObject) => boolean) | undefined): WatchEvent | undefined {
  const rev = Number(ev.kv.mod_revision);
  if (ev.type === 'Delete') {
    if (!ev.prev_kv) return undefined;
    const prev = decodeObject(ev.prev_kv.value, rev);
    return !predicate || predicate(prev) ? { type: 'DELETED', object: prev, size: ev.prev_kv.value.length } : undefined;
  }
  const cur = decodeObject(ev.kv.value, rev);
  const size = ev.kv.value.length;
  const created = !ev.prev_kv || ev.kv.create_revision === ev.kv.mod_revision;
  if (!predicate) return { type: created ? 'ADDED' : 'MODIFIED', object: cur, size };
  const curOk = predicate(cur);
  // kube's watchers: an object leaving the selection is DELETED as it was (the previous state),
  // with the event's resourceVersion.
  const prev = !created && ev.prev_kv ? decodeObject(ev.prev_kv.value, rev) : undefined;
  const prevOk = prev !== undefined && predicate(prev);
  if (curOk && prevOk) return { type: 'MODIFIED', object: cur, size };
  if (curOk) return { type: 'ADDED', object: cur, size };
  if (prevOk) return { type: 'DELETED', object: prev, size: ev.prev_kv!.value.length };
  return undefined;
}

/**
 * Initial events of a watch served from etcd: one snapshot read a page at a time as the client
 * consumes it, each object decoded only when it is handed out. A snapshot compacted away before
 * it was read to the end ends the watch with an Expired ERROR.
 */
export class EtcdInitialEvents implements InitialEvents {
  #pager: RangePager | undefined;
  #kvs: Page['kvs'];
  #i = 0;
  #error: WatchEvent | undefined;
  #finished = false;
  readonly #key: string;
  readonly #predicate: ((o: StoredObject) => boolean) | undefined;

  constructor(pager: RangePager, first: Page, key: string, predicate?: (o: StoredObject) => boolean) {
    this.#pager = first.more ? pager : undefined;
    this.#kvs = first.kvs;
    this.#key = key;
    this.#predicate = predicate;
  }

  get done(): boolean {
    return this.#finished || (this.#i >= this.#kvs.length && !this.#pager && !this.#error);
  }

  poll(): WatchEvent | undefined {
    while (this.#i < this.#kvs.length) {
      const kv = this.#kvs[this.#i++]!;
      const obj = decodeObject(kv.value, Number(kv.mod_revision));
      if (!this.#predicate || this.#predicate(obj)) return { type: 'ADDED', object: obj, size: kv.value.length };
    }
    if (this.#error) {
      const e = this.#error;
      this.#error = undefined;
      this.#finished = true;
      return e;
    }
    return undefined;
  }

  async fill(): Promise<void> {
    if (!this.#pager || this.#i < this.#kvs.length) return;
    try {
      const page = await this.#pager.next();
      if (this.#finished) return;
      this.#kvs = page.kvs;
      this.#i = 0;
      if (!page.more) this.#pager = undefined;
    } catch (e) {
      this.#pager = undefined;
      this.#kvs = [];
      this.#i = 0;
      this.#error = {
        type: 'ERROR',
        error: isEtcdCompactedError(e)
          ? new StorageError('Compacted', this.#key, 'The resourceVersion for the provided watch is too old.')
          : new StorageError('Internal', this.#key, (e as Error).message),
      };
    }
  }

  close(): void {
    this.#finished = true;
    this.#pager = undefined;
    this.#kvs = [];
    this.#i = 0;
  }
}
