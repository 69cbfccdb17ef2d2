/**
 * The string formats custom resource schemas are checked against: the formats kube 1.24 keeps in
 * CRD schemas (apiextensions-apiserver `validation/formats.go`, names compared without dashes) with
 * the checks of go-openapi's default strfmt registry. A format kube does not know is ignored;
 * integer (int32, int64) and number (float, double) formats are never checked on values.
 */
import { isIP, isIPv4, isIPv6 } from 'node:net';

type Check = (s: string) => boolean;

const re = (r: RegExp): Check => (s) => r.test(s);

const HOSTNAME = /^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}](([a-zA-Z0-9\-\p{S}\p{L}]{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z\p{L}]){2,63})$/u;
const DATE_TIME_TIME = /^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$/;
const GO_DURATION = /^[-+]?((\d+(\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h))+$/;
const STRFMT_DURATION = /^(\d+)\s*(ns|us|µs|ms|s|m|h|d|w|nanoseconds?|microseconds?|milliseconds?|seconds?|minutes?|hours?|days?|weeks?|sec|secs|min|mins|hr|hrs)$/i;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const MAC = /^(?:[0-9a-fA-F]{2}(?:([:-])[0-9a-fA-F]{2}){5}|[0-9a-fA-F]{2}(?:([:-])[0-9a-fA-F]{2}){7}|[0-9a-fA-F]{2}(?:([:-])[0-9a-fA-F]{2}){19}|[0-9a-fA-F]{4}(?:\.[0-9a-fA-F]{4}){2}|[0-9a-fA-F]{4}(?:\.[0-9a-fA-F]{4}){3}|[0-9a-fA-F]{4}(?:\.[0-9a-fA-F]{4}){9})$/;
const RGB_PART = '\\s*(0|[1-9]\\d?|1\\d\\d?|2[0-4]\\d|25[0-5])\\s*';

/** Go's `time.Parse("2006-01-02", s)`: the shape and a real calendar day. */
function isDate(s: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (mo < 1 || mo > 12 || d < 1) return false;
  const days = new Date(Date.UTC(y, mo, 0)).getUTCDate();
  return d <= days;
}

/** strfmt's IsDateTime: a date, a `t`, a time with zone (case-insensitive). */
function isDateTime(str: string): boolean {
  if (str.length < 4) return false;
  const parts = str.toLowerCase().split('t');
  if (parts.length < 2 || !isDate(parts[0]!)) return false;
  const m = DATE_TIME_TIME.exec(parts[1]!);
  return !!m && m[1]! <= '23' && m[2]! <= '59' && m[3]! <= '59';
}

function isCIDR(s: string): boolean {
  const i = s.indexOf('/');
  if (i < 0) return false;
  const ip = s.slice(0, i);
  const bits = s.slice(i + 1);
  if (!/^\d{1,3}$/.test(bits)) return false;
  const v = isIP(ip);
  return v === 4 ? Number(bits) <= 32 : v === 6 ? Number(bits) <= 128 : false;
}

/** Go's net/url.ParseRequestURI: an absolute URI or an absolute path. */
function isURI(s: string): boolean {
  if (s.startsWith('/')) return !/\s/.test(s);
  if (!/^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(s)) return false;
  try {
    new URL(s);
    return true;
  } catch {
    return false;
  }
}

function isISBN10(s: string): boolean {
  const v = s.replace(/[\s-]/g, '');
  if (!/^(?:[0-9]{9}X|[0-9]{10})$/.test(v)) return false;
  let sum = 0;
  for (let i = 0; i < 9; i++) sum += (i + 1) * Number(v[i]);
  sum += v[9] === 'X' ? 100 : 10 * Number(v[9]);
  return sum % 11 === 0;
}

function isISBN13(s: string): boolean {
  const v = s.replace(/[\s-]/g, '');
  if (!/^(?:[0-9]{13})$/.test(v)) return false;
  let sum = 0;
  for (let i = 0; i < 12; i++) sum += Number(v[i]) * (i % 2 === 0 ? 1 : 3);
  return (10 - (sum % 10)) % 10 === Number(v[12]);
}

function isCreditCard(s: string): boolean {
  const v = s.replace(/[^0-9]+/g, '');
  if (!/^(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|(222[1-9]|22[3-9][0-9]|2[3-6][0-9]{2}|27[01][0-9]|2720)[0-9]{12}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}|3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35\d{3})\d{11}|6[27][0-9]{14})$/.test(v)) return false;
  let sum = 0;
  let double = false;
  for (let i = v.length - 1; i >= 0; i--) {
    let d = Number(v[i]);
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    double = !double;
  }
  return sum % 10 === 0;
}

/** Checks by normalized format name (dashes removed, as go-openapi looks formats up). */
const CHECKS: Record<string, Check> = {
  bsonobjectid: re(/^[0-9a-fA-F]{24}$/),
  uri: isURI,
  email: re(/^(?:[^@\s<>]+@[^@\s<>]+|[^<>]*<[^@\s<>]+@[^@\s<>]+>)$/),
  hostname: (s) => s.length <= 255 && HOSTNAME.test(s),
  ipv4: (s) => isIPv4(s),
  ipv6: (s) => isIPv6(s),
  cidr: isCIDR,
  mac: re(MAC),
  uuid: re(/^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i),
  uuid3: re(/^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i),
  uuid4: re(/^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i),
  uuid5: re(/^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i),
  isbn: (s) => isISBN10(s) || isISBN13(s),
  isbn10: isISBN10,
  isbn13: isISBN13,
  creditcard: isCreditCard,
  ssn: re(/^\d{3}[- ]?\d{2}[- ]?\d{4}$/),
  hexcolor: re(/^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/),
  rgbcolor: re(new RegExp(`^rgb\\(${RGB_PART},${RGB_PART},${RGB_PART}\\)$`)),
  byte: re(BASE64),
  password: () => true,
  date: isDate,
  duration: (s) => GO_DURATION.test(s) || s === '0' || STRFMT_DURATION.test(s),
  datetime: isDateTime,
};

/**
 * The check for a schema's format, or undefined when kube ignores the format (unknown to it, or
 * on a type whose values it never checks).
 */
export function formatCheck(format: string | undefined, type: string | undefined): Check | undefined {
  if (!format) return undefined;
  if (type !== undefined && type !== '' && type !== 'string') return undefined;
  // The format name is the CRD author's: only the table's own entries are formats.
  const name = format.replace(/-/g, '');
  return Object.hasOwn(CHECKS, name) ? CHECKS[name] : undefined;
}
