/**
 * Where an allocation bitmap lives. In memory (the repair loop's rebuilt state), or in etcd as
 * kube stores it (pkg/registry/core/service/allocator/storage): one core/v1 `RangeAllocation`
 * object per range, at `<prefix>/ranges/serviceips`, `<prefix>/ranges/secondaryserviceips` and
 * `<prefix>/ranges/servicenodeports`, with `range` (the CIDR or port range) and `data` (the
 * bitmap, base64 in JSON). Every change is a read-modify-write with compare-and-swap on the key's
 * mod_revision, so replicas sharing one etcd never hand out the same offset, and allocations
 * survive restarts.
 */
import { type StoredObject, conflict } from '@plinth/api';
import { type Store, isStorageError } from '@plinth/storage';
import { AllocationBitmap } from './bitmap.js';

/** The allocation interface of a range's offsets (kube's allocator.Interface), asynchronous. */
export interface AllocationBackend {
  readonly max: number;
  readonly rangeSpec: string;
  /** Takes the offset: false when it was taken already. */
  allocate(offset: number): Promise<boolean>;
  /** Takes a free offset; undefined when the range is full. */
  allocateNext(): Promise<number | undefined>;
  release(offset: number): Promise<void>;
  has(offset: number): Promise<boolean>;
  /** Each taken offset. */
  forEach(fn: (offset: number) => void): Promise<void>;
  /** Offsets left. */
  free(): Promise<number>;
}

/** A range's bitmap in this process only. */
export function createMemoryBackend(max: number, rangeSpec: string): AllocationBackend & { bitmap: AllocationBitmap } {
  const bitmap = new AllocationBitmap(max, rangeSpec);
  return {
    bitmap,
    max: bitmap.max,
    rangeSpec,
    allocate: async (offset) => bitmap.allocate(offset),
    allocateNext: async () => bitmap.allocateNext(),
    release: async (offset) => bitmap.release(offset),
    has: async (offset) => bitmap.has(offset),
    forEach: async (fn) => bitmap.forEach(fn),
    free: async () => bitmap.free(),
  };
}

/** A core/v1 RangeAllocation as stored (kube's JSON: zero metadata, `range`, base64 `data`). */
export interface RangeAllocation extends StoredObject {
  range: string;
  /** The bitmap, base64 (standard, padded: Go's []byte in JSON). */
  data: string;
}

/** A snapshot read from etcd; `resourceVersion` '' when the key does not exist yet. */
export interface RangeSnapshot {
  range: string;
  data: Buffer;
  resourceVersion: string;
}

function rangeAllocationObject(range: string, data: Buffer): RangeAllocation {
  // kube writes an empty ObjectMeta, whose creationTimestamp encodes as null.
  return { kind: 'RangeAllocation', apiVersion: 'v1', metadata: { creationTimestamp: null }, range, data: data.toString('base64') };
}

function dataOf(obj: StoredObject): Buffer {
  const d = obj['data'];
  return typeof d === 'string' ? Buffer.from(d, 'base64') : Buffer.alloc(0);
}

/** Thrown by a change that must not be written (kube's errorUnableToAllocate): ends the update. */
class NothingToWrite extends Error {}

export interface EtcdBackendOptions {
  store: Store;
  /** The RangeAllocation's key, e.g. `/registry/ranges/serviceips`. */
  key: string;
  /** kube's resource name for messages: `serviceipallocations`, `servicenodeportallocations`. */
  resource: string;
  max: number;
  rangeSpec: string;
}

/**
 * kube's `allocator/storage.Etcd`: the bitmap in a RangeAllocation, every change a CAS update.
 * Changes of one process are serialized (kube's mutex); between processes etcd's CAS decides,
 * and a lost race reads the new state and tries again.
 */
export class EtcdAllocationBackend implements AllocationBackend {
  readonly max: number;
  readonly rangeSpec: string;
  readonly key: string;
  readonly #store: Store;
  readonly #resource: string;
  readonly #bitmap: AllocationBitmap;
  #queue: Promise<unknown> = Promise.resolve();

