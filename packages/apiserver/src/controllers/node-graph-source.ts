/**
 * The Node authorizer's source (kube's graph populator informers): one informer per kind — pods,
 * PersistentVolumes, VolumeAttachments — over the registry stores' watch caches, so the graph
 * follows binds, deletions and PV claims within moments and a decision reads only memory.
 */
import type { NodeGraphKind, NodeGraphSource } from '@plinth/auth';
import type { ResourceStore } from '../registry/store.js';
import type { Logger } from '../log.js';
import { createInformerSource } from './informer-source.js';

export function createNodeGraphSource(deps: { storeOf(kind: NodeGraphKind): ResourceStore; log: Logger }): NodeGraphSource {
  return createInformerSource(deps);
}
