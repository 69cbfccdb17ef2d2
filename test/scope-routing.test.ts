/**
 * Routing by a resource's scope (issue 23 point 2, the CVE-2019-11247 class): a namespaced path to
 * a cluster-scoped resource, and a cluster path with a name or sub-resource to a namespaced one,
 * is no route — kube's 404 NotFound for every verb and sub-resource (Namespaces' status and
 * finalize, custom resources' status and scale, CustomResourceDefinitions' status), built-in or
 * custom, and nothing changes. A user bound to `cluster-admin` in one namespace only can then
 * touch no other namespace and no cluster-scoped object through its namespace's paths. The
 * legitimate paths (a Namespace's own, across all namespaces, kubectl) keep working.
 */
import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { eventually, kubectlPath, tempDir, usePlinth, type Response } from './harness.js';
import { expectCode, expectStatus } from './assertions.js';

const dir = tempDir('plinth-scope-');
const tokenFile = join(dir, 'tokens.csv');
writeFileSync(tokenFile, ['bob-token,bob,bob-uid', 'eve-token,eve,eve-uid', 'dave-token,dave,dave-uid', ''].join('\n'));

const env = usePlinth([`--token-auth-file=${tokenFile}`]);
const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const G = '/apis/scope.example.com/v1';
const RBAC = '/apis/rbac.authorization.k8s.io/v1';
const MERGE = { 'content-type': 'application/merge-patch+json' };
const APPLY = { 'content-type': 'application/apply-patch+yaml' };

/** A CRD with status and scale sub-resources. */
const crd = (plural: string, kind: string, scope: 'Cluster' | 'Namespaced') => ({
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: `${plural}.scope.example.com` },
  spec: {
    group: 'scope.example.com',
    scope,
    names: { plural, singular: kind.toLowerCase(), kind },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { replicas: { type: 'integer' } } }, status: { type: 'object', properties: { replicas: { type: 'integer' } } } } } },
        subresources: { status: {}, scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas' } },
      },
    ],
  },
});

const as = (token: string) => ({ token });
const request = (method: string, path: string, token: string | undefined, body?: unknown, headers?: Record<string, string>): Promise<Response> =>
  env.plinth.client.request(method, path, { ...(token ? { token } : {}), ...(body !== undefined ? { rawBody: JSON.stringify(body) } : {}), headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers } });

/** kube's answer for a path that is no route. */
function expectNoRoute(res: Response, what: string): void {
  assert.equal(res.status, 404, `${what}: expected 404, got ${res.status}: ${res.raw.toString().slice(0, 300)}`);
  expectStatus(res, 404, 'NotFound', 'the server could not find the requested resource');
  assert.deepEqual(res.body.details, {}, what);
}

/** Every write a verb matrix sends, each meant to leave a visible mark if it were served. */
function writes(collection: string, name: string, kind: { apiVersion: string; kind: string }): Array<[string, string, unknown?, Record<string, string>?]> {
  const mark = { metadata: { labels: { pwned: 'true' } } };
  return [
    ['GET', collection],
    ['GET', `${collection}?watch=1&timeoutSeconds=1`],
    ['GET', `${collection}/${name}`],
    ['POST', collection, { ...kind, metadata: { name: `${name}-new` } }],
    ['PUT', `${collection}/${name}`, { ...kind, metadata: { name, labels: { pwned: 'true' } } }],
    ['PATCH', `${collection}/${name}`, mark, MERGE],
    ['PATCH', `${collection}/${name}?fieldManager=x`, { ...kind, metadata: { name, labels: { pwned: 'true' } } }, APPLY],
    ['DELETE', `${collection}/${name}`],
    ['DELETE', collection],
  ];
}

/** Namespaces, bindings, CRDs and objects, made once (root `before` hooks do not wait for usePlinth's). */
let ready: Promise<void> | undefined;
const setUp = (): Promise<void> => (ready ??= createFixtures());

