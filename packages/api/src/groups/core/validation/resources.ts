/**
 * Resource names and quantities as kube 1.24 validates them (pkg/apis/core/validation
 * `validateResourceName` … `ValidateResourceRequirements`, and the name predicates of
 * pkg/apis/core/helper). Shared by Pods, LimitRanges, ResourceQuotas, Nodes, PVs and PVCs.
 *
 * Quantities arrive as decoded JSON (a string or a number, as kube's JSON decoder takes both);
 * ResourceList entries are read as kube validates them: after `SetDefaults_ResourceList` rounded
 * them up to milli-units. kube iterates Go maps in random order; plinth reports map entries in
 * sorted key order.
 */
import { type FieldError, GoLiteral, fieldErr } from '../../../field-errors.js';
import { Quantity, Scale, createQuantity, decodeQuantity, parseQuantity } from '../../../quantity.js';
import { isQualifiedName } from '../../../validation.js';
import { type JsonObject, child, key, objectAt } from './json-fields.js';

export const RESOURCE_CPU = 'cpu';
export const RESOURCE_MEMORY = 'memory';
export const RESOURCE_STORAGE = 'storage';
export const RESOURCE_EPHEMERAL_STORAGE = 'ephemeral-storage';
export const RESOURCE_PODS = 'pods';
export const HUGEPAGES_PREFIX = 'hugepages-';
export const REQUESTS_HUGEPAGES_PREFIX = 'requests.hugepages-';
export const DEFAULT_REQUESTS_PREFIX = 'requests.';
export const DEFAULT_NAMESPACE_PREFIX = 'kubernetes.io/';

const IS_NEGATIVE = 'must be greater than or equal to 0';
const IS_NOT_POSITIVE = 'must be greater than zero';
const IS_NOT_INTEGER = 'must be an integer';
const INVALID_QUOTA_RESOURCE = 'must be a standard resource for quota';

const STANDARD_CONTAINER_RESOURCES = new Set([RESOURCE_CPU, RESOURCE_MEMORY, RESOURCE_EPHEMERAL_STORAGE]);
const STANDARD_QUOTA_RESOURCES = new Set([
  'cpu',
  'memory',
  'ephemeral-storage',
  'requests.cpu',
  'requests.memory',
  'requests.storage',
  'requests.ephemeral-storage',
  'limits.cpu',
  'limits.memory',
  'limits.ephemeral-storage',
  'pods',
  'resourcequotas',
  'services',
  'replicationcontrollers',
  'secrets',
  'persistentvolumeclaims',
  'configmaps',
  'services.nodeports',
  'services.loadbalancers',
]);
const STANDARD_RESOURCES = new Set([...STANDARD_QUOTA_RESOURCES, 'storage']);
const INTEGER_RESOURCES = new Set([
  'pods',
  'resourcequotas',
  'services',
  'replicationcontrollers',
  'secrets',
  'configmaps',
  'persistentvolumeclaims',
  'services.nodeports',
  'services.loadbalancers',
]);
const STANDARD_LIMIT_RANGE_TYPES = new Set(['Pod', 'Container', 'PersistentVolumeClaim']);
const STANDARD_FINALIZERS = new Set(['kubernetes', 'orphan', 'foregroundDeletion']);

// ---------------------------------------------------------------------------------------------
// Name predicates (kube's pkg/apis/core/helper)
// ---------------------------------------------------------------------------------------------

export const isHugePageResourceName = (name: string): boolean => name.startsWith(HUGEPAGES_PREFIX);
export const isQuotaHugePageResourceName = (name: string): boolean => name.startsWith(HUGEPAGES_PREFIX) || name.startsWith(REQUESTS_HUGEPAGES_PREFIX);
export const isStandardContainerResourceName = (name: string): boolean => STANDARD_CONTAINER_RESOURCES.has(name) || isHugePageResourceName(name);
export const isStandardQuotaResourceName = (name: string): boolean => STANDARD_QUOTA_RESOURCES.has(name) || isQuotaHugePageResourceName(name);
export const isStandardResourceName = (name: string): boolean => STANDARD_RESOURCES.has(name) || isQuotaHugePageResourceName(name);
export const isStandardLimitRangeType = (name: string): boolean => STANDARD_LIMIT_RANGE_TYPES.has(name);
export const isStandardFinalizerName = (name: string): boolean => STANDARD_FINALIZERS.has(name);

/** Unprefixed names and names in `kubernetes.io/` are kube's own. */
export function isNativeResource(name: string): boolean {
  return !name.includes('/') || name.includes(DEFAULT_NAMESPACE_PREFIX);
}

