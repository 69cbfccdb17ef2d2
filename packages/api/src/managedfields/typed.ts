/**
 * Schema-aware operations on kube JSON objects, as structured-merge-diff v4.2 (kube 1.24) does them:
 * `ToFieldSet` (typed/tofieldset.go), `Merge` and `Compare` (typed/merge.go, typed/typed.go) and
 * `RemoveItems` (typed/remove.go). The type of a node comes from the plinth `Schema`, read the way
 * kube-openapi's schemaconv reads OpenAPI extensions.
 */
import { OBJECT_META } from '../kube-schema/source.js';
import type { Definitions, Schema } from '../schema.js';
import { isPlainObject } from '../types.js';
import { getOwn, hasOwn, jsonEqual, setMember } from '../json.js';
import { checkDepth } from '../depth.js';
import { FieldSet, type Path, type PathElement, compareStrings, comparePE, fieldPE, indexPE, keyPE, pathString, peString, serializePE, valuePE } from './fieldset.js';

/** A node's type: a schema, `'deduced'` (schemaless: maps granular, lists atomic) or untyped (atomic leaf). */
export type TypeRef = Schema | 'deduced' | undefined;

type ListT = { kind: 'list'; elem: TypeRef; rel: 'atomic' | 'set' | 'map'; keys: readonly string[]; keyDefaults?: ReadonlyMap<string, unknown> };

type Resolved =
  | { kind: 'leaf' }
  | ListT
  | MapT;

/**
 * A map or struct. `pes` holds one path element per declared field, made once per schema: the
 * walks reuse them, and with them the FieldsV1 key each one computes once (fieldset.ts).
 */
type MapT = { kind: 'map'; fields: Readonly<Record<string, Schema>> | undefined; elem: TypeRef; atomic: boolean; pes?: Map<string, PathElement> };

const LEAF: Resolved = { kind: 'leaf' };
const DEDUCED_MAP: MapT = { kind: 'map', fields: undefined, elem: 'deduced', atomic: false };
const DEDUCED_LIST: ListT = { kind: 'list', elem: 'deduced', rel: 'atomic', keys: [] };

/** The path element of member `k` of a map of type `t` (the schema's shared one for a declared field). */
function memberPE(t: MapT, k: string): PathElement {
  if (t.fields && hasOwn(t.fields, k)) {
    let pes = t.pes;
    if (!pes) t.pes = pes = new Map();
    let pe = pes.get(k);
    if (!pe) pes.set(k, (pe = fieldPE(k)));
    return pe;
  }
  return fieldPE(k);
}

/** A schema-or-data error, worded as SMD's validation errors (`.path: element 0: ...`). */
export class TypedError extends Error {}

export class TypedSchema {
  readonly root: TypeRef;
  readonly #defs: Definitions;

  /** `schema` is a kind's schema; apiVersion/kind/metadata are added when it lacks them. */
  constructor(schema: Schema, defs: Definitions) {
    this.#defs = defs;
    const props = schema.properties;
    if (props && !hasOwn(props, 'metadata')) {
      this.root = {
        ...schema,
        properties: { apiVersion: { type: 'string' }, kind: { type: 'string' }, metadata: { $ref: OBJECT_META }, ...props },
      };
    } else {
      this.root = schema;
    }
  }

