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

/** A watcher's place in a SharedFeed: the absolute position of its next event. */
interface FeedMember {
  pos: number;
  /** The feed's end when the watcher joined: events from there on are its own. */
  readonly joined: number;
  readonly queue: QueueWatcher;
}

/** A shared feed keeps at least this many consumed events before it drops them (one pass). */
const FEED_TRIM = 4096;
/** Appends between two passes over the members for the events bound (the bytes bound: none). */
const FEED_SCAN_EVERY = 64;

/**
 * One run of live events for many watchers that get the same events (a watch cache's watchers
 * of one key or prefix without a selector: a collection's informers, a fan-out's clients). An
 * event costs one append, not one queue push per watcher: with a thousand watchers that is what
 * a fan-out's delivery cost was made of (~0.3 µs a watcher, most of it cache misses on their
 * queues). Each watcher reads the feed at its own position (QueueWatcher.attach).
 *
 * The limits hold per watcher as for a queue of its own: the bytes and the events between a
 * watcher's position and the end. A pass over the members ends those too far behind: at once
 * when the feed holds more than the bytes bound past the slowest watcher, and at most every 64
 * appends for the events bound (so a watcher may run up to 64 events past it before it ends).
 * Events every watcher has read are dropped by the same pass.
 */
export class SharedFeed {
  #events: WatchEvent[] = [];
  /** #cum[i]: stored bytes of the events before #events[i] (from when the feed began). */
  #cum: number[] = [0];
  /** Absolute position of #events[0]. */
  #base = 0;
  readonly limits: WatcherLimits;
  readonly #members = new Set<FeedMember>();
  /** Watchers whose consumer waits (notify armed, or next() pending): signalled by the next append. */
  #armed: QueueWatcher[] = [];
  /** No member is before this position (the slowest one's, as of the last pass). */
  #minBound = 0;
  #scanAt = 0;
  /** The revision of the last event appended. */
  lastRev = 0;

  constructor(limits: WatcherLimits) {
    this.limits = limits;
  }

  get end(): number {
    return this.#base + this.#events.length;
  }

  /** Events the feed holds (read by every member or not). */
  get held(): number {
    return this.#events.length;
  }

  at(pos: number): WatchEvent {
    return this.#events[pos - this.#base]!;
  }

  /** Stored bytes from `pos` to the end. */
  bytesFrom(pos: number): number {
    return this.#cum[this.#events.length]! - this.#cum[pos - this.#base]!;
  }

  join(queue: QueueWatcher): FeedMember {
    const m: FeedMember = { pos: this.end, joined: this.end, queue };
    this.#members.add(m);
    return m;
  }

  leave(m: FeedMember): void {
    this.#members.delete(m);
  }

  /** Watchers waiting to be signalled (some may have stopped waiting since). */
  get armed(): number {
    return this.#armed.length;
  }

  arm(queue: QueueWatcher): void {
    this.#armed.push(queue);
    // A quiet feed is not emptied by appends: watchers that armed and went away (a watch ended
    // by its timeout, re-armed after a bookmark) are dropped once they outnumber the members.
    const armed = this.#armed;
    if (armed.length > 64 && armed.length > 2 * this.#members.size) {
      const seen = new Set<QueueWatcher>();
      this.#armed = armed.filter((q) => q.waiting && !seen.has(q) && seen.add(q) !== undefined);
    }
  }

