/**
 * Reading decoded JSON the way kube's validation reads its Go structs: an absent string is "",
 * an absent list is empty, an absent pointer is nil. Plus kube's `field.Path` formatting
 * (`spec.containers[0].resources.limits[cpu]`).
 *
 * Validation runs on bodies the decoder has typed already; these accessors still never trust a
 * member's JSON type, so a value of the wrong type reads as absent instead of throwing.
 */
import { type JsonObject, getOwn, isJsonObject } from '../../../json.js';

export type { JsonObject };

/** A member's raw value (undefined when absent; never an inherited one). */
export function memberAt(o: unknown, key: string): unknown {
  return isJsonObject(o) ? getOwn(o, key) : undefined;
}

/** A member that is a JSON object (a non-nil Go struct pointer); undefined when absent or null. */
export function objectAt(o: unknown, key: string): JsonObject | undefined {
  if (!isJsonObject(o)) return undefined;
  const v = getOwn(o, key);
  return isJsonObject(v) ? v : undefined;
}

/** A Go `string` member: "" when absent. */
export function stringAt(o: unknown, key: string): string {
  const v = isJsonObject(o) ? getOwn(o, key) : undefined;
  return typeof v === 'string' ? v : '';
}

/** A Go `*string` member: undefined when absent or null. */
export function optionalStringAt(o: unknown, key: string): string | undefined {
  const v = isJsonObject(o) ? getOwn(o, key) : undefined;
  return typeof v === 'string' ? v : undefined;
}

/** A Go slice member: [] when absent. */
export function arrayAt(o: unknown, key: string): unknown[] {
  const v = isJsonObject(o) ? getOwn(o, key) : undefined;
  return Array.isArray(v) ? v : [];
}

/** A Go `[]string` member; non-string items read as "". */
export function stringsAt(o: unknown, key: string): string[] {
  return arrayAt(o, key).map((v) => (typeof v === 'string' ? v : ''));
}

/** A Go integer member (or `*int32`): undefined when absent or null. */
export function numberAt(o: unknown, key: string): number | undefined {
  const v = isJsonObject(o) ? getOwn(o, key) : undefined;
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  return undefined;
}

/** A Go `bool` member: false when absent. */
export function boolAt(o: unknown, key: string): boolean {
  const v = isJsonObject(o) ? getOwn(o, key) : undefined;
  return v === true;
}

/** Whether the member is present and not null (a non-nil Go pointer, map or slice). */
export function isSet(o: unknown, key: string): boolean {
  const v = isJsonObject(o) ? getOwn(o, key) : undefined;
  return v !== undefined && v !== null;
}

/** A Go `map[string]string` member: string values only, in sorted key order (kube's maps have none). */
export function stringMapAt(o: unknown, key: string): Array<[string, string]> {
  const m = objectAt(o, key);
  if (!m) return [];
  return Object.keys(m)
    .sort()
    .map((k): [string, string] => [k, typeof m[k] === 'string' ? (m[k] as string) : '']);
}

/** The number of members of a map-valued member (Go `len(map)`). */
export function mapSize(o: unknown, key: string): number {
  const m = objectAt(o, key);
  return m ? Object.keys(m).length : 0;
}

/** kube's `fldPath.Child(name)`. */
export function child(path: string, ...names: string[]): string {
  let p = path;
  for (const n of names) p = p ? `${p}.${n}` : n;
  return p;
}

/** kube's `fldPath.Index(i)`. */
export function index(path: string, i: number): string {
  return `${path}[${i}]`;
}

/** kube's `fldPath.Key(k)`: the key unquoted, as kube prints it. */
export function key(path: string, k: string): string {
  return `${path}[${k}]`;
}
