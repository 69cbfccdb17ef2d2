/**
 * Structural helpers for decoded JSON values, shared by patches, server-side apply and storage.
 * The recursive ones hold to the one nesting limit.
 *
 * Keys of client data are data: in kube `__proto__`, `constructor`, `prototype`, `toString` and
 * every other name an `Object.prototype` member has are ordinary JSON keys. Code that reads,
 * tests or writes a member whose name comes from a request goes through {@link getOwn},
 * {@link hasOwn} and {@link setMember}, which never see an inherited member and never change a
 * prototype; maps keyed by such names are `Map`s or {@link createDict} objects.
 */
import { checkDepth } from './depth.js';

export type JsonObject = Record<string, unknown>;

/** A plain JSON object (not an array, not null). */
export function isJsonObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Whether `o` has a member `k` of its own (an inherited one, such as `constructor`, is not a member). */
export function hasOwn(o: object, k: PropertyKey): boolean {
  return Object.hasOwn(o, k);
}

/** `o[k]` when `o` has that member of its own, else undefined (never an inherited value). */
export function getOwn(o: JsonObject, k: string): unknown {
  return Object.hasOwn(o, k) ? o[k] : undefined;
}

/**
 * An empty object without a prototype, for maps keyed by client strings that must stay plain
 * objects (encoded as JSON, handed to libraries): any key, `__proto__` included, is an ordinary
 * member, and no key reads an inherited value.
 */
export function createDict<V>(): Record<string, V> {
  return Object.create(null) as Record<string, V>;
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
      if (!Object.hasOwn(v, k)) continue;
      setMember(out, k, cloneJson(v[k], depth + 1));
    }
    return out;
  }
  return v;
}

/**
 * `o[k] = v`, also for a member named `__proto__` (JSON.parse makes it an ordinary member; a plain
 * assignment would set the object's prototype instead). Any other name, `constructor` included,
 * becomes an own member by plain assignment.
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
    if (!Object.hasOwn(b, k)) return false;
    if (!jsonEqual((a as JsonObject)[k], (b as JsonObject)[k], depth + 1)) return false;
  }
  return true;
}
