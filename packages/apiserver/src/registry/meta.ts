/** Object-metadata helpers of the registry: generated names, timestamps, a kind's empty object. */
import { randomInt } from 'node:crypto';
import { setMember, type Schema } from '@plinth/api';

const NAME_CHARS = 'bcdfghjklmnpqrstvwxz2456789';
const MAX_GENERATED_PREFIX = 63 - 5;

/** kube's SimpleNameGenerator: prefix (capped) + 5 random characters. */
export function generateName(prefix: string): string {
  const base = prefix.length > MAX_GENERATED_PREFIX ? prefix.slice(0, MAX_GENERATED_PREFIX) : prefix;
  let suffix = '';
  for (let i = 0; i < 5; i++) suffix += NAME_CHARS[randomInt(NAME_CHARS.length)];
  return base + suffix;
}

/** RFC 3339 with second precision, as metav1.Time serializes (formatted once per second). */
export function now(): string {
  const sec = Math.floor(Date.now() / 1000);
  if (sec !== nowSecond) {
    nowSecond = sec;
    nowText = `${new Date(sec * 1000).toISOString().slice(0, 19)}Z`;
  }
  return nowText;
}
let nowSecond = Number.NaN;
let nowText = '';

/**
 * The kind's empty object as Go would see it: non-pointer structs at the top level are `{}`
 * (kube compares a create against it when recording managedFields, and a create by apply starts
 * from it); pointers to structs (Go pointers in the schema source) are absent.
 */
export function emptyObjectOf(schema: Schema, defs: ReadonlyMap<string, Schema>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(schema.properties ?? {})) {
    if (k === 'metadata' || k === 'apiVersion' || k === 'kind' || v.goPointer) continue;
    let sch = v;
    while (sch.$ref) sch = defs.get(sch.$ref) ?? {};
    if (sch.properties && sch['x-kubernetes-map-type'] !== 'atomic') setMember(out, k, {});
  }
  return out;
}

