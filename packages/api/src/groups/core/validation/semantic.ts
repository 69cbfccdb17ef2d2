/**
 * kube's `apiequality.Semantic.DeepEqual` over decoded JSON, and Go's `%#v` of the few structs
 * kube's messages print.
 */
import { stringifyJson } from '../../../number-codec.js';
import { asQuantity } from './resources.js';

function isZero(v: unknown): boolean {
  if (v === undefined || v === null || v === '' || v === 0 || v === false) return true;
  if (Array.isArray(v)) return v.length === 0;
  if (typeof v === 'object') return Object.keys(v).length === 0;
  return false;
}

/**
 * Equality as kube's Semantic.DeepEqual sees two decoded objects: nil and empty slices and maps
 * are equal, and (since JSON drops Go's zero values) an absent member equals a zero one.
 * Quantities compare by value when `quantities` says which members hold them.
 */
export function semanticEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (isZero(a) && isZero(b)) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((x, i) => semanticEqual(x, b[i]));
  }
  if (typeof a === 'object' && a !== null && typeof b === 'object' && b !== null) {
    const ao = a as Record<string, unknown>;
    const bo = b as Record<string, unknown>;
    for (const k of new Set([...Object.keys(ao), ...Object.keys(bo)])) if (!semanticEqual(ao[k], bo[k])) return false;
    return true;
  }
  if (typeof a === 'number' && typeof b === 'bigint') return BigInt(a) === b;
  if (typeof a === 'bigint' && typeof b === 'number') return a === BigInt(b);
  return false;
}

/** Semantic equality of two ResourceLists: the same names, with equal values (`Quantity.Cmp`). */
export function resourceListsEqual(a: unknown, b: unknown): boolean {
  const ao = (typeof a === 'object' && a !== null ? a : {}) as Record<string, unknown>;
  const bo = (typeof b === 'object' && b !== null ? b : {}) as Record<string, unknown>;
  const keys = Object.keys(ao);
  if (keys.length !== Object.keys(bo).length) return false;
  for (const k of keys) {
    if (!Object.hasOwn(bo, k)) return false;
    const x = asQuantity(ao[k]);
    const y = asQuantity(bo[k]);
    if (!x || !y ? !semanticEqual(ao[k], bo[k]) : x.cmp(y) !== 0) return false;
  }
  return true;
}

/**
 * The detail kube appends to "is immutable" messages, in place of go-cmp's diff (whose layout
 * go-cmp randomizes on purpose): one `-`/`+` line pair per member that changed.
 */
export function describeChange(old: unknown, next: unknown): string {
  const o = (typeof old === 'object' && old !== null ? old : {}) as Record<string, unknown>;
  const n = (typeof next === 'object' && next !== null ? next : {}) as Record<string, unknown>;
  const lines: string[] = [];
  for (const k of [...new Set([...Object.keys(o), ...Object.keys(n)])].sort()) {
    if (semanticEqual(o[k], n[k])) continue;
    if (o[k] !== undefined) lines.push(`- \t${k}: ${stringifyJson(o[k])}`);
    if (n[k] !== undefined) lines.push(`+ \t${k}: ${stringifyJson(n[k])}`);
  }
  return lines.join('\n');
}
