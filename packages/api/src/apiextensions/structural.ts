/**
 * The structural part of a CRD version schema (apiextensions-apiserver `pkg/apiserver/schema`
 * Structural: types, properties, items, additionalProperties, defaults and the x-kubernetes
 * extensions, without the value validations) and the algorithms kube runs on it for every custom
 * resource: pruning (`pruning/algorithm.go`), dropping non-nullable nulls
 * (`defaulting/prunenulls.go`), defaulting (`defaulting/algorithm.go`), the embedded-resource
 * metadata coercion (`objectmeta/coerce.go`) and validation (`objectmeta/validation.go`), and the
 * uniqueness of list-type set and map items (`listtype/validation.go`).
 */
import { type FieldError, fieldErr } from '../field-errors.js';
import { isPlainObject, type ObjectMeta } from '../types.js';
import { stringifyJson } from '../number-codec.js';
import { isDNS1035Label } from '../groups/admissionregistration/webhooks.js';
import { nameIsPathSegment, validateObjectMeta } from '../validation.js';
import { goValue } from './gofmt.js';
import { hasOwn, setMember } from '../json.js';

export interface StructuralNode {
  /** '' when the schema names no type. */
  type: string;
  nullable: boolean;
  /** The default value; undefined when none (a JSON null default is none, as in kube). */
  default: unknown;
  properties?: Map<string, StructuralNode>;
  /** Present when additionalProperties is set; `node` is absent for `true`/`false`. */
  additionalProperties?: { node?: StructuralNode };
  items?: StructuralNode;
  preserveUnknownFields: boolean;
  embeddedResource: boolean;
  intOrString: boolean;
  listType?: string;
  listMapKeys?: string[];
}

const asRecord = (v: unknown): Record<string, unknown> | undefined => (isPlainObject(v) ? v : undefined);

/** The structural part of a JSONSchemaProps (whatever is not a schema is read as the empty schema). */
export function toStructural(raw: unknown): StructuralNode {
  const s = asRecord(raw) ?? {};
  const node: StructuralNode = {
    type: typeof s['type'] === 'string' ? s['type'] : '',
    nullable: s['nullable'] === true,
    default: s['default'] === null ? undefined : s['default'],
    preserveUnknownFields: s['x-kubernetes-preserve-unknown-fields'] === true,
    embeddedResource: s['x-kubernetes-embedded-resource'] === true,
    intOrString: s['x-kubernetes-int-or-string'] === true,
  };
  const props = asRecord(s['properties']);
  if (props) {
    node.properties = new Map();
    for (const [k, v] of Object.entries(props)) node.properties.set(k, toStructural(v));
  }
  const ap = s['additionalProperties'];
  if (typeof ap === 'boolean') node.additionalProperties = {};
  else if (isPlainObject(ap)) node.additionalProperties = { node: toStructural(ap) };
  if (isPlainObject(s['items'])) node.items = toStructural(s['items']);
  if (typeof s['x-kubernetes-list-type'] === 'string') node.listType = s['x-kubernetes-list-type'];
  const keys = s['x-kubernetes-list-map-keys'];
  if (Array.isArray(keys)) node.listMapKeys = keys.filter((k): k is string => typeof k === 'string');
  return node;
}

/** Whether any node of the schema satisfies `pred`. */
export function someNode(s: StructuralNode | undefined, pred: (n: StructuralNode) => boolean): boolean {
  if (!s) return false;
  if (pred(s)) return true;
  if (s.items && someNode(s.items, pred)) return true;
  if (s.additionalProperties?.node && someNode(s.additionalProperties.node, pred)) return true;
  if (s.properties) for (const p of s.properties.values()) if (someNode(p, pred)) return true;
  return false;
}

const META_FIELDS = new Set(['apiVersion', 'kind', 'metadata']);

// ---------------------------------------------------------------------------------------------
// Pruning
// ---------------------------------------------------------------------------------------------

/**
 * kube's `pruning.Prune(obj, s, isResourceRoot)`: drops object fields the schema does not
 * declare; apiVersion/kind/metadata stay at the root and in embedded resources.
 */
export function prune(obj: unknown, s: StructuralNode, isResourceRoot: boolean): void {
  pruneValue(obj, isResourceRoot ? { ...s, embeddedResource: true } : s);
}

