/**
 * kube 1.24's flowcontrol validation (pkg/apis/flowcontrol/validation): FlowSchema and
 * PriorityLevelConfiguration specs and statuses, the reserved names `exempt` and `catch-all`, and
 * the mandatory objects, whose spec must stay the bootstrap's. Object metadata is the store's.
 */
import { isDeepStrictEqual } from 'node:util';
import { type FieldError, fieldErr, goStringSlice } from '../../field-errors.js';
import { type StoredObject, isPlainObject } from '../../types.js';
import { isDNS1123Label, isDNS1123Subdomain } from '../../validation.js';
import { FLOWCONTROL_NAME_CATCH_ALL, FLOWCONTROL_NAME_EXEMPT, MANDATORY_FLOW_SCHEMAS, MANDATORY_PRIORITY_LEVELS, canonicalSpec } from './bootstrap.js';

/** kube's FlowSchemaMaxMatchingPrecedence. */
export const FLOW_SCHEMA_MAX_MATCHING_PRECEDENCE = 10000;
const MAX_QUEUES = 10_000_000;
/** shufflesharding.MaxHashBits. */
const MAX_HASH_BITS = 60;
const SUPPORTED_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'proxy', 'update', 'watch'];
const NS_ERR_INTRO = "each member of this list must be '*' or a DNS-1123 label; ";

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj | undefined => (isPlainObject(v) ? v : undefined);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const num = (v: unknown): number => (typeof v === 'number' ? v : 0);
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.map(str) : []);
const hasWildcard = (list: string[]): boolean => list.includes('*');

function validateSubject(s: Obj, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const kind = str(s['kind']);
  const present = (k: string): boolean => s[k] !== undefined && s[k] !== null;
  const forbidUser = (): void => void (present('user') && errs.push(fieldErr.forbidden(`${path}.user`, "user is forbidden when subject kind is not 'User'")));
  const forbidGroup = (): void => void (present('group') && errs.push(fieldErr.forbidden(`${path}.group`, "group is forbidden when subject kind is not 'Group'")));
  const forbidSA = (): void => void (present('serviceAccount') && errs.push(fieldErr.forbidden(`${path}.serviceAccount`, "serviceAccount is forbidden when subject kind is not 'ServiceAccount'")));
  switch (kind) {
    case 'ServiceAccount': {
      const sa = obj(s['serviceAccount']);
      if (!sa) errs.push(fieldErr.required(`${path}.serviceAccount`, "serviceAccount is required when subject kind is 'ServiceAccount'"));
      else {
        const name = str(sa['name']);
        if (!name) errs.push(fieldErr.required(`${path}.serviceAccount.name`));
        else if (name !== '*') for (const m of isDNS1123Subdomain(name)) errs.push(fieldErr.invalid(`${path}.serviceAccount.name`, name, m));
        const ns = str(sa['namespace']);
        if (ns) for (const m of isDNS1123Label(ns)) errs.push(fieldErr.invalid(`${path}.serviceAccount.namespace`, ns, m));
        else errs.push(fieldErr.required(`${path}.serviceAccount.namespace`, 'must specify namespace for service account'));
      }
      forbidUser();
      forbidGroup();
      break;
    }
    case 'User': {
      const u = obj(s['user']);
      if (!u) errs.push(fieldErr.required(`${path}.user`, "user is required when subject kind is 'User'"));
      else if (!str(u['name'])) errs.push(fieldErr.required(`${path}.user.name`));
      forbidSA();
      forbidGroup();
      break;
    }
    case 'Group': {
      const g = obj(s['group']);
      if (!g) errs.push(fieldErr.required(`${path}.group`, "group is required when subject kind is 'Group'"));
      else if (!str(g['name'])) errs.push(fieldErr.required(`${path}.group.name`));
      forbidSA();
      forbidUser();
      break;
    }
    default:
      errs.push(fieldErr.notSupported(`${path}.kind`, kind, ['Group', 'ServiceAccount', 'User']));
  }
  return errs;
}

