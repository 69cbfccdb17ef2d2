/**
 * client-go's workqueue in small: a key is queued once however often it is added, and while a
 * worker processes it a new add re-queues it after; `workers` keys are processed at a time.
 */
export interface WorkQueue {
  add(key: string): void;
  /** Keys waiting or being processed. */
  readonly size: number;
  stop(): void;
}

/** A work queue processing keys with `process`, `workers` at a time; a failed key is retried after 1 s. */
export function createWorkQueue(workers: number, process: (key: string) => Promise<void>, onError: (key: string, e: unknown) => void): WorkQueue {
  const waiting = new Set<string>();
  const active = new Set<string>();
  const dirty = new Set<string>();
  let running = 0;
  let stopped = false;
  const pump = (): void => {
    while (!stopped && running < workers && waiting.size > 0) {
      const key = waiting.values().next().value as string;
      waiting.delete(key);
      active.add(key);
      running++;
      process(key)
        .catch((e: unknown) => {
          onError(key, e);
          // A failed sync is retried (client-go's rate-limited requeue, here after 1 s).
          setTimeout(() => queue.add(key), 1000).unref();
        })
        .finally(() => {
          running--;
          active.delete(key);
          if (dirty.delete(key)) waiting.add(key);
          pump();
        });
    }
  };
  const queue: WorkQueue = {
    add(key) {
      if (active.has(key)) dirty.add(key);
      else waiting.add(key);
      pump();
    },
    get size() {
      return waiting.size + active.size;
    },
    stop() {
      stopped = true;
    },
  };
  return queue;
}
