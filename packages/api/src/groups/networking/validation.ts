/**
 * kube 1.24's networking.k8s.io/v1 validation (pkg/apis/networking/validation): Ingress spec
 * (rules, paths and pathType, backends service xor resource, TLS, ingressClassName), IngressClass
 * (controller, parameters) and NetworkPolicy (ports, peers, ipBlock, policyTypes).
 */
import { type FieldError, GoLiteral, fieldErr } from '../../field-errors.js';
import { type StoredObject, isPlainObject } from '../../types.js';
import { isDNS1123Subdomain, maxLenMsg, nameIsDNSSubdomain, nameIsPathSegment, regexError } from '../../validation.js';
import { isIPSloppy, isValidPortName, isValidPortNum } from '../core/validation/basic.js';
import { validateLabelSelector } from '../core/validation/label-selector.js';
import { parseCIDR, cidrContains } from '../core/validation/net.js';

type Json = Record<string, unknown>;
const obj = (v: unknown): Json | undefined => (isPlainObject(v) ? v : undefined);
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

const SUPPORTED_PATH_TYPES = ['Exact', 'ImplementationSpecific', 'Prefix'];
const INVALID_PATH_SEQUENCES = ['//', '/./', '/../', '%2f', '%2F'];
const INVALID_PATH_SUFFIXES = ['/..', '/.'];
const ANNOTATION_INGRESS_CLASS = 'kubernetes.io/ingress.class';
const MAX_LEN_INGRESS_CLASS_CONTROLLER = 250;

const DNS1123_SUBDOMAIN_FMT = '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*';
const WILDCARD_FMT = `\\*\\.${DNS1123_SUBDOMAIN_FMT}`;
const wildcardRe = new RegExp(`^${WILDCARD_FMT}$`);
const HTTP_PATH_FMT = "[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+";
const httpPathRe = new RegExp(`^${HTTP_PATH_FMT}$`);

/** kube's IsWildcardDNS1123Subdomain. */
export function isWildcardDNS1123Subdomain(value: string): string[] {
  const errs: string[] = [];
  if (value.length > 253) errs.push(maxLenMsg(253));
  if (!wildcardRe.test(value)) {
    errs.push(regexError("a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character", WILDCARD_FMT, '*.example.com'));
  }
  return errs;
}

/** kube's IsDomainPrefixedPath. */
function validateDomainPrefixedPath(path: string, value: string): FieldError[] {
  if (value.length === 0) return [fieldErr.required(path)];
  const slash = value.indexOf('/');
  const host = slash < 0 ? value : value.slice(0, slash);
  const rest = slash < 0 ? '' : value.slice(slash + 1);
  if (slash < 0 || !host || !rest) return [fieldErr.invalid(path, value, 'must be a domain-prefixed path (such as "acme.io/foo")')];
  const errs = isDNS1123Subdomain(host).map((m) => fieldErr.invalid(path, host, m));
  if (!httpPathRe.test(rest)) errs.push(fieldErr.invalid(path, rest, regexError('Invalid path', HTTP_PATH_FMT)));
  return errs;
}

/** kube's validateIngressTypedLocalObjectReference. */
function validateTypedLocalObjectReference(ref: Json, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (typeof ref['apiGroup'] === 'string') for (const m of isDNS1123Subdomain(ref['apiGroup'])) errs.push(fieldErr.invalid(`${path}.apiGroup`, ref['apiGroup'], m));
  for (const f of ['kind', 'name'] as const) {
    const v = str(ref[f]);
    if (!v) errs.push(fieldErr.required(`${path}.${f}`, `${f} is required`));
    else for (const m of nameIsPathSegment(v, false).filter((x) => !x.startsWith('must be no more'))) errs.push(fieldErr.invalid(`${path}.${f}`, v, m));
  }
  return errs;
}

/** kube's validateIngressBackend. */
function validateIngressBackend(backend: Json, path: string): FieldError[] {
  const resource = obj(backend['resource']);
  const service = obj(backend['service']);
  if (resource && service) return [fieldErr.invalid(path, '', 'cannot set both resource and service backends')];
  if (resource) return validateTypedLocalObjectReference(resource, `${path}.resource`);
  if (!service) return [fieldErr.invalid(path, '', 'resource or service backend is required')];
  const errs: FieldError[] = [];
  const name = str(service['name']);
  if (!name) errs.push(fieldErr.required(`${path}.service.name`));
  else for (const m of nameIsDNS1035(name)) errs.push(fieldErr.invalid(`${path}.service.name`, name, m));
  const port = obj(service['port']) ?? {};
  const portName = str(port['name']);
  const portNumber = typeof port['number'] === 'number' ? port['number'] : 0;
  if (portName && portNumber) errs.push(fieldErr.invalid(path, '', 'cannot set both port name & port number'));
  else if (portName) for (const m of isValidPortName(portName)) errs.push(fieldErr.invalid(`${path}.service.port.name`, portName, m));
  else if (portNumber) for (const m of isValidPortNum(portNumber)) errs.push(fieldErr.invalid(`${path}.service.port.number`, portNumber, m));
  else errs.push(fieldErr.required(path, 'port name or number is required'));
  return errs;
}