function pruneValue(x: unknown, s: StructuralNode | undefined): void {
  if (s?.preserveUnknownFields) {
    skipPrune(x, s);
    return;
  }
  if (Array.isArray(x)) {
    for (const v of x) pruneValue(v, s?.items);
    return;
  }
  if (!isPlainObject(x)) return;
  if (!s) {
    for (const k of Object.keys(x)) delete x[k];
    return;
  }
  for (const k of Object.keys(x)) {
    if (s.embeddedResource && META_FIELDS.has(k)) continue;
    const prop = s.properties?.get(k);
    if (prop) pruneValue(x[k], prop);
    else if (s.additionalProperties) pruneValue(x[k], s.additionalProperties.node);
    else delete x[k];
  }
}

function skipPrune(x: unknown, s: StructuralNode | undefined): void {
  if (!s) return;
  if (Array.isArray(x)) {
    for (const v of x) skipPrune(v, s.items);
    return;
  }
  if (!isPlainObject(x)) return;
  for (const k of Object.keys(x)) {
    if (s.embeddedResource && META_FIELDS.has(k)) continue;
    const prop = s.properties?.get(k);
    if (prop) pruneValue(x[k], prop);
    else if (s.additionalProperties) pruneValue(x[k], s.additionalProperties.node);
  }
}

/**
 * kube's `PruneNonNullableNullsWithoutDefaults`: a null where the schema allows none and has no
 * default to put there is dropped (as if the field were not sent).
 */
export function pruneNonNullableNulls(x: unknown, s: StructuralNode | undefined): void {
  if (Array.isArray(x)) {
    for (const v of x) pruneNonNullableNulls(v, s?.items);
    return;
  }
  if (!isPlainObject(x)) return;
  for (const k of Object.keys(x)) {
    const sub = s?.properties?.get(k) ?? s?.additionalProperties?.node;
    const v = x[k];
    if (v === null && sub && !sub.nullable && sub.default === undefined) delete x[k];
    else pruneNonNullableNulls(v, sub);
  }
}

/** The JSON fields of an ObjectMeta; an embedded resource's metadata keeps only these. */
const OBJECT_META_FIELDS = new Map<string, (v: unknown) => boolean>(Object.entries({
  name: (v) => typeof v === 'string',
  generateName: (v) => typeof v === 'string',
  namespace: (v) => typeof v === 'string',
  selfLink: (v) => typeof v === 'string',
  uid: (v) => typeof v === 'string',
  resourceVersion: (v) => typeof v === 'string',
  generation: (v) => typeof v === 'number' || typeof v === 'bigint',
  creationTimestamp: (v) => typeof v === 'string' || v === null,
  deletionTimestamp: (v) => typeof v === 'string' || v === null,
  deletionGracePeriodSeconds: (v) => typeof v === 'number' || typeof v === 'bigint',
  labels: (v) => isPlainObject(v) && Object.values(v).every((x) => typeof x === 'string'),
  annotations: (v) => isPlainObject(v) && Object.values(v).every((x) => typeof x === 'string'),
  ownerReferences: Array.isArray,
  finalizers: (v) => Array.isArray(v) && v.every((x) => typeof x === 'string'),
  clusterName: (v) => typeof v === 'string',
  managedFields: Array.isArray,
}));

/**
 * kube's `objectmeta.Coerce` with dropInvalidFields, below the root: in an embedded resource,
 * apiVersion/kind that are not strings are dropped and metadata is read as an ObjectMeta (unknown
 * or ill-typed fields dropped, a zero creationTimestamp removed).
 */
export function coerceEmbedded(x: unknown, s: StructuralNode | undefined): void {
  if (!s) return;
  if (Array.isArray(x)) {
    for (const v of x) coerceEmbedded(v, s.items);
    return;
  }
  if (!isPlainObject(x)) return;
  if (s.embeddedResource) {
    for (const k of ['apiVersion', 'kind']) if (hasOwn(x, k) && typeof x[k] !== 'string') delete x[k];
    const meta = x['metadata'];
    if (isPlainObject(meta)) {
      for (const k of Object.keys(meta)) {
        const ok = OBJECT_META_FIELDS.get(k);
        if (!ok || !ok(meta[k])) delete meta[k];
      }
      if (meta['creationTimestamp'] === null) delete meta['creationTimestamp'];
    } else if (meta !== undefined && meta !== null) {
      delete x['metadata'];
    }
  }
  for (const k of Object.keys(x)) {
    const prop = s.properties?.get(k);
    if (prop) coerceEmbedded(x[k], prop);
    else if (s.additionalProperties) coerceEmbedded(x[k], s.additionalProperties.node);
  }
}

