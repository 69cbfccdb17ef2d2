/**
 * core/v1 defaults for Services and Endpoints, as kube 1.24's `SetObjectDefaults_Service` and
 * `SetObjectDefaults_Endpoints` (pkg/apis/core/v1/defaults.go). They change the object in place:
 * call them on a decoded request body, never on a stored (possibly shared) object.
 */
import { DEFAULT_CLIENT_IP_AFFINITY_SECONDS, type Endpoints, type Service, type ServiceFeatures, type ServiceSpec, ServiceType } from '../service-types.js';

/** kube's `SetDefaults_Service`. */
export function defaultService(svc: Service, features: ServiceFeatures = {}): void {
  const spec: ServiceSpec = svc.spec ?? (svc.spec = {});
  if (!spec.sessionAffinity) spec.sessionAffinity = 'None';
  if (spec.sessionAffinity === 'None') delete spec.sessionAffinityConfig;
  if (spec.sessionAffinity === 'ClientIP' && spec.sessionAffinityConfig?.clientIP?.timeoutSeconds === undefined) {
    spec.sessionAffinityConfig = { clientIP: { timeoutSeconds: DEFAULT_CLIENT_IP_AFFINITY_SECONDS } };
  }
  if (!spec.type) spec.type = ServiceType.ClusterIP;
  for (const port of spec.ports ?? []) {
    if (!port.protocol) port.protocol = 'TCP';
    // An unset targetPort (Go's zero IntOrString: 0) or "" is the port itself.
    if (port.targetPort === undefined || port.targetPort === 0 || port.targetPort === '') port.targetPort = port.port ?? 0;
  }
  const external = spec.type === ServiceType.NodePort || spec.type === ServiceType.LoadBalancer;
  if (external && !spec.externalTrafficPolicy) spec.externalTrafficPolicy = 'Cluster';
  if (features.serviceInternalTrafficPolicy !== false && spec.internalTrafficPolicy === undefined) {
    if (external || spec.type === ServiceType.ClusterIP) spec.internalTrafficPolicy = 'Cluster';
  }
  if (spec.type === ServiceType.LoadBalancer && spec.allocateLoadBalancerNodePorts === undefined) spec.allocateLoadBalancerNodePorts = true;
}

/** kube's `SetDefaults_Endpoints`: ports default to TCP. */
export function defaultEndpoints(ep: Endpoints): void {
  for (const subset of ep.subsets ?? []) {
    for (const port of subset.ports ?? []) if (!port.protocol) port.protocol = 'TCP';
  }
}
