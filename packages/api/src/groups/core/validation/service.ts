/**
 * Service validation as kube-apiserver 1.24 does it (pkg/apis/core/validation: ValidateService,
 * ValidateServiceUpdate, ValidateServiceStatusUpdate, ValidateServiceClusterIPsRelatedFields,
 * ValidateConditionalService), with kube's field paths, cause types, details and order.
 *
 * Object metadata is not validated here (the generic store does it, with `nameIsDNS1035Label`);
 * kube's order is ObjectMeta then spec on create, and on update ObjectMetaUpdate, the
 * update-only rules (`validateServiceUpdateOnly`), ObjectMeta, then spec.
 */
import { type FieldError, GoLiteral, fieldErr, goStringSlice } from '../../../field-errors.js';
import { isDNS1123Label, isDNS1123Subdomain, isQualifiedName, validateLabels } from '../../../validation.js';
import {
  ANNOTATION_LB_SOURCE_RANGES,
  CLUSTER_IP_NONE,
  IPFamily,
  IPFamilyPolicy,
  MAX_CLIENT_IP_AFFINITY_SECONDS,
  type LoadBalancerIngress,
  type Service,
  type ServiceFeatures,
  type ServicePort,
  ServiceType,
  isHeadlessService,
  needsHealthCheck,
} from '../service-types.js';
import { isValidPortName as portNameMessages, isValidPortNum as portNumMessages } from './basic.js';
import { isDualStackIPStrings, isIPv6String, isValidIP, parseCIDR, parseIP, specialIPMessages } from './net.js';

/** kube's `ports.KubeletPort`: a LoadBalancer may not expose it. */
const KUBELET_PORT = 10250;

const SUPPORTED_SESSION_AFFINITY = ['ClientIP', 'None'];
const SUPPORTED_TYPES = ['ClusterIP', 'ExternalName', 'LoadBalancer', 'NodePort'];
const SUPPORTED_PROTOCOLS = ['SCTP', 'TCP', 'UDP'];
const SUPPORTED_TRAFFIC_POLICIES = ['Cluster', 'Local'];
const SUPPORTED_IP_FAMILIES = ['IPv4', 'IPv6'];
const SUPPORTED_IP_FAMILY_POLICIES = ['PreferDualStack', 'RequireDualStack', 'SingleStack'];

const DNS1035_LABEL_FMT = '[a-z]([-a-z0-9]*[a-z0-9])?';
const dns1035Re = new RegExp(`^${DNS1035_LABEL_FMT}$`);

/** kube's `IsDNS1035Label`. */
export function isDNS1035Label(value: string): string[] {
  const errs: string[] = [];
  if (value.length > 63) errs.push('must be no more than 63 characters');
  if (!dns1035Re.test(value)) {
    errs.push(
      `a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '${DNS1035_LABEL_FMT}')`,
    );
  }
  return errs;
}

/** kube's `ValidateServiceName` (NameIsDNS1035Label), a `NameValidator`. */
export function nameIsDNS1035Label(name: string, prefix: boolean): string[] {
  return isDNS1035Label(prefix && name.length > 1 && name.endsWith('-') ? `${name.slice(0, -2)}a` : name);
}

/** kube's `IsValidPortNum` and `IsValidPortName` (the pod rules' own). */
export { isValidPortNum as portNumMessages, isValidPortName as portNameMessages } from './basic.js';

/** kube's `ValidatePortNumOrName` (an IntOrString target port). */
export function validatePortNumOrName(port: number | string | undefined, path: string): FieldError[] {
  if (typeof port === 'string') return portNameMessages(port).map((m) => fieldErr.invalid(path, port, m));
  const n = port ?? 0;
  return portNumMessages(n).map((m) => fieldErr.invalid(path, n, m));
}

/** A Go `%#v` of a string slice: nil when absent. */
function goSlice(items: string[] | undefined, elemType = 'string'): GoLiteral {
  return items === undefined ? new GoLiteral(`[]${elemType}(nil)`) : goStringSlice(items, elemType);
}

/** How kube prints a `*string`-typed value in a field error: the string, or "null". */
function ptrValue(v: string | undefined): string {
  return v === undefined ? 'null' : v;
}

