/**
 * The apimachinery-level checks pod validation is built from (k8s.io/apimachinery
 * `pkg/util/validation`, `pkg/api/validation`, `pkg/apis/meta/v1/validation`), with kube's
 * messages, since clients and humans read them.
 */
import { type FieldError, GoLiteral, fieldErr } from '../../../field-errors.js';
import { isDNS1123Label, isDNS1123Subdomain, isQualifiedName, isValidLabelValue, validateLabels } from '../../../validation.js';
import { type JsonObject, asObject, list, objects, str } from './access.js';

export const INT32_MAX = 2147483647;

/** kube's `IsNegativeErrorMsg`. */
export const IS_NEGATIVE_MSG = 'must be greater than or equal to 0';
/** kube's `isNotPositiveErrorMsg`. */
export const IS_NOT_POSITIVE_MSG = 'must be greater than zero';
/** kube's `fileModeErrorMsg`. */
export const FILE_MODE_MSG = 'must be a number between 0 and 0777 (octal), both inclusive';

export function inclusiveRangeError(lo: number, hi: number): string {
  return `must be between ${lo} and ${hi}, inclusive`;
}

/** kube's `RegexError`, including its "'a',  or 'b'," spacing. */
function regexError(msg: string, fmt: string, ...examples: string[]): string {
  if (examples.length === 0) return `${msg} (regex used for validation is '${fmt}')`;
  return `${msg} (e.g. ${examples.map((e) => `'${e}', `).join(' or ')}regex used for validation is '${fmt}')`;
}

export function isValidPortNum(port: number): string[] {
  return port >= 1 && port <= 65535 ? [] : [inclusiveRangeError(1, 65535)];
}

/** kube's `IsValidPortName` (IANA service names: at most 15 of [-a-z0-9], a letter, no `--`). */
export function isValidPortName(port: string): string[] {
  const errs: string[] = [];
  if (port.length > 15) errs.push('must be no more than 15 characters');
  if (!/^[-a-z0-9]+$/.test(port)) errs.push('must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)');
  if (!/[a-z]/.test(port)) errs.push('must contain at least one letter or number (a-z, 0-9)');
  if (port.includes('--')) errs.push('must not contain consecutive hyphens');
  if (port.length > 0 && (port.startsWith('-') || port.endsWith('-'))) errs.push('must not begin or end with a hyphen');
  return errs;
}

function hasChDirPrefix(value: string): string[] {
  if (value === '.') return ["must not be '.'"];
  if (value === '..') return ["must not be '..'"];
  if (value.startsWith('..')) return ["must not start with '..'"];
  return [];
}

const ENV_VAR_NAME_FMT = '[-._a-zA-Z][-._a-zA-Z0-9]*';
const envVarNameRe = new RegExp(`^${ENV_VAR_NAME_FMT}$`);

export function isEnvVarName(value: string): string[] {
  const errs: string[] = [];
  if (!envVarNameRe.test(value)) {
    errs.push(
      regexError(
        "a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or '.', and must not start with a digit",
        ENV_VAR_NAME_FMT,
        'my.env-name',
        'MY_ENV.NAME',
        'MyEnvName1',
      ),
    );
  }
  errs.push(...hasChDirPrefix(value));
  return errs;
}

const CONFIG_MAP_KEY_FMT = '[-._a-zA-Z0-9]+';
const configMapKeyRe = new RegExp(`^${CONFIG_MAP_KEY_FMT}$`);

export function isConfigMapKey(value: string): string[] {
  const errs: string[] = [];
  if (value.length > 253) errs.push('must be no more than 253 characters');
  if (!configMapKeyRe.test(value)) {
    errs.push(regexError("a valid config key must consist of alphanumeric characters, '-', '_' or '.'", CONFIG_MAP_KEY_FMT, 'key.name', 'KEY_NAME', 'key-name'));
  }
  errs.push(...hasChDirPrefix(value));
  return errs;
}

