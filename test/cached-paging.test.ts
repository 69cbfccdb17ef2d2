/**
 * Limited lists served from the watch cache (the first page of a consistent list, and
 * continuations whose revision the cache still shows): the same pages, tokens and
 * remainingItemCount as etcd's; a change under the list after the first page is not seen; a
 * compacted revision is 410 even when nothing under the list changed.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { forceCompaction } from '@plinth/storage';
import { eventually, startInProcess, startTestEtcd, type InProcessPlinth, type Response, type TestEtcd } from './harness.js';

const NS = 'cpaging';
const SA = `/api/v1/namespaces/${NS}/serviceaccounts`;
const COUNT = 23;

let etcd: TestEtcd;
/** Watch cache on (the default). */
let cached: InProcessPlinth;
/** --watch-cache=false: every list from etcd. */
let direct: InProcessPlinth;

interface Page {
  items: Array<{ name: string; rv: string }>;
  remaining: number | undefined;
  cont: string;
}

function pageOf(r: Response): Page {
  assert.equal(r.status, 200, r.raw.toString());
  return {
    items: r.body.items.map((i: { metadata: { name: string; resourceVersion: string } }) => ({ name: i.metadata.name, rv: i.metadata.resourceVersion })),
    remaining: r.body.metadata.remainingItemCount,
    cont: r.body.metadata.continue ?? '',
  };
}

/** Pages through the list; `via(i)` picks the server of page i. */
async function pageThrough(limit: number, via: (i: number) => InProcessPlinth): Promise<Page[]> {
  const pages: Page[] = [];
  let cont = '';
  do {
    const q = `limit=${limit}${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`;
    const p = pageOf(await via(pages.length).client.get(`${SA}?${q}`));
    pages.push(p);
    cont = p.cont;
  } while (cont && pages.length < 100);
  return pages;
}

before(async () => {
  etcd = await startTestEtcd();
  cached = await startInProcess({ etcd });
  direct = await startInProcess({ etcd, args: ['--watch-cache=false'] });
  assert.equal((await cached.client.post('/api/v1/namespaces', { metadata: { name: NS } })).status, 201);
  await eventually(async () => (await cached.client.get(`${SA}/default`)).status === 200, 10_000, 'default SA');
  for (let i = 1; i < COUNT; i++) assert.equal((await cached.client.post(SA, { metadata: { name: `sa-${String(i).padStart(2, '0')}` } })).status, 201);
  // The cache has seen every object.
  await eventually(async () => pageOf(await cached.client.get(`${SA}?resourceVersion=0`)).items.length === COUNT, 10_000, 'cache filled');
});

after(async () => {
  await cached?.stop();
  await direct?.stop();
  await etcd?.stop();
});

test('a quiet collection pages the same from the cache as from etcd, and each serves the other\'s continue tokens', async () => {
  const all = pageOf(await direct.client.get(SA)).items;
  assert.equal(all.length, COUNT);
  for (const limit of [1, 4, 10, COUNT - 1, COUNT, 100]) {
    const fromEtcd = await pageThrough(limit, () => direct);
    const fromCache = await pageThrough(limit, () => cached);
    const mixed = await pageThrough(limit, (i) => (i % 2 ? direct : cached));
    const mixed2 = await pageThrough(limit, (i) => (i % 2 ? cached : direct));
    for (const pages of [fromCache, mixed, mixed2]) {
      assert.deepEqual(pages.map((p) => p.items), fromEtcd.map((p) => p.items), `limit=${limit}: the same pages`);
      assert.deepEqual(pages.map((p) => p.remaining), fromEtcd.map((p) => p.remaining), `limit=${limit}: the same remainingItemCount`);
    }
    assert.deepEqual(fromCache.flatMap((p) => p.items), all);
    assert.equal(fromCache.length, Math.ceil(COUNT / limit));
    assert.equal(fromCache.at(-1)!.remaining, undefined, 'the last page has no remainingItemCount');
    if (fromCache.length > 1) assert.equal(fromCache[0]!.remaining, COUNT - limit);
  }
});

test('a change under the list after the first page is not seen by its continuations (create, update, delete)', async () => {
  const first = pageOf(await cached.client.get(`${SA}?limit=5`));
  const before = pageOf(await direct.client.get(SA)).items;
  const target = before[12]!.name;
  const gone = before[7]!.name;
  const got = await cached.client.get(`${SA}/${target}`);
  assert.equal((await cached.client.put(`${SA}/${target}`, { ...got.body, metadata: { ...got.body.metadata, labels: { changed: 'yes' } } })).status, 200);
  assert.equal((await cached.client.delete(`${SA}/${gone}`)).status, 200);
  assert.equal((await cached.client.post(SA, { metadata: { name: 'sa-99-late' } })).status, 201);
  const rest: Page['items'] = [];
  let cont = first.cont;
  while (cont) {
    const p = pageOf(await cached.client.get(`${SA}?limit=5&continue=${encodeURIComponent(cont)}`));
    rest.push(...p.items);
    cont = p.cont;
  }
  assert.deepEqual([...first.items, ...rest], before, 'the list as of its first page');
  // Put things back for the next test.
  assert.equal((await cached.client.post(SA, { metadata: { name: gone } })).status, 201);
  assert.equal((await cached.client.delete(`${SA}/sa-99-late`)).status, 200);
});

