/** Watch semantics, with the watch cache on and off: the spec's "Watch" and "Events" sections. */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { forceCompaction } from '@plinth/storage';
import { eventually, startInProcess, startTestEtcd, type InProcessPlinth, type TestEtcd } from './harness.js';

type Ev = { type: string; object: { kind?: string; metadata: { name?: string; resourceVersion: string; finalizers?: string[]; labels?: Record<string, string> }; code?: number; reason?: string; message?: string } };

for (const mode of ['watch cache', 'etcd only'] as const) {
  describe(`watch (${mode})`, () => {
    let etcd: TestEtcd;
    let plinth: InProcessPlinth;
    let n = 0;
    /** A fresh namespace per test, with its default SA already there. */
    const ns = async (): Promise<string> => {
      const name = `w${++n}`;
      assert.equal((await plinth.client.post('/api/v1/namespaces', { metadata: { name } })).status, 201);
      await eventually(async () => (await plinth.client.get(`/api/v1/namespaces/${name}/serviceaccounts/default`)).status === 200, 10_000, 'default SA');
      return name;
    };
    const sa = (namespace: string): string => `/api/v1/namespaces/${namespace}/serviceaccounts`;
    const names = (evs: Ev[]): string[] => evs.map((e) => `${e.type}:${e.object.metadata.name ?? ''}`);

    before(async () => {
      etcd = await startTestEtcd();
      plinth = await startInProcess({ etcd, args: mode === 'etcd only' ? ['--watch-cache=false'] : [] });
    });

    after(async () => {
      await plinth.stop();
      await etcd.stop();
    });

    test('unset and 0 start with synthetic ADDED events; a version starts exactly after it', async () => {
      const space = await ns();
      await plinth.client.post(sa(space), { metadata: { name: 'a' } });
      const rv = (await plinth.client.get(sa(space))).body.metadata.resourceVersion;
      for (const q of ['', '&resourceVersion=0']) {
        const w = await plinth.client.watch(`${sa(space)}?watch=1${q}`, (evs) => evs.length >= 2, 5000);
        assert.equal(w.status, 200);
        assert.deepEqual(names(w.events as Ev[]).sort(), ['ADDED:a', 'ADDED:default']);
      }
      const pending = plinth.client.watch(`${sa(space)}?watch=1&resourceVersion=${rv}`, (evs) => evs.length >= 3, 10_000);
      await plinth.client.post(sa(space), { metadata: { name: 'b' } });
      const b = (await plinth.client.get(`${sa(space)}/b`)).body;
      await plinth.client.put(`${sa(space)}/b`, { ...b, metadata: { ...b.metadata, labels: { x: 'y' } } });
      await plinth.client.delete(`${sa(space)}/b`);
      const w = await pending;
      assert.deepEqual(names(w.events as Ev[]), ['ADDED:b', 'MODIFIED:b', 'DELETED:b']);
      const rvs = (w.events as Ev[]).map((e) => Number(e.object.metadata.resourceVersion));
      assert.ok(rvs[0]! > Number(rv) && rvs[0]! < rvs[1]! && rvs[1]! < rvs[2]!, 'each event carries its own, increasing version');
      assert.deepEqual((w.events as Ev[])[2]!.object.metadata.labels, { x: 'y' }, 'DELETED carries the last state');
    });

    test('the legacy /watch/ path on one object watches only that object', async () => {
      const space = await ns();
      await plinth.client.post(sa(space), { metadata: { name: 'one' } });
      await plinth.client.post(sa(space), { metadata: { name: 'other' } });
      const w = await plinth.client.watch(`/api/v1/watch/namespaces/${space}/serviceaccounts/one?timeoutSeconds=1`, () => false, 5000);
      assert.equal(w.status, 200);
      assert.deepEqual(names(w.events as Ev[]), ['ADDED:one']);
    });

    test('timeoutSeconds ends the stream', async () => {
      const space = await ns();
      const w = await plinth.client.watch(`${sa(space)}?watch=1&timeoutSeconds=1`, () => false, 10_000);
      assert.equal(w.status, 200);
      assert.deepEqual(names(w.events as Ev[]), ['ADDED:default']);
    });

    test('selectors: entering the selection is ADDED, leaving it is DELETED', async () => {
      const space = await ns();
      const rv = (await plinth.client.get(sa(space))).body.metadata.resourceVersion;
      const pending = plinth.client.watch(`${sa(space)}?watch=1&resourceVersion=${rv}&labelSelector=team%3Dblue`, (evs) => evs.length >= 3, 10_000);
      await plinth.client.post(sa(space), { metadata: { name: 'c', labels: { team: 'red' } } });
      const c = (await plinth.client.get(`${sa(space)}/c`)).body;
      const blue = await plinth.client.put(`${sa(space)}/c`, { ...c, metadata: { ...c.metadata, labels: { team: 'blue' } } });
      await plinth.client.put(`${sa(space)}/c`, { ...blue.body, metadata: { ...blue.body.metadata, labels: { team: 'blue', more: 'x' } } });
      const again = (await plinth.client.get(`${sa(space)}/c`)).body;
      await plinth.client.put(`${sa(space)}/c`, { ...again, metadata: { ...again.metadata, labels: { team: 'green' } } });
      const w = await pending;
      assert.deepEqual(names(w.events as Ev[]), ['ADDED:c', 'MODIFIED:c', 'DELETED:c']);
      // kube's cacheWatcher: an object leaving the selection is DELETED as it was before, with the
      // event's resourceVersion.
      const left = (w.events as Ev[])[2]!.object;
      assert.deepEqual(left.metadata.labels, { team: 'blue', more: 'x' });
      assert.equal(left.metadata.resourceVersion, (await plinth.client.get(`${sa(space)}/c`)).body.metadata.resourceVersion);
      const byName = await plinth.client.watch(`${sa(space)}?watch=1&fieldSelector=metadata.name%3Dc`, (evs) => evs.length >= 1, 5000);
      assert.deepEqual(names(byName.events as Ev[]), ['ADDED:c']);
    });

    test('removing the last finalizer is MODIFIED then DELETED with the last state', async () => {
      const space = await ns();
      await plinth.client.post(sa(space), { metadata: { name: 'f', finalizers: ['example.com/hold'] } });
      const rv = (await plinth.client.get(`${sa(space)}/f`)).body.metadata.resourceVersion;
      const pending = plinth.client.watch(`${sa(space)}?watch=1&resourceVersion=${rv}`, (evs) => evs.length >= 3, 10_000);
      const deleting = await plinth.client.delete(`${sa(space)}/f`);
      assert.ok(deleting.body.metadata.deletionTimestamp);
      await plinth.client.put(`${sa(space)}/f`, { ...deleting.body, metadata: { ...deleting.body.metadata, finalizers: [] } });
      const w = await pending;
      assert.deepEqual(names(w.events as Ev[]), ['MODIFIED:f', 'MODIFIED:f', 'DELETED:f']);
      const last = (w.events as Ev[])[2]!.object;
      assert.equal(last.metadata.finalizers, undefined);
    });

    test('BOOKMARK events only with allowWatchBookmarks=true, carrying only a resourceVersion', async () => {
      const space = await ns();
      const rv = (await plinth.client.get(sa(space))).body.metadata.resourceVersion;
      const withBookmarks = plinth.client.watch(`${sa(space)}?watch=1&resourceVersion=${rv}&allowWatchBookmarks=true`, (evs) => evs.some((e) => e.type === 'BOOKMARK'), 15_000);
      const without = plinth.client.watch(`${sa(space)}?watch=1&resourceVersion=${rv}&timeoutSeconds=6`, () => false, 15_000);
      // Writes elsewhere move etcd's revision past this watch's last event.
      const other = await ns();
      await plinth.client.post(sa(other), { metadata: { name: 'elsewhere' } });
      const w = await withBookmarks;
      const bm = (w.events as Ev[]).find((e) => e.type === 'BOOKMARK');
      if (mode === 'watch cache') {
        assert.ok(bm, 'a BOOKMARK arrived');
        assert.deepEqual(Object.keys(bm!.object).sort(), ['apiVersion', 'kind', 'metadata']);
        assert.equal(bm!.object.kind, 'ServiceAccount');
        assert.deepEqual(Object.keys(bm!.object.metadata), ['resourceVersion']);
        assert.ok(Number(bm!.object.metadata.resourceVersion) > Number(rv));
      }
      // Straight from etcd there are no bookmarks (the spec allows none at all).
      assert.ok(!(await without).events.some((e: Ev) => e.type === 'BOOKMARK'));
    });

    test('a watch from a compacted version gets 200 and one ERROR event: 410 Expired', async () => {
      const space = await ns();
      const old = (await plinth.client.get(sa(space))).body.metadata.resourceVersion;
      await plinth.client.post(sa(space), { metadata: { name: 'x1' } });
      await plinth.client.post(sa(space), { metadata: { name: 'x2' } });
      await forceCompaction(plinth.server.storage.client, await plinth.server.storage.currentRevision());
      const w = await plinth.client.watch(`${sa(space)}?watch=1&resourceVersion=${old}`, (evs) => evs.length >= 1, 10_000);
      assert.equal(w.status, 200);
      assert.equal(w.events.length, 1);
      const e = w.events[0] as Ev;
      assert.equal(e.type, 'ERROR');
      assert.equal(e.object.kind, 'Status');
      assert.equal(e.object.code, 410);
      assert.equal(e.object.reason, 'Expired');
      assert.match(e.object.message!, new RegExp(`^too old resource version: ${old} \\(\\d+\\)$`));
    });
  });
}
