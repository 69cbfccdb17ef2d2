/**
 * The `Watcher` every store hands out: initial events pulled from a source as the consumer reads
 * them (never materialised per watcher), then live events from a queue bounded in events and in
 * bytes. A consumer that falls behind the bound is dropped (its watch ends; the client re-watches),
 * so one slow or stalled client can never hold an unbounded share of the server's memory.
 */
import type { WatchEvent, Watcher } from './interface.js';

/** How far a watcher's consumer may fall behind live events before it is dropped. */
export interface WatcherLimits {
  /** Queued live events. */
  events: number;
  /** Queued live events' stored bytes. */
  bytes: number;
}

export const DEFAULT_WATCHER_LIMITS: WatcherLimits = { events: 10_000, bytes: 64 * 1024 * 1024 };

/**
 * Where a watch's initial (synthetic ADDED) events come from: a snapshot the source walks as it
 * is asked. `poll()` gives what is ready now; `fill()` loads more (pages from etcd) and resolves
 * when `poll()` may give something again or the source is done. A source that fails yields one
 * ERROR event and is done.
 */
export interface InitialEvents {
  readonly done: boolean;
  poll(): WatchEvent | undefined;
  fill(): Promise<void>;
  /** Releases the snapshot (the watch ended or the source is exhausted). */
  close(): void;
}

export class QueueWatcher implements Watcher {
  #initial: InitialEvents | undefined;
  readonly #queue: WatchEvent[] = [];
  #head = 0;
  #queuedBytes = 0;
  #waiter: ((e: WatchEvent | undefined) => void) | undefined;
  /** A consumer's wake-up armed by notify(): called once, by the next push or the end. */
  #notify: (() => void) | undefined;
  #ended = false;
  readonly #limits: WatcherLimits;
  readonly #onStop: () => void;

  constructor(limits: WatcherLimits, onStop: () => void, initial?: InitialEvents) {
    this.#limits = limits;
    this.#onStop = onStop;
    this.#initial = initial;
  }

  get ended(): boolean {
    return this.#ended;
  }

  /** Queues a live event; drops the watcher (ends it) when its consumer is too far behind. */
  push(e: WatchEvent): void {
    if (this.#ended) return;
    if (this.#waiter && !this.#initial) {
      const w = this.#waiter;
      this.#waiter = undefined;
      w(e);
      return;
    }
    const size = eventSize(e);
    if (this.#queue.length - this.#head >= this.#limits.events || this.#queuedBytes + size > this.#limits.bytes) {
      this.stop();
      return;
    }
    this.#queue.push(e);
    this.#queuedBytes += size;
    const wake = this.#notify;
    if (wake) {
      this.#notify = undefined;
      wake();
    }
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
    const wake = this.#notify;
    if (wake) {
      this.#notify = undefined;
      wake();
    }
  }

  poll(): WatchEvent | undefined {
    if (this.#initial) {
      const e = this.#initial.poll();
      if (e) return this.#fromInitial(e);
      if (!this.#initial.done) return undefined;
      this.#closeInitial();
    }
    return this.#dequeue();
  }

  /**
   * Arms `wake` to be called once, synchronously, by the next live event queued or by the end
   * (then poll() gives the event, or nothing once ended): a consumer serving many watches waits
   * without a promise per watch and event. False, and nothing armed, when poll() may give an event
   * now, initial events are still to come, the watch has ended, or next() is waiting.
   */
  notify(wake: () => void): boolean {
    if (this.#ended || this.#initial || this.#waiter || this.#head < this.#queue.length) return false;
    this.#notify = wake;
    return true;
  }

  async next(): Promise<WatchEvent | undefined> {
    while (this.#initial) {
      const e = this.poll();
      if (e) return e;
      if (!this.#initial) break;
      if (this.#ended) return undefined;
      await this.#initial.fill();
    }
    const e = this.#dequeue();
    if (e) return e;
    if (this.#ended) return undefined;
    return new Promise((resolve) => {
      this.#waiter = resolve;
    });
  }

  /** Ends the watch now, discarding what is queued. */
  stop(): void {
    this.#queue.length = 0;
    this.#head = 0;
    this.#queuedBytes = 0;
    this.#closeInitial();
    this.end();
  }

  /** An initial event; a failed snapshot ends the watch after its ERROR. */
  #fromInitial(e: WatchEvent): WatchEvent {
    if (e.type === 'ERROR') this.stop();
    return e;
  }

  #closeInitial(): void {
    this.#initial?.close();
    this.#initial = undefined;
  }

  #dequeue(): WatchEvent | undefined {
    if (this.#head >= this.#queue.length) return undefined;
    const e = this.#queue[this.#head]!;
    this.#queue[this.#head++] = undefined as unknown as WatchEvent;
    this.#queuedBytes -= eventSize(e);
    if (this.#head > 1024 && this.#head * 2 > this.#queue.length) {
      this.#queue.splice(0, this.#head);
      this.#head = 0;
    }
    return e;
  }
}

function eventSize(e: WatchEvent): number {
  return e.type === 'ERROR' ? 0 : (e.size ?? 0);
}
