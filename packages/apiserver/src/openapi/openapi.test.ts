import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Catalog, builtinResources, isStored, type Verb } from '@plinth/api';
import { buildSwagger } from './v2.js';
import { buildV3, V3_REF_PREFIX } from './v3.js';
import { refsIn, V2_REF_PREFIX } from './definitions.js';
import { gvCamel, kindName, listKindName, tagOf, type JSONObject, type JSONValue } from './names.js';

const catalog = new Catalog(builtinResources());
const swagger = buildSwagger(catalog);
const definitions = swagger['definitions'] as JSONObject;
const paths = swagger['paths'] as JSONObject;

function obj(v: JSONValue | undefined): JSONObject {
  assert.ok(v !== null && v !== undefined && typeof v === 'object' && !Array.isArray(v), `not an object: ${JSON.stringify(v)}`);
  return v as JSONObject;
}

function walk(v: JSONValue, visit: (o: JSONObject) => void): void {
  if (Array.isArray(v)) v.forEach((x) => walk(x, visit));
  else if (v !== null && typeof v === 'object') {
    visit(v);
    Object.values(v).forEach((x) => walk(x, visit));
  }
}

test('names: group-version camel case and tags as kube writes them', () => {
  assert.equal(gvCamel('', 'v1'), 'CoreV1');
  assert.equal(gvCamel('rbac.authorization.k8s.io', 'v1'), 'RbacAuthorizationV1');
  assert.equal(gvCamel('apps', 'v1'), 'AppsV1');
  assert.equal(tagOf('', 'v1'), 'core_v1');
  assert.equal(tagOf('rbac.authorization.k8s.io', 'v1'), 'rbacAuthorization_v1');
});

test('v2: every served kind and the list of every stored one has a definition with its group-version-kind', () => {
  for (const kind of catalog.kinds()) {
    const d = obj(definitions[kindName(kind)]);
    assert.deepEqual(d['x-kubernetes-group-version-kind'], [{ group: kind.group, kind: kind.kind, version: kind.version }], kind.kind);
    assert.equal(d['type'], 'object');
  }
  for (const def of catalog.all()) {
    if (!isStored(def) && def.storage !== 'computed') {
      // Reviews are never listed: kube has no TokenReviewList.
      assert.equal(definitions[`${kindName(def)}List`], undefined);
      continue;
    }
    const d = obj(definitions[listKindName(def)]);
    assert.deepEqual(d['x-kubernetes-group-version-kind'], [{ group: def.group, kind: def.listKind, version: def.version }], def.listKind);
  }
  assert.ok(definitions['io.k8s.api.authentication.v1.TokenRequest']);
  assert.ok(definitions['io.k8s.api.core.v1.ServiceAccount']);
  assert.ok(definitions['io.k8s.api.rbac.v1.ClusterRoleBinding']);
  assert.ok(definitions['io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta']);
  assert.deepEqual(obj(definitions['io.k8s.apimachinery.pkg.apis.meta.v1.Time']), { format: 'date-time', type: 'string' });
  // plinth's own one line per kind; no kube prose anywhere.
  assert.equal(obj(definitions['io.k8s.api.core.v1.ServiceAccount'])['description'], 'A ServiceAccount is an identity for processes that run in pods.');
  assert.equal(obj(definitions['io.k8s.api.core.v1.ServiceAccountList'])['description'], 'A list of ServiceAccount objects.');
  walk(swagger, (o) => {
    if (typeof o['description'] === 'string') assert.ok(o['description'].length <= 120, o['description']);
  });
});

