/**
 * kube-apiserver 1.24's metrics (endpoints/metrics, storage/etcd3 metrics, authentication,
 * admission webhooks, audit) and the code that records them. Recording is built for the hot path:
 * the label children of every series are looked up once and kept (prom-client's `labels()` builds
 * and validates a label object each call), so a request costs a map lookup per metric, no closure
 * and no label object.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Gauge } from 'prom-client';
import type { CounterSeries, FastCounter, FastHistogram, HistogramSeries } from './fast.js';
import type { Catalog, ResourceDefinition } from '@plinth/api';
import type { EtcdOperation } from '@plinth/storage';
import { contextOf, type Handler, type RequestContext } from '../context.js';
import { toStatusError } from '../registry/interpret.js';
import { responseBodyBytes, responseDone } from '../http.js';
import { KubeRegistry, exponentialBuckets, type RegistryLog } from './registry.js';
import { INSTRUMENTED_NON_RESOURCE_PATHS, cleanDryRun, cleanScope, isLongRunning, isMutating, reportedVerb } from './labels.js';

type CounterChild = CounterSeries;
type GaugeChild = ReturnType<Gauge['labels']>;
type HistogramChild = HistogramSeries;

export const APISERVER_COMPONENT = 'apiserver';


export interface MetricsOptions {
  /** Off: nothing is recorded (the filters pass requests straight through); /metrics still answers. */
  recording: boolean;
  /** A valid --show-hidden-metrics-for-version: hidden (long-deprecated) metrics are registered. */
  showHidden: boolean;
  log?: RegistryLog;
}

/** One request series without its code: the children of the metrics every request records. */
interface RequestSeries {
  labels: string[];
  duration: HistogramChild;
  /** GET and LIST only (kube records response sizes of reads). */
  size: HistogramChild | undefined;
  longRunning: GaugeChild | undefined;
  longRunningDeprecated: GaugeChild | undefined;
  byCode: Map<number, CounterChild>;
}

/** Watch metrics of one group/version/kind. */
export interface WatchSeries {
  events: CounterChild;
  sizes: HistogramChild;
  watchers: GaugeChild;
}

/** Marks a request whose outcome the route-level recorder counted (on its rare paths only). */
const RECORDED = Symbol('metrics-recorded');
type MarkedContext = RequestContext & { [RECORDED]?: boolean };

/** The server's metrics, found by its catalog (handlers that only see the catalog use this). */
const byCatalog = new WeakMap<Catalog, ApiserverMetrics>();

/** The metrics of the server serving `catalog`, when it records any. */
export function metricsOf(catalog: Catalog): ApiserverMetrics | undefined {
  return byCatalog.get(catalog);
}

export class ApiserverMetrics {
  readonly recording: boolean;
  readonly registry: KubeRegistry;

  readonly #requestTotal: FastCounter;
  readonly #requestDuration: FastHistogram;
  readonly #responseSizes: FastHistogram;
  readonly #inflight: Gauge<string>;
  readonly #longRunning: Gauge<string>;
  readonly #longRunningDeprecated: Gauge<string>;
  readonly #deprecatedApis: Gauge<string>;
  readonly #etcdRequestDuration: FastHistogram;
  readonly #watchEvents: FastCounter;
  readonly #watchEventsSizes: FastHistogram;
  readonly #registeredWatchers: Gauge<string>;
  readonly #auditEvents: FastCounter;
  readonly #auditErrors: FastCounter;
  readonly #authAttempts: FastCounter;
  readonly #webhookDuration: FastHistogram;

  readonly #series = new Map<string, RequestSeries>();
  readonly #deprecatedSeen = new Set<string>();
  readonly #watchSeries = new Map<string, WatchSeries>();
  readonly #authChildren = new Map<string, CounterChild>();
  readonly #webhookChildren = new Map<string, HistogramChild>();
  readonly #crdConversion: FastHistogram;
  readonly #crdConversionChildren = new Map<string, HistogramChild>();
  readonly #auditErrorChildren = new Map<string, CounterChild>();
  #auditEventChild: CounterChild | undefined;
  #storageObjects: () => Promise<Array<[string, number]>> = async () => [];
  #catalog: Catalog | undefined;

  // In-flight non-long-running requests, and the most seen since the gauge was last set (kube
  // reports the maximum of the last second).
  #readOnly = 0;
  #mutating = 0;
  #readOnlyMax = 0;
  #mutatingMax = 0;
  readonly #inflightTimer: NodeJS.Timeout | undefined;
  readonly #readOnlyGauge: GaugeChild;
  readonly #mutatingGauge: GaugeChild;

