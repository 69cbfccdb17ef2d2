/**
 * kube-controller-manager 1.24's `garbagecollector` controller, run in-process on the leader:
 * monitors (one informer per deletable resource) build the dependency graph; once every monitor
 * has listed, `--concurrent-gc-syncs` workers each serve the attemptToDelete and attemptToOrphan
 * queues. Nothing is persisted: a new leader rebuilds the graph from its informers' lists, and
 * objects it first sees already deleting with `orphan` / `foregroundDeletion` resume there.
 */
import type { Catalog, ResourceDefinition } from '@plinth/api';
import type { ResourceStore } from '../../registry/store.js';
import type { Logger } from '../../log.js';
import type { GarbageCollectorMetrics } from '../../metrics/index.js';
import { GraphBuilder, eventOf } from './graph-builder.js';
import { createGCClient } from './client.js';
import { createGCQueue } from './queue.js';
import { attemptToDeleteWorker } from './attempt-to-delete.js';
import { attemptToOrphanWorker } from './attempt-to-orphan.js';
import { createEventRecorder } from './events.js';
import { startMonitors } from './monitors.js';
import { logHeapSettled, settleHeapSoon } from '../../malloc.js';

export { GC_USER } from './client.js';
export { GC_EVENT_SOURCE } from './events.js';

export interface GarbageCollectorDeps {
  catalog: Catalog;
  /** The registry store of a served resource version (custom resources come and go). */
  storeOf(def: ResourceDefinition): ResourceStore | undefined;
  /** The store of core/v1 events (the GC's Warning events). */
  events: ResourceStore;
  /** kube's --concurrent-gc-syncs: workers per queue (default 20). */
  workers: number;
  log: Logger;
  metrics?: GarbageCollectorMetrics;
}

/** Starts the garbage collector; returns its stop function. */
export function startGarbageCollector(deps: GarbageCollectorDeps): () => void {
  const { log, metrics } = deps;
  const client = createGCClient({ catalog: deps.catalog, storeOf: deps.storeOf });
  const recorder = createEventRecorder({ events: deps.events, log });
  const queueMetrics = (name: string): { metrics?: ReturnType<GarbageCollectorMetrics['queue']> } => (metrics ? { metrics: metrics.queue(name) } : {});
  const attemptToDelete = createGCQueue({
    name: 'garbage_collector_attempt_to_delete',
    workers: deps.workers,
    log,
    process: (uid) => attemptToDeleteWorker({ builder, client, enqueue: (u) => attemptToDelete.add(u), log }, uid),
    ...queueMetrics('garbage_collector_attempt_to_delete'),
  });
  const attemptToOrphan = createGCQueue({
    name: 'garbage_collector_attempt_to_orphan',
    workers: deps.workers,
    log,
    process: (uid) => attemptToOrphanWorker({ builder, client, log }, uid),
    ...queueMetrics('garbage_collector_attempt_to_orphan'),
  });
  const builder = new GraphBuilder({
    attemptToDelete: (uid) => attemptToDelete.add(uid),
    attemptToDeleteRateLimited: (uid) => attemptToDelete.addRateLimited(uid),
    attemptToOrphan: (uid) => attemptToOrphan.add(uid),
    warn: (object, reason, message) => recorder.event(object, 'Warning', reason, message),
  });
  // Graph changes are applied as they come: the queue's metrics count them, it never has depth.
  const graphChanges = metrics?.queue('garbage_collector_graph_changes');
  const monitors = startMonitors({
    catalog: deps.catalog,
    storeOf: deps.storeOf,
    log,
    onList: (apiVersion, kind, items) => {
      // One change per object listed, as kube's informer adds each.
      if (graphChanges) for (let i = 0; i < items.length; i++) graphChanges.add();
      builder.replace(apiVersion, kind, items);
    },
    onObject: (apiVersion, kind, type, obj) => {
      if (type === 'BOOKMARK' || type === 'ERROR') return;
      graphChanges?.add();
      builder.process(eventOf(type === 'ADDED' ? 'add' : type === 'MODIFIED' ? 'update' : 'delete', obj, apiVersion, kind));
    },
    onError: () => metrics?.syncErrors.inc(),
  });
  const detach = metrics
    ? [metrics.attach(attemptToDelete), metrics.attach(attemptToOrphan), metrics.attach({ name: 'garbage_collector_graph_changes', depth: () => 0, inFlight: () => [] })]
    : [];
  let stopped = false;
  void monitors.synced.then(() => {
    if (stopped) return;
    log.info('Garbage collector: all resource monitors have synced. Proceeding to collect garbage', { resources: monitors.resources().length, nodes: builder.graph.size });
    // The first lists decoded every object's metadata at once: at start-up, that memory goes back.
    settleHeapSoon(logHeapSettled(log));
    attemptToDelete.run();
    attemptToOrphan.run();
  });
  return () => {
    stopped = true;
    monitors.stop();
    attemptToDelete.stop();
    attemptToOrphan.stop();
    for (const d of detach) d();
  };
}
