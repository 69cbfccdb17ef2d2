/**
 * The pod rules that read resource quantities: container resources and overhead (through
 * `validateResourceRequirements`), downward API divisors, emptyDir size limits, and whether an old
 * pod used hugepages that are not whole pages.
 */
import { type FieldError, fieldErr } from '../../../field-errors.js';
import { createQuantity } from '../../../quantity.js';
import { type JsonObject, asObject, objects } from './access.js';
import type { PodValidationOptions } from './pod-options.js';
import { asQuantity, isHugePageResourceName, isHugePageResourceValueDivisible, resourceListEntries, validateResourceRequirements } from './resources.js';

const ZERO = createQuantity(0, 'DecimalSI');
const CPU_DIVISORS = new Set(['1m', '1']);
const BYTE_DIVISORS = new Set(['1', '1k', '1M', '1G', '1T', '1P', '1E', '1Ki', '1Mi', '1Gi', '1Ti', '1Pi', '1Ei']);
const BYTE_DIVISORS_TEXT = '1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei';

/** kube's `validateContainerResourceDivisor` (the bad value kube prints is the resource's name). */
export function validateContainerResourceDivisor(resource: string, divisor: unknown, field: string): FieldError[] {
  const q = asQuantity(divisor);
  if (!q || q.cmp(ZERO) === 0) return [];
  const text = q.toString();
  const p = `${field}.divisor`;
  const errs: FieldError[] = [];
  switch (resource) {
    case 'limits.cpu':
    case 'requests.cpu':
      if (!CPU_DIVISORS.has(text)) errs.push(fieldErr.invalid(p, resource, "only divisor's values 1m and 1 are supported with the cpu resource"));
      break;
    case 'limits.memory':
    case 'requests.memory':
      if (!BYTE_DIVISORS.has(text)) errs.push(fieldErr.invalid(p, resource, `only divisor's values ${BYTE_DIVISORS_TEXT} are supported with the memory resource`));
      break;
    case 'limits.ephemeral-storage':
    case 'requests.ephemeral-storage':
      if (!BYTE_DIVISORS.has(text)) errs.push(fieldErr.invalid(p, resource, `only divisor's values ${BYTE_DIVISORS_TEXT} are supported with the local ephemeral storage resource`));
      break;
  }
  if ((resource.startsWith('requests.hugepages-') || resource.startsWith('limits.hugepages-')) && !BYTE_DIVISORS.has(text)) {
    errs.push(fieldErr.invalid(p, resource, `only divisor's values ${BYTE_DIVISORS_TEXT} are supported with the hugepages resource`));
  }
  return errs;
}

function hasIndivisibleHugePages(list: unknown): boolean {
  return resourceListEntries(list).some(([name, q]) => isHugePageResourceName(name) && !isHugePageResourceValueDivisible(name, q));
}

/** pkg/api/pod `usesIndivisibleHugePagesValues`: any container's limits/requests, or the overhead. */
export function usesIndivisibleHugePagesValues(spec: JsonObject): boolean {
  const containers = [...objects(spec['initContainers']), ...objects(spec['containers']), ...objects(spec['ephemeralContainers'])];
  for (const c of containers) {
    const r = asObject(c['resources']);
    if (r && (hasIndivisibleHugePages(r['limits']) || hasIndivisibleHugePages(r['requests']))) return true;
  }
  return hasIndivisibleHugePages(spec['overhead']);
}

/** kube's `ValidateResourceRequirements` of a container. */
export function validateContainerResources(resources: unknown, field: string, opts: PodValidationOptions): FieldError[] {
  return validateResourceRequirements(resources, field, { allowIndivisibleHugePagesValues: opts.allowIndivisibleHugePagesValues });
}

/** kube's `validateOverhead`: the overhead validated as a container's limits (so paths read `overhead.limits[...]`). */
export function validateOverhead(overhead: unknown, field: string, opts: PodValidationOptions): FieldError[] {
  return validateResourceRequirements({ limits: overhead }, field, { allowIndivisibleHugePagesValues: opts.allowIndivisibleHugePagesValues });
}

/** The emptyDir sizeLimit rule of `validateVolumeSource`: not negative. */
export function validateEmptyDirSizeLimit(sizeLimit: unknown, field: string): FieldError[] {
  const q = asQuantity(sizeLimit);
  if (sizeLimit === undefined || sizeLimit === null || !q) return [];
  return q.cmp(ZERO) < 0 ? [fieldErr.forbidden(field, 'SizeLimit field must be a valid resource quantity')] : [];
}
