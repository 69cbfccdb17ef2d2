/**
 * kube's `resource.Quantity` (k8s.io/apimachinery/pkg/api/resource `quantity.go`, `suffix.go`):
 * exact parsing with kube's errors, the three formats, and serialization exactly as Go's
 * `Quantity.String()` / `MarshalJSON` write it — including kube's habit of keeping the input text
 * when its parser deems it canonical already (`1.001`, `+1`, `1E3` are written back as given,
 * `1000m` → `1`, `1.5Gi` → `1536Mi`).
 *
 * Values are exact (BigInt); precision below 1n is rounded up (away from zero) on parse, as kube
 * does, and BinarySI values are capped at 2^63-1.
 */
import {
  type Amount,
  INT64_MAX,
  addAmounts,
  amountSign,
  approximateFloat,
  asScale,
  canonicalBase1024,
  canonicalDecimal,
  cmpAmounts,
  decAmount,
  fitsInt64,
  intAmount,
  integerValue,
  negAmount,
  roundDecTo,
  scaledValue,
  subAmounts,
  wrapInt32,
} from './quantity-amount.js';
import { type JsonObject, isJsonObject, setMember } from './json.js';

/** The three ways a quantity is written: `12e6`, `12Mi` (12 × 2^20), `12M` (12 × 10^6). */
export type QuantityFormat = 'DecimalExponent' | 'BinarySI' | 'DecimalSI';

/** Base-10 scales kube names (`resource.Nano` …). */
export const Scale = { Nano: -9, Micro: -6, Milli: -3, Kilo: 3, Mega: 6, Giga: 9, Tera: 12, Peta: 15, Exa: 18 } as const;

/** The largest value whose milli-value fits int64 (kube's `resource.MaxMilliValue`). */
export const MAX_MILLI_VALUE = INT64_MAX / 1000n;

/** The regular expression kube quotes when a quantity does not parse. */
export const QUANTITY_REGEXP = '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$';

const ERROR_TEXT = {
  FormatWrong: `quantities must match the regular expression '${QUANTITY_REGEXP}'`,
  Numeric: 'unable to parse numeric part of quantity',
  Suffix: "unable to parse quantity's suffix",
} as const;

/** Which of kube's parse errors (`ErrFormatWrong`, `ErrNumeric`, `ErrSuffix`). */
export type QuantityParseErrorCode = keyof typeof ERROR_TEXT;

/** A quantity that does not parse; `message` is kube's error text. */
export class QuantityParseError extends Error {
  readonly code: QuantityParseErrorCode;
  constructor(code: QuantityParseErrorCode) {
    super(ERROR_TEXT[code]);
    this.name = 'QuantityParseError';
    this.code = code;
  }
}

export function isQuantityParseError(e: unknown): e is QuantityParseError {
  return e instanceof QuantityParseError;
}

/**
 * An exact fixed-point number with the format it is written in. Immutable: arithmetic returns new
 * quantities. Create one with {@link parseQuantity} or the `create*Quantity` factories.
 */
export class Quantity {
  readonly format: QuantityFormat;
  readonly #amount: Amount;
  /** The input text kube's parser kept as the serialized form (kube's `Quantity.s` after parsing). */
  readonly #kept: string | undefined;
  /** The serialized form, once computed. */
  #text: string | undefined;

  /** @internal Use parseQuantity() or the create*Quantity() factories. */
  constructor(amount: Amount, format: QuantityFormat, kept?: string) {
    this.#amount = amount;
    this.format = format;
    this.#kept = kept;
    this.#text = kept;
  }

