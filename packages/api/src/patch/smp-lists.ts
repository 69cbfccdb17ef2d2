/**
 * Strategic merge patch list handling shared with strategic-merge-patch.ts: the directive names,
 * mergepatch's errors, and kube's list ordering (`normalizeElementOrder`, `mergeSortedSlice`,
 * `validatePatchWithSetOrderList`), written over decoded JSON values.
 *
 * kube finds items by scanning lists (`index`, `findMapInSliceBasedOnKeyValue`), which makes a
 * merge quadratic in the list's length: 12,000 `secrets` with a `$setElementOrder` held the event
 * loop for 15 s. Here every lookup goes through an index built once per list ({@link ValueIndex},
 * {@link KeyIndex}), answering exactly what the scan answers, errors included.
 */
import { type JsonObject, PatchError, goFormat, goSprintS, goTypeName, isObject } from './errors.js';
import { getOwn, hasOwn as hasOwnMember, setMember } from '../json.js';

export const DIRECTIVE = '$patch';
export const RETAIN_KEYS = '$retainKeys';
export const DELETE_FROM_PRIMITIVE_LIST = '$deleteFromPrimitiveList';
export const SET_ELEMENT_ORDER = '$setElementOrder';

export type Kind = 'object' | 'array' | 'string' | 'number' | 'boolean' | 'null';

export const hasOwn = (o: JsonObject, k: string): boolean => hasOwnMember(o, k);

export function kindOf(v: unknown): Kind {
  if (v === null || v === undefined) return 'null';
  if (Array.isArray(v)) return 'array';
  if (isObject(v)) return 'object';
  return typeof v === 'number' ? 'number' : typeof v === 'boolean' ? 'boolean' : 'string';
}

/** Go's `==` on two decoded JSON values held in interfaces (maps and slices never compare equal). */
export function goEq(a: unknown, b: unknown): boolean {
  if (a === undefined) a = null;
  if (b === undefined) b = null;
  return (typeof a !== 'object' || a === null) && a === b;
}

// --- errors (k8s.io/apimachinery/pkg/util/mergepatch) -------------------------------------------

export const errBadPatchFormatForPrimitiveList = (): PatchError => new PatchError('invalid patch format of primitive list', 400);
export const errBadPatchFormatForRetainKeys = (): PatchError => new PatchError('invalid patch format of retainKeys', 400);
export const errBadPatchFormatForSetElementOrderList = (): PatchError => new PatchError('invalid patch format of setElementOrder list', 400);
export const errNoListOfLists = (): PatchError => new PatchError('lists of lists are not supported', 422);
export const errNoMergeKey = (m: unknown, k: string): PatchError =>
  new PatchError(`map: ${goFormat(isObject(m) ? m : {})} does not contain declared merge key: ${k}`, 500);
export const errBadArgType = (expected: string, actual: unknown): PatchError =>
  new PatchError(`expected a ${expected}, but received a ${goTypeName(actual)}`, 500);
export const errBadPatchType = (t: unknown, m: JsonObject): PatchError => new PatchError(`unknown patch type: ${goSprintS(t)} in map: ${goFormat(m)}`, 500);
export const MAP_TYPE = 'map[string]interface {}';
export const SLICE_TYPE = '[]interface {}';

// --- helpers ------------------------------------------------------------------------------------

export const isDirectiveKey = (k: string): boolean =>
  k === DIRECTIVE || k === RETAIN_KEYS || k.startsWith(SET_ELEMENT_ORDER) || k.startsWith(DELETE_FROM_PRIMITIVE_LIST);

/** A patch value with every directive key removed, at any depth. */
export function strip(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(strip);
  if (!isObject(v)) return v;
  const out: JsonObject = {};
  for (const [k, x] of Object.entries(v)) if (!isDirectiveKey(k)) setMember(out, k, strip(x));
  return out;
}

/** kube's `extractKey`: `$prefix/field` → `field`. */
export function extractKey(s: string, prefix: string): string {
  const slash = s.indexOf('/');
  if (slash < 0 || s.slice(0, slash) !== prefix) {
    throw prefix === DELETE_FROM_PRIMITIVE_LIST ? errBadPatchFormatForPrimitiveList() : errBadPatchFormatForSetElementOrderList();
  }
  return s.slice(slash + 1);
}