/**
 * Go's `%#v` of an internal `core.ServicePort` (a set appProtocol prints as a pointer, whose
 * address is the Go process's own: plinth prints a fixed one).
 */
function goServicePort(p: ServicePort): GoLiteral {
  const tp = p.targetPort ?? 0;
  const target = typeof tp === 'string' ? `intstr.IntOrString{Type:1, IntVal:0, StrVal:${JSON.stringify(tp)}}` : `intstr.IntOrString{Type:0, IntVal:${tp}, StrVal:""}`;
  const app = p.appProtocol === undefined ? '(*string)(nil)' : '(*string)(0xc000010000)';
  return new GoLiteral(
    `core.ServicePort{Name:${JSON.stringify(p.name ?? '')}, Protocol:${JSON.stringify(p.protocol ?? '')}, AppProtocol:${app}, Port:${p.port ?? 0}, TargetPort:${target}, NodePort:${p.nodePort ?? 0}}`,
  );
}

function validateServicePort(sp: ServicePort, requireName: boolean, allNames: Set<string>, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const name = sp.name ?? '';
  if (requireName && name === '') {
    errs.push(fieldErr.required(`${path}.name`));
  } else if (name !== '') {
    for (const m of isDNS1123Label(name)) errs.push(fieldErr.invalid(`${path}.name`, name, m));
    if (allNames.has(name)) errs.push(fieldErr.duplicate(`${path}.name`, name));
    else allNames.add(name);
  }
  const port = sp.port ?? 0;
  for (const m of portNumMessages(port)) errs.push(fieldErr.invalid(`${path}.port`, port, m));
  const protocol = sp.protocol ?? '';
  if (protocol === '') errs.push(fieldErr.required(`${path}.protocol`));
  else if (!SUPPORTED_PROTOCOLS.includes(protocol)) errs.push(fieldErr.notSupported(`${path}.protocol`, protocol, SUPPORTED_PROTOCOLS));
  errs.push(...validatePortNumOrName(sp.targetPort, `${path}.targetPort`));
  if (sp.appProtocol !== undefined) {
    for (const m of isQualifiedName(sp.appProtocol)) errs.push(fieldErr.invalid(`${path}.appProtocol`, sp.appProtocol, m));
  }
  return errs;
}

function validateClientIPAffinityConfig(svc: Service, path: string): FieldError[] {
  const config = svc.spec?.sessionAffinityConfig;
  const when = 'when session affinity type is ClientIP';
  if (!config) return [fieldErr.required(path, when)];
  if (!config.clientIP) return [fieldErr.required(`${path}.clientIP`, when)];
  const timeout = config.clientIP.timeoutSeconds;
  if (timeout === undefined) return [fieldErr.required(`${path}.clientIP.timeoutSeconds`, when)];
  if (timeout <= 0 || timeout > MAX_CLIENT_IP_AFFINITY_SECONDS) {
    return [fieldErr.invalid(`${path}.clientIP.timeoutSeconds`, timeout, `must be greater than 0 and less than ${MAX_CLIENT_IP_AFFINITY_SECONDS}`)];
  }
  return [];
}

/**
 * kube's `ValidateServiceClusterIPsRelatedFields`: clusterIP ⇄ clusterIPs, ipFamilies,
 * ipFamilyPolicy, and the IPs' families. The allocator runs it first, loosely, before it defaults
 * the families (kube's initIPFamilyFields).
 */
