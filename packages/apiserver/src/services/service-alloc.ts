/**
 * What a Service write allocates, as kube 1.24's Service REST does it
 * (pkg/registry/core/service/storage/alloc.go): the IP family fields defaulted against the
 * cluster's families, cluster IPs, node ports and the health-check node port taken on create,
 * adjusted on update (type changes, dual-stack upgrades and downgrades), given back on delete.
 * Each write returns a transaction: `commit` once the object is stored (deferred releases happen
 * then), `revert` when the write fails (what was taken is given back). Dry runs take nothing.
 */
import {
  CLUSTER_IP_NONE,
  type FieldError,
  IPFamily,
  IPFamilyPolicy,
  type IPFamilyName,
  type Service,
  ServiceType,
  StatusError,
  fieldErr,
  goStringSlice,
  internalError,
  invalid,
  needsHealthCheck,
  validateServiceClusterIPsRelatedFields,
} from '@plinth/api';
import { type IPAllocator, familyOfIP, isIPAllocationError } from './ip-allocator.js';
import { type PortAllocator, PortAllocationOperation, isPortAllocationError } from './port-allocator.js';

/** A write's allocations: `commit` after the object is stored, `revert` if it was not. */
export interface AllocationTxn {
  commit(): Promise<void>;
  revert(): Promise<void>;
}

export interface ServiceAllocatorsOptions {
  /** The cluster's families and their allocators (one per `--service-cluster-ip-range` entry). */
  ipAllocators: ReadonlyMap<IPFamilyName, IPAllocator>;
  /** The family of `--service-cluster-ip-range[0]`. */
  primaryFamily: IPFamilyName;
  nodePorts: PortAllocator;
  /** Where failures that only a later repair can fix are reported. */
  log?: (msg: string, fields: Record<string, unknown>) => void;
}

const SERVICE_KIND = { group: '', kind: 'Service' };
const ptr = (v: string | undefined): string => (v === undefined ? 'null' : v);
const invalidService = (svc: Service, errs: FieldError[]): StatusError => invalid(SERVICE_KIND, svc.metadata.name ?? '', errs);
/** A plain error kube's handler answers as a 500 without a reason (ErrorToAPIStatus). */
const unknownError = (message: string): StatusError => new StatusError({ code: 500, reason: '', message });

function sameList(a: string[] | undefined, b: string[] | undefined): boolean {
  const x = a ?? [];
  const y = b ?? [];
  return x.length === y.length && x.every((v, i) => v === y[i]);
}

function otherFamily(f: IPFamilyName): IPFamilyName {
  return f === IPFamily.IPv4 ? IPFamily.IPv6 : IPFamily.IPv4;
}

function combine(...txns: AllocationTxn[]): AllocationTxn {
  return {
    async commit() {
      for (const t of txns) await t.commit();
    },
    async revert() {
      for (const t of txns) await t.revert();
    },
  };
}

/** kube's `collectServiceNodePorts` of alloc.go: every non-zero node port, as listed. */
export function serviceNodePorts(svc: Service): number[] {
  return (svc.spec?.ports ?? []).map((p) => p.nodePort ?? 0).filter((n) => n !== 0);
}

/** kube's `shouldAllocateNodePorts`: NodePort, or a LoadBalancer that allocates node ports. */
function shouldAllocateNodePorts(svc: Service): boolean {
  const spec = svc.spec ?? {};
  if (spec.type === ServiceType.NodePort) return true;
  return spec.type === ServiceType.LoadBalancer && spec.allocateLoadBalancerNodePorts !== false;
}

/** kube's `isMatchingPreferDualStackClusterIPFields`: an unchanged PreferDualStack service is left as it is. */
function isMatchingPreferDualStack(svc: Service, old: Service | undefined): boolean {
  if (!old || svc.spec?.ipFamilyPolicy === undefined) return false;
  const t = svc.spec.type;
  if (old.spec?.type !== t) return false;
  if (t !== ServiceType.ClusterIP && t !== ServiceType.NodePort && t !== ServiceType.LoadBalancer) return false;
  if (svc.spec.ipFamilyPolicy !== IPFamilyPolicy.PreferDualStack) return false;
  if (old.spec?.ipFamilyPolicy !== undefined && old.spec.ipFamilyPolicy !== IPFamilyPolicy.PreferDualStack) return false;
  return sameList(old.spec?.clusterIPs, svc.spec.clusterIPs) && sameList(old.spec?.ipFamilies, svc.spec.ipFamilies);
}