function validateVerbs(verbs: string[], path: string): FieldError[] {
  if (verbs.length === 0) return [fieldErr.required(`${path}.verbs`, 'verbs must contain at least one value')];
  if (hasWildcard(verbs)) return verbs.length > 1 ? [fieldErr.invalid(`${path}.verbs`, goStringSlice(verbs), "if '*' is present, must not specify other verbs")] : [];
  return verbs.every((v) => SUPPORTED_VERBS.includes(v)) ? [] : [fieldErr.notSupported(`${path}.verbs`, goStringSlice(verbs), SUPPORTED_VERBS)];
}

/** kube's ValidateNonResourceURLPath. */
function validateNonResourceURL(p: string, path: string): FieldError | undefined {
  if (p === '') return fieldErr.invalid(path, p, 'must not be empty');
  if (p === '/') return undefined;
  if (!p.startsWith('/')) return fieldErr.invalid(path, p, 'must start with slash');
  if (p.includes(' ')) return fieldErr.invalid(path, p, 'must not contain white-space');
  if (p.includes('//')) return fieldErr.invalid(path, p, 'must not contain double slash');
  const stars = p.split('*').length - 1;
  if (stars > 1 || (stars === 1 && !p.endsWith('/*'))) return fieldErr.invalid(path, p, 'wildcard can only do suffix matching');
  return undefined;
}

function validateResourceRule(r: Obj, path: string): FieldError[] {
  const errs = validateVerbs(strings(r['verbs']), path);
  const apiGroups = strings(r['apiGroups']);
  if (apiGroups.length === 0) errs.push(fieldErr.required(`${path}.apiGroups`, 'resource rules must supply at least one api group'));
  else if (apiGroups.length > 1 && hasWildcard(apiGroups)) errs.push(fieldErr.invalid(`${path}.apiGroups`, goStringSlice(apiGroups), "if '*' is present, must not specify other api groups"));
  const resources = strings(r['resources']);
  if (resources.length === 0) errs.push(fieldErr.required(`${path}.resources`, 'resource rules must supply at least one resource'));
  else if (resources.length > 1 && hasWildcard(resources)) errs.push(fieldErr.invalid(`${path}.resources`, goStringSlice(resources), "if '*' is present, must not specify other resources"));
  const namespaces = strings(r['namespaces']);
  if (namespaces.length === 0 && r['clusterScope'] !== true) errs.push(fieldErr.required(`${path}.namespaces`, 'resource rules that are not cluster scoped must supply at least one namespace'));
  else if (hasWildcard(namespaces)) {
    if (namespaces.length > 1) errs.push(fieldErr.invalid(`${path}.namespaces`, goStringSlice(namespaces), "if '*' is present, must not specify other namespaces"));
  } else namespaces.forEach((ns, i) => { for (const m of isDNS1123Label(ns)) errs.push(fieldErr.invalid(`${path}.namespaces[${i}]`, ns, NS_ERR_INTRO + m)); });
  return errs;
}

function validateNonResourceRule(r: Obj, path: string): FieldError[] {
  const errs = validateVerbs(strings(r['verbs']), path);
  const urls = strings(r['nonResourceURLs']);
  if (urls.length === 0) errs.push(fieldErr.required(`${path}.nonResourceURLs`, 'nonResourceURLs must contain at least one value'));
  else if (hasWildcard(urls)) {
    if (urls.length > 1) errs.push(fieldErr.invalid(`${path}.nonResourceURLs`, goStringSlice(urls), "if '*' is present, must not specify other non-resource URLs"));
  } else urls.forEach((u, i) => { const e = validateNonResourceURL(u, `${path}.nonResourceURLs[${i}]`); if (e) errs.push(e); });
  return errs;
}