const DNS1035_FMT = '[a-z]([-a-z0-9]*[a-z0-9])?';
/** kube's ValidateServiceName (NameIsDNS1035Label). */
function nameIsDNS1035(name: string): string[] {
  const errs: string[] = [];
  if (name.length > 63) errs.push(maxLenMsg(63));
  if (!new RegExp(`^${DNS1035_FMT}$`).test(name)) {
    errs.push(regexError("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character", DNS1035_FMT, 'my-name', 'abc-123'));
  }
  return errs;
}

function validateHTTPIngressPath(p: Json, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const pathType = p['pathType'];
  if (pathType === undefined || pathType === null) return [fieldErr.required(`${path}.pathType`, 'pathType must be specified')];
  const value = str(p['path']);
  if (pathType === 'Exact' || pathType === 'Prefix') {
    if (!value.startsWith('/')) errs.push(fieldErr.invalid(`${path}.path`, value, 'must be an absolute path'));
    if (value.length > 0) {
      for (const seq of INVALID_PATH_SEQUENCES) if (value.includes(seq)) errs.push(fieldErr.invalid(`${path}.path`, value, `must not contain '${seq}'`));
      for (const suf of INVALID_PATH_SUFFIXES) if (value.endsWith(suf)) errs.push(fieldErr.invalid(`${path}.path`, value, `cannot end with '${suf}'`));
    }
  } else if (pathType === 'ImplementationSpecific') {
    if (value.length > 0 && !value.startsWith('/')) errs.push(fieldErr.invalid(`${path}.path`, value, 'must be an absolute path'));
  } else {
    errs.push(fieldErr.notSupported(`${path}.pathType`, pathType, SUPPORTED_PATH_TYPES));
  }
  errs.push(...validateIngressBackend(obj(p['backend']) ?? {}, `${path}.backend`));
  return errs;
}

function validateIngressRuleValue(rule: Json, path: string): FieldError[] {
  const http = obj(rule['http']);
  if (!http) return [];
  const paths = arr(http['paths']);
  const errs: FieldError[] = paths.length === 0 ? [fieldErr.required(`${path}.http.paths`)] : [];
  paths.forEach((p, i) => errs.push(...validateHTTPIngressPath(obj(p) ?? {}, `${path}.http.paths[${i}]`)));
  return errs;
}

/** What an update may keep of an old Ingress that kube 1.24 no longer accepts on create. */
export interface IngressValidationOptions {
  allowInvalidSecretName: boolean;
  allowInvalidWildcardHostRule: boolean;
}

/** kube's ValidateIngressSpec. */
export function validateIngressSpec(spec: Json, opts: IngressValidationOptions): FieldError[] {
  const errs: FieldError[] = [];
  const rules = arr(spec['rules']);
  const defaultBackend = obj(spec['defaultBackend']);
  if (rules.length === 0 && !defaultBackend) {
    // kube reports the Go slice: `[]networking.IngressRule(nil)` when absent.
    const value = new GoLiteral(Array.isArray(spec['rules']) ? '[]networking.IngressRule{}' : '[]networking.IngressRule(nil)');
    errs.push(fieldErr.invalid('spec', value, 'either `defaultBackend` or `rules` must be specified'));
  }
  if (defaultBackend) errs.push(...validateIngressBackend(defaultBackend, 'spec.defaultBackend'));
  rules.forEach((r, i) => {
    const rule = obj(r) ?? {};
    const host = str(rule['host']);
    const path = `spec.rules[${i}]`;
    let wildcard = false;
    if (host) {
      if (isIPSloppy(host)) errs.push(fieldErr.invalid(`${path}.host`, host, 'must be a DNS name, not an IP address'));
      if (host.includes('*')) {
        for (const m of isWildcardDNS1123Subdomain(host)) errs.push(fieldErr.invalid(`${path}.host`, host, m));
        wildcard = true;
      } else {
        for (const m of isDNS1123Subdomain(host)) errs.push(fieldErr.invalid(`${path}.host`, host, m));
      }
    }
    if (!wildcard || !opts.allowInvalidWildcardHostRule) errs.push(...validateIngressRuleValue(rule, path));
  });
  arr(spec['tls']).forEach((t, ti) => {
    const tls = obj(t) ?? {};
    arr(tls['hosts']).forEach((h, i) => {
      const host = str(h);
      const msgs = host.includes('*') ? isWildcardDNS1123Subdomain(host) : isDNS1123Subdomain(host);
      for (const m of msgs) errs.push(fieldErr.invalid(`spec.tls[${ti}].hosts[${i}]`, host, m));
    });
    if (!opts.allowInvalidSecretName) {
      const secret = str(tls['secretName']);
      if (secret) for (const m of nameIsDNSSubdomain(secret, false)) errs.push(fieldErr.invalid(`spec.tls[${ti}].secretName`, secret, m));
    }
  });
  if (typeof spec['ingressClassName'] === 'string') {
    for (const m of nameIsDNSSubdomain(spec['ingressClassName'], false)) errs.push(fieldErr.invalid('spec.ingressClassName', spec['ingressClassName'], m));
  }
  return errs;
}