test('v2: catalog $refs map to kube qualified names; shared types land in their packages', () => {
  const crb = obj(definitions['io.k8s.api.rbac.v1.ClusterRoleBinding']);
  const props = obj(crb['properties']);
  assert.deepEqual(crb['required'], ['roleRef']);
  assert.equal(obj(obj(props['subjects'])['items'])['$ref'], '#/definitions/io.k8s.api.rbac.v1.Subject');
  // kube 1.24 marks no list type there (an atomic list for apply).
  assert.equal(obj(props['subjects'])['x-kubernetes-list-type'], undefined);
  assert.equal(obj(props['roleRef'])['$ref'], '#/definitions/io.k8s.api.rbac.v1.RoleRef');
  assert.equal(obj(props['metadata'])['$ref'], '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta');
  const subject = obj(definitions['io.k8s.api.rbac.v1.Subject']);
  assert.deepEqual(Object.keys(obj(subject['properties'])), ['apiGroup', 'kind', 'name', 'namespace']);
  assert.deepEqual(subject['required'], ['kind', 'name']);
  assert.equal(subject['x-kubernetes-map-type'], 'atomic');
  const sa = obj(obj(definitions['io.k8s.api.core.v1.ServiceAccount'])['properties']);
  assert.equal(obj(obj(sa['secrets'])['items'])['$ref'], '#/definitions/io.k8s.api.core.v1.ObjectReference');
  assert.equal(obj(sa['secrets'])['x-kubernetes-patch-strategy'], 'merge');
  assert.equal(obj(sa['secrets'])['x-kubernetes-patch-merge-key'], 'name');
  const meta = obj(obj(definitions['io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta'])['properties']);
  assert.equal(obj(meta['creationTimestamp'])['$ref'], '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Time');
  assert.equal(obj(meta['ownerReferences'])['x-kubernetes-patch-merge-key'], 'uid');
  // v2 has no defaults; v3 has kube-openapi's (below).
  assert.equal(obj(meta['creationTimestamp'])['default'], undefined);
  assert.equal(obj(obj(definitions['io.k8s.api.rbac.v1.AggregationRule'])['properties'])['clusterRoleSelectors'] !== undefined, true);
  // Nested structs become their own definitions, as kube's Go types are.
  const ns = obj(obj(definitions['io.k8s.api.core.v1.Namespace'])['properties']);
  assert.equal(obj(ns['spec'])['$ref'], '#/definitions/io.k8s.api.core.v1.NamespaceSpec');
  assert.ok(definitions['io.k8s.api.core.v1.NamespaceStatus']);
});

test('v2: every $ref resolves and no catalog-only keys leak', () => {
  walk(swagger, (o) => {
    assert.equal(o['x-go-type'], undefined);
    const r = o['$ref'];
    if (typeof r === 'string') {
      assert.ok(r.startsWith(V2_REF_PREFIX), r);
      assert.ok(definitions[r.slice(V2_REF_PREFIX.length)], `unresolved ${r}`);
    }
  });
});

test('v2: paths and operation ids for every served resource and verb', () => {
  const ids = new Map<string, JSONObject>();
  for (const item of Object.values(paths)) {
    for (const [m, op] of Object.entries(obj(item))) {
      if (m === 'parameters') continue;
      const o = obj(op);
      const id = o['operationId'] as string;
      assert.ok(!ids.has(id), `duplicate operationId ${id}`);
      ids.set(id, o);
    }
  }
  const sa = obj(paths['/api/v1/namespaces/{namespace}/serviceaccounts']);
  assert.equal(obj(sa['get'])['operationId'], 'listCoreV1NamespacedServiceAccount');
  assert.equal(obj(sa['get'])['x-kubernetes-action'], 'list');
  assert.deepEqual(obj(sa['get'])['x-kubernetes-group-version-kind'], { group: '', kind: 'ServiceAccount', version: 'v1' });
  assert.equal(obj(sa['post'])['operationId'], 'createCoreV1NamespacedServiceAccount');
  assert.equal(obj(sa['delete'])['operationId'], 'deleteCoreV1CollectionNamespacedServiceAccount');
  for (const id of [
    'createRbacAuthorizationV1ClusterRoleBinding',
    'readRbacAuthorizationV1ClusterRoleBinding',
    'replaceRbacAuthorizationV1ClusterRoleBinding',
    'patchRbacAuthorizationV1ClusterRoleBinding',
    'deleteRbacAuthorizationV1ClusterRoleBinding',
    'listRbacAuthorizationV1RoleBindingForAllNamespaces',
    'watchRbacAuthorizationV1NamespacedRoleBindingList',
    'watchCoreV1Namespace',
    'readCoreV1NamespaceStatus',
    'replaceCoreV1NamespaceFinalize',
    'listCoreV1SecretForAllNamespaces',
  ]) {
    assert.ok(ids.has(id), `missing ${id}`);
  }
  // Every catalog verb appears for every resource.
  const actions = new Set([...ids.values()].map((o) => `${JSON.stringify(o['x-kubernetes-group-version-kind'])}/${o['x-kubernetes-action']}`));
  const actionOf: Record<Verb, string> = { create: 'post', delete: 'delete', deletecollection: 'deletecollection', get: 'get', list: 'list', patch: 'patch', update: 'put', watch: 'watchlist' };
  for (const def of catalog.all()) {
    for (const v of def.verbs) {
      const gvk = JSON.stringify({ group: def.group, kind: def.kind, version: def.version });
      assert.ok(actions.has(`${gvk}/${actionOf[v]}`), `${def.plural} ${v}`);
    }
  }
  // The item path names its parameters as kube does.
  const item = obj(paths['/apis/rbac.authorization.k8s.io/v1/namespaces/{namespace}/rolebindings/{name}']);
  assert.deepEqual((item['parameters'] as JSONObject[]).map((p) => p['name']), ['name', 'namespace', 'pretty']);
  const post = obj(obj(paths['/apis/rbac.authorization.k8s.io/v1/clusterrolebindings'])['post']);
  assert.deepEqual(obj((post['parameters'] as JSONObject[])[0])['schema'], { $ref: '#/definitions/io.k8s.api.rbac.v1.ClusterRoleBinding' });
});

