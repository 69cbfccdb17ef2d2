/**
 * Returning the C heap's free memory to the operating system. Node's Buffers live in glibc's
 * malloc arenas, outside V8's heap; glibc returns freed memory only from the top of an arena, so
 * after a burst of Buffers (a watch cache's initial read of 200,000 objects, a large list) the
 * freed pages below some small live allocation stay in the process's RSS. The native addon
 * (native/malloc.cc, built by the Makefile into dist/native) calls malloc_trim(0), which releases
 * every free page; a timer calls it when the arenas hold more than a threshold of free bytes.
 * Without the addon (no Node headers or g++ at build time, or not glibc) nothing happens.
 *
 * The addon also settles V8's heap after start-up (settleHeapSoon): see there.
 */
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { Logger } from './log.js';

export interface MallocAddon {
  /** Bytes free inside the malloc arenas (mallinfo2's fordblks), -1 where unknown. */
  freeBytes(): number;
  /** malloc_trim(0): whether anything was released. */
  trim(): boolean;
  /**
   * V8's LowMemoryNotification: full collections until nothing more is freed, compacting, with
   * the heap's free pages given back to the OS. Blocks for as long (~35 ms per 100 MB live).
   */
  reduceHeap(): void;
}

let addon: MallocAddon | null | undefined;

/** The native addon, or undefined when it was not built or does not load here. */
export function mallocAddon(): MallocAddon | undefined {
  if (addon === undefined) {
    try {
      addon = createRequire(import.meta.url)('./native/plinth-malloc.node') as MallocAddon;
    } catch {
      addon = null;
    }
  }
  return addon ?? undefined;
}

export interface MallocTrimmerOptions {
  /** How often the arenas' free bytes are read (default 5 s; reading them costs microseconds). */
  intervalMs?: number;
  /** Trim when more than this is free and the RSS grew by as much since the last trim (default 16 MiB). */
  thresholdBytes?: number;
  /** Told after each trim: free bytes before and after, and how long it took. */
  onTrim?: (before: number, after: number, ms: number) => void;
}

/**
 * Starts the timer (unref'd: it never keeps the process alive). Returns undefined when the addon
 * is missing.
 */
export function startMallocTrimmer(opts: MallocTrimmerOptions = {}): { stop(): void } | undefined {
  const m = mallocAddon();
  if (!m || m.freeBytes() < 0) return undefined;
  const threshold = opts.thresholdBytes ?? 16 * 1024 * 1024;
  // Trimmed pages stay counted as free: after a trim, another one is due only once the RSS grew
  // by the threshold again (a trim of a large arena holds the thread for a few milliseconds).
  let rssAfterTrim = 0;
  const timer = setInterval(() => {
    const before = m.freeBytes();
    if (before <= threshold || process.memoryUsage.rss() - rssAfterTrim < threshold) return;
    const t0 = performance.now();
    m.trim();
    const ms = performance.now() - t0;
    rssAfterTrim = process.memoryUsage.rss();
    opts.onTrim?.(before, m.freeBytes(), ms);
  }, opts.intervalMs ?? 5000);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}

/**
 * Start-up leaves V8's heap much larger than what it holds: loading the watch caches and the
 * controllers' first lists (the garbage collector's graph reads every object's metadata) allocate
 * several times the data they keep, and V8 keeps the pages it grew into until the heap shrinks on
 * its own, which an idle or steadily busy server may never make it do (200,000 ServiceAccounts:
 * 394 MB of heap for 246 MB used, 5 s after start-up). Go's runtime, under kube-apiserver, returns
 * such memory by itself.
 *
 * So the start-up steps that end with a large load call this; the last call of a burst is
 * followed, a second later, by one compacting collection that returns the free pages (the
 * addon's reduceHeap, else a plain full collection). Only during a process's first minutes: later
 * the pause (tens to hundreds of milliseconds, once) would fall on clients' requests, and a
 * running server's heap is sized by its traffic anyway.
 */
const SETTLE_DELAY_MS = 1000;
/** Calls after this much of a process's life are ignored (start-up is over). */
const SETTLE_WINDOW_S = 120;

let settleTimer: NodeJS.Timeout | undefined;

export function settleHeapSoon(onSettled?: (info: { ms: number; heapBefore: number; heapAfter: number; compacting: boolean }) => void): void {
  if (process.uptime() > SETTLE_WINDOW_S) return;
  clearTimeout(settleTimer);
  settleTimer = setTimeout(() => {
    settleTimer = undefined;
    const heapBefore = process.memoryUsage().heapTotal;
    const t0 = performance.now();
    const compacting = reduceHeap();
    onSettled?.({ ms: performance.now() - t0, heapBefore, heapAfter: process.memoryUsage().heapTotal, compacting });
  }, SETTLE_DELAY_MS);
  settleTimer.unref();
}

/** One compacting collection (the addon's), else one full collection; whether it was compacting. */
export function reduceHeap(): boolean {
  const m = mallocAddon();
  if (m && typeof m.reduceHeap === 'function') {
    m.reduceHeap();
    return true;
  }
  try {
    setFlagsFromString('--expose-gc');
    (runInNewContext('gc') as () => void)();
  } catch {
    // Not available: V8 gets to it in its own time.
  }
  return false;
}

/** settleHeapSoon's callback that logs what the collection did (at -v=2). */
export function logHeapSettled(log: Logger): (info: { ms: number; heapBefore: number; heapAfter: number; compacting: boolean }) => void {
  return (i) => log.v(2, 'start-up heap settled', { ms: Math.round(i.ms), heapBytesBefore: i.heapBefore, heapBytesAfter: i.heapAfter, compacting: i.compacting });
}