/** kube's ValidateIngressCreate (less object metadata, the store's). */
export function validateIngressCreate(ing: StoredObject): FieldError[] {
  const errs = validateIngressSpec(obj(ing['spec']) ?? {}, { allowInvalidSecretName: false, allowInvalidWildcardHostRule: false });
  const annotation = ing.metadata.annotations?.[ANNOTATION_INGRESS_CLASS];
  if (annotation !== undefined && obj(ing['spec'])?.['ingressClassName'] != null) {
    errs.push(fieldErr.invalid(`annotations.${ANNOTATION_INGRESS_CLASS}`, annotation, 'can not be set when the class field is also set'));
  }
  return errs;
}

/** kube's ValidateIngressUpdate: an old Ingress's invalid secret names or wildcard rules may stay. */
export function validateIngressUpdate(ing: StoredObject, old: StoredObject): FieldError[] {
  const oldSpec = obj(old['spec']) ?? {};
  const allowInvalidSecretName = arr(oldSpec['tls']).some((t) => {
    const s = str(obj(t)?.['secretName']);
    return s !== '' && nameIsDNSSubdomain(s, false).length > 0;
  });
  const allowInvalidWildcardHostRule = arr(oldSpec['rules']).some((r) => {
    const rule = obj(r) ?? {};
    return str(rule['host']).includes('*') && validateIngressRuleValue(rule, '').length > 0;
  });
  return validateIngressSpec(obj(ing['spec']) ?? {}, { allowInvalidSecretName, allowInvalidWildcardHostRule });
}

/** kube's validateIngressClassSpec. */
export function validateIngressClass(ic: StoredObject): FieldError[] {
  const spec = obj(ic['spec']) ?? {};
  const errs: FieldError[] = [];
  const controller = str(spec['controller']);
  if (controller.length > MAX_LEN_INGRESS_CLASS_CONTROLLER) errs.push(fieldErr.tooLong('spec.controller', controller, MAX_LEN_INGRESS_CLASS_CONTROLLER));
  errs.push(...validateDomainPrefixedPath('spec.controller', controller));
  const params = obj(spec['parameters']);
  if (!params) return errs;
  const path = 'spec.parameters';
  errs.push(...validateTypedLocalObjectReference(params, path));
  const scope = params['scope'];
  if (scope === undefined || scope === null) return [...errs, fieldErr.required(`${path}.scope`)];
  if (scope !== 'Cluster' && scope !== 'Namespace') {
    errs.push(fieldErr.notSupported(`${path}.scope`, scope, ['Cluster', 'Namespace']));
  } else if (scope === 'Namespace') {
    const ns = params['namespace'];
    if (typeof ns !== 'string') errs.push(fieldErr.required(`${path}.namespace`, "`parameters.scope` is set to 'Namespace'"));
    else for (const m of isDNS1123Label63(ns)) errs.push(fieldErr.invalid(`${path}.namespace`, ns, m));
  } else if (params['namespace'] != null) {
    errs.push(fieldErr.forbidden(`${path}.namespace`, "`parameters.scope` is set to 'Cluster'"));
  }
  return errs;
}

/** kube's ValidateNamespaceName (a DNS-1123 label). */
function isDNS1123Label63(name: string): string[] {
  const errs: string[] = [];
  if (name.length > 63) errs.push(maxLenMsg(63));
  const fmt = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
  if (!new RegExp(`^${fmt}$`).test(name)) errs.push(regexError("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character", fmt, 'my-name', '123-abc'));
  return errs;
}

