/**
 * The Service machinery of one replica, as kube-apiserver 1.24 wires it (pkg/controlplane:
 * the Service REST's allocators, and the bootstrap controller every apiserver runs):
 *
 * - `hooks`: the Service store's BeginCreate/BeginUpdate/AfterDelete (cluster IPs and node ports
 *   taken, moved and given back in etcd; registry/store.ts calls them);
 * - `postStart`: the repair loops' first run (nothing can be allocated before the ranges exist),
 *   then the `kubernetes` Service and its Endpoints kept by the lease reconciler — kube's
 *   `bootstrap-controller` post-start hook, which runs in every replica (no leader election: each
 *   replica's lease and address are its own, and the repairs write with compare-and-swap);
 * - `preShutdown`: this replica's lease and address removed (kube's pre-shutdown hook of the
 *   bootstrap controller), then the loops stopped.
 *
 * With no advertise address (kube refuses to start: "unable to find suitable network address"),
 * plinth logs kube's message and runs the repair loops without the reconciler, so Services still
 * work on a host without a routable interface.
 */
import type { Service, StoredObject } from '@plinth/api';
import type { Store } from '@plinth/storage';
import type { Logger } from '../log.js';
import type { ServiceNetworkOptions } from '../options.js';
import type { StoreHooks } from '../registry/store.js';
import { type KubernetesServiceController, createKubernetesServiceController } from './kubernetes-service.js';
import { type RepairLoop, createClusterIPRepair, createNodePortRepair } from './repair.js';
import { type ServiceREST, createServiceREST } from './service-rest.js';
import type { AllocationTxn } from './service-alloc.js';

export interface ServiceComponentsOptions {
  /** The raw etcd store: allocations and leases must read what etcd has, never a cache. */
  storage: Store;
  etcdPrefix: string;
  network: ServiceNetworkOptions;
  /** The port this replica serves on, once it listens (the Endpoints' port). */
  securePort: () => number;
  log: Logger;
  /** Test knobs: kube's lease TTL (15 s) and reconcile interval (10 s). */
  leaseTTLSeconds?: number;
  reconcileIntervalMs?: number;
}

export interface ServiceComponents {
  rest: ServiceREST;
  hooks: StoreHooks;
  postStart(): Promise<void>;
  preShutdown(): Promise<void>;
}

const finishOf = (txn: AllocationTxn) => (success: boolean): Promise<void> => (success ? txn.commit() : txn.revert());

/** Builds the Service REST over etcd and the start/stop of its background work. */
export function createServiceComponents(opts: ServiceComponentsOptions): ServiceComponents {
  const { log } = opts;
  const logFn = (msg: string, fields: Record<string, unknown>): void => log.info(msg, fields);
  const rest = createServiceREST({
    store: opts.storage,
    etcdPrefix: opts.etcdPrefix,
    serviceClusterIPRange: opts.network.clusterIPRange,
    serviceNodePortRange: opts.network.nodePortRange,
    log: logFn,
  });
  const hooks: StoreHooks = {
    beginCreate: async (obj: StoredObject, { dryRun }) => finishOf(await rest.allocateOnCreate(obj as Service, dryRun)),
    beginUpdate: async (obj: StoredObject, old: StoredObject, { dryRun }) => finishOf(await rest.reallocateOnUpdate(obj as Service, old as Service, dryRun)),
    afterDelete: (obj: StoredObject, { dryRun }) => rest.releaseOnDelete(obj as Service, dryRun),
  };
  let controller: KubernetesServiceController | undefined;
  let repairs: RepairLoop[] = [];
  let stopping: Promise<void> | undefined;
  return {
    rest,
    hooks,
    async postStart() {
      const network = opts.network;
      if (!network.advertiseAddress) {
        log.error('no advertise address: the kubernetes Service Endpoints are not kept by this replica', { error: network.advertiseAddressError ?? '' });
        const repairOpts = { store: opts.storage, etcdPrefix: opts.etcdPrefix, log: logFn };
        repairs = [createClusterIPRepair(rest, repairOpts).start(), createNodePortRepair(rest, repairOpts).start()];
        await Promise.all(repairs.map((r) => r.firstSuccess));
        return;
      }
      controller = createKubernetesServiceController({
        store: opts.storage,
        etcdPrefix: opts.etcdPrefix,
        rest,
        advertiseAddress: network.advertiseAddress,
        securePort: opts.securePort(),
        log: logFn,
        onRepairEvent: (e) => log.info(`${e.reason}: ${e.note}`, { service: `${e.regarding.namespace}/${e.regarding.name}`, controller: e.reportingController }),
        ...(opts.leaseTTLSeconds ? { leaseTTLSeconds: opts.leaseTTLSeconds } : {}),
        ...(opts.reconcileIntervalMs ? { intervalMs: opts.reconcileIntervalMs } : {}),
      });
      await controller.start();
      // The first pass now, so that the Service and this replica's address exist once it is ready.
      await controller.reconcileOnce().catch((e: unknown) => log.error('unable to sync kubernetes service', { error: String(e) }));
    },
    preShutdown() {
      stopping ??= (async () => {
        for (const r of repairs) r.stop();
        await controller?.stop();
      })();
      return stopping;
    },
  };
}
