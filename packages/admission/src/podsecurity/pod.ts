/**
 * What the Pod Security checks read of a pod (or a pod template): its metadata and spec as
 * JSON, with small accessors and PSA's message helpers (policy/helpers.go, visitor.go).
 */

/** A JSON object as decoded; the checks read it and never change it. */
export type Json = Record<string, unknown>;

export interface PodView {
  annotations: Record<string, string>;
  spec: Json;
}

export interface CheckResult {
  allowed: boolean;
  reason?: string;
  detail?: string;
}

export const ALLOWED: CheckResult = { allowed: true };

export const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The object at `key`, or undefined (Go's nil pointer). */
export const obj = (v: unknown, key: string): Json | undefined => (isObj(v) && isObj(v[key]) ? v[key] : undefined);

/** The list at `key`, or empty. */
export const list = (v: unknown, key: string): unknown[] => (isObj(v) && Array.isArray(v[key]) ? v[key] : []);

/** The string at `key`, or '' (Go's zero value). */
export const str = (v: unknown, key: string): string => (isObj(v) && typeof v[key] === 'string' ? v[key] : '');

/** The boolean at `key`, or undefined (Go's nil *bool). */
export const bool = (v: unknown, key: string): boolean | undefined => (isObj(v) && typeof v[key] === 'boolean' ? v[key] : undefined);

/** The number at `key`, or undefined (Go's nil pointer). */
export const num = (v: unknown, key: string): number | undefined => (isObj(v) && typeof v[key] === 'number' ? v[key] : undefined);

/** Every container of the spec: init containers, containers, then ephemeral containers (PSA's visitContainers). */
export function containers(spec: Json): Json[] {
  const out: Json[] = [];
  for (const k of ['initContainers', 'containers', 'ephemeralContainers']) for (const c of list(spec, k)) if (isObj(c)) out.push(c);
  return out;
}

export const pluralize = (singular: string, plural: string, n: number): string => (n === 1 ? singular : plural);

/** PSA's joinQuote: `"a", "b"` (no escaping, as PSA writes it). */
export const joinQuote = (items: readonly string[]): string => (items.length === 0 ? '' : `"${items.join('", "')}"`);

/** Sorted and deduplicated, as Go's sets.String.List(). */
export const sortedSet = (items: Iterable<string>): string[] => [...new Set(items)].sort();

const GO_ESCAPES: Record<string, string> = { '\x07': '\\a', '\b': '\\b', '\f': '\\f', '\n': '\\n', '\r': '\\r', '\t': '\\t', '\v': '\\v', '"': '\\"', '\\': '\\\\' };

/** Go's `%q` of a string (the annotation values PSA prints). */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    if (GO_ESCAPES[ch]) out += GO_ESCAPES[ch];
    else if (cp < 0x20 || cp === 0x7f) out += `\\x${cp.toString(16).padStart(2, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}

/** `container "a"` / `containers "a", "b"`. */
export const namedContainers = (names: readonly string[]): string => `${pluralize('container', 'containers', names.length)} ${joinQuote(names)}`;