  #deref(schema: Schema): Schema | undefined {
    let s: Schema | undefined = schema;
    for (let i = 0; s?.$ref && i < 32; i++) s = this.#defs.get(s.$ref);
    return s;
  }

  readonly #lists = new WeakMap<Schema, ListT>();

  /**
   * A list's type, with the defaults of its keys (SMD uses a key's default when an item omits it:
   * a container port without `protocol` is keyed `TCP`, kube's `+default`).
   */
  #listType(s: Schema): ListT {
    let t = this.#lists.get(s);
    if (!t) {
      t = listType(s);
      const elem = t.keys.length > 0 && t.elem && t.elem !== 'deduced' ? this.#deref(t.elem) : undefined;
      const defaults = new Map<string, unknown>();
      for (const k of t.keys) {
        const d = elem?.properties && hasOwn(elem.properties, k) ? elem.properties[k]!.v3Default : undefined;
        if (d !== undefined) defaults.set(k, d);
      }
      if (defaults.size > 0) t = { ...t, keyDefaults: defaults };
      this.#lists.set(s, t);
    }
    return t;
  }

  readonly #mayFail = new WeakMap<Schema, boolean>();

  /**
   * Whether walking a value of this type can throw TypedError: only a list whose items carry keys
   * or values (map and set lists) is checked (null items, missing key fields, duplicates). A
   * schemaless value's lists are atomic. Recursive schemas count as failing while being resolved.
   */
  mayFail(ref: TypeRef): boolean {
    if (ref === undefined || ref === 'deduced') return false;
    let m = this.#mayFail.get(ref);
    if (m !== undefined) return m;
    this.#mayFail.set(ref, true);
    const t = this.resolve(ref, undefined);
    if (t.kind === 'list') m = t.rel !== 'atomic';
    else if (t.kind === 'map' && !t.atomic) {
      m = this.mayFail(t.elem);
      if (!m && t.fields) for (const k of Object.keys(t.fields)) if ((m = this.mayFail(t.fields[k]))) break;
    } else m = false;
    this.#mayFail.set(ref, m);
    return m;
  }

  /** Each schema's type, resolved once (undefined in the cache: its type depends on the value). */
  readonly #resolved = new WeakMap<Schema, Resolved | null>();

  resolve(ref: TypeRef, value: unknown): Resolved {
    if (ref === undefined) return LEAF;
    if (ref === 'deduced') return deduced(value);
    let r = this.#resolved.get(ref);
    if (r === undefined) {
      r = this.#resolveSchema(ref);
      this.#resolved.set(ref, r);
    }
    return r ?? deduced(value);
  }

  /** The schema's type, or null when it is deduced from the value. */
  #resolveSchema(ref: Schema): Resolved | null {
    const s = this.#deref(ref);
    if (!s) return LEAF;
    if (s['x-kubernetes-int-or-string']) return LEAF;
    if (s.type === 'array' || s.items) return this.#listType(s);
    if (s.properties || s.additionalProperties) {
      return { kind: 'map', fields: s.properties, elem: s.additionalProperties, atomic: s['x-kubernetes-map-type'] === 'atomic' };
    }
    if (s['x-kubernetes-preserve-unknown-fields'] || s.type === 'object') return null;
    return LEAF;
  }
}

/** A schemaless node: maps granular, lists atomic. */
function deduced(value: unknown): Resolved {
  if (isPlainObject(value)) return DEDUCED_MAP;
  if (Array.isArray(value)) return DEDUCED_LIST;
  return LEAF;
}

/** List semantics: list-type wins; else patch strategy `merge` gives a map-list (merge key) or a set. */
function listType(s: Schema): ListT {
  const elem = s.items;
  const mergeKey = s['x-kubernetes-patch-merge-key'];
  const lt = s['x-kubernetes-list-type'];
  if (lt === 'atomic' || lt === 'set') return { kind: 'list', elem, rel: lt, keys: [] };
  if (lt === 'map') return { kind: 'list', elem, rel: 'map', keys: s['x-kubernetes-list-map-keys'] ?? (mergeKey ? [mergeKey] : []) };
  const strategies = (s['x-kubernetes-patch-strategy'] ?? '').split(',');
  if (strategies.includes('merge')) return { kind: 'list', elem, rel: mergeKey ? 'map' : 'set', keys: mergeKey ? [mergeKey] : [] };
  return { kind: 'list', elem, rel: 'atomic', keys: [] };
}


/** SMD's `listItemToPathElement`. Throws TypedError (message without the path prefix). */
function listItemPE(t: ListT, index: number, item: unknown): PathElement {
  if (t.rel === 'atomic') return indexPE(index);
  if (t.rel === 'map' && t.keys.length > 0) {
    if (item === null || item === undefined) throw new TypedError('associative list with keys may not have a null element');
    if (!isPlainObject(item)) throw new TypedError('associative list with keys may not have non-map elements');
    return keyPE(
      t.keys.map((name) => {
        const value = getOwn(item, name) ?? t.keyDefaults?.get(name);
        if (value === undefined) throw new TypedError(`associative list with keys has an element that omits key field ${JSON.stringify(name)} (and doesn't have default value)`);
        return { name, value };
      }),
    );
  }
  if (isPlainObject(item)) throw new TypedError("associative list without keys has an element that's a map type");
  if (Array.isArray(item)) throw new TypedError('not supported: associative list with lists as elements');
  if (item === null || item === undefined) throw new TypedError("associative list without keys has an element that's an explicit null");
  return valuePE(item);
}

