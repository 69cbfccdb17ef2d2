/**
 * LimitRange validation as kube 1.24's `ValidateLimitRange` has it (object metadata aside: the
 * store validates it, with a DNS-subdomain name).
 */
import { type FieldError, fieldErr } from '../../../field-errors.js';
import { type Quantity, MAX_MILLI_VALUE, createQuantity } from '../../../quantity.js';
import { goFormatFixed } from './go-format.js';
import { type JsonObject, arrayAt, child, index, key, mapSize, objectAt, stringAt } from './json-fields.js';
import { isOvercommitAllowed, quantityValue, resourceListEntries, validateLimitRangeResourceName, validateLimitRangeTypeName } from './resources.js';

const ONE = createQuantity(1, 'DecimalSI');

/** kube's `ValidateLimitRange` (spec part): types, resource names and the min ≤ default ≤ max orderings. */
export function validateLimitRange(obj: JsonObject): FieldError[] {
  const errs: FieldError[] = [];
  const limitsPath = 'spec.limits';
  const seenTypes = new Set<string>();
  arrayAt(objectAt(obj, 'spec'), 'limits').forEach((limit, i) => {
    const idxPath = index(limitsPath, i);
    const type = stringAt(limit, 'type');
    errs.push(...validateLimitRangeTypeName(type, child(idxPath, 'type')));
    if (seenTypes.has(type)) errs.push(fieldErr.duplicate(child(idxPath, 'type'), type));
    seenTypes.add(type);

    const lists = new Map<string, Map<string, Quantity>>();
    const keys = new Set<string>();
    const readList = (field: string): void => {
      const entries = resourceListEntries(objectAt(limit, field));
      for (const [k] of entries) errs.push(...validateLimitRangeResourceName(type, k, key(child(idxPath, field), k)));
      for (const [k] of entries) keys.add(k);
      lists.set(field, new Map(entries));
    };
    readList('max');
    readList('min');
    if (type === 'Pod') {
      if (mapSize(limit, 'default') > 0) errs.push(fieldErr.forbidden(child(idxPath, 'default'), "may not be specified when `type` is 'Pod'"));
      if (mapSize(limit, 'defaultRequest') > 0) errs.push(fieldErr.forbidden(child(idxPath, 'defaultRequest'), "may not be specified when `type` is 'Pod'"));
    } else {
      readList('default');
      readList('defaultRequest');
    }
    if (type === 'PersistentVolumeClaim') {
      const min = objectAt(limit, 'min');
      const max = objectAt(limit, 'max');
      const hasStorage = (m: JsonObject | undefined): boolean => m !== undefined && Object.hasOwn(m, 'storage');
      if (!hasStorage(min) && !hasStorage(max)) {
        errs.push(fieldErr.required(child(idxPath, 'limits'), 'either minimum or maximum storage value is required, but neither was provided'));
      }
    }
    readList('maxLimitRequestRatio');
    for (const k of [...keys].sort()) errs.push(...compareLimits(k, idxPath, lists));
  });
  return errs;
}

/** The orderings kube checks between one resource's min, max, default, defaultRequest and ratio. */
function compareLimits(k: string, idxPath: string, lists: Map<string, Map<string, Quantity>>): FieldError[] {
  const errs: FieldError[] = [];
  const get = (field: string): Quantity | undefined => lists.get(field)?.get(k);
  const min = get('min');
  const max = get('max');
  const def = get('default');
  const defReq = get('defaultRequest');
  const ratio = get('maxLimitRequestRatio');
  const at = (field: string): string => key(child(idxPath, field), k);

  if (min && max && min.cmp(max) > 0) errs.push(fieldErr.invalid(at('min'), quantityValue(min), `min value ${min} is greater than max value ${max}`));
  if (defReq && min && min.cmp(defReq) > 0) {
    errs.push(fieldErr.invalid(at('defaultRequest'), quantityValue(defReq), `min value ${min} is greater than default request value ${defReq}`));
  }
  if (defReq && max && defReq.cmp(max) > 0) {
    errs.push(fieldErr.invalid(at('defaultRequest'), quantityValue(defReq), `default request value ${defReq} is greater than max value ${max}`));
  }
  if (defReq && def && defReq.cmp(def) > 0) {
    errs.push(fieldErr.invalid(at('defaultRequest'), quantityValue(defReq), `default request value ${defReq} is greater than default limit value ${def}`));
  }
  if (def && min && min.cmp(def) > 0) errs.push(fieldErr.invalid(at('default'), quantityValue(min), `min value ${min} is greater than default value ${def}`));
  if (def && max && def.cmp(max) > 0) errs.push(fieldErr.invalid(at('default'), quantityValue(max), `default value ${def} is greater than max value ${max}`));
  if (ratio && ratio.cmp(ONE) < 0) errs.push(fieldErr.invalid(at('maxLimitRequestRatio'), quantityValue(ratio), `ratio ${ratio} is less than 1`));
  if (ratio && min && max) {
    // kube's arithmetic: float64s of int64 (milli-)values.
    let ratioValue = Number(ratio.value());
    let minValue = min.value();
    let maxValue = max.value();
    if (ratio.value() < MAX_MILLI_VALUE && minValue < MAX_MILLI_VALUE && maxValue < MAX_MILLI_VALUE) {
      ratioValue = Number(ratio.milliValue()) / 1000;
      minValue = min.milliValue();
      maxValue = max.milliValue();
    }
    const limit = Number(maxValue) / Number(minValue);
    if (ratioValue > limit) {
      errs.push(fieldErr.invalid(at('maxLimitRequestRatio'), quantityValue(ratio), `ratio ${ratio} is greater than max/min = ${goFormatFixed(limit)}`));
    }
  }
  if (!isOvercommitAllowed(k) && def && defReq && def.cmp(defReq) !== 0) {
    errs.push(fieldErr.invalid(at('defaultRequest'), quantityValue(defReq), `default value ${def} must equal to defaultRequest value ${defReq} in ${k}`));
  }
  return errs;
}
