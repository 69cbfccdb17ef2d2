/** Chunked lists over a large collection, with writes between pages. */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startInProcess, startTestEtcd, type InProcessPlinth, type TestEtcd } from './harness.js';

let etcd: TestEtcd;
let plinth: InProcessPlinth;
const NS = 'paging';
const SA = `/api/v1/namespaces/${NS}/serviceaccounts`;

before(async () => {
  etcd = await startTestEtcd();
  plinth = await startInProcess({ etcd });
  assert.equal((await plinth.client.post('/api/v1/namespaces', { metadata: { name: NS } })).status, 201);
  // 1,000 objects (plus the namespace's default SA), 32 at a time.
  const names = Array.from({ length: 1000 }, (_, i) => `sa-${String(i).padStart(4, '0')}`);
  for (let i = 0; i < names.length; i += 32) {
    const rs = await Promise.all(names.slice(i, i + 32).map((name) => plinth.client.post(SA, { metadata: { name, labels: { n: String(Number(name.slice(3)) % 3) } } })));
    for (const r of rs) assert.equal(r.status, 201);
  }
});

after(async () => {
  await plinth.stop();
  await etcd.stop();
});

test('limit=50 returns every object exactly once while writes happen between pages, at the first page\'s version', async () => {
  const seen: string[] = [];
  let cont = '';
  let firstRv = '';
  let pages = 0;
  let remainingBefore: number | undefined;
  do {
    const r = await plinth.client.get(`${SA}?limit=50${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`);
    assert.equal(r.status, 200);
    if (!firstRv) firstRv = r.body.metadata.resourceVersion;
    assert.equal(r.body.metadata.resourceVersion, firstRv);
    assert.ok(r.body.items.length <= 50);
    if (remainingBefore !== undefined) assert.equal(r.body.metadata.remainingItemCount ?? 0, remainingBefore - r.body.items.length);
    remainingBefore = r.body.metadata.remainingItemCount;
    seen.push(...r.body.items.map((i: { metadata: { name: string } }) => i.metadata.name));
    cont = r.body.metadata.continue;
    assert.equal(typeof cont, 'string', 'metadata.continue is always present');
    pages++;
    // Writes between pages: new objects, changes and deletions are not seen by this listing.
    await plinth.client.post(SA, { metadata: { name: `zz-new-${pages}` } });
    await plinth.client.delete(`${SA}/sa-${String(pages * 7).padStart(4, '0')}`);
  } while (cont);
  assert.equal(pages, Math.ceil(1001 / 50));
  assert.equal(seen.length, 1001);
  assert.equal(new Set(seen).size, 1001);
  assert.ok(!seen.some((n) => n.startsWith('zz-new')));
});

test('paging with a label selector fills pages and omits remainingItemCount', async () => {
  const seen: string[] = [];
  let cont = '';
  do {
    const r = await plinth.client.get(`${SA}?limit=50&labelSelector=n%3D1${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`);
    assert.equal(r.status, 200);
    assert.equal(r.body.metadata.remainingItemCount, undefined);
    if (r.body.metadata.continue) assert.equal(r.body.items.length, 50);
    seen.push(...r.body.items.map((i: { metadata: { name: string } }) => i.metadata.name));
    cont = r.body.metadata.continue;
  } while (cont);
  const all = await plinth.client.get(`${SA}?labelSelector=n%3D1`);
  assert.deepEqual(seen, all.body.items.map((i: { metadata: { name: string } }) => i.metadata.name));
  assert.ok(seen.length > 300);
});