/** A list's path elements, their serialized keys (computed once), and the items by key. */
function itemPEs(t: ListT, list: readonly unknown[], path: Path): { pes: PathElement[]; keys: string[]; byKey: Map<string, unknown> } {
  const pes: PathElement[] = [];
  const keys: string[] = [];
  const byKey = new Map<string, unknown>();
  list.forEach((item, i) => {
    let pe: PathElement;
    try {
      pe = listItemPE(t, i, item);
    } catch (e) {
      throw new TypedError(`${pathString(path)}: element ${i}: ${e instanceof Error ? e.message : String(e)}`);
    }
    const k = serializePE(pe);
    if (byKey.has(k)) throw new TypedError(`${pathString(path)}: duplicate entries for key ${peString(pe)}`);
    byKey.set(k, item);
    pes.push(pe);
    keys.push(k);
  });
  return { pes, keys, byKey };
}

const asList = (v: unknown): readonly unknown[] | undefined => (Array.isArray(v) ? v : undefined);
const asMap = (v: unknown): Record<string, unknown> | undefined => (isPlainObject(v) ? v : undefined);

function childRef(t: MapT, key: string): { ref: TypeRef; declared: boolean } {
  const f = t.fields && hasOwn(t.fields, key) ? t.fields[key] : undefined;
  return f ? { ref: f, declared: true } : { ref: t.elem, declared: false };
}

// ---------------------------------------------------------------------------------------------
// ToFieldSet
// ---------------------------------------------------------------------------------------------

/** The set of paths an object sets (SMD's `ToFieldSet`). Throws TypedError on bad list items. */
export function toFieldSet(ts: TypedSchema, value: unknown): FieldSet {
  const set = FieldSet.empty();
  walkToSet(ts, value, ts.root, [], set);
  return set;
}

function walkToSet(ts: TypedSchema, v: unknown, ref: TypeRef, path: Path, set: FieldSet): void {
  checkDepth(path.length + 1);
  const t = ts.resolve(ref, v);
  if (t.kind === 'leaf' || (t.kind === 'list' && t.rel === 'atomic') || (t.kind === 'map' && t.atomic)) {
    set.insert(path);
    return;
  }
  if (t.kind === 'list') {
    const list = asList(v);
    if (!list) return;
    const { pes } = itemPEs(t, list, path);
    list.forEach((item, i) => {
      const p = [...path, pes[i]!];
      walkToSet(ts, item, t.elem, p, set);
      set.insert(p);
    });
    return;
  }
  const m = asMap(v);
  if (!m) return;
  for (const [k, val] of Object.entries(m)) {
    const { ref: cr, declared } = childRef(t, k);
    const p = [...path, memberPE(t, k)];
    walkToSet(ts, val, cr, p, set);
    if (!declared) set.insert(p);
  }
}

// ---------------------------------------------------------------------------------------------
// Merge and Compare (the merging walker)
// ---------------------------------------------------------------------------------------------

/** Called on leaves (`rule`) and, after descending, on non-leaf nodes (`post`). */
interface WalkHooks {
  rule(lhs: unknown, rhs: unknown, path: Path): unknown;
  post?(lhs: unknown, rhs: unknown, path: Path): void;
  /**
   * Subtrees equal on both sides are not walked: for hooks that report nothing for them and
   * whose output is not used (Compare).
   */
  skipEqual?: boolean;
}

const isEmptyList = (l: readonly unknown[] | undefined): boolean => !l || l.length === 0;
const isEmptyMap = (m: Record<string, unknown> | undefined): boolean => !m || Object.keys(m).length === 0;

