/**
 * A minimal list-then-watch loop for in-process controllers: calls `onObject` for every object on
 * each (re)list and for every watch event, and relists when the watch ends.
 */
import type { StoredObject } from '@plinth/api';
import type { WatchEventType } from '@plinth/storage';
import type { ResourceStore, RequestScope } from '../registry/store.js';
import type { Logger } from '../log.js';

export interface InformerOptions {
  store: ResourceStore;
  scope: RequestScope;
  onObject(type: WatchEventType, obj: StoredObject): Promise<void> | void;
  /**
   * Called with everything each (re)list returns, instead of `onObject('ADDED')` per item — for
   * caches that must also forget objects deleted while no watch was open.
   */
  onList?(items: StoredObject[]): Promise<void> | void;
  log: Logger;
  /** Relist period, so missed work is retried (ms). */
  resyncMs: number;
  /** Only objects this selects are listed and watched (a field/label selector's predicate). */
  predicate?: (obj: StoredObject) => boolean;
  /**
   * Only changes matter (e.g. deletions): each (re)list reads one object for its resourceVersion
   * instead of every object, so a large collection is never decoded as a whole for nothing.
   */
  changesOnly?: boolean;
  /**
   * Only events of these types reach onObject (default: all). Others are skipped without their
   * object being decoded: the watch cache decodes an event's object only when someone reads it.
   */
  types?: readonly WatchEventType[];
  /**
   * Only metadata is read (kube's metadata informers, e.g. the garbage collector's): lists and
   * watch events hand onObject the object with apiVersion, kind and metadata alone (without
   * managedFields) where the store can decode just those (the watch cache), so the rest of every
   * object is not decoded for nothing (a start-up over 100,000 pods decoded them all at once).
   */
  metadataOnly?: boolean;
  /**
   * A watch event whose stored JSON this rejects is skipped without being decoded (where the store
   * keeps the text: the watch cache). It must accept every event that can matter: a cheap test for
   * a member name the handler needs, e.g. `"persistentVolumeClaim"`. Lists are not filtered.
   */
  textFilter?: (json: string, type: WatchEventType, key: string | undefined) => boolean;
  /** Called when a list or watch fails (before the retry), e.g. to count sync errors. */
  onError?(e: unknown): void;
}

export interface Informer {
  stop(): void;
}

export function runInformer(opts: InformerOptions): Informer {
  let stopped = false;
  let stopWatch: (() => void) | undefined;
  let wake: (() => void) | undefined;
  const sleep = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      const t = setTimeout(resolve, ms);
      t.unref();
      wake = () => {
        clearTimeout(t);
        resolve();
      };
    });

  const handle = async (type: WatchEventType, obj: StoredObject): Promise<void> => {
    try {
      await opts.onObject(type, obj);
    } catch (e) {
      opts.log.v(2, 'controller: handler failed', { resource: opts.store.def.plural, name: obj.metadata.name, error: String(e) });
    }
  };

  /** Lists and replays the list; returns its resourceVersion, keeping nothing of it. */
  const relist = async (selector: { predicate?: (obj: StoredObject) => boolean; hasSelector?: boolean }): Promise<string> => {
    const list = await opts.store.list(opts.scope, opts.changesOnly ? { limit: 1 } : opts.metadataOnly ? { ...selector, metadataOnly: true } : selector);
    if (opts.changesOnly) {
      // Nothing to replay: the watch starts at the list's revision.
    } else if (opts.onList) await opts.onList(list.items);
    else for (const item of list.items) await handle('ADDED', item);
    return list.metadata.resourceVersion ?? '';
  };

  void (async () => {
    while (!stopped) {
      try {
        const selector = opts.predicate ? { predicate: opts.predicate, hasSelector: true } : {};
        // The list lives in its own function: this loop runs as long as the watch, and every
        // object of the list (decoded) was kept alive with it until the next relist.
        const resourceVersion = await relist(selector);
        const watcher = await opts.store.watch(opts.scope, { resourceVersion, ...selector });
        stopWatch = () => watcher.stop();
        const resync = setTimeout(() => watcher.stop(), opts.resyncMs);
        resync.unref();
        for (;;) {
          const e = await watcher.next();
          if (!e || e.type === 'ERROR') break;
          if (e.type === 'BOOKMARK' || (opts.types && !opts.types.includes(e.type))) continue;
          if (opts.textFilter && e.storedJson && !opts.textFilter(e.storedJson(), e.type, e.key)) continue;
          await handle(e.type, opts.metadataOnly && e.partialObject ? e.partialObject() : e.object);
        }
        clearTimeout(resync);
      } catch (e) {
        if (!stopped) {
          opts.log.v(2, 'controller: list/watch failed', { resource: opts.store.def.plural, error: String(e) });
          opts.onError?.(e);
        }
        await sleep(1000);
      }
    }
  })();

  return {
    stop() {
      stopped = true;
      stopWatch?.();
      wake?.();
    },
  };
}