test('v2: the verbs option limits the published operations; fieldValidation is not advertised', () => {
  const limited = buildSwagger(catalog, { verbs: new Set<Verb>(['get', 'list', 'watch', 'create', 'update', 'delete', 'deletecollection']) });
  walk(limited, (o) => {
    assert.equal(o['patch'], undefined);
    assert.notEqual(o['name'], 'fieldValidation');
  });
});

test('v2: with ServerSideFieldValidation on, create, update and patch advertise fieldValidation; ServerSideApply off drops the apply media type', () => {
  const gated = buildSwagger(catalog, { fieldValidation: true, serverSideApply: false });
  const item = obj(obj(gated['paths'])['/api/v1/namespaces/{namespace}/configmaps/{name}']);
  const names = (op: string): JSONValue[] => (obj(item[op])['parameters'] as JSONObject[]).map((p) => p['name']!);
  assert.deepEqual(names('put'), ['body', 'dryRun', 'fieldManager', 'fieldValidation']);
  assert.deepEqual(names('patch'), ['body', 'dryRun', 'fieldManager', 'fieldValidation', 'force']);
  assert.ok(!(obj(item['patch'])['consumes'] as string[]).includes('application/apply-patch+yaml'));
  const coll = obj(obj(gated['paths'])['/api/v1/namespaces/{namespace}/configmaps']);
  assert.ok((obj(coll['post'])['parameters'] as JSONObject[]).some((p) => p['name'] === 'fieldValidation'));
  assert.ok(!(obj(obj(paths['/api/v1/namespaces/{namespace}/configmaps/{name}'])['patch'])['consumes'] as string[]).every((m) => m !== 'application/apply-patch+yaml'));
});

test('v3: one document per served group-version; refs wrapped and resolvable', () => {
  const { groupVersions } = buildV3(catalog);
  // Every group version of the catalog, once, sorted (kube-openapi's discovery lists paths sorted).
  const served = [...new Set(catalog.all().map((d) => (d.group ? `apis/${d.group}/${d.version}` : `api/${d.version}`)))].sort();
  assert.ok(served.includes('apis/events.k8s.io/v1beta1') && served.includes('apis/rbac.authorization.k8s.io/v1'));
  assert.deepEqual([...groupVersions.keys()], served);
  for (const [gv, doc] of groupVersions) {
    assert.equal(doc['openapi'], '3.0.0');
    const schemas = obj(obj(doc['components'])['schemas']);
    for (const p of Object.keys(obj(doc['paths']))) assert.ok(p.startsWith(`/${gv}/`), p);
    for (const r of refsIn(doc, V3_REF_PREFIX)) assert.ok(schemas[r], `${gv}: unresolved ${r}`);
    walk(doc, (o) => {
      if (typeof o['$ref'] === 'string') {
        assert.equal(Object.keys(o).length, 1, `$ref with siblings: ${JSON.stringify(o)}`);
        assert.ok(o['$ref'].startsWith(V3_REF_PREFIX));
      }
    });
    for (const def of catalog.all().filter((d) => (d.group === '' ? 'api/v1' : `apis/${d.group}/${d.version}`) === gv)) {
      assert.deepEqual(obj(schemas[kindName(def)])['x-kubernetes-group-version-kind'], [{ group: def.group, kind: def.kind, version: def.version }]);
    }
  }
  const rbac = groupVersions.get('apis/rbac.authorization.k8s.io/v1')!;
  const crb = obj(obj(obj(obj(rbac['components'])['schemas'])['io.k8s.api.rbac.v1.ClusterRoleBinding'])['properties']);
  // v3: kube-openapi's enforced defaults, the $ref wrapped in allOf beside them.
  assert.deepEqual(obj(crb['roleRef']), { allOf: [{ $ref: '#/components/schemas/io.k8s.api.rbac.v1.RoleRef' }], default: {} });
  const policyRule = obj(obj(obj(obj(rbac['components'])['schemas'])['io.k8s.api.rbac.v1.PolicyRule'])['properties']);
  assert.deepEqual(obj(policyRule['verbs']), { items: { default: '', type: 'string' }, type: 'array' });
  const post = obj(obj(obj(rbac['paths'])['/apis/rbac.authorization.k8s.io/v1/clusterrolebindings'])['post']);
  assert.deepEqual(obj(obj(obj(post['requestBody'])['content'])['*/*'])['schema'], { $ref: '#/components/schemas/io.k8s.api.rbac.v1.ClusterRoleBinding' });
  assert.equal(obj(rbac['components'])['schemas'] !== undefined && obj(obj(rbac['components'])['schemas'])['io.k8s.api.core.v1.ServiceAccount'], undefined);
});

