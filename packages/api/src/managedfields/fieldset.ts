/**
 * Field paths and field sets as sigs.k8s.io/structured-merge-diff v4 has them (fieldpath/element.go,
 * fieldpath/set.go, fieldpath/serialize.go, fieldpath/serialize-pe.go), and the FieldsV1 wire form
 * kube stores in `metadata.managedFields[].fieldsV1`.
 *
 * A set holds *members* (paths that are themselves in the set) and *children* (subsets under a path
 * element). Ordering of path elements is SMD's: field names < keys < values < indexes, each compared
 * within its kind; the FieldsV1 encoding is emitted in that order with `"."` first.
 */
import { checkDepth } from '../depth.js';
import { isPlainObject } from '../types.js';
import { isJsonNumber, parseJson } from '../number-codec.js';

/** One field of a map-list item's key, e.g. `{name: 'port', value: 80}`. */
export interface KeyField {
  readonly name: string;
  readonly value: unknown;
}

/**
 * A path element, with its FieldsV1 key (serialize-pe.go: `f:name`, `k:{...}`, `v:...`, `i:n`)
 * made with it: sets look elements up by key at every level of every path.
 */
export type PathElement =
  | { readonly kind: 'field'; readonly name: string; readonly key: string }
  | { readonly kind: 'key'; readonly fields: readonly KeyField[]; readonly key: string }
  | { readonly kind: 'value'; readonly value: unknown; readonly key: string }
  | { readonly kind: 'index'; readonly index: number; readonly key: string };

export type Path = readonly PathElement[];

export const fieldPE = (name: string): PathElement => ({ kind: 'field', name, key: `f:${name}` });
export const indexPE = (index: number): PathElement => ({ kind: 'index', index, key: `i:${index}` });
export const valuePE = (value: unknown): PathElement => ({ kind: 'value', value, key: `v:${goJSON(value)}` });
/** A key element; the fields are sorted by name as SMD's `FieldList.Sort` does. */
export function keyPE(fields: readonly KeyField[]): PathElement {
  const sorted = fields.length > 1 ? [...fields].sort((a, b) => compareStrings(a.name, b.name)) : fields;
  let key = 'k:{';
  for (let i = 0; i < sorted.length; i++) key += `${i > 0 ? ',' : ''}${goJSONString(sorted[i]!.name)}:${goJSON(sorted[i]!.value)}`;
  return { kind: 'key', fields: sorted, key: `${key}}` };
}

/** A path of field names, e.g. `pathOf('metadata', 'labels')`. */
export function pathOf(...names: string[]): Path {
  return names.map(fieldPE);
}

export class FieldsV1Error extends Error {}

// ---------------------------------------------------------------------------------------------
// Value ordering and formatting (SMD value/value.go, value/fields.go)
// ---------------------------------------------------------------------------------------------

/** Go's `strings.Compare`: byte order of the UTF-8 encodings. */
export function compareStrings(a: string, b: string): number {
  if (a === b) return 0;
  // Below U+D800, UTF-16 code units order as UTF-8 bytes do: compare them without encoding, and
  // fall back to the bytes where a surrogate (or what follows one) decides.
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    if (x < 0xd800 && y < 0xd800) return x < y ? -1 : 1;
    return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
  }
  if (n > 0 && a.charCodeAt(n - 1) >= 0xd800) return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
  return a.length < b.length ? -1 : 1;
}

function typeRank(v: unknown): number {
  if (isJsonNumber(v)) return 0; // floats and ints compare numerically (an int64 BigInt too)
  if (typeof v === 'string') return 2;
  if (typeof v === 'boolean') return 3;
  if (Array.isArray(v)) return 4;
  if (isPlainObject(v)) return 5;
  return 6; // null
}

/** SMD's `value.Compare`: a total order over JSON values. */
export function compareValues(a: unknown, b: unknown): number {
  const ra = typeRank(a);
  const rb = typeRank(b);
  if (ra !== rb) return ra < rb ? -1 : 1;
  if (isJsonNumber(a) && isJsonNumber(b)) return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === 'string' && typeof b === 'string') return compareStrings(a, b);
  if (typeof a === 'boolean' && typeof b === 'boolean') return a === b ? 0 : a ? 1 : -1;
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; i < Math.min(a.length, b.length); i++) {
      const c = compareValues(a[i], b[i]);
      if (c !== 0) return c;
    }
    return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
  }
  if (isPlainObject(a) && isPlainObject(b)) {
    const ka = Object.keys(a).sort(compareStrings);
    const kb = Object.keys(b).sort(compareStrings);
    for (let i = 0; i < Math.min(ka.length, kb.length); i++) {
      const c = compareStrings(ka[i]!, kb[i]!) || compareValues(a[ka[i]!], b[kb[i]!]);
      if (c !== 0) return c;
    }
    return ka.length === kb.length ? 0 : ka.length < kb.length ? -1 : 1;
  }
  return 0;
}

