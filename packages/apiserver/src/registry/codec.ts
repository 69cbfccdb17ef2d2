/**
 * Decoding a request body into an object of the endpoint's kind, as kube's typed decoder does:
 * apiVersion/kind default to the endpoint's, another kind is a 400, unknown fields are dropped,
 * wrong JSON types are a 400, then API defaults apply.
 */
import {
  apiVersionOf,
  badRequest,
  conform,
  DecodeError,
  JsonNumberRangeError,
  fieldErr,
  findNumberOverflow,
  invalid,
  isNumberOverflow,
  isPlainObject,
  numberOverflowIn,
  overflowLiteral,
  stringifyJson,
  builtinDefinitions,
  OBJECT_META,
  s,
  type Catalog,
  type KindDefinition,
  type Schema,
  type StoredObject,
} from '@plinth/api';

const fullSchemas = new WeakMap<KindDefinition, Schema>();

/**
 * The kind's schema with apiVersion, kind and metadata: a built-in kind's definition as the schema
 * source has it; a custom resource's openAPIV3Schema with them added.
 */
export function fullSchemaOf(def: KindDefinition): Schema {
  let sch = fullSchemas.get(def);
  if (!sch) {
    const own = def.schema;
    sch = own.properties && Object.hasOwn(own.properties, 'metadata')
      ? own
      : { ...own, properties: { apiVersion: s.str(), kind: s.str(), metadata: s.ref(OBJECT_META), ...(own.properties ?? {}) } };
    fullSchemas.set(def, sch);
  }
  return sch;
}

/** A custom resource's body: typed apiVersion, kind and metadata; every other field as sent. */
const UNSTRUCTURED: Schema = {
  type: 'object',
  'x-kubernetes-preserve-unknown-fields': true,
  properties: { apiVersion: s.str(), kind: s.str(), metadata: s.ref(OBJECT_META) },
};

/** Every definition a schema refers to (the schema source's, built once). */
export function schemaDefinitions(): ReadonlyMap<string, Schema> {
  return builtinDefinitions();
}

/**
 * Decodes a parsed body for `def`; throws 400 StatusErrors as kube words them. Defaults apply
 * unless `withDefaults` is false (a server-side apply body is merged first, defaulted after).
 * `unknown`, when given, receives the paths of the unknown fields dropped (field validation).
 * `owned`: `raw` is the caller's own and no object in it is reachable twice (a JSON body just
 * parsed): it is conformed in place instead of copied (see conform).
 */
