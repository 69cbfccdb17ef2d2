/**
 * A small OpenAPI v3 schema model for the catalog, and the decoder that makes a JSON body look
 * like what kube's typed Go decoding makes of it: unknown fields are dropped, `null` becomes unset,
 * and a value of the wrong JSON type is a decode error (400 in the handlers).
 */
import { isPlainObject } from './types.js';
import { Base64Error, canonicalBase64 } from './base64.js';
import { checkDepth } from './depth.js';
import { MicroTimeError, canonicalMicroTime } from './microtime.js';
import { setMember } from './json.js';
import { conformNumber, isAnyJsonNumber, numberLiteral, type GoNumberKind } from './number-codec.js';
import { Scale, canonicalQuantityValue, isQuantityParseError, parseQuantity } from './quantity.js';

/** The Go type that marks a metav1.MicroTime string. */
export const MICRO_TIME = 'v1.MicroTime';
/** The Go type that marks a resource.Quantity (a string, or a JSON number kube reads as one). */
export const QUANTITY = 'resource.Quantity';

export interface Schema {
  type?: 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';
  format?: string;
  description?: string;
  properties?: Record<string, Schema>;
  /** A map's value schema (`map[string]T`). */
  additionalProperties?: Schema;
  items?: Schema;
  required?: string[];
  enum?: string[];
  /** Name of a shared definition (resolved via the definitions table). */
  $ref?: string;
  /**
   * Accept anything and keep it: with `type: object` any object (`fieldsV1`, `RawExtension`),
   * without a type any JSON value (apiextensions `JSON`, published untyped as kube does).
   */
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  /** A custom resource schema's `nullable` (published in OpenAPI as kube's CRD builder does). */
  nullable?: boolean;
  /** A custom resource schema's embedded object (apiVersion, kind and metadata published). */
  'x-kubernetes-embedded-resource'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-map-type'?: 'atomic' | 'granular';
  'x-kubernetes-patch-strategy'?: string;
  'x-kubernetes-patch-merge-key'?: string;
  /**
   * The Go type, as Go names it in decode errors (`v1.ObjectReference`, `v1.ResourceList`); from
   * the schema source (kube-schema/), never published.
   */
  goType?: string;
  /**
   * A Go pointer (from the schema source). To a string (`*string`): an empty string is a value and
   * is kept, where a plain `string` with omitempty drops it (Lease `spec.holderIdentity`). To a
   * struct (`*AggregationRule`): the kind's empty object leaves it out, where a struct value is
   * `{}` (ClusterRole `aggregationRule`, Event `series`).
   */
  goPointer?: boolean;
  /**
   * The default kube-openapi declares for the field (a `+default` marker or a value it enforces;
   * published in OpenAPI v3): server-side apply keys a list item that omits a key field by it.
   * Decoding never applies it (kube's API defaults are the strategies').
   */
  v3Default?: unknown;
  /**
   * A Go struct's integer, boolean and string fields without omitempty (and not pointers): Go's
   * encoder always writes them, so kube's stored and served JSON has `0`/`false`/`""` where a client
   * left one out (a DaemonSet's `status.numberReady`). Decoding a full object adds them (see conform's
   * `zeros`); clients that check required fields (the Python client) depend on them.
   */
  goZeros?: ReadonlyArray<readonly [string, number | boolean | string]>;
  /**
   * A string field without omitempty (not a pointer): Go writes `""` for it, so an empty string is
   * a value kept like any other (a container status's `imageID` before its image is pulled).
   */
  goKeepsEmpty?: boolean;
}

export const s = {
  str: (description?: string, extra: Partial<Schema> = {}): Schema => ({ type: 'string', ...(description ? { description } : {}), ...extra }),
  int: (description?: string, format: 'int32' | 'int64' = 'int32'): Schema => ({ type: 'integer', format, ...(description ? { description } : {}) }),
  bool: (description?: string): Schema => ({ type: 'boolean', ...(description ? { description } : {}) }),
  bytes: (description?: string): Schema => ({ type: 'string', format: 'byte', ...(description ? { description } : {}) }),
  time: (description?: string): Schema => ({ type: 'string', format: 'date-time', ...(description ? { description } : {}) }),
  /** metav1.MicroTime: six fractional digits exactly, stored in UTC (see microtime.ts). */
  microTime: (description?: string): Schema => ({ type: 'string', format: 'date-time', goType: MICRO_TIME, ...(description ? { description } : {}) }),
  arr: (items: Schema, extra: Partial<Schema> = {}): Schema => ({ type: 'array', items, ...extra }),
  map: (value: Schema, extra: Partial<Schema> = {}): Schema => ({ type: 'object', additionalProperties: value, ...extra }),
  obj: (properties: Record<string, Schema>, extra: Partial<Schema> = {}): Schema => ({ type: 'object', properties, ...extra }),
  ref: (name: string, description?: string): Schema => ({ $ref: name, ...(description ? { description } : {}) }),
  any: (description?: string): Schema => ({ type: 'object', 'x-kubernetes-preserve-unknown-fields': true, ...(description ? { description } : {}) }),
};

