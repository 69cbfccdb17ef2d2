/**
 * Field errors as kube's `k8s.io/apimachinery/pkg/util/validation/field` reports them. Their
 * `type` is the StatusCause reason; `message()` is the text kube puts in the cause and in the
 * aggregated Invalid message.
 */
import { stringifyJson } from './number-codec.js';

export type FieldErrorType =
  | 'FieldValueNotFound'
  | 'FieldValueRequired'
  | 'FieldValueDuplicate'
  | 'FieldValueInvalid'
  | 'FieldValueNotSupported'
  | 'FieldValueForbidden'
  | 'FieldValueTooLong'
  | 'FieldValueTooMany'
  | 'InternalError';

export interface FieldError {
  type: FieldErrorType;
  field: string;
  /** The offending value; omitted for Required/Forbidden/TooLong as kube does (TooMany prints the count). */
  value?: unknown;
  hasValue: boolean;
  detail: string;
}

const TYPE_TEXT: Record<FieldErrorType, string> = {
  FieldValueNotFound: 'Not found',
  FieldValueRequired: 'Required value',
  FieldValueDuplicate: 'Duplicate value',
  FieldValueInvalid: 'Invalid value',
  FieldValueNotSupported: 'Unsupported value',
  FieldValueForbidden: 'Forbidden',
  FieldValueTooLong: 'Too long',
  FieldValueTooMany: 'Too many',
  InternalError: 'Internal error',
};

/** A value that prints as the given Go text (`%#v` of a typed Go value, e.g. `[]string{"a"}`). */
export class GoLiteral {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
  toJSON(): string {
    return this.text;
  }
}

/** Go's `%#v` of a string slice of the named element type (`[]string{"a", "b"}`). */
export function goStringSlice(items: string[], elemType = 'string'): GoLiteral {
  return new GoLiteral(`[]${elemType}{${items.map((i) => JSON.stringify(i)).join(', ')}}`);
}

/** Formats a value the way Go's `%#v`-ish output in field errors reads for JSON data. */
function formatValue(v: unknown): string {
  if (v instanceof GoLiteral) return v.text;
  if (typeof v === 'string') return JSON.stringify(v);
  if (v === null || v === undefined) return '<nil>';
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  return stringifyJson(v);
}

/** The error text without the field path ("Invalid value: \"x\": detail"). */
export function fieldErrorBody(e: FieldError): string {
  let s = TYPE_TEXT[e.type];
  if (e.hasValue) s += `: ${formatValue(e.value)}`;
  if (e.detail) s += `: ${e.detail}`;
  return s;
}

export function fieldErrorString(e: FieldError): string {
  return e.field ? `${e.field}: ${fieldErrorBody(e)}` : fieldErrorBody(e);
}

export const fieldErr = {
  required: (field: string, detail = ''): FieldError => ({ type: 'FieldValueRequired', field, hasValue: false, detail }),
  invalid: (field: string, value: unknown, detail: string): FieldError => ({ type: 'FieldValueInvalid', field, value, hasValue: true, detail }),
  notSupported: (field: string, value: unknown, supported: string[]): FieldError => ({
    type: 'FieldValueNotSupported',
    field,
    value,
    hasValue: true,
    detail: supported.length ? `supported values: ${supported.map((s) => JSON.stringify(s)).join(', ')}` : '',
  }),
  forbidden: (field: string, detail: string): FieldError => ({ type: 'FieldValueForbidden', field, hasValue: false, detail }),
  duplicate: (field: string, value: unknown): FieldError => ({ type: 'FieldValueDuplicate', field, value, hasValue: true, detail: '' }),
  tooLong: (field: string, value: unknown, max: number): FieldError => ({
    type: 'FieldValueTooLong',
    field,
    value,
    hasValue: false,
    detail: `must have at most ${max} bytes`,
  }),
  tooMany: (field: string, actual: number, max: number): FieldError => ({
    type: 'FieldValueTooMany',
    field,
    // apimachinery 1.24's ErrorBody prints a TooMany's actual count (`Too many: 101: must have at most 100 items`).
    hasValue: true,
    detail: `must have at most ${max} items`,
    value: actual,
  }),
  notFound: (field: string, value: unknown): FieldError => ({ type: 'FieldValueNotFound', field, value, hasValue: true, detail: '' }),
};
