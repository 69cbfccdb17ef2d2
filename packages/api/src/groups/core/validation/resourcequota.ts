/**
 * ResourceQuota validation as kube 1.24 has it (`ValidateResourceQuota`,
 * `ValidateResourceQuotaUpdate`, `ValidateResourceQuotaStatusUpdate`; object metadata aside: the
 * store validates it, with a DNS-subdomain name).
 *
 * kube's quota strategy validates an update with `ValidateResourceQuotaUpdate` alone (it re-checks
 * the spec, not the status), so a strategy built on these runs `validateResourceQuotaUpdate`
 * without `validateResourceQuota` on update.
 */
import { type FieldError, GoLiteral, fieldErr } from '../../../field-errors.js';
import { type JsonObject, arrayAt, child, isSet, key, objectAt, stringAt, stringsAt } from './json-fields.js';
import { isStandardQuotaResourceName, resourceListEntries, validateResourceQuantityValue, validateResourceQuotaResourceName } from './resources.js';

const STANDARD_SCOPES = new Set(['Terminating', 'NotTerminating', 'BestEffort', 'NotBestEffort', 'PriorityClass', 'CrossNamespacePodAffinity']);
const POD_OBJECT_COUNT = new Set(['pods']);
const POD_COMPUTE = new Set(['cpu', 'memory', 'limits.cpu', 'limits.memory', 'requests.cpu', 'requests.memory']);
const CONFLICTING_SCOPES: Array<[string, string]> = [
  ['BestEffort', 'NotBestEffort'],
  ['Terminating', 'NotTerminating'],
];
const EXISTS_ONLY_SCOPES = new Set(['BestEffort', 'NotBestEffort', 'Terminating', 'NotTerminating', 'CrossNamespacePodAffinity']);

/** kube's `helper.IsStandardResourceQuotaScope`. */
export function isStandardResourceQuotaScope(scope: string): boolean {
  return STANDARD_SCOPES.has(scope);
}

/** kube's `helper.IsResourceQuotaScopeValidForResource`. */
export function isResourceQuotaScopeValidForResource(scope: string, resource: string): boolean {
  switch (scope) {
    case 'Terminating':
    case 'NotTerminating':
    case 'NotBestEffort':
    case 'PriorityClass':
    case 'CrossNamespacePodAffinity':
      return POD_OBJECT_COUNT.has(resource) || POD_COMPUTE.has(resource);
    case 'BestEffort':
      return POD_OBJECT_COUNT.has(resource);
    default:
      return true;
  }
}

/** Go's `%#v` of a string slice member of a named element type (`[]core.ResourceQuotaScope(nil)` when absent). */
function goSliceOf(o: unknown, member: string, elemType: string): GoLiteral {
  if (!isSet(o, member)) return new GoLiteral(`[]${elemType}(nil)`);
  return new GoLiteral(`[]${elemType}{${stringsAt(o, member).map((s) => JSON.stringify(s)).join(', ')}}`);
}

/** Go's `%#v` of a `core.ScopeSelector`, which kube prints as a bad value. */
function goScopeSelector(selector: JsonObject | undefined): GoLiteral {
  const T = 'core.ScopedResourceSelectorRequirement';
  const exprs = isSet(selector, 'matchExpressions')
    ? `[]${T}{${arrayAt(selector, 'matchExpressions')
        .map((r) => `${T}{ScopeName:${JSON.stringify(stringAt(r, 'scopeName'))}, Operator:${JSON.stringify(stringAt(r, 'operator'))}, Values:${goSliceOf(r, 'values', 'string').text}}`)
        .join(', ')}}`
    : `[]${T}(nil)`;
  return new GoLiteral(`core.ScopeSelector{MatchExpressions:${exprs}}`);
}

/** Names and values of one ResourceList of a quota (`spec.hard`, `status.hard`, `status.used`). */
function validateQuotaList(list: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  for (const [name, q] of resourceListEntries(list)) {
    const p = key(path, name);
    errs.push(...validateResourceQuotaResourceName(name, p), ...validateResourceQuantityValue(name, q, p));
  }
  return errs;
}

function hardNames(spec: JsonObject | undefined): string[] {
  const hard = objectAt(spec, 'hard');
  return hard ? Object.keys(hard).sort() : [];
}

function conflictingScopes(scopes: Set<string>): boolean[] {
  return CONFLICTING_SCOPES.map(([a, b]) => scopes.has(a) && scopes.has(b));
}

