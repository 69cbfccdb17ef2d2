/**
 * Readers over decoded JSON that give Go's zero values for what is absent, so validation ported
 * from kube's internal types reads the same: a missing or null string is `""`, a missing number
 * `0`, a missing list empty. A Go pointer is "set" when the member is present and not null.
 */

/** A decoded JSON object. */
export type JsonObject = Record<string, unknown>;

/** The object, or undefined for anything else (absent, null, a list, a scalar). */
export function asObject(v: unknown): JsonObject | undefined {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as JsonObject) : undefined;
}

/** The object, or an empty one (a Go struct value that was left out). */
export function objectOr(v: unknown): JsonObject {
  return asObject(v) ?? {};
}

/** The string, or `""`. */
export function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

/** The list, or an empty one. */
export function list(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

/** The list's items as objects (an item that is not an object reads as `{}`). */
export function objects(v: unknown): JsonObject[] {
  return list(v).map(objectOr);
}

/** The list's items as strings. */
export function strings(v: unknown): string[] {
  return list(v).map(str);
}

/** A number (an int64 beyond 2^53 is decoded as a BigInt), or 0. Comparisons stay in order. */
export function num(v: unknown): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  return 0;
}

/** Whether a Go pointer or slice/map member is set: present and not null. */
export function isSet(v: unknown): boolean {
  return v !== undefined && v !== null;
}

/** The boolean, or false. */
export function bool(v: unknown): boolean {
  return v === true;
}

/** A map of strings (labels, annotations, selectors), or an empty one. */
export function stringMap(v: unknown): Record<string, string> {
  const o = asObject(v);
  if (!o) return {};
  const out: Record<string, string> = {};
  for (const [k, val] of Object.entries(o)) out[k] = str(val);
  return out;
}

/** Whether a map member holds the key (Go's `_, ok := m[k]`). */
export function hasKey(m: JsonObject | Record<string, string>, key: string): boolean {
  return Object.hasOwn(m, key);
}

/** The containers of a spec in kube's VisitContainers order (init, regular, ephemeral) with their paths. */
export function visitContainersWithPath(spec: JsonObject, specPath: string, visit: (c: JsonObject, path: string) => void): void {
  objects(spec['initContainers']).forEach((c, i) => visit(c, `${specPath}.initContainers[${i}]`));
  objects(spec['containers']).forEach((c, i) => visit(c, `${specPath}.containers[${i}]`));
  objects(spec['ephemeralContainers']).forEach((c, i) => visit(c, `${specPath}.ephemeralContainers[${i}]`));
}
