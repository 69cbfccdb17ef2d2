/**
 * The `kubernetes` Service in `default` and its Endpoints, kept by every replica as kube 1.24's
 * bootstrap controller does it (pkg/controlplane/controller.go) with the lease endpoint
 * reconciler (pkg/controlplane/reconcilers/lease.go, `--endpoint-reconciler-type=lease`):
 *
 * - Each replica refreshes a lease record of its advertised address every interval (kube: 10 s):
 *   a core/v1 Endpoints object at `<prefix>/masterleases/<ip>` written with an etcd lease of the
 *   lease TTL (kube: 15 s), so a replica that stops refreshing drops out when etcd expires it.
 * - Each replica then rewrites `default/kubernetes` Endpoints when it differs from the live
 *   leases: one subset, the addresses sorted, port `https` → `--secure-port`, and kube's label
 *   `endpointslice.kubernetes.io/skip-mirror: "true"`.
 * - The Service (cluster IP: the first address of the service range; port 443 `https` → the
 *   secure port; SingleStack; labels provider=kubernetes, component=apiserver) is created when
 *   absent; its ports and type are corrected on the first pass after start only.
 * - Start first removes this replica's own lease (a stale one from an unclean exit); stop removes
 *   it too, so the address leaves the Endpoints at once on a graceful shutdown.
 * - The cluster-IP and node-port repair loops (repair.ts) run here as in kube, and the first pass
 *   waits for their first success (nothing can be allocated before it).
 *
 * - After each pass (written or not) the EndpointSlice `default/kubernetes` follows the Endpoints
 *   as kube's EndpointsAdapter keeps it (pkg/controlplane/reconcilers/endpointsadapter.go): label
 *   `kubernetes.io/service-name: kubernetes`, address type IPv4 (IPv6 when every address is),
 *   one ready endpoint per address of that family, the Endpoints' ports; created when absent,
 *   replaced when its address type differs, updated only when endpoints, ports or labels differ.
 */
import { type Endpoints, type EndpointPort, type IPFamilyName, type Service, type ServicePort, type StoredObject, isAlreadyExists, isConflict } from '@plinth/api';
import { isDeepStrictEqual } from 'node:util';
import { type Store, isStorageError, normalizePrefix } from '@plinth/storage';
import { type DeletingObjectClient, type ObjectClient, createStorageEndpointSliceClient, createStorageEndpointsClient, createStorageServiceClient } from './object-clients.js';
import { type RepairEvent, type RepairLoop, createClusterIPRepair, createNodePortRepair } from './repair.js';
import type { ServiceREST } from './service-rest.js';

export const KUBERNETES_SERVICE_NAME = 'kubernetes';
/** kube's `DefaultEndpointReconcilerTTL` and `DefaultEndpointReconcilerInterval`. */
export const DEFAULT_LEASE_TTL_SECONDS = 15;
export const DEFAULT_RECONCILE_INTERVAL_MS = 10_000;
/** How long start waits for the repair loops' first success (kube: 1 minute). */
const INITIAL_REPAIR_TIMEOUT_MS = 60_000;
/** kube's discoveryv1.LabelSkipMirror: the EndpointSlice mirroring controller leaves these Endpoints alone. */
const LABEL_SKIP_MIRROR = 'endpointslice.kubernetes.io/skip-mirror';
/** kube's discoveryv1.LabelServiceName. */
const LABEL_SERVICE_NAME = 'kubernetes.io/service-name';

export interface KubernetesServiceOptions {
  /** The raw etcd store (the leases are read from etcd, never a cache). */
  store: Store;
  etcdPrefix?: string;
  /** The Service allocators (createServiceREST), for the repair loops and the default clients. */
  rest: ServiceREST;
  /** This replica's `--advertise-address` (resolved: options.ts `services.advertiseAddress`). */
  advertiseAddress: string;
  /** Why none could be resolved (options.ts `services.advertiseAddressError`): start-up fails with it. */
  advertiseAddressError?: string;
  /** The port this replica serves HTTPS on: the Endpoints' port, the Service's targetPort. */
  securePort: number;
  /** The Service's port (kube: 443). */
  servicePort?: number;
  leaseTTLSeconds?: number;
  intervalMs?: number;
  /** Run the cluster-IP and node-port repair loops here (default true), every `repairIntervalMs`. */
  repair?: boolean;
  repairIntervalMs?: number;
  /** Access to the two resources; default: the storage-backed clients (object-clients.ts). */
  services?: ObjectClient<Service>;
  endpoints?: ObjectClient<Endpoints>;
  /** discovery.k8s.io/v1 EndpointSlices; default the storage-backed client. */
  endpointSlices?: DeletingObjectClient<StoredObject>;
  log?: (msg: string, fields: Record<string, unknown>) => void;
  /** Warning Events of the repair loops (kube records them on the Services). */
  onRepairEvent?: (event: RepairEvent) => void;
}

