/**
 * The Service REST hooks of kube 1.24 (pkg/registry/core/service/storage/storage.go), for the
 * Service store to call:
 *
 * - `allocateOnCreate(svc, dryRun)` — kube's beginCreate: after defaulting and mutating admission,
 *   before the strategy's PrepareForCreate and validation. Syncs clusterIPs with clusterIP,
 *   defaults ipFamilies/ipFamilyPolicy, takes cluster IPs and node ports. Returns a transaction:
 *   `commit()` once the object is stored, `revert()` if the create fails after this.
 * - `reallocateOnUpdate(next, old, dryRun)` — kube's beginUpdate, in the update's retry loop after
 *   the resourceVersion check, before PrepareForUpdate and validation: keeps values the client
 *   omitted (clusterIP, node ports), then allocates and schedules releases for the change.
 *   kube commits it before the etcd write (its store calls the finish function inside the
 *   update); commit after the write, or revert when the write is not made.
 * - `releaseOnDelete(svc, dryRun)` — kube's afterDelete: deletes the Service's Endpoints and
 *   gives back its IPs and ports (nothing on a dry run).
 * - `defaultOnRead(svc)` — kube's Decorator: fills fields objects written by older servers lack.
 *
 * The allocators keep their bitmaps in etcd (allocator.ts); the repair loops (repair.ts) must have
 * run once before the first allocation, as in kube.
 */
import { CLUSTER_IP_NONE, IPFamily, IPFamilyPolicy, type IPFamilyName, type Service, ServiceType, formatCIDR, isIPv6String, needsClusterIP, needsHealthCheck, needsNodePort } from '@plinth/api';
import { type Store, isStorageError, normalizePrefix } from '@plinth/storage';
import { EtcdAllocationBackend } from './allocator.js';
import { IPRange, ipRangeMax } from './ip-allocator.js';
import { PortAllocator, formatPortRange } from './port-allocator.js';
import { type ServiceIPRanges, parseServiceClusterIPRange, parseServiceNodePortRange } from './ranges.js';
import { type AllocationTxn, ServiceAllocators } from './service-alloc.js';

export type { AllocationTxn } from './service-alloc.js';

/** kube's keys of the range allocations, under the etcd prefix. */
export const RANGE_KEYS = { serviceIPs: 'ranges/serviceips', secondaryServiceIPs: 'ranges/secondaryserviceips', nodePorts: 'ranges/servicenodeports' } as const;

export interface ServiceRESTOptions {
  /** The raw etcd store (not a watch cache: allocations must read what etcd has). */
  store: Store;
  /** `--etcd-prefix` (default /registry). */
  etcdPrefix?: string;
  /** `--service-cluster-ip-range` as given ('' → 10.0.0.0/24). */
  serviceClusterIPRange?: string;
  /** `--service-node-port-range` as given (default 30000-32767). */
  serviceNodePortRange?: string;
  /**
   * Deletes a Service's Endpoints after the Service is deleted (kube's afterDelete does it through
   * the Endpoints storage). Default: the Endpoints' etcd key as kube lays it out
   * (`<prefix>/services/endpoints/<namespace>/<name>`).
   */
  deleteEndpoints?: (namespace: string, name: string) => Promise<void>;
  log?: (msg: string, fields: Record<string, unknown>) => void;
}

export interface ServiceREST {
  readonly ranges: ServiceIPRanges;
  readonly nodePortRange: string;
  /** The cluster's families and allocators, the primary's first. */
  readonly allocators: ServiceAllocators;
  /** The etcd-backed bitmaps, for the repair loops. */
  readonly ipBackends: ReadonlyMap<IPFamilyName, { range: IPRange; backend: EtcdAllocationBackend }>;
  readonly nodePortBackend: { allocator: PortAllocator; backend: EtcdAllocationBackend };
  allocateOnCreate(svc: Service, dryRun: boolean): Promise<AllocationTxn>;
  reallocateOnUpdate(next: Service, old: Service, dryRun: boolean): Promise<AllocationTxn>;
  releaseOnDelete(svc: Service, dryRun: boolean): Promise<void>;
  defaultOnRead(svc: Service): Service;
}

