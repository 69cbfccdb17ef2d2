/** Small setters for defaulting decoded JSON in place, with Go's notion of "unset". */
import { type JsonObject, asObject } from '../validation/access.js';

/** Sets a non-pointer member that holds Go's zero value (absent, null, '', 0). */
export function defaultZero(o: JsonObject, key: string, value: unknown): void {
  const v = o[key];
  if (v === undefined || v === null || v === '' || v === 0) o[key] = value;
}

/** Sets a pointer member that is nil (absent or null). */
export function defaultNil(o: JsonObject, key: string, value: unknown): void {
  if (o[key] === undefined || o[key] === null) o[key] = value;
}

/** The object members of a list member, to default in place. */
export function eachObject(o: JsonObject, key: string, fn: (item: JsonObject) => void): void {
  const v = o[key];
  if (!Array.isArray(v)) return;
  for (const item of v) {
    const obj = asObject(item);
    if (obj) fn(obj);
  }
}

/** Runs `fn` on an object member when it is set. */
export function withObject(o: JsonObject, key: string, fn: (item: JsonObject) => void): void {
  const obj = asObject(o[key]);
  if (obj) fn(obj);
}
