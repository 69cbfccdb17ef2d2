/**
 * Routes a resource request (RequestInfo says which) to its verb handler, after resolving the
 * resource in the catalog: unknown resource → 404, verb not served → 405.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  badRequest,
  methodNotSupported,
  nameIsPathSegment,
  namespaceFinalizeStrategy,
  namespaceStatusStrategy,
  pathNotFound,
  type Catalog,
  type ResourceDefinition,
  type ResourceStrategy,
  type Verb,
} from '@plinth/api';
import { contextOf, type Handler } from '../context.js';
import type { ResourceStore } from '../registry/store.js';
import { negotiate } from '../negotiation.js';
import { writeObject } from '../http.js';
import type { ResourceRequest } from './scope.js';
import { handleGet } from './get.js';
import { handleList } from './list.js';
import { handleCreate } from './create.js';
import { handleUpdate, checkName } from './update.js';
import { handleDelete, handleDeleteCollection } from './delete.js';
import { handlePatch } from './patch.js';
import { parseDryRun, resourceVersionParam } from './options.js';
import { readObject } from './body.js';

/** The verbs this server's handlers implement; discovery advertises only these. */
export const SERVED_VERBS: ReadonlySet<Verb> = new Set<Verb>(['get', 'list', 'watch', 'create', 'update', 'patch', 'delete', 'deletecollection']);

export interface ResourceHandlerDeps {
  catalog: Catalog;
  stores: ReadonlyMap<ResourceDefinition, ResourceStore>;
}

/** Sub-resources served, with the strategy their updates use. */
const SUBRESOURCE_STRATEGIES: Record<string, Record<string, ResourceStrategy>> = {
  namespaces: { status: namespaceStatusStrategy, finalize: namespaceFinalizeStrategy },
};

export function createResourceHandler(deps: ResourceHandlerDeps): Handler {
  return async (req: IncomingMessage, res: ServerResponse) => {
    const { info, query, user } = contextOf(req);
    if (info.hasEmptySegment) throw pathNotFound();
    const def = deps.catalog.lookup(info.apiGroup, info.apiVersion, info.resource);
    if (!def) throw pathNotFound();
    // Unescaped path segments must still be single segments (kube's ValidatePathSegmentName).
    for (const [what, value] of [['resource name', info.name], ['namespace', info.namespace]] as const) {
      const problems = nameIsPathSegment(value, false).filter((m) => !m.startsWith('must be no more'));
      if (value && problems.length > 0) throw badRequest(`invalid ${what} ${JSON.stringify(value)}: [${problems.join(', ')}]`);
    }
    const store = deps.stores.get(def)!;
    const r: ResourceRequest = {
      req,
      res,
      info,
      query,
      def,
      store,
      catalog: deps.catalog,
      scope: { user: user!, namespace: def.namespaced ? info.namespace : '' },
    };
    if (info.subresource) {
      await serveSubresource(r);
      return;
    }
    const verb = info.verb as Verb;
    if (!def.verbs.includes(verb) || !SERVED_VERBS.has(verb)) throw methodNotSupported(undefined, verb);
    // A cluster-scoped resource has no namespaced paths (a Namespace's own name is not one).
    if (!def.namespaced && info.namespace && !(def.group === '' && def.plural === 'namespaces')) throw pathNotFound();
    if ((verb === 'update' || verb === 'patch') && !info.name) throw methodNotSupported(undefined, verb);
    if (def.namespaced && !info.namespace) {
      // Across all namespaces kube serves only list and watch: no object is addressed without
      // its namespace, and nothing is created or deleted en masse there.
      if (info.name) throw pathNotFound();
      if (verb !== 'list' && verb !== 'watch') throw methodNotSupported(undefined, verb);
    }
    switch (verb) {
      case 'get':
        return handleGet(r);
      case 'list':
        return handleList(r, false);
      case 'watch':
        return handleList(r, true);
      case 'create':
        if (info.name) throw methodNotSupported(undefined, verb);
        return handleCreate(r);
      case 'update':
        return handleUpdate(r);
      case 'patch':
        return handlePatch(r);
      case 'delete':
        return handleDelete(r);
      case 'deletecollection':
        return handleDeleteCollection(r);
      default:
        throw methodNotSupported(undefined, verb);
    }
  };
}

/** GET and PUT of a sub-resource with its own update strategy (namespaces/status, namespaces/finalize). */
async function serveSubresource(r: ResourceRequest): Promise<void> {
  const strategy = SUBRESOURCE_STRATEGIES[r.def.plural]?.[r.info.subresource];
  if (!strategy || r.info.parts.length > 3) throw pathNotFound();
  const format = negotiate(r.req.headers.accept, { allowTable: false, allowProtobuf: true });
  if (r.info.verb === 'get' && r.info.subresource === 'status') {
    writeObject(r.req, r.res, r.query, 200, await r.store.get(r.scope, r.info.name, resourceVersionParam(r.query)), format);
    return;
  }
  if (r.info.verb !== 'update') throw methodNotSupported(undefined, r.info.verb);
  const dryRun = parseDryRun(r.query, 'UpdateOptions');
  const obj = await readObject(r);
  checkName(r, obj.metadata.name, obj.metadata.namespace);
  obj.metadata.name = r.info.name;
  const { object } = await r.store.update(r.scope, r.info.name, obj, { dryRun }, strategy);
  writeObject(r.req, r.res, r.query, 200, object, format);
}
