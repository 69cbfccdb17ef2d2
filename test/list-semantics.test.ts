/**
 * The spec's list and get tables (resourceVersionMatch × paging × resourceVersion), cell by
 * cell, with the watch cache on and off, against a real etcd: 200s with the promised versions,
 * 422 for invalid combinations, 400 for a continue with a version, 504 for a version not reached,
 * 410 once compacted.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { forceCompaction } from '@plinth/storage';
import { eventually, startInProcess, startTestEtcd, type InProcessPlinth, type Response, type TestEtcd } from './harness.js';

const NS = 'rv';
const SA = `/api/v1/namespaces/${NS}/serviceaccounts`;
const FUTURE = '999999999';

function expectStatus(r: Response, code: number, reason: string, message?: RegExp): void {
  assert.equal(r.status, code, `expected ${code} ${reason}, got ${r.status}: ${r.raw.toString()}`);
  assert.equal(r.body.kind, 'Status');
  assert.equal(r.body.reason, reason);
  if (message) assert.match(r.body.message, message);
}

function expectTooLarge(r: Response, requested: string): void {
  expectStatus(r, 504, 'Timeout', new RegExp(`^Timeout: Too large resource version: ${requested}, current: \\d+$`));
  assert.equal(r.headers['retry-after'], '1');
  assert.equal(r.body.details.retryAfterSeconds, 1);
  assert.equal(r.body.details.causes[0].reason, 'ResourceVersionTooLarge');
}

for (const mode of ['watch cache', 'etcd only'] as const) {
  describe(`list/get resourceVersion semantics (${mode})`, () => {
    let etcd: TestEtcd;
    let plinth: InProcessPlinth;
    /** The list resourceVersion after sa-0..2 existed. */
    let rvOld: string;
    const names = (r: Response): string[] => r.body.items.map((i: { metadata: { name: string } }) => i.metadata.name).filter((n: string) => n !== 'default');
    const list = (q: string): Promise<Response> => plinth.client.get(`${SA}?${q}`);

    before(async () => {
      etcd = await startTestEtcd();
      plinth = await startInProcess({ etcd, args: mode === 'etcd only' ? ['--watch-cache=false'] : [] });
      assert.equal((await plinth.client.post('/api/v1/namespaces', { metadata: { name: NS } })).status, 201);
      // The namespace's `default` ServiceAccount comes first, so the versions below are stable.
      await eventually(async () => (await plinth.client.get(`${SA}/default`)).status === 200, 10_000, 'default SA');
      for (let i = 0; i < 3; i++) assert.equal((await plinth.client.post(SA, { metadata: { name: `sa-${i}` } })).status, 201);
      rvOld = (await list('')).body.metadata.resourceVersion;
      for (let i = 3; i < 5; i++) assert.equal((await plinth.client.post(SA, { metadata: { name: `sa-${i}` } })).status, 201);
    });

    after(async () => {
      await plinth.stop();
      await etcd.stop();
    });

    test('unset match, no limit: Most Recent | Any | Not older than (504 when not reached)', async () => {
      const recent = await list('');
      assert.equal(recent.status, 200);
      assert.deepEqual(names(recent), ['sa-0', 'sa-1', 'sa-2', 'sa-3', 'sa-4']);
      assert.ok(Number(recent.body.metadata.resourceVersion) >= Number(rvOld));
      assert.equal(recent.body.metadata.continue, '');
      assert.equal(recent.body.metadata.remainingItemCount, undefined);
      const any = await list('resourceVersion=0');
      assert.equal(any.status, 200);
      assert.ok(names(any).length >= 3);
      const notOlder = await list(`resourceVersion=${rvOld}`);
      assert.equal(notOlder.status, 200);
      assert.ok(Number(notOlder.body.metadata.resourceVersion) >= Number(rvOld));
      assert.deepEqual(names(notOlder), ['sa-0', 'sa-1', 'sa-2', 'sa-3', 'sa-4']);
      expectTooLarge(await list(`resourceVersion=${FUTURE}`), FUTURE);
    });

    test('unset match, limit, no continue: Most Recent | Any | Exact', async () => {
      const recent = await list('limit=2');
      assert.equal(recent.status, 200);
      assert.deepEqual(recent.body.items.map((i: { metadata: { name: string } }) => i.metadata.name), ['default', 'sa-0']);
      assert.equal(recent.body.items.length, 2);
      assert.ok(recent.body.metadata.continue);
      assert.equal(recent.body.metadata.remainingItemCount, 4);
      assert.equal((await list('limit=2&resourceVersion=0')).status, 200);
      const exact = await list(`limit=10&resourceVersion=${rvOld}`);
      assert.equal(exact.status, 200);
      assert.equal(exact.body.metadata.resourceVersion, rvOld);
      assert.deepEqual(names(exact), ['sa-0', 'sa-1', 'sa-2'], 'the collection as it was at rvOld');
      expectTooLarge(await list(`limit=2&resourceVersion=${FUTURE}`), FUTURE);
    });

    test('unset match, limit and continue: Continue Token, Exact | treated as continue | 400', async () => {
      const first = await list('limit=2');
      const token = encodeURIComponent(first.body.metadata.continue);
      const second = await list(`limit=2&continue=${token}`);
      assert.equal(second.status, 200);
      assert.equal(second.body.metadata.resourceVersion, first.body.metadata.resourceVersion);
      const zero = await list(`limit=2&continue=${token}&resourceVersion=0`);
      assert.equal(zero.status, 200);
      assert.deepEqual(names(zero), names(second));
      expectStatus(await list(`limit=2&continue=${token}&resourceVersion=${rvOld}`), 400, 'BadRequest', /^specifying resource version is not allowed when using continue$/);
      expectStatus(await list('limit=2&continue=not-a-token'), 400, 'BadRequest', /continue/);
    });

    test('Exact, with and without limit: Invalid | Invalid | Exact', async () => {
      for (const limit of ['', '&limit=3']) {
        const noRv = await list(`resourceVersionMatch=Exact${limit}`);
        expectStatus(noRv, 422, 'Invalid', /^ListOptions\.meta\.k8s\.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided$/);
        assert.equal(noRv.body.details.causes[0].field, 'resourceVersionMatch');
        expectStatus(await list(`resourceVersionMatch=Exact&resourceVersion=0${limit}`), 422, 'Invalid', /resourceVersionMatch "exact" is forbidden for resourceVersion "0"/);
        const exact = await list(`resourceVersionMatch=Exact&resourceVersion=${rvOld}${limit}`);
        assert.equal(exact.status, 200);
        assert.equal(exact.body.metadata.resourceVersion, rvOld);
        assert.deepEqual(names(exact), limit ? ['sa-0', 'sa-1'] : ['sa-0', 'sa-1', 'sa-2']);
      }
      expectTooLarge(await list(`resourceVersionMatch=Exact&resourceVersion=${FUTURE}`), FUTURE);
    });

    test('NotOlderThan, with and without limit: Invalid | Any | Not older than', async () => {
      for (const limit of ['', '&limit=3']) {
        expectStatus(await list(`resourceVersionMatch=NotOlderThan${limit}`), 422, 'Invalid', /resourceVersionMatch is forbidden unless resourceVersion is provided/);
        assert.equal((await list(`resourceVersionMatch=NotOlderThan&resourceVersion=0${limit}`)).status, 200);
        const r = await list(`resourceVersionMatch=NotOlderThan&resourceVersion=${rvOld}${limit}`);
        assert.equal(r.status, 200);
        assert.ok(Number(r.body.metadata.resourceVersion) >= Number(rvOld));
        assert.ok(names(r).includes('sa-0'));
        expectTooLarge(await list(`resourceVersionMatch=NotOlderThan&resourceVersion=${FUTURE}${limit}`), FUTURE);
      }
    });

    test('invalid match values and versions are rejected', async () => {
      const bad = await list('resourceVersion=1&resourceVersionMatch=Newest');
      expectStatus(bad, 422, 'Invalid', /resourceVersionMatch: Unsupported value: "Newest": supported values: "Exact", "NotOlderThan", ""/);
      expectStatus(await list('resourceVersionMatch=Exact&resourceVersion=1&continue=abc'), 422, 'Invalid', /resourceVersionMatch is forbidden when continue is provided/);
      expectStatus(await list('resourceVersion=abc'), 400, 'BadRequest');
    });

    test('get: Most Recent | Any | Not older than (504 when not reached)', async () => {
      const recent = await plinth.client.get(`${SA}/sa-0`);
      assert.equal(recent.status, 200);
      assert.equal((await plinth.client.get(`${SA}/sa-0?resourceVersion=0`)).status, 200);
      assert.equal((await plinth.client.get(`${SA}/sa-0?resourceVersion=${rvOld}`)).status, 200);
      expectTooLarge(await plinth.client.get(`${SA}/sa-0?resourceVersion=${FUTURE}`), FUTURE);
      // A write is seen by the next get without a version (linearizable through the cache).
      const updated = await plinth.client.put(`${SA}/sa-0`, { ...recent.body, metadata: { ...recent.body.metadata, labels: { seen: 'yes' } } });
      assert.equal(updated.status, 200);
      const after = await plinth.client.get(`${SA}/sa-0`);
      assert.equal(after.body.metadata.resourceVersion, updated.body.metadata.resourceVersion);
      assert.deepEqual(after.body.metadata.labels, { seen: 'yes' });
    });

    test('after a forced compaction: Exact at a compacted version and old continue tokens are 410', async () => {
      const first = await list('limit=2');
      const exactBefore = rvOld;
      await plinth.client.post(SA, { metadata: { name: 'sa-late' } });
      await forceCompaction(plinth.server.storage.client, await plinth.server.storage.currentRevision());
      const expired = await list(`limit=2&continue=${encodeURIComponent(first.body.metadata.continue)}`);
      expectStatus(expired, 410, 'Expired', /^The provided continue parameter is too old to display a consistent list result\./);
      assert.ok(expired.body.metadata.continue, 'kube offers an inconsistent continue token');
      const resumed = await list(`limit=2&continue=${encodeURIComponent(expired.body.metadata.continue)}`);
      assert.equal(resumed.status, 200);
      expectStatus(await list(`resourceVersionMatch=Exact&resourceVersion=${exactBefore}`), 410, 'Expired', /^The resourceVersion for the provided list is too old\.$/);
      expectStatus(await list(`limit=2&resourceVersion=${exactBefore}`), 410, 'Expired');
      // Not-older-than reads at an old version still answer (with newer data).
      assert.equal((await list(`resourceVersion=${exactBefore}`)).status, 200);
    });
  });
}
