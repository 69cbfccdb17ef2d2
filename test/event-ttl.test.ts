/**
 * kube-apiserver's `--event-ttl`: Events (one storage, served as core/v1 and events.k8s.io) are
 * written with an etcd lease and disappear on their own once it expires — a DELETED watch event,
 * then 404 — while other resources are kept. Real etcd, in-process plinth with --event-ttl=2s.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { usePlinth } from './harness.js';

const env = usePlinth(['--event-ttl=2s']);
const CORE = '/api/v1/namespaces/default/events';
const V1 = '/apis/events.k8s.io/v1/namespaces/default/events';
const SA = '/api/v1/namespaces/default/serviceaccounts';

test('Events written through core/v1 and events.k8s.io/v1 expire after --event-ttl; a ServiceAccount stays', async () => {
  const c = env.plinth.client;
  const rv = (await c.get(CORE)).body.metadata.resourceVersion;
  const deletedIn = (evs: any[], name: string): boolean => evs.some((e) => e.type === 'DELETED' && e.object.metadata.name === name); // eslint-disable-line @typescript-eslint/no-explicit-any
  // Both expiries seen by a core/v1 watch and by an events.k8s.io/v1 watch (from the watch cache).
  const until = (evs: any[]): boolean => deletedIn(evs, 'core-event') && deletedIn(evs, 'v1-event'); // eslint-disable-line @typescript-eslint/no-explicit-any
  const coreWatch = c.watch(`${CORE}?watch=1&resourceVersion=${rv}`, until, 60_000);
  const v1Watch = c.watch(`${V1}?watch=1&resourceVersion=${rv}`, until, 60_000);

  const sa = await c.post(SA, { metadata: { name: 'stays' } });
  assert.equal(sa.status, 201, sa.raw.toString());
  const core = await c.post(CORE, {
    metadata: { name: 'core-event' },
    involvedObject: { kind: 'ServiceAccount', namespace: 'default', name: 'stays' },
    reason: 'Created',
    message: 'made',
    type: 'Normal',
  });
  assert.equal(core.status, 201, core.raw.toString());
  const v1 = await c.post(V1, {
    metadata: { name: 'v1-event' },
    eventTime: '2022-05-01T10:00:00.000000Z',
    reportingController: 'example.com/ctl',
    reportingInstance: 'i',
    action: 'A',
    reason: 'R',
    regarding: { kind: 'ServiceAccount', namespace: 'default', name: 'stays' },
    type: 'Normal',
  });
  assert.equal(v1.status, 201, v1.raw.toString());

  const [coreEvents, v1Events] = await Promise.all([coreWatch, v1Watch]);
  for (const [events, apiVersion] of [[coreEvents.events, 'v1'], [v1Events.events, 'events.k8s.io/v1']] as const) {
    const seen = events.filter((e) => e.object.metadata.name !== 'stays').map((e) => [e.type, e.object.metadata.name]);
    assert.deepEqual(seen.filter(([t]) => t === 'ADDED').sort(), [['ADDED', 'core-event'], ['ADDED', 'v1-event']], `${apiVersion} watch`);
    assert.ok(until(events), `the ${apiVersion} watch saw both Events DELETED: ${JSON.stringify(seen)}`);
    for (const e of events.filter((x) => x.type === 'DELETED')) assert.equal(e.object.apiVersion, apiVersion);
  }
  for (const path of [`${CORE}/core-event`, `${CORE}/v1-event`, `${V1}/core-event`, `${V1}/v1-event`]) {
    const r = await c.get(path);
    assert.equal(r.status, 404, `${path}: ${r.raw.toString()}`);
    assert.equal(r.body.reason, 'NotFound');
  }
  assert.deepEqual((await c.get(CORE)).body.items, []);
  const kept = await c.get(`${SA}/stays`);
  assert.equal(kept.status, 200, 'the ServiceAccount has no TTL');
  assert.equal(kept.body.metadata.uid, sa.body.metadata.uid);
});

test('an update renews the lease, and the Event then expires too', async () => {
  const c = env.plinth.client;
  const created = await c.post(CORE, { metadata: { name: 'updated' }, involvedObject: { kind: 'Pod', namespace: 'default', name: 'p' }, reason: 'R', type: 'Normal', count: 1 });
  assert.equal(created.status, 201, created.raw.toString());
  const watch = c.watch(`${CORE}?watch=1&resourceVersion=${created.body.metadata.resourceVersion}`, (evs) => evs.some((e) => e.type === 'DELETED'), 60_000);
  const updated = await c.put(`${CORE}/updated`, { ...created.body, count: 2 });
  assert.equal(updated.status, 200, updated.raw.toString());
  const events = (await watch).events.map((e) => [e.type, e.object.count]);
  assert.deepEqual(events, [['MODIFIED', 2], ['DELETED', 2]]);
  assert.equal((await c.get(`${CORE}/updated`)).status, 404);
});
