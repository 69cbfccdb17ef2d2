/**
 * Generic conversion between kube's JSON representation and protobufjs message objects, driven
 * by protobufjs reflection over the Root built from the schema source. A JSON key maps to the
 * proto field the schema source names for it (mostly the same name; not `Webhooks`, `uID`,
 * apiextensions' `$ref` and `x-kubernetes-*`).
 *
 * Message types whose JSON form is not "an object with the same fields" are handled by type
 * name in SPECIAL (metav1.Time, MicroTime, FieldsV1, Verbs, runtime.RawExtension, ExtraValue,
 * Quantity, IntOrString, apiextensions JSON and JSONSchemaPropsOr*); Go facts the wire cannot
 * express (pointers, non-omitempty fields, inlined structs) come from semantics.ts.
 */
import protobuf from "protobufjs";
import { getOwn, parseJson, setMember, stringifyJson } from "@plinth/api";
import { ProtobufDecodeError, ProtobufEncodeError } from "./errors.js";
import { APIEXTENSIONS_V1, META_V1, messageFacts, type MessageFacts } from "./semantics.js";

export type JsonObject = Record<string, unknown>;

/** Hooks for embedded envelopes (RawExtension holding prefix + runtime.Unknown bytes). */
export interface ConvertContext {
  /** True when bytes start with kube's protobuf prefix. */
  isEnvelope(bytes: Uint8Array): boolean;
  /** Decodes a full envelope to kube JSON. */
  decodeEnvelope(bytes: Uint8Array): JsonObject;
}

interface SpecialType {
  /** JSON value → plain object accepted by Type.fromObject (`type` is the message type). */
  toProto(value: unknown, path: string, type: protobuf.Type): JsonObject;
  /**
   * Output of Type.toObject → JSON value; undefined means "omit the field" (an element of a
   * repeated field or a map value that comes out undefined is written as null, as Go does).
   */
  fromProto(value: JsonObject, ctx: ConvertContext, path: string, type: protobuf.Type): unknown;
}

const RFC3339 = /^(\d{4}-\d{2}-\d{2})[Tt](\d{2}:\d{2}:\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

function parseTimestamp(value: unknown, path: string): { seconds: number; nanos: number } {
  const m = typeof value === "string" ? RFC3339.exec(value) : null;
  if (m === null) throw new ProtobufEncodeError(`${path}: expected an RFC3339 timestamp, got ${JSON.stringify(value)}`);
  const zone = m[4] === "z" ? "Z" : m[4];
  const ms = Date.parse(`${m[1]}T${m[2]}${zone}`);
  if (Number.isNaN(ms)) throw new ProtobufEncodeError(`${path}: invalid timestamp ${JSON.stringify(value)}`);
  const frac = m[3] === undefined ? "" : m[3].slice(1);
  const nanos = frac === "" ? 0 : Number((frac + "000000000").slice(0, 9));
  return { seconds: Math.floor(ms / 1000), nanos };
}

function formatSeconds(seconds: number): string {
  // Date#toISOString gives YYYY-MM-DDTHH:MM:SS.mmmZ; kube's RFC3339 drops the fraction.
  return new Date(seconds * 1000).toISOString().slice(0, 19);
}

function numberField(v: JsonObject, key: string): number | undefined {
  const x = v[key];
  // int64 fields (Timestamp seconds) come as digits (TO_OBJECT longs: String).
  if (typeof x === "string" && /^-?\d+$/.test(x)) return Number(x);
  return typeof x === "number" ? x : undefined;
}

function bytesOf(value: unknown): Uint8Array {
  if (typeof value === "string") return Buffer.from(value, "base64");
  if (value instanceof Uint8Array) return value;
  return new Uint8Array(0);
}

function isPlainObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value) && !(value instanceof Uint8Array);
}

function parseRaw(raw: Uint8Array, path: string, what: string): unknown {
  try {
    return parseJson(Buffer.from(raw).toString("utf8"));
  } catch {
    throw new ProtobufDecodeError(`${path}: ${what} is not valid JSON`);
  }
}

