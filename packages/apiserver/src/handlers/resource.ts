/**
 * Routes a resource request to its verb handler. The resource, sub-resource, namespace and name
 * come from the request's resolved target (target.ts: a path that is no route is a 404 there);
 * here a method the route does not take is a 405. A resource that is not stored, and a
 * sub-resource of its own kind, has one route: POST (handlers/create-only.ts).
 */
import { servesProtobuf } from '../protobuf/codec.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isStored, methodNotSupported, pathNotFound, type Catalog, type ResourceDefinition, type SubresourceDefinition, type UserInfo, type Verb } from '@plinth/api';
import type { AdmissionChain } from '@plinth/admission';
import { addAuditAnnotation, contextOf, type Handler } from '../context.js';
import type { ResourceStore } from '../registry/store.js';
import type { CreateOnlyStorages } from '../registry/create-only.js';
import type { Connecters } from '../registry/connect.js';
import type { ComputedStorages } from '../registry/computed.js';
import { serveComputed } from './computed.js';
import { serveScale } from './scale.js';
import { negotiate } from '../negotiation.js';
import { parseIncludeObject, tableOfObject } from '../table.js';
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
import { handleCreateOnly } from './create-only.js';
import { targetOf, type ResourceTarget } from './target.js';

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
  /** What answers every connect sub-resource (pods/log, pods/exec, services/proxy, ...). */
  connecters: Connecters;
  /** What answers every computed resource (componentstatuses); none when absent. */
  computed?: ComputedStorages;
  admission: AdmissionChain;
  features: FeatureGates;
  /** kube's --min-request-timeout in seconds (default 1800). */
  minRequestTimeoutSeconds?: number;
}

/** Every catalog entry has what serves it; a gap is a start-up error, not a 500 later. */
function checkServed(deps: ResourceHandlerDeps): void {
  for (const def of deps.catalog.all()) {
    const served = isStored(def) ? deps.stores.has(def) : def.storage === 'computed' ? !!deps.computed?.has(def) : deps.createOnly.has(def);
    if (!served) throw new Error(`nothing serves ${def.plural}.${def.group}`);
    for (const sub of def.subresources) {
      if ((sub.kind && !sub.scale && !deps.createOnly.has(sub)) || (sub.connect && !deps.connecters.has(sub))) throw new Error(`nothing serves ${def.plural}/${sub.name}.${def.group}`);
    }
  }
}