/** Walks lhs and rhs together; returns the merged output (undefined for none). */
function mergeWalk(ts: TypedSchema, lhs: unknown, rhs: unknown, ref: TypeRef, path: PathElement[], hooks: WalkHooks): unknown {
  checkDepth(path.length + 1);
  const t = ts.resolve(ref, rhs !== undefined ? rhs : lhs);
  if (t.kind === 'leaf') return hooks.rule(lhs, rhs, path);
  let out: unknown;
  if (t.kind === 'list') {
    const l = asList(lhs);
    const r = asList(rhs);
    if (t.rel === 'atomic' || (isEmptyList(l) && isEmptyList(r))) return hooks.rule(lhs, rhs, path);
    // Equal on both sides: the walk would find nothing to report (hooks that say so) but the
    // errors of item keys, which the one-sided check finds as the walk would.
    if (hooks.skipEqual && l && r && jsonEqual(l, r)) {
      if (ts.mayFail(ref)) checkListItems(ts, t, l, path);
      return undefined;
    }
    out = mergeListItems(ts, t, l, r, path, hooks);
  } else {
    const l = asMap(lhs);
    const r = asMap(rhs);
    if (t.atomic || (isEmptyMap(l) && isEmptyMap(r))) return hooks.rule(lhs, rhs, path);
    if (hooks.skipEqual && l && r && jsonEqual(l, r)) {
      if (ts.mayFail(ref)) checkMapItems(ts, t, l, path);
      return undefined;
    }
    out = mergeMapItems(ts, t, l, r, path, hooks);
  }
  if (hooks.post) hooks.post(lhs, rhs, path);
  return out;
}

/**
 * The TypedErrors a walk of two equal values would throw, found in the left one (its member order
 * is the walk's; equal lists have the same items in the same order, so the same item-key errors
 * come first): the walk checks each list's item keys (itemPEs) and descends into every member and
 * item, and nothing else can fail. Only types that may fail are descended into.
 */
function checkValue(ts: TypedSchema, v: unknown, ref: TypeRef, path: PathElement[]): void {
  checkDepth(path.length + 1);
  if (!ts.mayFail(ref)) return;
  const t = ts.resolve(ref, v);
  if (t.kind === 'list') {
    const l = asList(v);
    if (t.rel !== 'atomic' && !isEmptyList(l)) checkListItems(ts, t, l!, path);
  } else if (t.kind === 'map') {
    const m = asMap(v);
    if (!t.atomic && !isEmptyMap(m)) checkMapItems(ts, t, m!, path);
  }
}

function checkListItems(ts: TypedSchema, t: ListT, list: readonly unknown[], path: PathElement[]): void {
  const { pes } = itemPEs(t, list, path);
  if (!ts.mayFail(t.elem)) return;
  for (let i = 0; i < list.length; i++) {
    path.push(pes[i]!);
    checkValue(ts, list[i], t.elem, path);
    path.pop();
  }
}

function checkMapItems(ts: TypedSchema, t: MapT, m: Record<string, unknown>, path: PathElement[]): void {
  for (const k of Object.keys(m)) {
    const f = t.fields && hasOwn(t.fields, k) ? t.fields[k] : undefined;
    const ref = f ?? t.elem;
    if (!ts.mayFail(ref)) continue;
    path.push(memberPE(t, k));
    checkValue(ts, m[k], ref, path);
    path.pop();
  }
}

function mergeMapItems(
  ts: TypedSchema,
  t: MapT,
  lhs: Record<string, unknown> | undefined,
  rhs: Record<string, unknown> | undefined,
  path: PathElement[],
  hooks: WalkHooks,
): unknown {
  let out: Record<string, unknown> | undefined;
  const member = (k: string): void => {
    const lv = lhs && getOwn(lhs, k);
    const rv = rhs && getOwn(rhs, k);
    if (lv === undefined && rv === undefined) return;
    const f = t.fields && hasOwn(t.fields, k) ? t.fields[k] : undefined;
    // The walk shares one path array, pushed and popped (hooks never keep it).
    path.push(memberPE(t, k));
    const v = mergeWalk(ts, lv, rv, f ?? t.elem, path, hooks);
    path.pop();
    if (v !== undefined) setMember((out ??= {}), k, v);
  };
  if (lhs) for (const k of Object.keys(lhs)) member(k);
  if (rhs) for (const k of Object.keys(rhs)) if (!lhs || !hasOwn(lhs, k)) member(k);
  return out;
}