/** kube's `sliceElementType`: the one element kind of all the lists. */
export function sliceElementKind(...lists: unknown[][]): Kind {
  let prev: Kind | undefined;
  for (const list of lists) {
    for (const v of list) {
      const k = kindOf(v);
      if (prev === undefined) {
        prev = k;
        if (k === 'array') throw errNoListOfLists();
      } else if (prev !== k) {
        throw new PatchError(`list element types are not identical: ${goFormat(lists)}`, 500);
      }
    }
  }
  if (prev === undefined) throw new PatchError('no elements in any of the given slices', 500);
  return prev;
}

/** kube's `findMapInSliceBasedOnKeyValue`: the index of the map whose merge key equals `value`. */
export function findByKey(list: unknown[], key: string, value: unknown): number {
  for (let i = 0; i < list.length; i++) {
    const m = list[i];
    if (!isObject(m)) throw new PatchError(`value for key ${i} is not a map`, 500);
    if (hasOwn(m, key) && goEq(m[key], value)) return i;
  }
  return -1;
}

/**
 * The one value {@link goEq} can find a match for, as a Map key: `undefined` is `null`; maps,
 * slices (never equal in Go) and NaN (never `===`) have none.
 */
function matchable(v: unknown): { ok: boolean; key: unknown } {
  if (v === undefined || v === null) return { ok: true, key: null };
  if (typeof v === 'object' || Number.isNaN(v)) return { ok: false, key: undefined };
  return { ok: true, key: v };
}

/** The first position of each value in a list, compared as {@link goEq} compares. */
export class ValueIndex {
  readonly #first = new Map<unknown, number>();

  /** Indexes `list`, each item by `get(item)` (the item itself by default). */
  constructor(list: readonly unknown[], get: (item: unknown) => unknown = (v) => v) {
    for (let i = 0; i < list.length; i++) this.add(get(list[i]), i);
  }

