/**
 * kube's Protobuf wire format ("application/vnd.kubernetes.protobuf") for plinth's served types.
 *
 * Envelope (k8s.io/apimachinery/pkg/runtime/serializer/protobuf/protobuf.go, Serializer):
 *   bytes = 6b 38 73 00 ++ runtime.Unknown{typeMeta{apiVersion, kind}, raw = <typed message>,
 *           contentEncoding = "", contentType = ""}
 * kube's Unknown.NestedMarshalTo (runtime/types_proto.go) always writes contentEncoding and
 * contentType, as empty strings (… 1a 00 22 00); we do the same so our bytes match kube's.
 *
 * Watch stream (Content-Type "application/vnd.kubernetes.protobuf;stream=watch"), from
 * apiserver pkg/endpoints/handlers/watch.go + response.go (watchEncoder.doEncode),
 * apimachinery runtime/serializer/protobuf_extension.go and util/framer/framer.go:
 *   - the embedded object is encoded with the regular protobuf Serializer (full envelope:
 *     prefix + Unknown) and stored as WatchEvent.object = RawExtension{raw: <envelope>};
 *   - the metav1.WatchEvent itself is encoded with the StreamSerializer, which for protobuf is
 *     the RawSerializer: the bare WatchEvent message, with NO prefix and NO Unknown wrapper;
 *   - each encoded WatchEvent is one frame of protobuf.LengthDelimitedFramer
 *     (framer.NewLengthDelimitedFrameWriter): a 4-byte big-endian uint32 length, then the bytes.
 */
import protobuf from "protobufjs";
import { ProtobufDecodeError, ProtobufEncodeError, ProtobufUnsupportedError } from "./errors.js";
import { jsonToProtoObject, protoObjectToJson, type ConvertContext, type JsonObject } from "./convert.js";
import { lookupMessage, requireMessage } from "./loader.js";
import {
  META_GROUP_KINDS,
  META_V1,
  PER_GROUP_META_KINDS,
  UNVERSIONED_META_KINDS,
  packageForApiVersion,
} from "./semantics.js";

export { ProtobufDecodeError, ProtobufEncodeError, ProtobufUnsupportedError } from "./errors.js";
export { protoDir } from "./loader.js";

/** kube's protobuf magic: "k8s" + encoding byte 0x00 (runtime.Unknown follows). */
export const PROTOBUF_PREFIX: Buffer = Buffer.from([0x6b, 0x38, 0x73, 0x00]);
export const PROTOBUF_CONTENT_TYPE = "application/vnd.kubernetes.protobuf";
/** Content-Type of a protobuf watch response (watch.go appends ";stream=watch"). */
export const PROTOBUF_WATCH_CONTENT_TYPE = "application/vnd.kubernetes.protobuf;stream=watch";

const UNKNOWN = "k8s.io.apimachinery.pkg.runtime.Unknown";
const META_V1BETA1 = "k8s.io.apimachinery.pkg.apis.meta.v1beta1";
const WATCH_EVENT = `${META_V1}.WatchEvent`;
const LIST_META = `.${META_V1}.ListMeta`;
const OBJECT_META = `.${META_V1}.ObjectMeta`;

const TO_OBJECT: protobuf.IConversionOptions = {
  // 64-bit integers as digits: convert.ts keeps those above 2^53 exact (BigInt).
  longs: String,
  bytes: String,
  defaults: false,
  arrays: false,
  objects: false,
};

function isKindMessage(type: protobuf.Type): boolean {
  const meta = type.fields["metadata"];
  const metaType = meta?.resolvedType?.fullName;
  return meta !== undefined && meta.id === 1 && (metaType === OBJECT_META || metaType === LIST_META);
}

/**
 * Fully-qualified protobuf message name (no leading dot) for a served apiVersion/kind, or
 * undefined when kube has no protobuf form for it (e.g. meta.k8s.io/v1 Table, custom resources).
 */
