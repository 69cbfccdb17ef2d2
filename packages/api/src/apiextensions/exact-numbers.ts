/**
 * Custom resource validation of numbers a float64 cannot hold (see ../number-codec.ts): int64
 * values above 2^53 (BigInts) and integers above 2^53 that are float64s for kube. ajv knows
 * neither: its type check refuses a BigInt and its number keywords skip one. An object holding
 * such a number is validated by a second ajv validator, compiled on first need, in which each
 * schema node's `type`, `enum` and number keywords are one keyword checked here with kube-openapi's
 * rules; its errors have the shape of ajv's, so compile.ts translates them alike.
 *
 * kube-openapi's rules (validate/type.go, validator.go, values.go): an int64 is an integer, a
 * float64 is a number (an integer too when it is within ±(2^53 - 1)); an int64 is compared with
 * a bound truncated to int64 and with `multipleOf` truncated (`value % m`); a float64 with
 * floats, `multipleOf` passing when the quotient is such an integer; `enum` compares an int64
 * with a float64 by value.
 */
import type { ErrorObject } from 'ajv';
import { isJsonInteger, isJsonNumber } from '../number-codec.js';
import { isPlainObject } from '../types.js';

type Raw = Record<string, unknown>;

/** The keyword the exact form of a node puts its checks under. */
export const EXACT_KEYWORD = 'x-plinth-exact';
/** Where the ajv form keeps an `enum` that holds BigInts (ajv itself gets them as numbers). */
export const EXACT_ENUM = 'x-plinth-enum';

/** A node's `type`, number keywords and enum, as the exact keyword checks them. */
interface ExactChecks {
  types?: string[];
  nullable: boolean;
  maximum?: number;
  exclusiveMaximum?: number;
  minimum?: number;
  exclusiveMinimum?: number;
  multipleOf?: number;
  enum?: unknown[];
}

const FOLDED = ['type', 'enum', EXACT_ENUM, 'maximum', 'exclusiveMaximum', 'minimum', 'exclusiveMinimum', 'multipleOf'] as const;

/** A copy of a JSON value with every BigInt a number: for the ajv form, which ajv compiles to code. */
function withoutBigInts(v: unknown): unknown {
  if (typeof v === 'bigint') return Number(v);
  if (Array.isArray(v)) return v.map(withoutBigInts);
  if (isPlainObject(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, withoutBigInts(x)]));
  return v;
}

function holdsBigInt(v: unknown): boolean {
  if (typeof v === 'bigint') return true;
  if (Array.isArray(v)) return v.some(holdsBigInt);
  return isPlainObject(v) && Object.values(v).some(holdsBigInt);
}

/**
 * The ajv form of a schema's `enum`: ajv compiles enum values into code and cannot write a BigInt,
 * so they go as numbers (no value the fast validator sees equals one: such numbers send an object
 * to the exact validator), and the enum as written is kept under EXACT_ENUM.
 */
export function ajvEnum(values: unknown[]): Raw {
  return holdsBigInt(values) ? { enum: withoutBigInts(values), [EXACT_ENUM]: values } : { enum: values };
}

/** The ajv form (compile.ts toAjv) with each node's type, enum and number keywords under EXACT_KEYWORD. */
export function exactAjvSchema(node: Raw): Raw {
  const out: Raw = {};
  const checks: ExactChecks = { nullable: false };
  let folded = false;
  for (const [k, v] of Object.entries(node)) {
    if ((FOLDED as readonly string[]).includes(k)) {
      folded = true;
      continue;
    }
    if (k === 'properties' && isPlainObject(v)) out[k] = Object.fromEntries(Object.entries(v).map(([p, s]) => [p, isPlainObject(s) ? exactAjvSchema(s) : s]));
    else if ((k === 'items' || k === 'additionalProperties' || k === 'not') && isPlainObject(v)) out[k] = exactAjvSchema(v);
    else if ((k === 'allOf' || k === 'anyOf' || k === 'oneOf') && Array.isArray(v)) out[k] = v.map((s: unknown) => (isPlainObject(s) ? exactAjvSchema(s) : s));
    else out[k] = v;
  }
  if (!folded) return out;
  const type = node['type'];
  if (type !== undefined) {
    const types = (Array.isArray(type) ? type : [type]).map(String);
    checks.nullable = types.includes('null');
    checks.types = types.filter((t) => t !== 'null');
  }
  const num = (k: keyof ExactChecks & string): void => {
    if (typeof node[k] === 'number') (checks as unknown as Raw)[k] = node[k];
  };
  num('maximum');
  num('exclusiveMaximum');
  num('minimum');
  num('exclusiveMinimum');
  num('multipleOf');
  const en = node[EXACT_ENUM] ?? node['enum'];
  if (Array.isArray(en)) checks.enum = en;
  out[EXACT_KEYWORD] = checks;
  return out;
}

