/**
 * JSON numbers as kube-apiserver 1.24 decodes them (sigs.k8s.io/json
 * `UnmarshalCaseSensitivePreserveInts`, apimachinery `util/json`): a literal without `.` that
 * fits int64 is an int64, anything else a float64, and a literal beyond float64 is an error
 * (`json: cannot unmarshal number 1e999 into Go value of type float64`).
 *
 * JavaScript numbers are float64, so plinth keeps exactly the values a float64 cannot: integers
 * in (2^53, 2^63) are BigInts inside the object model. Everything else stays a number: the
 * float64s kube decodes (also integers beyond int64) are the numbers JSON.parse gives, and Go and
 * JavaScript write them with the same digits.
 *
 * Hot paths stay as they were: a body is scanned once (the nesting scan it already needed), and
 * only when that scan sees a literal JavaScript cannot hold (an integer above 2^53, or one that
 * overflows float64) does the exact parser run. Encoding tries JSON.stringify first: it throws on a
 * BigInt, and only then does the exact encoder run.
 */
import { MAX_NESTING_DEPTH } from './depth.js';

/** kube's int64 bounds. */
export const INT64_MIN = -(2n ** 63n);
export const INT64_MAX = 2n ** 63n - 1n;

/** A JSON number beyond float64: kube's decoder refuses the body. */
export class JsonNumberRangeError extends Error {
  constructor(readonly literal: string) {
    super(`json: cannot unmarshal number ${literal} into Go value of type float64`);
    this.name = 'JsonNumberRangeError';
  }
}

export function isJsonNumberRangeError(e: unknown): e is JsonNumberRangeError {
  return e instanceof JsonNumberRangeError;
}

// ---------------------------------------------------------------------------------------------
// Scanning
// ---------------------------------------------------------------------------------------------

/** scanJsonText flags. */
export const SCAN_TOO_DEEP = 1;
/** The text holds a number JSON.parse cannot give exactly (an unsafe int64, or beyond float64). */
export const SCAN_EXACT = 2;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const DOT = 0x2e;
const MINUS = 0x2d;
/** "9007199254740991" (2^53 - 1): the largest integer a float64 holds with all its neighbours. */
const MAX_SAFE_DIGITS = String(Number.MAX_SAFE_INTEGER);

const isDigit = (c: number): boolean => c >= 0x30 && c <= 0x39;

/** Index of the quote closing the string whose opening quote is at `i`; -1 if unterminated. */
function closingQuote(text: string, i: number): number {
  let j = text.indexOf('"', i + 1);
  while (j > 0) {
    let k = j - 1;
    while (text.charCodeAt(k) === BACKSLASH) k--;
    if ((j - k) % 2 === 1) return j; // an even number of backslashes before it
    j = text.indexOf('"', j + 1);
  }
  return -1;
}

/** Whether an integer literal's digits (no sign) exceed 2^53 - 1. */
function unsafeIntegerDigits(digits: number, text: string, from: number): boolean {
  if (digits !== MAX_SAFE_DIGITS.length) return digits > MAX_SAFE_DIGITS.length;
  return text.slice(from, from + digits) > MAX_SAFE_DIGITS;
}

/**
 * One pass over JSON text (strings skipped): SCAN_TOO_DEEP when objects and arrays nest deeper
 * than `max`, SCAN_EXACT when a number needs the exact parser. Nothing is allocated for the usual
 * body; malformed text is left to JSON.parse to report.
 */
export function scanJsonText(text: string, max = MAX_NESTING_DEPTH): number {
  let depth = 0;
  let flags = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const end = closingQuote(text, i);
      if (end < 0) return flags;
      i = end;
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) return flags | SCAN_TOO_DEEP;
    } else if (c === 0x7d || c === 0x5d) {
      depth--;
    } else if (isDigit(c) && (flags & SCAN_EXACT) === 0) {
      // Outside strings, digits belong to numbers; this is the first digit of one.
      const start = text.charCodeAt(i - 1) === MINUS ? i - 1 : i;
      let j = i + 1;
      while (j < n && isDigit(text.charCodeAt(j))) j++;
      const intDigits = j - i;
      let end = j;
      const d = text.charCodeAt(j);
      const fraction = d === DOT;
      if (fraction) for (end = j + 1; end < n && isDigit(text.charCodeAt(end)); end++);
      const e = text.charCodeAt(end);
      if (e === 0x65 || e === 0x45) {
        // An exponent: only a float64 overflow matters (the value is a float64 for kube too).
        let k = end + 1;
        if (text.charCodeAt(k) === 0x2b || text.charCodeAt(k) === MINUS) k++;
        while (k < n && isDigit(text.charCodeAt(k))) k++;
        if (!Number.isFinite(Number(text.slice(start, k)))) flags |= SCAN_EXACT;
        end = k;
      } else if (fraction) {
        if (intDigits > 308 && !Number.isFinite(Number(text.slice(start, end)))) flags |= SCAN_EXACT;
      } else if (intDigits >= MAX_SAFE_DIGITS.length && unsafeIntegerDigits(intDigits, text, i)) {
        flags |= SCAN_EXACT;
      }
      i = end - 1;
    }
  }
  return flags;
}