/**
 * kube's normalizeClusterIPs: a client that sets only clusterIP (an old client) gets clusterIPs
 * to match; on update, an omitted or cleared clusterIPs follows an unchanged or cleared clusterIP.
 */
export function normalizeClusterIPs(next: Service, old: Service | undefined): void {
  const spec = next.spec ?? (next.spec = {});
  const ip = spec.clusterIP ?? '';
  const ips = spec.clusterIPs ?? [];
  if (!old) {
    if (ip !== '' && ips.length === 0) spec.clusterIPs = [ip];
    return;
  }
  const oldIP = old.spec?.clusterIP ?? '';
  const oldIPs = old.spec?.clusterIPs ?? [];
  if (oldIPs.length > 0 && ips.length === 0 && oldIP === ip) spec.clusterIPs = [...oldIPs];
  const same = (): boolean => {
    const cur = spec.clusterIPs ?? [];
    return cur.length === oldIPs.length && cur.every((v, i) => v === oldIPs[i]);
  };
  if (oldIP !== ip) {
    if (oldIP !== '' && ip === '') {
      if (same()) delete spec.clusterIPs;
    } else if (same()) {
      spec.clusterIPs = [ip];
    }
  }
}

/**
 * kube's patchAllocatedValues: a client that resubmits what it created (without the clusterIP
 * or node ports the server chose) keeps the allocated values rather than asking for new ones.
 */
export function patchAllocatedValues(next: Service, old: Service): void {
  const spec = next.spec ?? (next.spec = {});
  const oldSpec = old.spec ?? {};
  if (needsClusterIP(old) && needsClusterIP(next)) {
    if (!spec.clusterIP && oldSpec.clusterIP) spec.clusterIP = oldSpec.clusterIP;
    if ((spec.clusterIPs ?? []).length === 0 && (oldSpec.clusterIPs ?? []).length > 0) spec.clusterIPs = [...oldSpec.clusterIPs!];
  }
  if (needsNodePort(old) && needsNodePort(next)) {
    const used = (s: Service): Set<number> => new Set((s.spec?.ports ?? []).map((p) => p.nodePort ?? 0).filter((n) => n !== 0));
    const newUsed = used(next);
    const inBoth = new Set([...used(old)].filter((n) => newUsed.has(n)));
    const byName = new Map<string, number>();
    for (const p of oldSpec.ports ?? []) byName.set(p.name ?? '', p.nodePort ?? 0);
    for (const p of spec.ports ?? []) {
      if ((p.nodePort ?? 0) !== 0) continue;
      const oldVal = byName.get(p.name ?? '') ?? 0;
      // kube patches 0 in too, which is no change.
      if (!inBoth.has(oldVal) && oldVal !== 0) p.nodePort = oldVal;
    }
  }
  if (needsHealthCheck(old) && needsHealthCheck(next) && !spec.healthCheckNodePort && oldSpec.healthCheckNodePort) {
    spec.healthCheckNodePort = oldSpec.healthCheckNodePort;
  }
}

/**
 * kube's defaultOnReadService: clusterIPs from clusterIP, ipFamilies/ipFamilyPolicy for objects
 * written before dual-stack, no internalTrafficPolicy on ExternalName. Returns `svc` itself when
 * nothing changes, else a copy (a stored object may be shared with the watch cache).
 */
export function defaultOnRead(svc: Service, primaryFamily: IPFamilyName): Service {
  const spec = svc.spec;
  if (!spec) return svc;
  const needsIPs = !!spec.clusterIP && (spec.clusterIPs ?? []).length === 0;
  const needsFamilies = needsClusterIP(svc) && (spec.ipFamilies ?? []).length === 0;
  const dropITP = spec.type === ServiceType.ExternalName && spec.internalTrafficPolicy !== undefined;
  if (!needsIPs && !needsFamilies && !dropITP) return svc;
  const out: Service = { ...svc, spec: { ...spec } };
  const s = out.spec!;
  if (needsIPs) s.clusterIPs = [s.clusterIP!];
  if (needsFamilies) {
    const other = primaryFamily === IPFamily.IPv4 ? IPFamily.IPv6 : IPFamily.IPv4;
    if (s.clusterIP === CLUSTER_IP_NONE) {
      const selectorless = Object.keys(s.selector ?? {}).length === 0;
      s.ipFamilyPolicy = selectorless ? IPFamilyPolicy.RequireDualStack : IPFamilyPolicy.SingleStack;
      s.ipFamilies = selectorless ? [primaryFamily, other] : [primaryFamily];
    } else {
      const families = (s.clusterIPs ?? []).map((ip) => (isIPv6String(ip) ? IPFamily.IPv6 : IPFamily.IPv4));
      if (families.length > 0) s.ipFamilies = families;
      if (families.length === 1) s.ipFamilyPolicy = IPFamilyPolicy.SingleStack;
      else if (families.length === 2) s.ipFamilyPolicy = IPFamilyPolicy.RequireDualStack;
    }
  }
  if (dropITP) delete s.internalTrafficPolicy;
  return out;
}

