/**
 * ClusterLoader2's APIResponsivenessPrometheus (simple form, release-1.24; research-28 §5.1) over
 * plinth's `/metrics`: `apiserver_request_duration_seconds` buckets scraped before and after the
 * run, diffed, summed by (resource, subresource, verb, scope), WATCH and
 * log|exec|portforward|attach|proxy left out, and p50/p90/p99 by Prometheus's histogram_quantile
 * (linear within a bucket). Thresholds: LIST cluster 30 s, other LIST 5 s, everything else 1 s; a
 * key fails if any of its percentiles is above (no allowance for slow calls, CL2's default).
 * The same keys' client-side exact percentiles sit beside them.
 */
import type { LatencyRecorder } from './client.js';

/** `le` → cumulative count, per key `VERB resource[/subresource] scope`. */
export type Buckets = Map<string, Map<number, number>>;

const LINE = /^apiserver_request_duration_seconds_bucket\{([^}]*)\} (\S+)/;
const LABEL = /(\w+)="((?:[^"\\]|\\.)*)"/g;

/** The request-duration buckets in a Prometheus text exposition. */
export function parseDurationBuckets(text: string): Buckets {
  const out: Buckets = new Map();
  for (const line of text.split('\n')) {
    const m = LINE.exec(line);
    if (!m) continue;
    const labels: Record<string, string> = {};
    for (const l of m[1]!.matchAll(LABEL)) labels[l[1]!] = l[2]!;
    const verb = labels['verb'] ?? '';
    const sub = labels['subresource'] ?? '';
    if (verb === 'WATCH' || /^(log|exec|portforward|attach|proxy)$/.test(sub)) continue;
    const key = `${verb} ${labels['resource'] ?? ''}${sub ? `/${sub}` : ''} ${labels['scope'] ?? ''}`;
    const le = labels['le'] === '+Inf' ? Infinity : Number(labels['le']);
    let b = out.get(key);
    if (!b) out.set(key, (b = new Map()));
    b.set(le, (b.get(le) ?? 0) + Number(m[2]));
  }
  return out;
}

/** after − before, per key and bucket. */
export function diffBuckets(after: Buckets, before: Buckets): Buckets {
  const out: Buckets = new Map();
  for (const [key, b] of after) {
    const prev = before.get(key);
    const d = new Map<number, number>();
    for (const [le, n] of b) d.set(le, n - (prev?.get(le) ?? 0));
    if ((d.get(Infinity) ?? 0) > 0) out.set(key, d);
  }
  return out;
}

/** Prometheus histogram_quantile on cumulative buckets (seconds). */
export function histogramQuantile(q: number, buckets: Map<number, number>): number {
  const les = [...buckets.keys()].sort((a, b) => a - b);
  const total = buckets.get(Infinity) ?? 0;
  if (total === 0) return NaN;
  const rank = q * total;
  let prevLe = 0;
  let prevCount = 0;
  for (const le of les) {
    const c = buckets.get(le)!;
    if (c >= rank) {
      // The +Inf bucket answers the highest finite bound (histogram_quantile's rule).
      if (le === Infinity) return prevLe;
      return prevLe + (le - prevLe) * ((rank - prevCount) / Math.max(1e-12, c - prevCount));
    }
    prevLe = le;
    prevCount = c;
  }
  return prevLe;
}

/** One request key against its SLO. */
export interface SloKey {
  key: string;
  count: number;
  /** Server-side (from plinth's histogram), seconds. */
  p50: number;
  p90: number;
  p99: number;
  thresholdS: number;
  met: boolean;
  /** Client-side exact percentiles (ms) of the same key, when this generator sent such calls. */
  client?: { count: number; p50Ms: number; p99Ms: number };
}

/** CL2's getSLOThreshold. */
export function sloThreshold(key: string): number {
  const [verb, , scope] = key.split(' ');
  if (verb !== 'LIST') return 1;
  return scope === 'cluster' ? 30 : 5;
}

function exact(samples: number[]): { count: number; p50Ms: number; p99Ms: number } {
  const s = Float64Array.from(samples).sort();
  const at = (q: number): number => s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))] ?? 0;
  return { count: s.length, p50Ms: at(0.5), p99Ms: at(0.99) };
}

/** Every key's percentiles against its threshold, the failing keys first. */
export function evaluateSlos(server: Buckets, client: LatencyRecorder): SloKey[] {
  const out: SloKey[] = [];
  for (const [key, b] of server) {
    const p50 = histogramQuantile(0.5, b);
    const p90 = histogramQuantile(0.9, b);
    const p99 = histogramQuantile(0.99, b);
    const thresholdS = sloThreshold(key);
    const samples = client.samples.get(key);
    out.push({ key, count: b.get(Infinity) ?? 0, p50, p90, p99, thresholdS, met: p50 <= thresholdS && p90 <= thresholdS && p99 <= thresholdS, ...(samples ? { client: exact(samples) } : {}) });
  }
  return out.sort((a, b) => Number(a.met) - Number(b.met) || b.p99 / b.thresholdS - a.p99 / a.thresholdS);
}

/** The aligned table of SLO keys (for logs and the smoke test). */
export function formatSlos(keys: SloKey[]): string {
  const rows = keys.map((k) =>
    [
      k.key,
      String(k.count),
      `${(k.p50 * 1000).toFixed(0)}`,
      `${(k.p99 * 1000).toFixed(0)}`,
      k.client ? `${k.client.p50Ms.toFixed(1)}` : '—',
      k.client ? `${k.client.p99Ms.toFixed(1)}` : '—',
      `${k.thresholdS} s`,
      k.met ? 'yes' : 'NO',
    ],
  );
  const header = ['verb resource scope', 'calls', 'srv p50 ms', 'srv p99 ms', 'cli p50 ms', 'cli p99 ms', 'SLO p99', 'met'];
  const w = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  return [header, ...rows].map((r) => r.map((c, i) => (i === 0 ? c.padEnd(w[i]!) : c.padStart(w[i]!))).join('  ')).join('\n');
}