  /** Appends a live event (of revision `rev`) for every member. */
  append(e: WatchEvent, rev: number): void {
    this.#events.push(e);
    this.#cum.push(this.#cum[this.#cum.length - 1]! + eventSize(e));
    this.lastRev = rev;
    if (this.#armed.length > 0) {
      const armed = this.#armed;
      this.#armed = [];
      for (const q of armed) q.feedSignal();
    }
    const end = this.end;
    if (this.bytesFrom(this.#minBound) > this.limits.bytes) this.#scan();
    else if (end >= this.#scanAt && (end - this.#minBound > this.limits.events || this.#events.length > FEED_TRIM)) this.#scan();
  }

  /** Ends the members too far behind, and drops the events every member has read. */
  #scan(): void {
    const end = this.end;
    this.#scanAt = end + FEED_SCAN_EVERY;
    const limits = this.limits;
    let min = end;
    const behind: FeedMember[] = [];
    for (const m of this.#members) {
      if (end - m.pos > limits.events || this.bytesFrom(m.pos) > limits.bytes) behind.push(m);
      else if (m.pos < min) min = m.pos;
    }
    for (const m of behind) m.queue.stop();
    this.#minBound = min;
    const k = min - this.#base;
    if (k > 0 && (k >= 1024 || k * 2 > this.#events.length)) {
      this.#events.splice(0, k);
      this.#cum.splice(0, k);
      this.#base = min;
    }
  }
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
  /** Where live events come from besides push(), when attached to a shared feed. */
  #feed: SharedFeed | undefined;
  #member: FeedMember | undefined;
  /** With a feed: the feed's end when each queued event was pushed (it follows the feed's events before it). */
  #at: number[] | undefined;

  constructor(limits: WatcherLimits, onStop: () => void, initial?: InitialEvents) {
    this.#limits = limits;
    this.#onStop = onStop;
    this.#initial = initial;
  }

  get ended(): boolean {
    return this.#ended;
  }

  /**
   * Takes live events from `feed` from now on, as if each were pushed (push() still queues the
   * watcher's own events, e.g. bookmarks, after the feed's events before them). Once, before the
   * first poll.
   */
  attach(feed: SharedFeed): void {
    this.#feed = feed;
    this.#member = feed.join(this);
    this.#at = [];
  }

  /** The revision of the last feed event this watcher was given (0: none yet). */
  feedRev(): number {
    const m = this.#member;
    return m && this.#feed!.end > m.joined ? this.#feed!.lastRev : 0;
  }

  /** Whether a consumer waits for this watcher's next event (notify armed, or next() pending). */
  get waiting(): boolean {
    return !this.#ended && (this.#notify !== undefined || this.#waiter !== undefined);
  }

  /** The feed has a new event: a waiting consumer gets it. */
  feedSignal(): void {
    if (this.#ended) return;
    if (this.#waiter) {
      const e = this.#dequeue();
      if (!e) return;
      const w = this.#waiter;
      this.#waiter = undefined;
      w(e);
      return;
    }
    const wake = this.#notify;
    if (wake) {
      this.#notify = undefined;
      wake();
    }
  }

  /** Whether a live event is ready. */
  #ready(): boolean {
    const m = this.#member;
    return this.#head < this.#queue.length || (m !== undefined && m.pos < this.#feed!.end);
  }

  /** Leaves the feed, its unread events (in order with the queued ones) moved to the queue. */
  #detach(): void {
    const m = this.#member;
    if (!m) return;
    const feed = this.#feed!;
    const out: WatchEvent[] = [];
    for (;;) {
      const e = this.#dequeue();
      if (!e) break;
      out.push(e);
    }
    feed.leave(m);
    this.#member = undefined;
    this.#feed = undefined;
    this.#at = undefined;
    this.#queue.length = 0;
    this.#head = 0;
    this.#queuedBytes = 0;
    for (const e of out) {
      this.#queue.push(e);
      this.#queuedBytes += eventSize(e);
    }
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
    this.#at?.push(this.#feed!.end);
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
    this.#detach();
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
    if (this.#ended || this.#initial || this.#waiter || this.#ready()) return false;
    this.#notify = wake;
    this.#feed?.arm(this);
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
      this.#feed?.arm(this);
    });
  }

  /** Ends the watch now, discarding what is queued. */
  stop(): void {
    if (this.#member) this.#feed!.leave(this.#member);
    this.#member = undefined;
    this.#feed = undefined;
    this.#at = undefined;
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
    const m = this.#member;
    if (m) {
      // The feed's events up to where the queued event was pushed go first.
      const queued = this.#head < this.#queue.length;
      if (!queued || this.#at![this.#head]! > m.pos) return m.pos < this.#feed!.end ? this.#feed!.at(m.pos++) : undefined;
    }
    if (this.#head >= this.#queue.length) return undefined;
    const e = this.#queue[this.#head]!;
    this.#queue[this.#head++] = undefined as unknown as WatchEvent;
    this.#queuedBytes -= eventSize(e);
    if (this.#head > 1024 && this.#head * 2 > this.#queue.length) {
      this.#queue.splice(0, this.#head);
      this.#at?.splice(0, this.#head);
      this.#head = 0;
    }
    return e;
  }
}

function eventSize(e: WatchEvent): number {
  return e.type === 'ERROR' ? 0 : (e.size ?? 0);
}
