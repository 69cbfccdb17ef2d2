/**
 * Endpoints validation as kube-apiserver 1.24 does it (pkg/apis/core/validation ValidateEndpoints,
 * ValidateEndpointsUpdate), without ObjectMeta (the generic store validates it, with
 * `nameIsDNSSubdomain`). Updates have no rule of their own: a nodeName may change (kube allows it
 * for reused node IPs).
 */
import { type FieldError, fieldErr } from '../../../field-errors.js';
import { isDNS1123Label, isDNS1123Subdomain, isQualifiedName } from '../../../validation.js';
import type { EndpointAddress, EndpointPort, Endpoints } from '../service-types.js';
import { isValidIP, specialIPMessages } from './net.js';
import { portNumMessages } from './service.js';

const SUPPORTED_PROTOCOLS = ['SCTP', 'TCP', 'UDP'];

function validateEndpointAddress(addr: EndpointAddress, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const ip = addr.ip ?? '';
  for (const m of isValidIP(ip)) errs.push(fieldErr.invalid(`${path}.ip`, ip, m));
  if (addr.hostname) for (const m of isDNS1123Label(addr.hostname)) errs.push(fieldErr.invalid(`${path}.hostname`, addr.hostname, m));
  if (addr.nodeName !== undefined) for (const m of isDNS1123Subdomain(addr.nodeName)) errs.push(fieldErr.invalid(`${path}.nodeName`, addr.nodeName, m));
  // kube checks the special ranges after (and besides) the IP syntax: a bad IP gets both errors.
  for (const m of specialIPMessages(ip)) errs.push(fieldErr.invalid(`${path}.ip`, ip, m));
  return errs;
}

function validateEndpointPort(port: EndpointPort, requireName: boolean, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const name = port.name ?? '';
  if (requireName && name === '') errs.push(fieldErr.required(`${path}.name`));
  else if (name !== '') for (const m of isDNS1123Label(name)) errs.push(fieldErr.invalid(`${path}.name`, name, m));
  const n = port.port ?? 0;
  for (const m of portNumMessages(n)) errs.push(fieldErr.invalid(`${path}.port`, n, m));
  const protocol = port.protocol ?? '';
  if (protocol === '') errs.push(fieldErr.required(`${path}.protocol`));
  else if (!SUPPORTED_PROTOCOLS.includes(protocol)) errs.push(fieldErr.notSupported(`${path}.protocol`, protocol, SUPPORTED_PROTOCOLS));
  if (port.appProtocol !== undefined) for (const m of isQualifiedName(port.appProtocol)) errs.push(fieldErr.invalid(`${path}.appProtocol`, port.appProtocol, m));
  return errs;
}

/** kube's `ValidateEndpoints` (create and update) without ObjectMeta. */
export function validateEndpoints(ep: Endpoints): FieldError[] {
  const errs: FieldError[] = [];
  (ep.subsets ?? []).forEach((ss, i) => {
    const path = `subsets[${i}]`;
    const addresses = ss.addresses ?? [];
    const notReady = ss.notReadyAddresses ?? [];
    if (addresses.length === 0 && notReady.length === 0) errs.push(fieldErr.required(path, 'must specify `addresses` or `notReadyAddresses`'));
    addresses.forEach((a, j) => errs.push(...validateEndpointAddress(a, `${path}.addresses[${j}]`)));
    notReady.forEach((a, j) => errs.push(...validateEndpointAddress(a, `${path}.notReadyAddresses[${j}]`)));
    const ports = ss.ports ?? [];
    ports.forEach((p, j) => errs.push(...validateEndpointPort(p, ports.length > 1, `${path}.ports[${j}]`)));
  });
  return errs;
}