const HTML_UNSAFE = /[<>&\u2028\u2029]/;

/** Go `encoding/json` (and jsoniter's standard-compatible config) string escaping, HTML-safe. */
function goJSONString(s: string): string {
  const j = JSON.stringify(s);
  if (!HTML_UNSAFE.test(j)) return j;
  return j.replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** JSON as SMD writes values into FieldsV1 keys (jsoniter, standard-library compatible). */
export function goJSON(v: unknown): string {
  if (typeof v === 'string') return goJSONString(v);
  if (typeof v === 'number' || typeof v === 'boolean') return JSON.stringify(v);
  if (typeof v === 'bigint') return v.toString();
  if (Array.isArray(v)) return `[${v.map(goJSON).join(',')}]`;
  if (isPlainObject(v)) {
    const keys = Object.keys(v).sort(compareStrings);
    return `{${keys.map((k) => `${goJSONString(k)}:${goJSON(v[k])}`).join(',')}}`;
  }
  return 'null';
}

/** SMD's `value.ToString`, used in human-readable paths (`[name="x"]`). */
function valueToString(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'string') return JSON.stringify(v); // Go %q; equal for printable text
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  if (Array.isArray(v)) return `[${v.map(valueToString).join(',')}]`;
  if (isPlainObject(v)) return Object.entries(v).map(([k, x]) => `${k}=${valueToString(x)}`).join('');
  return String(v);
}

// ---------------------------------------------------------------------------------------------
// Path elements
// ---------------------------------------------------------------------------------------------

const KIND_RANK: Record<PathElement['kind'], number> = { field: 0, key: 1, value: 2, index: 3 };

/** SMD's `PathElement.Compare`. */
export function comparePE(a: PathElement, b: PathElement): number {
  if (a.kind !== b.kind) return KIND_RANK[a.kind] < KIND_RANK[b.kind] ? -1 : 1;
  switch (a.kind) {
    case 'field':
      return compareStrings(a.name, (b as typeof a).name);
    case 'key': {
      const bf = (b as typeof a).fields;
      for (let i = 0; ; i++) {
        if (i >= a.fields.length && i >= bf.length) return 0;
        if (i >= a.fields.length) return -1;
        if (i >= bf.length) return 1;
        const c = compareStrings(a.fields[i]!.name, bf[i]!.name) || compareValues(a.fields[i]!.value, bf[i]!.value);
        if (c !== 0) return c;
      }
    }
    case 'value':
      return compareValues(a.value, (b as typeof a).value);
    case 'index': {
      const bi = (b as typeof a).index;
      return a.index === bi ? 0 : a.index < bi ? -1 : 1;
    }
  }
}

/** The FieldsV1 key of a path element (serialize-pe.go): `f:name`, `k:{...}`, `v:...`, `i:n`. */
export function serializePE(pe: PathElement): string {
  return pe.key;
}

/** Parses a FieldsV1 key. Returns undefined for an unknown element type (SMD drops those). */
export function deserializePE(s: string): PathElement | undefined {
  if (s.length < 2) throw new FieldsV1Error('key must be 2 characters long');
  if (s[1] !== ':') throw new FieldsV1Error(`missing colon: ${s}`);
  const rest = s.slice(2);
  const parse = (): unknown => {
    try {
      // An int64 above 2^53 in a key (`v:9007199254740993`) reads back exactly.
      return parseJson(rest);
    } catch (e) {
      throw new FieldsV1Error(`parsing JSON: ${e instanceof Error ? e.message : String(e)}`);
    }
  };
  switch (s[0]) {
    case 'f':
      return fieldPE(rest);
    case 'v':
      return valuePE(parse());
    case 'k': {
      const v = parse();
      if (!isPlainObject(v)) throw new FieldsV1Error('expected object');
      return keyPE(Object.entries(v).map(([name, value]) => ({ name, value })));
    }
    case 'i':
      if (!/^[+-]?\d+$/.test(rest)) throw new FieldsV1Error(`strconv.Atoi: parsing ${JSON.stringify(rest)}: invalid syntax`);
      return indexPE(Number(rest));
    default:
      return undefined;
  }
}