export class ServiceAllocators {
  readonly ipAllocators: ReadonlyMap<IPFamilyName, IPAllocator>;
  readonly primaryFamily: IPFamilyName;
  readonly nodePorts: PortAllocator;
  readonly #log: (msg: string, fields: Record<string, unknown>) => void;

  constructor(opts: ServiceAllocatorsOptions) {
    this.ipAllocators = opts.ipAllocators;
    this.primaryFamily = opts.primaryFamily;
    this.nodePorts = opts.nodePorts;
    this.#log = opts.log ?? (() => undefined);
  }

  /**
   * kube's `initIPFamilyFields`: ipFamilyPolicy and ipFamilies defaulted from the clusterIPs, the
   * old object and the cluster's families, or a 422 when they cannot be honoured. Done before
   * allocation, dry run or not, so the answer shows them.
   */
  initIPFamilyFields(svc: Service, old: Service | undefined): void {
    const spec = svc.spec ?? (svc.spec = {});
    if (spec.type === ServiceType.ExternalName) return;
    if (isMatchingPreferDualStack(svc, old)) return;
    if (spec.ipFamilyPolicy === undefined) {
      if (old?.spec?.ipFamilyPolicy !== undefined) spec.ipFamilyPolicy = old.spec.ipFamilyPolicy;
      // Headless without a selector: its endpoints may be of both families.
      else if (spec.clusterIP === CLUSTER_IP_NONE && Object.keys(spec.selector ?? {}).length === 0) spec.ipFamilyPolicy = IPFamilyPolicy.RequireDualStack;
      else spec.ipFamilyPolicy = IPFamilyPolicy.SingleStack;
    }
    // Loose validation first, so the rest need not consider broken input.
    const loose = validateServiceClusterIPsRelatedFields(svc);
    if (loose.length > 0) throw invalidService(svc, loose);

    const errs: FieldError[] = [];
    const policyInvalid = (detail: string): FieldError => fieldErr.invalid('spec.ipFamilyPolicy', ptr(spec.ipFamilyPolicy), detail);
    if (old) {
      if (spec.ipFamilyPolicy === IPFamilyPolicy.SingleStack) {
        // Unchanged dual fields with SingleStack: the secondary goes (the primary is immutable).
        if (sameList(old.spec?.clusterIPs, spec.clusterIPs) && (spec.clusterIPs ?? []).length > 1) spec.clusterIPs = spec.clusterIPs!.slice(0, 1);
        if (sameList(old.spec?.ipFamilies, spec.ipFamilies) && (spec.ipFamilies ?? []).length > 1) spec.ipFamilies = spec.ipFamilies!.slice(0, 1);
      } else {
        const ips = spec.clusterIPs ?? [];
        const fams = spec.ipFamilies ?? [];
        if (ips.length > 0 && ips.length < (old.spec?.clusterIPs ?? []).length) errs.push(policyInvalid("must be 'SingleStack' to release the secondary cluster IP"));
        if (fams.length > 0 && fams.length < (old.spec?.ipFamilies ?? []).length) errs.push(policyInvalid("must be 'SingleStack' to release the secondary IP family"));
      }
    }
    if (spec.ipFamilyPolicy === IPFamilyPolicy.SingleStack) {
      if ((spec.clusterIPs ?? []).length === 2) errs.push(policyInvalid("must be 'RequireDualStack' or 'PreferDualStack' when multiple cluster IPs are specified"));
      if ((spec.ipFamilies ?? []).length === 2) errs.push(policyInvalid("must be 'RequireDualStack' or 'PreferDualStack' when multiple IP families are specified"));
    }
    // Families follow the given cluster IPs.
    const ips = spec.clusterIPs ?? [];
    for (let i = 0; i < ips.length; i++) {
      if (ips[i] === CLUSTER_IP_NONE) break;
      const fam = familyOfIP(ips[i]!) ?? IPFamily.IPv4;
      if (i >= (spec.ipFamilies ?? []).length) {
        if (!this.ipAllocators.has(fam)) errs.push(fieldErr.invalid(`spec.clusterIPs[${i}]`, goStringSlice(ips), `${fam} is not configured on this cluster`));
        else spec.ipFamilies = [...(spec.ipFamilies ?? []), fam];
      }
    }
    if (errs.length > 0) throw invalidService(svc, errs);

    // Headless without a selector may have families the cluster lacks (validation allows it).
    if (spec.clusterIP === CLUSTER_IP_NONE && Object.keys(spec.selector ?? {}).length === 0) {
      if ((spec.ipFamilies ?? []).length === 0) spec.ipFamilies = [this.primaryFamily];
      if (spec.ipFamilies!.length < 2 && spec.ipFamilyPolicy !== IPFamilyPolicy.SingleStack) spec.ipFamilies = [spec.ipFamilies![0]!, otherFamily(spec.ipFamilies![0] as IPFamilyName)];
      return;
    }
    if (spec.ipFamilyPolicy === IPFamilyPolicy.RequireDualStack && this.ipAllocators.size < 2) errs.push(policyInvalid('this cluster is not configured for dual-stack services'));
    (spec.ipFamilies ?? []).forEach((fam, i) => {
      if (!this.ipAllocators.has(fam as IPFamilyName)) errs.push(fieldErr.invalid(`spec.ipFamilies[${i}]`, fam, 'not configured on this cluster'));
    });
    if (errs.length > 0) throw invalidService(svc, errs);
    if ((spec.ipFamilies ?? []).length === 0) spec.ipFamilies = [this.primaryFamily];
    if (spec.ipFamilyPolicy !== IPFamilyPolicy.SingleStack && spec.ipFamilies!.length === 1 && this.ipAllocators.size === 2) {
      spec.ipFamilies = [spec.ipFamilies![0]!, otherFamily(spec.ipFamilies![0] as IPFamilyName)];
    }
  }