/** The JSONSchemaProps message a JSONSchemaPropsOr* wrapper holds (its `schema` field). */
function schemaType(wrapper: protobuf.Type): protobuf.Type {
  const field = wrapper.fields["schema"];
  const mt = field === undefined ? undefined : messageType(field);
  if (mt === undefined) throw new Error(`${wrapper.fullName} has no schema message field`);
  return mt;
}

function schemaToProto(wrapper: protobuf.Type, value: JsonObject, path: string): JsonObject {
  return jsonToProtoObject(schemaType(wrapper), value, path);
}

function schemaFromProto(wrapper: protobuf.Type, value: unknown, ctx: ConvertContext, path: string): JsonObject {
  return protoObjectToJson(schemaType(wrapper), isPlainObject(value) ? value : {}, ctx, path);
}

/**
 * apiextensions/v1 types whose JSON form is a bare value (types_jsonschema.go, marshal.go):
 * their Go MarshalJSON/UnmarshalJSON pick the field from the JSON value's shape.
 */
const APIEXTENSIONS_SPECIAL: Readonly<Record<string, SpecialType>> = {
  // JSON (`default`, `example`, `enum` items): any JSON value; raw holds its JSON text. A JSON
  // null is an empty Raw (JSON.UnmarshalJSON leaves it empty, MarshalJSON writes null).
  [`.${APIEXTENSIONS_V1}.JSON`]: {
    toProto: (value) => (value === null ? {} : { raw: Buffer.from(stringifyJson(value), "utf8") }),
    fromProto: (v, _ctx, path) => {
      const raw = bytesOf(v["raw"]);
      return raw.length === 0 ? null : parseRaw(raw, path, "JSON.raw");
    },
  },
  // JSONSchemaPropsOrArray (`items`): a schema object → schema (1), an array → jSONSchemas (2).
  // MarshalJSON writes the array when it is non-empty, else the schema.
  [`.${APIEXTENSIONS_V1}.JSONSchemaPropsOrArray`]: {
    toProto: (value, path, type) => {
      if (Array.isArray(value)) {
        return { jSONSchemas: value.map((x: unknown, i) => schemaToProto(type, expectObject(x, `${path}[${i}]`), `${path}[${i}]`)) };
      }
      return { schema: schemaToProto(type, expectObject(value, path), path) };
    },
    fromProto: (v, ctx, path, type) => {
      const list = Array.isArray(v["jSONSchemas"]) ? (v["jSONSchemas"] as unknown[]) : [];
      if (list.length > 0) return list.map((x, i) => schemaFromProto(type, x, ctx, `${path}[${i}]`));
      return v["schema"] === undefined || v["schema"] === null ? undefined : schemaFromProto(type, v["schema"], ctx, path);
    },
  },
  // JSONSchemaPropsOrBool (`additionalProperties`, `additionalItems`): `true`/`false` → allows (1);
  // a schema → allows = true plus schema (2), as UnmarshalJSON sets both.
  [`.${APIEXTENSIONS_V1}.JSONSchemaPropsOrBool`]: {
    toProto: (value, path, type) => {
      if (typeof value === "boolean") return { allows: value };
      return { allows: true, schema: schemaToProto(type, expectObject(value, path), path) };
    },
    fromProto: (v, ctx, path, type) => {
      if (v["schema"] !== undefined && v["schema"] !== null) return schemaFromProto(type, v["schema"], ctx, path);
      return v["allows"] === true;
    },
  },
  // JSONSchemaPropsOrStringArray (`dependencies` values): a string array → property (2), a schema
  // → schema (1). MarshalJSON writes the array when non-empty, else the schema, else null.
  [`.${APIEXTENSIONS_V1}.JSONSchemaPropsOrStringArray`]: {
    toProto: (value, path, type) => {
      if (Array.isArray(value)) {
        return {
          property: value.map((x: unknown, i) => {
            if (typeof x !== "string") throw new ProtobufEncodeError(`${path}[${i}]: expected a string`);
            return x;
          }),
        };
      }
      return { schema: schemaToProto(type, expectObject(value, path), path) };
    },
    fromProto: (v, ctx, path, type) => {
      const property = Array.isArray(v["property"]) ? (v["property"] as unknown[]) : [];
      if (property.length > 0) return [...property];
      return v["schema"] === undefined || v["schema"] === null ? undefined : schemaFromProto(type, v["schema"], ctx, path);
    },
  },
};

