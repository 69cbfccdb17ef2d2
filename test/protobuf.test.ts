/** Protobuf over HTTP: bodies in and out, kube's envelope, watch frames; JSON stays the default. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeProtobuf, encodeProtobuf, decodeWatchEventFrames } from '@plinth/apiserver';
import { usePlinth } from './harness.js';

const env = usePlinth();
const PB = 'application/vnd.kubernetes.protobuf';

test('an object created in JSON reads back as Protobuf with the k8s envelope', async () => {
  const c = env.plinth.client;
  assert.equal((await c.post('/api/v1/namespaces/default/serviceaccounts', { metadata: { name: 'pb-json', labels: { a: 'b' } } })).status, 201);
  for (const accept of [PB, 'application/vnd.platform.protobuf', `${PB},application/json`]) {
    const r = await c.get('/api/v1/namespaces/default/serviceaccounts/pb-json', { headers: { accept } });
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-type'], accept.split(',')[0]);
    assert.deepEqual([...r.raw.subarray(0, 4)], [0x6b, 0x38, 0x73, 0x00]);
    const obj = decodeProtobuf(r.raw) as { kind: string; metadata: { name: string; labels: Record<string, string> } };
    assert.equal(obj.kind, 'ServiceAccount');
    assert.equal(obj.metadata.name, 'pb-json');
    assert.deepEqual(obj.metadata.labels, { a: 'b' });
  }
  const list = await c.get('/api/v1/namespaces/default/serviceaccounts', { headers: { accept: PB } });
  const decoded = decodeProtobuf(list.raw) as { kind: string; items: Array<{ metadata: { name: string } }> };
  assert.equal(decoded.kind, 'ServiceAccountList');
  assert.ok(decoded.items.some((i) => i.metadata.name === 'pb-json'));
});

test('an object created from a Protobuf body reads back as JSON', async () => {
  const body = encodeProtobuf({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: 'pb-crb' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
    subjects: [{ kind: 'User', name: 'alice' }],
  });
  const r = await env.plinth.client.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', { rawBody: body, headers: { 'content-type': PB } });
  assert.equal(r.status, 201, r.raw.toString());
  const got = await env.plinth.client.get('/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/pb-crb');
  assert.equal(got.headers['content-type'], 'application/json');
  assert.deepEqual(got.body.subjects, [{ kind: 'User', name: 'alice', apiGroup: 'rbac.authorization.k8s.io' }]);
});

test('a Protobuf body with a wrong prefix is 400 and stores nothing; unsupported types are 415 and 406', async () => {
  const good = encodeProtobuf({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'pb-bad' } });
  const bad = Buffer.concat([Buffer.from([0x6b, 0x38, 0x73, 0x01]), good.subarray(4)]);
  const r = await env.plinth.client.request('POST', '/api/v1/namespaces/default/serviceaccounts', { rawBody: bad, headers: { 'content-type': PB } });
  assert.equal(r.status, 400);
  assert.equal(r.body.reason, 'BadRequest');
  assert.equal((await env.plinth.client.get('/api/v1/namespaces/default/serviceaccounts/pb-bad')).status, 404);
  const unsupported = await env.plinth.client.request('POST', '/api/v1/namespaces/default/serviceaccounts', { rawBody: 'x', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
  assert.equal(unsupported.status, 415);
  assert.equal(unsupported.body.reason, 'UnsupportedMediaType');
  const notAcceptable = await env.plinth.client.get('/api/v1/namespaces/default/serviceaccounts', { headers: { accept: 'application/xml' } });
  assert.equal(notAcceptable.status, 406);
  assert.equal(notAcceptable.body.reason, 'NotAcceptable');
});

test('a Protobuf watch streams length-prefixed WatchEvent frames', async () => {
  const c = env.plinth.client;
  const rv = (await c.get('/api/v1/namespaces/default/serviceaccounts')).body.metadata.resourceVersion;
  // The watch starts after rv, so the create below is seen however the two race.
  const pending = c.get(`/api/v1/namespaces/default/serviceaccounts?watch=1&resourceVersion=${rv}&timeoutSeconds=2`, { headers: { accept: PB } });
  await c.post('/api/v1/namespaces/default/serviceaccounts', { metadata: { name: 'pb-watch' } });
  const r = await pending;
  assert.equal(r.headers['content-type'], `${PB};stream=watch`);
  const events = decodeWatchEventFrames(r.raw);
  const added = events.find((e) => e.type === 'ADDED');
  assert.ok(added, 'an ADDED frame');
  assert.equal((added!.object as { metadata: { name: string } }).metadata.name, 'pb-watch');
});

test('a kind without a Protobuf form (CustomResourceDefinition) answers JSON to a Protobuf-first Accept, 406 to Protobuf only, 415 to a Protobuf body', async () => {
  const c = env.plinth.client;
  const crds = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
  const fallback = await c.get(crds, { headers: { accept: `${PB}, application/json` } });
  assert.equal(fallback.status, 200);
  assert.equal(fallback.headers['content-type'], 'application/json');
  assert.equal(fallback.body.kind, 'CustomResourceDefinitionList');
  const only = await c.get(crds, { headers: { accept: PB } });
  assert.equal(only.status, 406);
  assert.equal(only.body.reason, 'NotAcceptable');
  const body = encodeProtobuf({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'not-a-crd' } });
  const posted = await c.request('POST', crds, { rawBody: body, headers: { 'content-type': PB } });
  assert.equal(posted.status, 415);
  assert.equal(posted.body.reason, 'UnsupportedMediaType');
});
