/** A bounded event queue behind the `Watcher` interface. */
import type { WatchEvent, Watcher } from './interface.js';

export class QueueWatcher implements Watcher {
  readonly #queue: WatchEvent[] = [];
  #head = 0;
  #waiter: ((e: WatchEvent | undefined) => void) | undefined;
  #ended = false;
  readonly #limit: number;
  readonly #onStop: () => void;

  /** `limit`: events buffered before the watcher is considered too slow and dropped. */
  constructor(limit: number, onStop: () => void) {
    this.#limit = limit;
    this.#onStop = onStop;
  }

  get ended(): boolean {
    return this.#ended;
  }

  /** Queues an event; drops the watcher (ends it) when its consumer is too far behind. */
  push(e: WatchEvent): void {
    if (this.#ended) return;
    if (this.#waiter) {
      const w = this.#waiter;
      this.#waiter = undefined;
      w(e);
      return;
    }
    if (this.#queue.length - this.#head >= this.#limit) {
      this.stop();
      return;
    }
    this.#queue.push(e);
  }

  /** Delivers what is queued, then ends. */
  end(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#onStop();
    if (this.#waiter) {
      const w = this.#waiter;
      this.#waiter = undefined;
      w(undefined);
    }
  }

  next(): Promise<WatchEvent | undefined> {
    if (this.#head < this.#queue.length) {
      const e = this.#queue[this.#head++]!;
      if (this.#head > 1024 && this.#head * 2 > this.#queue.length) {
        this.#queue.splice(0, this.#head);
        this.#head = 0;
      }
      return Promise.resolve(e);
    }
    if (this.#ended) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      this.#waiter = resolve;
    });
  }

  drain(): WatchEvent[] {
    if (this.#head >= this.#queue.length) return [];
    const out = this.#queue.slice(this.#head);
    this.#queue.length = 0;
    this.#head = 0;
    return out;
  }

  /** Ends the watch now, discarding what is queued. */
  stop(): void {
    this.#queue.length = 0;
    this.#head = 0;
    this.end();
  }
}
