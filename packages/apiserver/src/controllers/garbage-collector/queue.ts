/**
 * The garbage collector's work queues (client-go's rate-limited workqueue as kube's GC uses it):
 * a key is queued once however often it is added, never processed by two workers at once (added
 * while processing, it runs again after); `workers` keys run concurrently (kube's
 * --concurrent-gc-syncs); `addRateLimited` retries a key after a per-key exponential backoff
 * (5 ms doubling to 1,000 s, kube's DefaultControllerRateLimiter's per-item limiter) that
 * `forget` resets.
 */
import type { Logger } from '../../log.js';

/** What the queue reports, as client-go's workqueue metrics provider sees it. */
export interface QueueMetricsSink {
  add(): void;
  retry(): void;
  /** Seconds a key waited from being queued to being taken. */
  queued(seconds: number): void;
  /** Seconds a key was processed. */
  worked(seconds: number): void;
}

export interface GCQueueOptions {
  /** The workqueue name (kube's metrics label). */
  name: string;
  workers: number;
  /** Processes one key; returns whether to requeue it rate-limited (kube's workQueueItemAction). */
  process(key: string): Promise<'forget' | 'requeue'>;
  log: Logger;
  maxBackoffMs?: number;
  metrics?: QueueMetricsSink;
}

export interface GCQueue {
  readonly name: string;
  add(key: string): void;
  addRateLimited(key: string): void;
  /** Starts the workers (keys added before wait until then, as kube's queues fill before Run). */
  run(): void;
  stop(): void;
  /** Keys queued, not yet taken. */
  depth(): number;
  /** Start times (ms) of the keys being processed. */
  inFlight(): number[];
}

export function createGCQueue(opts: GCQueueOptions): GCQueue {
  const maxBackoffMs = opts.maxBackoffMs ?? 1_000_000;
  /** Queued keys with the time they were queued. */
  const queued = new Map<string, number>();
  /** Keys being processed with their start time. */
  const processing = new Map<string, number>();
  /** Keys added while processing: queued again when done. */
  const dirty = new Set<string>();
  const failures = new Map<string, number>();
  const timers = new Map<string, NodeJS.Timeout>();
  let active = 0;
  let running = false;
  let stopped = false;

  const add = (key: string): void => {
    if (stopped) return;
    if (processing.has(key)) {
      dirty.add(key);
      return;
    }
    if (queued.has(key)) return;
    opts.metrics?.add();
    queued.set(key, performance.now());
    pump();
  };

  const pump = (): void => {
    if (!running) return;
    while (!stopped && active < opts.workers && queued.size > 0) {
      const [key, at] = queued.entries().next().value as [string, number];
      queued.delete(key);
      active++;
      void work(key, at);
    }
  };

  const work = async (key: string, queuedAt: number): Promise<void> => {
    const start = performance.now();
    opts.metrics?.queued((start - queuedAt) / 1000);
    processing.set(key, Date.now());
    let action: 'forget' | 'requeue';
    try {
      action = await opts.process(key);
    } catch (e) {
      opts.log.v(2, `${opts.name}: sync failed, retrying`, { key, error: String(e) });
      action = 'requeue';
    }
    opts.metrics?.worked((performance.now() - start) / 1000);
    processing.delete(key);
    active--;
    if (action === 'forget') failures.delete(key);
    else addRateLimited(key);
    if (dirty.delete(key)) add(key);
    pump();
  };

  const addRateLimited = (key: string): void => {
    if (stopped || timers.has(key)) return;
    const n = (failures.get(key) ?? 0) + 1;
    failures.set(key, n);
    opts.metrics?.retry();
    const t = setTimeout(() => {
      timers.delete(key);
      add(key);
    }, Math.min(5 * 2 ** Math.min(n - 1, 30), maxBackoffMs));
    t.unref();
    timers.set(key, t);
  };

  return {
    name: opts.name,
    add,
    addRateLimited,
    run() {
      running = true;
      pump();
    },
    stop() {
      stopped = true;
      for (const t of timers.values()) clearTimeout(t);
      timers.clear();
      queued.clear();
      dirty.clear();
    },
    depth: () => queued.size,
    inFlight: () => [...processing.values()],
  };
}
