/**
 * kube's request label logic (apiserver/pkg/endpoints/metrics, 1.24): the reported verb, scope and
 * dry_run values, as pure functions.
 */
import type { IncomingMessage } from 'node:http';
import type { RequestInfo } from '../request-info.js';

/**
 * kube's CleanScope, for requests counted before routing (a limiter's 429): resource (named, a
 * fieldSelector's name included), namespace, cluster, or '' (non-resource).
 */
export function cleanScope(info: RequestInfo): string {
  if (info.name !== '') return 'resource';
  if (info.namespace !== '') return 'namespace';
  if (info.isResourceRequest) return 'cluster';
  return '';
}

/**
 * The scope kube's installer gives the route a resource request reaches: resource when the path
 * names an object or the method is POST, namespace for a namespaced collection, else cluster.
 */
export function routeScope(info: RequestInfo, method: string): 'resource' | 'namespace' | 'cluster' {
  if (info.pathName !== '' || method === 'POST') return 'resource';
  return info.namespacedPath ? 'namespace' : 'cluster';
}

/** The verbs kube reports; any other method is counted as `other`. */
const VALID_VERBS = new Set(['APPLY', 'CONNECT', 'CREATE', 'DELETE', 'DELETECOLLECTION', 'GET', 'LIST', 'PATCH', 'POST', 'PROXY', 'PUT', 'UPDATE', 'WATCH', 'WATCHLIST']);

/**
 * The `verb` label, as kube 1.24 reports it: the HTTP method, upper case (POST, PUT, PATCH,
 * DELETE — a delete of a collection is DELETE too), with GET/HEAD read as LIST unless one object
 * is addressed (CanonicalVerb), a list with `?watch` or a legacy `/watch/` path as WATCH, a PATCH
 * with the apply patch type as APPLY (CleanVerb), and anything unknown as `other`.
 */
export function reportedVerb(req: IncomingMessage, info: RequestInfo, scope: string): string {
  if (info.verb === 'watch') return 'WATCH';
  const method = req.method ?? 'GET';
  switch (method) {
    case 'GET':
    case 'HEAD':
      return scope !== 'resource' && scope !== '' ? 'LIST' : 'GET';
    case 'POST':
    case 'PUT':
    case 'DELETE':
      return method;
    case 'PATCH':
      return req.headers['content-type'] === 'application/apply-patch+yaml' ? 'APPLY' : 'PATCH';
    default: {
      const upper = method.toUpperCase();
      return VALID_VERBS.has(upper) ? upper : 'other';
    }
  }
}

/**
 * kube's cleanDryRun: '' without dryRun, the sorted distinct values when all are valid ("All" is
 * the only valid one), "invalid" otherwise — so the label has at most three values.
 */
export function cleanDryRun(query: URLSearchParams): string {
  if (!query.has('dryRun')) return '';
  const values = query.getAll('dryRun');
  for (const v of values) if (v !== 'All') return 'invalid';
  return 'All';
}

/** kube's non-mutating request verbs (max-in-flight's readOnly kind). */
export function isMutating(info: RequestInfo): boolean {
  return info.verb !== 'get' && info.verb !== 'list' && info.verb !== 'watch';
}

/** Long-running requests (kube's BasicLongRunningRequestCheck): watches, proxy and streaming sub-resources. */
const LONG_RUNNING_SUBRESOURCES = new Set(['attach', 'exec', 'proxy', 'log', 'portforward']);
export function isLongRunning(info: RequestInfo): boolean {
  return info.verb === 'watch' || (info.isResourceRequest && LONG_RUNNING_SUBRESOURCES.has(info.subresource));
}

/** Non-resource paths kube instruments (healthz.InstallPathHandler): counted with subresource = path. */
export const INSTRUMENTED_NON_RESOURCE_PATHS: ReadonlySet<string> = new Set(['/healthz', '/livez', '/readyz']);