  /** Records `value` at `at` unless an earlier position holds it. */
  add(value: unknown, at: number): void {
    const m = matchable(value);
    if (m.ok && !this.#first.has(m.key)) this.#first.set(m.key, at);
  }

  /** The first position whose value {@link goEq} `value`, or -1. */
  indexOf(value: unknown): number {
    const m = matchable(value);
    return m.ok ? (this.#first.get(m.key) ?? -1) : -1;
  }
}

/**
 * {@link findByKey} over one list, answered in constant time: the first map holding `key` with an
 * equal value, or kube's "not a map" error when an item that is not a map comes first.
 */
export class KeyIndex {
  readonly #index = new ValueIndex([]);
  #firstNonMap = -1;
  readonly #key: string;

  constructor(list: readonly unknown[], key: string) {
    this.#key = key;
    for (let i = 0; i < list.length; i++) this.add(list[i], i);
  }

  /** Records the item at `at` (positions must be added in increasing order). */
  add(item: unknown, at: number): void {
    if (!isObject(item)) {
      if (this.#firstNonMap < 0) this.#firstNonMap = at;
      return;
    }
    if (hasOwn(item, this.#key)) this.#index.add(item[this.#key], at);
  }

  /** What {@link findByKey} answers for `value` on the indexed list. */
  find(value: unknown): number {
    const at = this.#index.indexOf(value);
    if (this.#firstNonMap >= 0 && (at < 0 || at > this.#firstNonMap)) throw new PatchError(`value for key ${this.#firstNonMap} is not a map`, 500);
    return at;
  }
}

export function validateMergeKeyInLists(mergeKey: string, ...lists: unknown[][]): void {
  for (const list of lists) {
    for (const item of list) {
      if (!isObject(item)) throw errBadArgType(MAP_TYPE, item);
      if (!hasOwn(item, mergeKey)) throw errNoMergeKey(item, mergeKey);
    }
  }
}

/** kube's `index` over `list`: the position of a value, comparing merge key values for maps. */
export function createIndexIn(list: readonly unknown[], mergeKey: string, kind: Kind): (val: unknown) => number {
  const get = (item: unknown): unknown => (kind === 'object' ? (isObject(item) ? getOwn(item, mergeKey) : null) : item);
  const index = new ValueIndex(list, get);
  return (val) => index.indexOf(get(val));
}

/** kube's `normalizeSliceOrder`: sorts `toSort` by `order`, delete directives last. */
export function normalizeSliceOrder(toSort: unknown[], order: unknown[], mergeKey: string, kind: Kind): unknown[] {
  let items = toSort;
  let toDelete: unknown[] = [];
  if (kind === 'object') {
    validateMergeKeyInLists(mergeKey, toSort, order);
    items = toSort.filter((v) => !(isObject(v) && v[DIRECTIVE] === 'delete'));
    toDelete = toSort.filter((v) => isObject(v) && v[DIRECTIVE] === 'delete');
  }
  const indexIn = createIndexIn(order, mergeKey, kind);
  const keyed = items.map((item) => ({ item, at: indexIn(item) }));
  keyed.sort((a, b) => (a.at >= 0 && b.at >= 0 ? a.at - b.at : 0));
  return [...keyed.map((k) => k.item), ...toDelete];
}

/**
 * kube's `mergeSortedSlice`: interleaves server-only items (`left`) with patch items (`right`); a
 * left item goes first only when both are in `serverOrder` and it comes earlier there.
 */
export function mergeSortedSlice(left: unknown[], right: unknown[], serverOrder: unknown[], mergeKey: string, kind: Kind): unknown[] {
  const indexIn = createIndexIn(serverOrder, mergeKey, kind);
  const out: unknown[] = [];
  let i = 0;
  let j = 0;
  while (i < left.length || j < right.length) {
    if (i >= left.length) out.push(right[j++]);
    else if (j >= right.length) out.push(left[i++]);
    else {
      const li = indexIn(left[i]);
      const ri = indexIn(right[j]);
      if (li >= 0 && ri >= 0 && li < ri) out.push(left[i++]);
      else out.push(right[j++]);
    }
  }
  return out;
}

export function normalizeElementOrder(
  patchItems: unknown[],
  serverOnly: unknown[],
  patchOrder: unknown[],
  serverOrder: unknown[],
  mergeKey: string,
  kind: Kind,
): unknown[] {
  const p = normalizeSliceOrder(patchItems, patchOrder, mergeKey, kind);
  const s = normalizeSliceOrder(serverOnly, serverOrder, mergeKey, kind);
  return mergeSortedSlice(s, p, serverOrder, mergeKey, kind);
}

/** Splits `list` into the items present in `by` and the rest (by value, or by merge key). */
export function partition(list: unknown[], by: unknown[], mergeKey: string): [unknown[], unknown[]] {
  const inBy: unknown[] = [];
  const rest: unknown[] = [];
  const byValue = mergeKey === '' ? new ValueIndex(by) : undefined;
  const byKey = mergeKey === '' ? undefined : new KeyIndex(by, mergeKey);
  for (const v of list) {
    let found: boolean;
    if (byValue) {
      found = byValue.indexOf(v) >= 0;
    } else {
      if (!isObject(v)) throw errBadArgType(MAP_TYPE, v);
      if (!hasOwn(v, mergeKey)) throw errNoMergeKey(v, mergeKey);
      found = byKey!.find(v[mergeKey]) >= 0;
    }
    (found ? inBy : rest).push(v);
  }
  return [inBy, rest];
}

/**
 * kube's `validatePatchWithSetOrderList`: the patch list's items (deletions and other directive
 * items aside) must appear in the `$setElementOrder` list, in the same relative order.
 */
export function validatePatchWithSetOrderList(patchList: unknown[], order: unknown[], mergeKey: string): void {
  if (order.length === 0 || patchList.length === 0) return;
  let items = patchList;
  if (mergeKey !== '') {
    for (const v of patchList) if (!isObject(v)) throw errBadArgType(MAP_TYPE, v);
    items = patchList.filter((v) => !(isObject(v) && v[DIRECTIVE] === 'delete'));
  }
  const equal = (l: unknown, r: unknown): boolean => {
    if (mergeKey === '') return goEq(l, r);
    if (!isObject(l)) throw errBadArgType(MAP_TYPE, l);
    if (!isObject(r)) throw errBadArgType(MAP_TYPE, r);
    if (!hasOwn(l, mergeKey)) throw errNoMergeKey(l, mergeKey);
    if (!hasOwn(r, mergeKey)) throw errNoMergeKey(r, mergeKey);
    return goEq(l[mergeKey], r[mergeKey]);
  };
  let p = 0;
  let o = 0;
  while (p < items.length && o < order.length) {
    const item = items[p];
    if (isObject(item) && hasOwn(item, DIRECTIVE)) {
      p++;
      continue;
    }
    if (equal(item, order[o])) p++;
    o++;
  }
  if (p < items.length && o >= order.length) {
    throw new PatchError(
      `The order in patch list:\n${goFormat(patchList)}\n doesn't match ${SET_ELEMENT_ORDER} list:\n${goFormat(order)}\n`,
      500,
    );
  }
}
