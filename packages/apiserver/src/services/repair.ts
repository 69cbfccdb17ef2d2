/**
 * The allocation repair loops of kube 1.24 (pkg/registry/core/service/ipallocator/controller and
 * portallocator/controller repair.go). Every interval (kube: 3 minutes) each rebuilds its bitmap
 * from the Services in storage and writes it back with compare-and-swap against the snapshot it
 * started from (a concurrent allocation makes it start over), which
 * - initializes the stored RangeAllocation on a new cluster (nothing is allocated before that),
 * - marks IPs and ports Services use but the bitmap lacks ("not allocated; repairing"),
 * - reports duplicates and values outside the range (it cannot fix them: "please recreate"),
 * - releases allocations no Service uses, after they were seen leaked in 3 consecutive runs
 *   (an allocation whose Service is still being created is not a leak).
 * Reports go to the log, and as kube's Events (reason, action, note) to `onEvent` when given.
 */
import { CLUSTER_IP_NONE, type IPFamilyName, type Service, isConflict, isServiceIPSet, parseCIDR, parseIP } from '@plinth/api';
import { type Store, normalizePrefix } from '@plinth/storage';
import { type EtcdAllocationBackend, type RangeSnapshot, createMemoryBackend } from './allocator.js';
import { IPRange, createMemoryIPRange, familyOfIP, ipRangeMax, isIPAllocationError } from './ip-allocator.js';
import { PortAllocator, type PortRange, createMemoryPortAllocator, formatPortRange, isPortAllocationError, parsePortRange } from './port-allocator.js';
import type { ServiceREST } from './service-rest.js';

/** How many runs an allocation must look leaked in before it is released (kube: 3). */
export const REPAIRS_BEFORE_LEAK_CLEANUP = 3;
/** kube's repair interval. */
export const DEFAULT_REPAIR_INTERVAL_MS = 3 * 60_000;

/** A Warning Event kube's repair controllers record about a Service (events.k8s.io/v1 fields). */
export interface RepairEvent {
  regarding: { kind: 'Service'; apiVersion: 'v1'; namespace: string; name: string; uid?: string };
  type: 'Warning';
  reason: string;
  action: string;
  note: string;
  /** `ipallocator-repair-controller` or `portallocator-repair-controller`. */
  reportingController: string;
}

export interface RepairOptions {
  /** Every Service, read from etcd (not a cache). Default: the Services under `servicesPrefix` of `store`. */
  listServices?: () => Promise<Service[]>;
  store?: Store;
  /** Where Services are stored (kube: `<prefix>/services/specs/`). */
  servicesPrefix?: string;
  etcdPrefix?: string;
  intervalMs?: number;
  log?: (msg: string, fields: Record<string, unknown>) => void;
  onEvent?: (event: RepairEvent) => void;
}

/** A running repair loop. */
export interface RepairLoop {
  /** Resolves after the first successful run (kube fails readiness until then). */
  readonly firstSuccess: Promise<void>;
  /** One run now (with kube's retries on a conflict). */
  runOnce(): Promise<void>;
  stop(): void;
}

/** kube's retry.DefaultBackoff for RetryOnConflict: 4 tries, 10 ms ×5 each time, 10% jitter. */
async function retryOnConflict(fn: () => Promise<void>): Promise<void> {
  let delay = 10;
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (e) {
      if (!isConflict(e) || attempt >= 4) throw e;
      await new Promise((r) => setTimeout(r, delay * (1 + Math.random() * 0.1)));
      delay *= 5;
    }
  }
}

function serviceLister(opts: RepairOptions): () => Promise<Service[]> {
  if (opts.listServices) return opts.listServices;
  const store = opts.store;
  if (!store) throw new Error('repair: either listServices or store is required');
  const prefix = opts.servicesPrefix ?? `${normalizePrefix(opts.etcdPrefix ?? '/registry')}/services/specs/`;
  return async () => (await store.list(prefix)).items as Service[];
}

/** The cluster IPs a Service holds, as kube's client sees them (clusterIPs, or an old object's clusterIP). */
function clusterIPsOf(svc: Service): string[] {
  const ips = svc.spec?.clusterIPs ?? [];
  return ips.length > 0 ? ips : [svc.spec!.clusterIP!];
}

