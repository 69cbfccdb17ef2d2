/**
 * The garbage collector's metrics as kube-controller-manager 1.24 exports them:
 * `garbagecollector_controller_resources_sync_error_total` (pkg/controller/garbagecollector/metrics)
 * and client-go's workqueue metrics (component-base metrics/prometheus/workqueue) for its queues,
 * labelled by queue name (`garbage_collector_attempt_to_delete`, `..._attempt_to_orphan`,
 * `..._graph_changes`).
 */
import type { CounterSeries } from './fast.js';
import { exponentialBuckets, type KubeRegistry } from './registry.js';

/** What a queue reports (structurally the GC queue's QueueMetricsSink). */
export interface WorkqueueSink {
  add(): void;
  retry(): void;
  queued(seconds: number): void;
  worked(seconds: number): void;
}

/** A running queue's state, read at scrape time. */
export interface WorkqueueState {
  readonly name: string;
  depth(): number;
  /** Start times (ms) of the items being processed. */
  inFlight(): number[];
}

export interface GarbageCollectorMetrics {
  syncErrors: CounterSeries;
  /** The sink of the queue `name`. */
  queue(name: string): WorkqueueSink;
  /** Reports the queue's depth and in-flight work until the returned function is called. */
  attach(queue: WorkqueueState): () => void;
}

export function createGarbageCollectorMetrics(registry: KubeRegistry): GarbageCollectorMetrics {
  const syncErrors = registry.counter({ name: 'garbagecollector_controller_resources_sync_error_total', help: 'Number of garbage collector resources sync errors', labelNames: [], stability: 'ALPHA' });
  const attached = new Set<WorkqueueState>();
  const labels = ['name'] as const;
  registry.gauge({
    name: 'workqueue_depth',
    help: 'Current depth of workqueue',
    labelNames: labels,
    stability: 'ALPHA',
    collect() {
      for (const q of attached) this.set({ name: q.name }, q.depth());
    },
  });
  const adds = registry.counter({ name: 'workqueue_adds_total', help: 'Total number of adds handled by workqueue', labelNames: labels, stability: 'ALPHA' });
  const retries = registry.counter({ name: 'workqueue_retries_total', help: 'Total number of retries handled by workqueue', labelNames: labels, stability: 'ALPHA' });
  const buckets = exponentialBuckets(10e-9, 10, 10);
  const queueDuration = registry.histogram({ name: 'workqueue_queue_duration_seconds', help: 'How long in seconds an item stays in workqueue before being requested.', labelNames: labels, stability: 'ALPHA', buckets });
  const workDuration = registry.histogram({ name: 'workqueue_work_duration_seconds', help: 'How long in seconds processing an item from workqueue takes.', labelNames: labels, stability: 'ALPHA', buckets });
  registry.gauge({
    name: 'workqueue_unfinished_work_seconds',
    help: 'How many seconds of work has done that is in progress and hasn\'t been observed by work_duration. Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases.',
    labelNames: labels,
    stability: 'ALPHA',
    collect() {
      const now = Date.now();
      for (const q of attached) this.set({ name: q.name }, q.inFlight().reduce((s, t) => s + (now - t) / 1000, 0));
    },
  });
  registry.gauge({
    name: 'workqueue_longest_running_processor_seconds',
    help: 'How many seconds has the longest running processor for workqueue been running.',
    labelNames: labels,
    stability: 'ALPHA',
    collect() {
      const now = Date.now();
      for (const q of attached) this.set({ name: q.name }, q.inFlight().reduce((m, t) => Math.max(m, (now - t) / 1000), 0));
    },
  });
  return {
    syncErrors: syncErrors.labels(),
    queue(name) {
      const a = adds.labels(name);
      const r = retries.labels(name);
      const qd = queueDuration.labels(name);
      const wd = workDuration.labels(name);
      return { add: () => a.inc(), retry: () => r.inc(), queued: (s) => qd.observe(s), worked: (s) => wd.observe(s) };
    },
    attach(queue) {
      attached.add(queue);
      return () => attached.delete(queue);
    },
  };
}
