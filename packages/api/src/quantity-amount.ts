/**
 * The exact arithmetic under `Quantity` (see quantity.ts), following kube's
 * `k8s.io/apimachinery/pkg/api/resource` `amount.go`, `math.go` and `scale_int.go`.
 *
 * kube keeps a quantity in one of two forms: an int64 mantissa with a base-10 scale
 * (`int64Amount`) or an arbitrary-precision decimal (`inf.Dec`). Both denote the same numbers, and
 * comparisons and serialization never depend on the form; but a few int64 read-outs do
 * (`Value()`/`MilliValue()` overflow and their rounding of negative fractions differ between the
 * forms), so an {@link Amount} records which form kube would hold (`big`).
 *
 * Everything is a BigInt, never a float. Scales are Go `resource.Scale`s: the value is
 * `unscaled × 10^scale` (inf.Dec's own scale is the negation).
 */

/** A decimal amount: `unscaled × 10^scale`; `big` when kube would hold it as an inf.Dec. */
export interface Amount {
  readonly unscaled: bigint;
  readonly scale: number;
  readonly big: boolean;
}

export const INT64_MAX = (1n << 63n) - 1n;
export const INT64_MIN = -(1n << 63n);

/**
 * Past this many decimal shifts plinth does not materialize `10^n` (kube does, and a quantity such
 * as `1e2000000000` can take it minutes and gigabytes): values stay compact, comparisons go by
 * magnitude, and a sum of two such far-apart terms keeps the larger one.
 */
export const MAX_EXACT_SHIFT = 4096;

const POW10_CACHE: bigint[] = [];
for (let i = 0, p = 1n; i <= 64; i++, p *= 10n) POW10_CACHE.push(p);

/** 10^n as a BigInt (n ≥ 0). */
export function pow10(n: number): bigint {
  return n < POW10_CACHE.length ? POW10_CACHE[n]! : 10n ** BigInt(n);
}

export const fitsInt64 = (v: bigint): boolean => v >= INT64_MIN && v <= INT64_MAX;
/** Go's wrapping int64 arithmetic. */
export const wrapInt64 = (v: bigint): bigint => BigInt.asIntN(64, v);
/** Go's `int32(x)` of an integer held in a JS number. */
export const wrapInt32 = (v: number): number => v | 0;

const sign = (v: bigint): -1 | 0 | 1 => (v > 0n ? 1 : v < 0n ? -1 : 0);
const abs = (v: bigint): bigint => (v < 0n ? -v : v);
/** Number of decimal digits of |v| (1 for 0). */
const digitCount = (v: bigint): number => abs(v).toString().length;

export function intAmount(unscaled: bigint, scale: number): Amount {
  return { unscaled, scale, big: false };
}

export function decAmount(unscaled: bigint, scale: number): Amount {
  return { unscaled, scale, big: true };
}

/** base × 10^shift when it fits int64 (kube's `positiveScaleInt64`), else undefined. */
function positiveScaleInt64(base: bigint, shift: number): bigint | undefined {
  if (base === 0n || shift === 0) return base;
  if (shift > 19) return undefined;
  const r = base * pow10(shift);
  return fitsInt64(r) ? r : undefined;
}

/** base / 10^shift rounded away from zero (kube's `negativeScaleInt64`), and whether it was exact. */
function negativeScaleInt64(base: bigint, shift: number): { value: bigint; exact: boolean } {
  if (shift === 0) return { value: base, exact: true };
  if (shift > 19) return base === 0n ? { value: 0n, exact: true } : { value: BigInt(sign(base)), exact: false };
  const d = pow10(shift);
  const q = base / d;
  if (base % d === 0n) return { value: q, exact: true };
  return { value: q + BigInt(sign(base)), exact: false };
}

/** Rounds a decimal away from zero to `scale` (inf.Dec `Round(x, s, RoundUp)`): the result has exactly that scale. */
export function roundDecTo(a: Amount, scale: number): { amount: Amount; exact: boolean } {
  if (a.scale === scale) return { amount: decAmount(a.unscaled, scale), exact: true };
  if (a.scale > scale) {
    const shift = a.scale - scale;
    // Same value, finer scale; past the bound it stays in its compact form.
    if (shift > MAX_EXACT_SHIFT) return { amount: decAmount(a.unscaled, a.scale), exact: true };
    return { amount: decAmount(a.unscaled * pow10(shift), scale), exact: true };
  }
  const shift = scale - a.scale;
  if (a.unscaled === 0n) return { amount: decAmount(0n, scale), exact: true };
  if (shift > digitCount(a.unscaled)) return { amount: decAmount(BigInt(sign(a.unscaled)), scale), exact: false };
  const d = pow10(shift);
  const q = a.unscaled / d;
  if (a.unscaled % d === 0n) return { amount: decAmount(q, scale), exact: true };
  return { amount: decAmount(q + BigInt(sign(a.unscaled)), scale), exact: false };
}

