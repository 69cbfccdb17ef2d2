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

const P = {
  pretty: q('pretty', 'string', "If 'true', then the output is pretty printed."),
  namespace: { name: 'namespace', in: 'path', description: 'object name and auth scope, such as for teams and projects', required: true, type: 'string' } as Param,
  allowWatchBookmarks: q('allowWatchBookmarks', 'boolean', 'allowWatchBookmarks requests watch events with type "BOOKMARK". Servers that do not implement bookmarks may ignore this flag and bookmarks are sent at the server\'s discretion. Clients should not assume bookmarks are returned at any specific interval, nor may they assume the server will send any BOOKMARK event during a session. If this is not a watch, this field is ignored.'),
  continue: q('continue', 'string', 'The continue option should be set when retrieving more results from the server. Since this value is server defined, clients may only use the continue value from a previous query result with identical query parameters (except for the value of continue) and the server may reject a continue value it does not recognize.'),
  fieldSelector: q('fieldSelector', 'string', 'A selector to restrict the list of returned objects by their fields. Defaults to everything.'),
  labelSelector: q('labelSelector', 'string', 'A selector to restrict the list of returned objects by their labels. Defaults to everything.'),
  limit: q('limit', 'integer', 'limit is a maximum number of responses to return for a list call. If more items exist, the server will set the `continue` field on the list metadata to a value that can be used with the same initial query to retrieve the next set of results.'),
  resourceVersion: q('resourceVersion', 'string', 'resourceVersion sets a constraint on what resource versions a request may be served from. See https://kubernetes.io/docs/reference/using-api/api-concepts/#resource-versions for details.\n\nDefaults to unset'),
  resourceVersionMatch: q('resourceVersionMatch', 'string', 'resourceVersionMatch determines how resourceVersion is applied to list calls. It is highly recommended that resourceVersionMatch be set for list calls where resourceVersion is set See https://kubernetes.io/docs/reference/using-api/api-concepts/#resource-versions for details.\n\nDefaults to unset'),
  timeoutSeconds: q('timeoutSeconds', 'integer', 'Timeout for the list/watch call. This limits the duration of the call, regardless of any activity or inactivity.'),
  watch: q('watch', 'boolean', 'Watch for changes to the described resources and return them as a stream of add, update, and remove notifications. Specify resourceVersion.'),
  dryRun: q('dryRun', 'string', 'When present, indicates that modifications should not be persisted. An invalid or unrecognized dryRun directive will result in an error response and no further processing of the request. Valid values are: - All: all dry run stages will be processed'),
  fieldManager: q('fieldManager', 'string', 'fieldManager is a name associated with the actor or entity that is making these changes. The value must be less than or 128 characters long, and only contain printable characters, as defined by https://golang.org/pkg/unicode/#IsPrint.'),
  force: q('force', 'boolean', 'Force is going to "force" Apply requests. It means user will re-acquire conflicting fields owned by other people. Force flag must be unset for non-apply patch requests.'),
  gracePeriodSeconds: q('gracePeriodSeconds', 'integer', 'The duration in seconds before the object should be deleted. Value must be non-negative integer. The value zero indicates delete immediately. If this value is nil, the default grace period for the specified type will be used. Defaults to a per object value if not specified. zero means delete immediately.'),
  orphanDependents: q('orphanDependents', 'boolean', 'Deprecated: please use the PropagationPolicy, this field will be deprecated in 1.7. Should the dependent objects be orphaned. If true/false, the "orphan" finalizer will be added to/removed from the object\'s finalizers list. Either this field or PropagationPolicy may be set, but not both.'),
  fieldValidation: q('fieldValidation', 'string', 'fieldValidation instructs the server on how to handle objects in the request (POST/PUT/PATCH) containing unknown or duplicate fields, provided that the `ServerSideFieldValidation` feature gate is also enabled. Valid values are: - Ignore: This will ignore any unknown fields that are silently dropped from the object, and will ignore all but the last duplicate field that the decoder encounters. This is the default behavior prior to v1.23 and is the default behavior when the `ServerSideFieldValidation` feature gate is disabled. - Warn: This will send a warning via the standard warning response header for each unknown field that is dropped from the object, and for each duplicate field that is encountered. The request will still succeed if there are no other errors, and will only persist the last of any duplicate fields. This is the default when the `ServerSideFieldValidation` feature gate is enabled. - Strict: This will fail the request with a BadRequest error if any unknown fields would be dropped from the object, or if any duplicate fields are present. The error returned from the server will contain all unknown and duplicate fields encountered.'),
  propagationPolicy: q('propagationPolicy', 'string', "Whether and how garbage collection will be performed. Either this field or OrphanDependents may be set, but not both. The default policy is decided by the existing finalizer set in the metadata.finalizers and the resource-specific default policy. Acceptable values are: 'Orphan' - orphan the dependents; 'Background' - allow the garbage collector to delete the dependents in the background; 'Foreground' - a cascading policy that deletes all dependents in the foreground."),
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
    const listDesc = `watch individual changes to a list of ${kind}. deprecated: use the 'watch' parameter with a list operation instead.`;
    const itemDesc = `watch changes to an object of kind ${kind}. deprecated: use the 'watch' parameter with a list operation instead, filtered to a single item with the 'fieldSelector' parameter.`;
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