async function createFixtures(): Promise<void> {
  const c = env.plinth.client;
  for (const ns of ['team', 'other']) expectCode(await c.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns, labels: { keep: 'me' } } }), 201);
  const binding = (name: string, role: string, user: string) => ({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name, namespace: 'team' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
    subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: user }],
  });
  expectCode(await c.post(`${RBAC}/namespaces/team/rolebindings`, binding('bob-edit', 'edit', 'bob')), 201);
  expectCode(await c.post(`${RBAC}/namespaces/team/rolebindings`, binding('eve-admin', 'cluster-admin', 'eve')), 201);
  for (const [plural, kind, scope] of [['gizmos', 'Gizmo', 'Cluster'], ['widgets', 'Widget', 'Namespaced']] as const) {
    expectCode(await c.post(CRDS, crd(plural, kind, scope)), 201);
    await eventually(async () => (await c.get(`${G}/${plural}`)).status === 200, 10_000, `${plural} served`);
  }
  expectCode(await c.post(`${G}/gizmos`, { apiVersion: 'scope.example.com/v1', kind: 'Gizmo', metadata: { name: 'g1' }, spec: { replicas: 1 } }), 201);
  expectCode(await c.post(`${G}/namespaces/team/widgets`, { apiVersion: 'scope.example.com/v1', kind: 'Widget', metadata: { name: 'w1' }, spec: { replicas: 1 } }), 201);
  expectCode(await c.post('/api/v1/namespaces/team/secrets', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's1' } }), 201);
  expectCode(await c.post('/api/v1/namespaces/team/serviceaccounts', { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'sa1' } }), 201);
}

/** The state of what the attacks aim at; unchanged means nothing was served. */
async function snapshot(): Promise<unknown> {
  const c = env.plinth.client;
  const ns = (await c.get('/api/v1/namespaces/other')).body;
  const gizmo = (await c.get(`${G}/gizmos/g1`)).body;
  const crdObj = (await c.get(`${CRDS}/gizmos.scope.example.com`)).body;
  const view = (await c.get(`${RBAC}/clusterroles/view`)).body;
  return {
    ns: [ns.metadata.resourceVersion, ns.metadata.labels, ns.metadata.deletionTimestamp, ns.spec, ns.status],
    gizmo: [gizmo.metadata.resourceVersion, gizmo.metadata.labels, gizmo.spec, gizmo.status],
    crd: [crdObj.metadata.labels, crdObj.metadata.deletionTimestamp, crdObj.status?.acceptedNames],
    view: [view.metadata.resourceVersion],
    namespaces: (await c.get('/api/v1/namespaces')).body.items.map((n: { metadata: { name: string } }) => n.metadata.name).sort(),
    gizmos: (await c.get(`${G}/gizmos`)).body.items.map((n: { metadata: { name: string } }) => n.metadata.name).sort(),
  };
}

