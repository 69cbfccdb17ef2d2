/** Query-parameter options of the verbs, validated as kube validates its *Options kinds. */
import {
  badRequest,
  defaultManagerFromUserAgent,
  validateManager,
  fieldErr,
  goStringSlice,
  invalid,
  parseFieldSelector,
  parseLabelSelector,
  objectFieldSet,
  convertFieldSelector,
  SelectorParseError,
  storageDefOf,
  type FieldError,
  type ResourceDefinition,
  type StoredObject,
} from '@plinth/api';
import { InvalidResourceVersionError, parseResourceVersion, type ListOptions, type Predicate, type ResourceVersionMatch } from '@plinth/storage';

type OptionsKind = 'CreateOptions' | 'UpdateOptions' | 'PatchOptions' | 'DeleteOptions';

/**
 * `dryRun`: absent → false; only `All` values → true; anything else, an empty value included
 * (`?dryRun=` decodes to `[]string{""}`), → 422 as kube's ValidateDryRun.
 */
export function parseDryRun(query: URLSearchParams, kind: OptionsKind): boolean {
  const values = query.getAll('dryRun');
  if (values.length === 0) return false;
  if (values.every((v) => v === 'All')) return true;
  throw invalid({ group: 'meta.k8s.io', kind }, '', [dryRunNotSupported(values)]);
}

/** kube's ValidateDryRun error: the values print as Go's `%#v` of a `[]string`. */
export function dryRunNotSupported(values: string[]): FieldError {
  return fieldErr.notSupported('dryRun', goStringSlice(values), ['All']);
}

/**
 * The field manager of a write: the `fieldManager` parameter (validated as kube's
 * ValidateFieldManager, 422) or the User-Agent's product name (kube's managerOrUserAgent).
 */
export function parseFieldManager(query: URLSearchParams, userAgent: string | undefined, kind: OptionsKind): string {
  const given = query.get('fieldManager') ?? '';
  if (given) {
    const errs = validateManager(given);
    if (errs.length > 0) throw invalid({ group: 'meta.k8s.io', kind }, '', errs);
    return given;
  }
  // kube's buildManagerInfo: no name at all is recorded as "unknown".
  return defaultManagerFromUserAgent(userAgent ?? '') || 'unknown';
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/**
 * An integer query parameter as kube's parameter codec reads it (Go's `strconv.ParseInt(v, 10,
 * 64)`): junk or a value outside int64 is a 400, never silently clamped or ignored.
 */
function parseInt64Param(query: URLSearchParams, name: string): number | undefined {
  const v = query.get(name);
  if (v === null || v === '') return undefined;
  if (!/^[+-]?\d+$/.test(v)) throw badRequest(`invalid value for ${name}: strconv.ParseInt: parsing ${JSON.stringify(v)}: invalid syntax`);
  const n = BigInt(v);
  if (n < INT64_MIN || n > INT64_MAX) throw badRequest(`invalid value for ${name}: strconv.ParseInt: parsing ${JSON.stringify(v)}: value out of range`);
  return Number(n);
}

/** The `resourceVersion` parameter, validated by the storage's own parser (400 on junk). */
export function resourceVersionParam(query: URLSearchParams): string {
  const rv = query.get('resourceVersion') ?? '';
  try {
    parseResourceVersion(rv);
  } catch (e) {
    if (e instanceof InvalidResourceVersionError) throw badRequest(`invalid resource version: ${rv}`);
    throw e;
  }
  return rv;
}

export interface ParsedListOptions extends ListOptions {
  watch: boolean;
  /** See WatchOptions.indexValue. */
  indexValue?: string;
  timeoutSeconds?: number;
  allowWatchBookmarks: boolean;
}

/** Builds the selector predicate for a resource; 400 on a malformed or unsupported selector. */
export function selectorPredicate(def: ResourceDefinition, query: URLSearchParams): { predicate?: Predicate; hasSelector: boolean; indexValue?: string } {
  const ls = query.get('labelSelector') ?? '';
  const fs = query.get('fieldSelector') ?? '';
  if (!ls && !fs) return { hasSelector: false };
  try {
    const labels = ls ? parseLabelSelector(ls) : undefined;
    // Field labels are checked (and, for a version that names them differently, rewritten) for
    // the requested version — kube's per-version field label conversion; objects are matched in
    // storage, as the storage version has them.
    const fields = fs ? convertFieldSelector(def, parseFieldSelector(fs)) : undefined;
    const stored = storageDefOf(def);
    const lsel = labels && !labels.empty() ? labels : undefined;
    const fsel = fields && !fields.empty() ? fields : undefined;
    if (!lsel && !fsel) return { hasSelector: false };
    const predicate = (obj: StoredObject): boolean =>
      (!lsel || lsel.matches(obj.metadata.labels)) && (!fsel || fsel.matches(objectFieldSet(stored, obj)));
    // A watch the watch cache can file under its index value (kube's RequiresExactMatch of the
    // trigger field): it is then offered only the events that may concern it.
    const index = stored.fieldSelector?.index;
    const indexValue = index && fsel ? fsel.requiresExactMatch(index.field) : undefined;
    return { predicate, hasSelector: true, ...(indexValue !== undefined ? { indexValue } : {}) };
  } catch (e) {
    if (e instanceof SelectorParseError) throw badRequest(e.message);
    throw e;
  }
}

/** list/watch query parameters, validated as kube's ValidateListOptions. */
export function parseListOptions(def: ResourceDefinition, query: URLSearchParams, watch: boolean): ParsedListOptions {
  const rv = resourceVersionParam(query);
  const match = (query.get('resourceVersionMatch') ?? '') as ResourceVersionMatch;
  const cont = query.get('continue') ?? '';
  const limit = parseInt64Param(query, 'limit');
  const timeoutSeconds = parseInt64Param(query, 'timeoutSeconds');
  const bm = query.get('allowWatchBookmarks');
  const errs: FieldError[] = [];
  if (!watch && match) {
    if (!rv) errs.push(fieldErr.forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden unless resourceVersion is provided'));
    if (cont) errs.push(fieldErr.forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden when continue is provided'));
    if (match !== 'Exact' && match !== 'NotOlderThan') errs.push(fieldErr.notSupported('resourceVersionMatch', match, ['Exact', 'NotOlderThan', '']));
    if (match === 'Exact' && rv === '0') errs.push(fieldErr.forbidden('resourceVersionMatch', 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'));
  }
  if (errs.length > 0) throw invalid({ group: 'meta.k8s.io', kind: 'ListOptions' }, '', errs);
  if (cont && rv && rv !== '0') throw badRequest('specifying resource version is not allowed when using continue');
  const { predicate, hasSelector, indexValue } = selectorPredicate(def, query);
  const out: ParsedListOptions = {
    resourceVersion: rv,
    resourceVersionMatch: match,
    hasSelector,
    watch,
    allowWatchBookmarks: bm === 'true' || bm === '1',
  };
  if (predicate) out.predicate = predicate;
  if (indexValue !== undefined) out.indexValue = indexValue;
  if (cont) out.continue = cont;
  if (limit !== undefined && limit > 0) out.limit = limit;
  if (timeoutSeconds !== undefined) out.timeoutSeconds = timeoutSeconds;
  return out;
}