test('create-only paths: the review resources and serviceaccounts/token, as kube publishes them', () => {
  const names = (ps: JSONValue | undefined): JSONValue[] => (ps as JSONObject[]).map((p) => p['name']!);
  const token = obj(paths['/api/v1/namespaces/{namespace}/serviceaccounts/{name}/token']);
  assert.deepEqual(Object.keys(token).sort(), ['parameters', 'post']);
  // The one operation's shared parameters sit on the path; the body stays on the operation.
  assert.deepEqual(names(token['parameters']), ['dryRun', 'fieldManager', 'name', 'namespace', 'pretty']);
  assert.equal((token['parameters'] as JSONObject[])[2]!['description'], 'name of the TokenRequest');
  const post = obj(token['post']);
  assert.equal(post['operationId'], 'createCoreV1NamespacedServiceAccountToken');
  assert.equal(post['description'], 'create token of a ServiceAccount');
  assert.deepEqual(post['tags'], ['core_v1']);
  assert.deepEqual(post['x-kubernetes-group-version-kind'], { group: 'authentication.k8s.io', kind: 'TokenRequest', version: 'v1' });
  assert.deepEqual(names(post['parameters']), ['body']);
  assert.deepEqual(obj((post['parameters'] as JSONObject[])[0])['schema'], { $ref: '#/definitions/io.k8s.api.authentication.v1.TokenRequest' });
  assert.deepEqual(Object.keys(obj(post['responses'])), ['200', '201', '202', '401']);

  for (const [plural, kind] of [['tokenreviews', 'TokenReview'], ['selfsubjectreviews', 'SelfSubjectReview']] as const) {
    const p = obj(paths[`/apis/authentication.k8s.io/v1/${plural}`]);
    assert.deepEqual(Object.keys(p).sort(), ['parameters', 'post'], plural);
    assert.deepEqual(names(p['parameters']), ['dryRun', 'fieldManager', 'pretty']);
    assert.equal(obj(p['post'])['operationId'], `createAuthenticationV1${kind}`);
    assert.deepEqual(obj(p['post'])['tags'], ['authentication_v1']);
    // Nothing else: no item, list, watch or namespaced path.
    assert.deepEqual(Object.keys(paths).filter((k) => k.includes(`/${plural}`)), [`/apis/authentication.k8s.io/v1/${plural}`]);
  }
  const review = obj(definitions['io.k8s.api.authentication.v1.TokenReview']);
  assert.deepEqual(review['required'], ['spec']);
  assert.equal(obj(obj(review['properties'])['status'])['$ref'], '#/definitions/io.k8s.api.authentication.v1.TokenReviewStatus');
  const status = obj(obj(definitions['io.k8s.api.authentication.v1.TokenReviewStatus'])['properties']);
  assert.equal(obj(status['user'])['$ref'], '#/definitions/io.k8s.api.authentication.v1.UserInfo');
  const user = obj(obj(definitions['io.k8s.api.authentication.v1.UserInfo'])['properties']);
  assert.deepEqual(obj(user['extra'])['additionalProperties'], { items: { type: 'string' }, type: 'array' });
  const spec = obj(definitions['io.k8s.api.authentication.v1.TokenRequestSpec']);
  assert.deepEqual(spec['required'], ['audiences']);
  assert.equal(obj(obj(spec['properties'])['boundObjectRef'])['$ref'], '#/definitions/io.k8s.api.authentication.v1.BoundObjectReference');
  assert.deepEqual(obj(obj(spec['properties'])['expirationSeconds']), { format: 'int64', type: 'integer' });
  const tokenStatus = obj(obj(definitions['io.k8s.api.authentication.v1.TokenRequestStatus'])['properties']);
  assert.equal(obj(tokenStatus['expirationTimestamp'])['$ref'], '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Time');
  // DeleteOptions is registered in every served group-version, as kube's scheme does.
  assert.ok((obj(definitions['io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions'])['x-kubernetes-group-version-kind'] as JSONObject[]).some((g) => g['group'] === 'authentication.k8s.io'));
  // The api/v1 document carries the TokenRequest schemas its token path reaches.
  const core = obj(obj(buildV3(catalog).groupVersions.get('api/v1')!['components'])['schemas']);
  assert.ok(core['io.k8s.api.authentication.v1.TokenRequest'] && core['io.k8s.api.authentication.v1.BoundObjectReference']);
});
