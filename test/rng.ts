/** The seeded generator of the fuzz suites (mulberry32): the same seed gives the same run. */
export class Rng {
  #state: number;

  constructor(seed: number) {
    this.#state = seed >>> 0;
  }

  /** A float in [0, 1). */
  next(): number {
    let t = (this.#state = (this.#state + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)]!;
  }

  /** One of the values, each as likely as its weight. */
  weighted<T>(entries: ReadonlyArray<readonly [number, T]>): T {
    let roll = this.next() * entries.reduce((sum, [w]) => sum + w, 0);
    for (const [w, v] of entries) {
      roll -= w;
      if (roll < 0) return v;
    }
    return entries[entries.length - 1]![1];
  }

  bytes(n: number): Buffer {
    const b = Buffer.alloc(n);
    for (let i = 0; i < n; i++) b[i] = this.int(256);
    return b;
  }
}
