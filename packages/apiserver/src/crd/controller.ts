/**
 * The CustomResourceDefinition controllers of every plinth process (kube's apiextensions-apiserver
 * runs them in each replica): one informer over CRDs that
 *  - serves each CRD whose names are accepted: a ResourceDefinition per served version in the
 *    catalog (so discovery and OpenAPI follow), a registry store per version and a watch cache per
 *    CRD (kube's crdHandler storage map);
 *  - on the elected leader only (singleton work): writes status as kube's naming and establishing
 *    controllers do (NamesAccepted, Established, acceptedNames) through the status sub-resource;
 *    with several replicas serving, Established follows NamesAccepted after 5 s (kube's
 *    establishing controller in HA), so every replica serves a CRD before clients are told it is;
 *  - on the leader only: finalizes deleted CRDs (kube's finalizer controller): Terminating, every
 *    custom resource deleted, then the `customresourcecleanup.apiextensions.k8s.io` finalizer removed
 *    in the write that records the deletion complete. No create can land meanwhile: creates hold
 *    the CRD's etcd revision in their txn (lifecycle.ts).
 */
import { isDeepStrictEqual } from 'node:util';
import { apiVersionOf, conflict, groupResourceOf, isConflict, isNotFound, storagePathOf, type Catalog, type ResourceDefinition, type ResourceStrategy, type StoredObject, type UserInfo } from '@plinth/api';
import type { AdmissionChain } from '@plinth/admission';
import type { Cacher, EtcdStore, KeyFunctions, WatchCaches } from '@plinth/storage';
import { ResourceStore, now, type RequestScope } from '../registry/store.js';
import type { Logger } from '../log.js';
import { runInformer, type Informer } from '../controllers/informer.js';
import { buildCustomResourceDefinitions } from './definitions.js';
import { createWebhookConverter, type ConversionObserver, type CustomResourceConverter, type ServiceResolver } from './conversion-webhook.js';
import { calculateNamesAndConditions } from './names.js';
import { crdGuardKey, lifecycleOf, observe, type CRDLifecycle } from './lifecycle.js';
import { CLEANUP_FINALIZER, conditionOf, isConditionTrue, sameCondition, setCondition, storageVersionOf, type CRD } from './types.js';

const CONTROLLER_USER: UserInfo = { name: 'system:apiserver', uid: '', groups: ['system:masters'] };
const SCOPE: RequestScope = { user: CONTROLLER_USER, namespace: '' };

export interface CustomResourceControllerDeps {
  catalog: Catalog;
  /** The registry store of every served resource version; custom resources are added and removed. */
  stores: Map<ResourceDefinition, ResourceStore>;
  /** The store of customresourcedefinitions. */
  crds: ResourceStore;
  storage: EtcdStore;
  watchCaches: WatchCaches | undefined;
  keys: KeyFunctions;
  admission: AdmissionChain;
  /** `--enable-garbage-collector`: off, deletes of custom resources leave GC finalizers alone. */
  garbageCollection?: boolean;
  log: Logger;
  /** How many API server replicas serve (identity leases); more than one delays Established. */
  apiserverCount?: () => Promise<number>;
  /** ms between NamesAccepted and Established when several replicas serve (kube: 5 s). */
  establishDelayMs?: number;
  /** What conversion webhooks need: where services are served, and the duration metric. */
  conversion?: { resolveService?: ServiceResolver; observe?: ConversionObserver };
}

/** kube's establishing delay in HA (apiextensions-apiserver: 5 s when MasterCount > 1). */
const HA_ESTABLISH_DELAY_MS = 5000;

/** What one CRD is served with now. */
interface Served {
  /** The CRD's spec and accepted names this was built from (kube rebuilds when they change). */
  basis: unknown;
  lifecycle: CRDLifecycle;
  defs: ResourceDefinition[];
  storage: ResourceDefinition;
  cache: Cacher | undefined;
}

export interface CustomResourceControllers {
  /** Starts the informer; resolves once the CRDs present at start are served (kube's crd-informer-synced). */
  start(): Promise<void>;
  stop(): void;
  /** The leader's share (status and finalization): started when this replica leads, stopped when it stops. */
  lead(): () => void;
}