function expectObject(value: unknown, path: string): JsonObject {
  if (!isPlainObject(value)) throw new ProtobufEncodeError(`${path}: expected a schema object`);
  return value;
}

const SPECIAL: Readonly<Record<string, SpecialType>> = {
  ...APIEXTENSIONS_SPECIAL,
  // metav1.Time: RFC3339 with second precision. kube's Time.Marshal writes only seconds (nanos are
  // dropped, and ignored on Unmarshal); a zero time is an empty message, which becomes "absent".
  [`.${META_V1}.Time`]: {
    toProto: (value, path) => ({ seconds: parseTimestamp(value, path).seconds }),
    fromProto: (v) => {
      const seconds = numberField(v, "seconds");
      return seconds === undefined ? undefined : `${formatSeconds(seconds)}Z`;
    },
  },
  // metav1.MicroTime: RFC3339 with exactly six fractional digits ("2006-01-02T15:04:05.000000Z").
  // kube's ProtoMicroTime truncates to microseconds and gogo writes both fields, nanos=0 included.
  [`.${META_V1}.MicroTime`]: {
    toProto: (value, path) => {
      const { seconds, nanos } = parseTimestamp(value, path);
      return { seconds, nanos: Math.floor(nanos / 1000) * 1000 };
    },
    fromProto: (v) => {
      const seconds = numberField(v, "seconds");
      const nanos = numberField(v, "nanos") ?? 0;
      if (seconds === undefined && nanos === 0) return undefined;
      const micros = String(Math.floor(nanos / 1000)).padStart(6, "0");
      return `${formatSeconds(seconds ?? 0)}.${micros}Z`;
    },
  },
  // metav1.FieldsV1: the JSON form is the trie object itself; Raw holds its JSON text.
  [`.${META_V1}.FieldsV1`]: {
    toProto: (value) => ({ Raw: Buffer.from(stringifyJson(value), "utf8") }),
    fromProto: (v, _ctx, path) => {
      const raw = bytesOf(v["Raw"]);
      if (raw.length === 0) return undefined;
      try {
        return parseJson(Buffer.from(raw).toString("utf8"));
      } catch {
        throw new ProtobufDecodeError(`${path}: FieldsV1.Raw is not valid JSON`);
      }
    },
  },
  // metav1.Verbs: a []string in Go/JSON, wrapped in a message on the wire.
  [`.${META_V1}.Verbs`]: {
    toProto: (value) => ({ items: Array.isArray(value) ? value.map((x) => String(x)) : [] }),
    fromProto: (v) => (Array.isArray(v["items"]) ? [...(v["items"] as unknown[])] : []),
  },
  // authentication/v1 ExtraValue (UserInfo.extra's values): a []string in Go/JSON, a message on the wire.
  [".k8s.io.api.authentication.v1.ExtraValue"]: {
    toProto: (value) => ({ items: Array.isArray(value) ? value.map((x) => String(x)) : [] }),
    fromProto: (v) => (Array.isArray(v["items"]) ? [...(v["items"] as unknown[])] : []),
  },
  // authorization/v1 ExtraValue (SubjectAccessReviewSpec.extra's values), the same.
  [".k8s.io.api.authorization.v1.ExtraValue"]: {
    toProto: (value) => ({ items: Array.isArray(value) ? value.map((x) => String(x)) : [] }),
    fromProto: (v) => (Array.isArray(v["items"]) ? [...(v["items"] as unknown[])] : []),
  },
  // resource.Quantity: a string in JSON (the decoder keeps a number's literal), `string` on the wire.
  [".k8s.io.apimachinery.pkg.api.resource.Quantity"]: {
    toProto: (value) => ({ string: typeof value === "string" ? value : stringifyJson(value) }),
    fromProto: (v) => (typeof v["string"] === "string" && v["string"] !== "" ? v["string"] : undefined),
  },
  // intstr.IntOrString: a number or a string in JSON; type 0 (intVal) or 1 (strVal) on the wire.
  [".k8s.io.apimachinery.pkg.util.intstr.IntOrString"]: {
    toProto: (value) => (typeof value === "string" ? { type: 1, strVal: value } : { type: 0, intVal: value }),
    fromProto: (v) => (Number(v["type"] ?? 0) === 1 ? (typeof v["strVal"] === "string" ? v["strVal"] : "") : typeof v["intVal"] === "number" ? v["intVal"] : 0),
  },
  // runtime.RawExtension: the JSON form is the embedded object. On encode raw holds its JSON
  // bytes (as kube does when converting an embedded Object); on decode raw may hold JSON or a
  // full protobuf envelope (watch events, which kube encodes with the protobuf serializer).
  [".k8s.io.apimachinery.pkg.runtime.RawExtension"]: {
    toProto: (value) => ({ raw: Buffer.from(stringifyJson(value), "utf8") }),
    fromProto: (v, ctx, path) => {
      const raw = bytesOf(v["raw"]);
      if (raw.length === 0) return undefined;
      if (ctx.isEnvelope(raw)) return ctx.decodeEnvelope(raw);
      try {
        return parseJson(Buffer.from(raw).toString("utf8"));
      } catch {
        throw new ProtobufDecodeError(`${path}: RawExtension.raw is neither JSON nor a protobuf envelope`);
      }
    },
  },
};

