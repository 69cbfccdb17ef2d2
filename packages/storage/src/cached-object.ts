/**
 * One object version as the watch cache holds it: the stored JSON text (a one-byte string when
 * ASCII, as V8 keeps it compactly) and its revision, decoded only on demand. A decoded object is
 * remembered weakly, so readers that hold it share it and nothing is kept for readers that are gone.
 */
import type { StoredObject } from '@plinth/api';
import { decodeObject } from './object-codec.js';
import { withResourceVersion } from './object-json.js';

/** Top-level members list items omit (kube's typed lists carry no apiVersion/kind on items). */
const TYPE_META = ['apiVersion', 'kind'] as const;

export class CachedObject {
  /** The stored JSON (no resourceVersion: it is `rev`). */
  readonly text: string;
  readonly rev: number;
  /** Size of the stored value in bytes (what a queued watch event is charged). */
  readonly size: number;
  #ref: WeakRef<StoredObject> | undefined;
  /**
   * Whether the text, with the resourceVersion injected, is byte for byte what JSON.stringify of
   * the decoded object gives, and it has the cache's apiVersion/kind: undefined until checked.
   */
  #plain: boolean | undefined;

  constructor(text: string, rev: number, size: number) {
    this.text = text;
    this.rev = rev;
    this.size = size;
  }

  static fromBuffer(value: Buffer, rev: number): CachedObject {
    return new CachedObject(value.toString('utf8'), rev, value.length);
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
   * The object's JSON with its resourceVersion when it can be served as bytes (see #plain), else
   * undefined: the caller encodes object() instead.
   */
  json(apiVersion: string, kind: string): string | undefined {
    if (this.#plain === false) return undefined;
    const out = withResourceVersion(this.text, String(this.rev));
    if (this.#plain === undefined) this.#plain = this.#check(out, apiVersion, kind);
    return this.#plain ? out : undefined;
  }

  /** As json(), without apiVersion and kind (a list item). */
  itemJson(apiVersion: string, kind: string): string | undefined {
    if (this.#plain === undefined) this.json(apiVersion, kind);
    if (!this.#plain) return undefined;
    return withResourceVersion(this.text, String(this.rev), TYPE_META);
  }

  #check(out: string | undefined, apiVersion: string, kind: string): boolean {
    if (out === undefined) return false;
    const obj = this.object();
    return obj.apiVersion === apiVersion && obj.kind === kind && JSON.stringify(obj) === out;
  }
}
