/**
 * Strategic merge patch, applied the way kube-apiserver 1.24 applies
 * `application/strategic-merge-patch+json` (k8s.io/apimachinery/pkg/util/strategicpatch,
 * `StrategicMergeMapPatch` with MergeParallelList and IgnoreUnmatchedNulls), driven by the schema's
 * `x-kubernetes-patch-strategy` / `x-kubernetes-patch-merge-key` instead of Go struct tags:
 *
 * - maps merge recursively and a `null` member deletes the key; a key absent from the original
 *   takes the patch value as it is (nested `null`s included, as 1.24 does; decoding drops them);
 * - a value whose JSON type differs from the original's replaces it (decoding then reports a
 *   type mismatch, as kube's does after the patch);
 * - lists with strategy `merge` merge by merge key (lists of maps) or by value (lists of
 *   primitives). Order follows kube's `normalizeElementOrder`: patch items in patch order,
 *   server-only items in server order, interleaved by server order, so an item the server did not
 *   have goes before the server items it meets first (`[a, b]` patched with `[c]` is `[c, a, b]`);
 * - `$setElementOrder/<field>` then orders the merged list; which server-only items it sees, and
 *   where, follows Go's slice aliasing in kube (see `mergeMapSlice`);
 * - other lists, and maps with strategy `replace`, are replaced wholesale;
 * - directives: `$patch` (`replace`/`delete` in maps, where `delete` leaves `{}`; `replace`/`delete`
 *   items in merging lists), `$retainKeys` (in any map), `$setElementOrder/<field>`,
 *   `$deleteFromPrimitiveList/<field>` (1.24: on a list without the merge strategy it replaces the
 *   list). Directive keys never reach the result: values taken from the patch have them stripped
 *   (1.24 copies them and lets typed decoding drop them);
 * - fields the schema does not know are handled as maps without strategy.
 *
 * Errors are {@link PatchError}s with kube's messages and codes. Never mutates its inputs. Keys are
 * data (`__proto__`, `constructor` included): members are read as own members and written with
 * `setMember`.
 */
import { type Schema, propertySchema } from '../schema.js';
import { getOwn, setMember } from '../json.js';
import { type JsonObject, PatchError, cloneJson, isObject } from './errors.js';
import {
  DELETE_FROM_PRIMITIVE_LIST,
  DIRECTIVE,
  RETAIN_KEYS,
  SET_ELEMENT_ORDER,
  SLICE_TYPE,
  errBadArgType,
  errBadPatchFormatForRetainKeys,
  errBadPatchType,
  errNoMergeKey,
  extractKey,
  findByKey,
  goEq,
  hasOwn,
  kindOf,
  normalizeElementOrder,
  partition,
  sliceElementKind,
  strip,
  validatePatchWithSetOrderList,
  KeyIndex,
  ValueIndex,
} from './smp-lists.js';

type Defs = ReadonlyMap<string, Schema>;

/** What kube's LookupPatchMeta answers for one field: its (sub)schema, strategy and merge key. */
interface FieldMeta {
  schema: Schema | undefined;
  strategy: string;
  mergeKey: string;
}

/** A merged list, and the view of the original list kube is left holding (see mergeMapSlice). */
interface Merged {
  list: unknown[];
  view: unknown[];
}

// --- schema lookup ------------------------------------------------------------------------------

function resolve(schema: Schema | undefined, defs: Defs): Schema | undefined {
  let s = schema;
  for (let depth = 0; s?.$ref !== undefined && depth < 64; depth++) s = defs.get(s.$ref);
  return s;
}

/** kube's `extractRetainKeysPatchStrategy`: the strategy besides `retainKeys`. */
function patchStrategy(raw: string | undefined): string {
  const parts = raw ? raw.split(',') : [];
  if (parts.length === 0) return '';
  if (parts.length === 1) return parts[0] === 'retainKeys' ? '' : parts[0]!;
  if (parts.length === 2 && parts[0] === 'retainKeys') return parts[1]!;
  if (parts.length === 2 && parts[1] === 'retainKeys') return parts[0]!;
  throw new PatchError(`unexpected patch strategy: [${parts.join(' ')}]`, 500);
}