/**
 * Sixteen digits in a row: where an integer above 2^53 may be. Spelt out rather than `\d{16}`:
 * irregexp then skips ahead sixteen characters at a time (a tenth of JSON.parse's time).
 */
const SIXTEEN_DIGITS = new RegExp('\\d'.repeat(16));

// ---------------------------------------------------------------------------------------------
// Parsing
// ---------------------------------------------------------------------------------------------

/**
 * A number beyond float64 kept in place (mark mode), so that a decoder can say which field holds
 * it, as kube's typed decoder does. A symbol: never taken for an object, an array or a scalar.
 */
export function isNumberOverflow(v: unknown): v is symbol {
  return typeof v === 'symbol';
}

/** The literal of a number kept by isNumberOverflow. */
export function overflowLiteral(v: symbol): string {
  return v.description ?? '';
}

/** Roots of values parsed in mark mode that hold a number beyond float64 → its first literal. */
const overflowing = new WeakMap<object, string>();

/**
 * The first number beyond float64 (document order) in a value parsed by parseJsonBody with
 * `marks`, when there is one. O(1): a lookup by the root.
 */
export function numberOverflowIn(root: unknown): string | undefined {
  return typeof root === 'object' && root !== null ? overflowing.get(root) : undefined;
}

/** kube's number: int64 when it is an integer literal that fits, else float64 (undefined: beyond float64). */
function convertNumber(lit: string): number | bigint | undefined {
  const n = Number(lit);
  if (Number.isSafeInteger(n)) return n;
  // int64 has at most 19 digits and a sign: longer literals are float64s (and BigInt() of a
  // megabyte of digits would take seconds).
  if (lit.length <= 20 && !/[.eE]/.test(lit)) {
    const b = BigInt(lit);
    if (b >= INT64_MIN && b <= INT64_MAX) return b;
  }
  return Number.isFinite(n) ? n : undefined;
}

type Container = Record<string, unknown> | unknown[];

function setMember(o: Record<string, unknown>, k: string, v: unknown): void {
  // JSON.parse makes `__proto__` an ordinary member; so does this.
  if (k === '__proto__') Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
  else o[k] = v;
}

/**
 * Builds the value of valid JSON text (JSON.parse has accepted it) with kube's numbers: BigInts
 * for integers in (2^53, 2^63), and for numbers beyond float64 `overflow(literal)`. Iterative:
 * the text's depth was measured before.
 */
function buildExact(text: string, overflow: (literal: string) => unknown): unknown {
  const stack: Container[] = [];
  let root: unknown;
  // The member name just read: a nested value is put before its own members are read, and after
  // it closes the parent reads a new name before it puts anything.
  let key: string | undefined;
  const put = (v: unknown): void => {
    const top = stack[stack.length - 1];
    if (top === undefined) root = v;
    else if (Array.isArray(top)) top.push(v);
    else setMember(top, key!, v);
  };
  const n = text.length;
  let expectKey = false;
  for (let i = 0; i < n; ) {
    const c = text.charCodeAt(i);
    switch (c) {
      case 0x20:
      case 0x09:
      case 0x0a:
      case 0x0d:
      case 0x3a: // :
        i++;
        break;
      case 0x2c: // ,
        expectKey = !Array.isArray(stack[stack.length - 1]);
        i++;
        break;
      case 0x7b: {
        const o: Record<string, unknown> = {};
        put(o);
        stack.push(o);
        expectKey = true;
        i++;
        break;
      }
      case 0x5b: {
        const a: unknown[] = [];
        put(a);
        stack.push(a);
        expectKey = false;
        i++;
        break;
      }
      case 0x7d:
      case 0x5d:
        stack.pop();
        expectKey = false;
        i++;
        break;
      case QUOTE: {
        const end = closingQuote(text, i);
        const raw = text.slice(i, end + 1);
        const s = raw.includes('\\') ? (JSON.parse(raw) as string) : raw.slice(1, -1);
        if (expectKey) {
          key = s;
          expectKey = false;
        } else put(s);
        i = end + 1;
        break;
      }
      case 0x74: // true
        put(true);
        i += 4;
        break;
      case 0x66: // false
        put(false);
        i += 5;
        break;
      case 0x6e: // null
        put(null);
        i += 4;
        break;
      default: {
        let j = i + 1;
        for (; j < n; j++) {
          const d = text.charCodeAt(j);
          if (d === 0x2c || d === 0x7d || d === 0x5d || d === 0x20 || d === 0x0a || d === 0x0d || d === 0x09) break;
        }
        const lit = text.slice(i, j);
        const v = convertNumber(lit);
        put(v === undefined ? overflow(lit) : v);
        i = j;
      }
    }
  }
  return root;
}