/** SMD's `PathElement.String`: `.name`, `[k=v,...]`, `[=v]`, `[n]`. */
export function peString(pe: PathElement): string {
  switch (pe.kind) {
    case 'field':
      return `.${pe.name}`;
    case 'key':
      return `[${pe.fields.map((f) => `${f.name}=${valueToString(f.value)}`).join(',')}]`;
    case 'value':
      return `[=${valueToString(pe.value)}]`;
    case 'index':
      return `[${pe.index}]`;
  }
}

/** SMD's `Path.String`, as kube prints conflicting fields: `.metadata.labels.app`. */
export function pathString(path: Path): string {
  return path.map(peString).join('');
}

// ---------------------------------------------------------------------------------------------
// Sets
// ---------------------------------------------------------------------------------------------

interface ChildNode {
  readonly pe: PathElement;
  readonly set: FieldSet;
}

/** A set of field paths (SMD's `fieldpath.Set`). Operations return new sets. */
export class FieldSet {
  readonly #members = new Map<string, PathElement>();
  readonly #children = new Map<string, ChildNode>();
  /**
   * This set's FieldsV1 object (without `"."`), built once, deeply frozen and shared: by every
   * entry written with this set, and by the FieldsV1 of every set that holds this one as a child
   * (operations share unchanged children, so an update that adds one annotation builds the
   * metadata and annotations levels again and nothing else). Cleared when the set is changed.
   */
  #v1: Readonly<Record<string, unknown>> | undefined;

  static empty(): FieldSet {
    return new FieldSet();
  }

  static fromPaths(paths: Iterable<Path>): FieldSet {
    const s = new FieldSet();
    for (const p of paths) s.insert(p);
    return s;
  }

  /** Adds a path (mutates; for building sets). */
  insert(path: Path): void {
    if (path.length === 0) return;
    let cur: FieldSet = this;
    for (let i = 0; i < path.length - 1; i++) {
      cur.#v1 = undefined;
      cur = cur.#descend(path[i]!);
    }
    cur.#v1 = undefined;
    const last = path[path.length - 1]!;
    cur.#members.set(serializePE(last), last);
  }

