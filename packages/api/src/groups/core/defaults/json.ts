/**
 * Small setters for defaulting decoded JSON as kube's `SetDefaults_*` functions set Go structs:
 * a nested struct always exists in Go, so defaulting one of its fields creates it in JSON.
 */
import { type JsonObject, isJsonObject } from '../../../json.js';

/** The member `k` as an object, created when absent or null. */
export function ensureObject(o: JsonObject, k: string): JsonObject {
  const cur = Object.hasOwn(o, k) ? o[k] : undefined;
  if (isJsonObject(cur)) return cur;
  const fresh: JsonObject = {};
  o[k] = fresh;
  return fresh;
}

/** Sets a Go string field that is "" (absent, null or empty). */
export function defaultString(o: JsonObject, k: string, value: string): void {
  const cur = Object.hasOwn(o, k) ? o[k] : undefined;
  if (cur === undefined || cur === null || cur === '') o[k] = value;
}

/** Sets a Go pointer field that is nil (absent or null). */
export function defaultPointer(o: JsonObject, k: string, value: unknown): void {
  const cur = Object.hasOwn(o, k) ? o[k] : undefined;
  if (cur === undefined || cur === null) o[k] = value;
}

/** The member `k` when it is an object (a non-nil Go pointer to a struct). */
export function objectMember(o: JsonObject, k: string): JsonObject | undefined {
  const v = Object.hasOwn(o, k) ? o[k] : undefined;
  return isJsonObject(v) ? v : undefined;
}