function messageType(field: protobuf.Field): protobuf.Type | undefined {
  return field.resolvedType instanceof protobuf.Type ? field.resolvedType : undefined;
}

const factsByType = new WeakMap<protobuf.Type, MessageFacts>();

/** The schema source's facts about a message's fields (looked up once per type). */
function factsOf(type: protobuf.Type): MessageFacts {
  let facts = factsByType.get(type);
  if (facts === undefined) {
    facts = messageFacts(type.fullName.slice(1));
    factsByType.set(type, facts);
  }
  return facts;
}

/** The field's key in kube's JSON. */
function jsonName(type: protobuf.Type, field: protobuf.Field): string {
  return factsOf(type).jsonNames.get(field.name) ?? field.name;
}

// ---------------------------------------------------------------------------------------------
// JSON → protobuf

function valueToProto(field: protobuf.Field, value: unknown, path: string): unknown {
  const mt = messageType(field);
  // An int64 BigInt goes as its digits: protobufjs reads a string into a Long exactly.
  if (typeof value === "bigint") return value.toString();
  if (mt === undefined) return value; // scalars/bytes: Type.fromObject coerces (base64 → bytes)
  const special = SPECIAL[mt.fullName];
  if (special !== undefined) return special.toProto(value, path, mt);
  if (!isPlainObject(value)) throw new ProtobufEncodeError(`${path}: expected an object for ${mt.fullName.slice(1)}`);
  return jsonToProtoObject(mt, value, path);
}

/**
 * Converts kube JSON for `type` into a plain object for `type.fromObject`. Keys that are not
 * fields of the message (apiVersion/kind at top level, unknown fields) are ignored, as kube's
 * typed decoding does; null values are treated as absent.
 */
