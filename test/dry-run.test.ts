/**
 * dryRun=All on every modifying verb runs every stage but the write: the answer is what would be
 * stored, and etcd (read directly, not through plinth) is unchanged.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Etcd3 } from 'etcd3';
import { eventually, startInProcess, startTestEtcd, type InProcessPlinth, type TestEtcd } from './harness.js';

let etcd: TestEtcd;
let plinth: InProcessPlinth;
let raw: Etcd3;
const SA = '/api/v1/namespaces/default/serviceaccounts';

/**
 * Heartbeats write on their own clock whatever the test does (the leader election, apiserver
 * identity and master leases): a slow machine sees one land during a step.
 */
const HEARTBEAT = /^\/registry\/(leases|masterleases)\//;

/** Every key under /registry with its mod revision, heartbeats aside: a fingerprint of etcd's contents. */
async function etcdState(): Promise<{ state: string; heartbeats: number[] }> {
  const all = await raw.getAll().prefix('/registry/').exec();
  const kept = all.kvs.filter((kv) => !HEARTBEAT.test(kv.key.toString()));
  const heartbeats = all.kvs.filter((kv) => HEARTBEAT.test(kv.key.toString())).map((kv) => Number(kv.mod_revision));
  return { state: kept.map((kv) => `${kv.key.toString()}@${kv.mod_revision}`).join('\n'), heartbeats };
}

before(async () => {
  etcd = await startTestEtcd();
  plinth = await startInProcess({ etcd });
  raw = new Etcd3({ hosts: [etcd.endpoint] });
  // Let the controllers settle (a default ServiceAccount in each built-in namespace) first.
  for (const ns of ['default', 'kube-system', 'kube-public', 'kube-node-lease']) {
    await eventually(async () => (await plinth.client.get(`/api/v1/namespaces/${ns}/serviceaccounts/default`)).status === 200, 10_000, `default SA in ${ns}`);
  }
  // and the APF config consumer's Dangling condition on every FlowSchema.
  await eventually(
    async () => ((await plinth.client.get('/apis/flowcontrol.apiserver.k8s.io/v1beta2/flowschemas')).body.items as { status?: { conditions?: { type: string }[] } }[]).every((fs) => fs.status?.conditions?.some((c) => c.type === 'Dangling')),
    10_000,
    'Dangling conditions on every FlowSchema',
  );
  assert.equal((await plinth.client.post(SA, { metadata: { name: 'dry', labels: { a: '1' } } })).status, 201);
});

after(async () => {
  raw.close();
  await plinth.stop();
  await etcd.stop();
});

async function unchanged(what: string, fn: () => Promise<void>): Promise<void> {
  const before = await etcdState();
  const rev = Number((await raw.get('any').exec()).header.revision);
  await fn();
  const after = await etcdState();
  assert.equal(after.state, before.state, `${what} changed etcd`);
  // The revision moved only by heartbeats written meanwhile (each write is one revision).
  const now = Number((await raw.get('any').exec()).header.revision);
  const beats = after.heartbeats.filter((r) => r > rev).length;
  assert.ok(now - rev <= beats, `${what} moved etcd's revision: ${rev} → ${now}, ${beats} heartbeat write(s)`);
}

test('POST, PUT, PATCH (merge, json, strategic, apply), DELETE and deletecollection with dryRun=All store nothing', async () => {
  const c = plinth.client;
  await unchanged('create', async () => {
    const r = await c.post(`${SA}?dryRun=All`, { metadata: { name: 'dry-new', labels: { b: '2' } } });
    assert.equal(r.status, 201);
    assert.equal(r.body.metadata.name, 'dry-new');
    assert.ok(r.body.metadata.uid);
    assert.ok(r.body.metadata.creationTimestamp);
  });
  const live = (await c.get(`${SA}/dry`)).body;
  await unchanged('update', async () => {
    const r = await c.put(`${SA}/dry?dryRun=All`, { ...live, metadata: { ...live.metadata, labels: { a: '2' } } });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body.metadata.labels, { a: '2' });
  });
  const patches: Array<[string, unknown]> = [
    ['application/merge-patch+json', { metadata: { labels: { a: '3' } } }],
    ['application/json-patch+json', [{ op: 'replace', path: '/metadata/labels/a', value: '3' }]],
    ['application/strategic-merge-patch+json', { metadata: { labels: { a: '3' } } }],
    ['application/apply-patch+yaml', { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'dry', labels: { a: '3' } } }],
  ];
  for (const [type, body] of patches) {
    await unchanged(`patch ${type}`, async () => {
      const r = await c.request('PATCH', `${SA}/dry?dryRun=All&fieldManager=dry-test&force=${type.includes('apply') ? 'true' : ''}`.replace(/&force=$/, ''), {
        body,
        headers: { 'content-type': type },
      });
      assert.equal(r.status, 200, `${type}: ${r.raw.toString()}`);
      assert.equal(r.body.metadata.labels.a, '3');
    });
  }
  await unchanged('delete', async () => {
    const r = await c.delete(`${SA}/dry?dryRun=All`);
    assert.equal(r.status, 200);
  });
  await unchanged('deletecollection', async () => {
    assert.equal((await c.delete(`${SA}?dryRun=All`)).status, 200);
  });
  assert.equal((await c.get(`${SA}/dry`)).body.metadata.labels.a, '1');
  // DeleteOptions in the body can ask for it too.
  await unchanged('delete with body', async () => {
    assert.equal((await c.request('DELETE', `${SA}/dry`, { body: { kind: 'DeleteOptions', apiVersion: 'v1', dryRun: ['All'] } })).status, 200);
  });
});

test('a bad dryRun value is 422 and changes nothing', async () => {
  await unchanged('bad dryRun', async () => {
    const r = await plinth.client.post(`${SA}?dryRun=Some`, { metadata: { name: 'nope' } });
    assert.equal(r.status, 422);
    assert.equal(r.body.reason, 'Invalid');
    assert.match(r.body.message, /^CreateOptions\.meta\.k8s\.io "" is invalid: dryRun: Unsupported value: .*"Some".*: supported values: "All"$/);
  });
});