  /** -1, 0 or 1 as this is less than, equal to or greater than `o` (exact). */
  cmp(o: Quantity): -1 | 0 | 1 {
    return cmpAmounts(this.#amount, o.#amount);
  }

  /** Compares with an integer (kube's `CmpInt64`). */
  cmpInt(n: bigint | number): -1 | 0 | 1 {
    return cmpAmounts(this.#amount, intAmount(BigInt(n), 0));
  }

  /** Whether both denote the same number, whatever their formats (kube's `Equal`). */
  equal(o: Quantity): boolean {
    return this.cmp(o) === 0;
  }

  sign(): -1 | 0 | 1 {
    return amountSign(this.#amount);
  }

  isZero(): boolean {
    return this.#amount.unscaled === 0n;
  }

  /** ceil(q) as an int64, rounded away from zero (kube's `Value()`, overflow included). */
  value(): bigint {
    return scaledValue(this.#amount, 0);
  }

  /** ceil(q × 1000) as an int64 (kube's `MilliValue()`); overflows past {@link MAX_MILLI_VALUE} as kube's does. */
  milliValue(): bigint {
    return scaledValue(this.#amount, Scale.Milli);
  }

  /** ceil(q / 10^scale) as an int64 (kube's `ScaledValue`). */
  scaledValue(scale: number): bigint {
    return scaledValue(this.#amount, scale);
  }

  /** A float64 approximation (±Infinity beyond float64), as kube's `AsApproximateFloat64` computes it. */
  asApproximateFloat64(): number {
    return approximateFloat(this.#amount);
  }

  /** The sum; a zero receiver takes `o`'s format, as kube's `Add` does. */
  add(o: Quantity): Quantity {
    return new Quantity(addAmounts(this.#amount, o.#amount), this.isZero() ? o.format : this.format);
  }

  /** The difference; a zero receiver takes `o`'s format, as kube's `Sub` does. */
  sub(o: Quantity): Quantity {
    return new Quantity(subAmounts(this.#amount, o.#amount), this.isZero() ? o.format : this.format);
  }

  neg(): Quantity {
    return new Quantity(negAmount(this.#amount), this.format);
  }

  /**
   * The value rounded up (away from zero) to `scale` (kube's `RoundUp`; `SetDefaults_ResourceList`
   * rounds every ResourceList entry to Milli). An int64 value already at that precision keeps its
   * text, as kube's does.
   */
  roundUp(scale: number): Quantity {
    const a = this.#amount;
    if (!a.big && a.scale >= scale) return this;
    return new Quantity(asScale(a, scale).amount, this.format);
  }

  /** Whether {@link roundUp} to `scale` keeps the value exactly. */
  isExactAt(scale: number): boolean {
    return asScale(this.#amount, scale).exact;
  }

  /** The serialized form, exactly as kube's `String()` / `MarshalJSON` writes it. */
  toString(): string {
    return (this.#text ??= serialize(this.#amount, this.format));
  }

  toJSON(): string {
    return this.toString();
  }

  /**
   * Go's `%#v` of the kube Quantity, which is how a field error whose bad value is a Quantity
   * prints it (`resource.Quantity{i:resource.int64Amount{value:1500, scale:-3}, ...}`): the
   * int64 form's mantissa and scale, and the text kept from parsing. kube prints the address of
   * a decimal's inf.Dec there, which differs per process; plinth prints a fixed one.
   */
  goSyntax(): string {
    const a = this.#amount;
    const i = a.big ? 'value:0, scale:0' : `value:${a.unscaled}, scale:${a.scale}`;
    const d = a.big ? '(*inf.Dec)(0xc000a1c000)' : '(*inf.Dec)(nil)';
    return `resource.Quantity{i:resource.int64Amount{${i}}, d:resource.infDecAmount{Dec:${d}}, s:${JSON.stringify(this.#kept ?? '')}, Format:"${this.format}"}`;
  }
}

// ---------------------------------------------------------------------------------------------
// Serialization (kube's CanonicalizeBytes)
// ---------------------------------------------------------------------------------------------

const DECIMAL_SUFFIX: ReadonlyMap<number, string> = new Map([
  [-9, 'n'],
  [-6, 'u'],
  [-3, 'm'],
  [0, ''],
  [3, 'k'],
  [6, 'M'],
  [9, 'G'],
  [12, 'T'],
  [15, 'P'],
  [18, 'E'],
]);
const BINARY_SUFFIX: ReadonlyMap<number, string> = new Map([
  [10, 'Ki'],
  [20, 'Mi'],
  [30, 'Gi'],
  [40, 'Ti'],
  [50, 'Pi'],
  [60, 'Ei'],
]);
const ONE_KI = intAmount(1024n, 0);
const MINUS_ONE_KI = intAmount(-1024n, 0);

function serialize(a: Amount, format: QuantityFormat): string {
  if (a.unscaled === 0n) return '0';
  if (format === 'BinarySI') {
    // Below 1Ki, or not an integer: written in DecimalSI so that nothing is rounded.
    const small = cmpAmounts(a, MINUS_ONE_KI) > 0 && cmpAmounts(a, ONE_KI) < 0;
    const int = small ? undefined : integerValue(a);
    if (int !== undefined) {
      const { mantissa, exponent } = canonicalBase1024(int);
      // kube has no suffix past Ei (nor for 1024^0): it writes the bare mantissa.
      return mantissa + (BINARY_SUFFIX.get(exponent * 10) ?? '');
    }
    format = 'DecimalSI';
  }
  const { mantissa, exponent } = canonicalDecimal(a);
  if (format === 'DecimalExponent') return exponent === 0 ? mantissa : `${mantissa}e${exponent}`;
  // kube has no DecimalSI suffix past E: it writes the bare mantissa (so "1000E" reads back as "1").
  return mantissa + (DECIMAL_SUFFIX.get(exponent) ?? '');
}

// ---------------------------------------------------------------------------------------------
// Parsing (kube's ParseQuantity)
// ---------------------------------------------------------------------------------------------

interface Parts {
  positive: boolean;
  /** The numeric text with its sign (what kube hands to inf.Dec). */
  value: string;
  /** Integer digits, leading zeros stripped ("0" when none). */
  num: string;
  denom: string;
  suffix: string;
}

const isDigit = (c: number): boolean => c >= 0x30 && c <= 0x39;
const SUFFIX_CHARS = new Set('eEinumkKMGTP');

/** kube's `parseQuantityString`: a scanner as permissive as its regexp, checked later. */
function scanQuantity(str: string): Parts {
  const end = str.length;
  let positive = true;
  let pos = 0;
  if (str[0] === '-') {
    positive = false;
    pos++;
  } else if (str[0] === '+') {
    pos++;
  }
  for (;;) {
    if (pos >= end) return { positive, value: '0', num: '0', denom: '', suffix: '' };
    if (str[pos] !== '0') break;
    pos++;
  }
  let i = pos;
  while (i < end && isDigit(str.charCodeAt(i))) i++;
  if (i >= end) return { positive, value: str, num: str.slice(pos), denom: '', suffix: '' };
  const num = i > pos ? str.slice(pos, i) : '0';
  pos = i;
  let denom = '';
  if (str[pos] === '.') {
    pos++;
    i = pos;
    while (i < end && isDigit(str.charCodeAt(i))) i++;
    if (i >= end) return { positive, value: str, num, denom: str.slice(pos), suffix: '' };
    denom = str.slice(pos, i);
    pos = i;
  }
  const value = str.slice(0, pos);
  const suffixStart = pos;
  while (pos < end && SUFFIX_CHARS.has(str[pos]!)) pos++;
  if (pos < end && (str[pos] === '-' || str[pos] === '+')) pos++;
  while (pos < end && isDigit(str.charCodeAt(pos))) pos++;
  if (pos < end) throw new QuantityParseError('FormatWrong');
  return { positive, value, num, denom, suffix: str.slice(suffixStart) };
}

interface SuffixMeaning {
  base: 2 | 10;
  exponent: number;
  format: QuantityFormat;
}

const SUFFIXES: ReadonlyMap<string, SuffixMeaning> = new Map([
  ...[...DECIMAL_SUFFIX].map(([exponent, s]): [string, SuffixMeaning] => [s, { base: 10, exponent, format: 'DecimalSI' }]),
  ...[...BINARY_SUFFIX].map(([exponent, s]): [string, SuffixMeaning] => [s, { base: 2, exponent, format: 'BinarySI' }]),
]);
const INT64_TEXT = /^[+-]?[0-9]+$/;

/** kube's suffixer `interpret`: a known suffix, or `e`/`E` and an int64 exponent (kept as Go's int32 of it). */
function interpretSuffix(suffix: string): SuffixMeaning {
  const known = SUFFIXES.get(suffix);
  if (known) return known;
  if (suffix.length > 1 && (suffix[0] === 'e' || suffix[0] === 'E')) {
    const text = suffix.slice(1);
    if (INT64_TEXT.test(text)) {
      const n = BigInt(text);
      if (fitsInt64(n)) return { base: 10, exponent: Number(BigInt.asIntN(32, n)), format: 'DecimalExponent' };
    }
  }
  throw new QuantityParseError('Suffix');
}

const ZERO = new Quantity(intAmount(0n, 0), 'DecimalSI', '0');
/** What a JSON null decodes to (Go's zero Quantity, which has kept no text). */
const NULL_ZERO = new Quantity(intAmount(0n, 0), 'DecimalSI');
/** Most decimal digits an int64 always holds. */
const MAX_INT64_FACTORS = 18;

/**
 * Parses a quantity as kube's `ParseQuantity` does (no surrounding whitespace; see
 * {@link decodeQuantity} for JSON values). Throws {@link QuantityParseError} with kube's message.
 */
export function parseQuantity(str: string): Quantity {
  const hit = PARSED.get(str);
  if (hit) return hit;
  const q = parseUncached(str);
  if (str.length <= PARSED_MAX_LENGTH) {
    if (PARSED.size >= PARSED_MAX) PARSED.clear();
    PARSED.set(str, q);
  }
  return q;
}

/**
 * Quantities parsed, by their text: the same few strings ('100m', '64Mi') come in every pod, each
 * read several times per request (defaults, validation, LimitRanger, ResourceQuota), and a parse
 * costs BigInt arithmetic. A Quantity is immutable, so one can be shared. Bounded in count and in
 * text length; only quantities that parsed are kept.
 */
const PARSED = new Map<string, Quantity>();
const PARSED_MAX = 4096;
const PARSED_MAX_LENGTH = 40;

function parseUncached(str: string): Quantity {
  if (str.length === 0) throw new QuantityParseError('FormatWrong');
  if (str === '0') return ZERO;
  const { positive, value, num, denom, suffix } = scanQuantity(str);
  const { base, exponent, format } = interpretSuffix(suffix);

  // The int64 fast path, when the digits surely fit.
  let precision: number;
  let scale = 0;
  let mantissa = 1n;
  if (format === 'BinarySI') {
    if (exponent >= 0 && denom.length === 0) {
      mantissa = 1n << BigInt(exponent);
      precision = 15 - num.length - Math.trunc((exponent * 3) / 10) - 1;
    } else {
      precision = -1;
    }
  } else {
    scale = exponent;
    precision = MAX_INT64_FACTORS - (num.length + denom.length);
  }
  if (precision >= 0) {
    scale = wrapInt32(scale - denom.length);
    if (scale >= Scale.Nano) {
      const shifted = num + denom;
      const digits = BigInt(shifted);
      const product = digits * mantissa;
      if (fitsInt64(product)) {
        const amount = intAmount(positive ? product : -product, scale);
        // kube keeps the input as the serialized form when it looks canonical to this test.
        const keep = format === 'BinarySI' ? exponent % 10 === 0 && (digits & 7n) !== 0n : scale % 3 === 0 && !shifted.endsWith('000') && shifted[0] !== '0';
        return new Quantity(amount, format, keep ? str : undefined);
      }
    }
  }
  return parseDecimal(value, base, exponent, format);
}

/** kube's inf.Dec path of ParseQuantity: exact, rounded up to 1n, BinarySI capped at 2^63-1. */
function parseDecimal(value: string, base: 2 | 10, exponent: number, format: QuantityFormat): Quantity {
  let amount = scanDecimal(value);
  if (base === 10) amount = decAmount(amount.unscaled, wrapInt32(amount.scale + exponent));
  else amount = decAmount(amount.unscaled << BigInt(exponent), amount.scale);

  const negative = amount.unscaled < 0n;
  if (negative) amount = decAmount(-amount.unscaled, amount.scale);
  // Any non-zero amount gets at least 1n: whoever asks for some of a resource gets some.
  if (amount.unscaled !== 0n) amount = roundDecTo(amount, Scale.Nano).amount;
  if (format === 'BinarySI' && cmpAmounts(amount, MAX_INT64_AMOUNT) > 0) amount = MAX_INT64_AMOUNT;
  if (format === 'BinarySI' && cmpAmounts(amount, ONE) < 0 && amount.unscaled > 0n) format = 'DecimalSI';
  if (negative) amount = decAmount(-amount.unscaled, amount.scale);
  return new Quantity(amount, format);
}

const MAX_INT64_AMOUNT = decAmount(INT64_MAX, 0);
const ONE = decAmount(1n, 0);

/** inf.Dec `SetString` of the numeric text (sign, digits, at most one dot). */
function scanDecimal(value: string): Amount {
  const dot = value.indexOf('.');
  const digits = dot < 0 ? value : value.slice(0, dot) + value.slice(dot + 1);
  if (!/[0-9]/.test(digits)) throw new QuantityParseError('Numeric');
  return decAmount(BigInt(digits), dot < 0 ? 0 : -(value.length - dot - 1));
}

// ---------------------------------------------------------------------------------------------
// Factories and helpers
// ---------------------------------------------------------------------------------------------

/** `value` in the given format (kube's `NewQuantity`). */
export function createQuantity(value: bigint | number, format: QuantityFormat): Quantity {
  return new Quantity(intAmount(BigInt(value), 0), format);
}

/** `value / 1000` in the given format (kube's `NewMilliQuantity`). */
export function createMilliQuantity(value: bigint | number, format: QuantityFormat): Quantity {
  return new Quantity(intAmount(BigInt(value), Scale.Milli), format);
}

/** `value × 10^scale` in DecimalSI (kube's `NewScaledQuantity`). */
export function createScaledQuantity(value: bigint | number, scale: number): Quantity {
  return new Quantity(intAmount(BigInt(value), scale), 'DecimalSI');
}

/** The serialized form kube gives the quantity `text` (parse, then String()). Throws QuantityParseError. */
export function canonicalQuantity(text: string): string {
  return parseQuantity(text).toString();
}

/** Whether `v` is a string kube's ParseQuantity accepts. */
export function isQuantity(v: unknown): v is string {
  if (typeof v !== 'string') return false;
  try {
    parseQuantity(v);
    return true;
  } catch (e) {
    if (isQuantityParseError(e)) return false;
    throw e;
  }
}

/** Go's `strings.TrimSpace` set (unicode.IsSpace; no BOM, unlike String.prototype.trim). */
const GO_SPACE = '\\t\\n\\v\\f\\r \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';
const GO_TRIM = new RegExp(`^[${GO_SPACE}]+|[${GO_SPACE}]+$`, 'g');

/**
 * A Quantity field's decoded JSON value read as kube's `Quantity.UnmarshalJSON` reads it: a string
 * (surrounding whitespace allowed), a number (its literal; `symbol` for literals beyond float64, as
 * number-codec keeps them), or null (zero). Anything else fails with kube's regexp error, as the
 * raw JSON text would. Throws {@link QuantityParseError}.
 */
export function decodeQuantity(v: unknown): Quantity {
  if (typeof v === 'string') return PARSED.get(v) ?? parseQuantity(v.replace(GO_TRIM, ''));
  if (typeof v === 'number' || typeof v === 'bigint') return parseQuantity(String(v));
  if (typeof v === 'symbol') return parseQuantity(v.description ?? '');
  if (v === null) return NULL_ZERO;
  throw new QuantityParseError('FormatWrong');
}

/**
 * What kube stores for a plain Quantity field (e.g. `emptyDir.sizeLimit`): its serialized form.
 * Throws {@link QuantityParseError}.
 */
export function canonicalQuantityValue(v: unknown): string {
  return decodeQuantity(v).toString();
}

/**
 * What kube stores for a ResourceList (`resources.limits`, `spec.hard`, `status.capacity`, ...):
 * each entry decoded, rounded up to Milli (`SetDefaults_ResourceList`) and serialized, so
 * `{cpu: "1000m", memory: "1.5Gi"}` becomes `{cpu: "1", memory: "1536Mi"}`. A value that is not a
 * JSON object is returned as is (the schema reports it); entries keep their order. Throws
 * {@link QuantityParseError} for an entry kube's decoder refuses.
 */
export function canonicalResourceList(list: unknown): unknown {
  if (!isJsonObject(list)) return list;
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(list)) setMember(out, k, decodeQuantity(v).roundUp(Scale.Milli).toString());
  return out;
}
