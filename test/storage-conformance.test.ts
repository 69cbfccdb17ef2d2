/**
 * One conformance suite for the `Store` interface (kube's `pkg/storage/testing/store_tests.go`):
 * written once as a function over a factory and run against every implementation, so they cannot
 * drift apart — the etcd store, and the watch cache (a Cacher inside WatchCaches, which also
 * follows compactions through `compact_rev_key`). The TSDoc of interface.ts is the spec; what is
 * asserted is observable: StorageError codes, items, resourceVersions, events and their order.
 *
 * A test that exposes a disagreement is kept and marked `todo` (with the reason) for the
 * implementation that fails it, so the suite stays green while the finding stays visible.
 * Every test writes under a key prefix of its own; one etcd serves the whole file.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  EtcdStore,
  WatchCaches,
  InvalidResourceVersionError,
  forceCompaction,
  isStorageError,
  type ObjectEvent,
  type Predicate,
  type StorageError,
  type StorageErrorCode,
  type Store,
  type Watcher,
  type WatchEvent,
} from '@plinth/storage';
import type { StoredObject } from '@plinth/api';
import { startTestEtcd, type TestEtcd } from './harness.js';

let etcd: TestEtcd;
/** The store every test shares unless it needs one of its own (other watcher limits). */
let shared: EtcdStore;

before(async () => {
  etcd = await startTestEtcd();
  shared = new EtcdStore({ endpoints: [etcd.endpoint] });
});

after(async () => {
  await shared?.close();
  await etcd?.stop();
});

// --- The implementations under test ---------------------------------------------------------------

type ImplId = 'etcd' | 'cacher';

interface OpenOptions {
  /** The test needs a store of its own with these watcher limits (the cacher inherits them). */
  watcherLimits?: { events?: number; bytes?: number };
  /** WatchCaches' bookmark ticker (ms). */
  bookmarkIntervalMs?: number;
}

interface Subject {
  store: Store;
  /** The etcd store underneath (its client forces compactions every implementation sees). */
  etcd: EtcdStore;
  close(): Promise<void>;
}

interface Implementation {
  id: ImplId;
  name: string;
  /** A store serving `prefix` (a watch cache is made for exactly that prefix). */
  open(prefix: string, opts: OpenOptions): Promise<Subject>;
}

function baseStore(opts: OpenOptions): { base: EtcdStore; own: boolean } {
  if (!opts.watcherLimits) return { base: shared, own: false };
  return { base: new EtcdStore({ endpoints: [etcd.endpoint], watcherLimits: opts.watcherLimits }), own: true };
}

const etcdStore: Implementation = {
  id: 'etcd',
  name: 'EtcdStore',
  async open(_prefix, opts) {
    const { base, own } = baseStore(opts);
    return { store: base, etcd: base, close: async () => (own ? base.close() : undefined) };
  },
};

const watchCache: Implementation = {
  id: 'cacher',
  name: 'Cacher (in WatchCaches)',
  async open(prefix, opts) {
    const { base, own } = baseStore(opts);
    const errors: string[] = [];
    const caches = new WatchCaches(base, {
      ...(opts.bookmarkIntervalMs ? { bookmarkIntervalMs: opts.bookmarkIntervalMs } : {}),
      onError: (msg, err) => errors.push(`${msg}${err ? `: ${String(err)}` : ''}`),
    });
    const cacher = caches.add(prefix, 'v1', 'ConfigMap');
    await caches.start();
    // Not ready would mean every call silently goes to etcd: the cache would not be under test.
    assert.ok(cacher.ready, 'the watch cache is ready');
    return {
      store: cacher,
      etcd: base,
      async close() {
        await caches.stop();
        if (own) await base.close();
        assert.deepEqual(errors, [], 'the watch cache reported no errors');
      },
    };
  },
};

// --- Helpers --------------------------------------------------------------------------------------

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function obj(name: string, extra: Record<string, unknown> = {}): StoredObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'conf', uid: `uid-${name}` }, ...extra };
}

function labelled(name: string, app: string, extra: Record<string, unknown> = {}): StoredObject {
  return { ...obj(name, extra), metadata: { name, namespace: 'conf', uid: `uid-${name}`, labels: { app } } };
}

const rvOf = (o: { metadata?: { resourceVersion?: string } } | undefined): number => Number(o?.metadata?.resourceVersion);
const names = (items: StoredObject[]): Array<string | undefined> => items.map((o) => o.metadata.name);
/** A copy of `cur` with field `n` set (never mutates: objects may be shared with a cache). */
const withN = (cur: StoredObject | undefined, n: number): StoredObject => ({ ...cur!, n });
const bump = (cur: StoredObject | undefined): StoredObject => withN(cur, Number(cur!['n'] ?? 0) + 1);

/** Awaits a rejection with StorageError `code`; returns the error for more checks. */
async function rejectsWith(p: Promise<unknown>, code: StorageErrorCode): Promise<StorageError> {
  let result: unknown;
  try {
    result = await p;
  } catch (e) {
    assert.ok(isStorageError(e), `expected StorageError ${code}, got ${String(e)}`);
    assert.equal(e.code, code, `expected ${code}: ${e.message}`);
    return e;
  }
  assert.fail(`expected StorageError ${code}, but it resolved with ${JSON.stringify(result)?.slice(0, 200)}`);
}