  #descend(pe: PathElement): FieldSet {
    const k = serializePE(pe);
    let n = this.#children.get(k);
    if (!n) {
      n = { pe, set: new FieldSet() };
      this.#children.set(k, n);
    }
    return n.set;
  }

  /** Whether the path is a member of the set. */
  has(path: Path): boolean {
    if (path.length === 0) return false;
    let cur: FieldSet | undefined = this;
    for (let i = 0; i < path.length - 1 && cur; i++) cur = cur.#children.get(serializePE(path[i]!))?.set;
    return cur ? cur.#members.has(serializePE(path[path.length - 1]!)) : false;
  }

  /** Whether the element with this FieldsV1 key is a member at this level. */
  hasMemberKey(key: string): boolean {
    return this.#members.has(key);
  }

  /** The subset under the element with this FieldsV1 key, if any (no empty set made). */
  childByKey(key: string): FieldSet | undefined {
    return this.#children.get(key)?.set;
  }

  /** The subset under `pe` (SMD's `WithPrefix`), or an empty set. */
  withPrefix(pe: PathElement): FieldSet {
    return this.#children.get(serializePE(pe))?.set ?? new FieldSet();
  }

  isEmpty(): boolean {
    if (this.#members.size > 0) return false;
    for (const n of this.#children.values()) if (!n.set.isEmpty()) return false;
    return true;
  }

  union(o: FieldSet): FieldSet {
    const out = new FieldSet();
    for (const [k, pe] of this.#members) out.#members.set(k, pe);
    for (const [k, pe] of o.#members) out.#members.set(k, pe);
    for (const [k, n] of this.#children) {
      const other = o.#children.get(k);
      out.#addChild(k, n.pe, other ? n.set.union(other.set) : n.set);
    }
    for (const [k, n] of o.#children) if (!this.#children.has(k)) out.#addChild(k, n.pe, n.set);
    return out;
  }

  intersection(o: FieldSet): FieldSet {
    const out = new FieldSet();
    for (const [k, pe] of this.#members) if (o.#members.has(k)) out.#members.set(k, pe);
    for (const [k, n] of this.#children) {
      const other = o.#children.get(k);
      if (other) out.#addChild(k, n.pe, n.set.intersection(other.set));
    }
    return out;
  }

  difference(o: FieldSet): FieldSet {
    const out = new FieldSet();
    for (const [k, pe] of this.#members) if (!o.#members.has(k)) out.#members.set(k, pe);
    for (const [k, n] of this.#children) {
      const other = o.#children.get(k);
      out.#addChild(k, n.pe, other ? n.set.difference(other.set) : n.set);
    }
    return out;
  }

  /** Removes `o`'s members and everything beneath them (SMD's `RecursiveDifference`). */
  recursiveDifference(o: FieldSet): FieldSet {
    const out = new FieldSet();
    for (const [k, pe] of this.#members) if (!o.#members.has(k)) out.#members.set(k, pe);
    for (const [k, n] of this.#children) {
      if (o.#members.has(k)) continue;
      const other = o.#children.get(k);
      out.#addChild(k, n.pe, other ? n.set.recursiveDifference(other.set) : n.set);
    }
    return out;
  }

  /** The same members (a walk of both sets: no encoding). */
  equals(o: FieldSet): boolean {
    if (this === o) return true;
    if (this.#members.size !== o.#members.size) return false;
    for (const k of this.#members.keys()) if (!o.#members.has(k)) return false;
    // Empty children are no members (the encoding leaves them out).
    let children = 0;
    for (const [k, n] of this.#children) {
      if (n.set.isEmpty()) continue;
      children++;
      const other = o.#children.get(k);
      if (!other || !n.set.equals(other.set)) return false;
    }
    for (const n of o.#children.values()) if (!n.set.isEmpty()) children--;
    return children === 0;
  }

  #addChild(k: string, pe: PathElement, set: FieldSet): void {
    if (!set.isEmpty()) this.#children.set(k, { pe, set });
  }

  #sortedMembers(): PathElement[] {
    return [...this.#members.values()].sort(comparePE);
  }

  #sortedChildren(): ChildNode[] {
    return [...this.#children.values()].filter((n) => !n.set.isEmpty()).sort((a, b) => comparePE(a.pe, b.pe));
  }

  /** Every member path, in SMD's `Iterate` order (this level's members, then each child in order). */
  paths(): Path[] {
    const out: Path[] = [];
    const walk = (s: FieldSet, prefix: Path): void => {
      for (const pe of s.#sortedMembers()) out.push([...prefix, pe]);
      for (const n of s.#sortedChildren()) walk(n.set, [...prefix, n.pe]);
    };
    walk(this, []);
    return out;
  }

  /** The FieldsV1 object (fieldpath/serialize.go `ToJSON`): deeply frozen, shared (see #v1). */
  toFieldsV1(): Readonly<Record<string, unknown>> {
    return emit(this, 1);
  }

  /** Parses a FieldsV1 object (fieldpath/serialize.go `FromJSON`). Throws FieldsV1Error. */
  static fromFieldsV1(v: unknown): FieldSet {
    if (!isPlainObject(v)) throw new FieldsV1Error('expected object');
    // Every update decodes the live object's entries again, and objects written the same way
    // (a controller's, a tool's) carry the same FieldsV1: decode each text once. Sets are never
    // changed once built (operations return new ones), so one instance serves every reader.
    const hash = shapeHash(v, 1);
    const candidates = hash === undefined ? undefined : DECODED.get(hash);
    if (candidates) for (const c of candidates) if (sameShape(c.v1, v)) return c.set;
    const set = readV1(v).children ?? new FieldSet();
    if (hash !== undefined) {
      if (decodedCount >= DECODED_MAX) {
        DECODED.clear();
        decodedCount = 0;
      }
      set.toFieldsV1();
      // Compared with later ones: a copy (the caller's object may change later).
      const entry = { v1: JSON.parse(JSON.stringify(v)) as Record<string, unknown>, set };
      if (candidates) candidates.push(entry);
      else DECODED.set(hash, [entry]);
      decodedCount++;
    }
    return set;
  }

  /** Internal access for the encoder. */
  static nodes(s: FieldSet): { members: PathElement[]; children: ChildNode[] } {
    return { members: s.#sortedMembers(), children: s.#sortedChildren() };
  }

  /** The cached FieldsV1 object (see #v1), and its setter for emit. */
  static cachedV1(s: FieldSet): Readonly<Record<string, unknown>> | undefined {
    return s.#v1;
  }

  static cacheV1(s: FieldSet, v1: Readonly<Record<string, unknown>>): void {
    s.#v1 = v1;
  }

  static attach(s: FieldSet, pe: PathElement, child: FieldSet): void {
    s.#v1 = undefined;
    const k = serializePE(pe);
    const cur = s.#children.get(k);
    s.#addChild(k, pe, cur ? cur.set.union(child) : child);
  }

  static addMember(s: FieldSet, pe: PathElement): void {
    s.#v1 = undefined;
    s.#members.set(serializePE(pe), pe);
  }
}

/**
 * Decoded FieldsV1 by a hash of their members (names and nesting, in any order: a set has no
 * order), each with (a copy of) the FieldsV1 it was decoded from, compared member by member on a
 * hit. Bounded: emptied when full.
 */
const DECODED = new Map<number, Array<{ v1: Record<string, unknown>; set: FieldSet }>>();
const DECODED_MAX = 512;
let decodedCount = 0;
/** Deeper FieldsV1 are decoded without the cache (readV1 applies the depth limit). */
const SHAPE_MAX_DEPTH = 64;

/**
 * A hash of a FieldsV1 object's members, independent of their order; undefined unless it holds
 * nothing but nested plain objects (what a well-formed one is): anything else is left to readV1
 * and its errors.
 */
function shapeHash(o: Record<string, unknown>, depth: number): number | undefined {
  if (depth > SHAPE_MAX_DEPTH) return undefined;
  let h = 0;
  let n = 0;
  for (const k in o) {
    if (!Object.prototype.hasOwnProperty.call(o, k)) continue;
    const x = o[k];
    if (!isPlainObject(x)) return undefined;
    const sub = shapeHash(x, depth + 1);
    if (sub === undefined) return undefined;
    const kh = Math.imul(k.length, 31) + Math.imul(k.charCodeAt(2) | 0, 7) + (k.charCodeAt(k.length - 1) | 0);
    h = (h + Math.imul(kh ^ sub, 0x9e3779b1)) | 0;
    n++;
  }
  return (h + Math.imul(n, 0x85ebca6b)) | 0;
}

/** The same members, nested alike (order aside); `b` is known to hold only plain objects. */
function sameShape(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  let n = 0;
  for (const k in b) {
    if (!Object.prototype.hasOwnProperty.call(b, k)) continue;
    if (!Object.prototype.hasOwnProperty.call(a, k)) return false;
    if (!sameShape(a[k] as Record<string, unknown>, b[k] as Record<string, unknown>)) return false;
    n++;
  }
  for (const k in a) if (Object.prototype.hasOwnProperty.call(a, k)) n--;
  return n === 0;
}

/** A member without children: `{}`, one frozen object for all. */
const MEMBER_V1: Readonly<Record<string, unknown>> = Object.freeze({});

/**
 * A set's FieldsV1 object without `"."` (its cached one when it has it; else built, frozen and
 * cached), in SMD's order: members and children merged by path element, a child that is also a
 * member with `"."` first.
 */
function emit(s: FieldSet, depth: number): Readonly<Record<string, unknown>> {
  const cached = FieldSet.cachedV1(s);
  if (cached) return cached;
  checkDepth(depth, 'managedFields');
  const { members, children } = FieldSet.nodes(s);
  const out: Record<string, unknown> = {};
  let mi = 0;
  let ci = 0;
  while (mi < members.length || ci < children.length) {
    const m = members[mi];
    const c = children[ci];
    const cmp = m && c ? comparePE(m, c.pe) : m ? -1 : 1;
    if (cmp < 0 && m) {
      out[serializePE(m)] = MEMBER_V1;
      mi++;
    } else if (cmp > 0 && c) {
      out[serializePE(c.pe)] = emit(c.set, depth + 1);
      ci++;
    } else if (c) {
      out[serializePE(c.pe)] = Object.freeze({ '.': MEMBER_V1, ...emit(c.set, depth + 1) });
      mi++;
      ci++;
    }
  }
  Object.freeze(out);
  FieldSet.cacheV1(s, out);
  return out;
}

/** SMD's `readIterV1`: returns the children set and whether the node itself is a member. */
function readV1(obj: Record<string, unknown>, depth = 1): { children: FieldSet | undefined; isMember: boolean } {
  checkDepth(depth, 'managedFields');
  let children: FieldSet | undefined;
  let isMember = false;
  for (const key in obj) {
    if (!Object.prototype.hasOwnProperty.call(obj, key)) continue;
    if (key === '.') {
      isMember = true;
      continue;
    }
    const val = obj[key];
    let pe: PathElement | undefined;
    if (key.startsWith('f:')) {
      // The common case, read directly; a field's key is its canonical key.
      pe = fieldPE(key.slice(2));
    } else {
      pe = deserializePE(key);
      if (!pe) continue;
    }
    if (!isPlainObject(val)) throw new FieldsV1Error(`expected object for ${JSON.stringify(key)}`);
    const sub = readV1(val, depth + 1);
    if (sub.isMember) {
      children ??= new FieldSet();
      FieldSet.addMember(children, pe);
    }
    if (sub.children) {
      children ??= new FieldSet();
      FieldSet.attach(children, pe, sub.children);
    }
  }
  if (!children) isMember = true;
  return { children, isMember };
}
