/**
 * DNS policy and config, host aliases as kube 1.24 validates them (validateDNSPolicy,
 * validatePodDNSConfig, ValidateHostAliases).
 */
import { type FieldError, fieldErr, goStringSlice } from '../../../field-errors.js';
import { asObject, objects, str, strings } from './access.js';
import { isIPSloppy, validateDNS1123Subdomain } from './basic.js';
import { MAX_DNS_SEARCH_LIST_CHARS_LEGACY, MAX_DNS_SEARCH_PATHS_LEGACY, type PodValidationOptions } from './pod-options.js';

const MAX_DNS_NAMESERVERS = 3;
const MAX_DNS_SEARCH_PATHS_EXPANDED = 32;
const MAX_DNS_SEARCH_LIST_CHARS_EXPANDED = 2048;
const DNS_POLICIES = ['ClusterFirstWithHostNet', 'ClusterFirst', 'Default', 'None'];

/** kube's `validateDNSPolicy`. */
export function validateDNSPolicy(policy: string, field: string): FieldError[] {
  if (DNS_POLICIES.includes(policy)) return [];
  return policy === '' ? [fieldErr.required(field)] : [fieldErr.notSupported(field, policy, DNS_POLICIES)];
}

/** kube's `validatePodDNSConfig`. */
export function validatePodDNSConfig(dnsConfig: unknown, dnsPolicy: string, field: string, opts: PodValidationOptions): FieldError[] {
  const cfg = asObject(dnsConfig);
  if (dnsPolicy === 'None') {
    if (!cfg) return [fieldErr.required(field, 'must provide `dnsConfig` when `dnsPolicy` is None')];
    if (strings(cfg['nameservers']).length === 0) return [fieldErr.required(`${field}.nameservers`, 'must provide at least one DNS nameserver when `dnsPolicy` is None')];
  }
  if (!cfg) return [];
  const errs: FieldError[] = [];
  const nameservers = strings(cfg['nameservers']);
  if (nameservers.length > MAX_DNS_NAMESERVERS) {
    errs.push(fieldErr.invalid(`${field}.nameservers`, goStringSlice(nameservers), `must not have more than ${MAX_DNS_NAMESERVERS} nameservers`));
  }
  nameservers.forEach((ns, i) => {
    if (!isIPSloppy(ns)) errs.push(fieldErr.invalid(`${field}.nameservers[${i}]`, ns, 'must be valid IP address'));
  });
  const [maxPaths, maxChars] = opts.allowExpandedDNSConfig
    ? [MAX_DNS_SEARCH_PATHS_EXPANDED, MAX_DNS_SEARCH_LIST_CHARS_EXPANDED]
    : [MAX_DNS_SEARCH_PATHS_LEGACY, MAX_DNS_SEARCH_LIST_CHARS_LEGACY];
  const searches = strings(cfg['searches']);
  if (searches.length > maxPaths) errs.push(fieldErr.invalid(`${field}.searches`, goStringSlice(searches), `must not have more than ${maxPaths} search paths`));
  if (searches.join(' ').length > maxChars) {
    errs.push(fieldErr.invalid(`${field}.searches`, goStringSlice(searches), `must not have more than ${maxChars} characters (including spaces) in the search list`));
  }
  searches.forEach((search, i) => {
    // A trailing dot is fine.
    errs.push(...validateDNS1123Subdomain(search.endsWith('.') ? search.slice(0, -1) : search, `${field}.searches[${i}]`));
  });
  objects(cfg['options']).forEach((o, i) => {
    if (str(o['name']).length === 0) errs.push(fieldErr.required(`${field}.options[${i}]`, 'must not be empty'));
  });
  return errs;
}

/** kube's `ValidateHostAliases` (paths carry no index, as kube's do). */
export function validateHostAliases(hostAliases: unknown, field: string): FieldError[] {
  const errs: FieldError[] = [];
  for (const alias of objects(hostAliases)) {
    const ip = str(alias['ip']);
    if (!isIPSloppy(ip)) errs.push(fieldErr.invalid(`${field}.ip`, ip, 'must be valid IP address'));
    for (const hostname of strings(alias['hostnames'])) errs.push(...validateDNS1123Subdomain(hostname, `${field}.hostnames`));
  }
  return errs;
}
