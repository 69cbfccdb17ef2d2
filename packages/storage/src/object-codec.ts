/**
 * How objects are stored in etcd: JSON without resourceVersion (which is the key's mod_revision).
 * Numbers are kube's: int64 values above 2^53 are BigInts, written and read back exactly.
 */
import { jsonEqual, parseStoredJson, stringifyJson, type StoredObject } from '@plinth/api';

/** Serializes an object for storage: resourceVersion is never stored (it is the mod_revision). */
export function encodeObject(obj: StoredObject): Buffer {
  if (obj.metadata.resourceVersion === undefined) return Buffer.from(stringifyJson(obj));
  // A copy without it (the object may be shared, e.g. with the watch cache: never changed here).
  const { resourceVersion: _rv, ...metadata } = obj.metadata;
  return Buffer.from(stringifyJson({ ...obj, metadata }));
}

export function decodeObject(data: Buffer | string, revision: number): StoredObject {
  const obj = parseStoredJson(typeof data === 'string' ? data : data.toString('utf8')) as StoredObject;
  obj.metadata ??= {};
  obj.metadata.resourceVersion = String(revision);
  return obj;
}

/**
 * What a write returns: the object just written (its JSON is the stored bytes) with the write's
 * resourceVersion — instead of decoding the bytes again. Shallow copies: `obj` is not changed.
 */
export function writtenObject(obj: StoredObject, revision: number): StoredObject {
  return { ...obj, metadata: { ...obj.metadata, resourceVersion: String(revision) } };
}

/** Deep equality of two decoded objects, ignoring key order and metadata.resourceVersion. */
export function sameContent(a: StoredObject, b: StoredObject): boolean {
  const { resourceVersion: _a, ...ma } = a.metadata;
  const { resourceVersion: _b, ...mb } = b.metadata;
  return jsonEqual({ ...a, metadata: ma }, { ...b, metadata: mb });
}
