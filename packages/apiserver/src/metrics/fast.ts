/**
 * Counters and histograms for the hot path. prom-client's children re-validate and re-hash their
 * labels on every `inc`/`observe` (an object and a label string per call); these keep each series
 * as a plain object found once by the caller (`labels(...)`, cached next to the request's series)
 * and updated in place, and hand prom-client's registry the same values at scrape time (they are
 * registered as custom metrics, so the text format is prom-client's own).
 */
import type { Registry } from 'prom-client';

export interface CounterSeries {
  inc(n?: number): void;
}

export interface HistogramSeries {
  observe(value: number): void;
}

interface MetricValue {
  labels: Record<string, string | number>;
  value: number;
  metricName?: string;
}

interface Options {
  name: string;
  help: string;
  labelNames: readonly string[];
  registers: Registry[];
}

function labelsOf(names: readonly string[], values: readonly string[]): Record<string, string> {
  if (values.length !== names.length) throw new Error(`expected ${names.length} label values, got ${values.length}`);
  const labels: Record<string, string> = {};
  names.forEach((n, i) => (labels[n] = values[i]!));
  return labels;
}

abstract class FastMetric<S> {
  readonly name: string;
  readonly help: string;
  readonly aggregator = 'sum';
  protected readonly labelNames: readonly string[];
  protected readonly series = new Map<string, S>();

  constructor(opts: Options) {
    this.name = opts.name;
    this.help = opts.help;
    this.labelNames = opts.labelNames;
    for (const r of opts.registers) r.registerMetric(this as never);
  }

  protected seriesOf(values: readonly string[], create: (labels: Record<string, string>) => S): S {
    const key = values.join('\u0000');
    let s = this.series.get(key);
    if (!s) this.series.set(key, (s = create(labelsOf(this.labelNames, values))));
    return s;
  }

  reset(): void {
    this.series.clear();
  }
}

/** A counter (`# TYPE counter`); a counter without labels starts at 0, as prom-client's does. */
export class FastCounter extends FastMetric<{ labels: Record<string, string>; value: number }> {
  readonly type = 'counter';

  constructor(opts: Options) {
    super(opts);
    if (opts.labelNames.length === 0) this.labels();
  }

  labels(...values: string[]): CounterSeries {
    const s = this.seriesOf(values, (labels) => ({ labels, value: 0 }));
    return {
      inc: (n = 1) => {
        s.value += n;
      },
    };
  }

  async get(): Promise<{ name: string; help: string; type: string; aggregator: string; values: MetricValue[] }> {
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values: [...this.series.values()].map((s) => ({ labels: s.labels, value: s.value })) };
  }
}

interface HistogramData {
  labels: Record<string, string>;
  /** Observations per bucket (not cumulative); the last slot is above every bound. */
  counts: Float64Array;
  sum: number;
  count: number;
}

/** A histogram (`# TYPE histogram`) with fixed upper bounds, exported as `_bucket`, `_sum`, `_count`. */
export class FastHistogram extends FastMetric<HistogramData> {
  readonly type = 'histogram';
  readonly #bounds: Float64Array;

  constructor(opts: Options & { buckets: readonly number[] }) {
    super(opts);
    this.#bounds = Float64Array.from([...opts.buckets].sort((a, b) => a - b));
  }

  labels(...values: string[]): HistogramSeries {
    const bounds = this.#bounds;
    const s = this.seriesOf(values, (labels) => ({ labels, counts: new Float64Array(bounds.length + 1), sum: 0, count: 0 }));
    return {
      observe: (value: number) => {
        if (!Number.isFinite(value)) return;
        let i = 0;
        while (i < bounds.length && value > bounds[i]!) i++;
        s.counts[i]!++;
        s.sum += value;
        s.count++;
      },
    };
  }

  async get(): Promise<{ name: string; help: string; type: string; aggregator: string; values: MetricValue[] }> {
    const values: MetricValue[] = [];
    const bucket = `${this.name}_bucket`;
    for (const s of this.series.values()) {
      let acc = 0;
      this.#bounds.forEach((le, i) => {
        acc += s.counts[i]!;
        values.push({ metricName: bucket, labels: { ...s.labels, le }, value: acc });
      });
      values.push({ metricName: bucket, labels: { ...s.labels, le: '+Inf' }, value: s.count });
      values.push({ metricName: `${this.name}_sum`, labels: s.labels, value: s.sum });
      values.push({ metricName: `${this.name}_count`, labels: s.labels, value: s.count });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }
}