/** kube's `AsScale`: the amount rounded up (away from zero) to at least `scale`, and whether that was exact. */
export function asScale(a: Amount, scale: number): { amount: Amount; exact: boolean } {
  if (a.big) return roundDecTo(a, scale);
  if (a.scale >= scale) return { amount: a, exact: true };
  const r = negativeScaleInt64(a.unscaled, scale - a.scale);
  return { amount: intAmount(r.value, scale), exact: r.exact };
}

export function amountSign(a: Amount): -1 | 0 | 1 {
  return sign(a.unscaled);
}

/** Exact comparison, without materializing far-apart scales. */
export function cmpAmounts(a: Amount, b: Amount): -1 | 0 | 1 {
  const sa = sign(a.unscaled);
  const sb = sign(b.unscaled);
  if (sa !== sb) return sa < sb ? -1 : 1;
  if (sa === 0) return 0;
  if (a.scale === b.scale) return a.unscaled === b.unscaled ? 0 : a.unscaled < b.unscaled ? -1 : 1;
  // |x| lies in [10^(m-1), 10^m) where m = digits + scale.
  const ma = digitCount(a.unscaled) + a.scale;
  const mb = digitCount(b.unscaled) + b.scale;
  if (ma !== mb) return (ma > mb ? sa : -sa) as -1 | 1;
  // Equal magnitudes: the scale gap is at most the digit-count gap, so this shift is bounded.
  const [x, y] = a.scale > b.scale ? [a.unscaled * pow10(a.scale - b.scale), b.unscaled] : [a.unscaled, b.unscaled * pow10(b.scale - a.scale)];
  return x === y ? 0 : x < y ? -1 : 1;
}

/** kube's `int64Amount.Add`: the int64 sum, or undefined when it would overflow. */
function addInt64Amounts(a: Amount, b: Amount): Amount | undefined {
  if (b.unscaled === 0n) return a;
  if (a.unscaled === 0n) return intAmount(b.unscaled, b.scale);
  let c: bigint | undefined;
  let scale: number;
  if (a.scale === b.scale) {
    c = a.unscaled + b.unscaled;
    scale = a.scale;
  } else if (a.scale > b.scale) {
    const up = positiveScaleInt64(a.unscaled, a.scale - b.scale);
    c = up === undefined ? undefined : up + b.unscaled;
    scale = b.scale;
  } else {
    const up = positiveScaleInt64(b.unscaled, b.scale - a.scale);
    c = up === undefined ? undefined : a.unscaled + up;
    scale = a.scale;
  }
  return c !== undefined && fitsInt64(c) ? intAmount(c, scale) : undefined;
}

/** inf.Dec `Add`: exact, at the finer of the two scales (see MAX_EXACT_SHIFT for far-apart terms). */
function addDecAmounts(a: Amount, b: Amount): Amount {
  const gap = Math.abs(a.scale - b.scale);
  if (gap > MAX_EXACT_SHIFT) {
    if (b.unscaled === 0n) return decAmount(a.unscaled, a.scale);
    if (a.unscaled === 0n) return decAmount(b.unscaled, b.scale);
    const larger = cmpAmounts(decAmount(abs(a.unscaled), a.scale), decAmount(abs(b.unscaled), b.scale)) >= 0 ? a : b;
    return decAmount(larger.unscaled, larger.scale);
  }
  if (a.scale === b.scale) return decAmount(a.unscaled + b.unscaled, a.scale);
  if (a.scale > b.scale) return decAmount(a.unscaled * pow10(gap) + b.unscaled, b.scale);
  return decAmount(a.unscaled + b.unscaled * pow10(gap), a.scale);
}

/** kube's `Quantity.Add` on amounts: int64 while it fits, else decimal. */
export function addAmounts(a: Amount, b: Amount): Amount {
  if (!a.big && !b.big) {
    const r = addInt64Amounts(a, b);
    if (r) return r;
  }
  return addDecAmounts(a, b);
}

/**
 * kube's `Quantity.Sub` on amounts. The int64 path negates the subtrahend with Go's wrapping
 * negation, as kube does (so `0 - (-2^63)` stays `-2^63` there).
 */
export function subAmounts(a: Amount, b: Amount): Amount {
  if (!a.big && !b.big) {
    const r = addInt64Amounts(a, intAmount(wrapInt64(-b.unscaled), b.scale));
    if (r) return r;
  }
  return addDecAmounts(a, decAmount(-b.unscaled, b.scale));
}

