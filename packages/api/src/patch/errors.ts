import { isJsonObject as isObject } from '../json.js';

/**
 * The error every patch algorithm throws, and small JSON helpers they share. `code` is the HTTP
 * status kube-apiserver 1.24 answers the failure with (k8s.io/apiserver/pkg/endpoints/handlers/patch.go):
 *
 * - 400: the patch document is malformed (a JSON patch that is not a list of operations, a strategic
 *   merge patch that is not an object, or one of mergepatch's "invalid patch format" errors);
 * - 413: a JSON patch with more than {@link MAX_JSON_PATCH_OPERATIONS} operations;
 * - 422: a JSON patch operation that does not apply (evanphx/json-patch errors), or a strategic merge
 *   patch with lists of lists;
 * - 500: any other strategic merge patch failure (kube passes those errors through unwrapped, so they
 *   reach the client as a 500 `Status` with the bare message, e.g. a missing merge key).
 */
export class PatchError extends Error {
  readonly code: number;

  constructor(message: string, code = 422) {
    super(message);
    this.name = 'PatchError';
    this.code = code;
  }
}

/** kube's `maxJSONPatchOperations`. */
export const MAX_JSON_PATCH_OPERATIONS = 10000;

export { cloneJson, jsonEqual, isJsonObject as isObject, type JsonObject } from '../json.js';

function goNumber(n: number): string {
  if (Number.isInteger(n) && Math.abs(n) < 1e21) return String(n);
  // Go's %v of a float64 uses %g: exponent form for large/small magnitudes, `e+XX` with two digits.
  const exp = Math.floor(Math.log10(Math.abs(n)));
  if (exp < -4 || exp >= 21) {
    return n.toExponential().replace(/e([+-])(\d)$/, 'e$10$2');
  }
  return String(n);
}

/** Go's `%v` of a decoded JSON value: `map[a:1 b:[x y]]`, `<nil>`, and so on (map keys sorted). */
export function goFormat(v: unknown): string {
  if (v === null || v === undefined) return '<nil>';
  if (Array.isArray(v)) return `[${v.map(goFormat).join(' ')}]`;
  if (isObject(v)) {
    const keys = Object.keys(v).sort();
    return `map[${keys.map((k) => `${k}:${goFormat(v[k])}`).join(' ')}]`;
  }
  if (typeof v === 'number') return goNumber(v);
  return String(v);
}

/** The Go type name (`reflect.TypeOf(...)`) a decoded JSON value has, as kube's messages print it. */
export function goTypeName(v: unknown): string {
  if (v === null || v === undefined) return '%!s(<nil>)';
  if (Array.isArray(v)) return '[]interface {}';
  if (isObject(v)) return 'map[string]interface {}';
  if (typeof v === 'bigint') return 'int64';
  if (typeof v === 'number') return Number.isSafeInteger(v) ? 'int64' : 'float64';
  return typeof v === 'boolean' ? 'bool' : 'string';
}

/** Go's `%s` of a value that may not be a string: `%!s(float64=1)` and the like. */
export function goSprintS(v: unknown): string {
  if (typeof v === 'string') return v;
  if (v === null || v === undefined) return '%!s(<nil>)';
  if (typeof v === 'object') return goFormat(v);
  return `%!s(${goTypeName(v)}=${goFormat(v)})`;
}