/**
 * The schema of the property `key` of an object schema: its own entry in `properties` only (a key
 * such as `constructor` or `__proto__` is a field name like any other, never an inherited member).
 */
export function propertySchema(schema: Schema, key: string): Schema | undefined {
  const props = schema.properties;
  return props !== undefined && Object.hasOwn(props, key) ? props[key] : undefined;
}

export class DecodeError extends Error {}

export type Definitions = ReadonlyMap<string, Schema>;

/** The Go type of core/v1 resource lists (requests, limits, capacity, hard, ...). */
const RESOURCE_LIST = 'v1.ResourceList';

/** resource.ParseQuantity's error for what is no quantity. */
const QUANTITY_SYNTAX = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/** Types whose Go UnmarshalJSON reads a JSON string first: a wrong type is reported as `string`. */
const STRING_DECODED = new Set(['v1.Time', MICRO_TIME, 'v1.Duration']);

function goType(schema: Schema, defs: Definitions): string {
  const named = schema.goType ?? (schema.$ref ? defs.get(schema.$ref)?.goType ?? schema.$ref : undefined);
  if (named) return STRING_DECODED.has(named) ? 'string' : named;
  switch (schema.type) {
    case 'array':
      return `[]${schema.items ? goType(schema.items, defs) : 'interface {}'}`;
    case 'object':
      return schema.additionalProperties ? `map[string]${goType(schema.additionalProperties, defs)}` : 'struct';
    case 'integer':
      return schema.format === 'int64' ? 'int64' : 'int32';
    case 'number':
      return 'float64';
    case 'boolean':
      return 'bool';
    default:
      return 'string';
  }
}

function jsonTypeName(v: unknown): string {
  if (isAnyJsonNumber(v)) return 'number';
  if (Array.isArray(v)) return 'array';
  if (v === null) return 'null';
  if (typeof v === 'object') return 'object';
  return typeof v;
}

/**
 * Where a value sits, built only when a message or an unknown field needs it: the parent's place
 * and the member name (a string) or the list index (a number). The walk allocates one per object
 * or list it descends into and no string at all on the way.
 */
interface Loc {
  readonly up: Loc | undefined;
  readonly key: string | number;
}

/** The Go-style field path for messages: the root's name, then the member names (no indexes). */
function whereText(root: string, up: Loc | undefined, key: string | number | undefined): string {
  const parts: string[] = [];
  if (typeof key === 'string') parts.push(key);
  for (let l = up; l; l = l.up) if (typeof l.key === 'string') parts.push(l.key);
  let out = root;
  for (let i = parts.length - 1; i >= 0; i--) out += `.${parts[i]}`;
  return out;
}

/** The JSON path kube's strict decoding names (`spec.containers[0].foo`). */
function pathText(up: Loc | undefined, key: string | number | undefined): string {
  const keys: Array<string | number> = [];
  if (key !== undefined) keys.push(key);
  for (let l = up; l; l = l.up) keys.push(l.key);
  let out = '';
  for (let i = keys.length - 1; i >= 0; i--) {
    const k = keys[i]!;
    out += typeof k === 'number' ? `[${k}]` : out === '' ? k : `.${k}`;
  }
  return out;
}

/** The walk's constants: the definitions, the root's Go name, and where unknown fields go. */
interface Walk {
  readonly defs: Definitions;
  readonly root: string;
  readonly unknown: string[] | undefined;
  /** The JSON path of the value the walk starts at (`''` for the whole object). */
  readonly base: string;
  /** The value is the caller's own and shares nothing: objects and arrays are conformed in place. */
  readonly inPlace: boolean;
  /**
   * Decoding a whole object as Go does (not an apply configuration): the structs' goZeros are
   * added where missing.
   */
  readonly zeros: boolean;
}

function mismatch(w: Walk, value: unknown, schema: Schema, up: Loc | undefined, key: string | number | undefined): DecodeError {
  return new DecodeError(`json: cannot unmarshal ${jsonTypeName(value)} into Go struct field ${whereText(w.root, up, key)} of type ${goType(schema, w.defs)}`);
}

