/**
 * Two plinth replicas on one etcd: reads stay linearizable through each replica's watch cache,
 * continue tokens and resourceVersions move between replicas, and the compactor runs once per
 * interval however many replicas there are.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startInProcess, startTestEtcd, type InProcessPlinth, type TestEtcd } from './harness.js';

let etcd: TestEtcd;
let a: InProcessPlinth;
let b: InProcessPlinth;
const SA = '/api/v1/namespaces/default/serviceaccounts';

before(async () => {
  etcd = await startTestEtcd();
  // Compaction only when the test asks (tick), not on a timer.
  a = await startInProcess({ etcd, args: ['--etcd-compaction-interval=0'] });
  b = await startInProcess({ etcd, args: ['--etcd-compaction-interval=0'] });
});

after(async () => {
  await a.stop();
  await b.stop();
  await etcd.stop();
});

test('a write on one replica is seen by the next read on the other, served from its cache', async () => {
  const before = b.server.watchCaches!.all().reduce((n, c) => n + c.stats().consistentReadsFromCache, 0);
  for (let i = 0; i < 30; i++) {
    const created = await a.client.post(SA, { metadata: { name: `lin-${i}` } });
    assert.equal(created.status, 201);
    const got = await b.client.get(`${SA}/lin-${i}`);
    assert.equal(got.status, 200, `read ${i} on the other replica`);
    assert.equal(got.body.metadata.resourceVersion, created.body.metadata.resourceVersion);
    const list = await b.client.get(SA);
    assert.ok(Number(list.body.metadata.resourceVersion) >= Number(created.body.metadata.resourceVersion));
    assert.ok(list.body.items.some((x: { metadata: { name: string } }) => x.metadata.name === `lin-${i}`));
  }
  const after = b.server.watchCaches!.all().reduce((n, c) => n + c.stats().consistentReadsFromCache, 0);
  assert.ok(after - before >= 60, `consistent reads answered from memory (${after - before})`);
});

test('continue tokens and watch positions move between replicas', async () => {
  const first = await a.client.get(`${SA}?limit=5`);
  assert.ok(first.body.metadata.continue);
  const second = await b.client.get(`${SA}?limit=5&continue=${encodeURIComponent(first.body.metadata.continue)}`);
  assert.equal(second.status, 200);
  assert.equal(second.body.metadata.resourceVersion, first.body.metadata.resourceVersion);
  const firstNames = first.body.items.map((i: { metadata: { name: string } }) => i.metadata.name);
  for (const item of second.body.items) assert.ok(!firstNames.includes(item.metadata.name));

  const created = await a.client.post(SA, { metadata: { name: 'moved-watch-1' } });
  const pending = b.client.watch(`${SA}?watch=1&resourceVersion=${created.body.metadata.resourceVersion}`, (evs) => evs.length >= 1, 10_000);
  await a.client.post(SA, { metadata: { name: 'moved-watch-2' } });
  const w = await pending;
  assert.deepEqual(w.events.map((e: { type: string; object: { metadata: { name: string } } }) => `${e.type}:${e.object.metadata.name}`), ['ADDED:moved-watch-2']);
});

test('the compactor keeps one interval of history and compacts once per round across replicas', async () => {
  // Round 1: the first replica to try claims it (bootstrap: records the revision, compacts nothing).
  const r1 = await Promise.all([a.server.compactNow(), b.server.compactNow()]);
  assert.deepEqual(r1, [false, false]);
  const mark = await a.server.storage.currentRevision();
  await a.client.post(SA, { metadata: { name: 'after-mark' } });
  // Round 2: exactly one replica compacts, to the revision seen one round earlier.
  const r2 = await Promise.all([a.server.compactNow(), b.server.compactNow()]);
  assert.equal(r2.filter(Boolean).length, 1, `one compaction in the round, got ${JSON.stringify(r2)}`);
  // History after the mark is kept; before it, it is gone.
  assert.equal((await a.client.get(`${SA}?resourceVersionMatch=Exact&resourceVersion=${mark}`)).status, 200);
  const old = (await a.client.get(`${SA}?resourceVersionMatch=Exact&resourceVersion=${mark - 2}`));
  assert.equal(old.status, 410);
  assert.equal(old.body.reason, 'Expired');
  // Both replicas' caches follow: a watch from before the compaction gets 410 on either.
  for (const r of [a, b]) {
    const w = await r.client.watch(`${SA}?watch=1&resourceVersion=${mark - 2}`, (evs) => evs.length >= 1, 10_000);
    assert.equal(w.events[0]?.type, 'ERROR');
    assert.equal(w.events[0]?.object.code, 410);
  }
});