function ref(svc: Service): RepairEvent['regarding'] {
  return { kind: 'Service', apiVersion: 'v1', namespace: svc.metadata.namespace ?? '', name: svc.metadata.name ?? '', ...(svc.metadata.uid ? { uid: svc.metadata.uid } : {}) };
}

/** Leak bookkeeping shared by both loops: offsets seen unused, with runs left before release. */
class Leaks<K> {
  readonly #counts = new Map<K, number>();
  used(key: K): void {
    this.#counts.delete(key);
  }
  /** true: still counted as used in this run; false: release it now. */
  keep(key: K, report: (msg: string) => void, what: string): boolean {
    const count = this.#counts.get(key);
    if (count === undefined) {
      report(`the ${what} may have leaked: flagging for later clean up`);
      this.#counts.set(key, REPAIRS_BEFORE_LEAK_CLEANUP - 2);
      return true;
    }
    if (count > 0) {
      this.#counts.set(key, count - 1);
      return true;
    }
    this.#counts.delete(key);
    report(`the ${what} appears to have leaked: cleaning up`);
    return false;
  }
}

function loop(run: () => Promise<void>, intervalMs: number, log: RepairOptions['log']): RepairLoop {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let resolveFirst!: () => void;
  const firstSuccess = new Promise<void>((r) => (resolveFirst = r));
  const runOnce = (): Promise<void> => retryOnConflict(run);
  const tick = async (): Promise<void> => {
    try {
      await runOnce();
      resolveFirst();
    } catch (e) {
      log?.('allocation repair failed', { error: String(e) });
    }
    if (!stopped) timer = setTimeout(() => void tick(), intervalMs);
  };
  void tick();
  return {
    firstSuccess,
    runOnce,
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
    },
  };
}