export function jsonToProtoObject(type: protobuf.Type, json: JsonObject, path = ""): JsonObject {
  const out: JsonObject = {};
  const facts = factsOf(type);
  for (const field of type.fieldsArray) {
    const mt = messageType(field);
    if (mt !== undefined && facts.inline.has(field.name)) {
      out[field.name] = jsonToProtoObject(mt, json, path);
      continue;
    }
    const key = jsonName(type, field);
    const value = getOwn(json, key);
    if (value === undefined || value === null) continue;
    const fpath = path === "" ? key : `${path}.${key}`;
    if (field.map) {
      if (!isPlainObject(value)) throw new ProtobufEncodeError(`${fpath}: expected an object (map)`);
      const entries: JsonObject = {};
      // gogo-protobuf marshals map entries sorted by key; insertion order here is encode order.
      for (const key of Object.keys(value).sort()) {
        const v = value[key];
        if (v === undefined || v === null) continue;
        // A map key is data (`__proto__` included): protobufjs keeps such keys as own members too.
        setMember(entries, key, valueToProto(field, v, `${fpath}[${key}]`));
      }
      out[field.name] = entries;
    } else if (field.repeated) {
      if (!Array.isArray(value)) throw new ProtobufEncodeError(`${fpath}: expected an array`);
      out[field.name] = value.map((v: unknown, i) => valueToProto(field, v, `${fpath}[${i}]`));
    } else {
      out[field.name] = valueToProto(field, value, fpath);
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// protobuf → JSON

function zeroValue(field: protobuf.Field): unknown {
  switch (field.type) {
    case "string":
    case "bytes":
      return "";
    case "bool":
      return false;
    default:
      return 0;
  }
}

const LONG_TYPES = new Set(["int64", "uint64", "sint64", "fixed64", "sfixed64"]);

/** A 64-bit field (toObject gives its digits): a number when a float64 holds it, else a BigInt (exact). */
function scalarFromProto(field: protobuf.Field, value: unknown): unknown {
  if (typeof value !== "string" || !LONG_TYPES.has(field.type)) return value;
  const n = Number(value);
  return Number.isSafeInteger(n) ? n : BigInt(value);
}

function isZero(value: unknown): boolean {
  return value === "" || value === 0 || value === false;
}

function valueFromProto(field: protobuf.Field, value: unknown, ctx: ConvertContext, path: string): unknown {
  const mt = messageType(field);
  if (mt === undefined) return scalarFromProto(field, value);
  const obj = isPlainObject(value) ? value : {};
  const special = SPECIAL[mt.fullName];
  if (special !== undefined) return special.fromProto(obj, ctx, path, mt);
  return protoObjectToJson(mt, obj, ctx, path);
}

/**
 * Converts the output of `type.toObject(msg, {longs: String, bytes: String, defaults: false})`
 * to kube JSON. Absent fields stay absent; zero-valued non-pointer scalars and empty
 * repeated/map fields are dropped (Go's omitempty) unless kube's json tag has no omitempty.
 */
export function protoObjectToJson(type: protobuf.Type, obj: JsonObject, ctx: ConvertContext, path = ""): JsonObject {
  const out: JsonObject = {};
  const facts = factsOf(type);
  for (const field of type.fieldsArray) {
    const always = facts.alwaysEmit.has(field.name);
    const value = obj[field.name];
    const name = jsonName(type, field);
    const fpath = path === "" ? name : `${path}.${name}`;
    const mt = messageType(field);
    if (mt !== undefined && facts.inline.has(field.name)) {
      for (const [k, v] of Object.entries(protoObjectToJson(mt, isPlainObject(value) ? value : {}, ctx, path))) setMember(out, k, v);
      continue;
    }
    if (field.map) {
      const entries = isPlainObject(value) ? value : {};
      const keys = Object.keys(entries);
      if (keys.length === 0 && !always) continue;
      const m: JsonObject = {};
      for (const k of keys) setMember(m, k, valueFromProto(field, entries[k], ctx, `${fpath}[${k}]`) ?? null);
      out[name] = m;
    } else if (field.repeated) {
      const items = Array.isArray(value) ? (value as unknown[]) : [];
      if (items.length === 0 && !always) continue;
      out[name] = items.map((v, i) => valueFromProto(field, v, ctx, `${fpath}[${i}]`) ?? null);
    } else if (messageType(field) !== undefined) {
      if (value === undefined || value === null) continue;
      const converted = valueFromProto(field, value, ctx, fpath);
      if (converted !== undefined) out[name] = converted;
    } else {
      if (value === undefined || value === null) {
        // Absent from the wire: a Go pointer is nil, which encoding/json writes as null when the
        // field has no omitempty (TokenRequestSpec.expirationSeconds, HTTPIngressPath.pathType):
        // defaulting and validation then see "not set", not a zero value.
        if (always) out[name] = facts.pointers.has(field.name) ? null : zeroValue(field);
        continue;
      }
      const scalar = scalarFromProto(field, value);
      if (isZero(scalar) && !always && !facts.pointers.has(field.name)) continue;
      out[name] = scalar;
    }
  }
  return out;
}
