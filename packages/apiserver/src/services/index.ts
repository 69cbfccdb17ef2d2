/** Services: cluster-IP and node-port allocation in etcd, the repair loops, the `kubernetes` Service. */
export { AllocationBitmap } from './bitmap.js';
export { type AllocationBackend, EtcdAllocationBackend, createMemoryBackend, type RangeAllocation, type RangeSnapshot } from './allocator.js';
export { IPRange, IPAllocationError, isIPAllocationError, createMemoryIPRange, ipRangeMax, type IPAllocator } from './ip-allocator.js';
export { PortAllocator, PortAllocationError, PortAllocationOperation, isPortAllocationError, parsePortRange, formatPortRange, type PortRange } from './port-allocator.js';
export { parseServiceClusterIPRange, validateServiceClusterIPRange, parseServiceNodePortRange, DEFAULT_SERVICE_CIDR, DEFAULT_NODE_PORT_RANGE, type ServiceIPRanges } from './ranges.js';
export { ServiceAllocators, type AllocationTxn } from './service-alloc.js';
export { createServiceREST, normalizeClusterIPs, patchAllocatedValues, defaultOnRead, RANGE_KEYS, type ServiceREST, type ServiceRESTOptions } from './service-rest.js';
export { createClusterIPRepair, createNodePortRepair, repairNodePortsOf, REPAIRS_BEFORE_LEAK_CLEANUP, DEFAULT_REPAIR_INTERVAL_MS, type RepairEvent, type RepairLoop, type RepairOptions } from './repair.js';
export { resolveAdvertiseAddress, type HostNetwork } from './advertise-address.js';
export { createStorageServiceClient, createStorageEndpointsClient, type ObjectClient } from './object-clients.js';
export {
  createKubernetesServiceController,
  KUBERNETES_SERVICE_NAME,
  DEFAULT_LEASE_TTL_SECONDS,
  DEFAULT_RECONCILE_INTERVAL_MS,
  type KubernetesServiceController,
  type KubernetesServiceOptions,
} from './kubernetes-service.js';