/** SMD's list merge, including its ordering of shared, lhs-only and rhs-only items. */
function mergeListItems(
  ts: TypedSchema,
  t: ListT,
  lhs: readonly unknown[] | undefined,
  rhs: readonly unknown[] | undefined,
  path: PathElement[],
  hooks: WalkHooks,
): unknown {
  const R = itemPEs(t, rhs ?? [], path);
  const L = itemPEs(t, lhs ?? [], path);
  const out: unknown[] = [];
  const item = (pe: PathElement, l: unknown, r: unknown): void => {
    path.push(pe);
    const v = mergeWalk(ts, l, r, t.elem, path, hooks);
    path.pop();
    if (v !== undefined) out.push(v);
  };
  // Linear in both lists: keys are serialized once, and the shared items are consumed through an
  // index (Array.shift made a 25,000-item list quadratic: 1 s for any write to such an object).
  const shared = R.keys.filter((k) => L.byKey.has(k));
  let sharedAt = 0;
  let nextShared: string | undefined = shared[sharedAt++];
  const advance = (): void => {
    nextShared = shared[sharedAt++];
  };
  let li = 0;
  let ri = 0;
  while (li < L.pes.length || ri < R.pes.length) {
    if (li < L.pes.length && ri < R.pes.length) {
      const k = L.keys[li]!;
      if (k === R.keys[ri]) {
        item(L.pes[li]!, L.byKey.get(k), R.byKey.get(k));
        li++;
        ri++;
        advance();
        continue;
      }
      if (R.byKey.has(k) && nextShared !== undefined && nextShared !== k) {
        li++; // a shared item, but not the one wanted in this round
        continue;
      }
    }
    if (li < L.pes.length) {
      const k = L.keys[li]!;
      if (!R.byKey.has(k)) {
        item(L.pes[li]!, L.byKey.get(k), undefined);
        li++;
        continue;
      }
    }
    if (ri < R.pes.length) {
      const k = R.keys[ri]!;
      item(R.pes[ri]!, L.byKey.get(k), R.byKey.get(k));
      ri++;
      if (nextShared !== undefined && nextShared === k) advance();
    }
  }
  return out.length > 0 ? out : undefined;
}

/** `lhs` merged with `rhs` (rhs wins on leaves), SMD's `TypedValue.Merge`. */
export function mergeObjects(ts: TypedSchema, lhs: unknown, rhs: unknown): unknown {
  return mergeWalk(ts, lhs, rhs, ts.root, [], { rule: (l, r) => (r !== undefined ? r : l) });
}

export interface Comparison {
  added: FieldSet;
  modified: FieldSet;
  removed: FieldSet;
}

/**
 * What changed from `lhs` to `rhs` (SMD's `TypedValue.Compare`). `skipEqual` false walks equal
 * subtrees too, as SMD does (the tests' reference for the shortcut).
 */
export function compareObjects(ts: TypedSchema, lhs: unknown, rhs: unknown, skipEqual = true): Comparison {
  const c: Comparison = { added: FieldSet.empty(), modified: FieldSet.empty(), removed: FieldSet.empty() };
  mergeWalk(ts, lhs, rhs, ts.root, [], {
    skipEqual,
    rule(l, r, path) {
      if (l === undefined) c.added.insert(path);
      else if (r === undefined) c.removed.insert(path);
      else if (!jsonEqual(l, r)) c.modified.insert(path);
      return undefined;
    },
    post(l, r, path) {
      if (l === undefined) c.added.insert(path);
      else if (r === undefined) c.removed.insert(path);
    },
  });
  return c;
}

export function isSame(c: Comparison): boolean {
  return c.added.isEmpty() && c.modified.isEmpty() && c.removed.isEmpty();
}