  constructor(opts: EtcdBackendOptions) {
    this.#store = opts.store;
    this.key = opts.key;
    this.#resource = opts.resource;
    this.#bitmap = new AllocationBitmap(opts.max, opts.rangeSpec);
    this.max = this.#bitmap.max;
    this.rangeSpec = opts.rangeSpec;
  }

  allocate(offset: number): Promise<boolean> {
    return this.#tryUpdate(() => this.#bitmap.allocate(offset));
  }

  async allocateNext(): Promise<number | undefined> {
    let got: number | undefined;
    const ok = await this.#tryUpdate(() => {
      got = this.#bitmap.allocateNext();
      return got !== undefined;
    });
    return ok ? got : undefined;
  }

  async release(offset: number): Promise<void> {
    await this.#tryUpdate(() => {
      this.#bitmap.release(offset);
      return true;
    });
  }

  /** Read from etcd, not from this process's last view: another replica may have changed it. */
  async has(offset: number): Promise<boolean> {
    return (await this.#current()).has(offset);
  }

  async forEach(fn: (offset: number) => void): Promise<void> {
    (await this.#current()).forEach(fn);
  }

  async free(): Promise<number> {
    return (await this.#current()).free();
  }

  /** kube's RangeRegistry.Get: the stored snapshot, resourceVersion '' when absent. */
  async get(): Promise<RangeSnapshot> {
    try {
      const obj = await this.#store.get(this.key);
      return { range: String(obj['range'] ?? ''), data: dataOf(obj), resourceVersion: obj.metadata.resourceVersion ?? '' };
    } catch (e) {
      if (isStorageError(e, 'NotFound')) return { range: '', data: Buffer.alloc(0), resourceVersion: '' };
      throw e;
    }
  }

  /**
   * kube's RangeRegistry.CreateOrUpdate (the repair loop's write): writes `snapshot` if the stored
   * object is still at `snapshot.resourceVersion` (or absent, for a snapshot without one);
   * otherwise a 409 Conflict, as kube's.
   */
  createOrUpdate(snapshot: RangeSnapshot): Promise<void> {
    return this.#serial(async () => {
      await this.#store.guaranteedUpdate(
        this.key,
        (cur) => {
          const rv = cur?.metadata.resourceVersion ?? '';
          if (snapshot.resourceVersion !== '' && rv !== '' && snapshot.resourceVersion !== rv) {
            throw conflict({ group: '', resource: this.#resource }, '', 'the provided resource version does not match');
          }
          if (snapshot.resourceVersion === '' && rv !== '') throw conflict({ group: '', resource: this.#resource }, '', 'another caller has already initialized the resource');
          const next = rangeAllocationObject(snapshot.range, snapshot.data);
          return cur ? { ...next, metadata: cur.metadata } : next;
        },
        { ignoreNotFound: true },
      );
    });
  }

  async #current(): Promise<AllocationBitmap> {
    const snap = await this.get();
    const bitmap = new AllocationBitmap(this.max, this.rangeSpec);
    if (snap.resourceVersion !== '') bitmap.restore(snap.range, snap.data);
    return bitmap;
  }

  /**
   * kube's `tryUpdate`: read the stored bitmap, apply `change` (false: nothing to write, the
   * call answers false), write it with CAS; a lost race runs it all again on the new state.
   */
  #tryUpdate(change: () => boolean): Promise<boolean> {
    return this.#serial(async () => {
      try {
        await this.#store.guaranteedUpdate(
          this.key,
          (cur) => {
            // Until the repair loop has written the range once, nothing may be allocated (kube).
            if (!cur) throw new Error(`cannot allocate resources of type ${this.#resource} at this time`);
            this.#bitmap.restore(String(cur['range'] ?? ''), dataOf(cur));
            if (!change()) throw new NothingToWrite();
            const { range, data } = this.#bitmap.snapshot();
            return { ...cur, range, data: data.toString('base64') };
          },
          { ignoreNotFound: true },
        );
        return true;
      } catch (e) {
        if (e instanceof NothingToWrite) return false;
        throw e;
      }
    });
  }

  #serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(fn, fn);
    this.#queue = run.catch(() => undefined);
    return run;
  }
}