test('a continuation at a revision compacted by another replica is 410 Expired, though nothing under the list changed', async () => {
  await eventually(async () => pageOf(await cached.client.get(`${SA}?resourceVersion=0`)).items.length === COUNT, 10_000, 'cache settled');
  const first = pageOf(await cached.client.get(`${SA}?limit=5`));
  assert.ok(first.cont);
  // A write elsewhere, then a compaction the cache is not told of (as another replica's would be).
  assert.equal((await cached.client.post('/api/v1/namespaces/default/configmaps', { metadata: { name: 'elsewhere' } })).status, 201);
  await forceCompaction(direct.server.storage.client, await direct.server.storage.currentRevision());
  const expired = await cached.client.get(`${SA}?limit=5&continue=${encodeURIComponent(first.cont)}`);
  assert.equal(expired.status, 410, expired.raw.toString());
  assert.equal(expired.body.reason, 'Expired');
  assert.match(expired.body.message, /^The provided continue parameter is too old to display a consistent list result\./);
  assert.ok(expired.body.metadata.continue, 'kube offers an inconsistent continue token');
  // A fresh list pages fine from there.
  assert.equal((await pageThrough(5, () => cached)).flatMap((p) => p.items).length, COUNT);
});

test('lists of namespaces stay exact while objects come and go in them and in a namespace whose name extends theirs', async () => {
  const a = '/api/v1/namespaces/cp-a/serviceaccounts';
  const ab = '/api/v1/namespaces/cp-ab/serviceaccounts';
  for (const ns of ['cp-a', 'cp-ab']) assert.equal((await cached.client.post('/api/v1/namespaces', { metadata: { name: ns } })).status, 201);
  const names = async (path: string, q = ''): Promise<string[]> => {
    const out: string[] = [];
    let cont = '';
    do {
      const r = await cached.client.get(`${path}?${q}${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`);
      assert.equal(r.status, 200, r.raw.toString());
      out.push(...r.body.items.map((i: { metadata: { name: string } }) => i.metadata.name).filter((n: string) => n !== 'default'));
      cont = r.body.metadata.continue ?? '';
    } while (cont);
    return out;
  };
  const expectA: string[] = [];
  const expectAb: string[] = [];
  for (let i = 0; i < 12; i++) {
    const name = `x-${String(i).padStart(2, '0')}`;
    const [path, list] = i % 3 === 0 ? [ab, expectAb] : [a, expectA];
    assert.equal((await cached.client.post(path, { metadata: { name } })).status, 201);
    list.push(name);
    if (i % 4 === 3) {
      const gone = expectA.shift()!;
      assert.equal((await cached.client.delete(`${a}/${gone}`)).status, 200);
    }
    // Every read form, each right after the write (consistent reads: the cache must show it).
    for (const q of ['', 'limit=2', 'limit=1']) {
      assert.deepEqual(await names(a, q), expectA, `cp-a after write ${i} (${q || 'unpaged'})`);
      assert.deepEqual(await names(ab, q), expectAb, `cp-ab after write ${i} (${q || 'unpaged'})`);
    }
  }
});

test('a namespace list stays sorted and exact when names arrive out of order, between reads and deletes', async () => {
  // A namespace read once keeps its key list in the cache; later creates append to it and the
  // next read sorts it: names created in descending and interleaved order, deleted from the
  // sorted part and from the appended tail, read unpaged and paged after each step.
  const ns = 'cp-order';
  const path = `/api/v1/namespaces/${ns}/serviceaccounts`;
  assert.equal((await cached.client.post('/api/v1/namespaces', { metadata: { name: ns } })).status, 201);
  const names = async (q = ''): Promise<string[]> => {
    const out: string[] = [];
    let cont = '';
    do {
      const r = await cached.client.get(`${path}?${q}${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`);
      assert.equal(r.status, 200, r.raw.toString());
      out.push(...r.body.items.map((i: { metadata: { name: string } }) => i.metadata.name).filter((n: string) => n !== 'default'));
      cont = r.body.metadata.continue ?? '';
    } while (cont);
    return out;
  };
  const expected = new Set<string>();
  const check = async (step: string): Promise<void> => {
    const want = [...expected].sort();
    for (const q of ['', 'limit=2']) assert.deepEqual(await names(q), want, `${step} (${q || 'unpaged'})`);
  };
  await check('empty');
  const steps: Array<['create' | 'delete', string]> = [
    ['create', 'm'], ['create', 'z'], ['create', 'c'], ['create', 'b'], ['delete', 'z'], ['create', 'y'], ['create', 'a'],
    ['delete', 'c'], ['create', 'c'], ['create', 'n'], ['delete', 'a'], ['delete', 'y'], ['create', 'd'],
  ];
  for (const [i, [op, name]] of steps.entries()) {
    if (op === 'create') {
      assert.equal((await cached.client.post(path, { metadata: { name } })).status, 201);
      expected.add(name);
    } else {
      assert.equal((await cached.client.delete(`${path}/${name}`)).status, 200);
      expected.delete(name);
    }
    // Reads after every other write: some writes land on a list sorted by the last read, some on its unsorted tail.
    if (i % 2 === 1) await check(`after ${op} ${name}`);
  }
  await check('at the end');
});

test('a continue token at a revision etcd has not reached is answered as etcd answers it', async () => {
  const forged = Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv: 999_999_999, start: 'sa-05' })).toString('base64url');
  const [fromCache, fromEtcd] = await Promise.all([cached, direct].map((p) => p.client.get(`${SA}?limit=5&continue=${forged}`)));
  assert.equal(fromCache!.status, fromEtcd!.status, fromCache!.raw.toString());
  assert.notEqual(fromCache!.status, 200);
  assert.equal(fromCache!.body.reason, fromEtcd!.body.reason);
  assert.equal(fromCache!.body.message.replace(/current: \d+/, ''), fromEtcd!.body.message.replace(/current: \d+/, ''));
});
