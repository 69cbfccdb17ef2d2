/**
 * Latency samples, percentiles and a closed-loop load runner (N operations at concurrency C) that
 * also measures the load generator's own CPU, so a reader can see it was not the bottleneck.
 */
import { performance } from 'node:perf_hooks';
import { readFileSync } from 'node:fs';
import { clockTicks } from './proc.js';

export interface LatencySummary {
  count: number;
  meanMs: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  maxMs: number;
}

export class Histogram {
  #samples: number[] = [];

  add(ms: number): void {
    this.#samples.push(ms);
  }

  get count(): number {
    return this.#samples.length;
  }

  summary(): LatencySummary {
    const s = Float64Array.from(this.#samples).sort();
    const n = s.length;
    const at = (q: number): number => (n === 0 ? 0 : s[Math.min(n - 1, Math.max(0, Math.ceil(q * n) - 1))]!);
    let sum = 0;
    for (const v of s) sum += v;
    return { count: n, meanMs: n ? sum / n : 0, p50Ms: at(0.5), p90Ms: at(0.9), p99Ms: at(0.99), maxMs: n ? s[n - 1]! : 0 };
  }
}

export interface LoadResult {
  ops: number;
  errors: number;
  firstError?: string;
  wallMs: number;
  opsPerSec: number;
  latency: LatencySummary;
  /** The load generator's CPU (user+system, all threads) during the run. */
  loadgenCpuUs: number;
  /** loadgenCpuUs as a percentage of one core over the wall time. */
  loadgenCpuPct: number;
  /**
   * The load generator's JavaScript (main) thread alone, % of one core: the figure that says
   * whether it was the bottleneck. loadgenCpuPct also counts V8's helper threads (parallel and
   * concurrent GC, background compilation), which is how it can pass 100%.
   */
  loadgenMainThreadCpuPct?: number;
}

/** Microseconds of CPU this process has used so far (user + system). */
export function selfCpuUs(): number {
  const u = process.cpuUsage();
  return u.user + u.system;
}

/** CPU (µs, clock-tick resolution) of this process's main thread so far, from /proc; undefined elsewhere. */
export function mainThreadCpuUs(): number | undefined {
  try {
    const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(f[11]) + Number(f[12])) * 1_000_000) / clockTicks();
  } catch {
    return undefined;
  }
}

/**
 * Runs `op(0..total-1)` with `concurrency` workers, each starting its next op when the last one
 * finishes. Latency is measured per op; errors are counted, not thrown.
 */
export async function runLoad(total: number, concurrency: number, op: (i: number) => Promise<void>): Promise<LoadResult> {
  const hist = new Histogram();
  let next = 0;
  let errors = 0;
  let firstError: string | undefined;
  const cpu0 = selfCpuUs();
  const main0 = mainThreadCpuUs();
  const t0 = performance.now();
  const worker = async (): Promise<void> => {
    for (;;) {
      const i = next++;
      if (i >= total) return;
      const s = performance.now();
      try {
        await op(i);
        hist.add(performance.now() - s);
      } catch (e) {
        errors++;
        firstError ??= e instanceof Error ? e.message : String(e);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, total) }, worker));
  const wallMs = performance.now() - t0;
  const loadgenCpuUs = selfCpuUs() - cpu0;
  const main1 = mainThreadCpuUs();
  const result: LoadResult = {
    ops: hist.count,
    errors,
    wallMs,
    opsPerSec: (hist.count / wallMs) * 1000,
    latency: hist.summary(),
    loadgenCpuUs,
    loadgenCpuPct: (loadgenCpuUs / (wallMs * 1000)) * 100,
  };
  if (main0 !== undefined && main1 !== undefined) result.loadgenMainThreadCpuPct = ((main1 - main0) / (wallMs * 1000)) * 100;
  if (firstError !== undefined) result.firstError = firstError;
  return result;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/**
 * `p`, or a rejection naming `what` after `ms`: a server that stops answering fails the figure
 * instead of hanging the bench. The late promise is left to settle (or fail) on its own.
 */
export function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${(ms / 1000).toFixed(1)} s`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

/**
 * Open-loop pacing: starts op(i) at t0 + i/rate regardless of earlier ops, then waits for all.
 */
export async function paced(total: number, ratePerSec: number, op: (i: number) => Promise<void>): Promise<{ errors: number; firstError?: string }> {
  const t0 = performance.now();
  const pending: Array<Promise<void>> = [];
  let errors = 0;
  let firstError: string | undefined;
  for (let i = 0; i < total; i++) {
    const due = t0 + (i * 1000) / ratePerSec;
    const wait = due - performance.now();
    if (wait > 1) await sleep(wait);
    pending.push(
      op(i).catch((e: unknown) => {
        errors++;
        firstError ??= e instanceof Error ? e.message : String(e);
      }),
    );
  }
  await Promise.all(pending);
  return firstError === undefined ? { errors } : { errors, firstError };
}
