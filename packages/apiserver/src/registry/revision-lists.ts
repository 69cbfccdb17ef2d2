/**
 * The informer listers of admission plugins (LimitRanger, ResourceQuota, Priority, the webhook
 * dispatchers, ...) over the watch cache: a list at resourceVersion 0 is the cache's state at the
 * revision it has applied, so a list read at that revision is reused until the cache applies
 * another event of the resource. kube's listers read an in-memory index; a list through the watch
 * cache for each plugin of each request (LimitRanger alone lists twice per pod) cost more than
 * some plugins' own checks. Only small lists are kept (a plugin's LimitRanges, quotas, priority
 * classes, webhook configurations), at most `maxEntries` of them.
 */
import type { StoredObject } from '@plinth/api';
import { isKeyNotFound, type Store } from '@plinth/storage';

/** A store whose state is known by a revision (the watch cache), undefined while it has none. */
export interface RevisionedStore extends Pick<Store, 'list' | 'get'> {
  readonly appliedRevision: number | undefined;
}

export interface RevisionListsOptions {
  /** Lists kept at once (default 1024); past it, all are dropped. */
  maxEntries?: number;
  /** Lists longer than this are not kept (default 64). */
  maxItems?: number;
}

/**
 * `list(store, prefix)`: the items under `prefix` at resourceVersion 0, as a new array each call
 * (the objects are the cache's shared ones: never changed by their readers).
 */
export function createRevisionLists(opts: RevisionListsOptions = {}): (store: RevisionedStore, prefix: string) => Promise<StoredObject[]> {
  const maxEntries = opts.maxEntries ?? 1024;
  const maxItems = opts.maxItems ?? 64;
  const kept = new Map<string, { store: RevisionedStore; revision: number; items: StoredObject[] }>();
  return async (store, prefix) => {
    const revision = store.appliedRevision;
    const hit = kept.get(prefix);
    if (revision !== undefined && hit?.store === store && hit.revision === revision) return hit.items.slice();
    // Read after taking the revision: what the list returns is that revision's state or a later
    // one, so a later applied revision never finds it.
    const { items } = await store.list(prefix, { resourceVersion: '0' });
    if (revision === undefined || items.length > maxItems) {
      kept.delete(prefix);
      return items;
    }
    if (kept.size >= maxEntries) kept.clear();
    kept.set(prefix, { store, revision, items: items.slice() });
    return items;
  };
}

/**
 * `get(store, key)`: the object at `key` at resourceVersion 0, or undefined when the cache has
 * none; an object found is reused while the cache's applied revision holds (the cache keeps its
 * decoded objects only weakly: a namespace or service account looked up for every pod was decoded
 * again after each garbage collection). At most `maxEntries` kept.
 */
export function createRevisionGets(opts: { maxEntries?: number } = {}): (store: RevisionedStore, key: string) => Promise<StoredObject | undefined> {
  const maxEntries = opts.maxEntries ?? 1024;
  const kept = new Map<string, { store: RevisionedStore; revision: number; obj: StoredObject }>();
  return async (store, key) => {
    const revision = store.appliedRevision;
    const hit = kept.get(key);
    if (revision !== undefined && hit?.store === store && hit.revision === revision) return hit.obj;
    let obj: StoredObject;
    try {
      obj = await store.get(key, { resourceVersion: '0' });
    } catch (e) {
      kept.delete(key);
      if (isKeyNotFound(e)) return undefined;
      throw e;
    }
    if (revision === undefined) return obj;
    if (kept.size >= maxEntries) kept.clear();
    kept.set(key, { store, revision, obj });
    return obj;
  };
}
