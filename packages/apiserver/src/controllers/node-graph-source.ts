/**
 * The Node authorizer's source (kube's graph populator informers): one informer per kind — pods,
 * PersistentVolumes, VolumeAttachments — over the registry stores' watch caches, so the graph
 * follows binds, deletions and PV claims within moments and a decision reads only memory.
 */
import type { UserInfo } from '@plinth/api';
import type { NodeGraphKind, NodeGraphSource } from '@plinth/auth';
import type { ResourceStore } from '../registry/store.js';
import type { Logger } from '../log.js';
import { runInformer } from './informer.js';

const READER: UserInfo = { name: 'system:apiserver', groups: ['system:masters'] };

/** Relists this often (a relist replaces the graph's view of the kind, so a missed deletion is forgotten). */
const RESYNC_MS = 10 * 60_000;

export function createNodeGraphSource(deps: { storeOf(kind: NodeGraphKind): ResourceStore; log: Logger }): NodeGraphSource {
  return {
    subscribe(kind, handlers) {
      const informer = runInformer({
        store: deps.storeOf(kind),
        scope: { user: READER, namespace: '' },
        log: deps.log,
        resyncMs: RESYNC_MS,
        onList: (items) => handlers.replace(items),
        onObject: (type, obj) => {
          if (type === 'DELETED') handlers.remove(obj);
          else handlers.upsert(obj);
        },
      });
      return () => informer.stop();
    },
  };
}