const HTTP_HEADER_NAME_FMT = '[-A-Za-z0-9]+';

export function isHTTPHeaderName(value: string): string[] {
  if (new RegExp(`^${HTTP_HEADER_NAME_FMT}$`).test(value)) return [];
  return [regexError("a valid HTTP header must consist of alphanumeric characters or '-'", HTTP_HEADER_NAME_FMT, 'X-Header-Name')];
}

/** Unix UIDs and GIDs: 0 to 2^31-1. */
export function isValidID(id: number): string[] {
  return id >= 0 && id <= INT32_MAX ? [] : [inclusiveRangeError(0, INT32_MAX)];
}

/** k8s.io/utils/net's forked `parseIPv4`: four decimal octets, leading zeros allowed. */
function parseIPv4(s: string): number[] | undefined {
  const parts = s.split('.');
  if (parts.length !== 4) return undefined;
  const out: number[] = [];
  for (const p of parts) {
    if (!/^[0-9]{1,3}$/.test(p) || Number(p) > 255) return undefined;
    out.push(Number(p));
  }
  return out;
}

/** Go's `parseIPv6` (16 bytes, one `::`, an optional trailing IPv4), without zones. */
function parseIPv6(text: string): number[] | undefined {
  const ip: number[] = new Array<number>(16).fill(0);
  let s = text;
  let ellipsis = -1;
  if (s.length >= 2 && s.startsWith('::')) {
    ellipsis = 0;
    s = s.slice(2);
    if (s.length === 0) return ip;
  }
  let j = 0;
  while (j < 16) {
    const m = /^[0-9a-fA-F]+/.exec(s);
    if (!m) return undefined;
    const n = parseInt(m[0], 16);
    if (n > 0xffff) return undefined;
    const c = m[0].length;
    if (c < s.length && s[c] === '.') {
      if ((ellipsis < 0 && j !== 12) || j + 4 > 16) return undefined;
      const ip4 = parseIPv4(s);
      if (!ip4) return undefined;
      ip.splice(j, 4, ...ip4);
      s = '';
      j += 4;
      break;
    }
    ip[j] = n >> 8;
    ip[j + 1] = n & 0xff;
    j += 2;
    s = s.slice(c);
    if (s.length === 0) break;
    if (s[0] !== ':' || s.length === 1) return undefined;
    s = s.slice(1);
    if (s[0] === ':') {
      if (ellipsis >= 0) return undefined;
      ellipsis = j;
      s = s.slice(1);
      if (s.length === 0) break;
    }
  }
  if (s.length !== 0) return undefined;
  if (j < 16) {
    if (ellipsis < 0) return undefined;
    const n = 16 - j;
    for (let k = j - 1; k >= ellipsis; k--) ip[k + n] = ip[k]!;
    for (let k = ellipsis + n - 1; k >= ellipsis; k--) ip[k] = 0;
  } else if (ellipsis >= 0) {
    return undefined;
  }
  return ip;
}

/**
 * k8s.io/utils/net `ParseIPSloppy`: Go's `net.ParseIP` whose IPv4 octets may have leading zeros.
 * The 16-byte form, or undefined when the text is not an IP.
 */
export function parseIPSloppy(s: string): number[] | undefined {
  for (const ch of s) {
    if (ch === '.') {
      const v4 = parseIPv4(s);
      return v4 ? [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, ...v4] : undefined;
    }
    if (ch === ':') return parseIPv6(s);
  }
  return undefined;
}

export function isIPSloppy(s: string): boolean {
  return parseIPSloppy(s) !== undefined;
}

export function isValidIP(value: string): string[] {
  return isIPSloppy(value) ? [] : ['must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)'];
}

/** The IP family as Go's `To4()` sees it (an IPv4-mapped IPv6 address is IPv4); 0 when not an IP. */
export function ipFamily(s: string): 0 | 4 | 6 {
  const ip = parseIPSloppy(s);
  if (!ip) return 0;
  return ip.slice(0, 10).every((b) => b === 0) && ip[10] === 0xff && ip[11] === 0xff ? 4 : 6;
}