  /** kube's allocateCreate: families, cluster IPs, node ports (rolled back on failure). */
  async allocateCreate(svc: Service, dryRun: boolean): Promise<AllocationTxn> {
    this.initIPFamilyFields(svc, undefined);
    const ipTxn = await this.#txnAllocClusterIPs(svc, dryRun);
    try {
      const portTxn = await this.#txnAllocNodePorts(svc, dryRun);
      return combine(ipTxn, portTxn);
    } catch (e) {
      await ipTxn.revert();
      throw e;
    }
  }

  /** kube's allocateUpdate: type changes, dual-stack changes, node ports, health-check port. */
  async allocateUpdate(svc: Service, old: Service, dryRun: boolean): Promise<AllocationTxn> {
    this.initIPFamilyFields(svc, old);
    const ipTxn = await this.#txnUpdateClusterIPs(svc, old, dryRun);
    try {
      const portTxn = await this.#txnUpdateNodePorts(svc, old, dryRun);
      return combine(ipTxn, portTxn);
    } catch (e) {
      await ipTxn.revert();
      throw e;
    }
  }

  /** kube's releaseAllocatedResources (after a delete): cluster IPs, node ports, health-check port. */
  async releaseAllocatedResources(svc: Service): Promise<void> {
    await this.#releaseIPs(this.#clusterIPsByFamily(svc), svc);
    const ports = serviceNodePorts(svc);
    if (needsHealthCheck(svc) && (svc.spec?.healthCheckNodePort ?? 0) > 0) ports.push(svc.spec!.healthCheckNodePort!);
    for (const port of ports) {
      await this.nodePorts.release(port).catch((e: unknown) => this.#log('releasing a node port failed; the repair loop will', { service: svc.metadata.name, port, error: String(e) }));
    }
  }

  #clusterIPsByFamily(svc: Service): Map<IPFamilyName, string> {
    const out = new Map<IPFamilyName, string>();
    if (svc.spec?.type === ServiceType.ExternalName) return out;
    const ips = svc.spec?.clusterIPs ?? [];
    if (ips[0] === CLUSTER_IP_NONE) return out;
    for (const ip of ips) out.set(familyOfIP(ip) === IPFamily.IPv6 ? IPFamily.IPv6 : IPFamily.IPv4, ip);
    return out;
  }

