/**
 * kube's RequestInfo: what a URL and method mean (verb, group, version, namespace, resource,
 * subresource, name), derived once per request by the request-info filter.
 */
import { SelectorParseError, parseFieldSelector, parseLabelSelector } from '@plinth/api';

export interface RequestInfo {
  isResourceRequest: boolean;
  /** The path exactly as received: not normalised, not unescaped. */
  path: string;
  /**
   * A resource path with an empty segment (`//`, a trailing `/`): kube's router matches no route
   * for it, so it is a 404 — never a shorter path (`DELETE .../secrets/` must not become a
   * deletecollection).
   */
  hasEmptySegment: boolean;
  /** How many segments of the path are empty (`//`, a trailing `/`). */
  emptySegments: number;
  /** get, list, watch, create, update, patch, delete, deletecollection, or the lowercase HTTP method. */
  verb: string;
  /** 'api' or 'apis' for resource requests. */
  apiPrefix: string;
  apiGroup: string;
  apiVersion: string;
  namespace: string;
  resource: string;
  subresource: string;
  /**
   * kube's RequestInfo.Name: the object's name from the path or, for a list or watch (not on a
   * `/watch/` path), the name a `fieldSelector` requires exactly (`metadata.name=<x>`), so RBAC
   * `resourceNames`, audit and APF see it. Routing uses `pathName`.
   */
  name: string;
  /** The path from the resource on: resource, name, sub-resource and anything after (kube's Parts). */
  parts: string[];
  /** The object's name as the path gives it ('' for a collection): what routing addresses. */
  pathName: string;
  /**
   * The path has the `namespaces/<namespace>/<resource>` form. False for a Namespace's own paths
   * (`/namespaces/<name>[/status|/finalize]`), where `namespace` is the Namespace's name, as kube
   * reports it (RBAC relies on it), though the resource is cluster-scoped.
   */
  namespacedPath: boolean;
  /** The path is under `/watch/` (kube's deprecated watch routes): the verb is `watch` whatever the method. */
  legacyWatch: boolean;
  /** The path is under `/proxy/` (kube's special verb `proxy`; plinth serves no proxy route). */
  legacyProxy: boolean;
}

const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);
/** kube's specialVerbs: a path segment before the resource that sets the verb. */
const SPECIAL_VERBS = new Set(['proxy', 'watch']);

/** A request target split into its raw path and raw query string. */
export interface RequestTarget {
  path: string;
  query: string;
}

/**
 * Splits a request target (`req.url`) without normalising it. `new URL()` would resolve `.`, `..`
 * and `%2e%2e` segments, so `DELETE .../secrets/..` would address the Namespace: the path must
 * reach routing exactly as the client sent it. An absolute-form target (`https://host/p`) keeps
 * only its path; anything that is not a path (`*`) yields '' (no route matches it).
 */
