/**
 * The REST operations of every served resource, as kube-apiserver's installer registers them
 * (pkg/endpoints/installer.go): the collection, item, sub-resource, all-namespaces and deprecated
 * watch paths, with kube's operation ids, parameters, responses and `x-kubernetes-*` markers.
 * Kept format-neutral; v2.ts and v3.ts render it.
 */
import type { Catalog, ResourceDefinition, Verb } from '@plinth/api';
import { DELETE_OPTIONS, PATCH, STATUS, WATCH_EVENT, type GVK } from './definitions.js';
import { gvCamel, gvPrefix, kindName, listKindName, tagOf } from './names.js';

export type Method = 'get' | 'put' | 'post' | 'delete' | 'patch';

export interface Param {
  name: string;
  in: 'query' | 'path' | 'body';
  description: string;
  required?: boolean;
  type?: 'string' | 'boolean' | 'integer';
  /** For body parameters: the qualified definition name of the body. */
  schema?: string;
}

export interface Operation {
  method: Method;
  operationId: string;
  description: string;
  tag: string;
  action: 'get' | 'list' | 'post' | 'put' | 'patch' | 'delete' | 'deletecollection' | 'watch' | 'watchlist';
  gvk: GVK;
  consumes: string[];
  produces: string[];
  params: Param[];
  /** Status code → [description, qualified definition name or undefined]. */
  responses: Array<[string, string, string | undefined]>;
}

export interface PathEntry {
  path: string;
  /** The group-version this path belongs to (`api/v1`, `apis/rbac.authorization.k8s.io/v1`). */
  gvPath: string;
  params: Param[];
  ops: Operation[];
}

const q = (name: string, type: Param['type'], description: string): Param => ({ name, in: 'query', description, type });

// plinth's own one-line descriptions of kube's parameters.
const P = {
  pretty: q('pretty', 'string', "If 'true', the output is indented."),
  namespace: { name: 'namespace', in: 'path', description: 'object name and auth scope, such as for teams and projects', required: true, type: 'string' } as Param,
  allowWatchBookmarks: q('allowWatchBookmarks', 'boolean', 'Ask a watch for BOOKMARK events (the server may send none).'),
  continue: q('continue', 'string', 'The token of the next page of a list, from the previous page.'),
  fieldSelector: q('fieldSelector', 'string', 'Select objects by fields (all when empty).'),
  labelSelector: q('labelSelector', 'string', 'Select objects by labels (all when empty).'),
  limit: q('limit', 'integer', 'The most objects a list returns; more are left to the next page.'),
  resourceVersion: q('resourceVersion', 'string', 'Which resource version a read may be served from.'),
  resourceVersionMatch: q('resourceVersionMatch', 'string', 'How resourceVersion applies to a list: Exact or NotOlderThan.'),
  timeoutSeconds: q('timeoutSeconds', 'integer', 'How long a list or watch may take, in seconds.'),
  watch: q('watch', 'boolean', 'Watch for changes instead of listing.'),
  dryRun: q('dryRun', 'string', 'All: check and answer the request without storing anything.'),
  fieldManager: q('fieldManager', 'string', 'The name of the actor making the change (at most 128 printable characters).'),
  force: q('force', 'boolean', "Take over conflicting fields in an apply request."),
  gracePeriodSeconds: q('gracePeriodSeconds', 'integer', 'Seconds before the object is deleted (0: at once).'),
  orphanDependents: q('orphanDependents', 'boolean', 'Deprecated: use propagationPolicy.'),
  fieldValidation: q('fieldValidation', 'string', 'Ignore, Warn or Strict: what an unknown or duplicate field in the body does.'),
  propagationPolicy: q('propagationPolicy', 'string', 'Orphan, Background or Foreground: what happens to dependents.'),
};

const LIST_PARAMS = [P.allowWatchBookmarks, P.continue, P.fieldSelector, P.labelSelector, P.limit, P.resourceVersion, P.resourceVersionMatch, P.timeoutSeconds, P.watch];
const body = (schema: string, required = true): Param => ({ name: 'body', in: 'body', description: '', required, schema });
const byName = (a: Param, b: Param): number => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

const OBJECT_MEDIA = ['application/json', 'application/yaml', 'application/vnd.kubernetes.protobuf'];
const STREAM_MEDIA = [...OBJECT_MEDIA, 'application/json;stream=watch', 'application/vnd.kubernetes.protobuf;stream=watch'];
const PATCH_MEDIA = ['application/json-patch+json', 'application/merge-patch+json', 'application/strategic-merge-patch+json', 'application/apply-patch+yaml'];
const PATCH_MEDIA_WITHOUT_APPLY = PATCH_MEDIA.filter((m) => m !== 'application/apply-patch+yaml');

/** What the feature gates change in the published operations. */
export interface PathFeatures {
  /** ServerSideFieldValidation: create, update and patch take `fieldValidation`. */
  fieldValidation?: boolean;
  /** ServerSideApply (default true): PATCH consumes apply patches. */
  serverSideApply?: boolean;
}
const UNAUTHORIZED: [string, string, undefined] = ['401', 'Unauthorized', undefined];

