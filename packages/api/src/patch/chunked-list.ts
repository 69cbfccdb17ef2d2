/**
 * Long lists of a document under a JSON patch, held in chunks while the patch runs. An insert or
 * remove in a JavaScript array moves everything after it: 10,000 operations at the head of a
 * 500,000-item list (a custom resource's integers) moved 5 billion items. In chunks of at most
 * 2 × {@link CHUNK} items an insert or remove moves at most that many, plus a walk over the chunk
 * lengths. The arrays keep their identity: the document's array object is the key, and its
 * content is written back (materialized) before anything reads it whole and when the patch ends.
 */
import { isObject } from './errors.js';

/** Below this length a splice is as cheap as a chunk's; such lists stay plain arrays. */
export const CHUNKED_MIN_LENGTH = 4096;
const CHUNK = 1024;

/** A list as chunks of at most 2 × CHUNK items (none empty unless the list is). */
export class ChunkedList {
  #chunks: unknown[][] = [];
  #length = 0;

  constructor(items: readonly unknown[]) {
    for (let i = 0; i < items.length; i += CHUNK) this.#chunks.push(items.slice(i, i + CHUNK));
    this.#length = items.length;
  }

  get length(): number {
    return this.#length;
  }

  /** The chunk holding index `i` (0 ≤ i < length, or i = length for an append) and the offset in it. */
  #locate(i: number): [number, number] {
    let at = i;
    for (let c = 0; c < this.#chunks.length; c++) {
      const len = this.#chunks[c]!.length;
      if (at < len) return [c, at];
      at -= len;
    }
    const last = this.#chunks.length - 1;
    return [last, this.#chunks[last]?.length ?? 0];
  }

  get(i: number): unknown {
    const [c, o] = this.#locate(i);
    return this.#chunks[c]![o];
  }

  set(i: number, v: unknown): void {
    const [c, o] = this.#locate(i);
    this.#chunks[c]![o] = v;
  }

  /** Inserts `v` before index `i` (`i` = length appends). */
  insert(i: number, v: unknown): void {
    if (this.#chunks.length === 0) this.#chunks.push([]);
    const [c, o] = this.#locate(i);
    const chunk = this.#chunks[c]!;
    chunk.splice(o, 0, v);
    if (chunk.length > 2 * CHUNK) this.#chunks.splice(c, 1, chunk.slice(0, CHUNK), chunk.slice(CHUNK));
    this.#length++;
  }

  remove(i: number): void {
    const [c, o] = this.#locate(i);
    const chunk = this.#chunks[c]!;
    chunk.splice(o, 1);
    if (chunk.length === 0) this.#chunks.splice(c, 1);
    this.#length--;
  }

  /** Writes the list back into `arr`. */
  writeTo(arr: unknown[]): void {
    arr.length = 0;
    for (const chunk of this.#chunks) for (const v of chunk) arr.push(v);
  }
}

/** The chunked lists of one patch, by the document's array objects. */
export class ChunkedLists {
  readonly #lists = new Map<unknown[], ChunkedList>();

  /** The chunked form of `arr`, if it has one. */
  get(arr: unknown[]): ChunkedList | undefined {
    return this.#lists.get(arr);
  }

  /** The chunked form of `arr`, made now if `arr` is long enough to need one. */
  forSplice(arr: unknown[]): ChunkedList | undefined {
    let list = this.#lists.get(arr);
    if (!list && arr.length >= CHUNKED_MIN_LENGTH) {
      list = new ChunkedList(arr);
      this.#lists.set(arr, list);
    }
    return list;
  }

  /**
   * Writes back every chunked list inside `value` (which is then read whole: copied or
   * compared). Costs the size of `value`, which the caller's own reading costs anyway.
   */
  materialize(value: unknown): void {
    if (this.#lists.size === 0) return;
    const stack: unknown[] = [value];
    while (stack.length > 0) {
      const v = stack.pop();
      if (Array.isArray(v)) {
        const list = this.#lists.get(v);
        if (list) {
          list.writeTo(v);
          this.#lists.delete(v);
        }
        for (const x of v) if (typeof x === 'object' && x !== null) stack.push(x);
      } else if (isObject(v)) {
        for (const k of Object.keys(v)) {
          const x = v[k];
          if (typeof x === 'object' && x !== null) stack.push(x);
        }
      }
    }
  }

  /** Writes back every chunked list (the patch is done). */
  materializeAll(): void {
    for (const [arr, list] of this.#lists) list.writeTo(arr);
    this.#lists.clear();
  }
}
