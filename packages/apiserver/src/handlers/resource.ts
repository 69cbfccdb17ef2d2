/**
 * Routes a resource request (RequestInfo says which) to its verb handler, after resolving the
 * resource in the catalog: unknown resource → 404, verb not served → 405. A resource that is not
 * stored, and a sub-resource of its own kind, has one route: POST (handlers/create-only.ts).
 */
import { servesProtobuf } from '../protobuf/codec.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  badRequest,
  isStored,
  methodNotSupported,
  nameIsPathSegment,
  pathNotFound,
  type Catalog,
  type ResourceDefinition,
  type UserInfo,
  type Verb,
} from '@plinth/api';
import type { AdmissionChain } from '@plinth/admission';
import { contextOf, type Handler } from '../context.js';
import type { ResourceStore } from '../registry/store.js';
import type { CreateOnlyStorages } from '../registry/create-only.js';
import type { RequestInfo } from '../request-info.js';
import { negotiate } from '../negotiation.js';
import { addWarning, writeObject } from '../http.js';
import type { ResourceRequest } from './scope.js';
import { handleGet } from './get.js';
import { handleList } from './list.js';
import type { FeatureGates } from '../features.js';
import { handleCreate } from './create.js';
import { handleUpdate, checkName } from './update.js';
import { handleDelete, handleDeleteCollection } from './delete.js';
import { handlePatch } from './patch.js';
import { parseDryRun, parseFieldManager, resourceVersionParam } from './options.js';
import { readObject } from './body.js';
import { handleCreateOnly, isLegacyWatchPath } from './create-only.js';

/** kube's --min-request-timeout default. */
const DEFAULT_MIN_REQUEST_TIMEOUT_S = 1800;

/** The verbs this server's handlers implement; discovery advertises only these. */
export const SERVED_VERBS: ReadonlySet<Verb> = new Set<Verb>(['get', 'list', 'watch', 'create', 'update', 'patch', 'delete', 'deletecollection']);

export interface ResourceHandlerDeps {
  catalog: Catalog;
  /** The registry store of every stored resource. */
  stores: ReadonlyMap<ResourceDefinition, ResourceStore>;
  /** What answers every resource that is not stored and every sub-resource of its own kind. */
  createOnly: CreateOnlyStorages;
  admission: AdmissionChain;
  features: FeatureGates;
  /** kube's --min-request-timeout in seconds (default 1800). */
  minRequestTimeoutSeconds?: number;
}

/** Every catalog entry has what serves it; a gap is a start-up error, not a 500 later. */
function checkServed(deps: ResourceHandlerDeps): void {
  for (const def of deps.catalog.all()) {
    if (isStored(def) ? !deps.stores.has(def) : !deps.createOnly.has(def)) throw new Error(`nothing serves ${def.plural}.${def.group}`);
    for (const sub of def.subresources) {
      if (sub.kind && !deps.createOnly.has(sub)) throw new Error(`nothing serves ${def.plural}/${sub.name}.${def.group}`);
    }
  }
}