/** Drops the comparison's paths under `ignored` (SMD's `Comparison.ExcludeFields`). */
export function excludeFields(c: Comparison, ignored: FieldSet): Comparison {
  if (ignored.isEmpty()) return c;
  return {
    added: c.added.recursiveDifference(ignored),
    modified: c.modified.recursiveDifference(ignored),
    removed: c.removed.recursiveDifference(ignored),
  };
}

// ---------------------------------------------------------------------------------------------
// A create's FieldsV1, directly
// ---------------------------------------------------------------------------------------------

/** A node's FieldsV1 value: `{}` for a member without children, `"."` first for one with them. */
type V1 = Record<string, unknown>;

/** Whether the rule hook of compareObjects counts a leaf as added or modified (a member). */
const changed = (l: unknown, r: unknown): boolean => l === undefined || (r !== undefined && !jsonEqual(l, r));

/** A list item to walk: its path element, and its value on each side. */
interface ItemWalk {
  pe: PathElement;
  l: unknown;
  r: unknown;
}

/** Characters whose UTF-16 order differs from their UTF-8 byte order (surrogates and above). */
const ABOVE_SURROGATES = /[\ud800-\uffff]/;
const byCodeUnits = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Member names in SMD's order (Go's byte order): compared as UTF-16 code units, which order
 * alike below U+D800, and not sorted at all when they already are in order.
 */
function sortNames(keys: string[]): void {
  let sorted = true;
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]!;
    if (ABOVE_SURROGATES.test(k)) {
      keys.sort(compareStrings);
      return;
    }
    if (i > 0 && keys[i - 1]! > k) sorted = false;
  }
  if (!sorted) keys.sort(byCodeUnits);
}

/**
 * compareObjects' walk, keeping only what the created set needs: each node's FieldsV1 value, or
 * undefined when neither it nor anything under it was added or modified. The parent passes the
 * parts of the ignored set (dropped with everything beneath) and of the strip set (members that
 * lose their membership only) that lie under this node, and whether this node is stripped.
 * Children are walked in SMD's order, so each value is built in its final order. Errors
 * (TypedError) are compareObjects': a dropped subtree is still walked for them.
 */
function createWalk(ts: TypedSchema, lhs: unknown, rhs: unknown, ref: TypeRef, path: PathElement[], ign: FieldSet | undefined, strip: FieldSet | undefined, stripped: boolean): V1 | undefined {
  checkDepth(path.length + 1);
  const t = ts.resolve(ref, rhs !== undefined ? rhs : lhs);
  if (t.kind === 'leaf') return !stripped && changed(lhs, rhs) ? {} : undefined;
  // compareObjects' post hook: a node the left side lacks was added.
  const member = !stripped && lhs === undefined;
  let out: V1 | undefined;
  const child = (pe: PathElement, lv: unknown, rv: unknown, childRef: TypeRef): void => {
    const key = pe.key;
    path.push(pe);
    const v = createWalk(ts, lv, rv, childRef, path, ign?.childByKey(key), strip?.childByKey(key), strip !== undefined && strip.hasMemberKey(key));
    path.pop();
    if (v && !(ign && ign.hasMemberKey(key))) (out ??= member ? { '.': {} } : {})[key] = v;
  };
  if (t.kind === 'list') {
    const l = asList(lhs);
    const r = asList(rhs);
    if (t.rel === 'atomic' || (isEmptyList(l) && isEmptyList(r))) return !stripped && changed(lhs, rhs) ? {} : undefined;
    if (l && r && !ts.mayFail(ref) && jsonEqual(l, r)) return undefined;
    const R = itemPEs(t, r ?? [], path);
    const L = itemPEs(t, l ?? [], path);
    const items: ItemWalk[] = [];
    for (let i = 0; i < R.pes.length; i++) items.push({ pe: R.pes[i]!, l: L.byKey.get(R.keys[i]!), r: R.byKey.get(R.keys[i]!) });
    for (let i = 0; i < L.pes.length; i++) if (!R.byKey.has(L.keys[i]!)) items.push({ pe: L.pes[i]!, l: L.byKey.get(L.keys[i]!), r: undefined });
    if (items.length > 1) items.sort((a, b) => comparePE(a.pe, b.pe));
    for (const it of items) child(it.pe, it.l, it.r, t.elem);
  } else {
    const l = asMap(lhs);
    const r = asMap(rhs);
    if (t.atomic || (isEmptyMap(l) && isEmptyMap(r))) return !stripped && changed(lhs, rhs) ? {} : undefined;
    if (l && r && !ts.mayFail(ref) && jsonEqual(l, r)) return undefined;
    let keys = r ? Object.keys(r) : [];
    if (l) {
      const lk = Object.keys(l);
      if (lk.length > 0) keys = r ? [...lk, ...keys.filter((k) => !hasOwn(l, k))] : lk;
    }
    // Members are field elements: SMD orders them by name.
    if (keys.length > 1) sortNames(keys);
    for (const k of keys) {
      const lv = l && getOwn(l, k);
      const rv = r && getOwn(r, k);
      if (lv === undefined && rv === undefined) continue;
      const f = t.fields && hasOwn(t.fields, k) ? t.fields[k] : undefined;
      child(memberPE(t, k), lv, rv, f ?? t.elem);
    }
  }
  return out ?? (member ? {} : undefined);
}