export function validateServiceClusterIPsRelatedFields(svc: Service): FieldError[] {
  const spec = svc.spec ?? {};
  if (spec.type === ServiceType.ExternalName) return [];
  const errs: FieldError[] = [];
  const clusterIP = spec.clusterIP ?? '';
  const clusterIPs = spec.clusterIPs;
  const ips = clusterIPs ?? [];
  const families = spec.ipFamilies ?? [];
  let hasInvalidIPs = false;
  if (clusterIP !== '') {
    if (ips.length === 0) errs.push(fieldErr.required('spec.clusterIPs'));
    else if (ips[0] !== clusterIP) errs.push(fieldErr.invalid('spec.clusterIPs', goSlice(clusterIPs), 'first value must match `clusterIP`'));
  } else if (ips.length !== 0) {
    errs.push(fieldErr.invalid('spec.clusterIPs', goSlice(clusterIPs), 'must be empty when `clusterIP` is not specified'));
  }
  const seen = new Set<string>();
  families.forEach((family, i) => {
    if (!SUPPORTED_IP_FAMILIES.includes(family)) errs.push(fieldErr.notSupported(`spec.ipFamilies[${i}]`, family, SUPPORTED_IP_FAMILIES));
    if (seen.has(family)) errs.push(fieldErr.duplicate(`spec.ipFamilies[${i}]`, family));
    seen.add(family);
  });
  if (spec.ipFamilyPolicy !== undefined && !SUPPORTED_IP_FAMILY_POLICIES.includes(spec.ipFamilyPolicy)) {
    errs.push(fieldErr.notSupported('spec.ipFamilyPolicy', spec.ipFamilyPolicy, SUPPORTED_IP_FAMILY_POLICIES));
  }
  ips.forEach((ip, i) => {
    if (i === 0 && ip === CLUSTER_IP_NONE) {
      if (ips.length > 1) {
        hasInvalidIPs = true;
        errs.push(fieldErr.invalid('spec.clusterIPs', goSlice(clusterIPs), "'None' must be the first and only value"));
      }
      return;
    }
    const msgs = isValidIP(ip);
    if (msgs.length > 0) hasInvalidIPs = true;
    for (const m of msgs) errs.push(fieldErr.invalid(`spec.clusterIPs[${i}]`, ip, m));
  });
  if (ips.length > 2) errs.push(fieldErr.invalid('spec.clusterIPs', goSlice(clusterIPs), 'may only hold up to 2 values'));
  // Bad IPs would skew the family checks below (kube stops here too).
  if (hasInvalidIPs) return errs;
  if (ips.length > 1 && isDualStackIPStrings(ips) === false) {
    errs.push(fieldErr.invalid('spec.clusterIPs', goSlice(clusterIPs), 'may specify no more than one IP for each IP family'));
  }
  if (!isHeadlessService(svc) && ips.length > 0 && families.length > 0) {
    for (let i = 0; i < ips.length && i < families.length; i++) {
      const ip = ips[i]!;
      if (families[i] === IPFamily.IPv4 && isIPv6String(ip)) errs.push(fieldErr.invalid(`spec.clusterIPs[${i}]`, ip, `expected an IPv4 value as indicated by \`ipFamilies[${i}]\``));
      if (families[i] === IPFamily.IPv6 && !isIPv6String(ip)) errs.push(fieldErr.invalid(`spec.clusterIPs[${i}]`, ip, `expected an IPv6 value as indicated by \`ipFamilies[${i}]\``));
    }
  }
  return errs;
}

/** k8s.io/utils/net `ParseIPNets` over trimmed specs: an error when one is no CIDR. */
function parseIPNets(specs: string[]): Error | undefined {
  for (const spec of specs) {
    const r = parseCIDR(spec.trim());
    if (r instanceof Error) return r;
  }
  return undefined;
}

function validateLoadBalancerClass(svc: Service, old: Service | undefined): FieldError[] {
  const errs: FieldError[] = [];
  const cls = svc.spec?.loadBalancerClass;
  if (old && old.spec?.type === ServiceType.LoadBalancer && svc.spec?.type === ServiceType.LoadBalancer && old.spec.loadBalancerClass !== cls) {
    errs.push(fieldErr.invalid('spec.loadBalancerClass', ptrValue(cls), 'may not change once set'));
  }
  if (svc.spec?.type === ServiceType.LoadBalancer) {
    if (cls !== undefined) for (const m of isQualifiedName(cls)) errs.push(fieldErr.invalid('spec.loadBalancerClass', cls, m));
  } else if (cls !== undefined) {
    errs.push(fieldErr.forbidden('spec.loadBalancerClass', "may only be used when `type` is 'LoadBalancer'"));
  }
  return errs;
}

