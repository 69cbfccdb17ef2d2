/**
 * How objects are stored in etcd: JSON without resourceVersion (which is the key's mod_revision).
 * Numbers are kube's: int64 values above 2^53 are BigInts, written and read back exactly.
 */
import { hasLongNumbers, jsonEqual, parseStoredJson, stringifyJson, type StoredObject } from '@plinth/api';
import { withResourceVersion } from './object-json.js';

/** Serializes an object for storage: resourceVersion is never stored (it is the mod_revision). */
export function encodeObject(obj: StoredObject): Buffer {
  return encodeForWrite(obj).data;
}

/** An object as a write stores it: the bytes, their text, and the object they encode. */
export interface EncodedObject {
  data: Buffer;
  text: string;
  /** The object without metadata.resourceVersion (`obj` itself when it had none). */
  stored: StoredObject;
  /** Where the metadata object ends in `text` (just after its `}`); -1 when not known. */
  metaEnd: number;
  /**
   * object-json's cutOf(text, ['apiVersion', 'kind']), known from the encoding: how the watch
   * cache serves these bytes without scanning them (undefined where cutOf would find no cut, or
   * where roundTrips is false).
   */
  typeCut: number | undefined;
  /**
   * Decoding `text` (decodeObject) and encoding what it gives returns `text`, and the metadata is
   * an object: JSON.stringify wrote it, and it has no number of 16 digits or more (read back by
   * the exact parser, which reads an integer beyond int64 as a float).
   */
  roundTrips: boolean;
}

/** Top-level members a list item leaves out (CachedObject's TYPE_META). */
const TYPE_MEMBERS = new Set(['apiVersion', 'kind']);

/**
 * stringifyJson of a stored object written member by member, so that where its metadata ends is
 * known without scanning the text again (a write's response inserts the resourceVersion there).
 * JSON.stringify of a plain object is `{` + its members `"key":value` (members whose value
 * encodes to nothing left out) + `}`: the same text.
 */
function encodeMembers(obj: StoredObject): { text: string; metaEnd: number; typeCut: number | undefined; roundTrips: boolean } {
  const proto: unknown = Object.getPrototypeOf(obj);
  if ((proto !== Object.prototype && proto !== null) || typeof (obj as { toJSON?: unknown }).toJSON === 'function') {
    return { text: stringifyJson(obj), metaEnd: -1, typeCut: undefined, roundTrips: false };
  }
  let text = '{';
  let metaEnd = -1;
  // cutOf's conditions: apiVersion and kind (when present) come before every other member, some
  // member follows them, and the metadata is an object with members (stored: no resourceVersion).
  let keptFrom = -1;
  let typeAfterKept = false;
  let metaMembers = false;
  const record = obj as Record<string, unknown>;
  for (const k of Object.keys(record)) {
    const v = stringifyJson(record[k]) as string | undefined;
    if (v === undefined) continue;
    if (text.length > 1) text += ',';
    if (TYPE_MEMBERS.has(k)) typeAfterKept ||= keptFrom >= 0;
    else if (keptFrom < 0) keptFrom = text.length;
    text += `${JSON.stringify(k)}:${v}`;
    if (k === 'metadata' && v.charCodeAt(0) === 0x7b) {
      metaEnd = text.length;
      metaMembers = v.length > 2;
    }
  }
  text += '}';
  const roundTrips = metaEnd > 0 && !hasLongNumbers(text);
  const typeCut = roundTrips && metaMembers && keptFrom >= 0 && !typeAfterKept && keptFrom < 2 ** 16 ? metaEnd * 2 ** 16 + keptFrom : undefined;
  return { text, metaEnd, typeCut, roundTrips };
}

/** encodeObject, keeping the text and the object encoded for writtenObject. */
export function encodeForWrite(obj: StoredObject): EncodedObject {
  let stored = obj;
  if (obj.metadata.resourceVersion !== undefined) {
    // A copy without it (the object may be shared, e.g. with the watch cache: never changed here).
    const { resourceVersion: _rv, ...metadata } = obj.metadata;
    stored = { ...obj, metadata };
  }
  const { text, metaEnd, typeCut, roundTrips } = encodeMembers(stored);
  return { data: Buffer.from(text), text, stored, metaEnd, typeCut, roundTrips };
}