/** Options of parseJsonBody. */
export interface ParseJsonOptions {
  /**
   * Keep a number beyond float64 in place as an isNumberOverflow symbol (the root is then known to
   * numberOverflowIn) instead of throwing JsonNumberRangeError: for bodies decoded into a kind,
   * whose decoder names the field.
   */
  marks?: boolean;
}

/**
 * Parses JSON text whose nesting is known to be within the limit, with kube's numbers. `flags`:
 * what scanJsonText found (SCAN_EXACT selects the exact parser). Throws JSON.parse's SyntaxError
 * for malformed text, JsonNumberRangeError for a number beyond float64 (unless `marks`).
 */
export function parseScannedJson(text: string, flags: number, opts: ParseJsonOptions = {}): unknown {
  const plain: unknown = JSON.parse(text);
  if ((flags & SCAN_EXACT) === 0) return plain;
  let first: string | undefined;
  const value = buildExact(
    text,
    opts.marks
      ? (lit) => {
          first ??= lit;
          return Symbol(lit);
        }
      : (lit) => {
          throw new JsonNumberRangeError(lit);
        },
  );
  if (first !== undefined && typeof value === 'object' && value !== null) overflowing.set(value, first);
  return value;
}

/**
 * Parses JSON as kube does (numbers above), whatever its layout, e.g. a request body. The
 * caller checks nesting with scanJsonText first when the text may nest deeper than the limit.
 */
export function parseJson(text: string, opts?: ParseJsonOptions): unknown {
  return parseScannedJson(text, scanJsonText(text, Number.MAX_SAFE_INTEGER), opts);
}

/**
 * Whether compact JSON this server wrote may hold a number the exact parser reads (16 digits in a
 * row; parseStoredJson's test): without one, JSON.parse reads the text back, and JSON.stringify of
 * what it read is the text again.
 */
export function hasLongNumbers(text: string): boolean {
  return SIXTEEN_DIGITS.test(text);
}

/**
 * Parses compact JSON this server wrote (JSON.stringify's layout: stored objects, FieldsV1 keys):
 * a regular-expression test, and the scan only when it hits, pick the exact parser.
 */
export function parseStoredJson(text: string): unknown {
  if (!hasLongNumbers(text)) return JSON.parse(text);
  return parseJson(text);
}

// ---------------------------------------------------------------------------------------------
// Encoding
// ---------------------------------------------------------------------------------------------

/** A per-process token no client text can predict: BigInts are written as `"<token><digits>"` first. */
const TOKEN = `plinth-int64-${Math.random().toString(36).slice(2)}${Date.now().toString(36)}-`;
const TOKEN_STRING = new RegExp(`"${TOKEN}(-?\\d+)"`, 'g');

function isBigIntTypeError(e: unknown): boolean {
  return e instanceof TypeError && e.message.includes('BigInt');
}

/** JSON.stringify with BigInts written as bare integers: the token strings replaced by their digits. */
function stringifyWithBigInts(value: unknown, space: number | undefined): string {
  let count = 0;
  const text = JSON.stringify(
    value,
    (_k, v: unknown) => {
      if (typeof v !== 'bigint') return v;
      count++;
      return `${TOKEN}${v.toString()}`;
    },
    space,
  );
  let replaced = 0;
  const out = text.replace(TOKEN_STRING, (_m, digits: string) => {
    replaced++;
    return digits;
  });
  // A string of the client's equal to a token string would have been replaced too: never trusted.
  if (replaced !== count) throw new Error('JSON encoding: an integer token collided with a string value');
  return out;
}

/**
 * JSON.stringify for API objects: BigInts (kube's int64 values above 2^53) are written as bare
 * integers. The object without BigInts costs what JSON.stringify costs.
 */
export function stringifyJson(value: unknown, space?: number): string {
  try {
    return space === undefined ? JSON.stringify(value) : JSON.stringify(value, null, space);
  } catch (e) {
    if (!isBigIntTypeError(e)) throw e;
  }
  return stringifyWithBigInts(value, space);
}

// ---------------------------------------------------------------------------------------------
// Values
// ---------------------------------------------------------------------------------------------

