/**
 * A small keyed work queue for in-process controllers (client-go's rate-limited workqueue, reduced
 * to what they need): a key added while queued or being processed is processed once more after,
 * never twice at once; keys run one at a time; a failed key is retried with a per-key backoff
 * (5 ms doubling to `maxBackoffMs`, as kube's default controller rate limiter) until it succeeds.
 */
import type { Logger } from '../log.js';

export interface WorkQueueOptions {
  /** Handles one key; a throw retries it later. */
  process(key: string): Promise<void>;
  log: Logger;
  /** The controller's name, for the log. */
  name: string;
  maxBackoffMs?: number;
}

export interface WorkQueue {
  add(key: string): void;
  stop(): void;
}

export function createWorkQueue(opts: WorkQueueOptions): WorkQueue {
  const maxBackoffMs = opts.maxBackoffMs ?? 10_000;
  const pending = new Set<string>();
  const failures = new Map<string, number>();
  const timers = new Map<string, NodeJS.Timeout>();
  let running = false;
  let stopped = false;

  const drain = async (): Promise<void> => {
    if (running) return;
    running = true;
    try {
      while (!stopped && pending.size > 0) {
        const key = pending.values().next().value as string;
        pending.delete(key);
        try {
          await opts.process(key);
          failures.delete(key);
        } catch (e) {
          const n = (failures.get(key) ?? 0) + 1;
          failures.set(key, n);
          opts.log.v(2, `${opts.name}: sync failed, retrying`, { key, error: String(e) });
          retryLater(key, Math.min(5 * 2 ** (n - 1), maxBackoffMs));
        }
      }
    } finally {
      running = false;
    }
  };

  const retryLater = (key: string, ms: number): void => {
    if (stopped || timers.has(key)) return;
    const t = setTimeout(() => {
      timers.delete(key);
      add(key);
    }, ms);
    t.unref();
    timers.set(key, t);
  };

  const add = (key: string): void => {
    if (stopped) return;
    pending.add(key);
    void drain();
  };

  return {
    add,
    stop() {
      stopped = true;
      for (const t of timers.values()) clearTimeout(t);
      timers.clear();
      pending.clear();
    },
  };
}
