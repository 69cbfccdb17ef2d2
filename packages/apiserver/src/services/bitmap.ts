/**
 * kube's `allocator.AllocationBitmap` (pkg/registry/core/service/allocator/bitmap.go): a bit per
 * offset of a range, the next free offset found by a random scan (kube 1.24's default: the
 * ServiceIPStaticSubrange gate is alpha and off), and a snapshot in kube's stored layout.
 *
 * The snapshot is Go's `big.Int.Bytes()` of the bitmap read as one number whose bit i is offset i:
 * big-endian, without leading zero bytes (an empty range is zero bytes). Replicas and kube's
 * own tools read the same bytes from a RangeAllocation.
 */
import { randomInt } from 'node:crypto';

export class AllocationBitmap {
  /** How many offsets the range has. */
  readonly max: number;
  /** The range the bitmap is of, as RangeAllocation.range spells it ("10.0.0.0/24", "30000-32767"). */
  readonly rangeSpec: string;
  #bits: Uint8Array;
  #count = 0;

  constructor(max: number, rangeSpec: string) {
    this.max = Math.max(0, max);
    this.rangeSpec = rangeSpec;
    this.#bits = new Uint8Array(Math.ceil(this.max / 8));
  }

  has(offset: number): boolean {
    if (offset < 0 || offset >= this.#bits.length * 8) return false;
    return (this.#bits[offset >> 3]! & (1 << (offset & 7))) !== 0;
  }

  /** Takes the offset; false when it was already taken. */
  allocate(offset: number): boolean {
    if (this.has(offset)) return false;
    this.#grow(offset);
    this.#bits[offset >> 3]! |= 1 << (offset & 7);
    this.#count++;
    return true;
  }

  /** Takes a free offset found from a random start, wrapping; undefined when the range is full. */
  allocateNext(): number | undefined {
    if (this.#count >= this.max) return undefined;
    const start = randomInt(this.max);
    for (let i = 0; i < this.max; i++) {
      const at = (start + i) % this.max;
      if (!this.has(at)) {
        this.allocate(at);
        return at;
      }
    }
    return undefined;
  }

  /** Frees the offset (a free or out-of-range offset: nothing happens). */
  release(offset: number): void {
    if (!this.has(offset)) return;
    this.#bits[offset >> 3]! &= ~(1 << (offset & 7));
    this.#count--;
  }

  /** Each taken offset, in increasing order. */
  forEach(fn: (offset: number) => void): void {
    for (let byte = 0; byte < this.#bits.length; byte++) {
      const b = this.#bits[byte]!;
      if (b === 0) continue;
      for (let bit = 0; bit < 8; bit++) if (b & (1 << bit)) fn(byte * 8 + bit);
    }
  }

  /** Offsets left (kube's `Free`). */
  free(): number {
    return this.max - this.#count;
  }

  used(): number {
    return this.#count;
  }

  /** The state as kube stores it (`range`, `data`). */
  snapshot(): { range: string; data: Buffer } {
    let top = this.#bits.length - 1;
    while (top >= 0 && this.#bits[top] === 0) top--;
    const out = Buffer.alloc(top + 1);
    for (let i = 0; i <= top; i++) out[top - i] = this.#bits[i]!;
    return { range: this.rangeSpec, data: out };
  }

  /** Replaces the state with a snapshot of the same range (kube's `Restore`). */
  restore(range: string, data: Uint8Array): void {
    if (range !== this.rangeSpec) throw new Error('the provided range does not match the current range');
    const bits = new Uint8Array(Math.max(Math.ceil(this.max / 8), data.length));
    let count = 0;
    for (let i = 0; i < data.length; i++) {
      const b = data[data.length - 1 - i]!;
      bits[i] = b;
      for (let v = b; v; v &= v - 1) count++;
    }
    this.#bits = bits;
    this.#count = count;
  }

  #grow(offset: number): void {
    const need = (offset >> 3) + 1;
    if (need <= this.#bits.length) return;
    const bigger = new Uint8Array(need);
    bigger.set(this.#bits);
    this.#bits = bigger;
  }
}
