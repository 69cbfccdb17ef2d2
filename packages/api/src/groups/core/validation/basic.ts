/**
 * The apimachinery-level checks pod validation is built from (k8s.io/apimachinery
 * `pkg/util/validation`, `pkg/api/validation`), with kube's messages, since clients and humans read
 * them. Paths, IPs, node and label selectors are in the modules shared with the other core types
 * (volume-paths.ts, net.ts, node-selector.ts, label-selector.ts).
 */
import { type FieldError, GoLiteral, fieldErr } from '../../../field-errors.js';
import { isDNS1123Label, isDNS1123Subdomain, isValidLabelValue } from '../../../validation.js';
import { type JsonObject, str } from './access.js';
import { parseIP } from './net.js';

export const INT32_MAX = 2147483647;

/** kube's `IsNegativeErrorMsg`. */
export const IS_NEGATIVE_MSG = 'must be greater than or equal to 0';
/** kube's `isNotPositiveErrorMsg`. */
export const IS_NOT_POSITIVE_MSG = 'must be greater than zero';

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

/** Whether `s` is an IP to k8s.io/utils/net `ParseIPSloppy` (leading zeros in IPv4 octets allowed). */
export function isIPSloppy(s: string): boolean {
  return parseIP(s) !== undefined;
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
