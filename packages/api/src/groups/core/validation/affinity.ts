/**
 * Node selectors and node/pod (anti-)affinity as kube 1.24 validates them (pkg/apis/core/validation
 * ValidateNodeSelector*, validateNodeAffinity, validatePodAffinity*, validatePodAntiAffinity).
 */
import { type FieldError, fieldErr } from '../../../field-errors.js';
import { isDNS1123Label, nameIsDNSSubdomain } from '../../../validation.js';
import { asObject, isSet, list, num, objects, str, strings } from './access.js';
import { validateLabelName, validateLabelSelector } from './basic.js';

/** kube's `ValidateNodeSelectorRequirement`. */
export function validateNodeSelectorRequirement(req: unknown, field: string): FieldError[] {
  const rq = asObject(req) ?? {};
  const errs: FieldError[] = [];
  const op = str(rq['operator']);
  const values = list(rq['values']);
  switch (op) {
    case 'In':
    case 'NotIn':
      if (values.length === 0) errs.push(fieldErr.required(`${field}.values`, "must be specified when `operator` is 'In' or 'NotIn'"));
      break;
    case 'Exists':
    case 'DoesNotExist':
      if (values.length > 0) errs.push(fieldErr.forbidden(`${field}.values`, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
      break;
    case 'Gt':
    case 'Lt':
      if (values.length !== 1) errs.push(fieldErr.required(`${field}.values`, "must be specified single value when `operator` is 'Lt' or 'Gt'"));
      break;
    default:
      errs.push(fieldErr.invalid(`${field}.operator`, op, 'not a valid selector operator'));
  }
  errs.push(...validateLabelName(str(rq['key']), `${field}.key`));
  return errs;
}

/** kube's `ValidateNodeFieldSelectorRequirement`: only `metadata.name` In/NotIn one node name. */
export function validateNodeFieldSelectorRequirement(req: unknown, field: string): FieldError[] {
  const rq = asObject(req) ?? {};
  const errs: FieldError[] = [];
  const op = str(rq['operator']);
  if (op === 'In' || op === 'NotIn') {
    if (list(rq['values']).length !== 1) errs.push(fieldErr.required(`${field}.values`, "must be only one value when `operator` is 'In' or 'NotIn' for node field selector"));
  } else {
    errs.push(fieldErr.invalid(`${field}.operator`, op, 'not a valid selector operator'));
  }
  const key = str(rq['key']);
  if (key !== 'metadata.name') errs.push(fieldErr.invalid(`${field}.key`, key, 'not a valid field selector key'));
  else {
    strings(rq['values']).forEach((v, i) => {
      for (const m of nameIsDNSSubdomain(v, false)) errs.push(fieldErr.invalid(`${field}.values[${i}]`, v, m));
    });
  }
  return errs;
}

/** kube's `ValidateNodeSelectorTerm`. */
export function validateNodeSelectorTerm(term: unknown, field: string): FieldError[] {
  const t = asObject(term) ?? {};
  const errs: FieldError[] = [];
  list(t['matchExpressions']).forEach((r, j) => errs.push(...validateNodeSelectorRequirement(r, `${field}.matchExpressions[${j}]`)));
  list(t['matchFields']).forEach((r, j) => errs.push(...validateNodeFieldSelectorRequirement(r, `${field}.matchFields[${j}]`)));
  return errs;
}

/** kube's `ValidateNodeSelector`: at least one term. */
export function validateNodeSelector(selector: unknown, field: string): FieldError[] {
  const terms = list(asObject(selector)?.['nodeSelectorTerms']);
  const termsPath = `${field}.nodeSelectorTerms`;
  if (terms.length === 0) return [fieldErr.required(termsPath, 'must have at least one node selector term')];
  return terms.flatMap((t, i) => validateNodeSelectorTerm(t, `${termsPath}[${i}]`));
}

/** kube's `ValidatePreferredSchedulingTerms`. */
export function validatePreferredSchedulingTerms(terms: unknown, field: string): FieldError[] {
  const errs: FieldError[] = [];
  objects(terms).forEach((term, i) => {
    const weight = num(term['weight']);
    if (weight <= 0 || weight > 100) errs.push(fieldErr.invalid(`${field}[${i}].weight`, term['weight'] ?? 0, 'must be in the range 1-100'));
    errs.push(...validateNodeSelectorTerm(term['preference'], `${field}[${i}].preference`));
  });
  return errs;
}

/** kube's `validatePodAffinityTerm` (namespace errors use the path `namespace`, as kube's do). */
function validatePodAffinityTerm(term: unknown, field: string): FieldError[] {
  const t = asObject(term) ?? {};
  const errs: FieldError[] = [
    ...validateLabelSelector(t['labelSelector'], `${field}.labelSelector`),
    ...validateLabelSelector(t['namespaceSelector'], `${field}.namespaceSelector`),
  ];
  for (const name of strings(t['namespaces'])) {
    for (const m of isDNS1123Label(name)) errs.push(fieldErr.invalid(`${field}.namespace`, name, m));
  }
  const topologyKey = str(t['topologyKey']);
  if (topologyKey.length === 0) errs.push(fieldErr.required(`${field}.topologyKey`, 'can not be empty'));
  errs.push(...validateLabelName(topologyKey, `${field}.topologyKey`));
  return errs;
}

function validatePodAffinityTerms(terms: unknown, field: string): FieldError[] {
  return list(terms).flatMap((t, i) => validatePodAffinityTerm(t, `${field}[${i}]`));
}

function validateWeightedPodAffinityTerms(terms: unknown, field: string): FieldError[] {
  const errs: FieldError[] = [];
  objects(terms).forEach((wt, j) => {
    const weight = num(wt['weight']);
    if (weight <= 0 || weight > 100) errs.push(fieldErr.invalid(`${field}[${j}].weight`, wt['weight'] ?? 0, 'must be in the range 1-100'));
    errs.push(...validatePodAffinityTerm(wt['podAffinityTerm'], `${field}[${j}].podAffinityTerm`));
  });
  return errs;
}

const REQUIRED = 'requiredDuringSchedulingIgnoredDuringExecution';
const PREFERRED = 'preferredDuringSchedulingIgnoredDuringExecution';

/** kube's `validateAffinity`: node affinity, pod affinity, pod anti-affinity. */
export function validateAffinity(affinity: unknown, field: string): FieldError[] {
  const a = asObject(affinity);
  if (!a) return [];
  const errs: FieldError[] = [];
  const na = asObject(a['nodeAffinity']);
  if (na) {
    const p = `${field}.nodeAffinity`;
    if (isSet(na[REQUIRED])) errs.push(...validateNodeSelector(na[REQUIRED], `${p}.${REQUIRED}`));
    if (list(na[PREFERRED]).length > 0) errs.push(...validatePreferredSchedulingTerms(na[PREFERRED], `${p}.${PREFERRED}`));
  }
  for (const kind of ['podAffinity', 'podAntiAffinity'] as const) {
    const pa = asObject(a[kind]);
    if (!pa) continue;
    const p = `${field}.${kind}`;
    if (isSet(pa[REQUIRED])) errs.push(...validatePodAffinityTerms(pa[REQUIRED], `${p}.${REQUIRED}`));
    if (isSet(pa[PREFERRED])) errs.push(...validateWeightedPodAffinityTerms(pa[PREFERRED], `${p}.${PREFERRED}`));
  }
  return errs;
}
