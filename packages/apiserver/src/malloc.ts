/**
 * Returning the C heap's free memory to the operating system. Node's Buffers live in glibc's
 * malloc arenas, outside V8's heap; glibc returns freed memory only from the top of an arena, so
 * after a burst of Buffers (a watch cache's initial read of 200,000 objects, a large list) the
 * freed pages below some small live allocation stay in the process's RSS. The native addon
 * (native/malloc.cc, built by the Makefile into dist/native) calls malloc_trim(0), which releases
 * every free page; a timer calls it when the arenas hold more than a threshold of free bytes.
 * Without the addon (no Node headers or g++ at build time, or not glibc) nothing happens.
 */
import { createRequire } from 'node:module';

export interface MallocAddon {
  /** Bytes free inside the malloc arenas (mallinfo2's fordblks), -1 where unknown. */
  freeBytes(): number;
  /** malloc_trim(0): whether anything was released. */
  trim(): boolean;
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