function validateExternalTrafficPolicy(svc: Service): FieldError[] {
  const spec = svc.spec ?? {};
  const errs: FieldError[] = [];
  const etp = spec.externalTrafficPolicy ?? '';
  if (spec.type !== ServiceType.LoadBalancer && spec.type !== ServiceType.NodePort) {
    if (etp !== '') errs.push(fieldErr.invalid('spec.externalTrafficPolicy', etp, "may only be set when `type` is 'NodePort' or 'LoadBalancer'"));
  } else if (etp === '') {
    errs.push(fieldErr.required('spec.externalTrafficPolicy'));
  } else if (!SUPPORTED_TRAFFIC_POLICIES.includes(etp)) {
    errs.push(fieldErr.notSupported('spec.externalTrafficPolicy', etp, SUPPORTED_TRAFFIC_POLICIES));
  }
  const hc = spec.healthCheckNodePort ?? 0;
  if (!needsHealthCheck(svc)) {
    if (hc !== 0) errs.push(fieldErr.invalid('spec.healthCheckNodePort', hc, "may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'"));
  } else if (hc === 0) {
    errs.push(fieldErr.required('spec.healthCheckNodePort'));
  } else {
    for (const m of portNumMessages(hc)) errs.push(fieldErr.invalid('spec.healthCheckNodePort', hc, m));
  }
  return errs;
}

function validateInternalTrafficPolicy(svc: Service, features: ServiceFeatures): FieldError[] {
  const spec = svc.spec ?? {};
  const errs: FieldError[] = [];
  const itp = spec.internalTrafficPolicy;
  // Not required of ExternalName: objects stored before the gate must stay valid (kube).
  if (features.serviceInternalTrafficPolicy !== false && itp === undefined) {
    if (spec.type === ServiceType.NodePort || spec.type === ServiceType.LoadBalancer || spec.type === ServiceType.ClusterIP) {
      errs.push(fieldErr.required('spec.internalTrafficPolicy'));
    }
  }
  if (itp !== undefined && !SUPPORTED_TRAFFIC_POLICIES.includes(itp)) errs.push(fieldErr.notSupported('spec.internalTrafficPolicy', itp, SUPPORTED_TRAFFIC_POLICIES));
  return errs;
}

/**
 * kube's `ValidateService` without ObjectMeta. The Service is as the allocator leaves it:
 * defaulted, clusterIPs in sync with clusterIP.
 */
