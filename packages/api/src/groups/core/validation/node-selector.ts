/**
 * Node selectors as kube 1.24 validates them (`ValidateNodeSelector` and its terms and
 * requirements, `ValidateTopologySelectorTerm`, `validateVolumeNodeAffinity`). Shared by
 * PersistentVolume node affinity, pod node affinity and StorageClass topologies.
 */
import { type FieldError, fieldErr } from '../../../field-errors.js';
import { isDNS1123Subdomain, isQualifiedName } from '../../../validation.js';
import { arrayAt, child, index, isSet, objectAt, stringAt, stringsAt } from './json-fields.js';

/** kube's `ValidateLabelName`. */
export function validateLabelName(name: string, path: string): FieldError[] {
  return isQualifiedName(name).map((m) => fieldErr.invalid(path, name, m));
}

/** kube's `ValidateNodeSelectorRequirement` (a `matchExpressions` item). */
export function validateNodeSelectorRequirement(req: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const op = stringAt(req, 'operator');
  const values = arrayAt(req, 'values').length;
  switch (op) {
    case 'In':
    case 'NotIn':
      if (values === 0) errs.push(fieldErr.required(child(path, 'values'), "must be specified when `operator` is 'In' or 'NotIn'"));
      break;
    case 'Exists':
    case 'DoesNotExist':
      if (values > 0) errs.push(fieldErr.forbidden(child(path, 'values'), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
      break;
    case 'Gt':
    case 'Lt':
      if (values !== 1) errs.push(fieldErr.required(child(path, 'values'), "must be specified single value when `operator` is 'Lt' or 'Gt'"));
      break;
    default:
      errs.push(fieldErr.invalid(child(path, 'operator'), op, 'not a valid selector operator'));
  }
  return [...errs, ...validateLabelName(stringAt(req, 'key'), child(path, 'key'))];
}

/** kube's `ValidateNodeFieldSelectorRequirement` (a `matchFields` item: only `metadata.name`). */
export function validateNodeFieldSelectorRequirement(req: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const op = stringAt(req, 'operator');
  if (op === 'In' || op === 'NotIn') {
    if (arrayAt(req, 'values').length !== 1) {
      errs.push(fieldErr.required(child(path, 'values'), "must be only one value when `operator` is 'In' or 'NotIn' for node field selector"));
    }
  } else {
    errs.push(fieldErr.invalid(child(path, 'operator'), op, 'not a valid selector operator'));
  }
  const k = stringAt(req, 'key');
  if (k !== 'metadata.name') {
    errs.push(fieldErr.invalid(child(path, 'key'), k, 'not a valid field selector key'));
  } else {
    stringsAt(req, 'values').forEach((v, i) => {
      for (const m of isDNS1123Subdomain(v)) errs.push(fieldErr.invalid(index(child(path, 'values'), i), v, m));
    });
  }
  return errs;
}

/** kube's `ValidateNodeSelectorTerm`. */
export function validateNodeSelectorTerm(term: unknown, path: string): FieldError[] {
  return [
    ...arrayAt(term, 'matchExpressions').flatMap((r, j) => validateNodeSelectorRequirement(r, index(child(path, 'matchExpressions'), j))),
    ...arrayAt(term, 'matchFields').flatMap((r, j) => validateNodeFieldSelectorRequirement(r, index(child(path, 'matchFields'), j))),
  ];
}

/** kube's `ValidateNodeSelector`: at least one term, each valid. */
export function validateNodeSelector(selector: unknown, path: string): FieldError[] {
  const termsPath = child(path, 'nodeSelectorTerms');
  const terms = arrayAt(selector, 'nodeSelectorTerms');
  if (terms.length === 0) return [fieldErr.required(termsPath, 'must have at least one node selector term')];
  return terms.flatMap((t, i) => validateNodeSelectorTerm(t, index(termsPath, i)));
}

/** kube's `ValidateTopologySelectorTerm` (errors only): values present and unique, keys unique. */
export function validateTopologySelectorTerm(term: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const exprPath = child(path, 'matchLabelExpressions');
  const keys = new Set<string>();
  arrayAt(term, 'matchLabelExpressions').forEach((req, i) => {
    const idxPath = index(exprPath, i);
    const valuesPath = child(idxPath, 'values');
    const values = stringsAt(req, 'values');
    if (values.length === 0) errs.push(fieldErr.required(valuesPath, ''));
    const seen = new Set<string>();
    values.forEach((v, j) => {
      if (seen.has(v)) errs.push(fieldErr.duplicate(index(valuesPath, j), v));
      seen.add(v);
    });
    const k = stringAt(req, 'key');
    errs.push(...validateLabelName(k, child(idxPath, 'key')));
    if (keys.has(k)) errs.push(fieldErr.duplicate(child(idxPath, 'key'), k));
    keys.add(k);
  });
  return errs;
}

/**
 * kube's `validateVolumeNodeAffinity` on a PV spec's `nodeAffinity` member: whether it is set
 * (a local volume needs it), and its errors.
 */
export function validateVolumeNodeAffinity(spec: unknown, path: string): { specified: boolean; errors: FieldError[] } {
  if (!isSet(spec, 'nodeAffinity')) return { specified: false, errors: [] };
  const affinity = objectAt(spec, 'nodeAffinity');
  const required = objectAt(affinity, 'required');
  if (!required) return { specified: true, errors: [fieldErr.required(child(path, 'required'), 'must specify required node constraints')] };
  return { specified: true, errors: validateNodeSelector(required, child(path, 'required')) };
}
