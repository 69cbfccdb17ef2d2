/**
 * LimitRange defaults as kube 1.24 has them (pkg/apis/core/v1 `SetDefaults_LimitRangeItem`).
 * Quantities are copied as they were written; `canonicalResourceList` (quantity.ts) gives every
 * ResourceList kube's stored form (`SetDefaults_ResourceList`).
 */
import { type JsonObject, isJsonObject, setMember } from '../../../json.js';

/** Fills `to` with the entries of `from` that `to` lacks. */
function fillMissing(from: unknown, to: JsonObject): void {
  if (!isJsonObject(from)) return;
  for (const k of Object.keys(from)) if (!Object.hasOwn(to, k)) setMember(to, k, from[k]);
}

/** The member `k` as an object, created when absent (Go's `make(ResourceList)` on a nil map). */
function ensureMap(o: JsonObject, k: string): JsonObject {
  const cur = o[k];
  if (isJsonObject(cur) && Object.hasOwn(o, k)) return cur;
  const fresh: JsonObject = {};
  o[k] = fresh;
  return fresh;
}

/**
 * kube's `SetDefaults_LimitRangeItem` on one `spec.limits[]` item: for `Container` limits, a
 * missing default limit is the max, a missing default request is the default limit, else the min.
 */
export function setDefaultsLimitRangeItem(item: JsonObject): void {
  if (item['type'] !== 'Container') return;
  const def = ensureMap(item, 'default');
  const defReq = ensureMap(item, 'defaultRequest');
  fillMissing(item['max'], def);
  fillMissing(def, defReq);
  fillMissing(item['min'], defReq);
  // Go's empty maps are omitted when written (omitempty).
  if (Object.keys(def).length === 0) delete item['default'];
  if (Object.keys(defReq).length === 0) delete item['defaultRequest'];
}

/** kube's `SetObjectDefaults_LimitRange` (ResourceLists aside: see the module note). */
export function setDefaultsLimitRange(obj: JsonObject): void {
  const spec = obj['spec'];
  if (!isJsonObject(spec) || !Array.isArray(spec['limits'])) return;
  for (const item of spec['limits']) if (isJsonObject(item)) setDefaultsLimitRangeItem(item);
}