describe('a namespaced path to a cluster-scoped resource is no route', () => {
  before(setUp);
  it('bob (edit in team): GET /api/v1/namespaces/team/namespaces, and its watches, are 404', async () => {
    for (const path of ['/api/v1/namespaces/team/namespaces', '/api/v1/namespaces/team/namespaces?watch=1&timeoutSeconds=1', '/api/v1/watch/namespaces/team/namespaces?timeoutSeconds=1', '/api/v1/namespaces/team/namespaces/other']) {
      expectNoRoute(await request('GET', path, 'bob-token'), path);
    }
    // bob's own paths still answer (edit reads Namespaces in team).
    expectCode(await request('GET', '/api/v1/namespaces/team', 'bob-token'), 200);
  });

  it('eve (cluster-admin in team only): every verb and sub-resource of Namespaces, ClusterRoles, CRDs and cluster-scoped custom resources through team is 404, and nothing changes', async () => {
    const was = await snapshot();
    const cases: Array<[string, string, unknown?, Record<string, string>?]> = [
      ...writes('/api/v1/namespaces/team/namespaces', 'other', { apiVersion: 'v1', kind: 'Namespace' }),
      ['GET', '/api/v1/watch/namespaces/team/namespaces/other?timeoutSeconds=1'],
      ['GET', '/api/v1/namespaces/team/namespaces/other/status'],
      ['PUT', '/api/v1/namespaces/team/namespaces/other/status', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'other' }, status: { phase: 'Terminating' } }],
      ['PATCH', '/api/v1/namespaces/team/namespaces/other/status', { status: { phase: 'Terminating' } }, MERGE],
      ['PUT', '/api/v1/namespaces/team/namespaces/other/finalize', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'other' }, spec: { finalizers: [] } }],
      ...writes(`${RBAC}/namespaces/team/clusterroles`, 'view', { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole' }),
      ...writes('/apis/apiextensions.k8s.io/v1/namespaces/team/customresourcedefinitions', 'gizmos.scope.example.com', { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition' }),
      ['GET', '/apis/apiextensions.k8s.io/v1/namespaces/team/customresourcedefinitions/gizmos.scope.example.com/status'],
      ['PATCH', '/apis/apiextensions.k8s.io/v1/namespaces/team/customresourcedefinitions/gizmos.scope.example.com/status', { status: { acceptedNames: { plural: 'x', kind: 'X' } } }, MERGE],
      ['PUT', '/apis/apiextensions.k8s.io/v1/namespaces/team/customresourcedefinitions/gizmos.scope.example.com/status', { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'gizmos.scope.example.com' } }],
      ...writes(`${G}/namespaces/team/gizmos`, 'g1', { apiVersion: 'scope.example.com/v1', kind: 'Gizmo' }),
      ['GET', `${G}/namespaces/team/gizmos/g1/status`],
      ['PUT', `${G}/namespaces/team/gizmos/g1/status`, { apiVersion: 'scope.example.com/v1', kind: 'Gizmo', metadata: { name: 'g1' }, status: { replicas: 99 } }],
      ['PATCH', `${G}/namespaces/team/gizmos/g1/status`, { status: { replicas: 99 } }, MERGE],
      ['PATCH', `${G}/namespaces/team/gizmos/g1/status?fieldManager=x`, { apiVersion: 'scope.example.com/v1', kind: 'Gizmo', metadata: { name: 'g1' }, status: { replicas: 99 } }, APPLY],
      ['GET', `${G}/namespaces/team/gizmos/g1/scale`],
      ['PUT', `${G}/namespaces/team/gizmos/g1/scale`, { apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name: 'g1' }, spec: { replicas: 42 } }],
      ['PATCH', `${G}/namespaces/team/gizmos/g1/scale`, { spec: { replicas: 42 } }, MERGE],
      ['GET', `${G}/watch/namespaces/team/gizmos?timeoutSeconds=1`],
      // Reviews are cluster-scoped creates: no namespaced route either.
      ['POST', '/apis/authentication.k8s.io/v1/namespaces/team/tokenreviews', { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token: 'bob-token' } }],
      ['POST', '/apis/authorization.k8s.io/v1/namespaces/team/subjectaccessreviews', { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec: { user: 'eve', resourceAttributes: { verb: 'get', resource: 'secrets' } } }],
    ];
    for (const [method, path, body, headers] of cases) expectNoRoute(await request(method, path, 'eve-token', body, headers), `${method} ${path}`);
    assert.deepEqual(await snapshot(), was);
  });

  it('eve cannot touch another namespace by its own paths either: RBAC sees namespace == name there, as kube does', async () => {
    const was = await snapshot();
    expectStatus(await request('DELETE', '/api/v1/namespaces/other', 'eve-token'), 403, 'Forbidden', /cannot delete resource "namespaces" in API group "" in the namespace "other"/);
    expectStatus(await request('PUT', '/api/v1/namespaces/other/finalize', 'eve-token', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'other' }, spec: { finalizers: [] } }), 403, 'Forbidden');
    expectStatus(await request('GET', '/api/v1/namespaces/other/status', 'eve-token'), 403, 'Forbidden');
    assert.deepEqual(await snapshot(), was);
    // Her own Namespace is hers (kube's RBAC: the namespace of /namespaces/team is team).
    expectCode(await request('GET', '/api/v1/namespaces/team/status', 'eve-token'), 200);
    expectCode(await request('PATCH', '/api/v1/namespaces/team', 'eve-token', { metadata: { labels: { mine: 'yes' } } }, MERGE), 200);
  });

  it('a user the authorizer refuses gets its 403 first, as from kube, whose router runs after the authorizer', async () => {
    expectStatus(await request('GET', '/api/v1/namespaces/team/namespaces', 'dave-token'), 403, 'Forbidden');
    expectStatus(await request('GET', `${G}/namespaces/team/gizmos/g1/scale`, 'dave-token'), 403, 'Forbidden');
    expectStatus(await env.plinth.client.request('GET', '/api/v1/namespaces/team/namespaces', { token: null }), 403, 'Forbidden');
  });
});