/** Whether `v` is a JSON number in the object model: a number, or an int64 BigInt. */
export function isJsonNumber(v: unknown): v is number | bigint {
  return typeof v === 'number' || typeof v === 'bigint';
}

/**
 * Whether a JSON number is an int64 for kube: a BigInt, or a number that is an integer a float64
 * holds exactly (kube-openapi's integer check: a float64 within ±(2^53 - 1) counts as one).
 */
export function isJsonInteger(v: unknown): v is number | bigint {
  return typeof v === 'bigint' || Number.isSafeInteger(v);
}

const isExactScalar = (v: unknown): boolean =>
  typeof v === 'number' ? (v > Number.MAX_SAFE_INTEGER || v < -Number.MAX_SAFE_INTEGER) && Number.isInteger(v) : typeof v === 'bigint';

/** holdsExact without recursion, for what nests deeper than the limit (a CRD schema may). */
function holdsExactDeep(value: unknown): boolean {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v !== 'object' || v === null) {
      if (isExactScalar(v)) return true;
    } else if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) stack.push(v[i]);
    } else {
      const keys = Object.keys(v);
      for (let i = 0; i < keys.length; i++) stack.push((v as Record<string, unknown>)[keys[i]!]);
    }
  }
  return false;
}

/** Whether `v` holds a number needing the exact rules (see hasExactNumbers); `depth` as checkDepth counts. */
function holdsExact(v: unknown, depth: number): boolean {
  if (typeof v !== 'object' || v === null) return isExactScalar(v);
  if (depth > MAX_NESTING_DEPTH) return holdsExactDeep(v);
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) if (holdsExact(v[i], depth + 1)) return true;
    return false;
  }
  const keys = Object.keys(v);
  for (let i = 0; i < keys.length; i++) if (holdsExact((v as Record<string, unknown>)[keys[i]!], depth + 1)) return true;
  return false;
}

/**
 * Whether a decoded value holds numbers that need the exact rules (BigInts, or integers beyond
 * 2^53 that are float64s for kube); false for the usual object. `skip`: a top-level member not to
 * look into (an object's metadata, which the server writes). Recursive to the nesting limit (the
 * cheap walk for the usual object), iterative below it.
 */
export function hasExactNumbers(value: unknown, skip?: string): boolean {
  if (skip === undefined || typeof value !== 'object' || value === null || Array.isArray(value)) return holdsExact(value, 1);
  const keys = Object.keys(value);
  for (let i = 0; i < keys.length; i++) if (keys[i] !== skip && holdsExact((value as Record<string, unknown>)[keys[i]!], 2)) return true;
  return false;
}

/** The first number beyond float64 kept in a value (mark mode), or undefined. Iterative. */
export function findNumberOverflow(value: unknown): string | undefined {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'symbol') return overflowLiteral(v);
    if (Array.isArray(v)) for (let i = v.length - 1; i >= 0; i--) stack.push(v[i]);
    else if (typeof v === 'object' && v !== null) {
      const vals = Object.values(v);
      for (let i = vals.length - 1; i >= 0; i--) stack.push(vals[i]);
    }
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Typed fields
// ---------------------------------------------------------------------------------------------

/** The Go kinds of the number fields of built-in types. */
export type GoNumberKind = 'int32' | 'int64' | 'float64';

/** Whether a decoded JSON value is a number of any form (number, int64 BigInt, kept overflow). */
export function isAnyJsonNumber(v: unknown): v is number | bigint | symbol {
  return typeof v === 'number' || typeof v === 'bigint' || typeof v === 'symbol';
}

/** A decoded JSON number written back as a literal (the overflow's own text). */
export function numberLiteral(v: number | bigint | symbol): string {
  return typeof v === 'symbol' ? overflowLiteral(v) : String(v);
}

/**
 * A JSON number decoded into a typed Go field as kube's typed decoder does (strconv.ParseInt /
 * ParseFloat into the field's kind): the value to keep, or undefined when Go refuses it, which
 * kube reports as `json: cannot unmarshal number <literal> into Go struct field <f> of type <kind>`.
 * A float64 field takes an int64 rounded, as ParseFloat does.
 */
export function conformNumber(v: number | bigint | symbol, kind: GoNumberKind): number | bigint | undefined {
  if (typeof v === 'symbol') return undefined;
  switch (kind) {
    case 'int32':
      return typeof v === 'number' && Number.isInteger(v) && v >= -(2 ** 31) && v < 2 ** 31 ? v : undefined;
    case 'int64':
      return typeof v === 'bigint' || Number.isSafeInteger(v) ? v : undefined;
    case 'float64':
      return typeof v === 'bigint' ? Number(v) : v;
  }
}
