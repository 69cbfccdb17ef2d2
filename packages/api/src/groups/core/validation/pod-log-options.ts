/** The options of pods/log as kube 1.24 validates them (ValidatePodLogOptions). */
import { type FieldError, fieldErr } from '../../../field-errors.js';
import { isSet, num } from './access.js';
import { IS_NEGATIVE_MSG } from './basic.js';

/** PodLogOptions as decoded from the query (only the members kube checks). */
export interface PodLogOptionsInput {
  tailLines?: number | bigint | null;
  limitBytes?: number | bigint | null;
  sinceSeconds?: number | bigint | null;
  sinceTime?: string | null;
}

/** kube's `ValidatePodLogOptions` (paths are the option names; the exclusive pair's path is empty). */
export function validatePodLogOptions(opts: PodLogOptionsInput): FieldError[] {
  const errs: FieldError[] = [];
  if (isSet(opts.tailLines) && num(opts.tailLines) < 0) errs.push(fieldErr.invalid('tailLines', opts.tailLines, IS_NEGATIVE_MSG));
  if (isSet(opts.limitBytes) && num(opts.limitBytes) < 1) errs.push(fieldErr.invalid('limitBytes', opts.limitBytes, 'must be greater than 0'));
  if (isSet(opts.sinceSeconds) && isSet(opts.sinceTime)) errs.push(fieldErr.forbidden('', 'at most one of `sinceTime` or `sinceSeconds` may be specified'));
  else if (isSet(opts.sinceSeconds) && num(opts.sinceSeconds) < 1) errs.push(fieldErr.invalid('sinceSeconds', opts.sinceSeconds, 'must be greater than 0'));
  return errs;
}