// ---------------------------------------------------------------------------------------------
// Defaulting
// ---------------------------------------------------------------------------------------------

const isNonNullableNull = (x: unknown, s: StructuralNode | undefined): boolean => x === null && !!s && !s.nullable;

/**
 * kube's structural `Default`: a property's default fills it where it is absent, or null and not
 * nullable; defaults of map values and list items replace their non-nullable nulls. Recursive,
 * defaults deep-copied.
 */
export function applyDefaults(x: unknown, s: StructuralNode | undefined): void {
  if (!s) return;
  if (Array.isArray(x)) {
    for (let i = 0; i < x.length; i++) {
      if (isNonNullableNull(x[i], s.items) && s.items!.default !== undefined) x[i] = structuredClone(s.items!.default);
      applyDefaults(x[i], s.items);
    }
    return;
  }
  if (!isPlainObject(x)) return;
  if (s.properties) {
    for (const [k, prop] of s.properties) {
      if (prop.default === undefined) continue;
      if (!hasOwn(x, k) || isNonNullableNull(x[k], prop)) setMember(x, k, structuredClone(prop.default));
    }
  }
  for (const k of Object.keys(x)) {
    const prop = s.properties?.get(k);
    if (prop) {
      applyDefaults(x[k], prop);
    } else if (s.additionalProperties) {
      const vs = s.additionalProperties.node;
      if (isNonNullableNull(x[k], vs) && vs!.default !== undefined) setMember(x, k, structuredClone(vs!.default));
      applyDefaults(x[k], vs);
    }
  }
}

/** A default as kube deep-copies it: objects and arrays copied, scalars as they are. */
const copyDefault = (d: unknown): unknown => (d !== null && typeof d === 'object' ? structuredClone(d) : d);

/** Where defaulting has work below a schema node (built once per schema by `compileDefaulter`). */
interface DefaultPlan {
  /** Properties with a default of their own, in schema order. */
  defaulted: [string, StructuralNode][];
  /** Properties below which a default may apply. */
  props: Map<string, DefaultPlan>;
  /** The schema's properties, when additionalProperties must be told apart from them. */
  properties: Map<string, StructuralNode> | undefined;
  additional: { node: StructuralNode; plan: DefaultPlan | undefined } | undefined;
  items: { node: StructuralNode; plan: DefaultPlan | undefined } | undefined;
}

function defaultPlan(s: StructuralNode | undefined): DefaultPlan | undefined {
  if (!s) return undefined;
  const defaulted: [string, StructuralNode][] = [];
  const props = new Map<string, DefaultPlan>();
  if (s.properties) {
    for (const [k, prop] of s.properties) {
      if (prop.default !== undefined) defaulted.push([k, prop]);
      const sub = defaultPlan(prop);
      if (sub) props.set(k, sub);
    }
  }
  const an = s.additionalProperties?.node;
  const ap = an ? defaultPlan(an) : undefined;
  const additional = an && (ap || an.default !== undefined) ? { node: an, plan: ap } : undefined;
  const ip = s.items ? defaultPlan(s.items) : undefined;
  const items = s.items && (ip || s.items.default !== undefined) ? { node: s.items, plan: ip } : undefined;
  if (defaulted.length === 0 && props.size === 0 && !additional && !items) return undefined;
  return { defaulted, props, properties: s.properties, additional, items };
}

function runDefaults(x: unknown, p: DefaultPlan): void {
  if (Array.isArray(x)) {
    const it = p.items;
    if (!it) return;
    for (let i = 0; i < x.length; i++) {
      if (x[i] === null && !it.node.nullable && it.node.default !== undefined) x[i] = copyDefault(it.node.default);
      if (it.plan) runDefaults(x[i], it.plan);
    }
    return;
  }
  if (!isPlainObject(x)) return;
  for (const [k, prop] of p.defaulted) {
    if (!hasOwn(x, k) || isNonNullableNull(x[k], prop)) setMember(x, k, copyDefault(prop.default));
  }
  const ad = p.additional;
  if (!ad) {
    for (const [k, sub] of p.props) if (Object.hasOwn(x, k)) runDefaults(x[k], sub);
    return;
  }
  for (const k of Object.keys(x)) {
    if (p.properties?.has(k)) {
      const sub = p.props.get(k);
      if (sub) runDefaults(x[k], sub);
    } else {
      if (isNonNullableNull(x[k], ad.node) && ad.node.default !== undefined) setMember(x, k, copyDefault(ad.node.default));
      if (ad.plan) runDefaults(x[k], ad.plan);
    }
  }
}

