/**
 * Structural helpers for decoded JSON values, shared by patches, server-side apply and storage.
 * Both recurse, so both hold to the one nesting limit.
 */
import { checkDepth } from './depth.js';

export type JsonObject = Record<string, unknown>;

/** A plain JSON object (not an array, not null). */
export function isJsonObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A deep copy of a JSON value (objects and arrays are rebuilt, scalars returned as they are). */
export function cloneJson<T>(v: T, depth?: number): T;
export function cloneJson(v: unknown, depth = 1): unknown {
  if (Array.isArray(v)) {
    checkDepth(depth);
    return v.map((x) => cloneJson(x, depth + 1));
  }
  if (isJsonObject(v)) {
    checkDepth(depth);
    const out: JsonObject = {};
    for (const k in v) {
      if (!Object.prototype.hasOwnProperty.call(v, k)) continue;
      setMember(out, k, cloneJson(v[k], depth + 1));
    }
    return out;
  }
  return v;
}

/**
 * `o[k] = v`, also for a member named `__proto__` (JSON.parse makes it an ordinary member; a plain
 * assignment would set the object's prototype instead).
 */
export function setMember(o: JsonObject, k: string, v: unknown): void {
  if (k === '__proto__') Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
  else o[k] = v;
}

/** Structural equality of two JSON values: object key order does not matter. */
export function jsonEqual(a: unknown, b: unknown, depth = 1): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  checkDepth(depth);
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], b[i], depth + 1)) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  for (const k of ka) {
    if (!Object.prototype.hasOwnProperty.call(b, k)) return false;
    if (!jsonEqual((a as JsonObject)[k], (b as JsonObject)[k], depth + 1)) return false;
  }
  return true;
}