/** The cluster-IP repair of one replica: every family's range of `rest`. */
export function createClusterIPRepair(rest: Pick<ServiceREST, 'ipBackends'>, opts: RepairOptions): { runOnce(): Promise<void>; start(): RepairLoop } {
  const list = serviceLister(opts);
  const log = opts.log ?? (() => undefined);
  const leaks = new Leaks<string>();
  const controller = 'ipallocator-repair-controller';
  const event = (svc: Service, reason: string, note: string): void => opts.onEvent?.({ regarding: ref(svc), type: 'Warning', reason, action: 'ClusterIPAllocation', note, reportingController: controller });

  const run = async (): Promise<void> => {
    const families = [...rest.ipBackends.entries()];
    const snapshots = new Map<IPFamilyName, RangeSnapshot>();
    const stored = new Map<IPFamilyName, IPRange>();
    const rebuilt = new Map<IPFamilyName, IPRange>();
    for (const [family, { range, backend }] of families) {
      const snap = await backend.get().catch((e: unknown) => {
        throw new Error(`unable to refresh the service IP block: ${String(e)}`);
      });
      // Not yet initialized: an empty bitmap of the configured range.
      if (snap.range === '') snap.range = range.rangeSpec;
      snapshots.set(family, snap);
      // The stored bitmap is read in the range it was written for: a changed flag is migrated.
      const storedCidr = parseCIDR(snap.range);
      if (storedCidr instanceof Error) throw new Error(`unable to rebuild allocator from snapshots: ${storedCidr.message}`);
      const mem = createMemoryBackend(ipRangeMax(storedCidr), snap.range);
      mem.bitmap.restore(snap.range, snap.data);
      stored.set(family, new IPRange(storedCidr, mem));
      rebuilt.set(family, createMemoryIPRange(range.cidr));
    }
    let services: Service[];
    try {
      services = await list();
    } catch (e) {
      throw new Error(`unable to refresh the service IP block: ${String(e)}`);
    }
    for (const svc of services) {
      if (!isServiceIPSet(svc)) continue;
      const who = `${svc.metadata.name}/${svc.metadata.namespace}`;
      for (const ip of clusterIPsOf(svc)) {
        if (ip === CLUSTER_IP_NONE) continue;
        if (!parseIP(ip)) {
          event(svc, 'ClusterIPNotValid', `Cluster IP ${ip} is not a valid IP; please recreate service`);
          log(`the cluster IP ${ip} for service ${who} is not a valid IP; please recreate`, {});
          continue;
        }
        const family = familyOfIP(ip)!;
        const actual = rebuilt.get(family);
        if (!actual) {
          event(svc, 'ClusterIPNotValid', `Cluster IP ${ip}(${family}) is of ip family that is no longer configured on cluster; please recreate service`);
          log(`the cluster IP ${ip}(${family}) for service ${who} is of ip family that is no longer configured on cluster; please recreate`, {});
          continue;
        }
        try {
          await actual.allocate(ip);
          const old = stored.get(family)!;
          if (await old.has(ip)) {
            await old.release(ip); // what remains in `old` afterwards looks leaked
          } else {
            event(svc, 'ClusterIPNotAllocated', `Cluster IP [${family}]:${ip} is not allocated; repairing`);
            log(`the cluster IP [${family}]:${ip} for service ${who} is not allocated; repairing`, {});
          }
          leaks.used(ip);
        } catch (e) {
          if (isIPAllocationError(e, 'Allocated')) {
            event(svc, 'ClusterIPAlreadyAllocated', `Cluster IP [${family}]:${ip} was assigned to multiple services; please recreate service`);
            log(`the cluster IP [${family}]:${ip} for service ${who} was assigned to multiple services; please recreate`, {});
          } else if (isIPAllocationError(e, 'NotInRange')) {
            const cidr = actual.rangeSpec;
            event(svc, 'ClusterIPOutOfRange', `Cluster IP [${family}]:${ip} is not within the service CIDR ${cidr}; please recreate service`);
            log(`the cluster IP [${family}]:${ip} for service ${who} is not within the service CIDR ${cidr}; please recreate`, {});
          } else if (isIPAllocationError(e, 'Full')) {
            event(svc, 'ServiceCIDRFull', `Service CIDR ${actual.rangeSpec} is full; you must widen the CIDR in order to create new services for Cluster IP [${family}]:${ip}`);
            throw new Error(`the service CIDR ${actual.rangeSpec} is full; you must widen the CIDR in order to create new services for Cluster IP [${family}]:${ip}`);
          } else {
            event(svc, 'UnknownError', `Unable to allocate cluster IP [${family}]:${ip} due to an unknown error`);
            throw new Error(`unable to allocate cluster IP [${family}]:${ip} for service ${who} due to an unknown error, exiting: ${String(e)}`);
          }
        }
      }
    }
    for (const [family, { backend }] of families) {
      const old = stored.get(family)!;
      const next = rebuilt.get(family)!;
      const left: string[] = [];
      await old.forEach((ip) => left.push(ip));
      for (const ip of left) {
        if (!leaks.keep(ip, (m) => log(m, {}), `cluster IP ${ip}`)) continue;
        await next.allocate(ip).catch((e: unknown) => log(`the cluster IP ${ip} may have leaked, but can not be allocated: ${String(e)}`, {}));
      }
      await save(backend, next, snapshots.get(family)!, 'service IP allocations');
    }
  };
  return { runOnce: () => retryOnConflict(run), start: () => loop(run, opts.intervalMs ?? DEFAULT_REPAIR_INTERVAL_MS, opts.log) };
}

