/**
 * The garbage collector's monitors (kube's GraphBuilder.syncMonitors over GetDeletableResources):
 * one informer per resource that supports delete, list and watch — built-in and custom, in its
 * group's preferred version — except core `events` (kube's default ignored resources), following
 * the catalog as CRDs come and go (kube rediscovers every 30 s; plinth hears each change).
 */
import { apiVersionOf, type Catalog, type ResourceDefinition, type StoredObject } from '@plinth/api';
import type { WatchEventType } from '@plinth/storage';
import type { ResourceStore } from '../../registry/store.js';
import type { Logger } from '../../log.js';
import { runInformer, type Informer } from '../informer.js';
import { GC_USER } from './client.js';

/** No periodic relist: kube's GC informers have a resync period of 0. */
const NO_RESYNC_MS = 24 * 3_600_000;

export interface MonitorDeps {
  catalog: Catalog;
  storeOf(def: ResourceDefinition): ResourceStore | undefined;
  log: Logger;
  /** A (re)list of one kind: every object there is. */
  onList(apiVersion: string, kind: string, items: StoredObject[]): void;
  onObject(apiVersion: string, kind: string, type: WatchEventType, obj: StoredObject): void;
  /** A list or watch failed (kube counts failed syncs in garbagecollector_controller_resources_sync_error_total). */
  onError(resource: string, e: unknown): void;
}

export interface Monitors {
  /** Resolves once every monitor present at start has listed once (kube's WaitForCacheSync). */
  synced: Promise<void>;
  /** The resources monitored (`<resource>.<group>` or `<resource>`), for logs and tests. */
  resources(): string[];
  stop(): void;
}

/** kube's DefaultIgnoredResources: core events only (events.k8s.io events share their storage here). */
function isIgnored(d: ResourceDefinition): boolean {
  return d.group === '' && d.plural === 'events';
}

/** The deletable resources, one definition per storage, each in its group's preferred version. */
function deletableResources(catalog: Catalog): ResourceDefinition[] {
  const preferred = catalog.groups();
  const out: ResourceDefinition[] = [];
  for (const stored of catalog.stored()) {
    if (isIgnored(stored)) continue;
    const served = catalog.equivalentResources(stored).filter((d) => d.group === stored.group && d.plural === stored.plural);
    // A custom resource converted by a webhook is watched in its storage version when that is
    // served: the collector reads only metadata, which conversion never changes, so no
    // ConversionReview is needed (kube's metadata informers convert, and a broken webhook stalls
    // its collector: kubernetes#101078).
    const asStored = served.find((x) => x.version === stored.version);
    const pref = served.find((x) => x.version === preferred.get(x.group)?.[0]);
    const d = (pref?.convertAsync ? asStored : undefined) ?? pref ?? served[0] ?? stored;
    if (!(['delete', 'list', 'watch'] as const).every((v) => d.verbs.includes(v))) continue;
    out.push(d);
  }
  return out;
}

export function startMonitors(deps: MonitorDeps): Monitors {
  const running = new Map<string, { store: ResourceStore; informer: Informer }>();
  let stopped = false;
  let initial: Promise<void>[] = [];

  const start = (d: ResourceDefinition, store: ResourceStore): Promise<void> => {
    const apiVersion = apiVersionOf(d);
    const name = d.group ? `${d.plural}.${d.group}` : d.plural;
    let listed: () => void = () => undefined;
    const synced = new Promise<void>((resolve) => (listed = resolve));
    const informer = runInformer({
      store,
      scope: { user: GC_USER, namespace: '' },
      log: deps.log,
      resyncMs: NO_RESYNC_MS,
      // The graph reads metadata only (kube's GC watches PartialObjectMetadata).
      metadataOnly: true,
      onList: (items) => {
        deps.onList(apiVersion, d.kind, items);
        listed();
      },
      onObject: (type, obj) => deps.onObject(apiVersion, d.kind, type, obj),
      onError: (e) => deps.onError(name, e),
    });
    running.set(`${d.group}/${d.plural}`, { store, informer });
    return synced;
  };

  const sync = (): void => {
    if (stopped) return;
    const wanted = new Map<string, [ResourceDefinition, ResourceStore]>();
    for (const d of deletableResources(deps.catalog)) {
      const store = deps.storeOf(d);
      if (store) wanted.set(`${d.group}/${d.plural}`, [d, store]);
    }
    const added: string[] = [];
    const removed: string[] = [];
    for (const [key, m] of running) {
      if (wanted.get(key)?.[1] === m.store) continue;
      m.informer.stop();
      running.delete(key);
      if (!wanted.has(key)) removed.push(key);
    }
    for (const [key, [d, store]] of wanted) {
      if (running.has(key)) continue;
      initial.push(start(d, store));
      added.push(key);
    }
    if (added.length + removed.length > 0) deps.log.v(2, 'garbage collector: syncing monitors with updated resources', { added, removed });
  };

  sync();
  const synced = Promise.all(initial).then(() => undefined);
  initial = [];
  const unsubscribe = deps.catalog.subscribe(() => {
    sync();
    initial = [];
  });
  return {
    synced,
    resources: () => [...running.keys()],
    stop() {
      stopped = true;
      unsubscribe();
      for (const m of running.values()) m.informer.stop();
      running.clear();
    },
  };
}