export interface KubernetesServiceController {
  /** Removes a stale own lease, starts the repair loops and the reconcile loop. */
  start(): Promise<void>;
  /** Stops the loops and removes this replica's lease and address (bounded by 2 intervals, as kube). */
  stop(): Promise<void>;
  /** One pass now (lease refresh, Service, Endpoints); throws what the pass hit. */
  reconcileOnce(): Promise<void>;
}

/** kube's storageLeases over etcd keys `<prefix>/masterleases/<ip>`. */
function leases(store: Store, prefix: string, ttlSeconds: number) {
  const base = `${prefix}/masterleases/`;
  return {
    async list(): Promise<string[]> {
      const items = (await store.list(base)).items as Endpoints[];
      const ips: string[] = [];
      for (const e of items) {
        const ip = e.subsets?.[0]?.addresses?.[0]?.ip;
        if (ip) ips.push(ip);
      }
      return ips;
    },
    async update(ip: string): Promise<void> {
      await store.guaranteedUpdate(
        base + ip,
        (cur) => {
          // The generation changes on every refresh so that the write (and its new lease) happens.
          const generation = Number(cur?.metadata.generation ?? 0) + 1;
          return { kind: 'Endpoints', apiVersion: 'v1', metadata: { ...(cur?.metadata ?? { creationTimestamp: null }), generation }, subsets: [{ addresses: [{ ip }] }] };
        },
        { ignoreNotFound: true, ttlSeconds },
      );
    },
    /** Throws NotFound when there is no lease (kube's storage Delete). */
    async remove(ip: string): Promise<void> {
      await store.delete(base + ip);
    },
  };
}

function samePorts(actual: EndpointPort[] | undefined, want: EndpointPort[]): boolean {
  const a = actual ?? [];
  return a.length === want.length && want.every((p, i) => a[i]!.name === p.name && a[i]!.port === p.port && a[i]!.protocol === p.protocol && a[i]!.appProtocol === undefined);
}

/** kube's endpointSliceFromEndpoints: the first subset as one IPv4 (or all-IPv6) discovery.k8s.io/v1 EndpointSlice. */
export function endpointSliceFromEndpoints(e: Endpoints): StoredObject {
  const name = e.metadata.name ?? '';
  const slice: StoredObject = {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name, namespace: e.metadata.namespace ?? 'default', labels: { [LABEL_SERVICE_NAME]: name } },
    addressType: 'IPv4',
    endpoints: [],
  };
  const subset = e.subsets?.[0];
  if (!subset) return slice;
  slice['ports'] = (subset.ports ?? []).map((p) => ({ name: p.name ?? '', port: p.port ?? 0, protocol: p.protocol ?? 'TCP' }));
  const ready = subset.addresses ?? [];
  const notReady = subset.notReadyAddresses ?? [];
  const all = [...ready, ...notReady];
  const ipv6 = all.length > 0 && all.every((a) => (a.ip ?? '').includes(':'));
  if (ipv6) slice['addressType'] = 'IPv6';
  const endpointsOf = (addresses: typeof ready, isReady: boolean) =>
    addresses
      .filter((a) => (a.ip ?? '').includes(':') === ipv6)
      .map((a) => ({ addresses: [a.ip ?? ''], conditions: { ready: isReady }, ...(a.targetRef ? { targetRef: a.targetRef } : {}), ...(a.nodeName !== undefined ? { nodeName: a.nodeName } : {}) }));
  slice['endpoints'] = [...endpointsOf(ready, true), ...endpointsOf(notReady, false)];
  return slice;
}

/** kube's EnsureEndpointSliceFromEndpoints: create, replace (address type changed) or update the slice when it differs. */
async function ensureEndpointSlice(slices: DeletingObjectClient<StoredObject>, e: Endpoints): Promise<void> {
  const want = endpointSliceFromEndpoints(e);
  const ns = want.metadata.namespace ?? 'default';
  const name = want.metadata.name ?? '';
  const current = await slices.get(ns, name);
  if (!current) {
    try {
      await slices.create(want);
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
    }
    return;
  }
  if (current['addressType'] !== want['addressType']) {
    await slices.delete(ns, name);
    await slices.create(want);
    return;
  }
  if (isDeepStrictEqual(current['endpoints'] ?? [], want['endpoints']) && isDeepStrictEqual(current['ports'] ?? [], want['ports'] ?? []) && isDeepStrictEqual(current.metadata.labels ?? {}, want.metadata.labels)) return;
  // As kube's adapter: an unconditional update with the computed object (no resourceVersion).
  await slices.update(want);
}

