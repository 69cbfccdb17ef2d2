/**
 * A prom-client registry that declares metrics the way kube's component-base does: each with its
 * stability class and optional deprecated version, described as `[ALPHA] ...`, marked
 * `(Deprecated from x.y)` when deprecated, and not registered (hidden) when deprecated long enough,
 * unless hidden metrics were asked for (--show-hidden-metrics-for-version).
 */
import { Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { FastCounter, FastHistogram } from './fast.js';
import { describe, exposureOf, type StabilityLevel } from './stability.js';

export interface MetricSpec<L extends string> {
  name: string;
  help: string;
  labelNames: readonly L[];
  stability: StabilityLevel;
  /** `<major>.<minor>[.<patch>]` of the release that deprecated it. */
  deprecatedVersion?: string;
}

export interface HistogramSpec<L extends string> extends MetricSpec<L> {
  buckets: number[];
}

export interface RegistryLog {
  info(msg: string, fields?: Record<string, unknown>): void;
}

/** kube's prometheus.ExponentialBuckets(start, factor, count). */
export function exponentialBuckets(start: number, factor: number, count: number): number[] {
  const out: number[] = [];
  for (let i = 0, v = start; i < count; i++, v *= factor) out.push(v);
  return out;
}

export class KubeRegistry {
  readonly registry = new Registry();
  /** Names of metrics declared but hidden in this release (not scraped). */
  readonly hidden: string[] = [];
  readonly #showHidden: boolean;
  readonly #log: RegistryLog | undefined;

  constructor(opts: { showHidden: boolean; log?: RegistryLog }) {
    this.#showHidden = opts.showHidden;
    this.#log = opts.log;
  }

  /** The help text and whether to register; logs what kube logs for deprecated and shown-hidden metrics. */
  #prepare<L extends string>(spec: MetricSpec<L>): { help: string; registers: Registry[] } {
    const exposure = exposureOf(spec.deprecatedVersion, this.#showHidden);
    if (!exposure.visible) this.hidden.push(spec.name);
    else if (exposure.shownHidden) this.#log?.info(`Hidden metrics (${spec.name}) have been manually overridden, showing this very deprecated metric.`);
    else if (exposure.deprecated) this.#log?.info(`metric ${spec.name} is deprecated from ${spec.deprecatedVersion}`, { metric: spec.name });
    return { help: describe(spec.help, spec.stability, spec.deprecatedVersion, exposure.deprecated), registers: exposure.visible ? [this.registry] : [] };
  }

  counter<L extends string>(spec: MetricSpec<L>): FastCounter {
    const { help, registers } = this.#prepare(spec);
    return new FastCounter({ name: spec.name, help, labelNames: spec.labelNames, registers });
  }

  gauge<L extends string>(spec: MetricSpec<L> & { collect?: (this: Gauge<L>) => void | Promise<void> }): Gauge<L> {
    const { help, registers } = this.#prepare(spec);
    return new Gauge<L>({ name: spec.name, help, labelNames: spec.labelNames, registers, ...(spec.collect ? { collect: spec.collect } : {}) });
  }

  histogram<L extends string>(spec: HistogramSpec<L>): FastHistogram {
    const { help, registers } = this.#prepare(spec);
    return new FastHistogram({ name: spec.name, help, labelNames: spec.labelNames, buckets: spec.buckets, registers });
  }

  /** prom-client's process and Node.js metrics (one set per process), then this registry's metrics. */
  async scrape(): Promise<string> {
    // prom-client writes NaN as `Nan`; the format (and Prometheus' own output) spells it `NaN`.
    // A value ends its line, so ` Nan` at a line's end is always a value.
    return ((await processRegistry().metrics()) + (await this.registry.metrics())).replace(/ Nan$/gm, ' NaN');
  }
}

let processMetrics: Registry | undefined;

/**
 * The process and Node.js metrics (CPU, memory, file descriptors, event loop lag, GC, heap): one
 * registry per process, shared by every server in it (tests run several).
 */
function processRegistry(): Registry {
  if (!processMetrics) {
    processMetrics = new Registry();
    collectDefaultMetrics({ register: processMetrics });
  }
  return processMetrics;
}

export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';
