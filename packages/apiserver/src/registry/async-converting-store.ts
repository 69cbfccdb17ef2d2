/**
 * The storage of a version whose conversion needs I/O (a CRD with a conversion webhook): as
 * ConvertingStore, but conversions are awaited, batched (a list page is one conversion, a watch
 * event one) and done only for objects whose apiVersion differs from the one wanted — so the
 * storage version itself reads through it too (objects stored at an older storage version are
 * converted, kube's storage-version migration reads), and nothing is called when versions match.
 * A watch whose conversion fails ends, as kube's watch handler ends the stream when it cannot
 * encode an event.
 */
import type { StoredObject } from '@plinth/api';
import { type CachedBytes, type DeleteOptions, type GetOptions, type ListOptions, type ListResult, type Store, type UpdateFunc, type UpdateOptions, type Watcher, type WatchEvent, type WatchOptions, wholeObjects } from '@plinth/storage';

/** Objects → `apiVersion` objects, in order (see CustomResourceConverter). */
export type AsyncConvert = (objs: readonly StoredObject[], apiVersion: string) => Promise<StoredObject[]>;

export interface AsyncConvertingStoreOptions {
  convert: AsyncConvert;
  /** The served version's apiVersion and kind. */
  apiVersion: string;
  kind: string;
  /** The storage version's apiVersion: what writes store. */
  storageApiVersion: string;
  /** Told why a watch ended on a failed conversion (kube logs `unable to encode watch object`). */
  onWatchError?: (error: unknown) => void;
}

export class AsyncConvertingStore implements Store {
  readonly #inner: Store;
  readonly #opts: AsyncConvertingStoreOptions;
  /** The converted event of each source event (shared by this version's watchers: one call each). */
  readonly #events = new WeakMap<WatchEvent, Promise<WatchEvent>>();

  constructor(inner: Store, opts: AsyncConvertingStoreOptions) {
    this.#inner = inner;
    this.#opts = opts;
  }

  #bytes: CachedBytes | undefined;

  /**
   * The inner store's stored bytes, for the storage version served through this store: bytes
   * leave as they are (only objects stored as that very version are served as bytes), and what
   * comes back as objects is converted as get() and list() convert it.
   */
  get cachedBytes(): CachedBytes | undefined {
    const inner = this.#inner.cachedBytes;
    if (!inner) return undefined;
    return (this.#bytes ??= {
      apiVersion: inner.apiVersion,
      kind: inner.kind,
      getJson: async (key, opts, readDefaults) => {
        const r = await inner.getJson(key, opts, readDefaults);
        return typeof r === 'string' ? r : this.#from(r);
      },
      listJson: async (prefix, opts, readDefaults) => {
        const r = await inner.listJson(prefix, opts, readDefaults);
        return 'itemsJson' in r ? r : this.#fromList(r);
      },
    });
  }

  async #one(obj: StoredObject, apiVersion: string): Promise<StoredObject> {
    if (obj.apiVersion === apiVersion) return obj;
    return (await this.#opts.convert([obj], apiVersion))[0]!;
  }

  #from(obj: StoredObject): Promise<StoredObject> {
    return this.#one(obj, this.#opts.apiVersion);
  }

  #to(obj: StoredObject): Promise<StoredObject> {
    return this.#one({ ...obj, apiVersion: this.#opts.apiVersion, kind: this.#opts.kind }, this.#opts.storageApiVersion);
  }

  async create(key: string, obj: StoredObject, opts?: { dryRun?: boolean }): Promise<StoredObject> {
    return this.#from(await this.#inner.create(key, await this.#to(obj), opts));
  }

  async get(key: string, opts?: GetOptions): Promise<StoredObject> {
    return this.#from(await this.#inner.get(key, opts));
  }

  async list(prefix: string, opts?: ListOptions): Promise<ListResult> {
    return this.#fromList(await this.#inner.list(prefix, wholeObjects(opts)));
  }

  async #fromList(r: ListResult): Promise<ListResult> {
    if (r.items.every((o) => o.apiVersion === this.#opts.apiVersion)) return r;
    // One review for the page; converted items are new objects, the others stay shared.
    return { ...r, items: await this.#opts.convert(r.items, this.#opts.apiVersion) };
  }

  async guaranteedUpdate(key: string, tryUpdate: UpdateFunc, opts?: UpdateOptions): Promise<StoredObject> {
    // A suggestion in the served version would need a conversion to be checked: read instead.
    let inner: UpdateOptions | undefined = opts;
    if (opts?.suggestion && opts.suggestion.apiVersion !== this.#opts.storageApiVersion) {
      const { suggestion: _s, ...rest } = opts;
      inner = rest;
    }
    const out = await this.#inner.guaranteedUpdate(
      key,
      async (current) => {
        const mine = current ? await this.#from(current) : undefined;
        const next = await tryUpdate(mine);
        // Returning the current object itself means "no write": keep that meaning.
        return next === mine && current ? current : this.#to(next);
      },
      inner,
    );
    return this.#from(out);
  }

  async delete(key: string, opts?: DeleteOptions): Promise<StoredObject> {
    let inner: DeleteOptions | undefined = opts;
    if (opts) {
      const validate = opts.validateDeletion;
      const { suggestion: _s, ...rest } = opts;
      inner = { ...rest, ...(validate ? { validateDeletion: async (cur: StoredObject) => validate(await this.#from(cur)) } : {}) };
    }
    return this.#from(await this.#inner.delete(key, inner));
  }

  async watch(keyOrPrefix: string, opts?: WatchOptions): Promise<Watcher> {
    const w = await this.#inner.watch(keyOrPrefix, opts);
    const { apiVersion, kind } = this.#opts;
    /** The event as is, when it needs no conversion. */
    const ready = (e: WatchEvent): WatchEvent | undefined => {
      if (e.type === 'ERROR') return e;
      if (e.type === 'BOOKMARK') return { ...e, object: { apiVersion, kind, metadata: { resourceVersion: e.object.metadata.resourceVersion } } as StoredObject };
      return e.object.apiVersion === apiVersion ? e : undefined;
    };
    const converted = (e: WatchEvent): Promise<WatchEvent> => {
      let p = this.#events.get(e);
      if (!p) {
        if (e.type === 'ERROR') return Promise.resolve(e);
        p = this.#from(e.object).then((object) => ({ ...e, object }));
        this.#events.set(e, p);
      }
      return p;
    };
    /** An event poll() found that needs converting: next() takes it first. */
    let held: WatchEvent | undefined;
    let ended = false;
    return {
      next: async () => {
        if (ended) return undefined;
        const e = held ?? (await w.next());
        held = undefined;
        if (!e) return undefined;
        const r = ready(e);
        if (r) return r;
        try {
          return await converted(e);
        } catch (err) {
          ended = true;
          this.#opts.onWatchError?.(err);
          w.stop();
          return undefined;
        }
      },
      poll: () => {
        if (ended || held) return undefined;
        const e = w.poll();
        if (!e) return undefined;
        const r = ready(e);
        if (!r) held = e;
        return r;
      },
      stop: () => w.stop(),
    };
  }

  currentRevision(): Promise<number> {
    return this.#inner.currentRevision();
  }

  compact(revision: number): Promise<void> {
    return this.#inner.compact(revision);
  }

  /** The inner store is shared; closing it is its owner's business. */
  async close(): Promise<void> {}
}