describe('a cluster path with a name or sub-resource to a namespaced resource is no route', () => {
  before(setUp);
  it('built-in and custom, every verb, the admin included: 404 and nothing changes', async () => {
    const c = env.plinth.client;
    const secret = (await c.get('/api/v1/namespaces/team/secrets/s1')).body;
    const widget = (await c.get(`${G}/namespaces/team/widgets/w1`)).body;
    const cases: Array<[string, string, unknown?, Record<string, string>?]> = [
      ['GET', '/api/v1/secrets/s1'],
      ['PUT', '/api/v1/secrets/s1', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's1', namespace: 'team', labels: { pwned: 'true' } } }],
      ['PATCH', '/api/v1/secrets/s1', { metadata: { labels: { pwned: 'true' } } }, MERGE],
      ['DELETE', '/api/v1/secrets/s1'],
      ['GET', '/api/v1/watch/secrets/s1?timeoutSeconds=1'],
      ['POST', '/api/v1/serviceaccounts/sa1/token', { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: {} }],
      ['GET', `${G}/widgets/w1`],
      ['PUT', `${G}/widgets/w1`, { apiVersion: 'scope.example.com/v1', kind: 'Widget', metadata: { name: 'w1', namespace: 'team', labels: { pwned: 'true' } } }],
      ['PATCH', `${G}/widgets/w1`, { metadata: { labels: { pwned: 'true' } } }, MERGE],
      ['DELETE', `${G}/widgets/w1`],
      ['GET', `${G}/widgets/w1/status`],
      ['PUT', `${G}/widgets/w1/status`, { apiVersion: 'scope.example.com/v1', kind: 'Widget', metadata: { name: 'w1', namespace: 'team' }, status: { replicas: 99 } }],
      ['PATCH', `${G}/widgets/w1/status`, { status: { replicas: 99 } }, MERGE],
      ['GET', `${G}/widgets/w1/scale`],
      ['PUT', `${G}/widgets/w1/scale`, { apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name: 'w1', namespace: 'team' }, spec: { replicas: 42 } }],
      ['PATCH', `${G}/widgets/w1/scale`, { spec: { replicas: 42 } }, MERGE],
      // A namespaced create-only resource has only its namespaced collection.
      ['POST', '/apis/authorization.k8s.io/v1/localsubjectaccessreviews', { apiVersion: 'authorization.k8s.io/v1', kind: 'LocalSubjectAccessReview', metadata: { namespace: 'team' }, spec: { user: 'eve', resourceAttributes: { verb: 'get', resource: 'secrets', namespace: 'team' } } }],
      // Sub-resources never have a /watch/ route; nor does anything past the sub-resource exist.
      ['GET', `${G}/watch/namespaces/team/widgets/w1/status`],
      ['GET', `${G}/namespaces/team/widgets/w1/status/extra`],
      ['GET', '/api/v1/proxy/namespaces/team/secrets/s1'],
    ];
    for (const [method, path, body, headers] of cases) expectNoRoute(await request(method, path, undefined, body, headers), `${method} ${path}`);
    assert.equal((await c.get('/api/v1/namespaces/team/secrets/s1')).body.metadata.resourceVersion, secret.metadata.resourceVersion);
    assert.equal((await c.get(`${G}/namespaces/team/widgets/w1`)).body.metadata.resourceVersion, widget.metadata.resourceVersion);
  });

  it("kube's /watch/ routes take GET only: other methods are 405 and change nothing", async () => {
    const c = env.plinth.client;
    const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'watched' } };
    expectCode(await c.post('/api/v1/namespaces/team/configmaps', cm), 201);
    expectStatus(await c.post('/api/v1/watch/namespaces/team/configmaps', { ...cm, metadata: { name: 'via-watch' } }), 405, 'MethodNotAllowed');
    expectStatus(await c.delete('/api/v1/watch/namespaces/team/configmaps'), 405, 'MethodNotAllowed');
    expectStatus(await c.delete('/api/v1/watch/namespaces/team/configmaps/watched'), 405, 'MethodNotAllowed');
    const names = (await c.get('/api/v1/namespaces/team/configmaps')).body.items.map((i: { metadata: { name: string } }) => i.metadata.name);
    assert.ok(names.includes('watched') && !names.includes('via-watch'), names.join(','));
  });
});