/** LookupPatchMetadataForStruct (`slice` false) / LookupPatchMetadataForSlice (`slice` true). */
function lookup(parent: Schema | undefined, key: string, defs: Defs, slice: boolean): FieldMeta {
  const p = resolve(parent, defs);
  const field = (p && propertySchema(p, key)) ?? p?.additionalProperties;
  if (!field) return { schema: undefined, strategy: '', mergeKey: '' };
  const target = resolve(field, defs);
  const strategy = patchStrategy(field['x-kubernetes-patch-strategy'] ?? target?.['x-kubernetes-patch-strategy']);
  const mergeKey = field['x-kubernetes-patch-merge-key'] ?? target?.['x-kubernetes-patch-merge-key'] ?? '';
  return { schema: slice ? target?.items : target, strategy, mergeKey };
}

// --- the merge ----------------------------------------------------------------------------------

class Merger {
  private readonly defs: Defs;

  constructor(defs: Defs) {
    this.defs = defs;
  }

  mergeMap(original: JsonObject, patch: JsonObject, schema: Schema | undefined): JsonObject {
    if (hasOwn(patch, DIRECTIVE)) {
      const directive = patch[DIRECTIVE];
      if (directive === 'replace') return strip(patch) as JsonObject;
      if (directive === 'delete') return {};
      throw errBadPatchType(directive, patch);
    }
    this.applyRetainKeys(original, patch);
    this.mergeOrderedLists(original, patch, schema);

    for (const rawKey of Object.keys(patch)) {
      const patchV = patch[rawKey];
      const isDeleteList = rawKey.startsWith(DELETE_FROM_PRIMITIVE_LIST);
      const k = isDeleteList ? extractKey(rawKey, DELETE_FROM_PRIMITIVE_LIST) : rawKey;
      if (patchV === null || patchV === undefined) {
        delete original[k];
        continue;
      }
      const origV = getOwn(original, k);
      if (!hasOwn(original, k) || kindOf(origV) !== kindOf(patchV)) {
        if (!isDeleteList) setMember(original, k, strip(patchV));
        continue;
      }
      if (isObject(origV) && isObject(patchV)) {
        const meta = lookup(schema, k, this.defs, false);
        setMember(original, k, meta.strategy === 'replace' ? strip(patchV) : this.mergeMap(origV, patchV, meta.schema));
      } else if (Array.isArray(origV) && Array.isArray(patchV)) {
        setMember(original, k, this.mergeSliceHandler(origV, patchV, lookup(schema, k, this.defs, true), isDeleteList).list);
      } else {
        setMember(original, k, patchV);
      }
    }
    return original;
  }

  /** kube's `applyRetainKeysDirective`. */
  private applyRetainKeys(original: JsonObject, patch: JsonObject): void {
    if (!hasOwn(patch, RETAIN_KEYS)) return;
    const list = patch[RETAIN_KEYS];
    delete patch[RETAIN_KEYS];
    if (!Array.isArray(list)) throw errBadPatchFormatForRetainKeys();
    const retained = new ValueIndex(list);
    const keep = (k: string): boolean => retained.indexOf(k) >= 0;
    for (const [k, v] of Object.entries(patch)) {
      if (v === null || k.startsWith(DELETE_FROM_PRIMITIVE_LIST) || k.startsWith(SET_ELEMENT_ORDER)) continue;
      if (!keep(k)) throw errBadPatchFormatForRetainKeys();
    }
    for (const k of Object.keys(original)) if (!keep(k)) delete original[k];
  }