/** What writtenJson needs to know an object is still as a write returned it. */
interface Written {
  text: string;
  /** Where the stored metadata ends in `text` (EncodedObject.metaEnd). */
  metaEnd: number;
  typeCut: number | undefined;
  roundTrips: boolean;
  rv: string;
  metadata: object;
  apiVersion: unknown;
  kind: unknown;
  members: number;
  metadataMembers: number;
}

/** The stored text of each object a write returned (weakly: for as long as the caller holds it). */
const WRITTEN = new WeakMap<StoredObject, Written>();

export function decodeObject(data: Buffer | string, revision: number): StoredObject {
  const obj = parseStoredJson(typeof data === 'string' ? data : data.toString('utf8')) as StoredObject;
  obj.metadata ??= {};
  obj.metadata.resourceVersion = String(revision);
  return obj;
}

/**
 * What a write returns: the object just written (its JSON is the stored bytes) with the write's
 * resourceVersion — instead of decoding the bytes again. Shallow copies: `obj` is not changed.
 * Given `text` (stringifyJson of `obj`, the bytes written), writtenJson answers the returned
 * object's JSON from it.
 */
export function writtenObject(obj: StoredObject, revision: number, text?: string, metaEnd = -1, typeCut?: number, roundTrips = false): StoredObject {
  const rv = String(revision);
  const metadata = { ...obj.metadata, resourceVersion: rv };
  const out = { ...obj, metadata };
  if (text !== undefined && obj.metadata.resourceVersion === undefined) {
    WRITTEN.set(out, { text, metaEnd, typeCut, roundTrips, rv, metadata, apiVersion: out.apiVersion, kind: out.kind, members: Object.keys(out).length, metadataMembers: Object.keys(metadata).length });
  }
  return out;
}

/**
 * stringifyJson of an object a write returned, cut from the bytes written (the resourceVersion
 * added as writtenObject adds it) instead of encoding the object a second time; undefined for
 * any other object, or one whose type, metadata or members were changed since (then the caller
 * encodes it). A write's result is not changed deeper than that: the registry hands it on as is.
 */
export function writtenJson(obj: StoredObject): string | undefined {
  const w = WRITTEN.get(obj);
  if (!w) return undefined;
  const meta = obj.metadata;
  if (meta !== w.metadata || meta.resourceVersion !== w.rv || obj.apiVersion !== w.apiVersion || obj.kind !== w.kind) return undefined;
  if (Object.keys(obj).length !== w.members || Object.keys(meta).length !== w.metadataMembers) return undefined;
  // The stored metadata has no resourceVersion: writtenObject added it as its last member.
  const end = w.metaEnd;
  if (end < 0) return withResourceVersion(w.text, w.rv);
  const empty = w.text.charCodeAt(end - 2) === 0x7b;
  return `${w.text.slice(0, end - 1)}${empty ? '' : ','}"resourceVersion":${JSON.stringify(w.rv)}}${w.text.slice(end)}`;
}

/**
 * The bytes a write stored for the object it returned, as their text, with the write's revision
 * and the stored apiVersion and kind: what the watch cache needs to know, when the write's event
 * reaches it, that these bytes are what JSON.stringify writes (they were written by it) without
 * decoding and encoding them again. Undefined for any other object.
 */
export function writtenStored(obj: StoredObject): { text: string; revision: number; typeCut: number | undefined; roundTrips: boolean; apiVersion: unknown; kind: unknown } | undefined {
  const w = WRITTEN.get(obj);
  return w ? { text: w.text, revision: Number(w.rv), typeCut: w.typeCut, roundTrips: w.roundTrips, apiVersion: w.apiVersion, kind: w.kind } : undefined;
}

/** Deep equality of two decoded objects, ignoring key order and metadata.resourceVersion. */
export function sameContent(a: StoredObject, b: StoredObject): boolean {
  const { resourceVersion: _a, ...ma } = a.metadata;
  const { resourceVersion: _b, ...mb } = b.metadata;
  return jsonEqual({ ...a, metadata: ma }, { ...b, metadata: mb });
}