export function protoTypeFor(apiVersion: string, kind: string): string | undefined {
  if (apiVersion === "v1" && UNVERSIONED_META_KINDS.has(kind)) return `${META_V1}.${kind}`;
  const pkg = packageForApiVersion(apiVersion);
  if (pkg === undefined) return undefined;
  if (pkg === META_V1) {
    if (!META_GROUP_KINDS.has(kind) && !PER_GROUP_META_KINDS.has(kind)) return undefined;
    return lookupMessage(`${META_V1}.${kind}`) !== undefined ? `${META_V1}.${kind}` : undefined;
  }
  if (pkg === META_V1BETA1) {
    // v1beta1's PartialObjectMetadata is v1's type; its list has messages (and numbers) of its own.
    if (kind === "PartialObjectMetadata") return `${META_V1}.${kind}`;
    if (kind === "PartialObjectMetadataList" && lookupMessage(`${META_V1BETA1}.${kind}`) !== undefined) return `${META_V1BETA1}.${kind}`;
    return undefined;
  }
  const own = lookupMessage(`${pkg}.${kind}`);
  if (own !== undefined && isKindMessage(own)) return `${pkg}.${kind}`;
  if (PER_GROUP_META_KINDS.has(kind)) return `${META_V1}.${kind}`;
  return undefined;
}

function typeFor(apiVersion: string, kind: string): protobuf.Type {
  const name = protoTypeFor(apiVersion, kind);
  const type = name === undefined ? undefined : lookupMessage(name);
  if (type === undefined) {
    throw new ProtobufUnsupportedError(`no protobuf serialization for kind "${kind}" in "${apiVersion}"`);
  }
  return type;
}

function encodeMessage(type: protobuf.Type, obj: JsonObject): Uint8Array {
  const plain = jsonToProtoObject(type, obj);
  try {
    return type.encode(type.fromObject(plain)).finish();
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    throw new ProtobufEncodeError(`cannot encode ${type.fullName.slice(1)}: ${reason}`);
  }
}

/** Encodes kube JSON (apiVersion and kind set) as a protobuf envelope: prefix + runtime.Unknown. */
export function encodeProtobuf(obj: Record<string, unknown>): Buffer {
  const kind = obj["kind"];
  // kube serves APIVersions (`/api`) without apiVersion in JSON; its protobuf TypeMeta says v1.
  const apiVersion = obj["apiVersion"] ?? (typeof kind === "string" && UNVERSIONED_META_KINDS.has(kind) ? "v1" : undefined);
  if (typeof apiVersion !== "string" || typeof kind !== "string" || apiVersion === "" || kind === "") {
    throw new ProtobufUnsupportedError("object must have apiVersion and kind to be encoded as protobuf");
  }
  const raw = encodeMessage(typeFor(apiVersion, kind), obj);
  const unknownType = requireMessage(UNKNOWN);
  const unknown = unknownType.create({
    typeMeta: { apiVersion, kind },
    raw,
    contentEncoding: "",
    contentType: "",
  });
  return Buffer.concat([PROTOBUF_PREFIX, unknownType.encode(unknown).finish()]);
}

function hasPrefix(bytes: Uint8Array): boolean {
  return bytes.length >= PROTOBUF_PREFIX.length && PROTOBUF_PREFIX.every((b, i) => bytes[i] === b);
}

const CONTEXT: ConvertContext = {
  isEnvelope: hasPrefix,
  decodeEnvelope: (bytes) => decodeProtobuf(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)),
};

function decodeMessage(type: protobuf.Type, bytes: Uint8Array, what: string): JsonObject {
  let plain: JsonObject;
  try {
    plain = type.toObject(type.decode(bytes), TO_OBJECT);
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    throw new ProtobufDecodeError(`malformed protobuf ${what}: ${reason}`);
  }
  return protoObjectToJson(type, plain, CONTEXT);
}