describe('the legitimate paths keep working', () => {
  before(setUp);
  it("a Namespace's own paths, lists across namespaces, cluster and namespaced custom resources with their sub-resources", async () => {
    const c = env.plinth.client;
    expectCode(await c.get('/api/v1/namespaces/team'), 200);
    expectCode(await c.get('/api/v1/namespaces/team/status'), 200);
    const w = await c.watch('/api/v1/watch/namespaces/team?timeoutSeconds=2', (evs) => evs.length > 0, 5000);
    assert.equal(w.events[0]?.object?.metadata?.name, 'team');
    expectCode(await c.get('/api/v1/secrets'), 200);
    expectCode(await c.get(`${G}/widgets`), 200);
    expectCode(await c.get(`${G}/gizmos/g1/scale`), 200);
    expectCode(await c.get(`${G}/gizmos/g1/status`), 200);
    expectCode(await c.get(`${G}/namespaces/team/widgets/w1/scale`), 200);
    expectCode(await c.get('/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.scope.example.com/status'), 200);
    expectCode(await c.post('/apis/authorization.k8s.io/v1/namespaces/team/localsubjectaccessreviews', { apiVersion: 'authorization.k8s.io/v1', kind: 'LocalSubjectAccessReview', metadata: { namespace: 'team' }, spec: { user: 'eve', resourceAttributes: { verb: 'get', resource: 'secrets', namespace: 'team' } } }), 201);
    expectCode(await c.post('/api/v1/namespaces/team/serviceaccounts/sa1/token', { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: {} }), 201);
  });

  it('kubectl: get, scale and label through the right paths', async () => {
    // Asynchronously: the server runs in this process.
    const kubectl = async (...args: string[]): Promise<string> => (await promisify(execFile)(kubectlPath(), ['--kubeconfig', env.plinth.server.kubeconfigPath, ...args], { encoding: 'utf8' })).stdout;
    assert.match(await kubectl('get', 'namespaces', '-o', 'name'), /namespace\/other/);
    assert.match(await kubectl('get', 'gizmos', '-o', 'name'), /gizmo\.scope\.example\.com\/g1/);
    assert.match(await kubectl('get', 'widgets', '-A', '-o', 'name'), /widget\.scope\.example\.com\/w1/);
    await kubectl('scale', 'gizmo', 'g1', '--replicas=3');
    await kubectl('scale', 'widget', 'w1', '-n', 'team', '--replicas=4');
    assert.equal(await kubectl('get', 'gizmo', 'g1', '-o', 'jsonpath={.spec.replicas}'), '3');
    assert.equal(await kubectl('get', 'widget', 'w1', '-n', 'team', '-o', 'jsonpath={.spec.replicas}'), '4');
    await kubectl('label', 'namespace', 'other', 'checked=yes');
    assert.equal(await kubectl('get', 'namespace', 'other', '-o', 'jsonpath={.metadata.labels.checked}'), 'yes');
  });
});