/** kube's `validateResourceQuotaScopes`. */
function validateScopes(spec: JsonObject | undefined): FieldError[] {
  const scopes = stringsAt(spec, 'scopes');
  if (scopes.length === 0) return [];
  const errs: FieldError[] = [];
  const path = 'spec.scopes';
  const hard = hardNames(spec);
  for (const scope of scopes) {
    if (!isStandardResourceQuotaScope(scope)) errs.push(fieldErr.invalid(path, goSliceOf(spec, 'scopes', 'core.ResourceQuotaScope'), 'unsupported scope'));
    for (const k of hard) {
      if (isStandardQuotaResourceName(k) && !isResourceQuotaScopeValidForResource(scope, k)) {
        errs.push(fieldErr.invalid(path, goSliceOf(spec, 'scopes', 'core.ResourceQuotaScope'), 'unsupported scope applied to resource'));
      }
    }
  }
  for (const conflict of conflictingScopes(new Set(scopes))) {
    if (conflict) errs.push(fieldErr.invalid(path, goSliceOf(spec, 'scopes', 'core.ResourceQuotaScope'), 'conflicting scopes'));
  }
  return errs;
}

/** kube's `validateScopeSelector` / `validateScopedResourceSelectorRequirement`. */
function validateScopeSelector(spec: JsonObject | undefined): FieldError[] {
  const selector = objectAt(spec, 'scopeSelector');
  if (!selector) return [];
  const errs: FieldError[] = [];
  const path = 'spec.scopeSelector.matchExpressions';
  const hard = hardNames(spec);
  const seen = new Set<string>();
  for (const req of arrayAt(selector, 'matchExpressions')) {
    const scope = stringAt(req, 'scopeName');
    const op = stringAt(req, 'operator');
    if (!isStandardResourceQuotaScope(scope)) errs.push(fieldErr.invalid(child(path, 'scopeName'), scope, 'unsupported scope'));
    for (const k of hard) {
      if (isStandardQuotaResourceName(k) && !isResourceQuotaScopeValidForResource(scope, k)) {
        errs.push(fieldErr.invalid(path, goScopeSelector(selector), 'unsupported scope applied to resource'));
      }
    }
    if (EXISTS_ONLY_SCOPES.has(scope) && op !== 'Exists') {
      errs.push(
        fieldErr.invalid(
          child(path, 'operator'),
          op,
          "must be 'Exist' when scope is any of ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity",
        ),
      );
    }
    const values = stringsAt(req, 'values');
    if (op === 'In' || op === 'NotIn') {
      if (values.length === 0) errs.push(fieldErr.required(child(path, 'values'), "must be at least one value when `operator` is 'In' or 'NotIn' for scope selector"));
    } else if (op === 'Exists' || op === 'DoesNotExist') {
      if (values.length !== 0) {
        errs.push(fieldErr.invalid(child(path, 'values'), goSliceOf(req, 'values', 'string'), "must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope selector"));
      }
    } else {
      errs.push(fieldErr.invalid(child(path, 'operator'), op, 'not a valid selector operator'));
    }
    seen.add(scope);
  }
  for (const conflict of conflictingScopes(seen)) {
    // kube reports the spec's scopes here, not the selector's.
    if (conflict) errs.push(fieldErr.invalid(path, goSliceOf(spec, 'scopes', 'core.ResourceQuotaScope'), 'conflicting scopes'));
  }
  return errs;
}

/** kube's `ValidateResourceQuotaSpec`. */
export function validateResourceQuotaSpec(obj: JsonObject): FieldError[] {
  const spec = objectAt(obj, 'spec');
  return [...validateQuotaList(objectAt(spec, 'hard'), 'spec.hard'), ...validateScopes(spec), ...validateScopeSelector(spec)];
}

/** kube's `ValidateResourceQuotaStatus`. */
export function validateResourceQuotaStatus(obj: JsonObject): FieldError[] {
  const status = objectAt(obj, 'status');
  return [...validateQuotaList(objectAt(status, 'hard'), 'status.hard'), ...validateQuotaList(objectAt(status, 'used'), 'status.used')];
}

/** kube's `ValidateResourceQuota` (spec and status; metadata aside). */
export function validateResourceQuota(obj: JsonObject): FieldError[] {
  return [...validateResourceQuotaSpec(obj), ...validateResourceQuotaStatus(obj)];
}

/** kube's `ValidateResourceQuotaUpdate` (metadata aside): the spec again, and scopes that do not change. */
export function validateResourceQuotaUpdate(obj: JsonObject, old: JsonObject): FieldError[] {
  const errs = validateResourceQuotaSpec(obj);
  const spec = objectAt(obj, 'spec');
  const next = new Set(stringsAt(spec, 'scopes'));
  const prev = new Set(stringsAt(objectAt(old, 'spec'), 'scopes'));
  if (next.size !== prev.size || [...next].some((s) => !prev.has(s))) {
    errs.push(fieldErr.invalid('spec.scopes', goSliceOf(spec, 'scopes', 'core.ResourceQuotaScope'), 'field is immutable'));
  }
  return errs;
}

/** kube's `ValidateResourceQuotaStatusUpdate` (metadata aside): a resourceVersion, and valid status lists. */
export function validateResourceQuotaStatusUpdate(obj: JsonObject, _old: JsonObject): FieldError[] {
  const errs: FieldError[] = [];
  if (!stringAt(objectAt(obj, 'metadata'), 'resourceVersion')) errs.push(fieldErr.required('resourceVersion', ''));
  return [...errs, ...validateResourceQuotaStatus(obj)];
}
