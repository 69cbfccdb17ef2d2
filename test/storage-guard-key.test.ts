/**
 * Storage's guard key (CreateOptions/UpdateOptions.guardKey) against a real etcd: a create
 * commits only while another key is at the revision held, in the same txn; when that key moved,
 * `recheck` sees it as etcd has it and refuses the create or lets it go again on the new revision.
 * Writes that do not create the key ignore the guard; a dry run writes nothing and checks none.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Etcd3 } from 'etcd3';
import { EtcdStore, isStorageError, type GuardKey } from '@plinth/storage';
import type { StoredObject } from '@plinth/api';
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

const GUARD = '/registry/guards/g';
const obj = (name: string, extra: Record<string, unknown> = {}): StoredObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'ns' }, ...extra });
const key = (name: string): string => `/registry/configmaps/ns/${name}`;

class Refused extends Error {}

/** A guard holding `revision`; its recheck refuses when the guard object says `state: closed`. */
function guard(revision: number, seen: Array<{ state: unknown; revision: number }> = []): GuardKey {
  return {
    key: GUARD,
    revision: () => revision,
    recheck(current, rev) {
      seen.push({ state: current?.['state'], revision: rev });
      if (!current || current['state'] === 'closed') throw new Refused('closed');
    },
  };
}

async function setGuard(state: string): Promise<number> {
  const res = await raw.put(GUARD).value(JSON.stringify(obj('g', { state }))).exec();
  return Number(res.header.revision);
}

test('a create commits while the guard key is at the revision held', async () => {
  const rev = await setGuard('open');
  const seen: Array<{ state: unknown; revision: number }> = [];
  await store.create(key('a'), obj('a'), { guardKey: guard(rev, seen) });
  assert.deepEqual(seen, []);
  assert.ok(await raw.get(key('a')).exec().then((r) => r.kvs.length === 1));
  // A taken key is still KeyExists, whatever the guard.
  await assert.rejects(store.create(key('a'), obj('a'), { guardKey: guard(rev) }), (e) => isStorageError(e, 'KeyExists'));
});

test('a guard key that moved is rechecked: refused, or tried again on its new revision', async () => {
  const old = await setGuard('open');
  const moved = await setGuard('open');
  const seen: Array<{ state: unknown; revision: number }> = [];
  await store.create(key('b'), obj('b'), { guardKey: guard(old, seen) });
  assert.deepEqual(seen, [{ state: 'open', revision: moved }]);
  assert.equal((await raw.get(key('b')).exec()).kvs.length, 1);

  const closed = await setGuard('closed');
  const seen2: Array<{ state: unknown; revision: number }> = [];
  await assert.rejects(store.create(key('c'), obj('c'), { guardKey: guard(moved, seen2) }), Refused);
  assert.deepEqual(seen2, [{ state: 'closed', revision: closed }]);
  assert.equal((await raw.get(key('c')).exec()).kvs.length, 0, 'nothing written');

  await raw.delete().key(GUARD).exec();
  const seen3: Array<{ state: unknown; revision: number }> = [];
  await assert.rejects(store.create(key('d'), obj('d'), { guardKey: guard(closed, seen3) }), Refused);
  assert.deepEqual(seen3, [{ state: undefined, revision: 0 }]);
});

test('guaranteedUpdate holds the guard only when it creates the key; a dry run checks none', async () => {
  const open = await setGuard('open');
  await setGuard('closed');
  // Creating through guaranteedUpdate (create on update, apply): refused.
  await assert.rejects(store.guaranteedUpdate(key('e'), () => obj('e'), { ignoreNotFound: true, guardKey: guard(open) }), Refused);
  assert.equal((await raw.get(key('e')).exec()).kvs.length, 0);
  // Updating an existing object: the guard does not matter.
  await store.create(key('f'), obj('f'));
  const updated = await store.guaranteedUpdate(key('f'), (cur) => ({ ...cur!, data: { x: '1' } }), { ignoreNotFound: true, guardKey: guard(open) });
  assert.deepEqual(updated['data'], { x: '1' });
  // A dry-run create writes nothing and never asks the guard.
  const asked: GuardKey = { key: GUARD, revision: () => assert.fail('revision asked on a dry run'), recheck: () => assert.fail('recheck on a dry run') };
  await store.create(key('g'), obj('g'), { dryRun: true, guardKey: asked });
});