/**
 * `applyDefaults` compiled for one schema: the same result, visiting only the nodes a default
 * can reach. Undefined when the schema has no default.
 */
export function compileDefaulter(s: StructuralNode): ((x: unknown) => void) | undefined {
  const plan = defaultPlan(s);
  return plan ? (x) => runDefaults(x, plan) : undefined;
}

// ---------------------------------------------------------------------------------------------
// Embedded resources and list types
// ---------------------------------------------------------------------------------------------

const join = (path: string, key: string): string => (path ? `${path}.${key}` : key);

/** kube's `schema.ParseGroupVersion` error, if any. */
function groupVersionError(gv: string): string | undefined {
  if (gv === '' || gv === '/') return undefined;
  return gv.split('/').length > 2 ? `unexpected GroupVersion string: ${gv}` : undefined;
}

/** kube's `objectmeta.Validate(nil, obj, s, false)`: apiVersion, kind and metadata of embedded resources. */
export function validateEmbedded(x: unknown, s: StructuralNode | undefined, path: string, errs: FieldError[]): void {
  if (!s) return;
  if (Array.isArray(x)) {
    x.forEach((v, i) => validateEmbedded(v, s.items, `${path}[${i}]`, errs));
    return;
  }
  if (!isPlainObject(x)) return;
  if (s.embeddedResource) validateEmbeddedResource(x, path, errs);
  for (const [k, v] of Object.entries(x)) {
    const prop = s.properties?.get(k);
    if (prop) validateEmbedded(v, prop, join(path, k), errs);
    else if (s.additionalProperties) validateEmbedded(v, s.additionalProperties.node, `${path}[${k}]`, errs);
  }
}

function validateEmbeddedResource(x: Record<string, unknown>, path: string, errs: FieldError[]): void {
  if (!hasOwn(x, 'apiVersion')) errs.push(fieldErr.required(join(path, 'apiVersion')));
  if (!hasOwn(x, 'kind')) errs.push(fieldErr.required(join(path, 'kind')));
  for (const [k, v] of Object.entries(x)) {
    if (k === 'apiVersion') {
      const p = join(path, k);
      if (typeof v !== 'string') errs.push(fieldErr.invalid(p, goValue(v), 'must be a string'));
      else if (v === '') errs.push(fieldErr.required(p));
      else {
        const e = groupVersionError(v);
        if (e) errs.push(fieldErr.invalid(p, v, e));
      }
    } else if (k === 'kind') {
      const p = join(path, k);
      if (typeof v !== 'string') errs.push(fieldErr.invalid(p, goValue(v), 'must be a string'));
      else if (v === '') errs.push(fieldErr.required(p));
      else {
        const m = isDNS1035Label(v.toLowerCase());
        if (m.length > 0) errs.push(fieldErr.invalid(p, v, `may have mixed case, but should otherwise match: ${m.join(',')}`));
      }
    } else if (k === 'metadata') {
      const p = join(path, k);
      if (v === null || v === undefined) continue;
      if (!isPlainObject(v)) {
        errs.push(fieldErr.invalid(p, goValue(v), 'expected map[string]interface{}'));
        continue;
      }
      const meta = { ...(v as ObjectMeta) };
      if (!meta.name) meta.name = 'fakename';
      errs.push(...validateObjectMeta(meta, !!meta.namespace, nameIsPathSegment, p));
    }
  }
}

/** kube's `listtype.ValidateListSetsAndMaps`: duplicates in x-kubernetes-list-type set and map lists. */
export function validateListTypes(x: unknown, s: StructuralNode | undefined, path: string, errs: FieldError[]): void {
  if (!s) return;
  if (Array.isArray(x)) {
    if (s.listType === 'set') {
      for (const i of nonUnique(x)) errs.push(fieldErr.duplicate(`${path}[${i}]`, goValue(x[i])));
    } else if (s.listType === 'map') {
      validateListMap(x, s, path, errs);
    }
    if (s.items) x.forEach((v, i) => validateListTypes(v, s.items, `${path}[${i}]`, errs));
    return;
  }
  if (!isPlainObject(x)) return;
  for (const [k, v] of Object.entries(x)) {
    if (s.additionalProperties?.node) validateListTypes(v, s.additionalProperties.node, `${path}[${k}]`, errs);
    const prop = s.properties?.get(k);
    if (prop) validateListTypes(v, prop, join(path, k), errs);
  }
}