  async #releaseIPs(toRelease: Map<IPFamilyName, string>, svc: Service): Promise<void> {
    for (const [family, ip] of toRelease) {
      const alloc = this.ipAllocators.get(family);
      // A family the cluster no longer has: nothing to give back.
      if (!alloc) continue;
      await alloc.release(ip).catch((e: unknown) => this.#log('releasing a cluster IP failed; the repair loop will', { service: svc.metadata.name, ip, error: String(e) }));
    }
  }

  /** kube's allocIPs: the given IP of each family, or the next free one; 422/500 as kube. */
  async #allocIPs(svc: Service, toAlloc: Map<IPFamilyName, string>, dryRun: boolean): Promise<Map<IPFamilyName, string>> {
    const allocated = new Map<IPFamilyName, string>();
    try {
      for (const [family, ip] of toAlloc) {
        const real = this.ipAllocators.get(family)!;
        const alloc = dryRun ? real.dryRun() : real;
        if (ip === '') {
          try {
            allocated.set(family, await alloc.allocateNext());
          } catch (e) {
            throw internalError(new Error(`failed to allocate a serviceIP: ${e instanceof Error ? e.message : String(e)}`));
          }
        } else {
          try {
            await alloc.allocate(ip);
          } catch (e) {
            const detail = `failed to allocate IP ${ip}: ${e instanceof Error ? e.message : String(e)}`;
            throw invalidService(svc, [fieldErr.invalid('spec.clusterIPs', goStringSlice(svc.spec?.clusterIPs ?? []), detail)]);
          }
          allocated.set(family, ip);
        }
      }
      return allocated;
    } catch (e) {
      // kube leaves the first family's IP to the repair loop; giving it back now is cheaper.
      if (!dryRun) await this.#releaseIPs(allocated, svc);
      throw e;
    }
  }

  /** kube's allocClusterIPs: fills clusterIPs (and clusterIP) per ipFamilies. */
  async #allocClusterIPs(svc: Service, dryRun: boolean): Promise<Map<IPFamilyName, string>> {
    const spec = svc.spec ?? {};
    if (spec.type === ServiceType.ExternalName) return new Map();
    if ((spec.clusterIPs ?? [])[0] === CLUSTER_IP_NONE) return new Map();
    const ips = [...(spec.clusterIPs ?? [])];
    const toAlloc = new Map<IPFamilyName, string>();
    (spec.ipFamilies ?? []).forEach((family, i) => {
      if (i >= ips.length) ips.push('');
      toAlloc.set(family as IPFamilyName, ips[i]!);
    });
    spec.clusterIPs = ips;
    const allocated = await this.#allocIPs(svc, toAlloc, dryRun);
    (spec.ipFamilies ?? []).forEach((family, i) => {
      const ip = allocated.get(family as IPFamilyName);
      if (ip === undefined) return;
      ips[i] = ip;
      if (i === 0) spec.clusterIP = ip;
    });
    return allocated;
  }

  async #txnAllocClusterIPs(svc: Service, dryRun: boolean): Promise<AllocationTxn> {
    const allocated = await this.#allocClusterIPs(svc, dryRun);
    return {
      commit: async () => undefined,
      revert: async () => {
        if (!dryRun) await this.#releaseIPs(allocated, svc);
      },
    };
  }

  /** Runs `fn` on a node-port operation, as a transaction (kube's txnAllocNodePorts shape). */
  async #nodePortTxn(dryRun: boolean, fn: (op: PortAllocationOperation) => Promise<void>): Promise<AllocationTxn> {
    const op = new PortAllocationOperation(this.nodePorts, dryRun);
    const report = (errs: unknown[]): void => {
      for (const e of errs) this.#log('a node port operation failed; the repair loop will fix it', { error: String(e) });
    };
    try {
      await fn(op);
    } catch (e) {
      report(await op.finish());
      throw e;
    }
    return {
      commit: async () => report(await op.commit()),
      revert: async () => report(await op.finish()),
    };
  }

  #txnAllocNodePorts(svc: Service, dryRun: boolean): Promise<AllocationTxn> {
    return this.#nodePortTxn(dryRun, async (op) => {
      const t = svc.spec?.type;
      if (t === ServiceType.NodePort || t === ServiceType.LoadBalancer) await this.#initNodePorts(svc, op);
      if (needsHealthCheck(svc)) {
        try {
          await this.#allocHealthCheckNodePort(svc, op);
        } catch (e) {
          throw internalError(e);
        }
      }
    });
  }

  /** kube's initNodePorts: ports of one service port number share a node port. */
  async #initNodePorts(svc: Service, op: PortAllocationOperation): Promise<void> {
    const ports = svc.spec?.ports ?? [];
    const byServicePort = new Map<number, number>();
    for (let i = 0; i < ports.length; i++) {
      const sp = ports[i]!;
      const nodePort = sp.nodePort ?? 0;
      if (nodePort === 0 && !shouldAllocateNodePorts(svc)) continue;
      const taken = byServicePort.get(sp.port ?? 0) ?? 0;
      if (taken === 0) {
        // A node port requested by this or a later entry with the same port number.
        const requested = ports.find((p) => (p.port ?? 0) === (sp.port ?? 0) && (p.nodePort ?? 0) !== 0)?.nodePort ?? 0;
        if (requested !== 0) {
          await this.#allocatePort(svc, op, requested, i);
          sp.nodePort = requested;
          byServicePort.set(sp.port ?? 0, requested);
        } else {
          const port = await this.#allocateNextPort(op);
          sp.nodePort = port;
          byServicePort.set(sp.port ?? 0, port);
        }
      } else if (nodePort !== taken) {
        if (nodePort === 0) sp.nodePort = taken;
        else await this.#allocatePort(svc, op, nodePort, i);
      }
    }
  }

  async #allocatePort(svc: Service, op: PortAllocationOperation, port: number, index: number): Promise<void> {
    try {
      await op.allocate(port);
    } catch (e) {
      // kube answers any failure to take a requested port (etcd's too) as this 422.
      throw invalidService(svc, [fieldErr.invalid(`spec.ports[${index}].nodePort`, port, e instanceof Error ? e.message : String(e))]);
    }
  }

  async #allocateNextPort(op: PortAllocationOperation): Promise<number> {
    try {
      return await op.allocateNext();
    } catch (e) {
      throw internalError(new Error(`failed to allocate a nodePort: ${e instanceof Error ? e.message : String(e)}`));
    }
  }

  /** kube's allocHealthCheckNodePort (its errors become 500s at the caller). */
  async #allocHealthCheckNodePort(svc: Service, op: PortAllocationOperation): Promise<void> {
    const spec = svc.spec!;
    const requested = spec.healthCheckNodePort ?? 0;
    if (requested !== 0) {
      try {
        await op.allocate(requested);
      } catch (e) {
        throw new Error(`failed to allocate requested HealthCheck NodePort ${requested}: ${e instanceof Error ? e.message : String(e)}`);
      }
      return;
    }
    try {
      spec.healthCheckNodePort = await op.allocateNext();
    } catch (e) {
      throw new Error(`failed to allocate a HealthCheck NodePort 0: ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  /**
   * kube's updateClusterIPs: allocate all on a change from ExternalName, release all on a change
   * to ExternalName, the secondary on a dual-stack upgrade or downgrade. Releases wait for commit.
   */
  async #txnUpdateClusterIPs(svc: Service, old: Service, dryRun: boolean): Promise<AllocationTxn> {
    let allocated = new Map<IPFamilyName, string>();
    let toRelease = new Map<IPFamilyName, string>();
    const spec = svc.spec ?? (svc.spec = {});
    const oldSpec = old.spec ?? {};
    if (isMatchingPreferDualStack(svc, old)) {
      // Nothing to do.
    } else if (oldSpec.type === ServiceType.ExternalName && spec.type !== ServiceType.ExternalName) {
      allocated = await this.#allocClusterIPs(svc, dryRun);
    } else if ((oldSpec.clusterIPs ?? [])[0] === CLUSTER_IP_NONE) {
      // Headless: nothing allocated.
    } else if (spec.type === ServiceType.ExternalName) {
      if (oldSpec.type !== ServiceType.ExternalName) (oldSpec.ipFamilies ?? []).forEach((f, i) => toRelease.set(f as IPFamilyName, (oldSpec.clusterIPs ?? [])[i] ?? ''));
    } else {
      const oldFams = oldSpec.ipFamilies ?? [];
      const newFams = spec.ipFamilies ?? [];
      if (oldFams.length === 1 && newFams.length === 2) {
        const ips = [...(spec.clusterIPs ?? [])];
        if (ips.length < 2) ips.push('');
        spec.clusterIPs = ips;
        allocated = await this.#allocIPs(svc, new Map([[newFams[1] as IPFamilyName, ips[1]!]]), dryRun);
        ips[1] = allocated.get(newFams[1] as IPFamilyName)!;
      } else if (oldFams.length === 2 && newFams.length === 1) {
        toRelease = new Map([[oldFams[1] as IPFamilyName, (oldSpec.clusterIPs ?? [])[1] ?? '']]);
      }
    }
    return {
      commit: async () => {
        if (!dryRun) await this.#releaseIPs(toRelease, svc);
      },
      revert: async () => {
        if (!dryRun) await this.#releaseIPs(allocated, svc);
      },
    };
  }

  #txnUpdateNodePorts(svc: Service, old: Service, dryRun: boolean): Promise<AllocationTxn> {
    return this.#nodePortTxn(dryRun, async (op) => {
      const oldType = old.spec?.type;
      const newType = svc.spec?.type;
      const external = (t: string | undefined): boolean => t === ServiceType.NodePort || t === ServiceType.LoadBalancer;
      if (external(oldType) && (newType === ServiceType.ExternalName || newType === ServiceType.ClusterIP)) {
        for (const port of serviceNodePorts(old)) op.releaseDeferred(port);
      }
      if (external(newType)) await this.#updateNodePorts(svc, old, op);
      await this.#updateHealthCheckNodePort(svc, old, op);
    });
  }

  /** kube's updateNodePorts: new ports taken, old ones not kept released on commit. */
  async #updateNodePorts(svc: Service, old: Service, op: PortAllocationOperation): Promise<void> {
    const oldPorts = serviceNodePorts(old);
    const seen = new Set<string>();
    const allocatedHere = new Set<number>();
    const ports = svc.spec?.ports ?? [];
    for (let i = 0; i < ports.length; i++) {
      const sp = ports[i]!;
      let nodePort = sp.nodePort ?? 0;
      if (nodePort === 0 && !shouldAllocateNodePorts(svc)) continue;
      if (nodePort !== 0) {
        if (!oldPorts.includes(nodePort) && !allocatedHere.has(nodePort)) {
          await this.#allocatePort(svc, op, nodePort, i);
          allocatedHere.add(nodePort);
        }
      } else {
        nodePort = await this.#allocateNextPort(op);
        sp.nodePort = nodePort;
      }
      const key = `${sp.protocol ?? ''} ${nodePort}`;
      // Go prints the (protocol, nodePort) pair as {TCP 30080}.
      if (seen.has(key)) throw unknownError(`duplicate nodePort: {${key}}`);
      seen.add(key);
    }
    const newPorts = serviceNodePorts(svc);
    for (const port of oldPorts) if (!newPorts.includes(port)) op.releaseDeferred(port);
  }

  /** kube's updateHealthCheckNodePort: allocate when newly needed, release when no longer. */
  async #updateHealthCheckNodePort(svc: Service, old: Service, op: PortAllocationOperation): Promise<void> {
    const needed = needsHealthCheck(old);
    const needs = needsHealthCheck(svc);
    if (!needed && needs) {
      try {
        await this.#allocHealthCheckNodePort(svc, op);
      } catch (e) {
        throw internalError(e);
      }
    } else if (needed && !needs) {
      op.releaseDeferred(old.spec?.healthCheckNodePort ?? 0);
    }
  }
}

/** Whether an error is one of the allocators' own (full, taken, out of range). */
export function isAllocationError(e: unknown): boolean {
  return isIPAllocationError(e) || isPortAllocationError(e);
}
