/**
 * kube's RequestInfo: what a URL and method mean (verb, group, version, namespace, resource,
 * subresource, name), derived once per request by the request-info filter.
 */

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
  /** get, list, watch, create, update, patch, delete, deletecollection, or the lowercase HTTP method. */
  verb: string;
  /** 'api' or 'apis' for resource requests. */
  apiPrefix: string;
  apiGroup: string;
  apiVersion: string;
  namespace: string;
  resource: string;
  subresource: string;
  name: string;
  /** The rest of the path after the sub-resource (proxy-style), rarely used. */
  parts: string[];
}

const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);

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
    verb: method.toLowerCase(),
    apiPrefix: '',
    apiGroup: '',
    apiVersion: '',
    namespace: '',
    resource: '',
    subresource: '',
    name: '',
    parts: [],
  };
  // Segments are split first, then unescaped (a client may send `system%3Aview`; `%2F` stays inside
  // its segment and can never name an object, nor can `%2e%2e` step out of one).
  let cur = path === '' || path === '/' ? [] : path.slice(1).split('/').map(unescapeSegment);
  const hasEmptySegment = cur.includes('');
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

  switch (method) {
    case 'POST':
      info.verb = 'create';
      break;
    case 'GET':
    case 'HEAD':
      info.verb = 'get';
      break;
    case 'PUT':
      info.verb = 'update';
      break;
    case 'PATCH':
      info.verb = 'patch';
      break;
    case 'DELETE':
      info.verb = 'delete';
      break;
    default:
      info.verb = '';
  }

  // Legacy watch paths: /api/v1/watch/namespaces/x/pods
  let legacyWatch = false;
  if (cur[0] === 'watch') {
    legacyWatch = true;
    cur = cur.slice(1);
    if (info.verb === 'get') info.verb = 'watch';
  }
  // Namespaces
  if (cur[0] === 'namespaces') {
    if (cur.length > 1) {
      info.namespace = cur[1]!;
      // /namespaces/<name> and /namespaces/<name>/<subresource> address the Namespace itself.
      if (cur.length > 2 && !NAMESPACE_SUBRESOURCES.has(cur[2]!)) {
        cur = cur.slice(2);
      }
    }
  }
  info.parts = cur;
  if (cur.length >= 3) info.subresource = cur[2]!;
  if (cur.length >= 2) info.name = cur[1]!;
  if (cur.length >= 1) info.resource = cur[0]!;
  // Note: for /api/v1/namespaces/<name> kube reports namespace == name (RBAC relies on it);
  // handlers treat the namespaces resource as cluster-scoped all the same.

  if (info.name === '' && info.verb === 'get') {
    const w = query.get('watch');
    info.verb = legacyWatch || (w !== null && w !== '0' && w !== 'false') ? 'watch' : 'list';
  }
  if (info.name === '' && info.verb === 'delete') info.verb = 'deletecollection';
  return info;
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
