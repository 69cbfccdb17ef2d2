/**
 * Go's `time.ParseDuration` (go1.18, what kube 1.24 is built with): the syntax of duration flags
 * and of the `timeout` query parameter, with Go's error texts, which kube passes to clients.
 */

/** Nanoseconds per unit. `µs` is U+00B5, `μs` U+03BC: Go takes both. */
const UNITS: ReadonlyMap<string, bigint> = new Map([
  ['ns', 1n],
  ['us', 1_000n],
  ['µs', 1_000n],
  ['μs', 1_000n],
  ['ms', 1_000_000n],
  ['s', 1_000_000_000n],
  ['m', 60_000_000_000n],
  ['h', 3_600_000_000_000n],
]);

const MAX_NS = (1n << 63n) - 1n;

/** Go's time.quote: `"` + the text, `"` and `\` escaped, bytes outside printable ASCII as `\xNN`. */
function quote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (c >= 0x80 || c < 0x20) {
      for (const b of Buffer.from(ch, 'utf8')) out += `\\x${b.toString(16).padStart(2, '0')}`;
    } else {
      if (ch === '"' || ch === '\\') out += '\\';
      out += ch;
    }
  }
  return `${out}"`;
}

const isDigit = (c: string | undefined): boolean => c !== undefined && c >= '0' && c <= '9';

/**
 * Parses a Go duration (`300ms`, `-1.5h`, `2h45m`; a bare `0`) into nanoseconds. Throws an Error
 * whose message is Go's (`time: invalid duration "x"`, `time: missing unit in duration "5"`,
 * `time: unknown unit "d" in duration "1d"`).
 */
export function parseGoDurationNanos(text: string): bigint {
  const invalid = (): Error => new Error(`time: invalid duration ${quote(text)}`);
  let s = text;
  let neg = false;
  if (s !== '' && (s[0] === '-' || s[0] === '+')) {
    neg = s[0] === '-';
    s = s.slice(1);
  }
  if (s === '0') return 0n;
  if (s === '') throw invalid();
  let total = 0n;
  while (s !== '') {
    if (!(s[0] === '.' || isDigit(s[0]))) throw invalid();
    // [0-9]*
    let i = 0;
    while (isDigit(s[i])) i++;
    const intPart = s.slice(0, i);
    // Go's leadingInt overflows past 1<<63.
    if (intPart !== '' && BigInt(intPart) > 1n << 63n) throw invalid();
    s = s.slice(i);
    // (\.[0-9]*)?
    let fracPart = '';
    let post = false;
    if (s[0] === '.') {
      s = s.slice(1);
      let j = 0;
      while (isDigit(s[j])) j++;
      fracPart = s.slice(0, j);
      post = j > 0;
      s = s.slice(j);
    }
    if (intPart === '' && !post) throw invalid();
    // The unit: everything up to the next digit or '.'.
    let k = 0;
    while (k < s.length && s[k] !== '.' && !isDigit(s[k])) k++;
    if (k === 0) throw new Error(`time: missing unit in duration ${quote(text)}`);
    const unitName = s.slice(0, k);
    s = s.slice(k);
    const unit = UNITS.get(unitName);
    if (unit === undefined) throw new Error(`time: unknown unit ${quote(unitName)} in duration ${quote(text)}`);
    let v = intPart === '' ? 0n : BigInt(intPart);
    if (v > (1n << 63n) / unit) throw invalid();
    v *= unit;
    if (fracPart !== '') {
      // Go keeps at most the digits that fit an int64 and scales in float64; this is exact for
      // every fraction Go reads exactly and rounds down as Go does.
      const digits = fracPart.slice(0, 18);
      v += BigInt(Math.floor(Number(digits) * (Number(unit) / 10 ** digits.length)));
      if (v > 1n << 63n) throw invalid();
    }
    total += v;
    if (total > 1n << 63n) throw invalid();
  }
  if (neg) return -total;
  if (total > MAX_NS) throw invalid();
  return total;
}

/** parseGoDurationNanos in milliseconds (fractions kept). */
export function parseGoDuration(text: string): number {
  return Number(parseGoDurationNanos(text)) / 1e6;
}