function validateRule(rule: Obj, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const subjects = Array.isArray(rule['subjects']) ? rule['subjects'] : [];
  if (subjects.length > 0) subjects.forEach((s: unknown, i) => errs.push(...validateSubject(obj(s) ?? {}, `${path}.subjects[${i}]`)));
  else errs.push(fieldErr.required(`${path}.subjects`, 'subjects must contain at least one value'));
  const rr = Array.isArray(rule['resourceRules']) ? rule['resourceRules'] : [];
  const nr = Array.isArray(rule['nonResourceRules']) ? rule['nonResourceRules'] : [];
  if (rr.length === 0 && nr.length === 0) errs.push(fieldErr.required(path, 'at least one of resourceRules and nonResourceRules has to be non-empty'));
  rr.forEach((r: unknown, i) => errs.push(...validateResourceRule(obj(r) ?? {}, `${path}.resourceRules[${i}]`)));
  nr.forEach((r: unknown, i) => errs.push(...validateNonResourceRule(obj(r) ?? {}, `${path}.nonResourceRules[${i}]`)));
  return errs;
}

function validateConditions(status: unknown): FieldError[] {
  const errs: FieldError[] = [];
  const conditions = Array.isArray(obj(status)?.['conditions']) ? (obj(status)!['conditions'] as unknown[]) : [];
  const seen = new Set<string>();
  conditions.forEach((c: unknown, i) => {
    const type = str(obj(c)?.['type']);
    if (seen.has(type)) errs.push(fieldErr.duplicate(`status.conditions[${i}].type`, type));
    seen.add(type);
    if (!type) errs.push(fieldErr.required(`status.conditions[${i}].type`, 'must not be empty'));
  });
  return errs;
}

function mandatorySpecErrors(o: StoredObject, mandatory: readonly StoredObject[]): FieldError[] {
  const name = o.metadata.name ?? '';
  const m = mandatory.find((x) => x.metadata.name === name);
  if (!m || isDeepStrictEqual(canonicalSpec(o['spec']), canonicalSpec(m['spec']))) return [];
  return [fieldErr.invalid('spec', o['spec'], `spec of '${name}' must equal the fixed value`)];
}

/** kube's ValidateFlowSchema (spec, the mandatory check, status). */
export function validateFlowSchema(o: StoredObject): FieldError[] {
  const errs: FieldError[] = [];
  const name = o.metadata.name ?? '';
  const spec = obj(o['spec']) ?? {};
  const mp = num(spec['matchingPrecedence']);
  if (mp <= 0) errs.push(fieldErr.invalid('spec.matchingPrecedence', mp, 'must be a positive value'));
  if (mp > FLOW_SCHEMA_MAX_MATCHING_PRECEDENCE) errs.push(fieldErr.invalid('spec.matchingPrecedence', mp, `must not be greater than ${FLOW_SCHEMA_MAX_MATCHING_PRECEDENCE}`));
  if (mp === 1 && name !== FLOWCONTROL_NAME_EXEMPT) errs.push(fieldErr.invalid('spec.matchingPrecedence', mp, "only the schema named 'exempt' may have matchingPrecedence 1"));
  const dm = obj(spec['distinguisherMethod']);
  if (dm && dm['type'] !== 'ByUser' && dm['type'] !== 'ByNamespace') errs.push(fieldErr.notSupported('spec.distinguisherMethod.type', dm, ['ByNamespace', 'ByUser']));
  const pl = str(obj(spec['priorityLevelConfiguration'])?.['name']);
  if (pl) for (const m of isDNS1123Subdomain(pl)) errs.push(fieldErr.invalid('spec.priorityLevelConfiguration.name', pl, m));
  else errs.push(fieldErr.required('spec.priorityLevelConfiguration.name', 'must reference a priority level'));
  const rules = Array.isArray(spec['rules']) ? spec['rules'] : [];
  rules.forEach((r: unknown, i) => errs.push(...validateRule(obj(r) ?? {}, `spec.rules[${i}]`)));
  errs.push(...mandatorySpecErrors(o, MANDATORY_FLOW_SCHEMAS));
  errs.push(...validateConditions(o['status']));
  return errs;
}

