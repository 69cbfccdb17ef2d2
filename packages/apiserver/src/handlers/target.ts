/**
 * What a resource request addresses, resolved once, in one place, before any handler runs: the
 * catalog entry, the sub-resource, and the namespace and name as the path gives them. A path that
 * is no route of that resource — a namespaced path to a cluster-scoped resource, a cluster path
 * with a name or sub-resource to a namespaced one, an unknown sub-resource — is a 404 here, as
 * kube's router answers it (kube registers routes per resource by its scope; CVE-2019-11247 was a
 * handler that served custom resources through the other scope's paths). Handlers get the
 * target, never the raw RequestInfo's namespace or name, so none can act on a wrong-scope path.
 *
 * The filter runs right after authorization, as kube's router does: a user who may not do what
 * the request asks gets kube's 403 (anonymous users cannot probe which resources exist, nor their
 * scope), one who may gets the 404, and nothing is served either way.
 */
import type { IncomingMessage } from 'node:http';
import { badRequest, isStored, nameIsPathSegment, pathNotFound, type Catalog, type ResourceDefinition, type SubresourceDefinition } from '@plinth/api';
import { contextOf, type Handler } from '../context.js';
import { addWarning } from '../http.js';
import type { RequestInfo } from '../request-info.js';
import { routeScope } from '../metrics/labels.js';

export interface ResourceTarget {
  /** The catalog entry of the requested group, version and resource. */
  readonly def: ResourceDefinition;
  /** The sub-resource the path names; undefined for the resource itself. */
  readonly subresource: SubresourceDefinition | undefined;
  /** Where the request acts: the path's namespace for a namespaced resource, '' for a cluster-scoped one. */
  readonly namespace: string;
  /** The object's name from the path; '' for a collection. Never a fieldSelector's name. */
  readonly name: string;
  /** After a connect sub-resource whose route takes a path (`pods/<name>/proxy/<path>`): that path's segments. */
  readonly subpath: readonly string[];
  /** One of kube's deprecated `/watch/` routes (GET only). */
  readonly legacyWatch: boolean;
  /** The route's metrics scope (`apiserver_request_total{scope}`). */
  readonly scope: ReturnType<typeof routeScope>;
}

/**
 * The target of a resource request, or the 404 (400 for a name that is no path segment) kube's
 * router gives a path that is none of the resource's routes. Methods are not checked here: a
 * route that exists answers 405 for a method it lacks, in the handlers.
 */
export function resolveResourceTarget(catalog: Catalog, info: RequestInfo, method: string): ResourceTarget {
  // No route has a /proxy/ prefix; none has an empty segment or anything after the sub-resource,
  // except a connect sub-resource that takes a path (pods/<name>/proxy/<path>: checked below).
  if (info.legacyProxy) throw pathNotFound();
  const extra = info.parts.length > 3;
  if (info.hasEmptySegment && !extra) throw pathNotFound();
  const def = catalog.lookup(info.apiGroup, info.apiVersion, info.resource);
  if (!def) throw pathNotFound();
  const name = info.pathName;
  if (info.namespacedPath) {
    // namespaces/<ns>/<resource>…: namespaced resources only (never /namespaces/<ns>/namespaces).
    if (!def.namespaced) throw pathNotFound();
  } else if (def.namespaced) {
    // A namespaced resource outside a namespace: only its collection, listed or watched across
    // all namespaces, and only when it has a list (no route names an object without its namespace).
    if (name !== '' || !(def.verbs.includes('list') || def.verbs.includes('watch'))) throw pathNotFound();
  }
  let subresource: SubresourceDefinition | undefined;
  if (info.subresource !== '') {
    subresource = def.subresources.find((s) => s.name === info.subresource);
    // kube's watch routes never have a sub-resource.
    if (!subresource || info.legacyWatch) throw pathNotFound();
  }
  if (extra && !subresource?.connect?.path) throw pathNotFound();
  const subpath = extra ? info.parts.slice(3) : [];
  // Empty segments may only be the proxied path's own (a trailing slash), never the route's.
  if (info.emptySegments > subpath.filter((p) => p === '').length) throw pathNotFound();
  if (info.legacyWatch && !def.verbs.includes('watch')) throw pathNotFound();
  // A resource that is not stored has one route: POST to its collection (a computed one: GET of
  // the collection and of its objects).
  if (!isStored(def) && def.storage !== 'computed' && name !== '') throw pathNotFound();
  // Unescaped path segments must still be single segments (kube's ValidatePathSegmentName).
  for (const [what, value] of [['resource name', name], ['namespace', info.namespace]] as const) {
    if (!value) continue;
    const problems = nameIsPathSegment(value, false).filter((m) => !m.startsWith('must be no more'));
    if (problems.length > 0) throw badRequest(`invalid ${what} ${JSON.stringify(value)}: [${problems.join(', ')}]`);
  }
  return { def, subresource, namespace: def.namespaced ? info.namespace : '', name, subpath, legacyWatch: info.legacyWatch, scope: routeScope(info, method) };
}

/**
 * Resolves every resource request's target (see resolveResourceTarget) and records it for the
 * handlers; a request to a deprecated version is marked (kube's deprecation Warning, audit
 * annotation and metric) once it is known to reach a route.
 */
export function withResourceTarget(next: Handler, deps: { catalog: Catalog }): Handler {
  return async (req, res) => {
    const ctx = contextOf(req);
    if (ctx.info.isResourceRequest) {
      const target = resolveResourceTarget(deps.catalog, ctx.info, req.method ?? 'GET');
      ctx.target = target;
      const deprecation = target.def.deprecation;
      if (deprecation) {
        ctx.deprecated = { group: target.def.group, version: target.def.version, resource: target.def.plural, subresource: ctx.info.subresource, deprecation };
        addWarning(res, deprecation.warning);
      }
    }
    await next(req, res);
  };
}

/** The resolved target of a resource request; only withResourceTarget sets it. */
export function targetOf(req: IncomingMessage): ResourceTarget {
  const target = contextOf(req).target;
  if (!target) throw new Error('resource target missing: the resource-target filter did not run');
  return target;
}
