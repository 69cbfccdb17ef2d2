/** meta.k8s.io Table responses: kube's columns per kind, includeObject, Table watch events. */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startInProcess, startTestEtcd, type InProcessPlinth, type TestEtcd } from './harness.js';

let etcd: TestEtcd;
let plinth: InProcessPlinth;
const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json';
const columns = (t: { columnDefinitions: Array<{ name: string }> }): string[] => t.columnDefinitions.map((c) => c.name);

before(async () => {
  etcd = await startTestEtcd();
  plinth = await startInProcess({ etcd });
  const c = plinth.client;
  await c.post('/api/v1/namespaces/default/serviceaccounts', { metadata: { name: 'tbl' }, secrets: [{ name: 'a' }, { name: 'b' }] });
  await c.post('/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
    metadata: { name: 'tbl' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
    subjects: [{ kind: 'User', name: 'alice' }, { kind: 'Group', name: 'devs' }, { kind: 'ServiceAccount', name: 'tbl', namespace: 'default' }],
  });
  await c.post('/apis/rbac.authorization.k8s.io/v1/clusterroles', { metadata: { name: 'tbl' }, rules: [] });
  await c.post('/api/v1/namespaces/default/secrets', { metadata: { name: 'tbl' }, stringData: { x: 'y', z: 'w' } });
});

after(async () => {
  await plinth.stop();
  await etcd.stop();
});

test('kube columns per kind', async () => {
  const c = plinth.client;
  const sa = await c.get('/api/v1/namespaces/default/serviceaccounts/tbl', { headers: { accept: TABLE } });
  assert.equal(sa.headers['content-type'], 'application/json;as=Table;v=v1;g=meta.k8s.io');
  assert.equal(sa.body.kind, 'Table');
  assert.equal(sa.body.apiVersion, 'meta.k8s.io/v1');
  assert.deepEqual(columns(sa.body), ['Name', 'Secrets', 'Age']);
  assert.deepEqual(sa.body.rows[0].cells.slice(0, 2), ['tbl', 2]);
  assert.match(sa.body.rows[0].cells[2], /^\d+s$/);

  const crb = await c.get('/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/tbl', { headers: { accept: TABLE } });
  assert.deepEqual(columns(crb.body), ['Name', 'Role', 'Age', 'Users', 'Groups', 'ServiceAccounts']);
  assert.deepEqual(crb.body.columnDefinitions.map((d: { priority: number }) => d.priority), [0, 0, 0, 1, 1, 1]);
  const cells = crb.body.rows[0].cells;
  assert.deepEqual([cells[0], cells[1], cells[3], cells[4], cells[5]], ['tbl', 'ClusterRole/view', 'alice', 'devs', 'default/tbl']);

  const cr = await c.get('/apis/rbac.authorization.k8s.io/v1/clusterroles/tbl', { headers: { accept: TABLE } });
  assert.deepEqual(columns(cr.body), ['Name', 'Created At']);
  assert.equal(cr.body.columnDefinitions[1].type, 'date');

  const secrets = await c.get('/api/v1/namespaces/default/secrets', { headers: { accept: TABLE } });
  assert.deepEqual(columns(secrets.body), ['Name', 'Type', 'Data', 'Age']);
  assert.deepEqual(secrets.body.rows.find((r: { cells: unknown[] }) => r.cells[0] === 'tbl').cells.slice(0, 3), ['tbl', 'Opaque', 2]);

  const ns = await c.get('/api/v1/namespaces', { headers: { accept: TABLE } });
  assert.deepEqual(columns(ns.body), ['Name', 'Status', 'Age']);
  assert.ok(ns.body.metadata.resourceVersion);
});

test('includeObject: Metadata (default), Object, None', async () => {
  const path = '/api/v1/namespaces/default/serviceaccounts/tbl';
  const meta = await plinth.client.get(path, { headers: { accept: TABLE } });
  assert.equal(meta.body.rows[0].object.kind, 'PartialObjectMetadata');
  assert.equal(meta.body.rows[0].object.metadata.name, 'tbl');
  assert.equal(meta.body.rows[0].object.secrets, undefined);
  const whole = await plinth.client.get(`${path}?includeObject=Object`, { headers: { accept: TABLE } });
  assert.deepEqual(whole.body.rows[0].object.secrets, [{ name: 'a' }, { name: 'b' }]);
  const none = await plinth.client.get(`${path}?includeObject=None`, { headers: { accept: TABLE } });
  assert.equal(none.body.rows[0].object, undefined);
  assert.equal((await plinth.client.get(`${path}?includeObject=Everything`, { headers: { accept: TABLE } })).status, 400);
});

test('Table watch events carry one row each', async () => {
  const c = plinth.client;
  const rv = (await c.get('/api/v1/namespaces/default/serviceaccounts')).body.metadata.resourceVersion;
  const w = c.watch(`/api/v1/namespaces/default/serviceaccounts?watch=1&resourceVersion=${rv}`, (evs) => evs.length >= 1, 10_000);
  await c.post('/api/v1/namespaces/default/serviceaccounts', { metadata: { name: 'tbl-watch' } });
  const plain = await w;
  assert.equal(plain.events[0].object.kind, 'ServiceAccount');
  const tw = await c.request('GET', `/api/v1/namespaces/default/serviceaccounts?watch=1&resourceVersion=${rv}&timeoutSeconds=1`, { headers: { accept: TABLE } });
  const events = tw.raw.toString().trim().split('\n').map((l) => JSON.parse(l));
  assert.equal(events[0].type, 'ADDED');
  assert.equal(events[0].object.kind, 'Table');
  assert.deepEqual(events[0].object.rows[0].cells.slice(0, 2), ['tbl-watch', 0]);
});
