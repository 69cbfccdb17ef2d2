/**
 * What rbac.authorization.k8s.io/v1's four resources share: defaults (pkg/apis/rbac/v1/defaults.go),
 * validation (pkg/apis/rbac/validation) and the binding printer, as kube-apiserver 1.24 has them.
 */
import { type FieldError, fieldErr } from '../../field-errors.js';
import { age, ageColumn, col, fieldAt, nameColumn, type TableDefinition } from '../../tables.js';
import { type StoredObject, isPlainObject } from '../../types.js';
import { isDNS1123Subdomain, isQualifiedName, isValidLabelValue, nameIsPathSegment, validateLabels } from '../../validation.js';

export const RBAC_GROUP = 'rbac.authorization.k8s.io';

// ---------------------------------------------------------------------------------------------
// Helpers for reading decoded JSON defensively
// ---------------------------------------------------------------------------------------------

function rec(v: unknown): Record<string, unknown> {
  return isPlainObject(v) ? v : {};
}

function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

function list(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

// ---------------------------------------------------------------------------------------------
// Defaults
// ---------------------------------------------------------------------------------------------

/** kube's `SetDefaults_Subject`. An empty ServiceAccount apiGroup is dropped (Go's omitempty). */
export function defaultSubject(subject: Record<string, unknown>): void {
  if (str(subject['apiGroup']) !== '') return;
  switch (subject['kind']) {
    case 'User':
    case 'Group':
      subject['apiGroup'] = RBAC_GROUP;
      break;
    default:
      delete subject['apiGroup'];
  }
}

/** kube's `SetDefaults_{Cluster,}RoleBinding` plus `SetDefaults_Subject` on every subject. */
export function defaultBinding(obj: StoredObject): void {
  // RoleRef is a struct (not a pointer) in Go: it is always there to default.
  if (!isPlainObject(obj['roleRef'])) obj['roleRef'] = {};
  const roleRef = obj['roleRef'] as Record<string, unknown>;
  if (str(roleRef['apiGroup']) === '') roleRef['apiGroup'] = RBAC_GROUP;
  for (const sub of list(obj['subjects'])) if (isPlainObject(sub)) defaultSubject(sub);
}

// ---------------------------------------------------------------------------------------------
// Validation
// ---------------------------------------------------------------------------------------------

/** kube's `ValidatePolicyRule`. */
export function validatePolicyRule(rule: Record<string, unknown>, isNamespaced: boolean, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (list(rule['verbs']).length === 0) errs.push(fieldErr.required(`${path}.verbs`, 'verbs must contain at least one value'));

  const nonResourceURLs = list(rule['nonResourceURLs']);
  if (nonResourceURLs.length > 0) {
    if (isNamespaced) {
      errs.push(fieldErr.invalid(`${path}.nonResourceURLs`, nonResourceURLs, 'namespaced rules cannot apply to non-resource URLs'));
    }
    if (list(rule['apiGroups']).length > 0 || list(rule['resources']).length > 0 || list(rule['resourceNames']).length > 0) {
      errs.push(fieldErr.invalid(`${path}.nonResourceURLs`, nonResourceURLs, 'rules cannot apply to both regular resources and non-resource URLs'));
    }
    return errs;
  }

  if (list(rule['apiGroups']).length === 0) errs.push(fieldErr.required(`${path}.apiGroups`, 'resource rules must supply at least one api group'));
  if (list(rule['resources']).length === 0) errs.push(fieldErr.required(`${path}.resources`, 'resource rules must supply at least one resource'));
  return errs;
}

export function validateRules(obj: StoredObject, isNamespaced: boolean): FieldError[] {
  const errs: FieldError[] = [];
  list(obj['rules']).forEach((r, i) => errs.push(...validatePolicyRule(rec(r), isNamespaced, `rules[${i}]`)));
  return errs;
}

/** apimachinery's `ValidateLabelSelector`. */
export function validateLabelSelector(selector: Record<string, unknown>, path: string): FieldError[] {
  const errs: FieldError[] = [];
  errs.push(...validateLabels(selector['matchLabels'], `${path}.matchLabels`));
  list(selector['matchExpressions']).forEach((e, i) => {
    const expr = rec(e);
    const p = `${path}.matchExpressions[${i}]`;
    const op = str(expr['operator']);
    const values = list(expr['values']);
    switch (op) {
      case 'In':
      case 'NotIn':
        if (values.length === 0) errs.push(fieldErr.required(`${p}.values`, "must be specified when `operator` is 'In' or 'NotIn'"));
        break;
      case 'Exists':
      case 'DoesNotExist':
        if (values.length > 0) errs.push(fieldErr.forbidden(`${p}.values`, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
        break;
      default:
        errs.push(fieldErr.invalid(`${p}.operator`, op, 'not a valid selector operator'));
    }
    const key = str(expr['key']);
    for (const m of isQualifiedName(key)) errs.push(fieldErr.invalid(`${p}.key`, key, m));
  });
  return errs;
}

/** Whether `metav1.LabelSelectorAsSelector` would reject the selector (it also checks values). */
function selectorConversionFails(selector: Record<string, unknown>, path: string): boolean {
  if (validateLabelSelector(selector, path).length > 0) return true;
  return list(selector['matchExpressions']).some((e) => {
    const expr = rec(e);
    const op = str(expr['operator']);
    return (op === 'In' || op === 'NotIn') && list(expr['values']).some((v) => isValidLabelValue(str(v)).length > 0);
  });
}

/** The aggregationRule half of kube's `ValidateClusterRole`. */
export function validateAggregationRule(obj: StoredObject): FieldError[] {
  if (!isPlainObject(obj['aggregationRule'])) return [];
  const errs: FieldError[] = [];
  const selectors = list(obj['aggregationRule']['clusterRoleSelectors']);
  if (selectors.length === 0) {
    errs.push(fieldErr.required('aggregationRule.clusterRoleSelectors', 'at least one clusterRoleSelector required if aggregationRule is non-nil'));
  }
  selectors.forEach((sel, i) => {
    const p = `aggregationRule.clusterRoleSelectors[${i}]`;
    errs.push(...validateLabelSelector(rec(sel), p));
    // kube reports the (nil) converted selector as the value, which prints as "null".
    if (selectorConversionFails(rec(sel), p)) errs.push(fieldErr.invalid(p, 'null', 'invalid label selector.'));
  });
  return errs;
}

/** kube's `ValidateRoleBindingSubject`. */
export function validateRoleBindingSubject(subject: Record<string, unknown>, isNamespaced: boolean, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const name = str(subject['name']);
  const apiGroup = str(subject['apiGroup']);
  const kind = str(subject['kind']);
  if (name === '') errs.push(fieldErr.required(`${path}.name`));
  switch (kind) {
    case 'ServiceAccount':
      if (name !== '') for (const m of isDNS1123Subdomain(name)) errs.push(fieldErr.invalid(`${path}.name`, name, m));
      if (apiGroup !== '') errs.push(fieldErr.notSupported(`${path}.apiGroup`, apiGroup, ['']));
      if (!isNamespaced && str(subject['namespace']) === '') errs.push(fieldErr.required(`${path}.namespace`));
      break;
    case 'User':
    case 'Group':
      if (apiGroup !== RBAC_GROUP) errs.push(fieldErr.notSupported(`${path}.apiGroup`, apiGroup, [RBAC_GROUP]));
      break;
    default:
      errs.push(fieldErr.notSupported(`${path}.kind`, kind, ['ServiceAccount', 'User', 'Group']));
  }
  return errs;
}

/** The type-specific part of kube's `Validate{Cluster,}RoleBinding`. */
export function validateBinding(obj: StoredObject, isNamespaced: boolean): FieldError[] {
  const errs: FieldError[] = [];
  const roleRef = rec(obj['roleRef']);
  const apiGroup = str(roleRef['apiGroup']);
  if (apiGroup !== RBAC_GROUP) errs.push(fieldErr.notSupported('roleRef.apiGroup', apiGroup, [RBAC_GROUP]));
  const kind = str(roleRef['kind']);
  const kinds = isNamespaced ? ['Role', 'ClusterRole'] : ['ClusterRole'];
  if (!kinds.includes(kind)) errs.push(fieldErr.notSupported('roleRef.kind', kind, kinds));
  const name = str(roleRef['name']);
  if (name === '') errs.push(fieldErr.required('roleRef.name'));
  else for (const m of nameIsPathSegment(name, false)) errs.push(fieldErr.invalid('roleRef.name', name, m));
  list(obj['subjects']).forEach((sub, i) => errs.push(...validateRoleBindingSubject(rec(sub), isNamespaced, `subjects[${i}]`)));
  return errs;
}

/** kube's roleRef immutability check in `Validate{Cluster,}RoleBindingUpdate`. */
export function validateRoleRefUnchanged(obj: StoredObject, old: StoredObject): FieldError[] {
  const a = rec(obj['roleRef']);
  const b = rec(old['roleRef']);
  const same = (['apiGroup', 'kind', 'name'] as const).every((k) => str(a[k]) === str(b[k]));
  return same ? [] : [fieldErr.invalid('roleRef', obj['roleRef'] ?? {}, 'cannot change roleRef')];
}

// ---------------------------------------------------------------------------------------------
// Strategies and definitions
// ---------------------------------------------------------------------------------------------

/** kube's printers for (Cluster)RoleBindings: NAME, ROLE, AGE, and wide USERS, GROUPS, SERVICEACCOUNTS. */
export function bindingTable(): TableDefinition {
  return {
    columns: [
      nameColumn,
      col('Role', 'string', 'The role the binding grants: kind/name.'),
      ageColumn,
      col('Users', 'string', 'The users the binding names.', { priority: 1 }),
      col('Groups', 'string', 'The groups the binding names.', { priority: 1 }),
      col('ServiceAccounts', 'string', 'The service accounts the binding names, as namespace/name.', { priority: 1 }),
    ],
    cells: (obj, now) => {
      const subjects = (Array.isArray(obj['subjects']) ? obj['subjects'] : []) as Array<{ kind?: string; name?: string; namespace?: string }>;
      const of = (k: string): string => subjects.filter((s) => s.kind === k).map((s) => (k === 'ServiceAccount' ? `${s.namespace ?? ''}/${s.name ?? ''}` : s.name ?? '')).join(', ');
      return [obj.metadata.name ?? '', `${String(fieldAt(obj, 'roleRef', 'kind') ?? '')}/${String(fieldAt(obj, 'roleRef', 'name') ?? '')}`, age(obj, now), of('User'), of('Group'), of('ServiceAccount')];
    },
  };
}
