/**
 * The storage a served version that is not the storage version works against (kube's codec at
 * the storage boundary): every object written is converted to the storage version, every object
 * read, listed or watched is converted to the served version. The registry store above it then
 * defaults, validates, admits and tracks managedFields in the served version, as kube does for
 * the request's version.
 */
import type { StoredObject, VersionConversion } from '@plinth/api';
import { type CachedBytes, type DeleteOptions, type GetOptions, type ListOptions, type ListResult, type Store, type UpdateFunc, type UpdateOptions, type Watcher, type WatchEvent, type WatchOptions, wholeObjects } from '@plinth/storage';

export class ConvertingStore implements Store {
  readonly #inner: Store;
  readonly #conv: VersionConversion;
  /**
   * The converted event of each source event: the watch cache hands one event object to every
   * watcher, so each version converts (and the watch handler encodes) it once.
   */
  readonly #events = new WeakMap<WatchEvent, WatchEvent>();

  readonly #type: { apiVersion: string; kind: string };

  /** `type`: the served version's apiVersion and kind. */
  constructor(inner: Store, conversion: VersionConversion, type: { apiVersion: string; kind: string }) {
    this.#inner = inner;
    this.#conv = conversion;
    this.#type = type;
  }

  /**
   * None: every object read is converted to another version than the one stored, so the stored
   * bytes never answer a read of this version.
   */
  readonly cachedBytes: CachedBytes | undefined = undefined;

  #from(obj: StoredObject): StoredObject {
    return this.#conv.fromStorage(obj);
  }

  #to(obj: StoredObject): StoredObject {
    return this.#conv.toStorage(obj);
  }

  async create(key: string, obj: StoredObject, opts?: { dryRun?: boolean }): Promise<StoredObject> {
    return this.#from(await this.#inner.create(key, this.#to(obj), opts));
  }

  async get(key: string, opts?: GetOptions): Promise<StoredObject> {
    return this.#from(await this.#inner.get(key, opts));
  }

  async list(prefix: string, opts?: ListOptions): Promise<ListResult> {
    const r = await this.#inner.list(prefix, wholeObjects(opts));
    // Converted items are new objects, but they may share nested values with cached ones.
    return { ...r, items: r.items.map((o) => this.#from(o)) };
  }

  async guaranteedUpdate(key: string, tryUpdate: UpdateFunc, opts?: UpdateOptions): Promise<StoredObject> {
    const inner: UpdateOptions | undefined = opts?.suggestion ? { ...opts, suggestion: this.#to(opts.suggestion) } : opts;
    const out = await this.#inner.guaranteedUpdate(
      key,
      async (current) => {
        const mine = current ? this.#from(current) : undefined;
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
      inner = {
        ...opts,
        ...(opts.suggestion ? { suggestion: this.#to(opts.suggestion) } : {}),
        ...(validate ? { validateDeletion: (cur: StoredObject) => validate(this.#from(cur)) } : {}),
      };
    }
    return this.#from(await this.#inner.delete(key, inner));
  }

  async watch(keyOrPrefix: string, opts?: WatchOptions): Promise<Watcher> {
    const w = await this.#inner.watch(keyOrPrefix, opts);
    const convert = (e: WatchEvent | undefined): WatchEvent | undefined => {
      if (!e || e.type === 'ERROR') return e;
      let out = this.#events.get(e);
      if (!out) {
        out = { ...e, object: e.type === 'BOOKMARK' ? this.#bookmark(e.object) : this.#from(e.object) };
        this.#events.set(e, out);
      }
      return out;
    };
    return {
      next: async () => convert(await w.next()),
      poll: () => convert(w.poll()),
      stop: () => w.stop(),
    };
  }

  /** A bookmark carries only metadata.resourceVersion; it gets the served version's type. */
  #bookmark(obj: StoredObject): StoredObject {
    return { ...this.#type, metadata: { resourceVersion: obj.metadata.resourceVersion } } as StoredObject;
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