function validateNetworkPolicyPort(port: Json, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const protocol = port['protocol'];
  if (protocol != null && protocol !== 'TCP' && protocol !== 'UDP' && protocol !== 'SCTP') errs.push(fieldErr.notSupported(`${path}.protocol`, protocol, ['TCP', 'UDP', 'SCTP']));
  const p = port['port'];
  const endPort = port['endPort'];
  const hasEnd = typeof endPort === 'number';
  if (typeof p === 'number') {
    for (const m of isValidPortNum(p)) errs.push(fieldErr.invalid(`${path}.port`, p, m));
    if (hasEnd) {
      if (endPort < p) errs.push(fieldErr.invalid(`${path}.endPort`, p, 'must be greater than or equal to `port`'));
      for (const m of isValidPortNum(endPort)) errs.push(fieldErr.invalid(`${path}.endPort`, endPort, m));
    }
  } else if (typeof p === 'string') {
    if (hasEnd) errs.push(fieldErr.invalid(`${path}.endPort`, endPort, 'may not be specified when `port` is non-numeric'));
    for (const m of isValidPortName(p)) errs.push(fieldErr.invalid(`${path}.port`, p, m));
  } else if (hasEnd) {
    errs.push(fieldErr.invalid(`${path}.endPort`, endPort, 'may not be specified when `port` is not specified'));
  }
  return errs;
}

function validateIPBlock(block: Json, path: string): FieldError[] {
  const cidr = str(block['cidr']);
  if (!cidr) return [fieldErr.required(`${path}.cidr`)];
  const net = parseCIDR(cidr);
  if (net instanceof Error) return [fieldErr.invalid(`${path}.cidr`, cidr, 'not a valid CIDR')];
  const errs: FieldError[] = [];
  for (const [i, e] of arr(block['except']).entries()) {
    const except = str(e);
    const ex = parseCIDR(except);
    if (ex instanceof Error) return [...errs, fieldErr.invalid(`${path}.except[${i}]`, except, 'not a valid CIDR')];
    if (!cidrContains(net, ex.ip) || net.prefix >= ex.prefix) errs.push(fieldErr.invalid(`${path}.except[${i}]`, except, 'must be a strict subset of `cidr`'));
  }
  return errs;
}

function validateNetworkPolicyPeer(peer: Json, path: string): FieldError[] {
  const errs: FieldError[] = [];
  let peers = 0;
  if (peer['podSelector'] != null) {
    peers++;
    errs.push(...validateLabelSelector(peer['podSelector'], `${path}.podSelector`));
  }
  if (peer['namespaceSelector'] != null) {
    peers++;
    errs.push(...validateLabelSelector(peer['namespaceSelector'], `${path}.namespaceSelector`));
  }
  const ipBlock = obj(peer['ipBlock']);
  if (ipBlock) {
    peers++;
    errs.push(...validateIPBlock(ipBlock, `${path}.ipBlock`));
  }
  if (peers === 0) errs.push(fieldErr.required(path, 'must specify a peer'));
  else if (peers > 1 && ipBlock) errs.push(fieldErr.forbidden(path, 'may not specify both ipBlock and another peer'));
  return errs;
}

/** kube's ValidateNetworkPolicySpec. */
export function validateNetworkPolicy(np: StoredObject): FieldError[] {
  const spec = obj(np['spec']) ?? {};
  const errs = validateLabelSelector(spec['podSelector'] ?? {}, 'spec.podSelector');
  for (const [dir, peersKey] of [['ingress', 'from'], ['egress', 'to']] as const) {
    arr(spec[dir]).forEach((r, i) => {
      const rule = obj(r) ?? {};
      arr(rule['ports']).forEach((p, j) => errs.push(...validateNetworkPolicyPort(obj(p) ?? {}, `spec.${dir}[${i}].ports[${j}]`)));
      arr(rule[peersKey]).forEach((p, j) => errs.push(...validateNetworkPolicyPeer(obj(p) ?? {}, `spec.${dir}[${i}].${peersKey}[${j}]`)));
    });
  }
  const types = arr(spec['policyTypes']);
  if (types.length > 2) return [...errs, fieldErr.invalid('spec.policyTypes', types, 'may not specify more than two policyTypes')];
  types.forEach((t, i) => {
    if (t !== 'Ingress' && t !== 'Egress') errs.push(fieldErr.notSupported(`spec.policyTypes[${i}]`, t, ['Ingress', 'Egress']));
  });
  return errs;
}
