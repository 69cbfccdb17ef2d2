/** Discovery documents, /version and health endpoints as kube serves them. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { usePlinth } from './harness.js';

const env = usePlinth();

const AGGREGATED =
  'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json';

test('/version', async () => {
  const r = await env.plinth.client.get('/version');
  assert.equal(r.status, 200);
  assert.equal(r.body.major, '1');
  assert.equal(r.body.minor, '24');
  assert.match(r.body.gitVersion, /^v1\.24\.\d+/);
});

test('/api and /apis, also when aggregated discovery is preferred', async () => {
  for (const accept of [undefined, AGGREGATED]) {
    const headers = accept ? { accept } : undefined;
    const api = await env.plinth.client.get('/api', headers ? { headers } : {});
    assert.equal(api.status, 200);
    assert.equal(api.headers['content-type'], 'application/json');
    assert.equal(api.body.kind, 'APIVersions');
    assert.deepEqual(api.body.versions, ['v1']);
    const apis = await env.plinth.client.get('/apis', headers ? { headers } : {});
    assert.equal(apis.status, 200);
    assert.equal(apis.body.kind, 'APIGroupList');
    const rbac = apis.body.groups.find((g: { name: string }) => g.name === 'rbac.authorization.k8s.io');
    assert.deepEqual(rbac.preferredVersion, { groupVersion: 'rbac.authorization.k8s.io/v1', version: 'v1' });
  }
});

test('/api/v1 and /apis/<group>/<version> list resources with verbs and short names', async () => {
  const core = await env.plinth.client.get('/api/v1');
  assert.equal(core.body.kind, 'APIResourceList');
  assert.equal(core.body.groupVersion, 'v1');
  const sa = core.body.resources.find((r: { name: string }) => r.name === 'serviceaccounts');
  assert.deepEqual(sa.shortNames, ['sa']);
  assert.equal(sa.namespaced, true);
  assert.equal(sa.kind, 'ServiceAccount');
  assert.equal(sa.singularName, 'serviceaccount');
  assert.ok(sa.verbs.includes('deletecollection'));
  const ns = core.body.resources.find((r: { name: string }) => r.name === 'namespaces');
  assert.equal(ns.verbs.includes('deletecollection'), false);
  assert.ok(core.body.resources.some((r: { name: string }) => r.name === 'namespaces/finalize'));

  const group = await env.plinth.client.get('/apis/rbac.authorization.k8s.io');
  assert.equal(group.body.kind, 'APIGroup');
  const gv = await env.plinth.client.get('/apis/rbac.authorization.k8s.io/v1');
  assert.equal(gv.body.groupVersion, 'rbac.authorization.k8s.io/v1');
  assert.deepEqual(gv.body.resources.map((r: { name: string }) => r.name).sort(), ['clusterrolebindings', 'clusterroles', 'rolebindings', 'roles']);
  assert.equal((await env.plinth.client.get('/apis/nope.example.com/v1')).status, 404);
});

test('health endpoints answer 200 without credentials; verbose lists checks; other paths need auth', async () => {
  for (const path of ['/healthz', '/livez', '/readyz']) {
    const r = await env.plinth.client.get(path, { token: null });
    assert.equal(r.status, 200, path);
    assert.equal(r.raw.toString(), 'ok');
  }
  const verbose = await env.plinth.client.get('/readyz?verbose', { token: null });
  assert.match(verbose.raw.toString(), /^\[\+\]etcd ok$/m);
  assert.match(verbose.raw.toString(), /readyz check passed\n$/);
  const excluded = await env.plinth.client.get('/readyz?verbose&exclude=etcd', { token: null });
  assert.match(excluded.raw.toString(), /^\[\+\]etcd excluded: ok$/m);
  // Individual checks are for operators: public-info-viewer grants exactly the endpoints.
  assert.equal((await env.plinth.client.get('/livez/etcd', { token: null })).status, 403);
  assert.equal((await env.plinth.client.get('/livez/etcd')).status, 200);
  const denied = await env.plinth.client.get('/api/v1/namespaces', { token: null });
  // No credential is the anonymous user, whom authorization refuses; a wrong one is a 401.
  assert.equal(denied.status, 403);
  assert.equal(denied.body.reason, 'Forbidden');
  assert.equal((await env.plinth.client.get('/healthz', { token: 'wrong' })).status, 401);
});

test('discovery.k8s.io: after node.k8s.io in /apis, v1 preferred over v1beta1, endpointslices namespaced with every verb and no short name', async () => {
  const apis = (await env.plinth.client.get('/apis')).body;
  const names = apis.groups.map((g: { name: string }) => g.name);
  assert.equal(names.indexOf('discovery.k8s.io'), names.indexOf('node.k8s.io') + 1);
  const group = apis.groups[names.indexOf('discovery.k8s.io')];
  assert.deepEqual(group.versions.map((v: { version: string }) => v.version), ['v1', 'v1beta1']);
  assert.deepEqual(group.preferredVersion, { groupVersion: 'discovery.k8s.io/v1', version: 'v1' });
  for (const version of ['v1', 'v1beta1']) {
    const list = (await env.plinth.client.get(`/apis/discovery.k8s.io/${version}`)).body;
    assert.deepEqual(list.resources.map((r: { name: string }) => r.name), ['endpointslices']);
    const r = list.resources[0];
    assert.deepEqual([r.namespaced, r.kind, r.shortNames, r.verbs], [true, 'EndpointSlice', undefined, ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch']]);
  }
});