export function validateService(svc: Service, features: ServiceFeatures = {}): FieldError[] {
  const spec = svc.spec ?? {};
  const errs: FieldError[] = [];
  const ports = spec.ports ?? [];
  const headless = isHeadlessService(svc);
  if (ports.length === 0 && !headless && spec.type !== ServiceType.ExternalName) errs.push(fieldErr.required('spec.ports'));
  switch (spec.type) {
    case ServiceType.LoadBalancer:
      ports.forEach((p, i) => {
        if (p.port === KUBELET_PORT) errs.push(fieldErr.invalid(`spec.ports[${i}]`, KUBELET_PORT, `may not expose port ${KUBELET_PORT} externally since it is used by kubelet`));
      });
      if (headless) errs.push(fieldErr.invalid('spec.clusterIPs[0]', CLUSTER_IP_NONE, "may not be set to 'None' for LoadBalancer services"));
      break;
    case ServiceType.NodePort:
      if (headless) errs.push(fieldErr.invalid('spec.clusterIPs[0]', CLUSTER_IP_NONE, "may not be set to 'None' for NodePort services"));
      break;
    case ServiceType.ExternalName: {
      if ((spec.clusterIPs ?? []).length > 0) errs.push(fieldErr.forbidden('spec.clusterIPs', 'may not be set for ExternalName services'));
      if ((spec.ipFamilies ?? []).length > 0) errs.push(fieldErr.forbidden('spec.ipFamilies', 'may not be set for ExternalName services'));
      if (spec.ipFamilyPolicy !== undefined) errs.push(fieldErr.forbidden('spec.ipFamilyPolicy', 'may not be set for ExternalName services'));
      // A CNAME may end in a dot (fully qualified).
      const cname = (spec.externalName ?? '').replace(/\.$/, '');
      if (cname.length > 0) for (const m of isDNS1123Subdomain(cname)) errs.push(fieldErr.invalid('spec.externalName', cname, m));
      else errs.push(fieldErr.required('spec.externalName'));
      break;
    }
  }
  const names = new Set<string>();
  ports.forEach((p, i) => errs.push(...validateServicePort(p, ports.length > 1, names, `spec.ports[${i}]`)));
  if (spec.selector !== undefined) errs.push(...validateLabels(spec.selector, 'spec.selector'));
  const affinity = spec.sessionAffinity ?? '';
  if (affinity === '') errs.push(fieldErr.required('spec.sessionAffinity'));
  else if (!SUPPORTED_SESSION_AFFINITY.includes(affinity)) errs.push(fieldErr.notSupported('spec.sessionAffinity', affinity, SUPPORTED_SESSION_AFFINITY));
  if (affinity === 'ClientIP') errs.push(...validateClientIPAffinityConfig(svc, 'spec.sessionAffinityConfig'));
  else if (affinity === 'None' && spec.sessionAffinityConfig !== undefined) {
    errs.push(fieldErr.forbidden('spec.sessionAffinityConfig', 'must not be set when session affinity is None'));
  }
  errs.push(...validateServiceClusterIPsRelatedFields(svc));
  (spec.externalIPs ?? []).forEach((ip, i) => {
    const path = `spec.externalIPs[${i}]`;
    const msgs = isValidIP(ip);
    if (msgs.length > 0) for (const m of msgs) errs.push(fieldErr.invalid(path, ip, m));
    else for (const m of specialIPMessages(ip)) errs.push(fieldErr.invalid(path, ip, m));
  });
  const type = spec.type ?? '';
  if (type === '') errs.push(fieldErr.required('spec.type'));
  else if (!SUPPORTED_TYPES.includes(type)) errs.push(fieldErr.notSupported('spec.type', type, SUPPORTED_TYPES));
  if (type === ServiceType.ClusterIP) {
    ports.forEach((p, i) => {
      if ((p.nodePort ?? 0) !== 0) errs.push(fieldErr.forbidden(`spec.ports[${i}].nodePort`, "may not be used when `type` is 'ClusterIP'"));
    });
  }
  // Duplicates count (protocol, nodePort) and (protocol, port) pairs.
  const nodePorts = new Set<string>();
  ports.forEach((p, i) => {
    const np = p.nodePort ?? 0;
    if (np === 0) return;
    const key = `${p.protocol ?? ''}/${np}`;
    if (nodePorts.has(key)) errs.push(fieldErr.duplicate(`spec.ports[${i}].nodePort`, np));
    nodePorts.add(key);
  });
  const portKeys = new Set<string>();
  ports.forEach((p, i) => {
    const key = `${p.protocol ?? ''}/${p.port ?? 0}`;
    if (portKeys.has(key)) errs.push(fieldErr.duplicate(`spec.ports[${i}]`, goServicePort({ protocol: p.protocol ?? '', port: p.port ?? 0 })));
    portKeys.add(key);
  });
  errs.push(...validateSourceRanges(svc));
  if (spec.allocateLoadBalancerNodePorts !== undefined && type !== ServiceType.LoadBalancer) {
    errs.push(fieldErr.forbidden('spec.allocateLoadBalancerNodePorts', "may only be used when `type` is 'LoadBalancer'"));
  }
  // kube reports this one without the `spec.` prefix.
  if (type === ServiceType.LoadBalancer && spec.allocateLoadBalancerNodePorts === undefined) errs.push(fieldErr.required('allocateLoadBalancerNodePorts'));
  errs.push(...validateLoadBalancerClass(svc, undefined));
  errs.push(...validateExternalTrafficPolicy(svc));
  errs.push(...validateInternalTrafficPolicy(svc, features));
  return errs;
}

/** The Service strategy's Validate: `ValidateServiceCreate` + `ValidateConditionalService`, without ObjectMeta. */
export function validateServiceCreate(svc: Service, features: ServiceFeatures = {}): FieldError[] {
  return [...validateService(svc, features), ...validateMixedProtocolLB(svc, undefined, features)];
}