/** Where list-type validation has work below a schema node (built once per schema). */
interface ListTypePlan {
  node: StructuralNode;
  props: Map<string, ListTypePlan> | undefined;
  additional: ListTypePlan | undefined;
  items: ListTypePlan | undefined;
}

function listTypePlan(s: StructuralNode | undefined): ListTypePlan | undefined {
  if (!s) return undefined;
  let props: Map<string, ListTypePlan> | undefined;
  if (s.properties) {
    for (const [k, prop] of s.properties) {
      const sub = listTypePlan(prop);
      if (sub) (props ??= new Map()).set(k, sub);
    }
  }
  const additional = listTypePlan(s.additionalProperties?.node);
  const items = listTypePlan(s.items);
  if (s.listType !== 'set' && s.listType !== 'map' && !props && !additional && !items) return undefined;
  return { node: s, props, additional, items };
}

function runListTypes(x: unknown, p: ListTypePlan, path: string, errs: FieldError[]): void {
  if (Array.isArray(x)) {
    const s = p.node;
    if (s.listType === 'set') {
      for (const i of nonUnique(x)) errs.push(fieldErr.duplicate(`${path}[${i}]`, goValue(x[i])));
    } else if (s.listType === 'map') {
      validateListMap(x, s, path, errs);
    }
    const it = p.items;
    if (it) for (let i = 0; i < x.length; i++) runListTypes(x[i], it, `${path}[${i}]`, errs);
    return;
  }
  if (!isPlainObject(x)) return;
  for (const k of Object.keys(x)) {
    if (p.additional) runListTypes(x[k], p.additional, `${path}[${k}]`, errs);
    const prop = p.props?.get(k);
    if (prop) runListTypes(x[k], prop, join(path, k), errs);
  }
}

/**
 * `validateListTypes` compiled for one schema: the same errors in the same order, visiting only
 * the nodes under which a set or map list is declared. Undefined when the schema has none.
 */
export function compileListTypeValidator(s: StructuralNode): ((x: unknown, errs: FieldError[]) => void) | undefined {
  const plan = listTypePlan(s);
  return plan ? (x, errs) => runListTypes(x, plan, '', errs) : undefined;
}

/** A list-map item without its key field (kube's unspecifiedKeyValue). */
const UNSPECIFIED = Symbol('unspecified key');

/** Indices of the second appearance of each repeated value (kube's validateListSet). */
function nonUnique(items: readonly unknown[]): number[] {
  if (items.length <= 1) return [];
  const seen = new Map<string, number>();
  const out: number[] = [];
  items.forEach((x, i) => {
    const key = x === UNSPECIFIED ? '\u0000unspecified' : canonicalJSON(x);
    const times = seen.get(key) ?? 0;
    seen.set(key, times + 1);
    if (times === 1) out.push(i);
  });
  return out;
}

function validateListMap(items: unknown[], s: StructuralNode, path: string, errs: FieldError[]): void {
  for (let i = 0; i < items.length; i++) {
    const x = items[i];
    if (x !== null && !isPlainObject(x)) {
      errs.push(fieldErr.invalid(`${path}[${i}]`, goValue(x), 'must be an object for an array of list-type map'));
      return;
    }
  }
  if (items.length <= 1) return;
  const keyFields = s.listMapKeys ?? [];
  if (keyFields.length === 1) {
    const f = keyFields[0]!;
    const keys = items.map((x) => (isPlainObject(x) && hasOwn(x, f) ? x[f] : UNSPECIFIED));
    for (const i of nonUnique(keys)) errs.push(fieldErr.duplicate(`${path}[${i}]`, goValue(keys[i] === UNSPECIFIED ? {} : { [f]: keys[i] })));
    return;
  }
  const keys = items.map((x) => {
    const key: Record<string, unknown> = {};
    if (isPlainObject(x)) for (const f of keyFields) if (hasOwn(x, f)) setMember(key, f, x[f]);
    return key;
  });
  for (const i of nonUnique(keys)) errs.push(fieldErr.duplicate(`${path}[${i}]`, goValue(keys[i])));
}

/** JSON with object keys sorted, so equal values serialize alike (Go marshals maps sorted). */
function canonicalJSON(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJSON).join(',')}]`;
  if (isPlainObject(v)) return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonicalJSON(v[k])}`).join(',')}}`;
  return stringifyJson(v) ?? 'null';
}
