/**
 * Go's `fmt` number verbs that kube's validation messages use, reproduced exactly.
 */

/**
 * Go's `%.<prec>f` of a float64 (`%f` is prec 6): the exact binary value rounded half to even, as
 * strconv does (JavaScript's toFixed rounds ties away from zero and switches to exponents at 1e21).
 */
export function goFormatFixed(x: number, prec = 6): string {
  if (Number.isNaN(x)) return 'NaN';
  if (!Number.isFinite(x)) return x > 0 ? '+Inf' : '-Inf';
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  const hi = view.getUint32(0);
  const lo = view.getUint32(4);
  const negative = hi >>> 31 === 1;
  const biased = (hi >>> 20) & 0x7ff;
  let mantissa = (BigInt(hi & 0xfffff) << 32n) | BigInt(lo);
  let exponent: number;
  if (biased === 0) {
    exponent = -1074;
  } else {
    mantissa |= 1n << 52n;
    exponent = biased - 1075;
  }
  // x = mantissa × 2^exponent; scaled = x × 10^prec, rounded half to even.
  const scale = 10n ** BigInt(prec);
  let scaled: bigint;
  if (exponent >= 0) {
    scaled = (mantissa << BigInt(exponent)) * scale;
  } else {
    const num = mantissa * scale;
    const den = 1n << BigInt(-exponent);
    scaled = num / den;
    const twice = (num % den) * 2n;
    if (twice > den || (twice === den && scaled % 2n === 1n)) scaled += 1n;
  }
  let digits = scaled.toString();
  if (prec > 0) {
    digits = digits.padStart(prec + 1, '0');
    digits = `${digits.slice(0, -prec)}.${digits.slice(-prec)}`;
  }
  return negative ? `-${digits}` : digits;
}
