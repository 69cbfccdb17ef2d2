/**
 * EndpointSlice validation as kube-apiserver 1.24 has it (pkg/apis/discovery/validation:
 * ValidateEndpointSlice, ValidateEndpointSliceUpdate), over the v1 form (the internal type's field
 * names, so v1beta1 bodies are converted first and their `topology` errors name
 * `deprecatedTopology` as kube's do). Object metadata is the store's.
 */
import { type FieldError, fieldErr } from '../../field-errors.js';
import { type StoredObject, isPlainObject } from '../../types.js';
import { isDNS1123Label, isDNS1123Subdomain, isQualifiedName, isValidLabelValue, validateLabels } from '../../validation.js';
import { isIPv4Bytes, parseIP, specialIPMessages } from '../core/validation/net.js';
import { LABEL_TOPOLOGY_ZONE } from './conversion.js';

/** kube's supportedAddressTypes, sorted as its NotSupported lists them. */
export const ADDRESS_TYPES = ['FQDN', 'IPv4', 'IPv6'];
const PORT_PROTOCOLS = ['SCTP', 'TCP', 'UDP'];
const MAX_TOPOLOGY_LABELS = 16;
const MAX_ADDRESSES = 100;
const MAX_PORTS = 20000;
const MAX_ENDPOINTS = 1000;
const MAX_ZONE_HINTS = 8;

const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const obj = (v: unknown): Record<string, unknown> => (isPlainObject(v) ? v : {});

/** apimachinery's IsFullyQualifiedDomainName (one error at most; a trailing dot is allowed). */
function fqdnErrors(path: string, value: string): FieldError[] {
  if (value === '') return [fieldErr.required(path)];
  const name = value.endsWith('.') ? value.slice(0, -1) : value;
  const sub = isDNS1123Subdomain(name);
  if (sub.length > 0) return [fieldErr.invalid(path, name, sub.join(','))];
  const labels = name.split('.');
  if (labels.length < 2) return [fieldErr.invalid(path, name, 'should be a domain with at least two segments separated by dots')];
  for (const label of labels) {
    const errs = isDNS1123Label(label);
    if (errs.length > 0) return [fieldErr.invalid(path, label, errs.join(','))];
  }
  return [];
}

function addressErrors(addressType: string, path: string, address: string): FieldError[] {
  // Other address types were refused above; their addresses are not checked (kube).
  if (addressType === 'FQDN') return fqdnErrors(path, address);
  if (addressType !== 'IPv4' && addressType !== 'IPv6') return [];
  const ip = parseIP(address);
  const errs: FieldError[] = [];
  if (addressType === 'IPv4' && !(ip && isIPv4Bytes(ip))) errs.push(fieldErr.invalid(path, address, 'must be a valid IPv4 address'));
  if (addressType === 'IPv6' && !(ip && !isIPv4Bytes(ip))) errs.push(fieldErr.invalid(path, address, 'must be a valid IPv6 address'));
  for (const m of specialIPMessages(address)) errs.push(fieldErr.invalid(path, address, m));
  return errs;
}

function validateHints(hints: Record<string, unknown>, path: string): FieldError[] {
  const fzPath = `${path}.forZones`;
  const zones = list(hints['forZones']);
  if (zones.length > MAX_ZONE_HINTS) return [fieldErr.tooMany(fzPath, zones.length, MAX_ZONE_HINTS)];
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  zones.forEach((z, i) => {
    const name = str(obj(z)['name']);
    const zonePath = `${fzPath}[${i}].name`;
    if (seen.has(name)) errs.push(fieldErr.duplicate(zonePath, name));
    else seen.add(name);
    for (const m of isValidLabelValue(name)) errs.push(fieldErr.invalid(zonePath, name, m));
  });
  return errs;
}