export function createResourceHandler(deps: ResourceHandlerDeps): Handler {
  checkServed(deps);
  return async (req: IncomingMessage, res: ServerResponse) => {
    const { info, query, user } = contextOf(req);
    if (info.hasEmptySegment) throw pathNotFound();
    const def = deps.catalog.lookup(info.apiGroup, info.apiVersion, info.resource);
    if (!def) throw pathNotFound();
    if (def.deprecation) markDeprecated(req, res, def);
    // Unescaped path segments must still be single segments (kube's ValidatePathSegmentName).
    for (const [what, value] of [['resource name', info.name], ['namespace', info.namespace]] as const) {
      const problems = nameIsPathSegment(value, false).filter((m) => !m.startsWith('must be no more'));
      if (value && problems.length > 0) throw badRequest(`invalid ${what} ${JSON.stringify(value)}: [${problems.join(', ')}]`);
    }
    if (!isStored(def)) return serveCreateOnlyResource(req, res, def, deps, user!);
    // A custom resource's store comes and goes with its definition: between the two, 404.
    const store = deps.stores.get(def);
    if (!store) throw pathNotFound();
    const r: ResourceRequest = {
      req,
      res,
      info,
      query,
      def,
      store,
      catalog: deps.catalog,
      features: deps.features,
      minRequestTimeoutSeconds: deps.minRequestTimeoutSeconds ?? DEFAULT_MIN_REQUEST_TIMEOUT_S,
      scope: { user: user!, namespace: def.namespaced ? info.namespace : '', warn: (m) => addWarning(res, m) },
    };
    if (info.subresource) {
      await serveSubresource(r, deps);
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

/**
 * A request to a deprecated version: kube's deprecation filter adds the version's warning to the
 * response and marks the request for the audit annotation and the deprecated-API metric.
 */
function markDeprecated(req: IncomingMessage, res: ServerResponse, def: ResourceDefinition): void {
  const ctx = contextOf(req);
  const deprecation = def.deprecation!;
  ctx.deprecated = { group: def.group, version: def.version, resource: def.plural, subresource: ctx.info.subresource, deprecation };
  addWarning(res, deprecation.warning);
}

/** A resource that is not stored: POST to its collection, and no other route. */
async function serveCreateOnlyResource(req: IncomingMessage, res: ServerResponse, def: ResourceDefinition, deps: ResourceHandlerDeps, user: UserInfo): Promise<void> {
  const { info, query } = contextOf(req);
  if (info.name || info.subresource || !scopeMatches(def, info) || isLegacyWatchPath(info)) throw pathNotFound();
  if (info.verb !== 'create') throw methodNotSupported(undefined, info.verb);
  await handleCreateOnly({
    req,
    res,
    query,
    catalog: deps.catalog,
    resource: def,
    subresource: '',
    kind: def,
    storage: deps.createOnly.get(def)!,
    admission: deps.admission,
    user,
    namespace: def.namespaced ? info.namespace : '',
    name: '',
  });
}

/** A namespaced resource is addressed in a namespace, a cluster-scoped one outside any. */
function scopeMatches(def: ResourceDefinition, info: RequestInfo): boolean {
  return def.namespaced ? info.namespace !== '' : info.namespace === '';
}

/**
 * A sub-resource: POST of one with its own kind (serviceaccounts/token), or GET, PUT and PATCH
 * (every patch type, server-side apply included) of one with its own update strategy
 * (namespaces/status, namespaces/finalize, customresourcedefinitions/status, custom resources'
 * status), whose writes managedFields record under the sub-resource's name.
 */
async function serveSubresource(r: ResourceRequest, deps: ResourceHandlerDeps): Promise<void> {
  const sub = r.def.subresources.find((s) => s.name === r.info.subresource);
  if (!sub || r.info.parts.length > 3) throw pathNotFound();
  if (sub.kind) {
    if (!scopeMatches(r.def, r.info) || isLegacyWatchPath(r.info)) throw pathNotFound();
    if (r.info.verb !== 'create' || !sub.verbs.includes('create')) throw methodNotSupported(undefined, r.info.verb);
    await handleCreateOnly({
      req: r.req,
      res: r.res,
      query: r.query,
      catalog: r.catalog,
      resource: r.def,
      subresource: sub.name,
      kind: sub.kind,
      storage: deps.createOnly.get(sub)!,
      admission: deps.admission,
      user: r.scope.user,
      namespace: r.scope.namespace,
      name: r.info.name,
    });
    return;
  }
  const strategy = sub.strategy;
  if (!strategy) throw pathNotFound();
  const format = negotiate(r.req.headers.accept, { allowTable: false, allowProtobuf: servesProtobuf(r.def) });
  if (r.info.verb === 'get' && sub.verbs.includes('get')) {
    writeObject(r.req, r.res, r.query, 200, await r.store.get(r.scope, r.info.name, resourceVersionParam(r.query)), format);
    return;
  }
  if (r.info.verb === 'patch' && sub.verbs.includes('patch')) return handlePatch(r, strategy);
  if (r.info.verb !== 'update' || !sub.verbs.includes('update')) throw methodNotSupported(undefined, r.info.verb);
  const dryRun = parseDryRun(r.query, 'UpdateOptions');
  const manager = parseFieldManager(r.query, r.req.headers['user-agent'], 'UpdateOptions');
  const obj = await readObject(r);
  checkName(r, obj.metadata.name, obj.metadata.namespace);
  obj.metadata.name = r.info.name;
  const { object } = await r.store.update(r.scope, r.info.name, obj, { dryRun, manager, fieldManager: r.query.get('fieldManager') || undefined }, strategy);
  writeObject(r.req, r.res, r.query, 200, object, format);
}