/** shufflesharding.RequiredEntropyBits. */
const requiredEntropyBits = (deckSize: number, handSize: number): number => Math.ceil(Math.log2(deckSize) * handSize);

function validateQueuing(q: Obj, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const qll = num(q['queueLengthLimit']);
  const queues = num(q['queues']);
  const hand = num(q['handSize']);
  if (qll <= 0) errs.push(fieldErr.invalid(`${path}.queueLengthLimit`, qll, 'must be positive'));
  if (queues <= 0) errs.push(fieldErr.invalid(`${path}.queues`, queues, 'must be positive'));
  else if (queues > MAX_QUEUES) errs.push(fieldErr.invalid(`${path}.queues`, queues, `must not be greater than ${MAX_QUEUES}`));
  if (hand <= 0) errs.push(fieldErr.invalid(`${path}.handSize`, hand, 'must be positive'));
  else if (hand > queues) errs.push(fieldErr.invalid(`${path}.handSize`, hand, `should not be greater than queues (${queues})`));
  else if (requiredEntropyBits(queues, hand) > MAX_HASH_BITS) {
    errs.push(fieldErr.invalid(`${path}.handSize`, hand, `required entropy bits of deckSize ${queues} and handSize ${hand} should not be greater than ${MAX_HASH_BITS}`));
  }
  return errs;
}

/** kube's ValidatePriorityLevelConfiguration (spec, the mandatory check, status). */
export function validatePriorityLevelConfiguration(o: StoredObject): FieldError[] {
  const errs: FieldError[] = [];
  const name = o.metadata.name ?? '';
  const spec = obj(o['spec']) ?? {};
  const type = str(spec['type']);
  if ((name === FLOWCONTROL_NAME_EXEMPT) !== (type === 'Exempt')) errs.push(fieldErr.invalid('spec.type', type, "type must be 'Exempt' if and only if name is 'exempt'"));
  const limited = obj(spec['limited']);
  if (type === 'Exempt') {
    if (limited) errs.push(fieldErr.forbidden('spec.limited', 'must be nil if the type is not Limited'));
  } else if (type === 'Limited') {
    if (!limited) errs.push(fieldErr.required('spec.limited', 'must not be empty when type is Limited'));
    else {
      const acs = num(limited['assuredConcurrencyShares']);
      if (acs <= 0) errs.push(fieldErr.invalid('spec.limited.assuredConcurrencyShares', acs, 'must be positive'));
      const lr = obj(limited['limitResponse']) ?? {};
      const lrType = str(lr['type']);
      const queuing = obj(lr['queuing']);
      if (lrType === 'Reject') {
        if (queuing) errs.push(fieldErr.forbidden('spec.limited.limitResponse.queuing', 'must be nil if limited.limitResponse.type is not Limited'));
      } else if (lrType === 'Queue') {
        if (!queuing) errs.push(fieldErr.required('spec.limited.limitResponse.queuing', 'must not be empty if limited.limitResponse.type is Limited'));
        else errs.push(...validateQueuing(queuing, 'spec.limited.limitResponse.queuing'));
      } else errs.push(fieldErr.notSupported('spec.limited.limitResponse.type', lrType, ['Queue', 'Reject']));
    }
  } else errs.push(fieldErr.notSupported('spec.type', type, ['Exempt', 'Limited']));
  errs.push(...mandatorySpecErrors(o, MANDATORY_PRIORITY_LEVELS));
  errs.push(...validateConditions(o['status']));
  return errs;
}

/** Whether `name` is a mandatory object's (kube keeps those whatever users do). */
export const isMandatoryFlowcontrolName = (name: string): boolean => name === FLOWCONTROL_NAME_EXEMPT || name === FLOWCONTROL_NAME_CATCH_ALL;