function validateEndpoints(endpoints: unknown[], addressType: string): FieldError[] {
  if (endpoints.length > MAX_ENDPOINTS) return [fieldErr.tooMany('endpoints', endpoints.length, MAX_ENDPOINTS)];
  const errs: FieldError[] = [];
  endpoints.forEach((e, i) => {
    const ep = obj(e);
    const path = `endpoints[${i}]`;
    const addresses = list(ep['addresses']);
    if (addresses.length === 0) errs.push(fieldErr.required(`${path}.addresses`, 'must contain at least 1 address'));
    else if (addresses.length > MAX_ADDRESSES) errs.push(fieldErr.tooMany(`${path}.addresses`, addresses.length, MAX_ADDRESSES));
    addresses.forEach((a, j) => errs.push(...addressErrors(addressType, `${path}.addresses[${j}]`, str(a))));
    if (typeof ep['nodeName'] === 'string') {
      const nodeName = ep['nodeName'];
      for (const m of isDNS1123Subdomain(nodeName)) errs.push(fieldErr.invalid(`${path}.nodeName`, nodeName, m));
    }
    const topologyPath = `${path}.deprecatedTopology`;
    const topology = isPlainObject(ep['deprecatedTopology']) ? ep['deprecatedTopology'] : undefined;
    const count = topology ? Object.keys(topology).length : 0;
    if (count > MAX_TOPOLOGY_LABELS) errs.push(fieldErr.tooMany(topologyPath, count, MAX_TOPOLOGY_LABELS));
    errs.push(...validateLabels(topology, topologyPath));
    if (topology && LABEL_TOPOLOGY_ZONE in topology) {
      errs.push({ type: 'InternalError', field: `${topologyPath}[${LABEL_TOPOLOGY_ZONE}]`, hasValue: false, detail: 'reserved key was not removed in conversion' });
    }
    if (typeof ep['hostname'] === 'string') {
      const hostname = ep['hostname'];
      for (const m of isDNS1123Label(hostname)) errs.push(fieldErr.invalid(`${path}.hostname`, hostname, m));
    }
    if (isPlainObject(ep['hints'])) errs.push(...validateHints(ep['hints'], `${path}.hints`));
  });
  return errs;
}

function validatePorts(ports: unknown[]): FieldError[] {
  if (ports.length > MAX_PORTS) return [fieldErr.tooMany('ports', ports.length, MAX_PORTS)];
  const errs: FieldError[] = [];
  const names = new Set<string>();
  ports.forEach((p, i) => {
    const port = obj(p);
    const path = `ports[${i}]`;
    // Defaulting made the name "" when absent: unnamed ports collide with each other too.
    const name = str(port['name']);
    if (name !== '') for (const m of isDNS1123Label(name)) errs.push(fieldErr.invalid(`${path}.name`, name, m));
    if (names.has(name)) errs.push(fieldErr.duplicate(`${path}.name`, name));
    else names.add(name);
    const protocol = port['protocol'];
    if (protocol === undefined || protocol === null) errs.push(fieldErr.required(`${path}.protocol`));
    else if (!PORT_PROTOCOLS.includes(str(protocol))) errs.push(fieldErr.notSupported(`${path}.protocol`, protocol, PORT_PROTOCOLS));
    if (typeof port['appProtocol'] === 'string') {
      const appProtocol = port['appProtocol'];
      for (const m of isQualifiedName(appProtocol)) errs.push(fieldErr.invalid(`${path}.appProtocol`, appProtocol, m));
    }
  });
  return errs;
}

/** kube's ValidateEndpointSlice (create, and the first part of update) of a v1 EndpointSlice. */
export function validateEndpointSlice(slice: StoredObject): FieldError[] {
  const errs: FieldError[] = [];
  const addressType = str(slice['addressType']);
  if (addressType === '') errs.push(fieldErr.required('addressType'));
  else if (!ADDRESS_TYPES.includes(addressType)) errs.push(fieldErr.notSupported('addressType', addressType, ADDRESS_TYPES));
  errs.push(...validateEndpoints(list(slice['endpoints']), addressType));
  errs.push(...validatePorts(list(slice['ports'])));
  return errs;
}

/** What kube's ValidateEndpointSliceUpdate adds: the address type is immutable. */
export function validateEndpointSliceUpdate(slice: StoredObject, old: StoredObject): FieldError[] {
  const now = str(slice['addressType']);
  return now === str(old['addressType']) ? [] : [fieldErr.invalid('addressType', now, 'field is immutable')];
}
