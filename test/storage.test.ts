/**
 * The storage interface against a real etcd: key layout, resourceVersion = mod_revision,
 * optimistic concurrency, paging, watch and compaction.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Etcd3 } from 'etcd3';
import { Cacher, EtcdStore, isStorageError } from '@plinth/storage';
import type { StoredObject, StoredObject as ApiObject } from '@plinth/api';
import { startTestEtcd, type TestEtcd } from './harness.js';

let etcd: TestEtcd;
let store: EtcdStore;
let raw: Etcd3;

before(async () => {
  etcd = await startTestEtcd();
  store = new EtcdStore({ endpoints: [etcd.endpoint] });
  raw = new Etcd3({ hosts: [etcd.endpoint] });
});

after(async () => {
  raw.close();
  await store.close();
  await etcd.stop();
});

const obj = (name: string, extra: Record<string, unknown> = {}): ApiObject => ({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace: 'ns' }, ...extra });

test('create stores JSON at the key without resourceVersion, which is the mod_revision', async () => {
  const created = await store.create('/registry/serviceaccounts/ns/a', obj('a'));
  const kv = await raw.get('/registry/serviceaccounts/ns/a').exec();
  const stored = JSON.parse(kv.kvs[0]!.value.toString());
  assert.equal(stored.metadata.resourceVersion, undefined);
  assert.equal(created.metadata.resourceVersion, kv.kvs[0]!.mod_revision);
  const got = await store.get('/registry/serviceaccounts/ns/a');
  assert.equal(got.metadata.resourceVersion, kv.kvs[0]!.mod_revision);
  await assert.rejects(store.create('/registry/serviceaccounts/ns/a', obj('a')), (e) => isStorageError(e, 'KeyExists'));
});

test('get of a missing key is NotFound; a future resourceVersion is ResourceVersionTooLarge', async () => {
  await assert.rejects(store.get('/registry/serviceaccounts/ns/missing'), (e) => isStorageError(e, 'NotFound'));
  const rev = await store.currentRevision();
  await store.create('/registry/serviceaccounts/ns/future', obj('future'));
  await assert.rejects(store.get('/registry/serviceaccounts/ns/future', { resourceVersion: String(rev + 1000) }), (e) => isStorageError(e, 'ResourceVersionTooLarge'));
});

test('guaranteedUpdate retries on a lost race and checks preconditions', async () => {
  await store.create('/registry/serviceaccounts/ns/u', obj('u', { n: 0 }));
  // 20 concurrent increments: each must land exactly once.
  await Promise.all(
    Array.from({ length: 20 }, () =>
      store.guaranteedUpdate('/registry/serviceaccounts/ns/u', (cur) => ({ ...cur!, n: (cur!['n'] as number) + 1 })),
    ),
  );
  const got = await store.get('/registry/serviceaccounts/ns/u');
  assert.equal(got['n'], 20);
  await assert.rejects(
    store.guaranteedUpdate('/registry/serviceaccounts/ns/u', (cur) => cur!, { preconditions: { resourceVersion: '1' } }),
    (e) => isStorageError(e, 'Conflict'),
  );
  await assert.rejects(store.guaranteedUpdate('/registry/serviceaccounts/ns/none', (cur) => cur!), (e) => isStorageError(e, 'NotFound'));
});

test('an unchanged update writes nothing', async () => {
  const created = await store.create('/registry/serviceaccounts/ns/same', obj('same'));
  const out = await store.guaranteedUpdate('/registry/serviceaccounts/ns/same', (cur) => cur!);
  assert.equal(out.metadata.resourceVersion, created.metadata.resourceVersion);
});

test('delete returns the last state; dry-run deletes nothing', async () => {
  await store.create('/registry/serviceaccounts/ns/d', obj('d'));
  await store.delete('/registry/serviceaccounts/ns/d', { dryRun: true });
  await store.get('/registry/serviceaccounts/ns/d');
  const last = await store.delete('/registry/serviceaccounts/ns/d');
  assert.equal(last.metadata.name, 'd');
  await assert.rejects(store.get('/registry/serviceaccounts/ns/d'), (e) => isStorageError(e, 'NotFound'));
});

test('paging reads one revision across pages, with remainingItemCount', async () => {
  for (let i = 0; i < 7; i++) await store.create(`/registry/secrets/p/s${i}`, obj(`s${i}`));
  const first = await store.list('/registry/secrets/p/', { limit: 3 });
  assert.equal(first.items.length, 3);
  assert.equal(first.remainingItemCount, 4);
  assert.ok(first.continue);
  // a write between pages is not seen by the next pages
  await store.create('/registry/secrets/p/s99', obj('s99'));
  const names = first.items.map((i: StoredObject) => i.metadata.name);
  let cont = first.continue;
  while (cont) {
    const page = await store.list('/registry/secrets/p/', { limit: 3, continue: cont });
    assert.equal(page.resourceVersion, first.resourceVersion);
    names.push(...page.items.map((i: StoredObject) => i.metadata.name));
    cont = page.continue;
    if (!cont) assert.equal(page.remainingItemCount, undefined);
  }
  assert.deepEqual(names, ['s0', 's1', 's2', 's3', 's4', 's5', 's6']);
});

test('a predicate filters and still fills pages', async () => {
  for (let i = 0; i < 10; i++) await store.create(`/registry/secrets/f/x${i}`, obj(`x${i}`, { even: i % 2 === 0 }));
  const page = await store.list('/registry/secrets/f/', { limit: 2, predicate: (o) => o['even'] === true, hasSelector: true });
  assert.deepEqual(page.items.map((i) => i.metadata.name), ['x0', 'x2']);
  assert.equal(page.remainingItemCount, undefined);
  const rest = await store.list('/registry/secrets/f/', { limit: 10, continue: page.continue, predicate: (o) => o['even'] === true });
  assert.deepEqual(rest.items.map((i) => i.metadata.name), ['x4', 'x6', 'x8']);
});

test('watch delivers ADDED, MODIFIED, DELETED in order, with the deleted object', async () => {
  const start = await store.currentRevision();
  const w = await store.watch('/registry/configmaps/w/', { resourceVersion: String(start) });
  await store.create('/registry/configmaps/w/a', obj('a'));
  await store.guaranteedUpdate('/registry/configmaps/w/a', (cur) => ({ ...cur!, v: 2 }));
  await store.delete('/registry/configmaps/w/a');
  const types = [];
  for (let i = 0; i < 3; i++) {
    const e = await w.next();
    assert.ok(e && e.type !== 'ERROR');
    types.push([e.type, e.object['v'] ?? null]);
  }
  w.stop();
  assert.deepEqual(types, [
    ['ADDED', null],
    ['MODIFIED', 2],
    ['DELETED', 2],
  ]);
  assert.equal(await w.next(), undefined);
});

test('after compaction: Exact list and continue tokens are 410, a watch gets an ERROR event', async () => {
  for (let i = 0; i < 4; i++) await store.create(`/registry/roles/c/r${i}`, obj(`r${i}`));
  const page = await store.list('/registry/roles/c/', { limit: 2 });
  const old = Number(page.resourceVersion);
  await store.create('/registry/roles/c/later', obj('later'));
  await store.create('/registry/roles/c/later2', obj('later2'));
  await store.compact(await store.currentRevision());
  await assert.rejects(store.list('/registry/roles/c/', { limit: 2, continue: page.continue }), (e) => isStorageError(e, 'Compacted') && !!e.continueToken);
  await assert.rejects(store.list('/registry/roles/c/', { resourceVersion: String(old), resourceVersionMatch: 'Exact' }), (e) => isStorageError(e, 'Compacted'));
  const w = await store.watch('/registry/roles/c/', { resourceVersion: String(old) });
  const e = await w.next();
  assert.ok(e && e.type === 'ERROR');
  assert.equal(e.error.code, 'Compacted');
  assert.match(e.error.message, new RegExp(`^too old resource version: ${old} \\(\\d+\\)$`));
  assert.equal(await w.next(), undefined);
});

test('watches share one etcd watch stream and are released on stop', async () => {
  const watchers = await Promise.all(Array.from({ length: 5 }, () => store.watch('/registry/namespaces/', { resourceVersion: String(1) })));
  assert.ok(store.activeEtcdWatches >= 5);
  for (const w of watchers) w.stop();
});

test('the watch cache drops a watcher that cannot keep up, and keeps serving the others', async () => {
  const small = new EtcdStore({ endpoints: [etcd.endpoint], watcherLimits: { events: 50 } });
  const cacher = new Cacher({ etcd: small, prefix: '/registry/leases/', apiVersion: 'v1', kind: 'Lease' });
  await cacher.start();
  try {
    const rv = String(await small.currentRevision());
    const slow = await cacher.watch('/registry/leases/', { resourceVersion: rv });
    const fast = await cacher.watch('/registry/leases/', { resourceVersion: rv });
    const got: string[] = [];
    const reading = (async () => {
      while (got.length < 80) {
        const e = await fast.next();
        if (!e || e.type === 'ERROR') break;
        got.push(e.object.metadata.name!);
      }
    })();
    for (let i = 0; i < 80; i++) await small.create(`/registry/leases/l${i}`, obj(`l${i}`));
    await reading;
    assert.equal(got.length, 80, 'the reading watcher got every event');
    // The slow one was cut off after its buffer filled: its stream ends.
    assert.equal(await slow.next(), undefined);
    assert.equal(cacher.stats().watchers, 1);
    fast.stop();
  } finally {
    await cacher.close();
    await small.close();
  }
});

test('writes with a TTL within the reuse window share one etcd lease, granted the TTL plus the window (kube leaseManager)', async () => {
  const leaseOf = async (key: string): Promise<string> => (await raw.kv.range({ key: Buffer.from(key) })).kvs[0]!.lease;
  await store.create('/registry/events/ttl/a', obj('a'), { ttlSeconds: 3600 });
  await store.create('/registry/events/ttl/b', obj('b'), { ttlSeconds: 3600 });
  await store.guaranteedUpdate('/registry/events/ttl/b', (cur) => ({ ...cur!, v: 2 }), { ttlSeconds: 3600 });
  await store.create('/registry/events/ttl/plain', obj('plain'));
  const lease = await leaseOf('/registry/events/ttl/a');
  assert.notEqual(lease, '0');
  assert.equal(await leaseOf('/registry/events/ttl/b'), lease);
  assert.equal(await leaseOf('/registry/events/ttl/plain'), '0', 'a write without a TTL has no lease');
  const ttl = await raw.leaseClient.leaseTimeToLive({ ID: lease });
  // 5% of an hour is more than kube's 60 s cap: the window is 60 s.
  assert.equal(Number(ttl.grantedTTL), 3660);
  // An update without a TTL drops the lease: the object no longer expires.
  await store.guaranteedUpdate('/registry/events/ttl/b', (cur) => ({ ...cur!, v: 3 }));
  assert.equal(await leaseOf('/registry/events/ttl/b'), '0');
});

test('a metadata-only list from the watch cache gives apiVersion, kind and metadata alone; a selector still reads whole objects', async () => {
  const cacher = new Cacher({ etcd: store, prefix: '/registry/mdonly/', apiVersion: 'v1', kind: 'ServiceAccount' });
  await cacher.start();
  try {
    const managedFields = [{ manager: 'm', operation: 'Update', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:secrets': {} } }];
    for (const n of ['a', 'b']) await store.create(`/registry/mdonly/ns/${n}`, { ...obj(n, { secrets: [{ name: `${n}-token` }] }), metadata: { name: n, namespace: 'ns', uid: `u-${n}`, managedFields } } as ApiObject);
    // Nothing decodes the objects whole before (a decoded object held elsewhere is given whole).
    for (let i = 0; i < 100 && (await cacher.list('/registry/mdonly/', { resourceVersion: '0', metadataOnly: true })).items.length < 2; i++) await new Promise((r) => setTimeout(r, 20));
    for (const opts of [{}, { resourceVersion: '0' }]) {
      const r = await cacher.list('/registry/mdonly/', { ...opts, metadataOnly: true });
      assert.deepEqual(
        r.items.map((o) => ({ ...o })),
        ['a', 'b'].map((n, i) => ({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: n, namespace: 'ns', uid: `u-${n}`, resourceVersion: r.items[i]!.metadata.resourceVersion } })),
      );
    }
    // etcd's own list (paged, exact and consistent reads) decodes metadata alone too.
    const fromEtcd = await store.list('/registry/mdonly/', { metadataOnly: true, limit: 1 });
    assert.deepEqual(Object.keys(fromEtcd.items[0]!), ['apiVersion', 'kind', 'metadata']);
    assert.equal(fromEtcd.items[0]!.metadata.managedFields, undefined);
    const whole = await cacher.list('/registry/mdonly/', { metadataOnly: true, predicate: (o) => o.metadata.name === 'b' });
    assert.deepEqual(whole.items.map((o) => o['secrets']), [[{ name: 'b-token' }]]);
    assert.equal(whole.items[0]!.metadata.managedFields?.length, 1);
  } finally {
    await cacher.close();
  }
});

test("an update whose object names a newer resourceVersion than the cache's copy is not first tried on that copy", async () => {
  // The cache's etcd watch delivers each event 400 ms late: its copy of a key lags etcd's.
  class LaggingFeed extends EtcdStore {
    override watchFeed(...[key, exact, rev, handlers]: Parameters<EtcdStore['watchFeed']>): ReturnType<EtcdStore['watchFeed']> {
      return super.watchFeed(key, exact, rev, { ...handlers, onEvents: (events, r) => void setTimeout(() => handlers.onEvents(events, r), 400) });
    }
  }
  const lagging = new LaggingFeed({ endpoints: [etcd.endpoint] });
  const cacher = new Cacher({ etcd: lagging, prefix: '/registry/lagging/', apiVersion: 'v1', kind: 'ServiceAccount' });
  await cacher.start();
  const key = '/registry/lagging/ns/a';
  try {
    await cacher.create(key, obj('a'));
    await new Promise((r) => setTimeout(r, 900)); // the cache has the first version
    // The caller's update function, as a PUT's: its object carries the version it read.
    const seen: string[] = [];
    const putAt = (rv: string) => (cur: StoredObject | undefined): StoredObject => {
      seen.push(cur!.metadata.resourceVersion!);
      if (cur!.metadata.resourceVersion !== rv) throw new Error('conflict');
      return { ...cur!, secrets: [{ name: `s${rv}` }] } as StoredObject;
    };
    // Another writer (not through this cache) changes the key; the cache has yet to see it.
    const v2 = (await store.guaranteedUpdate(key, (cur) => ({ ...cur!, automountServiceAccountToken: false }))).metadata.resourceVersion!;
    // Without the caller's version the cached copy is tried first, fails, and etcd's state is read.
    await cacher.guaranteedUpdate(key, putAt(v2));
    assert.equal(seen.length, 2, `tried on the cached copy first: ${seen.join(', ')}`);
    assert.equal(seen[1], v2);
    // With it, the stale copy is skipped: one attempt, on etcd's state.
    const v4 = (await store.guaranteedUpdate(key, (cur) => ({ ...cur!, automountServiceAccountToken: true }))).metadata.resourceVersion!;
    seen.length = 0;
    const skippedBefore = cacher.stats().staleSuggestionsSkipped;
    const out = await cacher.guaranteedUpdate(key, putAt(v4), { knownRevision: Number(v4) });
    assert.deepEqual(seen, [v4]);
    assert.equal(cacher.stats().staleSuggestionsSkipped, skippedBefore + 1);
    assert.ok(Number(out.metadata.resourceVersion) > Number(v4));
    // A caller's version the cache has reached changes nothing: the cached copy is used.
    await new Promise((r) => setTimeout(r, 900));
    const current = await cacher.get(key, { resourceVersion: '0' });
    seen.length = 0;
    await cacher.guaranteedUpdate(key, putAt(current.metadata.resourceVersion!), { knownRevision: Number(current.metadata.resourceVersion) });
    assert.deepEqual(seen, [current.metadata.resourceVersion]);
    assert.equal(cacher.stats().staleSuggestionsSkipped, skippedBefore + 1);
  } finally {
    await cacher.close();
    await lagging.close();
  }
});

test("a watch cache's deletions come from its own copy: the DELETED event has the last state and its stored size, and etcd sends the feed no previous values", async () => {
  const prevValues: number[] = [];
  class SpyFeed extends EtcdStore {
    override watchFeed(...[key, exact, rev, handlers]: Parameters<EtcdStore['watchFeed']>): ReturnType<EtcdStore['watchFeed']> {
      const onEvents: typeof handlers.onEvents = (events, r) => {
        for (const e of events) prevValues.push(e.prev_kv?.value.length ?? 0);
        handlers.onEvents(events, r);
      };
      return super.watchFeed(key, exact, rev, { ...handlers, onEvents });
    }
  }
  const spy = new SpyFeed({ endpoints: [etcd.endpoint] });
  const cacher = new Cacher({ etcd: spy, prefix: '/registry/prevless/', apiVersion: 'v1', kind: 'ServiceAccount' });
  await cacher.start();
  const key = '/registry/prevless/ns/a';
  try {
    const w = await cacher.watch('/registry/prevless/', { resourceVersion: String(await store.currentRevision()) });
    await cacher.create(key, obj('a', { secrets: [{ name: 'x'.repeat(500) }] }));
    await cacher.guaranteedUpdate(key, (cur) => ({ ...cur!, automountServiceAccountToken: false }));
    const stored = (await raw.get(key).buffer())!;
    await cacher.delete(key);
    const events = [];
    for (let i = 0; i < 3; i++) {
      const e = await w.next();
      assert.ok(e && e.type !== 'ERROR');
      events.push(e);
    }
    w.stop();
    assert.deepEqual(events.map((e) => e.type), ['ADDED', 'MODIFIED', 'DELETED']);
    const deleted = events[2]!;
    assert.ok(deleted.type === 'DELETED');
    assert.equal(deleted.object['automountServiceAccountToken'], false);
    assert.equal(deleted.size, stored.length);
    assert.ok(Number(deleted.object.metadata.resourceVersion) > Number(events[1]!.object.metadata.resourceVersion), "the deletion's resourceVersion");
    assert.deepEqual(prevValues, [0, 0, 0], 'the feed asks etcd for no previous values');
  } finally {
    await cacher.close();
    await spy.close();
  }
});
