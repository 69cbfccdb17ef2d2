/**
 * One object version as the watch cache holds it: the stored JSON text (a one-byte string when
 * ASCII, as V8 keeps it compactly) and its revision, decoded only on demand. A decoded object is
 * remembered weakly, so readers that hold it share it and nothing is kept for readers that are gone.
 */
import { stringifyJson, type StoredObject } from '@plinth/api';
import { decodeObject } from './object-codec.js';
import { cutItemJson, cutJson, cutOf, typeAndMetadataJson, withResourceVersion } from './object-json.js';

/**
 * Defaulting on read (a CRD schema's defaults): the object itself when no default applies, else a
 * new object (copy-on-write).
 */
export type ReadDefaults = (obj: StoredObject) => StoredObject;

/** Top-level members list items omit (kube's typed lists carry no apiVersion/kind on items). */
const TYPE_META = ['apiVersion', 'kind'] as const;
/** What partialObject leaves out of metadata. */
const MANAGED_FIELDS = ['managedFields'] as const;
/** #plain: not servable as bytes. */
const NOT_PLAIN = -1;
/** #plain: servable, through the scanner (no cut). */
const PLAIN = -2;

export class CachedObject {
  /** The stored JSON (no resourceVersion: it is `rev`). */
  readonly text: string;
  readonly rev: number;
  /** Size of the stored value in bytes (what a queued watch event is charged). */
  readonly size: number;
  #ref: WeakRef<StoredObject> | undefined;
  /**
   * Whether the text, with the resourceVersion injected, is byte for byte what JSON.stringify of
   * the decoded object gives, and it has the cache's apiVersion/kind: undefined until checked,
   * NOT_PLAIN, PLAIN (served through the scanner), or where to cut the text (object-json's cutOf)
   * so that serving it needs no scan.
   */
  #plain: number | undefined;
  /** A read defaulter found to leave this version unchanged (its bytes are then served as they are). */
  #undefaulted: ReadDefaults | undefined;
  constructor(text: string, rev: number, size: number) {
    this.text = text;
    this.rev = rev;
    this.size = size;
  }

  static fromBuffer(value: Buffer, rev: number): CachedObject {
    return new CachedObject(value.toString('utf8'), rev, value.length);
  }

  /**
   * This version's text is known to be what JSON.stringify writes for what decoding it gives, with
   * the cache's apiVersion and kind (this process wrote it: object-codec's writtenStored), and
   * `cut` is cutOf's for it (undefined: none, the scanner serves it): it is served as bytes without
   * the check that decodes and encodes it. Whether that was news (not checked before).
   */
  provenPlain(cut: number | undefined): boolean {
    if (this.#plain !== undefined) return false;
    this.#plain = cut ?? PLAIN;
    return true;
  }

  /** The same stored text at another revision (a deletion's last state). */
  at(rev: number): CachedObject {
    return new CachedObject(this.text, rev, this.size);
  }

  /** The decoded object (shared with other readers: never changed). */
  object(): StoredObject {
    let obj = this.#ref?.deref();
    if (!obj) {
      obj = decodeObject(this.text, this.rev);
      this.#ref = new WeakRef(obj);
    }
    return obj;
  }

  /**
   * The object with only apiVersion, kind and metadata (kube's PartialObjectMetadata), for readers
   * of metadata only (the garbage collector's monitors): the decoded object when someone holds
   * it, else only those members decoded, without metadata.managedFields (often most of the
   * metadata, and read by no such reader) — a new object: the caller's own.
   */
  partialObject(): StoredObject {
    const obj = this.#ref?.deref();
    if (obj) return obj;
    const json = typeAndMetadataJson(this.text, MANAGED_FIELDS);
    return json === undefined ? this.object() : decodeObject(json, this.rev);
  }

  /**
   * The object's JSON with its resourceVersion when it can be served as bytes (see #plain), else
   * undefined: the caller encodes object() instead.
   */
  json(apiVersion: string, kind: string, readDefaults?: ReadDefaults): string | undefined {
    if (!this.#servable(apiVersion, kind, readDefaults)) return undefined;
    return this.#plain === PLAIN ? withResourceVersion(this.text, String(this.rev)) : cutJson(this.text, this.#plain!, String(this.rev));
  }

  /** As json(), without apiVersion and kind (a list item). */
  itemJson(apiVersion: string, kind: string, readDefaults?: ReadDefaults): string | undefined {
    if (!this.#servable(apiVersion, kind, readDefaults)) return undefined;
    return this.#plain === PLAIN ? withResourceVersion(this.text, String(this.rev), TYPE_META) : cutItemJson(this.text, this.#plain!, String(this.rev));
  }

  /**
   * Whether the stored bytes are what the reader is to get: plain (see #plain), and left as they
   * are by `readDefaults` (checked once per defaulter: a CRD's new schema brings a new one).
   */
  #servable(apiVersion: string, kind: string, readDefaults: ReadDefaults | undefined): boolean {
    if (this.#plain === undefined) this.#plain = this.#check(apiVersion, kind);
    if (this.#plain === NOT_PLAIN) return false;
    if (!readDefaults || this.#undefaulted === readDefaults) return true;
    const obj = this.object();
    if (readDefaults(obj) !== obj) return false;
    this.#undefaulted = readDefaults;
    return true;
  }

  #check(apiVersion: string, kind: string): number {
    const rv = String(this.rev);
    const out = withResourceVersion(this.text, rv);
    if (out === undefined) return NOT_PLAIN;
    const obj = this.object();
    if (obj.apiVersion !== apiVersion || obj.kind !== kind || stringifyJson(obj) !== out) return NOT_PLAIN;
    // The cut is used only where it gives exactly what the scanner gives.
    const cut = cutOf(this.text, TYPE_META);
    if (cut === undefined || cutJson(this.text, cut, rv) !== out || cutItemJson(this.text, cut, rv) !== withResourceVersion(this.text, rv, TYPE_META)) return PLAIN;
    return cut;
  }
}
