/**
 * kube's RequestInfo: what a URL and method mean (verb, group, version, namespace, resource,
 * subresource, name), derived once per request by the request-info filter.
 */

export interface RequestInfo {
  isResourceRequest: boolean;
  /** The raw path. */
  path: string;
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

/** Parses a request like kube's RequestInfoFactory.NewRequestInfo. */
export function parseRequestInfo(method: string, path: string, query: URLSearchParams): RequestInfo {
  const info: RequestInfo = {
    isResourceRequest: false,
    path,
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
  const trimmed = path.replace(/^\/+|\/+$/g, '');
  // Segments are split first, then unescaped (a client may send `system%3Aview`; `%2F` stays inside
  // its segment and can never name an object).
  let cur = trimmed === '' ? [] : trimmed.split('/').map(unescapeSegment);
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
  if (cur.length === 0) return info; // /api/v1, /apis/g/v: discovery
  info.isResourceRequest = true;

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