/** kube-openapi's JSON type of a decoded value (an int64 is an integer, a float64 a number). */
export function exactJsonType(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'bigint') return 'integer';
  if (typeof v === 'number') return Number.isSafeInteger(v) ? 'integer' : 'number';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'object') return 'object';
  return typeof v;
}

/** An int64 bound: kube converts a float bound with int64(), which truncates. */
const intBound = (b: number): bigint => BigInt(Math.trunc(b));

/** kube-openapi's MaximumNativeType/MinimumNativeType: whether `v` is past the bound. */
function past(v: number | bigint, bound: number, above: boolean, exclusive: boolean): boolean {
  if (isJsonInteger(v)) {
    const x = BigInt(v);
    const b = intBound(bound);
    return above ? (exclusive ? x >= b : x > b) : exclusive ? x <= b : x < b;
  }
  return above ? (exclusive ? v >= bound : v > bound) : exclusive ? v <= bound : v < bound;
}

/** kube-openapi's MultipleOfNativeType. */
function isMultiple(v: number | bigint, factor: number): boolean {
  const m = Math.trunc(factor);
  if (isJsonInteger(v) && m !== 0) return BigInt(v) % BigInt(m) === 0n;
  const f = Number(v);
  const q = factor < 1 ? (1 / factor) * f : f / factor;
  return Number.isSafeInteger(q);
}

/** kube-openapi's Enum: deep equality, an int64 and a float64 equal by value. */
function enumEqual(a: unknown, b: unknown): boolean {
  if (isJsonNumber(a) && isJsonNumber(b)) return a == b; // eslint-disable-line eqeqeq -- BigInt vs number by value
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => enumEqual(x, b[i]));
  if (isPlainObject(a)) {
    if (!isPlainObject(b) || Object.keys(a).length !== Object.keys(b).length) return false;
    return Object.keys(a).every((k) => Object.prototype.hasOwnProperty.call(b, k) && enumEqual(a[k], b[k]));
  }
  return a === b;
}

type ExactError = Pick<ErrorObject, 'keyword' | 'params' | 'message'> & { data: unknown; parentSchema: Raw };

/** The exact keyword's check of one value: ajv-shaped errors (no paths: ajv adds them). */
function check(c: ExactChecks, data: unknown, parentSchema: Raw): ExactError[] {
  const errs: ExactError[] = [];
  const err = (keyword: string, params: Record<string, unknown>): void => {
    errs.push({ keyword, params, message: keyword, data, parentSchema });
  };
  if (c.types && !(data === null && c.nullable)) {
    const t = exactJsonType(data);
    const ok = c.types.includes(t) || (t === 'integer' && c.types.includes('number'));
    if (!ok) err('type', { type: c.types.join(',') });
  }
  if (isJsonNumber(data)) {
    if (c.maximum !== undefined && past(data, c.maximum, true, false)) err('maximum', { comparison: '<=', limit: c.maximum });
    if (c.exclusiveMaximum !== undefined && past(data, c.exclusiveMaximum, true, true)) err('exclusiveMaximum', { comparison: '<', limit: c.exclusiveMaximum });
    if (c.minimum !== undefined && past(data, c.minimum, false, false)) err('minimum', { comparison: '>=', limit: c.minimum });
    if (c.exclusiveMinimum !== undefined && past(data, c.exclusiveMinimum, false, true)) err('exclusiveMinimum', { comparison: '>', limit: c.exclusiveMinimum });
    if (c.multipleOf !== undefined && !isMultiple(data, c.multipleOf)) err('multipleOf', { multipleOf: c.multipleOf });
  }
  if (c.enum && !c.enum.some((e) => enumEqual(e, data))) err('enum', { allowedValues: c.enum });
  return errs;
}

/** The ajv keyword definition of EXACT_KEYWORD (`errors: true`: ajv adds paths to ours). */
const validateExact = Object.assign(
  (schema: ExactChecks, data: unknown, parentSchema?: Raw): boolean => {
    const errs = check(schema, data, parentSchema ?? {});
    validateExact.errors = errs.length > 0 ? errs : undefined;
    return errs.length === 0;
  },
  { errors: undefined as ExactError[] | undefined },
);

export const exactKeyword = { keyword: EXACT_KEYWORD, errors: true, validate: validateExact };