/** kube's strconv into the field's kind: the literal in the message (number-codec.ts). */
function typedNumber(w: Walk, value: unknown, schema: Schema, kind: GoNumberKind, up: Loc | undefined, key: string | number | undefined): number | bigint {
  if (!isAnyJsonNumber(value)) throw mismatch(w, value, schema, up, key);
  const n = conformNumber(value, kind);
  if (n === undefined) throw new DecodeError(`json: cannot unmarshal number ${numberLiteral(value)} into Go struct field ${whereText(w.root, up, key)} of type ${kind}`);
  return n;
}

/**
 * Returns `value` conformed to `schema` (a new object for objects and arrays; scalars as they are),
 * or `undefined` for null. Throws DecodeError on a type mismatch. `where` is the Go-style field path
 * for messages, e.g. `ServiceAccount.secrets`. Unknown fields are dropped; with `unknown` given,
 * their JSON paths (`spec.containers[0].foo`, as kube's strict decoding names them) are added to
 * it — `path` is the path of `value` itself. Every key is data: a member named `__proto__` or
 * `constructor` is kept or dropped by the schema like any other.
 *
 * `inPlace`: `value` is the caller's own and no object or array in it is reachable twice (a body
 * JSON.parse just built): its objects and arrays are changed and returned instead of copied (an
 * object that loses a member is rebuilt without it, so no object is left with a deleted member).
 * On a DecodeError the value is left half-conformed.
 */
export function conform(value: unknown, schema: Schema, defs: Definitions, where: string, depth = 1, unknown?: string[], path = '', inPlace = false, zeros = false): unknown {
  return conformAt({ defs, root: where, unknown, base: path, inPlace, zeros }, value, schema, depth, undefined, undefined);
}

/** The unknown field's JSON path, prefixed with the walk's base path. */
function unknownPath(w: Walk, up: Loc | undefined, key: string): string {
  const rel = pathText(up, key);
  return w.base === '' ? rel : rel.startsWith('[') ? w.base + rel : `${w.base}.${rel}`;
}