  /** kube's `mergePatchIntoOriginal`: merges each `$setElementOrder/<field>` list with its field. */
  private mergeOrderedLists(original: JsonObject, patch: JsonObject, schema: Schema | undefined): void {
    for (const key of Object.keys(patch)) {
      if (!key.startsWith(SET_ELEMENT_ORDER)) continue;
      const order = patch[key];
      delete patch[key];
      if (!Array.isArray(order)) throw errBadArgType(SLICE_TYPE, order);
      const field = extractKey(key, SET_ELEMENT_ORDER);
      const foundOriginal = hasOwn(original, field);
      const foundPatch = hasOwn(patch, field);
      const originalList = foundOriginal ? original[field] : [];
      const patchList = foundPatch ? patch[field] : [];
      if (!Array.isArray(originalList)) throw errBadArgType(SLICE_TYPE, originalList);
      if (!Array.isArray(patchList)) throw errBadArgType(SLICE_TYPE, patchList);
      const meta = lookup(schema, field, this.defs, true);
      validatePatchWithSetOrderList(patchList, order, meta.mergeKey);

      // `view` is what kube's own reference to the original list holds after the merge: Go's
      // in-place deletes and appends on the shared backing array show through, and kube orders
      // server-only items by that view.
      let merged: unknown[];
      let view: unknown[] = originalList;
      if (foundOriginal && foundPatch) ({ list: merged, view } = this.mergeSliceHandler(originalList, patchList, meta, false));
      else if (foundOriginal) merged = originalList;
      else if (foundPatch) merged = patchList;
      else continue;

      const [patchItems, serverOnly] = partition(merged, order, meta.mergeKey);
      const kind = sliceElementKind(view, patchList);
      const both = normalizeElementOrder(patchItems, serverOnly, order, view, meta.mergeKey, kind);
      setMember(original, field, strip(both));
      delete patch[field];
    }
  }

  private mergeSliceHandler(original: unknown[], patch: unknown[], meta: FieldMeta, isDeleteList: boolean): Merged {
    // As in 1.24, `$deleteFromPrimitiveList` only deletes from a merging list: a list without the
    // merge strategy is replaced by the deletion list (fixed in 1.25, kubernetes#110472).
    if (meta.strategy === 'merge') return this.mergeSlice(original, patch, meta, isDeleteList);
    return { list: strip(patch) as unknown[], view: original };
  }

  /** kube's `mergeSlice`. */
  private mergeSlice(original: unknown[], patch: unknown[], meta: FieldMeta, isDeleteList: boolean): Merged {
    if (original.length === 0 && patch.length === 0) return { list: original, view: original };
    const kind = sliceElementKind(original, patch);
    if (kind !== 'object') {
      if (isDeleteList) {
        const deleted = new ValueIndex(patch);
        return { list: original.filter((v) => deleted.indexOf(v) < 0), view: original };
      }
      // The values of both lists, each once (at its first place).
      const merged: unknown[] = [];
      const seen = new ValueIndex([]);
      for (const v of [...original, ...patch]) {
        if (seen.indexOf(v) >= 0) continue;
        seen.add(v, merged.length);
        merged.push(v);
      }
      const [patchItems, serverOnly] = partition(merged, patch, meta.mergeKey);
      return { list: normalizeElementOrder(patchItems, serverOnly, patch, original, meta.mergeKey, kind), view: original };
    }
    if (meta.mergeKey === '') throw new PatchError('cannot merge lists without merge key for struct', 500);
    return this.mergeMapSlice(original, patch, meta);
  }

  /**
   * kube's `mergeSliceWithSpecialElements` + `mergeSliceWithoutSpecialElements` + ordering, for a
   * list of maps, emulating Go's slice semantics: `backing` is the original's backing array, which
   * `$patch: delete` compacts in place and appends write into. Linear: items are found through
   * indexes by merge key, and the deletions are replayed on the backing array in one pass.
   */
  private mergeMapSlice(original: unknown[], patch: unknown[], meta: FieldMeta): Merged {
    const { mergeKey } = meta;
    const plain: unknown[] = [];
    const deletions: unknown[] = [];
    let replace = false;
    for (const v of patch) {
      const item = v as JsonObject;
      if (!hasOwn(item, DIRECTIVE)) {
        plain.push(v);
        continue;
      }
      const directive = item[DIRECTIVE];
      if (directive === 'delete') {
        if (!hasOwn(item, mergeKey)) throw errNoMergeKey(item, mergeKey);
        deletions.push(item[mergeKey]);
      } else if (directive === 'replace') {
        replace = true; // keep going, to prune the other directive items
      } else if (directive === 'merge') {
        throw new PatchError('merging lists cannot yet be specified in the patch', 500);
      } else {
        throw errBadPatchType(directive, item);
      }
    }
    const { backing, len } = deleteFromBacking(original, mergeKey, deletions);
    // With `$patch: replace` the list to merge into is the patch's plain items, merged with nothing.
    const target = replace ? plain.map(strip) : backing;
    let targetLen = replace ? target.length : len;
    const serverOrder = target.slice(0, targetLen);
    const index = new KeyIndex(serverOrder, mergeKey);
    for (const v of replace ? [] : plain) {
      const item = v as JsonObject;
      if (!hasOwn(item, mergeKey)) throw errNoMergeKey(item, mergeKey);
      let at = index.find(item[mergeKey]);
      // A merge that removed the key from its item (a null merge key) leaves the index stale: scan.
      const hit = at >= 0 ? (target[at] as JsonObject) : undefined;
      if (hit && !(hasOwn(hit, mergeKey) && goEq(hit[mergeKey], item[mergeKey]))) at = findByKey(target.slice(0, targetLen), mergeKey, item[mergeKey]);
      if (at >= 0) {
        target[at] = this.mergeMap(target[at] as JsonObject, item, meta.schema);
      } else {
        target[targetLen] = strip(item);
        index.add(target[targetLen], targetLen);
        targetLen++;
      }
    }
    const merged = target.slice(0, targetLen);
    const patchOrder = replace ? [] : plain;
    const [patchItems, serverOnly] = partition(merged, patchOrder, mergeKey);
    const list = normalizeElementOrder(patchItems, serverOnly, patchOrder, serverOrder, mergeKey, 'object');
    return { list, view: backing.slice(0, original.length) };
  }
}