export function splitRequestTarget(target: string): RequestTarget {
  let t = target;
  const scheme = /^[a-zA-Z][a-zA-Z0-9+.-]*:\/\/[^/?#]*/.exec(t);
  if (scheme) t = t.slice(scheme[0].length) || '/';
  const hash = t.indexOf('#');
  if (hash >= 0) t = t.slice(0, hash);
  const q = t.indexOf('?');
  const path = q >= 0 ? t.slice(0, q) : t;
  return { path: path.startsWith('/') ? path : '', query: q >= 0 ? t.slice(q + 1) : '' };
}

/** Parses a request like kube's RequestInfoFactory.NewRequestInfo; `path` is the raw path. */
export function parseRequestInfo(method: string, path: string, query: URLSearchParams): RequestInfo {
  const info: RequestInfo = {
    isResourceRequest: false,
    path,
    hasEmptySegment: false,
    emptySegments: 0,
    verb: method.toLowerCase(),
    apiPrefix: '',
    apiGroup: '',
    apiVersion: '',
    namespace: '',
    resource: '',
    subresource: '',
    name: '',
    parts: [],
    pathName: '',
    namespacedPath: false,
    legacyWatch: false,
    legacyProxy: false,
  };
  // Segments are split first, then unescaped (a client may send `system%3Aview`; `%2F` stays inside
  // its segment and can never name an object, nor can `%2e%2e` step out of one).
  let cur = path === '' || path === '/' ? [] : path.slice(1).split('/').map(unescapeSegment);
  const hasEmptySegment = cur.includes('');
  const emptySegments = cur.filter((c) => c === '').length;
  const prefix = cur[0];
  if (prefix !== 'api' && prefix !== 'apis') return info;
  info.apiPrefix = prefix;
  cur = cur.slice(1);
  if (prefix === 'apis') {
    if (cur.length < 2) return info; // /apis or /apis/<group>: discovery
    info.apiGroup = cur[0]!;
    cur = cur.slice(1);
  } else if (cur.length < 1) {
    return info; // /api: discovery
  }
  info.apiVersion = cur[0]!;
  cur = cur.slice(1);
  if (cur.length === 0 || (cur.length === 1 && cur[0] === '')) return info; // /api/v1, /apis/g/v[/]: discovery
  info.isResourceRequest = true;
  info.hasEmptySegment = hasEmptySegment;
  info.emptySegments = emptySegments;

  // kube's specialVerbs (/watch/…, /proxy/…) set the verb whatever the HTTP method.
  if (SPECIAL_VERBS.has(cur[0]!) && cur.length >= 2) {
    info.verb = cur[0]!;
    info.legacyWatch = cur[0] === 'watch';
    info.legacyProxy = cur[0] === 'proxy';
    cur = cur.slice(1);
  } else {
    info.verb = VERB_OF_METHOD.get(method) ?? '';
  }
  if (cur[0] === 'namespaces' && cur.length > 1) {
    info.namespace = cur[1]!;
    // /namespaces/<name> and /namespaces/<name>/<subresource> address the Namespace itself.
    if (cur.length > 2 && !NAMESPACE_SUBRESOURCES.has(cur[2]!)) {
      cur = cur.slice(2);
      info.namespacedPath = true;
    }
  }
  info.parts = cur;
  // proxy takes no sub-resource (kube's specialVerbsNoSubresources).
  if (cur.length >= 3 && !info.legacyProxy) info.subresource = cur[2]!;
  if (cur.length >= 2) info.name = cur[1]!;
  if (cur.length >= 1) info.resource = cur[0]!;
  info.pathName = info.name;

  if (info.name === '' && info.verb === 'get') {
    info.verb = isTrue(query.get('watch')) ? 'watch' : 'list';
    info.name = nameRequiredByFieldSelector(query);
  }
  if (info.name === '' && info.verb === 'delete') info.verb = 'deletecollection';
  return info;
}

const VERB_OF_METHOD: ReadonlyMap<string, string> = new Map([
  ['POST', 'create'],
  ['GET', 'get'],
  ['HEAD', 'get'],
  ['PUT', 'update'],
  ['PATCH', 'patch'],
  ['DELETE', 'delete'],
]);

/** A boolean query parameter as kube's Convert_Slice_string_To_bool reads it: absent, `0` or `false` (any case) is false. */
function isTrue(value: string | null): boolean {
  return value !== null && value !== '0' && value.toLowerCase() !== 'false';
}

/**
 * kube 1.24's RequestInfoFactory: a list or watch whose `fieldSelector` requires `metadata.name`
 * to equal a value that is a valid path segment names that object (RBAC `resourceNames` then
 * apply: `kubectl get secret s1 -w`). Only when the query decodes as ListOptions: a malformed
 * selector, `limit` or `timeoutSeconds` leaves the name empty (kube logs and ignores the error).
 */
function nameRequiredByFieldSelector(query: URLSearchParams): string {
  const fs = query.get('fieldSelector');
  if (!fs) return '';
  let name: string | undefined;
  try {
    name = parseFieldSelector(fs).requiresExactMatch('metadata.name');
    if (name === undefined || name === '' || !isValidPathSegmentName(name)) return '';
    const ls = query.get('labelSelector');
    if (ls) parseLabelSelector(ls);
  } catch (e) {
    if (e instanceof SelectorParseError) return '';
    throw e;
  }
  for (const p of ['limit', 'timeoutSeconds']) {
    const v = query.get(p);
    if (v !== null && !isInt64(v)) return '';
  }
  return name;
}

/** Go's path.IsValidPathSegmentName: not `.` or `..`, no `/` or `%`. */
function isValidPathSegmentName(name: string): boolean {
  return name !== '.' && name !== '..' && !name.includes('/') && !name.includes('%');
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** Whether Go's strconv.ParseInt(v, 10, 64) accepts `v`. */
function isInt64(v: string): boolean {
  if (!/^[+-]?\d+$/.test(v)) return false;
  const n = BigInt(v);
  return n >= INT64_MIN && n <= INT64_MAX;
}

function unescapeSegment(segment: string): string {
  if (!segment.includes('%')) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** kube's long-running sub-resources (BasicLongRunningRequestCheck as kube-apiserver configures it). */
const LONG_RUNNING_SUBRESOURCES: ReadonlySet<string> = new Set(['attach', 'exec', 'proxy', 'log', 'portforward']);

/**
 * kube-apiserver's long-running requests: the verbs watch and proxy, and the streaming
 * sub-resources. They have no request timeout (a watch has its own, see --min-request-timeout).
 */
export function isLongRunningRequest(info: RequestInfo): boolean {
  if (info.verb === 'watch' || info.verb === 'proxy') return true;
  return info.isResourceRequest && LONG_RUNNING_SUBRESOURCES.has(info.subresource);
}