export function decodeInto(def: KindDefinition, catalog: Catalog, raw: unknown, withDefaults = true, unknown?: string[], owned = false): StoredObject {
  const expected = apiVersionOf(def);
  if (!isPlainObject(raw)) {
    throw badRequest(`the object provided is unrecognized: expected a JSON object, got ${Array.isArray(raw) ? 'an array' : typeof raw}`);
  }
  const apiVersion = typeof raw['apiVersion'] === 'string' && raw['apiVersion'] ? raw['apiVersion'] : expected;
  const kind = typeof raw['kind'] === 'string' && raw['kind'] ? raw['kind'] : def.kind;
  const version = apiVersion.includes('/') ? apiVersion.slice(apiVersion.indexOf('/') + 1) : apiVersion;
  if (kind !== def.kind || apiVersion !== expected) {
    // Another version of the same kind the endpoint takes (pods/eviction: policy/v1beta1 Evictions).
    const alternate = def.alternateVersions?.find((k) => k.kind === kind && apiVersionOf(k) === apiVersion);
    if (alternate) {
      const obj = decodeInto(alternate, catalog, raw, withDefaults, unknown, owned);
      obj.apiVersion = expected;
      obj.kind = def.kind;
      return obj;
    }
    const other = catalog.lookupKind(apiVersion, kind);
    const why = other
      ? `converting (${apiVersion}.${kind}) to (${def.kind}): unknown conversion`
      : `no kind "${kind}" is registered for version "${apiVersion}" in scheme "pkg/api/legacyscheme/scheme.go:30"`;
    if (kind === def.kind) {
      throw badRequest(`the API version in the data (${apiVersion}) does not match the expected API version (${expected})`);
    }
    throw badRequest(`${kind} in version "${version}" cannot be handled as a ${def.kind}: ${why}`);
  }
  const cannotHandle = (why: string): Error => badRequest(`${def.kind} in version "${version}" cannot be handled as a ${def.kind}: ${why}`);
  // A number beyond float64 (parseBody keeps it in place): a custom resource's decoder refuses the
  // body; a typed one names the field (conform), or drops it with an unknown field.
  const overflow = numberOverflowIn(raw);
  if (overflow !== undefined && def.unstructured) throw cannotHandle(new JsonNumberRangeError(overflow).message);
  let obj: StoredObject;
  try {
    // A whole object (not an apply configuration, decoded without defaults) gets the zero values
    // Go's encoder writes (Schema.goZeros).
    obj = conform(raw, def.unstructured ? UNSTRUCTURED : fullSchemaOf(def), builtinDefinitions(), def.kind, 1, unknown, '', owned, withDefaults) as StoredObject;
  } catch (e) {
    if (e instanceof DecodeError) throw cannotHandle(e.message);
    throw e;
  }
  if (overflow !== undefined) {
    const left = findNumberOverflow(obj);
    if (left !== undefined) throw cannotHandle(new JsonNumberRangeError(left).message);
  }
  obj.apiVersion = expected;
  obj.kind = def.kind;
  obj.metadata ??= {};
  if (withDefaults) def.strategy.defaults?.(obj);
  return obj;
}

/**
 * An object a mutating webhook patched, decoded into its kind as kube decodes the patched JSON
 * into the typed object (unknown fields dropped, defaults applied; a wrong type throws). Custom
 * resources are not decoded here (undefined).
 */
export function decodeAdmitted(catalog: Catalog, kind: { group: string; version: string; kind: string }, obj: unknown): StoredObject | undefined {
  const def = catalog.lookupKind(kind.group ? `${kind.group}/${kind.version}` : kind.version, kind.kind);
  if (!def || def.unstructured) return undefined;
  return decodeInto(def, catalog, obj, true);
}

/** Go's json.Marshal of a decoded value: map keys sorted, numbers beyond float64 as their literal. */
function goJsonWithLiterals(v: unknown): string {
  if (isNumberOverflow(v)) return overflowLiteral(v);
  if (Array.isArray(v)) return `[${v.map(goJsonWithLiterals).join(',')}]`;
  if (isPlainObject(v)) {
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${goJsonWithLiterals(v[k])}`)
      .join(',')}}`;
  }
  return stringifyJson(v) ?? 'null';
}

/**
 * A JSON or merge patch keeps number literals as they are written (kube's json-patch library holds
 * raw bytes): one beyond float64 that lands in the object fails only when the patched object is
 * decoded, answered 422 with the patched JSON as the `patch` field's value (kube's
 * jsonPatcher.applyPatchToCurrentObject). A typed kind drops it with an unknown field.
 */
export function checkPatchedNumbers(def: KindDefinition, patched: unknown): void {
  const literal = findNumberOverflow(patched);
  if (literal === undefined) return;
  let why: string | undefined = new JsonNumberRangeError(literal).message;
  if (!def.unstructured) {
    try {
      why = findNumberOverflow(conform(patched, fullSchemaOf(def), builtinDefinitions(), def.kind)) === undefined ? undefined : why;
    } catch (e) {
      if (!(e instanceof DecodeError)) throw e;
      why = e.message;
    }
  }
  if (why !== undefined) throw invalid({ group: '', kind: '' }, '', [fieldErr.invalid('patch', goJsonWithLiterals(patched), why)]);
}
