/**
 * Binding validation (kube's `ValidatePodBinding`, run by the pods/binding and bindings storage,
 * which answers its errors as an aggregate, not a 422: see the caller).
 */
import { type FieldError, fieldErr } from '../../../field-errors.js';
import type { Binding } from '../service-types.js';

/** kube's `ValidatePodBinding`: target.kind empty or Node, target.name set. */
export function validateBinding(binding: Binding): FieldError[] {
  const errs: FieldError[] = [];
  const kind = binding.target?.kind ?? '';
  if (kind !== '' && kind !== 'Node') errs.push(fieldErr.notSupported('target.kind', kind, ['Node', '<empty>']));
  if ((binding.target?.name ?? '') === '') errs.push(fieldErr.required('target.name'));
  return errs;
}