/** Writes a rebuilt bitmap over the snapshot it was built from (409 when it moved since). */
async function save(backend: EtcdAllocationBackend, rebuilt: IPRange | PortAllocator, from: RangeSnapshot, what: string): Promise<void> {
  const mem = rebuilt.backend as ReturnType<typeof createMemoryBackend>;
  const { range, data } = mem.bitmap.snapshot();
  try {
    await backend.createOrUpdate({ range, data, resourceVersion: from.resourceVersion });
  } catch (e) {
    if (isConflict(e)) throw e;
    throw new Error(`unable to persist the updated ${what}: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/**
 * kube's collectServiceNodePorts of the repair loop: a node port shared by ports of different
 * protocols counts once; the health-check node port counts too.
 */
export function repairNodePortsOf(svc: Service): number[] {
  const out: number[] = [];
  const seen = new Map<number, Set<string>>();
  for (const p of svc.spec?.ports ?? []) {
    const np = p.nodePort ?? 0;
    if (np === 0) continue;
    const proto = p.protocol ?? '';
    const protos = seen.get(np);
    if (!protos) {
      seen.set(np, new Set([proto]));
      out.push(np);
    } else if (protos.has(proto)) {
      out.push(np);
    } else {
      protos.add(proto);
    }
  }
  const hc = svc.spec?.healthCheckNodePort ?? 0;
  if (hc !== 0) {
    const protos = seen.get(hc);
    if (!protos || protos.has('TCP')) out.push(hc);
  }
  return out;
}

/** The node-port repair of one replica. */
export function createNodePortRepair(rest: Pick<ServiceREST, 'nodePortBackend'>, opts: RepairOptions): { runOnce(): Promise<void>; start(): RepairLoop } {
  const list = serviceLister(opts);
  const log = opts.log ?? (() => undefined);
  const leaks = new Leaks<number>();
  const { allocator, backend } = rest.nodePortBackend;
  const portRange: PortRange = allocator.portRange;
  const spec = formatPortRange(portRange);
  const event = (svc: Service, reason: string, note: string): void =>
    opts.onEvent?.({ regarding: ref(svc), type: 'Warning', reason, action: 'PortAllocation', note, reportingController: 'portallocator-repair-controller' });

  const run = async (): Promise<void> => {
    const snap = await backend.get().catch((e: unknown) => {
      throw new Error(`unable to refresh the port allocations: ${String(e)}`);
    });
    if (snap.range === '') snap.range = spec;
    let storedRange: PortRange;
    try {
      storedRange = parsePortRange(snap.range);
    } catch (e) {
      throw new Error(`unable to rebuild allocator from snapshot: ${(e as Error).message}`);
    }
    const storedMem = createMemoryBackend(storedRange.size, snap.range);
    storedMem.bitmap.restore(snap.range, snap.data);
    const stored = new PortAllocator(storedRange, storedMem);
    let services: Service[];
    try {
      services = await list();
    } catch (e) {
      throw new Error(`unable to refresh the port block: ${String(e)}`);
    }
    const rebuilt = createMemoryPortAllocator(portRange);
    for (const svc of services) {
      const who = `${svc.metadata.name}/${svc.metadata.namespace}`;
      for (const port of repairNodePortsOf(svc)) {
        try {
          await rebuilt.allocate(port);
          if (await stored.has(port)) {
            await stored.release(port);
          } else {
            event(svc, 'PortNotAllocated', `Port ${port} is not allocated; repairing`);
            log(`the node port ${port} for service ${who} is not allocated; repairing`, {});
          }
          leaks.used(port);
        } catch (e) {
          if (isPortAllocationError(e, 'Allocated')) {
            event(svc, 'PortAlreadyAllocated', `Port ${port} was assigned to multiple services; please recreate service`);
            log(`the node port ${port} for service ${who} was assigned to multiple services; please recreate`, {});
          } else if (isPortAllocationError(e, 'NotInRange')) {
            event(svc, 'PortOutOfRange', `Port ${port} is not within the port range ${spec}; please recreate service`);
            log(`the port ${port} for service ${who} is not within the port range ${spec}; please recreate`, {});
          } else if (isPortAllocationError(e, 'Full')) {
            event(svc, 'PortRangeFull', `Port range ${spec} is full; you must widen the port range in order to create new services`);
            throw new Error(`the port range ${spec} is full; you must widen the port range in order to create new services`);
          } else {
            event(svc, 'UnknownError', `Unable to allocate port ${port} due to an unknown error`);
            throw new Error(`unable to allocate port ${port} for service ${who} due to an unknown error, exiting: ${String(e)}`);
          }
        }
      }
    }
    const left: number[] = [];
    await stored.forEach((p) => left.push(p));
    for (const port of left) {
      if (!leaks.keep(port, (m) => log(m, {}), `node port ${port}`)) continue;
      await rebuilt.allocate(port).catch((e: unknown) => log(`the node port ${port} may have leaked, but can not be allocated: ${String(e)}`, {}));
    }
    await save(backend, rebuilt, snap, 'port allocations');
  };
  return { runOnce: () => retryOnConflict(run), start: () => loop(run, opts.intervalMs ?? DEFAULT_REPAIR_INTERVAL_MS, opts.log) };
}