/** A prefixed, non-native name that stays a qualified name once quota prefixes it with `requests.`. */
export function isExtendedResourceName(name: string): boolean {
  if (isNativeResource(name) || name.startsWith(DEFAULT_REQUESTS_PREFIX)) return false;
  return isQualifiedName(DEFAULT_REQUESTS_PREFIX + name).length === 0;
}

/** Native resources other than hugepages may be overcommitted (requests below limits). */
export function isOvercommitAllowed(name: string): boolean {
  return isNativeResource(name) && !isHugePageResourceName(name);
}

/** Resources counted in whole units (object counts, extended resources). */
export function isIntegerResourceName(name: string): boolean {
  return INTEGER_RESOURCES.has(name) || isExtendedResourceName(name);
}

/** The page size in a `hugepages-<size>` name, or undefined when the name is not one or the size does not parse. */
export function hugePageSizeFromResourceName(name: string): Quantity | undefined {
  if (!isHugePageResourceName(name)) return undefined;
  try {
    return parseQuantity(name.slice(HUGEPAGES_PREFIX.length));
  } catch {
    return undefined;
  }
}

/** Whether `quantity` is a whole number of the pages a `hugepages-<size>` name names. */
export function isHugePageResourceValueDivisible(name: string, quantity: Quantity): boolean {
  const pageSize = hugePageSizeFromResourceName(name);
  if (!pageSize || pageSize.sign() <= 0 || pageSize.milliValue() % 1000n !== 0n) return false;
  return quantity.value() % pageSize.value() === 0n;
}

// ---------------------------------------------------------------------------------------------
// Quantities
// ---------------------------------------------------------------------------------------------

/** A decoded JSON quantity (or a Quantity); undefined when it does not decode (the decoder reports that). */
export function asQuantity(value: unknown): Quantity | undefined {
  if (value instanceof Quantity) return value;
  try {
    return decodeQuantity(value);
  } catch {
    return undefined;
  }
}

/**
 * The entries of a decoded ResourceList as kube validates them: each decoded and rounded up to
 * milli-units (`SetDefaults_ResourceList`), in sorted name order. Entries that do not decode are
 * left out (the decoder refuses the body before validation).
 */
export function resourceListEntries(list: unknown): Array<[string, Quantity]> {
  if (typeof list !== 'object' || list === null || Array.isArray(list)) return [];
  const out: Array<[string, Quantity]> = [];
  for (const name of Object.keys(list).sort()) {
    const q = asQuantity((list as JsonObject)[name]);
    if (q) out.push([name, q.roundUp(Scale.Milli)]);
  }
  return out;
}

/** A quantity as kube's field errors print a `resource.Quantity` bad value (Go's `%#v`). */
export function quantityValue(q: Quantity): GoLiteral {
  return new GoLiteral(q.goSyntax());
}

const ZERO = createQuantity(0, 'DecimalSI');

/** kube's `ValidateNonnegativeQuantity`. */
export function validateNonnegativeQuantity(value: unknown, path: string): FieldError[] {
  const q = asQuantity(value);
  if (q && q.cmp(ZERO) < 0) return [fieldErr.invalid(path, q.toString(), IS_NEGATIVE)];
  return [];
}

/** kube's `ValidatePositiveQuantityValue`. */
export function validatePositiveQuantityValue(value: unknown, path: string): FieldError[] {
  const q = asQuantity(value);
  if (q && q.cmp(ZERO) <= 0) return [fieldErr.invalid(path, q.toString(), IS_NOT_POSITIVE)];
  return [];
}

/** kube's `ValidateResourceQuantityValue`: not negative, and whole for integer resources. */
export function validateResourceQuantityValue(resource: string, value: unknown, path: string): FieldError[] {
  const q = asQuantity(value);
  if (!q) return [];
  const errs = validateNonnegativeQuantity(q, path);
  // kube tests the milli-value (int64, so past 9.2e15 it wraps, as kube's does).
  if (isIntegerResourceName(resource) && q.milliValue() % 1000n !== 0n) errs.push(fieldErr.invalid(path, quantityValue(q), IS_NOT_INTEGER));
  return errs;
}

/** kube's `validateBasicResource`: the int64 value is not negative. */
export function validateBasicResource(value: unknown, path: string): FieldError[] {
  const q = asQuantity(value);
  if (q && q.value() < 0n) return [fieldErr.invalid(path, q.value(), 'must be a valid resource quantity')];
  return [];
}

// ---------------------------------------------------------------------------------------------
// Names
// ---------------------------------------------------------------------------------------------

/** kube's `validateResourceName`: a qualified name; standard unless it has a prefix. */
export function validateResourceName(value: string, path: string): FieldError[] {
  const errs = isQualifiedName(value).map((m) => fieldErr.invalid(path, value, m));
  if (errs.length > 0) return errs;
  if (!value.includes('/') && !isStandardResourceName(value)) return [fieldErr.invalid(path, value, 'must be a standard resource type or fully qualified')];
  return [];
}