export function createCustomResourceControllers(deps: CustomResourceControllerDeps): CustomResourceControllers {
  const { catalog, stores, log } = deps;
  const known = new Map<string, CRD>();
  const served = new Map<string, Served>();
  const finalizing = new Set<string>();
  /** Each served CRD's storage-version store (what the finalizer deletes through). */
  const storageStores = new Map<string, ResourceStore>();
  let informer: Informer | undefined;
  let stopped = false;
  let leading = false;
  /** When each CRD not yet Established was first found acceptable (the HA establishing delay). */
  const installingSince = new Map<string, number>();
  const establishTimers = new Map<string, NodeJS.Timeout>();
  const statusStrategy: ResourceStrategy | undefined = deps.crds.def.subresources.find((s) => s.name === 'status')?.strategy;

  /** A CRD's conversion webhook client (kube builds one per CRD with its serving info). */
  const converterOf = (crd: CRD): CustomResourceConverter | undefined => {
    const conv = crd.spec.conversion;
    if (conv?.strategy !== 'Webhook' || !conv.webhook?.clientConfig) return undefined;
    const cc = conv.webhook.clientConfig;
    return createWebhookConverter({
      crdName: crd.metadata.name!,
      config: {
        ...(cc.url !== undefined ? { url: cc.url } : {}),
        ...(cc.service ? { service: cc.service } : {}),
        ...(cc.caBundle ? { caBundle: cc.caBundle } : {}),
        conversionReviewVersions: conv.webhook.conversionReviewVersions ?? [],
      },
      resolveService: deps.conversion?.resolveService,
      observe: deps.conversion?.observe,
    });
  };

  const unserve = (name: string): void => {
    const cur = served.get(name);
    if (!cur) return;
    served.delete(name);
    catalog.remove(cur.defs);
    for (const d of cur.defs) stores.delete(d);
    if (cur.cache) void deps.watchCaches?.remove(cur.cache);
  };

  /** Serves `crd` as its spec and accepted names say, replacing what served it before. */
  const serve = (crd: CRD): void => {
    const name = crd.metadata.name!;
    const basis = { uid: crd.metadata.uid, spec: crd.spec, acceptedNames: crd.status?.acceptedNames };
    const cur = served.get(name);
    if (cur && isDeepStrictEqual(cur.basis, basis)) {
      observe(cur.lifecycle, crd);
      return;
    }
    const lifecycle = lifecycleOf(crd, deps.keys.objectKey(storagePathOf(deps.crds.def), undefined, name));
    let built: ReturnType<typeof buildCustomResourceDefinitions>;
    try {
      built = buildCustomResourceDefinitions(crd, lifecycle, { converter: converterOf(crd) });
    } catch (e) {
      log.error('custom resource definition cannot be served', { name, error: String(e) });
      unserve(name);
      return;
    }
    const { served: defs, storage } = built;
    const prefix = deps.keys.collectionPrefix(storage.storagePath!);
    const cache = deps.watchCaches?.add(prefix, apiVersionOf(storage), storage.kind);
    const backing = cache ?? deps.storage;
    const next = new Map<ResourceDefinition, ResourceStore>();
    const onWatchConversionError = (e: unknown): void => log.error('unable to encode watch object', { crd: name, error: e instanceof Error ? e.message : String(e) });
    for (const d of defs) next.set(d, new ResourceStore(d, { storage: backing, keys: deps.keys, admission: deps.admission, garbageCollection: deps.garbageCollection, createGuardKey: crdGuardKey(lifecycle, d), onWatchConversionError }));
    // The storage version's store, for the finalizer, even when that version is not served.
    const storageStore = next.get(storage) ?? new ResourceStore(storage, { storage: backing, keys: deps.keys, admission: deps.admission, garbageCollection: deps.garbageCollection });
    try {
      // Stores first, so nothing the catalog lists is ever without one.
      for (const [d, st] of next) stores.set(d, st);
      catalog.replace(cur?.defs ?? [], defs);
    } catch (e) {
      for (const d of defs) stores.delete(d);
      if (cache) void deps.watchCaches?.remove(cache);
      log.error('custom resource definition conflicts with a served resource', { name, error: String(e) });
      return;
    }
    if (cur) {
      for (const d of cur.defs) stores.delete(d);
      if (cur.cache) void deps.watchCaches?.remove(cur.cache);
    }
    served.set(name, { basis, lifecycle, defs, storage, cache });
    storageStores.set(name, storageStore);
    log.v(2, 'serving custom resource', { name, versions: defs.map((d) => d.version) });
  };

  /** Writes the naming/establishing result when it differs from what the CRD has. */
  const updateNames = async (crd: CRD): Promise<void> => {
    if (crd.metadata.deletionTimestamp || !leading) return;
    const result = calculateNamesAndConditions(crd, known.values());
    const name = crd.metadata.name!;
    if (result.established.status === 'True' && conditionOf(crd, 'Established')?.status !== 'True') {
      // kube's naming controller writes Installing; its establishing controller sets Established
      // later — at once with one replica, after 5 s with several (so they all serve it first).
      const replicas = await (deps.apiserverCount?.() ?? Promise.resolve(1)).catch(() => 1);
      const delay = replicas > 1 ? (deps.establishDelayMs ?? HA_ESTABLISH_DELAY_MS) : 0;
      const since = installingSince.get(name) ?? Date.now();
      installingSince.set(name, since);
      const wait = since + delay - Date.now();
      if (wait > 0) {
        result.established = { type: 'Established', status: 'False', reason: 'Installing', message: 'the initial names have been accepted' };
        if (!establishTimers.has(name)) {
          const timer = setTimeout(() => {
            establishTimers.delete(name);
            const latest = known.get(name);
            if (latest && !stopped) void updateNames(latest).catch((e: unknown) => log.v(2, 'establishing a custom resource definition failed', { name, error: String(e) }));
          }, wait);
          timer.unref();
          establishTimers.set(name, timer);
        }
      }
    } else {
      installingSince.delete(name);
    }
    const storageVersion = storageVersionOf(crd);
    const stored = crd.status?.storedVersions ?? [];
    if (
      stored.includes(storageVersion) &&
      isDeepStrictEqual(crd.status?.acceptedNames, result.acceptedNames) &&
      sameCondition(conditionOf(crd, 'NamesAccepted'), result.namesAccepted) &&
      sameCondition(conditionOf(crd, 'Established'), result.established)
    ) {
      return;
    }
    await writeStatus(crd, (c) => {
      const t = now();
      const status = (c.status ??= {});
      status.acceptedNames = result.acceptedNames;
      // Every version objects were ever stored in (kube's registry adds it on each write).
      if (!(status.storedVersions ?? []).includes(storageVersion)) status.storedVersions = [...(status.storedVersions ?? []), storageVersion];
      setCondition(c, result.namesAccepted, t);
      setCondition(c, result.established, t);
    });
  };

  /** A status write at the version read (another replica's write first is a conflict: fine). */
  const writeStatus = async (crd: CRD, mutate: (c: CRD) => void): Promise<void> => {
    try {
      await deps.crds.modify(
        SCOPE,
        crd.metadata.name!,
        (obj) => {
          // Computed from what we read: a newer object is another replica's (or a user's) business.
          if (obj.metadata.resourceVersion !== crd.metadata.resourceVersion) throw conflict(groupResourceOf(deps.crds.def), crd.metadata.name!, 'stale');
          mutate(obj as CRD);
        },
        {},
        statusStrategy,
      );
    } catch (e) {
      if (isConflictOrGone(e)) return;
      throw e;
    }
  };

  /** kube's finalizer controller for a CRD being deleted. */
  const finalize = async (crd: CRD): Promise<void> => {
    const name = crd.metadata.name!;
    if (finalizing.has(name)) return;
    finalizing.add(name);
    try {
      let current = crd;
      if (!isConditionTrue(current, 'Terminating') || conditionOf(current, 'Terminating')?.reason !== 'InstanceDeletionInProgress') {
        current = (await modifyCRD(name, (c) => setCondition(c, { type: 'Terminating', status: 'True', reason: 'InstanceDeletionInProgress', message: 'CustomResource deletion is in progress' }, now()), statusStrategy)) ?? current;
      }
      const store = storageStores.get(name) ?? storeForDeletion(current);
      for (let attempt = 0; !stopped; attempt++) {
        try {
          await store.deleteCollection(SCOPE, {});
        } catch (e) {
          log.v(2, 'deleting custom resources failed', { name, error: String(e) });
        }
        const left = await store.list(SCOPE, {});
        if (left.items.length === 0) break;
        // Objects with finalizers of their own: kube waits for them too.
        await new Promise((r) => setTimeout(r, Math.min(200 * 2 ** attempt, 5000)).unref());
      }
      if (stopped) return;
      // One write, as kube's finalizer controller's UpdateStatus: the CRD is never seen with the
      // deletion completed and the finalizer still there (creates stay refused either way).
      await modifyCRD(
        name,
        (c) => {
          setCondition(c, { type: 'Terminating', status: 'False', reason: 'InstanceDeletionCompleted', message: 'removed all instances' }, now());
          c.metadata.finalizers = (c.metadata.finalizers ?? []).filter((f) => f !== CLEANUP_FINALIZER);
        },
        statusStrategy,
      );
    } catch (e) {
      log.v(2, 'custom resource definition finalizer failed', { name, error: String(e) });
    } finally {
      finalizing.delete(name);
    }
  };

  const modifyCRD = async (name: string, mutate: (c: CRD) => void, strategy?: ResourceStrategy): Promise<CRD | undefined> => {
    try {
      return (await deps.crds.modify(SCOPE, name, (obj) => mutate(obj as CRD), {}, strategy ?? deps.crds.def.strategy)) as CRD;
    } catch (e) {
      if (isConflictOrGone(e)) return undefined;
      throw e;
    }
  };

  /** A store over a CRD's objects when it is not served (its names were never accepted). */
  const storeForDeletion = (crd: CRD): ResourceStore => {
    const { storage } = buildCustomResourceDefinitions(crd);
    return new ResourceStore(storage, { storage: deps.storage, keys: deps.keys, admission: deps.admission, garbageCollection: deps.garbageCollection });
  };

  const onCRD = async (type: string, obj: StoredObject): Promise<void> => {
    const crd = obj as CRD;
    const name = crd.metadata.name!;
    if (type === 'DELETED') {
      known.delete(name);
      unserve(name);
      storageStores.delete(name);
      // Its names are free again: others of the group may now have theirs.
      for (const other of known.values()) if (other.spec.group === crd.spec.group) await updateNames(other);
      return;
    }
    known.set(name, crd);
    // kube serves once names are accepted (Established follows at once).
    if (isConditionTrue(crd, 'NamesAccepted') || isConditionTrue(crd, 'Established')) serve(crd);
    else unserve(name);
    if (crd.metadata.deletionTimestamp) {
      if (leading && crd.metadata.finalizers?.includes(CLEANUP_FINALIZER)) void finalize(crd);
      return;
    }
    await updateNames(crd);
  };

  return {
    async start() {
      let synced!: () => void;
      const first = new Promise<void>((r) => (synced = r));
      informer = runInformer({
        store: deps.crds,
        scope: SCOPE,
        log,
        resyncMs: 5 * 60_000,
        onObject: onCRD,
        onList: async (items) => {
          const present = new Set(items.map((i) => i.metadata.name!));
          for (const name of [...known.keys()]) if (!present.has(name)) await onCRD('DELETED', known.get(name)!);
          for (const item of items) {
            try {
              await onCRD('ADDED', item);
            } catch (e) {
              log.v(2, 'custom resource definition controller failed', { name: item.metadata.name, error: String(e) });
            }
          }
          synced();
        },
      });
      await first;
    },
    stop() {
      stopped = true;
      informer?.stop();
      for (const t of establishTimers.values()) clearTimeout(t);
      establishTimers.clear();
    },
    lead() {
      leading = true;
      // What happened while another replica led (or none did) is looked at now.
      for (const crd of [...known.values()]) {
        const work = crd.metadata.deletionTimestamp ? (crd.metadata.finalizers?.includes(CLEANUP_FINALIZER) ? finalize(crd) : Promise.resolve()) : updateNames(crd);
        void work.catch((e: unknown) => log.v(2, 'custom resource definition controller failed', { name: crd.metadata.name, error: String(e) }));
      }
      return () => {
        leading = false;
        for (const t of establishTimers.values()) clearTimeout(t);
        establishTimers.clear();
      };
    },
  };
}

const isConflictOrGone = (e: unknown): boolean => isConflict(e) || isNotFound(e);
