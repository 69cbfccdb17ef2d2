/**
 * Values in field errors printed the way kube's Go code prints them (`field.Error.ErrorBody`):
 * maps and slices as `%#v` (`map[string]interface {}{"name":"a"}`), nil as the string "null",
 * floats as `%v` (`1e+06`).
 */
import { GoLiteral } from '../field-errors.js';
import { isPlainObject } from '../types.js';

/** Go's `%v` of a float64: strconv's shortest 'g', an exponent when it is < -4 or >= 6 (`1e+06`). */
export function goFloat(n: number): string {
  if (!Number.isFinite(n)) return n > 0 ? '+Inf' : n < 0 ? '-Inf' : 'NaN';
  if (n === 0) return Object.is(n, -0) ? '-0' : '0';
  const exp = Math.floor(Math.log10(Math.abs(n)));
  if (exp < -4 || exp >= 6) {
    const [mant, e] = n.toExponential().split('e') as [string, string];
    const sign = e.startsWith('-') ? '-' : '+';
    const digits = e.replace(/^[+-]/, '').padStart(2, '0');
    return `${mant}e${sign}${digits}`;
  }
  return String(n);
}

/**
 * A JSON number as kube's decoder hands it over: integers as int64, others as float64 (an integer
 * beyond 2^53 that is a number came from a float literal: number-codec.ts keeps int64s as BigInts).
 */
export function goNumber(n: number | bigint): string {
  if (typeof n === 'bigint') return n.toString();
  return Number.isSafeInteger(n) ? String(n) : goFloat(n);
}

/** Go's `%#v` of a decoded JSON value (inside a map or slice). */
function goSharp(v: unknown): string {
  if (v === null || v === undefined) return 'interface {}(nil)';
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'number' || typeof v === 'bigint') return goNumber(v);
  if (typeof v === 'boolean') return String(v);
  if (Array.isArray(v)) return `[]interface {}{${v.map(goSharp).join(', ')}}`;
  if (isPlainObject(v)) {
    const keys = Object.keys(v).sort();
    return `map[string]interface {}{${keys.map((k) => `${JSON.stringify(k)}:${goSharp(v[k])}`).join(', ')}}`;
  }
  return String(v);
}

/**
 * A field error's bad value as kube prints it: strings quoted, numbers and booleans bare, nil as
 * "null" (quoted), maps and slices as `%#v`.
 */
export function goValue(v: unknown): unknown {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'number') return Number.isInteger(v) ? v : new GoLiteral(goFloat(v));
  if (typeof v === 'object') return new GoLiteral(goSharp(v));
  return v;
}
