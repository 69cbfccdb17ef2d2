/**
 * core/v1 Service, Endpoints and Binding as decoded JSON (the fields validation, defaulting and
 * allocation read). Absent fields are `undefined`, as the decoder leaves them; a Go zero value
 * (0, "", nil) is an absent field here.
 */
import type { StoredObject } from '../../types.js';

export type IntOrString = number | string;

export interface ServicePort {
  name?: string;
  protocol?: string;
  appProtocol?: string;
  port?: number;
  targetPort?: IntOrString;
  nodePort?: number;
}

export interface ClientIPConfig {
  timeoutSeconds?: number;
}

export interface SessionAffinityConfig {
  clientIP?: ClientIPConfig;
}

export interface ServiceSpec {
  ports?: ServicePort[];
  selector?: Record<string, string>;
  clusterIP?: string;
  clusterIPs?: string[];
  type?: string;
  externalIPs?: string[];
  sessionAffinity?: string;
  loadBalancerIP?: string;
  loadBalancerSourceRanges?: string[];
  externalName?: string;
  externalTrafficPolicy?: string;
  healthCheckNodePort?: number;
  publishNotReadyAddresses?: boolean;
  sessionAffinityConfig?: SessionAffinityConfig;
  ipFamilies?: string[];
  ipFamilyPolicy?: string;
  allocateLoadBalancerNodePorts?: boolean;
  loadBalancerClass?: string;
  internalTrafficPolicy?: string;
}

export interface PortStatus {
  port?: number;
  protocol?: string;
  error?: string;
}

export interface LoadBalancerIngress {
  ip?: string;
  hostname?: string;
  ports?: PortStatus[];
}

export interface ServiceStatus {
  loadBalancer?: { ingress?: LoadBalancerIngress[] };
  conditions?: Record<string, unknown>[];
}

export interface Service extends StoredObject {
  spec?: ServiceSpec;
  status?: ServiceStatus;
}

export interface ObjectReference {
  kind?: string;
  namespace?: string;
  name?: string;
  uid?: string;
  apiVersion?: string;
  resourceVersion?: string;
  fieldPath?: string;
}

export interface EndpointAddress {
  ip?: string;
  hostname?: string;
  nodeName?: string;
  targetRef?: ObjectReference;
}

export interface EndpointPort {
  name?: string;
  port?: number;
  protocol?: string;
  appProtocol?: string;
}

export interface EndpointSubset {
  addresses?: EndpointAddress[];
  notReadyAddresses?: EndpointAddress[];
  ports?: EndpointPort[];
}

export interface Endpoints extends StoredObject {
  subsets?: EndpointSubset[];
}

export interface Binding extends StoredObject {
  target?: ObjectReference;
}

/** kube's Service types, session affinities, IP families and policies (core/v1 constants). */
export const ServiceType = { ClusterIP: 'ClusterIP', NodePort: 'NodePort', LoadBalancer: 'LoadBalancer', ExternalName: 'ExternalName' } as const;
export const IPFamily = { IPv4: 'IPv4', IPv6: 'IPv6' } as const;
export type IPFamilyName = (typeof IPFamily)[keyof typeof IPFamily];
export const IPFamilyPolicy = { SingleStack: 'SingleStack', PreferDualStack: 'PreferDualStack', RequireDualStack: 'RequireDualStack' } as const;
/** The clusterIP of a headless Service. */
export const CLUSTER_IP_NONE = 'None';
/** kube's `DefaultClientIPServiceAffinitySeconds` (3 h) and `MaxClientIPServiceAffinitySeconds` (1 day). */
export const DEFAULT_CLIENT_IP_AFFINITY_SECONDS = 10800;
export const MAX_CLIENT_IP_AFFINITY_SECONDS = 86400;
export const ANNOTATION_LB_SOURCE_RANGES = 'service.beta.kubernetes.io/load-balancer-source-ranges';

/**
 * The beta feature gates of kube 1.24 that change Service behaviour (both on by default in 1.24).
 * Components pass what `--feature-gates` says; omitted gates are at kube's default.
 */
export interface ServiceFeatures {
  /** ServiceInternalTrafficPolicy: `spec.internalTrafficPolicy` defaulted and required. */
  serviceInternalTrafficPolicy?: boolean;
  /** MixedProtocolLBService: a LoadBalancer may mix protocols; status conditions and ingress ports kept. */
  mixedProtocolLBService?: boolean;
}

/** Whether the Service's type gets a cluster IP (all but ExternalName; kube's `needsClusterIP`). */
export function needsClusterIP(svc: Service): boolean {
  return svc.spec?.type !== ServiceType.ExternalName;
}

/** kube's `isHeadlessService`: clusterIPs is exactly ["None"]. */
export function isHeadlessService(svc: Service): boolean {
  const ips = svc.spec?.clusterIPs;
  return ips !== undefined && ips.length === 1 && ips[0] === CLUSTER_IP_NONE;
}

/** kube's `apiservice.NeedsHealthCheck`: a LoadBalancer with externalTrafficPolicy Local. */
export function needsHealthCheck(svc: Service): boolean {
  const spec = svc.spec ?? {};
  return spec.type === ServiceType.LoadBalancer && spec.externalTrafficPolicy === 'Local';
}

/** Whether the Service's type uses node ports (NodePort, LoadBalancer). */
export function needsNodePort(svc: Service): boolean {
  const t = svc.spec?.type;
  return t === ServiceType.NodePort || t === ServiceType.LoadBalancer;
}

/** kube's `helper.IsServiceIPSet`: a clusterIP other than "" and "None". */
export function isServiceIPSet(svc: Service): boolean {
  const ip = svc.spec?.clusterIP ?? '';
  return ip !== '' && ip !== CLUSTER_IP_NONE;
}