/** kube's `Quantity.Neg`: int64 negation wraps as Go's does. */
export function negAmount(a: Amount): Amount {
  return a.big ? decAmount(-a.unscaled, a.scale) : intAmount(wrapInt64(-a.unscaled), a.scale);
}

/** Go's `int64(math.Pow10(n))` on amd64: exact to 10^18, then the out-of-range conversion's INT64_MIN. */
const int64OfPow10 = (n: number): bigint => (n <= 18 ? pow10(n) : INT64_MIN);

/**
 * kube's `Quantity.ScaledValue(scale)`: ceil(q / 10^scale) as an int64. In range both forms agree;
 * out of range (and for negative fractions held as decimals) kube's int64 results are kept as it
 * computes them, since callers print them in validation messages.
 */
export function scaledValue(a: Amount, scale: number): bigint {
  if (!a.big) {
    if (a.scale < scale) return negativeScaleInt64(a.unscaled, scale - a.scale).value;
    return positiveScaleInt64(a.unscaled, a.scale - scale) ?? 0n;
  }
  const u = a.unscaled;
  const dif = scale - a.scale;
  if (dif === 0) return wrapInt64(u);
  if (dif < 0) return wrapInt64(wrapInt64(u) * int64OfPow10(-dif));
  if (u < INT64_MAX && dif < 19) {
    const i = wrapInt64(u);
    const d = pow10(dif);
    return i % d !== 0n ? wrapInt64(i / d + 1n) : i / d;
  }
  // big.Int DivMod: Euclidean division (floor for a positive divisor), then +1 if inexact.
  if (u === 0n) return 0n;
  if (dif > digitCount(u)) return u > 0n ? 1n : 0n;
  const d = pow10(dif);
  let q = u / d;
  let r = u % d;
  if (r < 0n) {
    q -= 1n;
    r += d;
  }
  return wrapInt64(wrapInt64(q) + (r !== 0n ? 1n : 0n));
}

// Go's math.Pow10 tables, so that AsApproximateFloat64 rounds exactly as kube's does.
const POW10_TAB = Array.from({ length: 32 }, (_, i) => Number(`1e${i}`));
const POW10_POS32 = Array.from({ length: 10 }, (_, i) => Number(`1e${i * 32}`));
const POW10_NEG32 = Array.from({ length: 11 }, (_, i) => Number(`1e-${i * 32}`));

/** Go's `math.Pow10`. */
export function goPow10(n: number): number {
  if (n >= 0 && n <= 308) return POW10_POS32[n >>> 5]! * POW10_TAB[n & 31]!;
  if (n >= -323 && n <= 0) return POW10_NEG32[-n >>> 5]! / POW10_TAB[-n & 31]!;
  return n > 0 ? Infinity : 0;
}

/** kube's `AsApproximateFloat64`. */
export function approximateFloat(a: Amount): number {
  const base = Number(a.unscaled);
  return a.scale === 0 ? base : base * goPow10(a.scale);
}

/**
 * kube's `AsCanonicalBytes`: the mantissa digits and a base-10 exponent that is a multiple of 3,
 * with no factor of 10 left in the mantissa beyond what that needs (`1.1e5` → `110`, 3).
 */
export function canonicalDecimal(a: Amount): { mantissa: string; exponent: number } {
  let digits = a.unscaled.toString();
  let exponent = a.scale;
  let end = digits.length;
  while (end > 1 && digits.charCodeAt(end - 1) === 0x30) end--;
  exponent += digits.length - end;
  digits = digits.slice(0, end);
  const pad = ((exponent % 3) + 3) % 3;
  if (pad) {
    digits += '0'.repeat(pad);
    exponent -= pad;
  }
  return { mantissa: digits, exponent };
}

/**
 * The integer value of an amount, when it is an integer and small enough to write out (kube's
 * `AsScale(0)` being exact).
 */
export function integerValue(a: Amount): bigint | undefined {
  if (a.scale >= 0) return a.scale > MAX_EXACT_SHIFT ? undefined : a.unscaled * pow10(a.scale);
  const shift = -a.scale;
  if (a.unscaled === 0n) return 0n;
  if (shift > digitCount(a.unscaled)) return undefined;
  const d = pow10(shift);
  return a.unscaled % d === 0n ? a.unscaled / d : undefined;
}

/** kube's `AsCanonicalBase1024Bytes` of an integer: mantissa and power of 1024. */
export function canonicalBase1024(v: bigint): { mantissa: string; exponent: number } {
  let exponent = 0;
  while (v !== 0n && v % 1024n === 0n) {
    v /= 1024n;
    exponent++;
  }
  return { mantissa: v.toString(), exponent };
}