/** The next event, failing the test (instead of hanging it) when none comes in time. */
async function nextWithin(w: Watcher, ms = 5000): Promise<WatchEvent | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no watch event within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([w.next(), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** The next `n` events, each an object event. */
async function take(w: Watcher, n: number, ms = 5000): Promise<ObjectEvent[]> {
  const out: ObjectEvent[] = [];
  for (let i = 0; i < n; i++) {
    const e = await nextWithin(w, ms);
    assert.ok(e, `the watch ended after ${i} of ${n} events`);
    assert.ok(e.type !== 'ERROR', `unexpected ERROR event after ${i} events: ${e.type === 'ERROR' ? e.error.message : ''}`);
    out.push(e);
  }
  return out;
}

/** Nothing more arrives within a while (checked with poll(), so no next() is left pending). */
async function assertQuiet(w: Watcher, ms = 200): Promise<void> {
  await sleep(ms);
  const e = w.poll();
  assert.equal(e, undefined, `unexpected event ${e ? JSON.stringify(brief(e)) : ''}`);
}

/** An event as [type, name, resourceVersion]. */
function brief(e: WatchEvent): [string, string | undefined, string | undefined] {
  if (e.type === 'ERROR') return ['ERROR', e.error.code, undefined];
  return [e.type, e.object.metadata.name, e.object.metadata.resourceVersion];
}

const rvText = (o: StoredObject): string => o.metadata.resourceVersion!;

// --- The suite ------------------------------------------------------------------------------------

interface TestContext extends Subject {
  /** This test's own key prefix, ending in '/'. */
  p: string;
  /** Another store of the same implementation over the same etcd and prefix (another replica). */
  another(): Promise<Store>;
}

interface CaseOptions {
  /** Known failures per implementation, with the reason (reported, not hidden). */
  todo?: Partial<Record<ImplId, string>>;
  /** Behaviour an implementation documents it does not have, with the reason. */
  skip?: Partial<Record<ImplId, string>>;
  open?: OpenOptions;
}

function storeConformance(impl: Implementation): void {
  describe(impl.name, () => {
    let count = 0;
    const test = (name: string, body: (t: TestContext) => Promise<void>, opts: CaseOptions = {}): void => {
      const slug = name.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '').slice(0, 40);
      const prefix = `/conf/${impl.id}/${String(++count).padStart(2, '0')}-${slug}/`;
      const todo = opts.todo?.[impl.id];
      const skip = opts.skip?.[impl.id];
      it(name, todo ? { todo } : skip ? { skip } : {}, async () => {
        const subjects = [await impl.open(prefix, opts.open ?? {})];
        const another = async (): Promise<Store> => {
          const s = await impl.open(prefix, opts.open ?? {});
          subjects.push(s);
          return s.store;
        };
        try {
          await body({ ...subjects[0]!, p: prefix, another });
        } finally {
          for (const s of subjects.reverse()) await s.close();
        }
      });
    };

    // --- create ---------------------------------------------------------------------------------

    test('create returns the object at the resourceVersion of its write', async ({ store, p }) => {
      const input = obj('a', { data: { k: 'v' } });
      input.metadata.resourceVersion = '12345'; // a caller's version is never stored
      const created = await store.create(`${p}a`, input);
      assert.equal(rvOf(created), await store.currentRevision());
      assert.deepEqual(created.data, { k: 'v' });
      assert.equal(input.metadata.resourceVersion, '12345', "the caller's object is not changed");
      assert.deepEqual(await store.get(`${p}a`), created);
    });

    test('create on a taken key is KeyExists and changes nothing', async ({ store, p }) => {
      const first = await store.create(`${p}a`, obj('a', { n: 1 }));
      await rejectsWith(store.create(`${p}a`, obj('a', { n: 2 })), 'KeyExists');
      assert.deepEqual(await store.get(`${p}a`), first);
      await store.delete(`${p}a`);
      const again = await store.create(`${p}a`, obj('a', { n: 3 }));
      assert.ok(rvOf(again) > rvOf(first));
    });

    test('create with dryRun writes nothing', async ({ store, p }) => {
      const rev = await store.currentRevision();
      const out = await store.create(`${p}a`, obj('a', { n: 1 }), { dryRun: true });
      assert.equal(out.metadata.name, 'a');
      assert.equal(out['n'], 1);
      assert.equal(await store.currentRevision(), rev);
      await rejectsWith(store.get(`${p}a`), 'NotFound');
      await store.create(`${p}b`, obj('b'));
      await rejectsWith(store.create(`${p}b`, obj('b'), { dryRun: true }), 'KeyExists');
    });

    // --- get ------------------------------------------------------------------------------------

    test('get of an absent key is NotFound at every resourceVersion', async ({ store, p }) => {
      await store.create(`${p}other`, obj('other'));
      for (const resourceVersion of ['', '0', String(await store.currentRevision())]) {
        await rejectsWith(store.get(`${p}absent`, { resourceVersion }), 'NotFound');
      }
    });

    test('get with resourceVersion "" reads the latest state, right after each write', async ({ store, p }) => {
      const key = `${p}a`;
      let last = await store.create(key, obj('a', { n: 0 }));
      assert.deepEqual(await store.get(key), last);
      for (let i = 1; i <= 5; i++) {
        last = await store.guaranteedUpdate(key, (cur) => withN(cur, i));
        const got = await store.get(key, { resourceVersion: '' });
        assert.equal(got['n'], i);
        assert.equal(got.metadata.resourceVersion, last.metadata.resourceVersion);
        assert.deepEqual((await store.list(p)).items, [last], 'a list with resourceVersion "" too');
      }
      await store.delete(key);
      await rejectsWith(store.get(key), 'NotFound');
    });

    test('another store over the same etcd sees each write at once with resourceVersion ""', async ({ store, p, another }) => {
      const before = await store.create(`${p}before`, obj('before')); // there before the other one starts
      const other = await another();
      assert.deepEqual(await other.get(`${p}before`), before);
      let a = await store.create(`${p}a`, obj('a', { n: 0 }));
      assert.deepEqual(await other.get(`${p}a`), a);
      for (let i = 0; i < 3; i++) {
        a = await other.guaranteedUpdate(`${p}a`, bump);
        assert.deepEqual(await store.get(`${p}a`), a);
        assert.deepEqual((await store.list(p)).items, [a, before]);
        const b = await store.guaranteedUpdate(`${p}a`, bump);
        assert.deepEqual((await other.list(p)).items, [b, before]);
        a = b;
      }
      const w = await other.watch(p, { resourceVersion: '' });
      try {
        assert.deepEqual((await take(w, 2)).map(brief), [['ADDED', 'a', rvText(a)], ['ADDED', 'before', rvText(before)]]);
      } finally {
        w.stop();
      }
      await store.delete(`${p}a`);
      await rejectsWith(other.get(`${p}a`), 'NotFound');
    });

    test('get with resourceVersion "0" or N returns a state not older than asked', async ({ store, p }) => {
      const key = `${p}a`;
      const created = await store.create(key, obj('a', { n: 0 }));
      await store.get(key); // a consistent read first: '0' may then serve any state from here on
      assert.ok(rvOf(await store.get(key, { resourceVersion: '0' })) >= rvOf(created));
      const updated = await store.guaranteedUpdate(key, (cur) => withN(cur, 1));
      const atUpdate = await store.get(key, { resourceVersion: rvText(updated) });
      assert.deepEqual(atUpdate, updated);
      assert.ok(rvOf(await store.get(key, { resourceVersion: rvText(created) })) >= rvOf(created));
      // N from a write to another key: the object as of then (unchanged since the update)
      const other = await store.create(`${p}other`, obj('other'));
      assert.deepEqual(await store.get(key, { resourceVersion: rvText(other) }), updated);
    });

    test('get and list at a resourceVersion etcd has not reached are ResourceVersionTooLarge', async ({ store, p }) => {
      await store.create(`${p}a`, obj('a'));
      const future = (await store.currentRevision()) + 1000;
      const rv = String(future);
      // In parallel: each waits ~3 s for the revision before giving up.
      const [get, list, exact] = await Promise.all([
        rejectsWith(store.get(`${p}a`, { resourceVersion: rv }), 'ResourceVersionTooLarge'),
        rejectsWith(store.list(p, { resourceVersion: rv, resourceVersionMatch: 'NotOlderThan' }), 'ResourceVersionTooLarge'),
        rejectsWith(store.list(p, { resourceVersion: rv, resourceVersionMatch: 'Exact' }), 'ResourceVersionTooLarge'),
      ]);
      for (const e of [get, list, exact]) {
        assert.equal(e.requested, future, 'requested: the revision asked for');
        assert.ok(e.revision > 0 && e.revision < future, 'revision: the current one');
      }
    });

    test('a watch from a resourceVersion etcd has not reached is ResourceVersionTooLarge', async ({ store, p }) => {
      const future = (await store.currentRevision()) + 1000;
      let w: Watcher | undefined;
      try {
        await rejectsWith(
          store.watch(p, { resourceVersion: String(future) }).then((x) => (w = x)),
          'ResourceVersionTooLarge',
        );
      } finally {
        w?.stop();
      }
    });

    test('a malformed resourceVersion is InvalidResourceVersionError (get, list, watch)', async ({ store, p }) => {
      await store.create(`${p}a`, obj('a'));
      for (const resourceVersion of ['abc', '-1', '1.5', ' 7', '99999999999999999999']) {
        await assert.rejects(store.get(`${p}a`, { resourceVersion }), InvalidResourceVersionError, `get ${resourceVersion}`);
        await assert.rejects(store.list(p, { resourceVersion }), InvalidResourceVersionError, `list ${resourceVersion}`);
        await assert.rejects(store.list(p, { resourceVersion, limit: 1 }), InvalidResourceVersionError, `paged list ${resourceVersion}`);
        await assert.rejects(store.watch(p, { resourceVersion }), InvalidResourceVersionError, `watch ${resourceVersion}`);
      }
    });

    // --- list -----------------------------------------------------------------------------------

    test('list returns the objects under the prefix in key order, each at its own resourceVersion', async ({ store, p }) => {
      const created = new Map<string, StoredObject>();
      for (const n of ['c', 'a', 'b2', 'b10', 'B']) created.set(n, await store.create(`${p}${n}`, obj(n)));
      for (const n of ['ns1/x', 'ns1/y', 'ns10/x', 'ns2/x']) await store.create(`${p}${n}`, obj(n.replace('/', '-')));
      await store.create(`${p.slice(0, -1)}-sibling/a`, obj('sibling')); // shares the characters, not the prefix
      const rev = await store.currentRevision();

      const all = await store.list(p);
      assert.deepEqual(names(all.items), ['B', 'a', 'b10', 'b2', 'c', 'ns1-x', 'ns1-y', 'ns10-x', 'ns2-x']);
      for (const item of all.items) {
        const c = created.get(item.metadata.name!);
        if (c) assert.equal(item.metadata.resourceVersion, c.metadata.resourceVersion);
      }
      assert.ok(Number(all.resourceVersion) >= rev, `list rv ${all.resourceVersion} is at least ${rev}`);
      assert.ok(all.items.every((i) => rvOf(i) <= Number(all.resourceVersion)));
      assert.equal(all.continue, '');
      assert.equal(all.remainingItemCount, undefined);

      assert.deepEqual(names((await store.list(`${p}ns1/`)).items), ['ns1-x', 'ns1-y']);
      const empty = await store.list(`${p}none/`);
      assert.deepEqual(empty.items, []);
      assert.equal(empty.continue, '');
      assert.ok(Number(empty.resourceVersion) >= rev);
    });

    test('list resourceVersionMatch Exact reads the past, NotOlderThan the present', async ({ store, p }) => {
      await store.create(`${p}a`, obj('a'));
      await store.create(`${p}b`, obj('b'));
      const then = (await store.list(p)).resourceVersion;
      await store.create(`${p}c`, obj('c'));
      await store.guaranteedUpdate(`${p}a`, (cur) => withN(cur, 1));
      await store.delete(`${p}b`);
      const now = await store.currentRevision();

      const exact = await store.list(p, { resourceVersion: then, resourceVersionMatch: 'Exact' });
      assert.deepEqual(names(exact.items), ['a', 'b']);
      assert.equal(exact.items[0]!['n'], undefined);
      assert.equal(exact.resourceVersion, then);
      const page = await store.list(p, { resourceVersion: then, resourceVersionMatch: 'Exact', limit: 1 });
      assert.deepEqual(names(page.items), ['a']);
      const rest = await store.list(p, { limit: 1, continue: page.continue });
      assert.deepEqual(names(rest.items), ['b']);
      assert.equal(rest.resourceVersion, then);

      const fresh = await store.list(p, { resourceVersion: String(now), resourceVersionMatch: 'NotOlderThan' });
      assert.deepEqual(names(fresh.items), ['a', 'c']);
      assert.equal(fresh.items[0]!['n'], 1);
      assert.ok(Number(fresh.resourceVersion) >= now);
    });

    test('limit and continue page through one revision, with writes between pages', async ({ store, p }) => {
      for (let i = 0; i < 7; i++) await store.create(`${p}s${i}`, obj(`s${i}`, { n: 0 }));
      const rev = await store.currentRevision();
      const first = await store.list(p, { limit: 3 });
      assert.deepEqual(names(first.items), ['s0', 's1', 's2']);
      assert.ok(Number(first.resourceVersion) >= rev);
      assert.equal(first.remainingItemCount, 4);
      assert.ok(first.continue);
      // Changes after the first page are not seen by the next ones.
      await store.create(`${p}s3a`, obj('s3a'));
      await store.guaranteedUpdate(`${p}s4`, (cur) => withN(cur, 1));
      await store.delete(`${p}s5`);
      const second = await store.list(p, { limit: 3, continue: first.continue });
      assert.deepEqual(names(second.items), ['s3', 's4', 's5']);
      assert.equal(second.items[1]!['n'], 0);
      assert.equal(second.resourceVersion, first.resourceVersion);
      assert.equal(second.remainingItemCount, 1);
      const third = await store.list(p, { limit: 3, continue: second.continue });
      assert.deepEqual(names(third.items), ['s6']);
      assert.equal(third.resourceVersion, first.resourceVersion);
      assert.equal(third.continue, '');
      assert.equal(third.remainingItemCount, undefined);
      for (const item of [...first.items, ...second.items, ...third.items]) assert.ok(rvOf(item) <= Number(first.resourceVersion));
    });

    test('a predicate filters pages that still fill up to the limit, without remainingItemCount', async ({ store, p }) => {
      for (let i = 0; i < 10; i++) await store.create(`${p}x${i}`, labelled(`x${i}`, i % 2 === 0 ? 'even' : 'odd'));
      const predicate: Predicate = (o) => o.metadata.labels?.['app'] === 'even';
      const opts = { limit: 2, predicate, hasSelector: true };
      const pages: Array<Array<string | undefined>> = [];
      let page = await store.list(p, opts);
      const rv = page.resourceVersion;
      for (;;) {
        pages.push(names(page.items));
        assert.equal(page.remainingItemCount, undefined);
        assert.equal(page.resourceVersion, rv);
        if (!page.continue) break;
        page = await store.list(p, { ...opts, continue: page.continue });
      }
      assert.deepEqual(pages, [['x0', 'x2'], ['x4', 'x6'], ['x8']]);
      assert.deepEqual(names((await store.list(p, { predicate, hasSelector: true })).items), ['x0', 'x2', 'x4', 'x6', 'x8']);
    });

    // At resourceVersion '0' the watch cache returns everything, as kube's cacher does (documented
    // on ListOptions.limit); every other read honours the limit.
    test('a limit is honoured at resourceVersion unset and N', async ({ store, p }) => {
      for (let i = 0; i < 5; i++) await store.create(`${p}o${i}`, obj(`o${i}`));
      const rv = (await store.list(p)).resourceVersion;
      for (const resourceVersion of ['', rv]) {
        const page = await store.list(p, { limit: 2, resourceVersion });
        assert.deepEqual(names(page.items), ['o0', 'o1'], `limit 2 at resourceVersion "${resourceVersion}"`);
        assert.ok(page.continue);
      }
    });

    test('a malformed continue token is InvalidContinue', async ({ store, p }) => {
      await store.create(`${p}a`, obj('a'));
      const traversal = Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv: 1, start: '../x' })).toString('base64url');
      for (const token of ['junk', traversal]) await rejectsWith(store.list(p, { limit: 1, continue: token }), 'InvalidContinue');
    });

    test('after a compaction: continue is Compacted with a continueToken, Exact is Compacted', async ({ store, etcd: base, p }) => {
      for (let i = 0; i < 4; i++) await store.create(`${p}r${i}`, obj(`r${i}`));
      const page = await store.list(p, { limit: 2 });
      await store.create(`${p}r4`, obj('r4'));
      await forceCompaction(base.client, await store.currentRevision());
      const e = await rejectsWith(store.list(p, { limit: 2, continue: page.continue }), 'Compacted');
      assert.ok(e.continueToken, 'a token to continue at the latest revision');
      const rest = await store.list(p, { limit: 10, continue: e.continueToken });
      assert.deepEqual(names(rest.items), ['r2', 'r3', 'r4']);
      assert.ok(Number(rest.resourceVersion) > Number(page.resourceVersion));
      await rejectsWith(store.list(p, { resourceVersion: page.resourceVersion, resourceVersionMatch: 'Exact' }), 'Compacted');
      // Not older than a compacted revision is still the present.
      const now = await store.list(p, { resourceVersion: page.resourceVersion, resourceVersionMatch: 'NotOlderThan' });
      assert.equal(now.items.length, 5);
    });

    test('a collection larger than one gRPC message lists completely, paged and unpaged', async ({ store, p }) => {
      const blob = 'x'.repeat(1_000_000);
      const keys = Array.from({ length: 12 }, (_, i) => `big-${String(i).padStart(2, '0')}`);
      for (const k of keys) await store.create(`${p}${k}`, obj(k, { data: { blob } }));
      const sizes = (items: StoredObject[]): number[] => items.map((i) => (i['data'] as { blob: string }).blob.length);

      for (const resourceVersion of ['', '0']) {
        const all = await store.list(p, { resourceVersion });
        assert.deepEqual(names(all.items), keys, `unpaged, resourceVersion "${resourceVersion}"`);
        assert.ok(sizes(all.items).every((s) => s === blob.length));
      }
      const pages: Array<Array<string | undefined>> = [];
      const remaining: Array<number | undefined> = [];
      let page = await store.list(p, { limit: 5 });
      for (;;) {
        pages.push(names(page.items));
        remaining.push(page.remainingItemCount);
        assert.ok(sizes(page.items).every((s) => s === blob.length));
        if (!page.continue) break;
        page = await store.list(p, { limit: 5, continue: page.continue });
      }
      assert.deepEqual(pages, [keys.slice(0, 5), keys.slice(5, 10), keys.slice(10)]);
      assert.deepEqual(remaining, [7, 2, undefined]);

      const w = await store.watch(p, { resourceVersion: '' });
      try {
        assert.deepEqual((await take(w, 12)).map((e) => [e.type, e.object.metadata.name]), keys.map((k) => ['ADDED', k]));
      } finally {
        w.stop();
      }
    });

    // --- writes too large for etcd ---------------------------------------------------------------

    test('a write larger than etcd accepts is RequestTooLarge, and the store keeps working', async ({ store, p }) => {
      const huge = { data: { blob: 'x'.repeat(1_600_000) } };
      const created = await rejectsWith(store.create(`${p}huge`, obj('huge', huge)), 'RequestTooLarge');
      assert.ok(created.limit > 0 && created.requested > created.limit, `limit ${created.limit}, requested ${created.requested}`);
      await rejectsWith(store.create(`${p}huge`, obj('huge', huge), { dryRun: true }), 'RequestTooLarge');
      await rejectsWith(store.get(`${p}huge`), 'NotFound');

      const small = await store.create(`${p}small`, obj('small'));
      assert.deepEqual(await store.get(`${p}small`), small);
      const updated = await rejectsWith(store.guaranteedUpdate(`${p}small`, (cur) => ({ ...cur!, ...huge })), 'RequestTooLarge');
      assert.ok(updated.limit > 0 && updated.requested > updated.limit);
      assert.deepEqual(await store.get(`${p}small`), small);

      const next = await store.create(`${p}next`, obj('next'));
      assert.deepEqual(await store.get(`${p}next`), next);
    });

    // --- guaranteedUpdate -------------------------------------------------------------------------

    test('guaranteedUpdate passes the current object to tryUpdate and returns what it wrote', async ({ store, p }) => {
      const key = `${p}a`;
      const created = await store.create(key, obj('a', { n: 0 }));
      const seen: Array<StoredObject | undefined> = [];
      const first = await store.guaranteedUpdate(key, (cur) => (seen.push(cur), withN(cur, 1)));
      assert.deepEqual(seen.at(-1), created);
      assert.equal(first['n'], 1);
      assert.equal(rvOf(first), await store.currentRevision());
      assert.deepEqual(await store.get(key), first);
      // Right after a write, tryUpdate ends up with that write (a cached older state is retried).
      const second = await store.guaranteedUpdate(key, (cur) => (seen.push(cur), bump(cur)));
      assert.deepEqual(seen.at(-1), first);
      assert.equal(second['n'], 2);
      assert.deepEqual(await store.get(key), second);
    });

    test('guaranteedUpdate of an absent key is NotFound; with ignoreNotFound tryUpdate gets undefined', async ({ store, p }) => {
      const key = `${p}a`;
      let called = false;
      await rejectsWith(store.guaranteedUpdate(key, (cur) => ((called = true), cur!)), 'NotFound');
      assert.equal(called, false, 'tryUpdate is not called without ignoreNotFound');
      const args: Array<StoredObject | undefined> = [];
      const made = await store.guaranteedUpdate(key, (cur) => (args.push(cur), obj('a', { n: 1 })), { ignoreNotFound: true });
      assert.equal(args.length, 1);
      assert.equal(args[0], undefined, 'tryUpdate gets undefined for an absent key');
      assert.equal(rvOf(made), await store.currentRevision());
      assert.deepEqual(await store.get(key), made);
      const again = await store.guaranteedUpdate(key, (cur) => (args.push(cur), bump(cur)), { ignoreNotFound: true });
      assert.deepEqual(args.at(-1), made);
      assert.equal(again['n'], 2);
    });

    test('guaranteedUpdate preconditions: a uid or resourceVersion that does not match is Conflict', async ({ store, p }) => {
      const key = `${p}a`;
      const created = await store.create(key, obj('a', { n: 0 }));
      await rejectsWith(store.guaranteedUpdate(key, bump, { preconditions: { uid: 'uid-other' } }), 'Conflict');
      await rejectsWith(store.guaranteedUpdate(key, bump, { preconditions: { resourceVersion: '1' } }), 'Conflict');
      assert.deepEqual(await store.get(key), created);
      const u1 = await store.guaranteedUpdate(key, bump, { preconditions: { uid: 'uid-a', resourceVersion: rvText(created) } });
      // Right after a write, a precondition on that write's version holds, and one on the version before fails.
      const u2 = await store.guaranteedUpdate(key, bump, { preconditions: { resourceVersion: rvText(u1) } });
      assert.equal(u2['n'], 2);
      await rejectsWith(store.guaranteedUpdate(key, bump, { preconditions: { resourceVersion: rvText(u1) } }), 'Conflict');
      assert.deepEqual(await store.get(key), u2);
    });

    test('guaranteedUpdate returning the current object writes nothing', async ({ store, p }) => {
      const key = `${p}a`;
      const created = await store.create(key, obj('a', { n: 0 }));
      const rev = await store.currentRevision();
      const same = await store.guaranteedUpdate(key, (cur) => cur!);
      assert.equal(rvOf(same), rvOf(created));
      assert.equal(await store.currentRevision(), rev);
      // Right after an update: the answer is that update, unchanged.
      const updated = await store.guaranteedUpdate(key, bump);
      const again = await store.guaranteedUpdate(key, (cur) => cur!);
      assert.deepEqual(again, updated);
      assert.equal(await store.currentRevision(), rvOf(updated));
    });

    test('concurrent guaranteedUpdates on one key all apply', async ({ store, p }) => {
      const key = `${p}counter`;
      await store.create(key, obj('counter', { n: 0 }));
      const results = await Promise.all(Array.from({ length: 10 }, () => store.guaranteedUpdate(key, bump)));
      assert.deepEqual(results.map((r) => r['n']).sort((a, b) => Number(a) - Number(b)), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
      assert.equal(new Set(results.map(rvText)).size, 10, 'each increment is its own write');
      assert.equal((await store.get(key))['n'], 10);
    });

    test('guaranteedUpdate with dryRun writes nothing', async ({ store, p }) => {
      const key = `${p}a`;
      const created = await store.create(key, obj('a', { n: 0 }));
      const rev = await store.currentRevision();
      const out = await store.guaranteedUpdate(key, (cur) => withN(cur, 1), { dryRun: true });
      assert.equal(out['n'], 1);
      const made = await store.guaranteedUpdate(`${p}absent`, () => obj('absent'), { dryRun: true, ignoreNotFound: true });
      assert.equal(made.metadata.name, 'absent');
      assert.equal(await store.currentRevision(), rev);
      assert.deepEqual(await store.get(key), created);
      await rejectsWith(store.get(`${p}absent`), 'NotFound');
    });

    test('a stale suggestion is verified: updates and deletes apply to the current object', async ({ store, p }) => {
      const key = `${p}a`;
      const created = await store.create(key, obj('a', { n: 0 }));
      const updated = await store.guaranteedUpdate(key, bump);
      const seen: Array<StoredObject | undefined> = [];
      const out = await store.guaranteedUpdate(key, (cur) => (seen.push(cur), bump(cur)), {
        suggestion: created,
        preconditions: { resourceVersion: rvText(updated) },
      });
      assert.deepEqual(seen.at(-1), updated);
      assert.equal(out['n'], 2);
      const same = await store.guaranteedUpdate(key, (cur) => cur!, { suggestion: updated });
      assert.deepEqual(same, out, 'no write, and the current object (not the suggestion)');
      assert.equal(await store.currentRevision(), rvOf(out));
      assert.deepEqual(await store.delete(key, { suggestion: created, preconditions: { resourceVersion: rvText(out) } }), out);
      await rejectsWith(store.get(key), 'NotFound');
      await rejectsWith(store.delete(key, { suggestion: out }), 'NotFound');
    });

    test('a suggestion is copied for tryUpdate unless the caller shares it, and never changed', async ({ store, p }) => {
      const key = `${p}a`;
      const created = await store.create(key, obj('a', { n: 0, data: { k: 'v' } }));
      const before = structuredClone(created);
      let seen: StoredObject | undefined;
      // A tryUpdate that changes what it is handed: the store's copy, not the caller's object.
      const updated = await store.guaranteedUpdate(key, (cur) => ((seen = cur), ((cur!['data'] as Record<string, string>)['k'] = 'w'), cur!), { suggestion: created });
      assert.notEqual(seen, created);
      assert.deepEqual(created, before, 'the suggestion is as it was');
      assert.equal((updated['data'] as Record<string, string>)['k'], 'w');
      // Shared: handed over as it is, and a delete answers with it.
      const last = await store.guaranteedUpdate(key, (cur) => ((seen = cur), withN(cur, 1)), { suggestion: updated, shareSuggestion: true });
      assert.equal(seen, updated);
      assert.equal(await store.delete(key, { suggestion: last, shareSuggestion: true }), last);
      await rejectsWith(store.get(key), 'NotFound');
    });

    test('an error thrown by tryUpdate aborts the update', async ({ store, p }) => {
      const key = `${p}a`;
      const created = await store.create(key, obj('a'));
      const refused = new Error('refused by tryUpdate');
      await assert.rejects(
        store.guaranteedUpdate(key, () => {
          throw refused;
        }),
        (e) => e === refused,
      );
      assert.deepEqual(await store.get(key), created);
    });

    // --- delete ---------------------------------------------------------------------------------

    test('delete returns the last state and removes the object', async ({ store, p }) => {
      const key = `${p}a`;
      await store.create(key, obj('a', { n: 0 }));
      const updated = await store.guaranteedUpdate(key, bump);
      assert.deepEqual(await store.delete(key), updated);
      await rejectsWith(store.get(key), 'NotFound');
      await rejectsWith(store.delete(key), 'NotFound');
    });

    test('delete preconditions: a mismatch is Conflict and the object stays', async ({ store, p }) => {
      const key = `${p}a`;
      const created = await store.create(key, obj('a', { n: 0 }));
      await rejectsWith(store.delete(key, { preconditions: { uid: 'uid-other' } }), 'Conflict');
      await rejectsWith(store.delete(key, { preconditions: { resourceVersion: '1' } }), 'Conflict');
      const updated = await store.guaranteedUpdate(key, bump);
      await rejectsWith(store.delete(key, { preconditions: { resourceVersion: rvText(created) } }), 'Conflict');
      assert.deepEqual(await store.get(key), updated);
      assert.deepEqual(await store.delete(key, { preconditions: { uid: 'uid-a', resourceVersion: rvText(updated) } }), updated);
    });

    test('validateDeletion sees the current object; throwing refuses the delete', async ({ store, p }) => {
      const key = `${p}a`;
      await store.create(key, obj('a', { n: 0 }));
      const updated = await store.guaranteedUpdate(key, bump);
      const seen: StoredObject[] = [];
      const refused = new Error('refused by admission');
      await assert.rejects(
        store.delete(key, {
          validateDeletion: (cur) => {
            seen.push(cur);
            throw refused;
          },
        }),
        (e) => e === refused,
      );
      assert.deepEqual(seen.at(-1), updated);
      assert.deepEqual(await store.get(key), updated);
      const last = await store.delete(key, { validateDeletion: async (cur) => void seen.push(cur) });
      assert.deepEqual(seen.at(-1), updated);
      assert.deepEqual(last, updated);
    });

    test('delete with dryRun deletes nothing', async ({ store, p }) => {
      const key = `${p}a`;
      const created = await store.create(key, obj('a'));
      const rev = await store.currentRevision();
      assert.deepEqual(await store.delete(key, { dryRun: true }), created);
      assert.equal(await store.currentRevision(), rev);
      assert.deepEqual(await store.get(key), created);
      await rejectsWith(store.delete(`${p}absent`, { dryRun: true }), 'NotFound');
    });

    // --- ttl ------------------------------------------------------------------------------------

    test('writes with ttlSeconds expire: etcd deletes them and a watch sees DELETED', async ({ store, p }) => {
      await store.create(`${p}kept`, obj('kept'));
      const updated = await store.create(`${p}updated`, obj('updated', { n: 0 }));
      const from = await store.currentRevision();
      const w = await store.watch(p, { resourceVersion: String(from) });
      try {
        await store.create(`${p}created`, obj('created'), { ttlSeconds: 2 });
        const m = await store.guaranteedUpdate(`${p}updated`, bump, { ttlSeconds: 2 });
        assert.ok(rvOf(m) > rvOf(updated));
        const events = await take(w, 4, 30_000);
        assert.deepEqual(events.slice(0, 2).map((e) => [e.type, e.object.metadata.name]), [['ADDED', 'created'], ['MODIFIED', 'updated']]);
        assert.deepEqual(events.slice(2).map((e) => [e.type, e.object.metadata.name]).sort(), [['DELETED', 'created'], ['DELETED', 'updated']]);
        assert.equal(events.find((e) => e.type === 'DELETED' && e.object.metadata.name === 'updated')!.object['n'], 1, 'DELETED carries the last state');
        await rejectsWith(store.get(`${p}created`), 'NotFound');
        await rejectsWith(store.get(`${p}updated`), 'NotFound');
        assert.deepEqual(names((await store.list(p)).items), ['kept']);
        await assertQuiet(w);
      } finally {
        w.stop();
      }
    });

    // --- watch ----------------------------------------------------------------------------------

    test('watch from N: ADDED, MODIFIED, DELETED in order, and no initial events', async ({ store, p }) => {
      await store.create(`${p}before`, obj('before'));
      const from = await store.currentRevision();
      const w = await store.watch(p, { resourceVersion: String(from) });
      try {
        const a = await store.create(`${p}a`, obj('a', { n: 0 }));
        const m = await store.guaranteedUpdate(`${p}a`, bump);
        await store.delete(`${p}a`);
        const deletedAt = await store.currentRevision();
        const events = await take(w, 3);
        assert.deepEqual(events.map(brief), [
          ['ADDED', 'a', rvText(a)],
          ['MODIFIED', 'a', rvText(m)],
          ['DELETED', 'a', String(deletedAt)],
        ]);
        assert.deepEqual(events.map((e) => e.object['n']), [0, 1, 1], 'DELETED carries the last state');
        await assertQuiet(w);
      } finally {
        w.stop();
      }
    });

    test('watch from an older N replays the changes after N', async ({ store, p }) => {
      const a = await store.create(`${p}a`, obj('a', { n: 0 }));
      const m = await store.guaranteedUpdate(`${p}a`, bump);
      const b = await store.create(`${p}b`, obj('b'));
      const w = await store.watch(p, { resourceVersion: rvText(a) });
      try {
        assert.deepEqual((await take(w, 2)).map(brief), [
          ['MODIFIED', 'a', rvText(m)],
          ['ADDED', 'b', rvText(b)],
        ]);
        const c = await store.create(`${p}c`, obj('c'));
        assert.deepEqual((await take(w, 1)).map(brief), [['ADDED', 'c', rvText(c)]]);
        await assertQuiet(w);
      } finally {
        w.stop();
      }
    });

    test('watch from "" or "0": an ADDED for every existing object, then live events', async ({ store, p }) => {
      for (const rv of ['', '0']) {
        const sub = `${p}rv${rv || 'latest'}/`;
        const created: StoredObject[] = [];
        for (const n of ['a', 'b', 'c']) created.push(await store.create(`${sub}${n}`, obj(n)));
        if (rv === '0') await store.list(sub); // a consistent read first: '0' may serve any state
        const w = await store.watch(sub, { resourceVersion: rv });
        try {
          const initial = await take(w, 3);
          const sorted = initial.map(brief).sort((x, y) => String(x[1]).localeCompare(String(y[1])));
          assert.deepEqual(sorted, created.map((o) => ['ADDED', o.metadata.name, rvText(o)]), `initial events from "${rv}"`);
          const d = await store.create(`${sub}d`, obj('d'));
          const m = await store.guaranteedUpdate(`${sub}a`, bump);
          await store.delete(`${sub}b`);
          assert.deepEqual((await take(w, 3)).map((e) => brief(e).slice(0, 2)), [
            ['ADDED', 'd'],
            ['MODIFIED', 'a'],
            ['DELETED', 'b'],
          ]);
          assert.ok(rvOf(d) < rvOf(m));
          await assertQuiet(w);
        } finally {
          w.stop();
        }
      }
    });

    test('exactKey watches one key only', async ({ store, p }) => {
      const from = await store.currentRevision();
      const w = await store.watch(`${p}a`, { exactKey: true, resourceVersion: String(from) });
      try {
        await store.create(`${p}ab`, obj('ab')); // shares the key's characters
        const a = await store.create(`${p}a`, obj('a', { n: 0 }));
        await store.create(`${p}b`, obj('b'));
        const m = await store.guaranteedUpdate(`${p}a`, bump);
        await store.guaranteedUpdate(`${p}ab`, bump);
        await store.delete(`${p}a`);
        await store.delete(`${p}ab`);
        const events = await take(w, 3);
        assert.deepEqual(events.map((e) => brief(e).slice(0, 2)), [
          ['ADDED', 'a'],
          ['MODIFIED', 'a'],
          ['DELETED', 'a'],
        ]);
        assert.deepEqual(events.slice(0, 2).map(brief).map((e) => e[2]), [rvText(a), rvText(m)]);
        await assertQuiet(w);
      } finally {
        w.stop();
      }
      await store.create(`${p}a`, obj('a'));
      await store.create(`${p}ab`, obj('ab'));
      const w0 = await store.watch(`${p}a`, { exactKey: true, resourceVersion: '' });
      try {
        assert.deepEqual((await take(w0, 1)).map((e) => brief(e).slice(0, 2)), [['ADDED', 'a']]);
        await assertQuiet(w0);
      } finally {
        w0.stop();
      }
    });

    test('with a predicate, entering the selection is ADDED and leaving it DELETED', async ({ store, p }) => {
      const web: Predicate = (o) => o.metadata.labels?.['app'] === 'web';
      const relabel = (app: string) => (cur: StoredObject | undefined): StoredObject => ({
        ...bump(cur),
        metadata: { ...cur!.metadata, labels: { app } },
      });
      const from = await store.currentRevision();
      const w = await store.watch(p, { resourceVersion: String(from), predicate: web });
      try {
        await store.create(`${p}a`, labelled('a', 'db')); // outside: nothing
        const enter = await store.guaranteedUpdate(`${p}a`, relabel('web'));
        const inside = await store.guaranteedUpdate(`${p}a`, relabel('web'));
        const leave = await store.guaranteedUpdate(`${p}a`, relabel('db'));
        await store.guaranteedUpdate(`${p}a`, relabel('db')); // outside: nothing
        const b = await store.create(`${p}b`, labelled('b', 'web'));
        await store.delete(`${p}b`);
        const deletedAt = await store.currentRevision();
        assert.deepEqual((await take(w, 5)).map(brief), [
          ['ADDED', 'a', rvText(enter)],
          ['MODIFIED', 'a', rvText(inside)],
          ['DELETED', 'a', rvText(leave)],
          ['ADDED', 'b', rvText(b)],
          ['DELETED', 'b', String(deletedAt)],
        ]);
        await assertQuiet(w);
      } finally {
        w.stop();
      }
      await store.create(`${p}c`, labelled('c', 'web'));
      const w0 = await store.watch(p, { resourceVersion: '', predicate: web });
      try {
        assert.deepEqual((await take(w0, 1)).map((e) => brief(e).slice(0, 2)), [['ADDED', 'c']]);
        await assertQuiet(w0);
      } finally {
        w0.stop();
      }
    });

    test('an object leaving a predicate\'s selection is DELETED with its last selected state (kube)', async ({ store, p }) => {
      const web: Predicate = (o) => o.metadata.labels?.['app'] === 'web';
      await store.create(`${p}a`, labelled('a', 'web', { n: 0 }));
      const w = await store.watch(p, { resourceVersion: String(await store.currentRevision()), predicate: web });
      try {
        const leave = await store.guaranteedUpdate(`${p}a`, (cur) => ({ ...bump(cur), metadata: { ...cur!.metadata, labels: { app: 'db' } } }));
        const [e] = await take(w, 1);
        assert.deepEqual(brief(e!), ['DELETED', 'a', rvText(leave)]);
        // kube (etcd3 watcher and cacheWatcher): the previous object, with the event's resourceVersion.
        assert.deepEqual(e!.object.metadata.labels, { app: 'web' });
        assert.equal(e!.object['n'], 0);
      } finally {
        w.stop();
      }
    });

    // Compacted by the compactor's path (forceCompaction) or by the interface's own compact():
    // every store, watch caches included, must learn of it.
    test('a watch from a compacted revision yields one Compacted ERROR and ends', async ({ store, etcd: base, p }) => {
      const compactions: Array<[string, (rev: number) => Promise<void>]> = [
        ['forceCompaction', (rev) => forceCompaction(base.client, rev)],
        ['Store.compact', (rev) => store.compact(rev)],
      ];
      for (const [how, compact] of compactions) {
        const dir = `${p}${how}/`;
        await store.create(`${dir}a`, obj('a', { n: 0 }));
        const old = await store.currentRevision();
        await store.create(`${dir}b`, obj('b'));
        await store.guaranteedUpdate(`${dir}a`, bump);
        await compact(await store.currentRevision());
        const w = await store.watch(dir, { resourceVersion: String(old) });
        try {
          const e = await nextWithin(w);
          assert.ok(e, `${how}: an event before the end`);
          assert.equal(e.type, 'ERROR', `${how}: got ${JSON.stringify(brief(e))}`);
          assert.equal(e.type === 'ERROR' && e.error.code, 'Compacted');
          assert.equal(await nextWithin(w), undefined);
        } finally {
          w.stop();
        }
      }
    });

    test('stop() ends a watch: a pending next() and every later one resolve undefined', async ({ store, p }) => {
      const w = await store.watch(p, { resourceVersion: String(await store.currentRevision()) });
      const pending = w.next();
      w.stop();
      assert.equal(await nextWithin(w), undefined);
      assert.equal(await pending, undefined);
      await store.create(`${p}a`, obj('a'));
      await sleep(100);
      assert.equal(w.poll(), undefined);
      assert.equal(await nextWithin(w), undefined);
      // Stopped while streaming initial events.
      for (const n of ['b', 'c']) await store.create(`${p}${n}`, obj(n));
      const wi = await store.watch(p, { resourceVersion: '' });
      await take(wi, 1);
      wi.stop();
      assert.equal(await nextWithin(wi), undefined);
      assert.equal(wi.poll(), undefined);
    });

    test('poll() returns a ready event without waiting, and undefined when none is ready', async ({ store, p }) => {
      const w = await store.watch(p, { resourceVersion: String(await store.currentRevision()) });
      try {
        assert.equal(w.poll(), undefined);
        const a = await store.create(`${p}a`, obj('a'));
        const deadline = Date.now() + 5000;
        let e: WatchEvent | undefined;
        while (!(e = w.poll())) {
          assert.ok(Date.now() < deadline, 'the event became ready');
          await sleep(10);
        }
        assert.deepEqual(brief(e), ['ADDED', 'a', rvText(a)]);
        assert.equal(w.poll(), undefined);
      } finally {
        w.stop();
      }
      await store.create(`${p}b`, obj('b'));
      // Initial events are ready at once.
      const wi = await store.watch(p, { resourceVersion: '' });
      try {
        const polled = [wi.poll(), wi.poll()].map((x) => (x ? brief(x).slice(0, 2) : x));
        assert.deepEqual(polled, [['ADDED', 'a'], ['ADDED', 'b']]);
        assert.equal(wi.poll(), undefined);
      } finally {
        wi.stop();
      }
    });

    test('a watch with bookmarks gets a BOOKMARK now and then', async ({ store, p }) => {
      const from = await store.currentRevision();
      const w = await store.watch(p, { resourceVersion: String(from), bookmarks: true });
      try {
        const elsewhere = await store.create(`${p.slice(0, -1)}-elsewhere/x`, obj('x')); // etcd moves on
        const e = await nextWithin(w, 2000);
        assert.ok(e && e.type === 'BOOKMARK', `a BOOKMARK, got ${e ? JSON.stringify(brief(e)) : 'the end'}`);
        assert.ok(rvOf(e.object) >= rvOf(elsewhere));
      } finally {
        w.stop();
      }
    }, {
      open: { bookmarkIntervalMs: 100 },
      skip: { etcd: 'documented on WatchOptions.bookmarks: a watch served straight from etcd sends no bookmarks (they are never guaranteed)' },
    });

    // --- watcher limits ----------------------------------------------------------------------

    test('initial events are not bounded by the live-event limit', async ({ store, p }) => {
      const keys = Array.from({ length: 50 }, (_, i) => `o${String(i).padStart(2, '0')}`);
      for (let i = 0; i < keys.length; i += 10) {
        await Promise.all(keys.slice(i, i + 10).map((k) => store.create(`${p}${k}`, obj(k))));
      }
      await store.list(p); // a consistent read first: '0' may serve any state
      const w = await store.watch(p, { resourceVersion: '0' });
      try {
        const got: string[] = [];
        for (let i = 0; i < keys.length; i++) {
          const e = await nextWithin(w);
          assert.ok(e && e.type === 'ADDED', `initial event ${i}: ${e ? JSON.stringify(brief(e)) : 'the watch ended'}`);
          got.push(e.object.metadata.name!);
        }
        assert.deepEqual([...got].sort(), keys);
        const late = await store.create(`${p}late`, obj('late'));
        assert.deepEqual((await take(w, 1)).map(brief), [['ADDED', 'late', rvText(late)]]);
      } finally {
        w.stop();
      }
    }, { open: { watcherLimits: { events: 10 } } });

    test('a watcher that does not read is ended past the live-event limit; another gets every event', async ({ store, p }) => {
      const from = String(await store.currentRevision());
      const slow = await store.watch(p, { resourceVersion: from });
      const fast = await store.watch(p, { resourceVersion: from });
      try {
        const total = 30;
        const fastNames: string[] = [];
        const reading = (async () => {
          while (fastNames.length < total) {
            const e = await nextWithin(fast);
            assert.ok(e && e.type === 'ADDED', `fast watcher: ${e ? JSON.stringify(brief(e)) : 'ended'}`);
            fastNames.push(e.object.metadata.name!);
          }
        })();
        const written: string[] = [];
        for (let i = 0; i < total; i++) {
          written.push(`l${String(i).padStart(2, '0')}`);
          await store.create(`${p}${written.at(-1)}`, obj(written.at(-1)!));
        }
        await reading;
        assert.deepEqual(fastNames, written);
        // The slow one: at most what fit in its queue, in order, then the end.
        const slowNames: string[] = [];
        for (;;) {
          const e = await nextWithin(slow);
          if (!e) break;
          assert.ok(e.type === 'ADDED');
          slowNames.push(e.object.metadata.name!);
        }
        assert.ok(slowNames.length <= 10, `the slow watcher got ${slowNames.length} events`);
        assert.deepEqual(slowNames, written.slice(0, slowNames.length));
      } finally {
        slow.stop();
        fast.stop();
      }
    }, { open: { watcherLimits: { events: 10 } } });
  });
}

for (const impl of [etcdStore, watchCache]) storeConformance(impl);
