/**
 * apimachinery's `ValidateLabelSelector` (meta/v1/validation) over a decoded selector, for the
 * core types that carry one (a PVC's `spec.selector`).
 */
import { type FieldError, fieldErr } from '../../../field-errors.js';
import { validateLabels } from '../../../validation.js';
import { arrayAt, child, index, memberAt, stringAt } from './json-fields.js';
import { validateLabelName } from './node-selector.js';

/** kube's `ValidateLabelSelectorRequirement`. */
export function validateLabelSelectorRequirement(req: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const op = stringAt(req, 'operator');
  const values = arrayAt(req, 'values').length;
  if (op === 'In' || op === 'NotIn') {
    if (values === 0) errs.push(fieldErr.required(child(path, 'values'), "must be specified when `operator` is 'In' or 'NotIn'"));
  } else if (op === 'Exists' || op === 'DoesNotExist') {
    if (values > 0) errs.push(fieldErr.forbidden(child(path, 'values'), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
  } else {
    errs.push(fieldErr.invalid(child(path, 'operator'), op, 'not a valid selector operator'));
  }
  return [...errs, ...validateLabelName(stringAt(req, 'key'), child(path, 'key'))];
}

/** kube's `ValidateLabelSelector` (nothing to check when the selector is absent). */
export function validateLabelSelector(selector: unknown, path: string): FieldError[] {
  if (selector === undefined || selector === null) return [];
  return [
    ...validateLabels(memberAt(selector, 'matchLabels'), child(path, 'matchLabels')),
    ...arrayAt(selector, 'matchExpressions').flatMap((r, i) => validateLabelSelectorRequirement(r, index(child(path, 'matchExpressions'), i))),
  ];
}
