/**
 * kube's `apiequality.Semantic.DeepEqual` over decoded v1 pod specs: absent, null and Go's zero
 * scalars are equal, as are an empty list and none (kube's forked DeepEqual treats empty and nil
 * slices and maps alike). Unlike semantic.ts, an empty object is not "none": in a pod spec it is
 * nearly always a set pointer to a zero struct (`emptyDir: {}`, `securityContext: {}`).
 */
import { asObject } from './access.js';

/** Whether a member reads as Go's zero value (or nil slice). */
export function isZeroValue(v: unknown): boolean {
  return v === undefined || v === null || v === false || v === '' || v === 0 || v === 0n || (Array.isArray(v) && v.length === 0);
}

function isInteger(v: unknown): v is number | bigint {
  return typeof v === 'bigint' || (typeof v === 'number' && Number.isInteger(v));
}

export function semanticEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (isZeroValue(a) && isZeroValue(b)) return true;
  if (typeof a === 'bigint' || typeof b === 'bigint') return isInteger(a) && isInteger(b) && BigInt(a) === BigInt(b);
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => semanticEqual(x, b[i]));
  const oa = asObject(a);
  const ob = asObject(b);
  if (!oa || !ob) return false;
  for (const k of Object.keys(oa)) if (!semanticEqual(oa[k], ob[k])) return false;
  for (const k of Object.keys(ob)) if (!Object.hasOwn(oa, k) && !semanticEqual(undefined, ob[k])) return false;
  return true;
}