  constructor(opts: MetricsOptions) {
    this.recording = opts.recording;
    const r = (this.registry = new KubeRegistry({ showHidden: opts.showHidden, ...(opts.log ? { log: opts.log } : {}) }));
    const requestLabels = ['verb', 'dry_run', 'group', 'version', 'resource', 'subresource', 'scope', 'component'] as const;
    const longRunningLabels = ['verb', 'group', 'version', 'resource', 'subresource', 'scope', 'component'] as const;

    this.#deprecatedApis = r.gauge({
      name: 'apiserver_requested_deprecated_apis',
      help: 'Gauge of deprecated APIs that have been requested, broken out by API group, version, resource, subresource, and removed_release.',
      labelNames: ['group', 'version', 'resource', 'subresource', 'removed_release'],
      stability: 'STABLE',
    });
    this.#requestTotal = r.counter({
      name: 'apiserver_request_total',
      help: 'Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.',
      labelNames: [...requestLabels, 'code'],
      stability: 'STABLE',
    });
    this.#longRunning = r.gauge({
      name: 'apiserver_longrunning_requests',
      help: 'Gauge of all active long-running apiserver requests broken out by verb, group, version, resource, scope and component. Not all requests are tracked this way.',
      labelNames: longRunningLabels,
      stability: 'ALPHA',
    });
    this.#longRunningDeprecated = r.gauge({
      name: 'apiserver_longrunning_gauge',
      help: 'Gauge of all active long-running apiserver requests broken out by verb, group, version, resource, scope and component. Not all requests are tracked this way.',
      labelNames: longRunningLabels,
      stability: 'ALPHA',
      deprecatedVersion: '1.23.0',
    });
    this.#requestDuration = r.histogram({
      name: 'apiserver_request_duration_seconds',
      help: 'Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.',
      labelNames: requestLabels,
      buckets: [0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60],
      stability: 'STABLE',
    });
    this.#responseSizes = r.histogram({
      name: 'apiserver_response_sizes',
      help: 'Response size distribution in bytes for each group, version, verb, resource, subresource, scope and component.',
      labelNames: longRunningLabels,
      // 1000 bytes (1KB) to 10^9 bytes (1GB).
      buckets: exponentialBuckets(1000, 10, 7),
      stability: 'STABLE',
    });
    this.#registeredWatchers = r.gauge({
      name: 'apiserver_registered_watchers',
      help: 'Number of currently registered watchers for a given resources',
      labelNames: ['group', 'version', 'kind'],
      stability: 'ALPHA',
      deprecatedVersion: '1.23.0',
    });
    this.#watchEvents = r.counter({
      name: 'apiserver_watch_events_total',
      help: 'Number of events sent in watch clients',
      labelNames: ['group', 'version', 'kind'],
      stability: 'ALPHA',
    });
    this.#watchEventsSizes = r.histogram({
      name: 'apiserver_watch_events_sizes',
      help: 'Watch event size distribution in bytes',
      labelNames: ['group', 'version', 'kind'],
      // 1K, 2K, 4K, ..., 128K.
      buckets: exponentialBuckets(1024, 2, 8),
      stability: 'ALPHA',
    });
    this.#inflight = r.gauge({
      name: 'apiserver_current_inflight_requests',
      help: 'Maximal number of currently used inflight request limit of this apiserver per request kind in last second.',
      labelNames: ['request_kind'],
      stability: 'STABLE',
    });
    const self = this;
    const storageObjectsSpec = {
      labelNames: ['resource'] as const,
      stability: 'ALPHA' as const,
      // Computed when scraped: the watch caches' object counts (or the last etcd count).
      async collect(this: Gauge<'resource'>) {
        this.reset();
        for (const [resource, n] of await self.#storageObjects()) this.labels(resource).set(n);
      },
    };
    r.gauge({ ...storageObjectsSpec, name: 'apiserver_storage_objects', help: 'Number of stored objects at the time of last check split by kind.', stability: 'STABLE' });
    r.gauge({
      ...storageObjectsSpec,
      name: 'etcd_object_counts',
      help: 'Number of stored objects at the time of last check split by kind. This metric is replaced by apiserver_storage_object_counts.',
      deprecatedVersion: '1.22.0',
    });
    this.#etcdRequestDuration = r.histogram({
      name: 'etcd_request_duration_seconds',
      help: 'Etcd request latency in seconds for each operation and object type.',
      labelNames: ['operation', 'type'],
      buckets: [0.005, 0.025, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 15.0, 30.0, 60.0],
      stability: 'ALPHA',
    });
    this.#auditEvents = r.counter({
      name: 'apiserver_audit_event_total',
      help: 'Counter of audit events generated and sent to the audit backend.',
      labelNames: [],
      stability: 'ALPHA',
    });
    this.#auditErrors = r.counter({
      name: 'apiserver_audit_error_total',
      help: 'Counter of audit events that failed to be audited properly. Plugin identifies the plugin affected by the error.',
      labelNames: ['plugin'],
      stability: 'ALPHA',
    });
    this.#authAttempts = r.counter({
      name: 'authentication_attempts',
      help: 'Counter of authenticated attempts.',
      labelNames: ['result'],
      stability: 'ALPHA',
    });
    this.#webhookDuration = r.histogram({
      name: 'apiserver_admission_webhook_admission_duration_seconds',
      help: 'Admission webhook latency histogram in seconds, identified by name and broken out for each operation and API resource and type (validate or admit).',
      labelNames: ['name', 'type', 'operation', 'rejected'],
      buckets: [0.005, 0.025, 0.1, 0.5, 1.0, 2.5],
      stability: 'STABLE',
    });

    // kube 1.24 apiextensions-apiserver conversion/metrics.go (renamed in 1.28).
    this.#crdConversion = r.histogram({
      name: 'apiserver_crd_webhook_conversion_duration_seconds',
      help: 'CRD webhook conversion duration in seconds',
      labelNames: ['crd_name', 'from_version', 'to_version', 'succeeded'],
      buckets: Array.from({ length: 15 }, (_, i) => 0.001 * 2 ** i),
      stability: 'ALPHA',
    });

    this.#readOnlyGauge = this.#inflight.labels('readOnly');
    this.#mutatingGauge = this.#inflight.labels('mutating');
    this.#readOnlyGauge.set(0);
    this.#mutatingGauge.set(0);
    if (this.recording) {
      this.#inflightTimer = setInterval(() => {
        this.#readOnlyGauge.set(this.#readOnlyMax);
        this.#mutatingGauge.set(this.#mutatingMax);
        this.#readOnlyMax = this.#readOnly;
        this.#mutatingMax = this.#mutating;
      }, 1000);
      this.#inflightTimer.unref();
    }
  }

  /** The served resources (requests to anything else are not counted, as kube counts routes). */
  attach(catalog: Catalog): void {
    this.#catalog = catalog;
    if (this.recording) byCatalog.set(catalog, this);
  }

  /** Where apiserver_storage_objects (and the hidden etcd_object_counts) read their values at scrape time. */
  setStorageObjectsSource(source: () => Promise<Array<[string, number]>>): void {
    this.#storageObjects = source;
  }

  close(): void {
    if (this.#inflightTimer) clearInterval(this.#inflightTimer);
  }

  // ---- requests -------------------------------------------------------------------------------

  /**
   * For a request refused before it is routed (429): the served resource and sub-resource it
   * names, or undefined (made-up paths create no series).
   */
  #servedDef(ctx: RequestContext): ResourceDefinition | undefined {
    const { info } = ctx;
    const def = this.#catalog?.lookup(info.apiGroup, info.apiVersion, info.resource);
    if (!def) return undefined;
    if (info.subresource !== '' && !def.subresources.some((s) => s.name === info.subresource)) return undefined;
    return def;
  }

  /**
   * The series of a routed request, or undefined when kube would not count it: a resource request
   * counts once its target is resolved (a path no route serves is not counted, which also keeps
   * made-up paths from creating series), with its route's scope (kube's installer labels a list
   * `namespace` or `cluster` even when a fieldSelector names one object).
   */
  #seriesOf(req: IncomingMessage, ctx: RequestContext): RequestSeries | undefined {
    const { info, target } = ctx;
    if (info.isResourceRequest) {
      if (!target) return undefined;
      return this.#series0(req, ctx, info.apiGroup, info.apiVersion, info.resource, info.subresource, target.scope, APISERVER_COMPONENT);
    }
    if (!INSTRUMENTED_NON_RESOURCE_PATHS.has(info.path)) return undefined;
    // kube's health handlers: subresource is the path, component empty.
    return this.#series0(req, ctx, '', '', '', info.path, cleanScope(info), '');
  }

  #series0(req: IncomingMessage, ctx: RequestContext, group: string, version: string, resource: string, subresource: string, scope: string, component: string): RequestSeries {
    const verb = reportedVerb(req, ctx.info, scope);
    const dryRun = cleanDryRun(ctx.query);
    const key = `${verb} ${dryRun} ${group} ${version} ${resource} ${subresource} ${scope} ${component}`;
    let s = this.#series.get(key);
    if (!s) {
      const labels = [verb, dryRun, group, version, resource, subresource, scope, component];
      const lr = [verb, group, version, resource, subresource, scope, component];
      s = {
        labels,
        duration: this.#requestDuration.labels(...labels),
        size: verb === 'GET' || verb === 'LIST' ? this.#responseSizes.labels(...lr) : undefined,
        longRunning: isLongRunning(ctx.info) ? this.#longRunning.labels(...lr) : undefined,
        longRunningDeprecated: isLongRunning(ctx.info) ? this.#longRunningDeprecated.labels(...lr) : undefined,
        byCode: new Map(),
      };
      this.#series.set(key, s);
    }
    return s;
  }

  #count(s: RequestSeries, code: number): void {
    let c = s.byCode.get(code);
    if (!c) s.byCode.set(code, (c = this.#requestTotal.labels(...s.labels, String(code))));
    c.inc();
  }

  /** kube's MonitorRequest: the request's count, latency, read size and deprecated-API gauge. */
  #monitor(s: RequestSeries, ctx: RequestContext, code: number, size: number): void {
    this.#count(s, code);
    s.duration.observe(Number(process.hrtime.bigint() - ctx.start) / 1e9);
    if (s.size) s.size.observe(size);
    const d = ctx.deprecated;
    if (d) {
      const removed = d.deprecation.removedRelease ?? '';
      const key = `${d.group} ${d.version} ${d.resource} ${d.subresource} ${removed}`;
      if (!this.#deprecatedSeen.has(key)) {
        this.#deprecatedSeen.add(key);
        this.#deprecatedApis.labels(d.group, d.version, d.resource, d.subresource, removed).set(1);
      }
    }
  }

  /**
   * Route-level instrumentation (kube's InstrumentRouteFunc and the health handlers'
   * InstrumentHandlerFunc): wraps what serves requests once they are authenticated and
   * authorized. Requests refused before (401, 403) are not counted, as in kube.
   */
  instrument(next: Handler): Handler {
    if (!this.recording) return next;
    return async (req: IncomingMessage, res: ServerResponse) => {
      const ctx = contextOf(req);
      const s = this.#seriesOf(req, ctx);
      if (!s) return next(req, res);
      s.longRunning?.inc();
      s.longRunningDeprecated?.inc();
      try {
        await next(req, res);
      } catch (e) {
        // The error is answered by withRecover above: its code now, its size once written.
        (ctx as MarkedContext)[RECORDED] = true;
        const code = toStatusError(e).code;
        if (s.size) res.once('finish', () => this.#monitor(s, ctx, code, contentLength(res)));
        else this.#monitor(s, ctx, code, 0);
        throw e;
      } finally {
        s.longRunning?.dec();
        s.longRunningDeprecated?.dec();
      }
      if (res.statusCode === 429) (ctx as MarkedContext)[RECORDED] = true;
      // A body still streaming (a large list, chunked) is counted once written: kube's handler
      // returns only then too.
      if (s.size && responseBodyBytes(res) === undefined && !res.writableFinished) await responseDone(res);
      this.#monitor(s, ctx, res.statusCode, s.size ? contentLength(res) : 0);
    };
  }

  /**
   * Wraps the request limiters (max-in-flight, priority and fairness): counts the non-long-running
   * requests in flight for apiserver_current_inflight_requests, and counts a request the limiter
   * refused with 429 in apiserver_request_total (kube's RecordDroppedRequest).
   */
  trackInflight(next: Handler): Handler {
    if (!this.recording) return next;
    return async (req: IncomingMessage, res: ServerResponse) => {
      const ctx = contextOf(req);
      const counted = !isLongRunning(ctx.info);
      const mutating = counted && isMutating(ctx.info);
      if (counted) {
        if (mutating) {
          if (++this.#mutating > this.#mutatingMax) this.#mutatingMax = this.#mutating;
        } else if (++this.#readOnly > this.#readOnlyMax) this.#readOnlyMax = this.#readOnly;
      }
      try {
        await next(req, res);
      } catch (e) {
        if ((e as { code?: unknown }).code === 429 && !(ctx as MarkedContext)[RECORDED]) this.#dropped(req, ctx);
        throw e;
      } finally {
        if (counted) {
          if (mutating) this.#mutating--;
          else this.#readOnly--;
        }
      }
      if (res.statusCode === 429 && !(ctx as MarkedContext)[RECORDED]) this.#dropped(req, ctx);
    };
  }

  /** A request a limiter refused (kube's RecordDroppedRequest: counted with code 429, component apiserver). */
  #dropped(req: IncomingMessage, ctx: RequestContext): void {
    const { info } = ctx;
    if (info.isResourceRequest) {
      if (!this.#servedDef(ctx)) return;
      this.#count(this.#series0(req, ctx, info.apiGroup, info.apiVersion, info.resource, info.subresource, cleanScope(info), APISERVER_COMPONENT), 429);
    } else {
      // kube labels a refused non-resource request with empty group/version/resource/subresource.
      this.#count(this.#series0(req, ctx, '', '', '', '', cleanScope(info), APISERVER_COMPONENT), 429);
    }
  }

  // ---- authentication, audit, admission -------------------------------------------------------

  /** authentication_attempts: success (including anonymous), failure (no credential, no anonymous), error (a credential not accepted). */
  authenticationAttempt(result: 'success' | 'failure' | 'error'): void {
    let c = this.#authChildren.get(result);
    if (!c) this.#authChildren.set(result, (c = this.#authAttempts.labels(result)));
    c.inc();
  }

  /** apiserver_audit_event_total: one audit event generated and handed to the backend. */
  auditEvent(): void {
    (this.#auditEventChild ??= this.#auditEvents.labels()).inc();
  }

  /** apiserver_audit_error_total{plugin}: an audit event the backend `plugin` (e.g. "log") failed to write. */
  auditError(plugin: string): void {
    let c = this.#auditErrorChildren.get(plugin);
    if (!c) this.#auditErrorChildren.set(plugin, (c = this.#auditErrors.labels(plugin)));
    c.inc();
  }

  /**
   * apiserver_admission_webhook_admission_duration_seconds: one webhook call. `type` is kube's:
   * "admit" for mutating webhooks, "validating" for validating ones; rejected: the call made the
   * request fail (a refusal, or a failed call with failurePolicy Fail).
   */
  webhookCall(name: string, type: string, operation: string, rejected: boolean, seconds: number): void {
    if (!this.recording) return;
    const key = `${name} ${type} ${operation} ${rejected}`;
    let h = this.#webhookChildren.get(key);
    if (!h) this.#webhookChildren.set(key, (h = this.#webhookDuration.labels(name, type, operation, String(rejected))));
    h.observe(seconds);
  }

  /** apiserver_crd_webhook_conversion_duration_seconds: one conversion through a CRD's webhook. */
  crdWebhookConversion(labels: { crdName: string; fromVersion: string; toVersion: string; succeeded: boolean }, seconds: number): void {
    if (!this.recording) return;
    const key = `${labels.crdName} ${labels.fromVersion} ${labels.toVersion} ${labels.succeeded}`;
    let h = this.#crdConversionChildren.get(key);
    if (!h) this.#crdConversionChildren.set(key, (h = this.#crdConversion.labels(labels.crdName, labels.fromVersion, labels.toVersion, String(labels.succeeded))));
    h.observe(seconds);
  }

  // ---- storage and watch ----------------------------------------------------------------------

  /** etcd_request_duration_seconds, for the storage layer's request observer. */
  etcdRequest(operation: EtcdOperation, type: string, seconds: number, cache: Partial<Record<EtcdOperation, HistogramChild>>): void {
    let h = cache[operation];
    if (!h) cache[operation] = h = this.#etcdRequestDuration.labels(operation, type);
    h.observe(seconds);
  }

  /** The watch metrics of a group/version/kind (looked up once per watch). */
  watchSeries(group: string, version: string, kind: string): WatchSeries {
    const key = `${group} ${version} ${kind}`;
    let w = this.#watchSeries.get(key);
    if (!w) {
      w = { events: this.#watchEvents.labels(group, version, kind), sizes: this.#watchEventsSizes.labels(group, version, kind), watchers: this.#registeredWatchers.labels(group, version, kind) };
      this.#watchSeries.set(key, w);
    }
    return w;
  }

  /** The exposition text (text/plain; version=0.0.4). */
  scrape(): Promise<string> {
    return this.registry.scrape();
  }
}

function contentLength(res: ServerResponse): number {
  return responseBodyBytes(res) ?? 0;
}