function conformAt(w: Walk, value: unknown, schema: Schema, depth: number, up: Loc | undefined, key: string | number | undefined): unknown {
  if (value === null || value === undefined) return undefined;
  if (typeof value === 'object') checkDepth(depth);
  let sch = schema;
  while (sch.$ref) {
    const d = w.defs.get(sch.$ref);
    if (!d) throw new Error(`schema definition ${sch.$ref} missing`);
    sch = d;
  }
  if (sch['x-kubernetes-preserve-unknown-fields'] && !sch.properties) return value;
  if (sch['x-kubernetes-int-or-string']) {
    // IntOrString decodes a number into its int32.
    return typeof value === 'string' ? value : typedNumber(w, value, schema, 'int32', up, key);
  }
  if (sch.goType === QUANTITY) {
    // resource.Quantity's UnmarshalJSON takes a string or a bare number and parses it (a bad one
    // fails the decode with the parser's message); kube stores and answers its canonical form.
    if (typeof value !== 'string' && !isAnyJsonNumber(value)) throw new DecodeError(QUANTITY_SYNTAX);
    try {
      return canonicalQuantityValue(typeof value === 'string' ? value : numberLiteral(value));
    } catch (e) {
      if (isQuantityParseError(e)) throw new DecodeError(e.message);
      throw e;
    }
  }
  switch (sch.type) {
    case 'string':
      if (typeof value !== 'string') throw mismatch(w, value, schema, up, key);
      if (sch.goType === MICRO_TIME || schema.goType === MICRO_TIME) {
        try {
          return canonicalMicroTime(value);
        } catch (e) {
          if (e instanceof MicroTimeError) throw new DecodeError(e.message);
          throw e;
        }
      }
      if (sch.format === 'date-time' && !RFC3339.test(value)) {
        throw new DecodeError(`parsing time ${JSON.stringify(value)} as "2006-01-02T15:04:05Z07:00": cannot parse ${JSON.stringify(value)} as RFC3339`);
      }
      if (sch.format === 'byte') {
        // Go decodes []byte strictly and encodes it again on the way out: store that form.
        try {
          return canonicalBase64(value);
        } catch (e) {
          if (e instanceof Base64Error) throw new DecodeError(e.message);
          throw e;
        }
      }
      return value;
    case 'integer':
      return typedNumber(w, value, schema, sch.format === 'int64' ? 'int64' : 'int32', up, key);
    case 'number':
      return typedNumber(w, value, schema, 'float64', up, key);
    case 'boolean':
      if (typeof value !== 'boolean') throw mismatch(w, value, schema, up, key);
      return value;
    case 'array': {
      if (!Array.isArray(value)) throw mismatch(w, value, schema, up, key);
      const items = sch.items;
      if (!items) return w.inPlace ? value : value.slice();
      // Items share their list's Go name (no index in it) and add their index to the JSON path.
      const here: Loc | undefined = key === undefined ? up : { up, key };
      const out = w.inPlace ? value : new Array<unknown>(value.length);
      for (let i = 0; i < value.length; i++) {
        const c = conformAt(w, value[i], items, depth + 1, here, i) ?? zeroOf(items, w.defs);
        if (out[i] !== c) out[i] = c;
      }
      return out;
    }
    default: {
      if (!isPlainObject(value)) throw mismatch(w, value, schema, up, key);
      const here: Loc | undefined = key === undefined ? up : { up, key };
      const props = sch.properties;
      // In place, `out` is `value` until a member is dropped; then a new object with the members
      // kept so far (already conformed in place) and the rest.
      let out: Record<string, unknown> = w.inPlace ? value : {};
      if (props) {
        const keys = Object.keys(value);
        for (let j = 0; j < keys.length; j++) {
          const k = keys[j]!;
          const v = value[k];
          const ps = Object.hasOwn(props, k) ? props[k] : undefined;
          let c: unknown;
          if (!ps) {
            // kube drops unknown fields on decode
            if (sch['x-kubernetes-preserve-unknown-fields']) c = v;
            else if (w.unknown) w.unknown.push(unknownPath(w, here, k));
          } else {
            c = conformAt(w, v, ps, depth + 1, here, k);
            if (c !== undefined && omittedWhenEmpty(c, ps, w.defs)) c = undefined;
          }
          if (out !== value) {
            if (c !== undefined) setMember(out, k, c);
          } else if (c === undefined) {
            out = {};
            for (let i = 0; i < j; i++) setMember(out, keys[i]!, value[keys[i]!]);
          } else if (c !== v) {
            setMember(out, k, c);
          }
        }
        if (w.zeros && sch.goZeros) for (const [k, z] of sch.goZeros) if (!Object.hasOwn(out, k)) setMember(out, k, z);
      } else if (sch.additionalProperties) {
        const vs = sch.additionalProperties;
        for (const k of Object.keys(value)) {
          const c = conformAt(w, value[k], vs, depth + 1, here, k);
          const next = c === undefined ? zeroOf(vs, w.defs) : c;
          if (out !== value || next !== value[k]) setMember(out, k, next);
        }
        // core/v1's SetDefaults_ResourceList, which every group embedding core types runs: a
        // ResourceList's quantities are rounded up to milli units (`1n` → `1m`).
        if (sch.goType === RESOURCE_LIST) for (const [k, v] of Object.entries(out)) if (typeof v === 'string') setMember(out, k, parseQuantity(v).roundUp(Scale.Milli).toString());
      } else {
        return value;
      }
      return out;
    }
  }
}

/**
 * Go's `omitempty` as kube's types use it for optional fields: empty strings, lists and maps are
 * not written back, so they are not stored either. Structs stay (omitempty never drops them) and
 * scalars stay (pointer fields keep `false` and `0`); so does the empty string of a field without
 * omitempty (goKeepsEmpty) or of a `*string`.
 */
function omittedWhenEmpty(value: unknown, schema: Schema, defs: Definitions): boolean {
  if (value === '') return !schema.goPointer && !schema.goKeepsEmpty;
  if (Array.isArray(value)) return value.length === 0;
  if (!isPlainObject(value)) return false;
  let sch = schema;
  while (sch.$ref) sch = defs.get(sch.$ref) ?? {};
  return sch.additionalProperties !== undefined && Object.keys(value).length === 0;
}

/** The Go zero value a null element of a slice or map decodes to. */
function zeroOf(schema: Schema, defs: Definitions): unknown {
  let sch = schema;
  while (sch.$ref) sch = defs.get(sch.$ref) ?? {};
  // A null Quantity decodes to zero, written "0".
  if (sch.goType === QUANTITY) return '0';
  switch (sch.type) {
    case 'string':
      return '';
    case 'integer':
    case 'number':
      return 0;
    case 'boolean':
      return false;
    case 'array':
      return null;
    default:
      return sch.additionalProperties ? null : {};
  }
}