/** kube's `validateContainerResourceName`. */
export function validateContainerResourceName(value: string, path: string): FieldError[] {
  const errs = validateResourceName(value, path);
  if (!value.includes('/')) {
    if (!isStandardContainerResourceName(value)) errs.push(fieldErr.invalid(path, value, 'must be a standard resource for containers'));
  } else if (!isNativeResource(value) && !isExtendedResourceName(value)) {
    errs.push(fieldErr.invalid(path, value, "doesn't follow extended resource name standard"));
  }
  return errs;
}

/** kube's `ValidateResourceQuotaResourceName`. */
export function validateResourceQuotaResourceName(value: string, path: string): FieldError[] {
  const errs = validateResourceName(value, path);
  if (!value.includes('/') && !isStandardQuotaResourceName(value)) errs.push(fieldErr.invalid(path, value, INVALID_QUOTA_RESOURCE));
  return errs;
}

/** kube's `validateLimitRangeTypeName`. */
export function validateLimitRangeTypeName(value: string, path: string): FieldError[] {
  const errs = isQualifiedName(value).map((m) => fieldErr.invalid(path, value, m));
  if (errs.length > 0) return errs;
  if (!value.includes('/') && !isStandardLimitRangeType(value)) return [fieldErr.invalid(path, value, 'must be a standard limit type or fully qualified')];
  return [];
}

/** kube's `validateLimitRangeResourceName`: container names for Pod/Container limits, any resource name otherwise. */
export function validateLimitRangeResourceName(limitType: string, value: string, path: string): FieldError[] {
  return limitType === 'Pod' || limitType === 'Container' ? validateContainerResourceName(value, path) : validateResourceName(value, path);
}

// ---------------------------------------------------------------------------------------------
// ResourceRequirements
// ---------------------------------------------------------------------------------------------

/** The part of kube's PodValidationOptions that resource requirements use. */
export interface ResourceRequirementsOptions {
  /** kube allows hugepages values that are not whole pages when the old object had them. */
  allowIndivisibleHugePagesValues?: boolean;
}

function hugePageValueErrors(name: string, q: Quantity, path: string, opts: ResourceRequirementsOptions): FieldError[] {
  if (opts.allowIndivisibleHugePagesValues || isHugePageResourceValueDivisible(name, q)) return [];
  return [fieldErr.invalid(path, q.toString(), `${q.toString()} is not positive integer multiple of ${name}`)];
}

/**
 * kube's `ValidateResourceRequirements` over a decoded `resources` object (`limits`, `requests`):
 * names, values, hugepages, requests ≤ limits (equal for resources that cannot be overcommitted).
 */
export function validateResourceRequirements(requirements: unknown, path: string, opts: ResourceRequirementsOptions = {}): FieldError[] {
  const errs: FieldError[] = [];
  const limPath = child(path, 'limits');
  const reqPath = child(path, 'requests');
  const limits = resourceListEntries(objectAt(requirements, 'limits'));
  const requests = resourceListEntries(objectAt(requirements, 'requests'));
  const limitByName = new Map(limits);
  let cpuOrMemory = false;
  let hugePages = false;
  for (const [name, q] of limits) {
    const p = key(limPath, name);
    errs.push(...validateContainerResourceName(name, p), ...validateResourceQuantityValue(name, q, p));
    if (isHugePageResourceName(name)) {
      hugePages = true;
      errs.push(...hugePageValueErrors(name, q, p, opts));
    }
    if (name === RESOURCE_CPU || name === RESOURCE_MEMORY) cpuOrMemory = true;
  }
  for (const [name, q] of requests) {
    const p = key(reqPath, name);
    errs.push(...validateContainerResourceName(name, p), ...validateResourceQuantityValue(name, q, p));
    const limit = limitByName.get(name);
    if (limit) {
      if (q.cmp(limit) !== 0 && !isOvercommitAllowed(name)) errs.push(fieldErr.invalid(reqPath, q.toString(), `must be equal to ${name} limit`));
      else if (q.cmp(limit) > 0) errs.push(fieldErr.invalid(reqPath, q.toString(), `must be less than or equal to ${name} limit`));
    } else if (!isOvercommitAllowed(name)) {
      errs.push(fieldErr.required(limPath, 'Limit must be set for non overcommitable resources'));
    }
    if (isHugePageResourceName(name)) {
      hugePages = true;
      errs.push(...hugePageValueErrors(name, q, p, opts));
    }
    if (name === RESOURCE_CPU || name === RESOURCE_MEMORY) cpuOrMemory = true;
  }
  if (!cpuOrMemory && hugePages) errs.push(fieldErr.forbidden(path, 'HugePages require cpu or memory'));
  return errs;
}
