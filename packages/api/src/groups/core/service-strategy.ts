/**
 * The Service strategy's field handling (kube 1.24 pkg/registry/core/service/strategy.go):
 * what create and update reset or drop before validation. `next` is the request's object and is
 * changed in place; `old` (a stored object, possibly shared with the watch cache) is never changed.
 */
import { type Service, type ServiceFeatures, ServiceType, needsClusterIP, needsHealthCheck, needsNodePort } from './service-types.js';

function sameStrings(a: string[] | undefined, b: string[] | undefined): boolean {
  const x = a ?? [];
  const y = b ?? [];
  return x.length === y.length && x.every((v, i) => v === y[i]);
}

/** kube's `dropServiceDisabledFields`: fields of disabled gates go unless the old object uses them. */
function dropDisabledFields(next: Service, old: Service | undefined, features: ServiceFeatures): void {
  if (features.mixedProtocolLBService === false) {
    if (next.status && old?.status?.conditions === undefined) delete next.status.conditions;
    const oldUsesPorts = (old?.status?.loadBalancer?.ingress ?? []).some((i) => i.ports !== undefined);
    if (!oldUsesPorts) for (const ing of next.status?.loadBalancer?.ingress ?? []) delete ing.ports;
  }
  if (features.serviceInternalTrafficPolicy === false && old?.spec?.internalTrafficPolicy === undefined && next.spec) {
    delete next.spec.internalTrafficPolicy;
  }
}

/**
 * kube's svcStrategy.PrepareForCreate: status is the server's (an empty ServiceStatus, which kube
 * writes as `{"loadBalancer":{}}`).
 */
export function prepareServiceForCreate(next: Service, features: ServiceFeatures = {}): void {
  next.status = { loadBalancer: {} };
  dropDisabledFields(next, undefined, features);
}

/**
 * kube's `dropTypeDependentFields`: a type change wipes what the new type does not use (cluster
 * IPs, node ports, health check port, LB fields, traffic policy) when the user left it as it
 * was, so it is released rather than refused by validation.
 */
function dropTypeDependentFields(next: Service, old: Service): void {
  const spec = next.spec ?? (next.spec = {});
  const oldSpec = old.spec ?? {};
  if (needsClusterIP(old) && !needsClusterIP(next)) {
    if (oldSpec.clusterIP === spec.clusterIP && sameStrings(oldSpec.clusterIPs, spec.clusterIPs)) {
      delete spec.clusterIP;
      delete spec.clusterIPs;
    }
    if (sameStrings(oldSpec.ipFamilies, spec.ipFamilies) && (oldSpec.ipFamilies === undefined) === (spec.ipFamilies === undefined)) delete spec.ipFamilies;
    if ((oldSpec.ipFamilyPolicy ?? '') === (spec.ipFamilyPolicy ?? '')) delete spec.ipFamilyPolicy;
  }
  if (needsNodePort(old) && !needsNodePort(next)) {
    const oldPorts = new Set((oldSpec.ports ?? []).map((p) => p.nodePort ?? 0).filter((n) => n !== 0));
    // Users may change ports, as long as they add no node port of their own.
    if ((spec.ports ?? []).every((p) => (p.nodePort ?? 0) === 0 || oldPorts.has(p.nodePort!))) {
      for (const p of spec.ports ?? []) delete p.nodePort;
    }
  }
  if (needsHealthCheck(old) && !needsHealthCheck(next) && (oldSpec.healthCheckNodePort ?? 0) === (spec.healthCheckNodePort ?? 0)) delete spec.healthCheckNodePort;
  if (oldSpec.type === ServiceType.LoadBalancer && spec.type !== ServiceType.LoadBalancer) {
    if (spec.allocateLoadBalancerNodePorts !== undefined && oldSpec.allocateLoadBalancerNodePorts === spec.allocateLoadBalancerNodePorts) delete spec.allocateLoadBalancerNodePorts;
    if (oldSpec.loadBalancerClass === spec.loadBalancerClass) delete spec.loadBalancerClass;
  }
  const externalOld = needsNodePort(old);
  if (externalOld && !needsNodePort(next) && (oldSpec.externalTrafficPolicy ?? '') === (spec.externalTrafficPolicy ?? '')) delete spec.externalTrafficPolicy;
  // Load-balancer status goes with the type (de-provisioning is asynchronous; users need not see it).
  if (spec.type !== ServiceType.LoadBalancer) next.status = { ...next.status, loadBalancer: {} };
}

/** kube's svcStrategy.PrepareForUpdate: status is kept from the stored object. */
export function prepareServiceForUpdate(next: Service, old: Service, features: ServiceFeatures = {}): void {
  if (old.status === undefined) delete next.status;
  else next.status = structuredClone(old.status);
  dropDisabledFields(next, old, features);
  dropTypeDependentFields(next, old);
}

/** kube's serviceStatusStrategy.PrepareForUpdate: a status write does not change the spec. */
export function prepareServiceStatusForUpdate(next: Service, old: Service): void {
  if (old.spec === undefined) delete next.spec;
  else next.spec = structuredClone(old.spec);
}