/** Go's `bytes.Compare` order of strings (kube sorts endpoint addresses by IP bytes). */
const byBytes = (a: string, b: string): number => Buffer.compare(Buffer.from(a), Buffer.from(b));

/** kube's checkServiceFormat: the type and every port (all fields) as desired. */
function serviceFormatCorrect(svc: Service, ports: ServicePort[], type: string): boolean {
  const have = svc.spec?.ports ?? [];
  if (svc.spec?.type !== type || have.length !== ports.length) return false;
  return ports.every((p, i) => {
    const h = have[i]!;
    return h.name === p.name && h.protocol === p.protocol && h.port === p.port && h.targetPort === p.targetPort && (h.nodePort ?? 0) === 0 && h.appProtocol === undefined;
  });
}

export function createKubernetesServiceController(opts: KubernetesServiceOptions): KubernetesServiceController {
  const prefix = normalizePrefix(opts.etcdPrefix ?? '/registry');
  const log = opts.log ?? (() => undefined);
  const ttl = opts.leaseTTLSeconds ?? DEFAULT_LEASE_TTL_SECONDS;
  const intervalMs = opts.intervalMs ?? DEFAULT_RECONCILE_INTERVAL_MS;
  const ip = opts.advertiseAddress;
  if (!ip) throw new Error(opts.advertiseAddressError ?? 'the kubernetes Service reconciler needs an advertise address');
  const masterLeases = leases(opts.store, prefix, ttl);
  const services = opts.services ?? createStorageServiceClient({ store: opts.store, rest: opts.rest, etcdPrefix: prefix });
  const endpoints = opts.endpoints ?? createStorageEndpointsClient({ store: opts.store, etcdPrefix: prefix });
  const slices = opts.endpointSlices ?? createStorageEndpointSliceClient({ store: opts.store, etcdPrefix: prefix });
  const endpointPorts: EndpointPort[] = [{ name: 'https', port: opts.securePort, protocol: 'TCP' }];
  const servicePorts: ServicePort[] = [{ name: 'https', protocol: 'TCP', port: opts.servicePort ?? 443, targetPort: opts.securePort }];
  const family: IPFamilyName = opts.rest.ranges.primary.family;

  let stopped = false;
  let firstPass = true;
  let timer: NodeJS.Timeout | undefined;
  let repairs: RepairLoop[] = [];
  /** One reconcile at a time (kube's reconcilingLock). */
  let running: Promise<void> = Promise.resolve();
  const serial = (fn: () => Promise<void>): Promise<void> => {
    const run = running.then(fn, fn);
    running = run.catch(() => undefined);
    return run;
  };

  /** kube's CreateOrUpdateMasterServiceIfNeeded. */
  const ensureService = async (reconcile: boolean): Promise<void> => {
    for (;;) {
      const svc = await services.get('default', KUBERNETES_SERVICE_NAME);
      if (svc) {
        if (reconcile && !serviceFormatCorrect(svc, servicePorts, 'ClusterIP')) {
          log('resetting the kubernetes service ports and type', { ports: servicePorts });
          const next = structuredClone(svc);
          next.spec = { ...next.spec, ports: structuredClone(servicePorts), type: 'ClusterIP' };
          await services.update(next);
        }
        return;
      }
      const fresh: Service = {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: KUBERNETES_SERVICE_NAME, namespace: 'default', labels: { provider: 'kubernetes', component: 'apiserver' } },
        spec: { ports: structuredClone(servicePorts), clusterIP: opts.rest.ranges.apiServerServiceIP, ipFamilyPolicy: 'SingleStack', sessionAffinity: 'None', type: 'ClusterIP' },
      };
      try {
        await services.create(fresh);
        return;
      } catch (e) {
        if (!isAlreadyExists(e)) throw e;
      }
    }
  };

  /** kube's leaseEndpointReconciler.doReconcile. */
  const reconcileEndpoints = async (reconcilePorts: boolean): Promise<void> => {
    const current = await endpoints.get('default', KUBERNETES_SERVICE_NAME);
    const e: Endpoints = current ? structuredClone(current) : { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: KUBERNETES_SERVICE_NAME, namespace: 'default' } };
    const ips = await masterLeases.list();
    // Our own lease was just refreshed: none at all means storage is wrong, not that all are gone.
    if (ips.length === 0) throw new Error('no master IPs were listed in storage, refusing to erase all endpoints for the kubernetes service');
    let labelChanged = false;
    if (e.metadata.labels?.[LABEL_SKIP_MIRROR] !== 'true') {
      e.metadata.labels = { ...e.metadata.labels, [LABEL_SKIP_MIRROR]: 'true' };
      labelChanged = true;
    }
    const subsets = e.subsets ?? [];
    const formatCorrect = subsets.length === 1;
    const sub = subsets[0];
    const portsCorrect = formatCorrect && (!reconcilePorts || samePorts(sub!.ports, endpointPorts));
    const have = formatCorrect ? (sub!.addresses ?? []).map((a) => a.ip ?? '') : [];
    const ipsCorrect = formatCorrect && have.length === ips.length && new Set(have).size === have.length && have.every((a) => ips.includes(a));
    if (!labelChanged && formatCorrect && ipsCorrect && portsCorrect) return ensureEndpointSlice(slices, e);
    if (!formatCorrect) e.subsets = [{ addresses: [], ports: structuredClone(endpointPorts) }];
    const subset = e.subsets![0]!;
    if (!formatCorrect || !ipsCorrect) subset.addresses = [...ips].sort(byBytes).map((a) => ({ ip: a }));
    if (!portsCorrect) subset.ports = structuredClone(endpointPorts);
    log('resetting endpoints for the kubernetes service', { addresses: ips });
    // kube's EndpointsAdapter: the slice follows a successful write (not a lost create race).
    if (current) await ensureEndpointSlice(slices, await endpoints.update(e));
    else {
      let created: Endpoints | undefined;
      try {
        created = await endpoints.create(e);
      } catch (err) {
        if (!isAlreadyExists(err)) throw err;
      }
      if (created) await ensureEndpointSlice(slices, created);
    }
  };

  /** kube's RemoveEndpoints: drop our lease, then reconcile the addresses (ports too). */
  const removeEndpoints = async (): Promise<void> => {
    await masterLeases.remove(ip);
    await reconcileEndpoints(true);
  };

  /** One pass of kube's UpdateKubernetesService. */
  const reconcileOnce = (): Promise<void> =>
    serial(async () => {
      if (stopped) return;
      const reconcile = firstPass;
      await ensureService(reconcile);
      // Refreshed whatever happens next, so that other replicas keep listing us.
      await masterLeases.update(ip);
      await reconcileEndpoints(reconcile);
      firstPass = false;
    });

  const tick = async (): Promise<void> => {
    try {
      await reconcileOnce();
    } catch (e) {
      // Another replica's concurrent write is routine; the next pass settles it.
      if (!isConflict(e)) log('unable to sync kubernetes service', { error: String(e) });
    }
    if (!stopped) timer = setTimeout(() => void tick(), intervalMs);
  };

  return {
    async start() {
      if (family !== (ip.includes(':') ? 'IPv6' : 'IPv4')) {
        log('the advertise address and the service IP range are of different IP families: clients of the kubernetes Service cannot reach it', { advertiseAddress: ip, serviceClusterIPRange: opts.rest.ranges.primary });
      }
      try {
        await serial(removeEndpoints);
        log('found stale data, removed previous endpoints on kubernetes service, apiserver did not exit successfully previously', {});
      } catch (e) {
        if (!isStorageError(e, 'NotFound')) log('error removing old endpoints from kubernetes service', { error: String(e) });
      }
      if (opts.repair !== false) {
        const repairOpts = { store: opts.store, etcdPrefix: prefix, log, ...(opts.repairIntervalMs ? { intervalMs: opts.repairIntervalMs } : {}), ...(opts.onRepairEvent ? { onEvent: opts.onRepairEvent } : {}) };
        repairs = [createClusterIPRepair(opts.rest, repairOpts).start(), createNodePortRepair(opts.rest, repairOpts).start()];
        // kube gives up (exits) when the first repair has not succeeded within a minute.
        let timeout: NodeJS.Timeout | undefined;
        const limit = new Promise<never>((_, reject) => {
          timeout = setTimeout(() => reject(new Error('Unable to perform initial IP and Port allocation check')), INITIAL_REPAIR_TIMEOUT_MS);
        });
        try {
          await Promise.race([Promise.all(repairs.map((r) => r.firstSuccess)), limit]);
        } finally {
          clearTimeout(timeout);
        }
      }
      if (!stopped) void tick();
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      for (const r of repairs) r.stop();
      // Don't hold shutdown forever when etcd is unreachable (kube: 2 intervals).
      const bound = new Promise<void>((r) => setTimeout(r, 2 * intervalMs).unref());
      const removal = (async () => {
        await running;
        try {
          await removeEndpoints();
        } catch (e) {
          log('unable to remove endpoints from kubernetes service', { error: String(e) });
        }
      })();
      await Promise.race([removal, bound]);
    },
    reconcileOnce,
  };
}
