/**
 * Node and pod (anti-)affinity as kube 1.24 validates them (pkg/apis/core/validation
 * validateNodeAffinity, ValidatePreferredSchedulingTerms, validatePodAffinity*,
 * validatePodAntiAffinity); node selectors are node-selector.ts's.
 */
import { type FieldError, fieldErr } from '../../../field-errors.js';
import { isDNS1123Label } from '../../../validation.js';
import { asObject, isSet, list, num, objects, str, strings } from './access.js';
import { validateLabelSelector } from './label-selector.js';
import { validateLabelName, validateNodeSelector, validateNodeSelectorTerm } from './node-selector.js';

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
