import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LeaseManager } from './lease-manager.js';

function fake(): { manager: LeaseManager; grants: number[]; clock: { now: number } } {
  const grants: number[] = [];
  const clock = { now: 1_000_000 };
  const manager = new LeaseManager(async (ttl) => {
    grants.push(ttl);
    return String(grants.length);
  }, { now: () => clock.now });
  return { manager, grants, clock };
}

test('a lease is reused within the reuse window (min of 60 s and 5% of the TTL), then a new one is granted', async () => {
  const { manager, grants, clock } = fake();
  assert.equal(await manager.getLease(3600), '1');
  assert.deepEqual(grants, [3660]);
  clock.now += 59_000;
  assert.equal(await manager.getLease(3600), '1', 'still expires less than 60 s after this write would');
  clock.now += 1_000;
  assert.equal(await manager.getLease(3600), '2', 'would expire too soon');
  assert.deepEqual(grants, [3660, 3660]);
});

test('a short TTL has no reuse window: each write gets its own lease', async () => {
  const { manager, grants } = fake();
  assert.equal(await manager.getLease(2), '1');
  assert.equal(await manager.getLease(2), '2');
  assert.deepEqual(grants, [2, 2]);
  // 5% of 10 minutes is 30 s.
  assert.equal(await manager.getLease(600), '3');
  assert.deepEqual(grants, [2, 2, 630]);
});

test('concurrent writers share one grant', async () => {
  const { manager, grants } = fake();
  const ids = await Promise.all([manager.getLease(3600), manager.getLease(3600), manager.getLease(3600)]);
  assert.deepEqual(ids, ['1', '1', '1']);
  assert.equal(grants.length, 1);
});

test('a failed grant fails its writers and the next write tries again', async () => {
  let fail = true;
  const manager = new LeaseManager(async () => {
    if (fail) throw new Error('etcd unavailable');
    return '7';
  });
  await assert.rejects(manager.getLease(60), /etcd unavailable/);
  fail = false;
  assert.equal(await manager.getLease(60), '7');
});