/**
 * The FieldsV1 a non-apply write records for its manager when there is no live object and no
 * manager yet (a create): the paths compareObjects(empty, next) finds added or modified, minus
 * `ignored` and everything beneath it, minus `strip`'s members, in SMD's order, without building
 * FieldSets. Undefined when nothing is left. Throws TypedError as compareObjects does.
 */
export function createdFieldsV1(ts: TypedSchema, empty: unknown, next: unknown, ignored: FieldSet, strip: FieldSet): V1 | undefined {
  return createWalk(ts, empty, next, ts.root, [], ignored, strip, false);
}

// ---------------------------------------------------------------------------------------------
// RemoveItems
// ---------------------------------------------------------------------------------------------

/**
 * `value` without the members of `toRemove` (SMD's `RemoveItems`): a removed map key, struct field,
 * list item or set item disappears; undefined stands for SMD's nil (an emptied list or map).
 */
export function removeItems(ts: TypedSchema, value: unknown, toRemove: FieldSet): unknown {
  return removeWalk(ts, value, toRemove, ts.root, []);
}

function removeWalk(ts: TypedSchema, v: unknown, toRemove: FieldSet, ref: TypeRef, path: Path): unknown {
  checkDepth(path.length + 1);
  const t = ts.resolve(ref, v);
  if (t.kind === 'leaf') return v;
  if (t.kind === 'list') {
    const list = asList(v);
    if (!list || list.length === 0 || t.rel === 'atomic') return undefined;
    const { pes } = itemPEs(t, list, path);
    const out: unknown[] = [];
    list.forEach((item, i) => {
      const pe = pes[i]!;
      if (toRemove.has([pe])) return;
      const sub = toRemove.withPrefix(pe);
      const next = sub.isEmpty() ? item : removeWalk(ts, item, sub, t.elem, [...path, pe]);
      out.push(next === undefined ? null : next);
    });
    return out.length > 0 ? out : undefined;
  }
  const m = asMap(v);
  if (!m || Object.keys(m).length === 0 || t.atomic) return undefined;
  const out: Record<string, unknown> = {};
  for (const [k, val] of Object.entries(m)) {
    const pe = memberPE(t, k);
    if (toRemove.has([pe])) continue;
    const sub = toRemove.withPrefix(pe);
    const next = sub.isEmpty() ? val : removeWalk(ts, val, sub, childRef(t, k).ref, [...path, pe]);
    // SMD keeps the key with a null value; a null becomes an unset field once converted back to
    // the typed object, so it is dropped here.
    if (next !== undefined && next !== null) setMember(out, k, next);
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/** Removes null members recursively (what conversion to the typed object does to them). */
export function dropNulls(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(dropNulls);
  if (isPlainObject(v)) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) if (x !== null && x !== undefined) setMember(out, k, dropNulls(x));
    return out;
  }
  return v;
}

/** The set of paths `obj` sets under `schema` (SMD's ToFieldSet). */
export function fieldSetOf(obj: unknown, schema: Schema, defs: Definitions): FieldSet {
  return toFieldSet(new TypedSchema(schema, defs), obj);
}