/** Decodes a protobuf envelope (prefix + runtime.Unknown) to kube JSON with apiVersion/kind set. */
export function decodeProtobuf(buf: Buffer): Record<string, unknown> {
  if (buf.length < PROTOBUF_PREFIX.length || !hasPrefix(buf)) {
    throw new ProtobufDecodeError(
      `provided data does not appear to be a protobuf message, expected prefix ${PROTOBUF_PREFIX.toString("hex")}`,
    );
  }
  if (buf.length === PROTOBUF_PREFIX.length) throw new ProtobufDecodeError("empty protobuf body");
  const unknown = decodeMessage(requireMessage(UNKNOWN), buf.subarray(PROTOBUF_PREFIX.length), "runtime.Unknown");
  const typeMeta = (unknown["typeMeta"] ?? {}) as JsonObject;
  const apiVersion = typeof typeMeta["apiVersion"] === "string" ? typeMeta["apiVersion"] : "";
  const kind = typeof typeMeta["kind"] === "string" ? typeMeta["kind"] : "";
  if (kind === "") throw new ProtobufDecodeError("protobuf envelope has no kind");
  if (apiVersion === "") throw new ProtobufDecodeError("protobuf envelope has no apiVersion");
  const encoding = unknown["contentEncoding"];
  if (typeof encoding === "string" && encoding !== "") {
    throw new ProtobufUnsupportedError(`unsupported protobuf contentEncoding "${encoding}"`);
  }
  const type = typeFor(apiVersion, kind);
  const raw = typeof unknown["raw"] === "string" ? Buffer.from(unknown["raw"], "base64") : Buffer.alloc(0);
  return { apiVersion, kind, ...decodeMessage(type, raw, `${kind} message`) };
}

/**
 * One frame of kube's protobuf watch stream: 4-byte big-endian length ++ bare metav1.WatchEvent
 * whose object.raw is the object's full protobuf envelope (see the header comment).
 */
export function encodeWatchEventFrame(type: string, object: Record<string, unknown>): Buffer {
  const eventType = requireMessage(WATCH_EVENT);
  const event = eventType.create({ type, object: { raw: encodeProtobuf(object) } });
  const body = eventType.encode(event).finish();
  const header = Buffer.alloc(4);
  header.writeUInt32BE(body.length, 0);
  return Buffer.concat([header, body]);
}

export interface DecodedWatchEvent {
  type: string;
  object: Record<string, unknown>;
}

/** Splits a buffer of complete protobuf watch frames and decodes each event (for tests/clients). */
export function decodeWatchEventFrames(buf: Buffer): DecodedWatchEvent[] {
  const eventType = requireMessage(WATCH_EVENT);
  const events: DecodedWatchEvent[] = [];
  let offset = 0;
  while (offset < buf.length) {
    if (buf.length - offset < 4) throw new ProtobufDecodeError("truncated watch frame header");
    const length = buf.readUInt32BE(offset);
    const start = offset + 4;
    if (buf.length - start < length) throw new ProtobufDecodeError("truncated watch frame");
    const event = decodeMessage(eventType, buf.subarray(start, start + length), "WatchEvent");
    const object = event["object"];
    events.push({
      type: typeof event["type"] === "string" ? event["type"] : "",
      object: typeof object === "object" && object !== null ? (object as Record<string, unknown>) : {},
    });
    offset = start + length;
  }
  return events;
}

const protobufServed = new WeakMap<object, boolean>();

/**
 * Whether a kind has a Protobuf form (kube's serializer for its group has one). Endpoints of a
 * kind without one offer only JSON and YAML: an Accept that prefers Protobuf but takes JSON gets
 * JSON, and an Accept of only Protobuf a 406 — never a 500 after the fact.
 */
export function servesProtobuf(def: { group: string; version: string; kind: string }): boolean {
  let served = protobufServed.get(def);
  if (served === undefined) {
    served = protoTypeFor(def.group ? `${def.group}/${def.version}` : def.version, def.kind) !== undefined;
    protobufServed.set(def, served);
  }
  return served;
}
