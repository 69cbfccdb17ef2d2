/**
 * Tolerations as kube 1.24 validates them (pkg/apis/core/validation ValidateTolerations,
 * validateTaintEffect, validateOnlyAddedTolerations).
 */
import { type FieldError, GoLiteral, fieldErr } from '../../../field-errors.js';
import { isValidLabelValue } from '../../../validation.js';
import { type JsonObject, isSet, objects, str } from './access.js';
import { validateLabelName } from './node-selector.js';

const TAINT_EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];

/** kube's `validateTaintEffect` (NoScheduleNoAdmit is not accepted). */
export function validateTaintEffect(effect: string, allowEmpty: boolean, field: string): FieldError[] {
  if (!allowEmpty && effect.length === 0) return [fieldErr.required(field)];
  return TAINT_EFFECTS.includes(effect) ? [] : [fieldErr.notSupported(field, effect, TAINT_EFFECTS)];
}

/**
 * Go's `%#v` of a core.Toleration, which kube prints as the value of one cause. A set
 * tolerationSeconds prints as a pointer whose address differs on every run; plinth prints 0.
 */
function goToleration(t: JsonObject): GoLiteral {
  const seconds = isSet(t['tolerationSeconds']) ? '(*int64)(0x0)' : '(*int64)(nil)';
  const q = (k: string): string => JSON.stringify(str(t[k]));
  return new GoLiteral(`core.Toleration{Key:${q('key')}, Operator:${q('operator')}, Value:${q('value')}, Effect:${q('effect')}, TolerationSeconds:${seconds}}`);
}

/** kube's `ValidateTolerations`. */
export function validateTolerations(tolerations: unknown, field: string): FieldError[] {
  const errs: FieldError[] = [];
  objects(tolerations).forEach((t, i) => {
    const p = `${field}[${i}]`;
    const key = str(t['key']);
    const operator = str(t['operator']);
    const effect = str(t['effect']);
    const value = str(t['value']);
    if (key.length > 0) errs.push(...validateLabelName(key, `${p}.key`));
    if (key.length === 0 && operator !== 'Exists') {
      errs.push(fieldErr.invalid(`${p}.operator`, operator, 'operator must be Exists when `key` is empty, which means "match all values and all keys"'));
    }
    if (isSet(t['tolerationSeconds']) && effect !== 'NoExecute') {
      errs.push(fieldErr.invalid(`${p}.effect`, effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"));
    }
    switch (operator) {
      case 'Equal':
      case '': {
        const msgs = isValidLabelValue(value);
        if (msgs.length > 0) errs.push(fieldErr.invalid(`${p}.operator`, value, msgs.join(';')));
        break;
      }
      case 'Exists':
        if (value.length > 0) errs.push(fieldErr.invalid(`${p}.operator`, goToleration(t), "value must be empty when `operator` is 'Exists'"));
        break;
      default:
        errs.push(fieldErr.notSupported(`${p}.operator`, operator, ['Equal', 'Exists']));
    }
    if (effect.length > 0) errs.push(...validateTaintEffect(effect, true, `${p}.effect`));
  });
  return errs;
}

/** Tolerations equal but for tolerationSeconds (kube compares a clone with the new seconds). */
function sameTolerationButSeconds(a: JsonObject, b: JsonObject): boolean {
  return (
    str(a['key']) === str(b['key']) &&
    str(a['operator']) === str(b['operator']) &&
    str(a['value']) === str(b['value']) &&
    str(a['effect']) === str(b['effect'])
  );
}

/** kube's `validateOnlyAddedTolerations`: every old toleration is kept (its seconds may change). */
export function validateOnlyAddedTolerations(next: unknown, old: unknown, field: string): FieldError[] {
  const added = objects(next);
  for (const o of objects(old)) {
    if (!added.some((n) => sameTolerationButSeconds(o, n))) {
      return [fieldErr.forbidden(field, 'existing toleration can not be modified except its tolerationSeconds')];
    }
  }
  return validateTolerations(next, field);
}
