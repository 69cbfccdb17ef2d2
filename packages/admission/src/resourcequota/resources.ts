/**
 * kube's quota ResourceList arithmetic (k8s.io/apiserver/pkg/quota/v1/resources.go) over plinth's
 * exact Quantity: lists are plain records of resource name to Quantity.
 */
import { createQuantity, decodeQuantity, isPlainObject, type Quantity } from '@plinth/api';

export type ResourceList = Record<string, Quantity>;

/** A zero in DecimalSI, as kube's `resource.Quantity{Format: DecimalSI}` prints ("0"). */
export const zero = (): Quantity => createQuantity(0, 'DecimalSI');
export const one = (): Quantity => createQuantity(1, 'DecimalSI');

/** A stored ResourceList (`spec.hard`, `status.used`, container `resources.requests`) decoded; bad entries are skipped. */
export function readList(v: unknown): ResourceList {
  const out: ResourceList = {};
  if (!isPlainObject(v)) return out;
  for (const [k, q] of Object.entries(v)) {
    try {
      out[k] = decodeQuantity(q);
    } catch {
      // Validation keeps bad quantities out of storage; an unreadable one counts as absent.
    }
  }
  return out;
}

/** The list as stored JSON, keys sorted as kube's JSON encoding writes a map. */
export function writeList(l: ResourceList): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of Object.keys(l).sort()) out[k] = l[k]!.toString();
  return out;
}

export function add(a: ResourceList, b: ResourceList | undefined): ResourceList {
  const out: ResourceList = { ...a };
  if (b) for (const [k, q] of Object.entries(b)) out[k] = k in out ? out[k]!.add(q) : q;
  return out;
}

/** a − b, each result floored at zero; keys of b missing from a are ignored (kube's SubtractWithNonNegativeResult). */
export function subtractNonNegative(a: ResourceList, b: ResourceList): ResourceList {
  const out: ResourceList = {};
  for (const [k, q] of Object.entries(a)) {
    const d = k in b ? q.sub(b[k]!) : q;
    out[k] = d.sign() < 0 ? zero() : d;
  }
  return out;
}

/** The larger of each entry (kube's Max: init containers' requests against the containers' sum). */
export function max(a: ResourceList, b: ResourceList | undefined): ResourceList {
  const out: ResourceList = { ...a };
  if (b) for (const [k, q] of Object.entries(b)) if (!(k in out) || q.cmp(out[k]!) > 0) out[k] = q;
  return out;
}

/** Only the entries named in `names`. */
export function mask(l: ResourceList, names: Iterable<string>): ResourceList {
  const out: ResourceList = {};
  for (const n of names) if (n in l) out[n] = l[n]!;
  return out;
}

export function removeZeros(l: ResourceList): ResourceList {
  const out: ResourceList = {};
  for (const [k, q] of Object.entries(l)) if (!q.isZero()) out[k] = q;
  return out;
}

export function negatives(l: ResourceList): string[] {
  return Object.keys(l).filter((k) => l[k]!.sign() < 0);
}

/** Whether every entry of a is at most b's (a resource b lacks is not limited); the names exceeded. */
export function lessThanOrEqual(a: ResourceList, b: ResourceList): { allowed: boolean; exceeded: string[] } {
  const exceeded: string[] = [];
  for (const [k, q] of Object.entries(a)) if (k in b && q.cmp(b[k]!) > 0) exceeded.push(k);
  return { allowed: exceeded.length === 0, exceeded };
}

/** Same keys, same amounts (kube's quota.Equals). */
export function equals(a: ResourceList, b: ResourceList): boolean {
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  return ka.every((k) => k in b && a[k]!.cmp(b[k]!) === 0);
}

/** `name=value` pairs sorted by name, comma-separated (kube's prettyPrint of a ResourceList). */
export function prettyPrint(l: ResourceList): string {
  return Object.keys(l)
    .sort()
    .map((k) => `${k}=${l[k]!.toString()}`)
    .join(',');
}

/** Names sorted and comma-separated (kube's prettyPrintResourceNames). */
export function prettyPrintNames(names: Iterable<string>): string {
  return [...names].sort().join(',');
}