export function validateNonnegativeField(value: unknown, field: string): FieldError[] {
  const n = typeof value === 'bigint' ? value : typeof value === 'number' ? value : 0;
  return n < 0 ? [fieldErr.invalid(field, value, IS_NEGATIVE_MSG)] : [];
}

export function validateDNS1123Label(value: string, field: string): FieldError[] {
  return isDNS1123Label(value).map((m) => fieldErr.invalid(field, value, m));
}

export function validateDNS1123Subdomain(value: string, field: string): FieldError[] {
  return isDNS1123Subdomain(value).map((m) => fieldErr.invalid(field, value, m));
}

/** kube's `ValidateLabelName` (a qualified name). */
export function validateLabelName(name: string, field: string): FieldError[] {
  return isQualifiedName(name).map((m) => fieldErr.invalid(field, name, m));
}

/** kube's `ValidateLabels`: every key a qualified name, every value a label value; the path has no key. */
export function validateLabelMap(labels: unknown, field: string): FieldError[] {
  return validateLabels(labels, field);
}

/** kube's metav1 `ValidateLabelSelector` (1.24: no options). */
export function validateLabelSelector(selector: unknown, field: string): FieldError[] {
  const sel = asObject(selector);
  if (!sel) return [];
  const errs: FieldError[] = [...validateLabels(sel['matchLabels'], `${field}.matchLabels`)];
  objects(sel['matchExpressions']).forEach((expr, i) => {
    const p = `${field}.matchExpressions[${i}]`;
    const op = str(expr['operator']);
    const values = list(expr['values']);
    if (op === 'In' || op === 'NotIn') {
      if (values.length === 0) errs.push(fieldErr.required(`${p}.values`, "must be specified when `operator` is 'In' or 'NotIn'"));
    } else if (op === 'Exists' || op === 'DoesNotExist') {
      if (values.length > 0) errs.push(fieldErr.forbidden(`${p}.values`, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
    } else {
      errs.push(fieldErr.invalid(`${p}.operator`, op, 'not a valid selector operator'));
    }
    errs.push(...validateLabelName(str(expr['key']), `${p}.key`));
  });
  return errs;
}

/** Whether a label value is valid (selectors' values are checked when matching). */
export function isLabelValue(v: string): boolean {
  return isValidLabelValue(v).length === 0;
}

/** Go's `%#v` of a `map[string]string` (keys sorted, as fmt prints maps). */
export function goStringMap(m: Record<string, string> | JsonObject | undefined): GoLiteral {
  if (!m) return new GoLiteral('map[string]string(nil)');
  const keys = Object.keys(m).sort();
  return new GoLiteral(`map[string]string{${keys.map((k) => `${JSON.stringify(k)}:${JSON.stringify(str(m[k]))}`).join(', ')}}`);
}

/** Path checks shared by volumes, mounts and seccomp: kube's `validatePathNoBacksteps`. */
export function validatePathNoBacksteps(target: string, field: string): FieldError[] {
  return target.split('/').includes('..') ? [fieldErr.invalid(field, target, "must not contain '..'")] : [];
}

/** kube's `validateLocalDescendingPath`: relative, no `..` element. */
export function validateLocalDescendingPath(target: string, field: string): FieldError[] {
  const errs: FieldError[] = [];
  if (target.startsWith('/')) errs.push(fieldErr.invalid(field, target, 'must be a relative path'));
  errs.push(...validatePathNoBacksteps(target, field));
  return errs;
}

/** kube's `validateLocalNonReservedPath`: a descending path that does not start with `..`. */
export function validateLocalNonReservedPath(target: string, field: string): FieldError[] {
  const errs = validateLocalDescendingPath(target, field);
  if (target.startsWith('..') && !target.startsWith('../')) errs.push(fieldErr.invalid(field, target, "must not start with '..'"));
  return errs;
}
