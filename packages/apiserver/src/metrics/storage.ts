/**
 * Storage metrics: etcd_request_duration_seconds (the storage layer's request observer, labelled
 * by operation and kube's object type) and apiserver_storage_objects (the watch caches' object
 * counts, or a periodic etcd count without watch caches).
 */
import { storagePathOf, type Catalog, type ResourceDefinition } from '@plinth/api';
import type { EtcdOperation, EtcdRequestObserver, EtcdStore, WatchCaches } from '@plinth/storage';
import type { HistogramSeries } from './fast.js';
import type { ApiserverMetrics } from './apiserver.js';

type HistogramChild = HistogramSeries;

/**
 * kube 1.24's `type` label: the Go type of the object read or written, e.g. `*core.Pod`,
 * `*apps.Deployment` (its internal package: the group's first label, `core` for the core group),
 * `*core.PodList` for lists, `*unstructured.Unstructured(List)` for custom resources.
 */
export function etcdTypeOf(def: ResourceDefinition, list: boolean): string {
  if (storagePathOf(def).includes('/')) return list ? '*unstructured.UnstructuredList' : '*unstructured.Unstructured';
  const pkg = def.group === '' ? 'core' : def.group.split('.')[0]!;
  return `*${pkg}.${def.kind}${list ? 'List' : ''}`;
}

/** The observed children of one stored resource. */
interface TypeEntry {
  type: string;
  listType: string;
  children: Partial<Record<EtcdOperation, HistogramChild>>;
  listChildren: Partial<Record<EtcdOperation, HistogramChild>>;
}

/**
 * The observer handed to the EtcdStore: maps a key (`<prefix>/<storagePath>/[<ns>/]<name>`, or a
 * listed prefix) to its resource with at most two map lookups, and observes the latency into that
 * resource's cached histogram child. Keys of no known resource are not observed.
 */
export function etcdRequestObserver(metrics: ApiserverMetrics, etcdPrefix: string): EtcdRequestObserver & { attach(catalog: Catalog): void } {
  const base = `${etcdPrefix.replace(/\/+$/, '')}/`;
  let catalog: Catalog | undefined;
  let generation = -1;
  let byPath = new Map<string, TypeEntry>();
  const entries = (): Map<string, TypeEntry> => {
    if (catalog && catalog.generation !== generation) {
      generation = catalog.generation;
      const next = new Map<string, TypeEntry>();
      for (const d of catalog.stored()) {
        const path = storagePathOf(d);
        next.set(path, byPath.get(path) ?? { type: etcdTypeOf(d, false), listType: etcdTypeOf(d, true), children: {}, listChildren: {} });
      }
      byPath = next;
    }
    return byPath;
  };
  return {
    attach(c: Catalog) {
      catalog = c;
    },
    observe(operation, key, seconds) {
      if (!metrics.recording || !key.startsWith(base)) return;
      const map = entries();
      const start = base.length;
      const i1 = key.indexOf('/', start);
      let entry = i1 > 0 ? map.get(key.slice(start, i1)) : undefined;
      if (!entry && i1 > 0) {
        const i2 = key.indexOf('/', i1 + 1);
        if (i2 > 0) entry = map.get(key.slice(start, i2));
      }
      if (!entry) return;
      const list = operation === 'list' || operation === 'listWithCount';
      metrics.etcdRequest(operation, list ? entry.listType : entry.type, seconds, list ? entry.listChildren : entry.children);
    },
  };
}

/** kube's qualified resource name: `pods`, `deployments.apps`. */
export function qualifiedResource(def: ResourceDefinition): string {
  return def.group === '' ? def.plural : `${def.plural}.${def.group}`;
}

/**
 * Where apiserver_storage_objects comes from: with watch caches, each ready cache's object count
 * when scraped; without, an etcd count of every stored resource each `periodMs` (kube's
 * --etcd-count-metric-poll-period, 1 minute). Returns the source and a stop function.
 */
export function storageObjectsSource(opts: {
  catalog: Catalog;
  storage: EtcdStore;
  watchCaches: WatchCaches | undefined;
  collectionPrefix(def: ResourceDefinition): string;
  periodMs?: number;
  onError?(err: unknown): void;
}): { source: () => Promise<Array<[string, number]>>; stop(): void } {
  const resourceByPrefix = (): Map<string, string> => {
    const m = new Map<string, string>();
    for (const d of opts.catalog.stored()) m.set(opts.collectionPrefix(d), qualifiedResource(d));
    return m;
  };
  const caches = opts.watchCaches;
  if (caches) {
    return {
      source: async () => {
        const names = resourceByPrefix();
        const out: Array<[string, number]> = [];
        for (const c of caches.all()) {
          const name = names.get(c.prefix);
          if (name && c.ready) out.push([name, c.stats().objects]);
        }
        return out;
      },
      stop() {},
    };
  }
  let last: Array<[string, number]> = [];
  const count = async (): Promise<void> => {
    const out: Array<[string, number]> = [];
    for (const [prefix, name] of resourceByPrefix()) out.push([name, await opts.storage.count(prefix)]);
    last = out;
  };
  const tick = (): void => void count().catch((e: unknown) => opts.onError?.(e));
  tick();
  const timer = setInterval(tick, opts.periodMs ?? 60_000);
  timer.unref();
  return { source: async () => last, stop: () => clearInterval(timer) };
}
