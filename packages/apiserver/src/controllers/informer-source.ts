/**
 * An authorizer's source of objects (RBAC's roles and bindings, the Node authorizer's graph): one
 * informer per kind over the registry stores' watch caches, so a decision reads only memory.
 */
import type { StoredObject, UserInfo } from '@plinth/api';
import type { ResourceStore } from '../registry/store.js';
import type { Logger } from '../log.js';
import { runInformer } from './informer.js';

const READER: UserInfo = { name: 'system:apiserver', groups: ['system:masters'] };

/** Relists this often (a relist replaces what was known, so a missed deletion is forgotten). */
const RESYNC_MS = 10 * 60_000;

/** What a subscriber is told: everything on each (re)list, then each change. */
export interface SourceHandlers {
  replace(items: StoredObject[]): void;
  upsert(obj: StoredObject): void;
  remove(obj: StoredObject): void;
  /** A test of a watch event's stored JSON and key before it is decoded: false skips it. */
  mayMatter?(json: string, type: 'ADDED' | 'MODIFIED' | 'DELETED', key: string | undefined): boolean;
}

export function createInformerSource<K extends string>(deps: { storeOf(kind: K): ResourceStore; log: Logger }): { subscribe(kind: K, handlers: SourceHandlers): () => void } {
  return {
    subscribe(kind, handlers) {
      const informer = runInformer({
        store: deps.storeOf(kind),
        scope: { user: READER, namespace: '' },
        log: deps.log,
        resyncMs: RESYNC_MS,
        onList: (items) => handlers.replace(items),
        ...(handlers.mayMatter ? { textFilter: (json, type, key) => handlers.mayMatter!(json, type as 'ADDED' | 'MODIFIED' | 'DELETED', key) } : {}),
        onObject: (type, obj) => {
          if (type === 'DELETED') handlers.remove(obj);
          else handlers.upsert(obj);
        },
      });
      return () => informer.stop();
    },
  };
}