/**
 * A path whose one operation is a create (a review resource, serviceaccounts/token). kube-openapi
 * moves the parameters every operation of a path shares, all but the body, up to the path; for a
 * lone create that is dryRun, fieldManager and pretty.
 */
function createOnlyPath(path: string, gvPath: string, params: Param[], create: Operation): PathEntry {
  const shared = create.params.filter((p) => p.in !== 'body');
  return { path, gvPath, params: [...params, ...shared].sort(byName), ops: [{ ...create, params: create.params.filter((p) => p.in === 'body') }] };
}

/** The path entries of one resource (main resource, sub-resources and watch paths). */
function resourcePaths(def: ResourceDefinition, served: (v: Verb) => boolean, features: PathFeatures): PathEntry[] {
  const fv = features.fieldValidation ? [P.fieldValidation] : [];
  const patchMedia = features.serverSideApply === false ? PATCH_MEDIA_WITHOUT_APPLY : PATCH_MEDIA;
  const verbs = (v: Verb): boolean => def.verbs.includes(v) && served(v);
  const gvPath = gvPrefix(def.group, def.version).slice(1);
  const base = `/${gvPath}`;
  const gv = gvCamel(def.group, def.version);
  const ns = def.namespaced ? 'Namespaced' : '';
  const kind = def.kind;
  const gvk: GVK = { group: def.group, version: def.version, kind };
  const kindRef = kindName(def);
  const tag = tagOf(def.group, def.version);
  const op = (method: Method, action: Operation['action'], operationId: string, description: string, params: Param[], responses: Operation['responses'], produces = OBJECT_MEDIA, opGVK = gvk): Operation => ({
    method,
    operationId,
    description,
    tag,
    action,
    gvk: opGVK,
    consumes: method === 'patch' ? patchMedia : ['*/*'],
    produces,
    params,
    responses: [...responses, UNAUTHORIZED],
  });
  const nameParam = (what = kind): Param => ({ name: 'name', in: 'path', description: `name of the ${what}`, required: true, type: 'string' });
  const scope = def.namespaced ? [P.namespace] : [];
  const collection = def.namespaced ? `${base}/namespaces/{namespace}/${def.plural}` : `${base}/${def.plural}`;
  const item = `${collection}/{name}`;
  const deleteReturns = def.returnDeletedObject ? kindRef : STATUS;
  const out: PathEntry[] = [];

  const collOps: Operation[] = [];
  if (verbs('deletecollection')) {
    const params = [body(DELETE_OPTIONS, false), P.continue, P.dryRun, P.fieldSelector, P.gracePeriodSeconds, P.labelSelector, P.limit, P.orphanDependents, P.propagationPolicy, P.resourceVersion, P.resourceVersionMatch, P.timeoutSeconds];
    collOps.push(op('delete', 'deletecollection', `delete${gv}Collection${ns}${kind}`, `delete collection of ${kind}`, params, [['200', 'OK', STATUS]]));
  }
  if (verbs('list')) {
    collOps.push(op('get', 'list', `list${gv}${ns}${kind}`, `list or watch objects of kind ${kind}`, LIST_PARAMS, [['200', 'OK', listKindName(def)]], STREAM_MEDIA));
  }
  if (verbs('create')) {
    const r: Operation['responses'] = [['200', 'OK', kindRef], ['201', 'Created', kindRef], ['202', 'Accepted', kindRef]];
    collOps.push(op('post', 'post', `create${gv}${ns}${kind}`, `create a ${kind}`, [body(kindRef), P.dryRun, P.fieldManager, ...fv], r));
  }
  if (collOps.length === 1 && collOps[0]!.action === 'post') out.push(createOnlyPath(collection, gvPath, [...scope, P.pretty], collOps[0]!));
  else if (collOps.length) out.push({ path: collection, gvPath, params: [...scope, P.pretty], ops: collOps });

  const itemOps: Operation[] = [];
  if (verbs('delete')) {
    const params = [body(DELETE_OPTIONS, false), P.dryRun, P.gracePeriodSeconds, P.orphanDependents, P.propagationPolicy];
    itemOps.push(op('delete', 'delete', `delete${gv}${ns}${kind}`, `delete a ${kind}`, params, [['200', 'OK', deleteReturns], ['202', 'Accepted', deleteReturns]]));
  }
  if (verbs('get')) itemOps.push(op('get', 'get', `read${gv}${ns}${kind}`, `read the specified ${kind}`, [], [['200', 'OK', kindRef]]));
  if (verbs('patch')) {
    const params = [body(PATCH), P.dryRun, P.fieldManager, ...fv, P.force];
    itemOps.push(op('patch', 'patch', `patch${gv}${ns}${kind}`, `partially update the specified ${kind}`, params, [['200', 'OK', kindRef], ['201', 'Created', kindRef]]));
  }
  if (verbs('update')) {
    const params = [body(kindRef), P.dryRun, P.fieldManager, ...fv];
    itemOps.push(op('put', 'put', `replace${gv}${ns}${kind}`, `replace the specified ${kind}`, params, [['200', 'OK', kindRef], ['201', 'Created', kindRef]]));
  }
  if (itemOps.length) out.push({ path: item, gvPath, params: [nameParam(), ...scope, P.pretty].sort(byName), ops: itemOps });

  for (const sub of [...def.subresources].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    const name = sub.name;
    const Sub = name[0]!.toUpperCase() + name.slice(1);
    const subVerb = (v: Verb): boolean => sub.verbs.includes(v) && served(v);
    const subPath = `${item}/${name}`;
    if (sub.kind) {
      // A create with a kind of its own: body and answer are that kind (serviceaccounts/token).
      if (!subVerb('create')) continue;
      const subKind = sub.kind;
      const subRef = kindName(subKind);
      const r: Operation['responses'] = [['200', 'OK', subRef], ['201', 'Created', subRef], ['202', 'Accepted', subRef]];
      const create = op('post', 'post', `create${gv}${ns}${kind}${Sub}`, `create ${name} of a ${kind}`, [body(subRef), P.dryRun, P.fieldManager], r, OBJECT_MEDIA, {
        group: subKind.group,
        version: subKind.version,
        kind: subKind.kind,
      });
      out.push(createOnlyPath(subPath, gvPath, [nameParam(subKind.kind), ...scope, P.pretty], create));
      continue;
    }
    const subOps: Operation[] = [];
    if (subVerb('get')) subOps.push(op('get', 'get', `read${gv}${ns}${kind}${Sub}`, `read ${name} of the specified ${kind}`, [], [['200', 'OK', kindRef]]));
    if (subVerb('patch')) {
      const params = [body(PATCH), P.dryRun, P.fieldManager, ...fv, P.force];
      subOps.push(op('patch', 'patch', `patch${gv}${ns}${kind}${Sub}`, `partially update ${name} of the specified ${kind}`, params, [['200', 'OK', kindRef], ['201', 'Created', kindRef]]));
    }
    if (subVerb('update')) {
      const params = [body(kindRef), P.dryRun, P.fieldManager, ...fv];
      subOps.push(op('put', 'put', `replace${gv}${ns}${kind}${Sub}`, `replace ${name} of the specified ${kind}`, params, [['200', 'OK', kindRef], ['201', 'Created', kindRef]]));
    }
    if (subOps.length) out.push({ path: subPath, gvPath, params: [nameParam(), ...scope, P.pretty].sort(byName), ops: subOps });
  }

  if (verbs('list') && def.namespaced) {
    const o = op('get', 'list', `list${gv}${kind}ForAllNamespaces`, `list or watch objects of kind ${kind}`, [], [['200', 'OK', listKindName(def)]], STREAM_MEDIA);
    out.push({ path: `${base}/${def.plural}`, gvPath, params: [...LIST_PARAMS, P.pretty].sort(byName), ops: [o] });
  }
  if (verbs('watch')) {
    const watchResp: Operation['responses'] = [['200', 'OK', WATCH_EVENT]];
    const wColl = def.namespaced ? `${base}/watch/namespaces/{namespace}/${def.plural}` : `${base}/watch/${def.plural}`;
    // plinth's words: deprecated paths, a list with watch=true (and a fieldSelector for one object) does it.
    const listDesc = `watch changes to a list of ${kind} (deprecated: list with watch=true)`;
    const itemDesc = `watch changes to a ${kind} (deprecated: list with watch=true and a fieldSelector)`;
    out.push({ path: wColl, gvPath, params: [...LIST_PARAMS, ...scope, P.pretty].sort(byName), ops: [op('get', 'watchlist', `watch${gv}${ns}${kind}List`, listDesc, [], watchResp, STREAM_MEDIA)] });
    out.push({ path: `${wColl}/{name}`, gvPath, params: [...LIST_PARAMS, nameParam(), ...scope, P.pretty].sort(byName), ops: [op('get', 'watch', `watch${gv}${ns}${kind}`, itemDesc, [], watchResp, STREAM_MEDIA)] });
    if (def.namespaced) {
      const o = op('get', 'watchlist', `watch${gv}${kind}ListForAllNamespaces`, listDesc, [], watchResp, STREAM_MEDIA);
      out.push({ path: `${base}/watch/${def.plural}`, gvPath, params: [...LIST_PARAMS, P.pretty].sort(byName), ops: [o] });
    }
  }
  return out;
}

/**
 * Every path of every resource in the catalog, sorted by path. `served` limits the verbs to those
 * the server implements (default: every verb of each definition).
 */
export function buildPaths(catalog: Catalog, served?: ReadonlySet<Verb>, features: PathFeatures = {}): PathEntry[] {
  const out: PathEntry[] = [];
  for (const def of catalog.all()) out.push(...resourcePaths(def, (v) => !served || served.has(v), features));
  return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}