function validateSourceRanges(svc: Service): FieldError[] {
  const spec = svc.spec ?? {};
  const ranges = spec.loadBalancerSourceRanges ?? [];
  const annotation = svc.metadata.annotations?.[ANNOTATION_LB_SOURCE_RANGES];
  if (ranges.length === 0 && annotation === undefined) return [];
  const errs: FieldError[] = [];
  // kube names the field with a capital L here.
  const path = ranges.length > 0 ? 'spec.LoadBalancerSourceRanges' : `metadata.annotations[${ANNOTATION_LB_SOURCE_RANGES}]`;
  const val = ranges.length > 0 ? `[${ranges.join(' ')}]` : annotation!;
  if (spec.type !== ServiceType.LoadBalancer) errs.push(fieldErr.forbidden(path, "may only be used when `type` is 'LoadBalancer'"));
  const specs = ranges.length > 0 ? ranges : (annotation!.trim() || '0.0.0.0/0').split(',');
  if (parseIPNets(specs)) errs.push(fieldErr.invalid(path, val, 'must be a list of IP ranges. For example, 10.240.0.0/24,10.250.0.0/24 '));
  return errs;
}

/** kube's `validateMixedProtocolLBService` (a no-op while MixedProtocolLBService is on, as in 1.24). */
function validateMixedProtocolLB(svc: Service, old: Service | undefined, features: ServiceFeatures): FieldError[] {
  if (svc.spec?.type !== ServiceType.LoadBalancer || features.mixedProtocolLBService !== false) return [];
  const mixed = (s: Service | undefined): boolean => new Set((s?.spec?.ports ?? []).map((p) => p.protocol ?? '')).size > 1;
  if (mixed(svc) && !mixed(old)) {
    const value = new GoLiteral(`[]core.ServicePort{${(svc.spec?.ports ?? []).map((p) => goServicePort(p).text).join(', ')}}`);
    return [fieldErr.invalid('spec.ports', value, "may not contain more than 1 protocol when type is 'LoadBalancer'")];
  }
  return [];
}

function validateUpgradeDowngradeClusterIPs(old: Service, svc: Service): FieldError[] {
  const errs: FieldError[] = [];
  if (svc.spec?.type === ServiceType.ExternalName || old.spec?.type === ServiceType.ExternalName) return errs;
  if (isHeadlessService(old) && isHeadlessService(svc)) return errs;
  const oldIPs = old.spec?.clusterIPs ?? [];
  const newIPsRaw = svc.spec?.clusterIPs;
  const newIPs = newIPsRaw ?? [];
  if (oldIPs.length === newIPs.length) {
    oldIPs.forEach((ip, i) => {
      if (ip !== newIPs[i]) errs.push(fieldErr.invalid(`spec.clusterIPs[${i}]`, goSlice(newIPsRaw), 'may not change once set'));
    });
  } else if (oldIPs.length > newIPs.length) {
    if (newIPs.length === 0) errs.push(fieldErr.invalid('spec.clusterIPs[0]', goSlice(newIPsRaw), 'primary clusterIP can not be unset'));
    if (oldIPs.length > 0 && newIPs.length > 0 && newIPs[0] !== oldIPs[0]) errs.push(fieldErr.invalid('spec.clusterIPs[0]', goSlice(newIPsRaw), 'may not change once set'));
    if (newIPs.length === 1 && svc.spec?.ipFamilyPolicy !== IPFamilyPolicy.SingleStack) {
      errs.push(fieldErr.invalid('spec.ipFamilyPolicy', ptrValue(svc.spec?.ipFamilyPolicy), "must be set to 'SingleStack' when releasing the secondary clusterIP"));
    }
  } else if (oldIPs.length > 0 && newIPs[0] !== oldIPs[0]) {
    errs.push(fieldErr.invalid('spec.clusterIPs[0]', goSlice(newIPsRaw), 'may not change once set'));
  }
  return errs;
}