/** Builds the Service REST hooks over etcd from the flags. Throws kube's message for a bad range. */
export function createServiceREST(opts: ServiceRESTOptions): ServiceREST {
  const prefix = normalizePrefix(opts.etcdPrefix ?? '/registry');
  const ranges = parseServiceClusterIPRange(opts.serviceClusterIPRange ?? '');
  const portRange = parseServiceNodePortRange(opts.serviceNodePortRange ?? '30000-32767');
  const log = opts.log ?? (() => undefined);
  const ipBackends = new Map<IPFamilyName, { range: IPRange; backend: EtcdAllocationBackend }>();
  const addRange = (cidr: ServiceIPRanges['primary'], key: string): void => {
    const backend = new EtcdAllocationBackend({ store: opts.store, key: `${prefix}/${key}`, resource: 'serviceipallocations', max: ipRangeMax(cidr), rangeSpec: formatCIDR(cidr) });
    ipBackends.set(cidr.family, { range: new IPRange(cidr, backend), backend });
  };
  addRange(ranges.primary, RANGE_KEYS.serviceIPs);
  if (ranges.secondary) addRange(ranges.secondary, RANGE_KEYS.secondaryServiceIPs);
  const nodePortBackend = new EtcdAllocationBackend({ store: opts.store, key: `${prefix}/${RANGE_KEYS.nodePorts}`, resource: 'servicenodeportallocations', max: portRange.size, rangeSpec: formatPortRange(portRange) });
  const nodePorts = new PortAllocator(portRange, nodePortBackend);
  const allocators = new ServiceAllocators({
    ipAllocators: new Map([...ipBackends].map(([f, v]) => [f, v.range])),
    primaryFamily: ranges.primary.family,
    nodePorts,
    log,
  });
  const deleteEndpoints =
    opts.deleteEndpoints ??
    (async (namespace: string, name: string) => {
      try {
        await opts.store.delete(`${prefix}/services/endpoints/${namespace}/${name}`);
      } catch (e) {
        if (!isStorageError(e, 'NotFound')) throw e;
      }
    });
  const primaryFamily = ranges.primary.family;

  return {
    ranges,
    nodePortRange: formatPortRange(portRange),
    allocators,
    ipBackends,
    nodePortBackend: { allocator: nodePorts, backend: nodePortBackend },
    async allocateOnCreate(svc, dryRun) {
      normalizeClusterIPs(svc, undefined);
      return allocators.allocateCreate(svc, dryRun);
    },
    async reallocateOnUpdate(next, old, dryRun) {
      // The stored object may predate fields; never change it (it may be the cache's).
      const before = structuredClone(defaultOnRead(old, primaryFamily));
      patchAllocatedValues(next, before);
      normalizeClusterIPs(next, before);
      return allocators.allocateUpdate(next, before, dryRun);
    },
    async releaseOnDelete(svc, dryRun) {
      if (dryRun) return;
      const full = defaultOnRead(svc, primaryFamily);
      try {
        await deleteEndpoints(svc.metadata.namespace ?? '', svc.metadata.name ?? '');
      } catch (e) {
        log('deleting the endpoints of a deleted service failed', { namespace: svc.metadata.namespace, name: svc.metadata.name, error: String(e) });
      }
      await allocators.releaseAllocatedResources(full);
    },
    defaultOnRead: (svc) => defaultOnRead(svc, primaryFamily),
  };
}