export function createResourceHandler(deps: ResourceHandlerDeps): Handler {
  checkServed(deps);
  return async (req: IncomingMessage, res: ServerResponse) => {
    const { info, query, user } = contextOf(req);
    const target = targetOf(req);
    const { def } = target;
    const computed = deps.computed?.get(def);
    if (computed) return serveComputed({ req, res, query, verb: info.verb, target, storage: computed, user: user! });
    if (!isStored(def)) return serveCreateOnlyResource(req, res, target, deps, user!);
    // A custom resource's store comes and goes with its definition: between the two, 404.
    const store = deps.stores.get(def);
    if (!store) throw pathNotFound();
    const r: ResourceRequest = {
      req,
      res,
      info,
      query,
      def,
      target,
      store,
      catalog: deps.catalog,
      features: deps.features,
      minRequestTimeoutSeconds: deps.minRequestTimeoutSeconds ?? DEFAULT_MIN_REQUEST_TIMEOUT_S,
      scope: { user: user!, namespace: target.namespace, warn: (m) => addWarning(res, m), annotate: (k, v) => addAuditAnnotation(req, k, v) },
    };
    if (target.subresource) {
      await serveSubresource(r, target.subresource, deps);
      return;
    }
    const verb = info.verb as Verb;
    // kube's /watch/ routes take GET only.
    if (target.legacyWatch && req.method !== 'GET' && req.method !== 'HEAD') throw methodNotSupported(undefined, verb);
    if (!def.verbs.includes(verb) || !SERVED_VERBS.has(verb)) throw methodNotSupported(undefined, verb);
    if ((verb === 'update' || verb === 'patch') && !target.name) throw methodNotSupported(undefined, verb);
    // Across all namespaces kube serves only list and watch: nothing is created or deleted en
    // masse there (a named object there is no route at all: see target.ts).
    if (def.namespaced && !target.namespace && verb !== 'list' && verb !== 'watch') throw methodNotSupported(undefined, verb);
    switch (verb) {
      case 'get':
        return handleGet(r);
      case 'list':
        return handleList(r, false);
      case 'watch':
        return handleList(r, true);
      case 'create':
        if (target.name) throw methodNotSupported(undefined, verb);
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

/** A resource that is not stored: POST to its collection (target.ts leaves no other path). */
async function serveCreateOnlyResource(req: IncomingMessage, res: ServerResponse, target: ResourceTarget, deps: ResourceHandlerDeps, user: UserInfo): Promise<void> {
  const { info, query } = contextOf(req);
  if (info.verb !== 'create') throw methodNotSupported(undefined, info.verb);
  await handleCreateOnly({
    req,
    res,
    query,
    catalog: deps.catalog,
    resource: target.def,
    subresource: '',
    kind: target.def,
    storage: deps.createOnly.get(target.def)!,
    admission: deps.admission,
    user,
    namespace: target.namespace,
    name: '',
  });
}

/**
 * A sub-resource: a connect sub-resource goes to its connecter (registry/connect.ts); POST of one with its own kind (serviceaccounts/token), or GET, PUT and PATCH
 * (every patch type, server-side apply included) of one with its own update strategy
 * (namespaces/status, namespaces/finalize, customresourcedefinitions/status, custom resources'
 * status), whose writes managedFields record under the sub-resource's name.
 */
async function serveSubresource(r: ResourceRequest, sub: SubresourceDefinition, deps: ResourceHandlerDeps): Promise<void> {
  if (sub.connect) {
    const verb = r.info.verb as Verb;
    if (!sub.verbs.includes(verb)) throw methodNotSupported(undefined, r.info.verb);
    await deps.connecters.get(sub)!({
      req: r.req,
      res: r.res,
      query: r.query,
      catalog: r.catalog,
      def: r.def,
      store: r.store,
      subresource: sub,
      verb,
      user: r.scope.user,
      namespace: r.target.namespace,
      name: r.target.name,
      path: r.target.subpath.join('/'),
    });
    return;
  }
  if (sub.scale) return serveScale(r, sub.scale, deps.admission);
  if (sub.kind) {
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
      namespace: r.target.namespace,
      name: r.target.name,
    });
    return;
  }
  const strategy = sub.strategy;
  if (!strategy) throw pathNotFound();
  // kube 1.24 serves a status subresource's GET as a Table too, with the resource's columns.
  const format = negotiate(r.req.headers.accept, { allowTable: r.info.verb === 'get', allowProtobuf: servesProtobuf(r.def) });
  if (r.info.verb === 'get' && sub.verbs.includes('get')) {
    const obj = await r.store.get(r.scope, r.target.name, resourceVersionParam(r.query));
    writeObject(r.req, r.res, r.query, 200, format.table ? tableOfObject(r.def, obj, parseIncludeObject(r.query), format.table) : obj, format);
    return;
  }
  if (r.info.verb === 'patch' && sub.verbs.includes('patch')) return handlePatch(r, strategy);
  if (r.info.verb !== 'update' || !sub.verbs.includes('update')) throw methodNotSupported(undefined, r.info.verb);
  const dryRun = parseDryRun(r.query, 'UpdateOptions');
  const manager = parseFieldManager(r.query, r.req.headers['user-agent'], 'UpdateOptions');
  const obj = await readObject(r);
  checkName(r, obj.metadata.name, obj.metadata.namespace);
  obj.metadata.name = r.target.name;
  const { object } = await r.store.update(r.scope, r.target.name, obj, { dryRun, manager, fieldManager: r.query.get('fieldManager') || undefined }, strategy);
  writeObject(r.req, r.res, r.query, 200, object, format);
}