function validateUpgradeDowngradeIPFamilies(old: Service, svc: Service): FieldError[] {
  const errs: FieldError[] = [];
  if (svc.spec?.type === ServiceType.ExternalName || old.spec?.type === ServiceType.ExternalName) return errs;
  const oldHeadless = isHeadlessService(old);
  const newHeadless = isHeadlessService(svc);
  // To or from headless, or headless on both sides: families may change.
  if (oldHeadless !== newHeadless || newHeadless) return errs;
  const oldFam = old.spec?.ipFamilies ?? [];
  const newFamRaw = svc.spec?.ipFamilies;
  const newFam = newFamRaw ?? [];
  // kube prints clusterIPs as the value of some of these (sic).
  const ipsValue = goSlice(svc.spec?.clusterIPs);
  if (oldFam.length === newFam.length) {
    oldFam.forEach((f, i) => {
      if (f !== newFam[i]) errs.push(fieldErr.invalid('spec.ipFamilies[0]', goSlice(newFamRaw, 'core.IPFamily'), 'may not change once set'));
    });
  } else if (oldFam.length > newFam.length) {
    if ((svc.spec?.clusterIPs ?? []).length === 0) errs.push(fieldErr.invalid('spec.ipFamilies[0]', goSlice(newFamRaw, 'core.IPFamily'), 'primary ipFamily can not be unset'));
    if (newFam.length > 0 && newFam[0] !== oldFam[0]) errs.push(fieldErr.invalid('spec.ipFamilies[0]', ipsValue, 'may not change once set'));
    if (newFam.length === 1 && svc.spec?.ipFamilyPolicy !== IPFamilyPolicy.SingleStack) {
      errs.push(fieldErr.invalid('spec.ipFamilyPolicy', ptrValue(svc.spec?.ipFamilyPolicy), "must be set to 'SingleStack' when releasing the secondary ipFamily"));
    }
  } else if (oldFam.length > 0 && newFam.length > 0 && newFam[0] !== oldFam[0]) {
    errs.push(fieldErr.invalid('spec.ipFamilies[0]', ipsValue, 'may not change once set'));
  }
  return errs;
}

/**
 * The rules only an update has (kube's ValidateServiceUpdate before it calls ValidateService):
 * clusterIPs and ipFamilies may grow or shrink by the secondary only, loadBalancerClass is
 * immutable on a LoadBalancer, and so is a needed healthCheckNodePort.
 */
export function validateServiceUpdateOnly(svc: Service, old: Service): FieldError[] {
  const errs = [...validateUpgradeDowngradeClusterIPs(old, svc), ...validateUpgradeDowngradeIPFamilies(old, svc), ...validateLoadBalancerClass(svc, old)];
  if (needsHealthCheck(old) && needsHealthCheck(svc) && (svc.spec?.healthCheckNodePort ?? 0) !== (old.spec?.healthCheckNodePort ?? 0)) {
    errs.push(fieldErr.forbidden('spec.healthCheckNodePort', 'field is immutable'));
  }
  return errs;
}

/**
 * The Service strategy's ValidateUpdate: `ValidateServiceUpdate` + `ValidateConditionalService`,
 * without ObjectMeta(Update) (see the file's note on kube's order).
 */
export function validateServiceUpdate(svc: Service, old: Service, features: ServiceFeatures = {}): FieldError[] {
  return [...validateServiceUpdateOnly(svc, old), ...validateService(svc, features), ...validateMixedProtocolLB(svc, old, features)];
}

/** kube's `ValidateLoadBalancerStatus`. */
export function validateLoadBalancerStatus(ingress: LoadBalancerIngress[] | undefined, path: string): FieldError[] {
  const errs: FieldError[] = [];
  (ingress ?? []).forEach((ing, i) => {
    const p = `${path}.ingress[${i}]`;
    if (ing.ip && !parseIP(ing.ip)) errs.push(fieldErr.invalid(`${p}.ip`, ing.ip, 'must be a valid IP address'));
    if (ing.hostname) {
      for (const m of isDNS1123Subdomain(ing.hostname)) errs.push(fieldErr.invalid(`${p}.hostname`, ing.hostname, m));
      if (parseIP(ing.hostname)) errs.push(fieldErr.invalid(`${p}.hostname`, ing.hostname, 'must be a DNS name, not an IP address'));
    }
  });
  return errs;
}

/** kube's `ValidateServiceStatusUpdate` without ObjectMetaUpdate. */
export function validateServiceStatusUpdate(svc: Service): FieldError[] {
  return validateLoadBalancerStatus(svc.status?.loadBalancer?.ingress, 'status.loadBalancer');
}