/**
 * kube's `deleteMatchingEntries` for each value of `deletions` in turn, on a copy of `list` (all
 * maps): every map whose `key` equals the value is removed the way Go's
 * `append(s[:i], s[i+1:]...)` removes it, so the backing array ends with the survivors in order
 * and, past them, what the in-place shifts left behind. One removal leaves position `len - 1`
 * holding the last live item of that moment, so that is recorded instead of shifting.
 */
function deleteFromBacking(list: readonly unknown[], key: string, deletions: readonly unknown[]): { backing: unknown[]; len: number } {
  if (deletions.length === 0) return { backing: list.slice(), len: list.length };
  // Each value's positions, under the position of its first occurrence.
  const positions = new Map<number, number[]>();
  const first = new ValueIndex([]);
  for (let i = 0; i < list.length; i++) {
    const m = list[i] as JsonObject;
    if (!hasOwn(m, key)) continue;
    first.add(m[key], i);
    const at = first.indexOf(m[key]);
    if (at < 0) continue; // a value no deletion can match
    const group = at === i ? [] : positions.get(at)!;
    if (at === i) positions.set(at, group);
    group.push(i);
  }
  const removed = new Uint8Array(list.length);
  // What position p holds once the list is shorter than p + 1: the last live item of that moment.
  const tail: unknown[] = new Array<unknown>(list.length);
  let len = list.length;
  let last = list.length - 1;
  for (const value of deletions) {
    const at = first.indexOf(value);
    const group = at < 0 ? undefined : positions.get(at);
    if (!group) continue;
    positions.delete(at);
    for (const i of group) {
      while (removed[last]) last--;
      tail[len - 1] = list[last];
      removed[i] = 1;
      len--;
    }
  }
  const backing: unknown[] = [];
  for (let i = 0; i < list.length; i++) if (!removed[i]) backing.push(list[i]);
  for (let p = len; p < list.length; p++) backing.push(tail[p]);
  return { backing, len };
}

/**
 * Applies a strategic merge patch (the decoded patch body) to `original` (the current object),
 * using `schema` (the kind's schema, whose `$ref`s resolve through `defs`) for patch strategies and
 * merge keys. A `null` patch changes nothing; any other non-object patch is a 400, as kube decodes
 * the body into a map first.
 */
export function applyStrategicMergePatch(original: unknown, patch: unknown, schema: Schema, defs: ReadonlyMap<string, Schema>): unknown {
  if (patch === null || patch === undefined) return cloneJson(original);
  if (!isObject(patch)) {
    const kind = Array.isArray(patch) ? 'array' : typeof patch === 'boolean' ? 'bool' : typeof patch;
    throw new PatchError(`json: cannot unmarshal ${kind} into Go value of type map[string]interface {}`, 400);
  }
  const doc = isObject(original) ? cloneJson(original) : {};
  return new Merger(defs).mergeMap(doc, cloneJson(patch), schema);
}
