/**
 * Watches the watch cache files under its index (kube's TriggerFunc: pods by spec.nodeName; nodes,
 * ConfigMaps and Secrets by metadata.name; storage/watcher-set.ts): each sees exactly what a
 * selector watch must — an object entering the selection ADDED, its changes MODIFIED, leaving or
 * gone DELETED — and nothing of the objects filed under other values.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { usePlinth } from './harness.js';
import { expectCode } from './assertions.js';

const env = usePlinth();
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

type Event = { type: string; object: { metadata: { name: string; namespace?: string }; spec?: { nodeName?: string }; status?: { phase?: string } } };
const summary = (events: Event[]): string[] => events.filter((e) => e.type !== 'BOOKMARK').map((e) => `${e.type} ${e.object.metadata.namespace ?? ''}/${e.object.metadata.name}`);

/** The collection's resourceVersion now (a watch from it replays what follows). */
async function rvOf(path: string): Promise<string> {
  const r = await env.plinth.client.get(`${path}?limit=1`);
  expectCode(r, 200);
  return (r.body as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
}

/** Opens a watch now and gives its events once `count` non-bookmark events came (or 10 s passed). */
function watchFor(path: string, count: number): Promise<Event[]> {
  return env.plinth.client.watch(path, (evs: Event[]) => evs.filter((e) => e.type !== 'BOOKMARK').length >= count).then((r) => {
    assert.equal(r.status, 200);
    return r.events as Event[];
  });
}

describe('watches filed under the watch cache index', () => {
  it('pods by spec.nodeName: bound ADDED, changed MODIFIED, deleted DELETED; other nodes\' pods never', async () => {
    const c = env.plinth.client;
    const pods = '/api/v1/namespaces/default/pods';
    const rv = await rvOf('/api/v1/pods');
    const sel = (v: string): string => `/api/v1/pods?watch=1&resourceVersion=${rv}&fieldSelector=${encodeURIComponent(`spec.nodeName=${v}`)}`;
    // Live watches (opened before the writes) and, below, the same from history.
    const node1 = watchFor(sel('idx-node-1'), 5);
    const node2 = watchFor(sel('idx-node-2'), 1);
    const labelled = watchFor(`${sel('idx-node-1')}&labelSelector=app%3Done`, 2);
    const unbound = watchFor(sel(''), 4);
    await sleep(500);
    for (const [name, app] of [['idx-a', 'one'], ['idx-b', 'two'], ['idx-c', 'two']] as const) {
      expectCode(await c.post(pods, { apiVersion: 'v1', kind: 'Pod', metadata: { name, labels: { app } }, spec: { containers: [{ name: 'c', image: 'busybox' }] } }), 201);
    }
    for (const [name, node] of [['idx-a', 'idx-node-1'], ['idx-b', 'idx-node-2'], ['idx-c', 'idx-node-1']] as const) {
      expectCode(await c.post(`${pods}/${name}/binding`, { apiVersion: 'v1', kind: 'Binding', metadata: { name }, target: { kind: 'Node', name: node } }), 201);
    }
    const status = await c.request('PATCH', `${pods}/idx-a/status`, { body: { status: { phase: 'Running' } }, headers: { 'content-type': 'application/merge-patch+json' } });
    expectCode(status, 200);
    expectCode(await c.delete(`${pods}/idx-c?gracePeriodSeconds=0`), 200);

    // A bound pod deleted with grace 0 gets its deletionTimestamp first, then goes (kube's store).
    const want1 = ['ADDED default/idx-a', 'ADDED default/idx-c', 'MODIFIED default/idx-a', 'MODIFIED default/idx-c', 'DELETED default/idx-c'];
    assert.deepEqual(summary(await node1), want1);
    assert.deepEqual(summary(await node2), ['ADDED default/idx-b']);
    // The label selector still applies within the index value.
    assert.deepEqual(summary(await labelled), ['ADDED default/idx-a', 'MODIFIED default/idx-a']);
    // Unbound pods (the empty value): created ADDED, bound DELETED (they leave the selection).
    const u = await unbound;
    assert.deepEqual(summary(u).slice(0, 3), ['ADDED default/idx-a', 'ADDED default/idx-b', 'ADDED default/idx-c']);
    assert.equal(summary(u)[3], 'DELETED default/idx-a');
    assert.equal(u.filter((e) => e.type !== 'BOOKMARK')[3]!.object.spec?.nodeName ?? '', '', 'a pod leaving the selection is sent as it was before');
    // The same from history (a watch resuming from the resourceVersion).
    assert.deepEqual(summary(await watchFor(sel('idx-node-1'), 5)), want1);
  });

  it('nodes, ConfigMaps and Secrets by metadata.name: only the named object, in the watched namespace', async () => {
    const c = env.plinth.client;
    const nodesRv = await rvOf('/api/v1/nodes');
    const nodeWatch = watchFor(`/api/v1/nodes?watch=1&resourceVersion=${nodesRv}&fieldSelector=metadata.name%3Didx-n1`, 2);
    expectCode(await c.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'idx-other' } }), 201);
    const cmRv = await rvOf('/api/v1/configmaps');
    const cmWatch = watchFor(`/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=${cmRv}&fieldSelector=metadata.name%3Didx-cm`, 2);
    const secretWatch = watchFor(`/api/v1/secrets?watch=1&resourceVersion=${cmRv}&fieldSelector=metadata.name%3Didx-s`, 2);
    await sleep(500);
    for (const name of ['idx-n1', 'idx-n2']) expectCode(await c.post('/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name } }), 201);
    for (const name of ['idx-n2', 'idx-n1']) {
      expectCode(await c.request('PATCH', `/api/v1/nodes/${name}`, { body: { metadata: { labels: { touched: 'yes' } } }, headers: { 'content-type': 'application/merge-patch+json' } }), 200);
    }
    for (const ns of ['idx-other', 'default']) {
      expectCode(await c.post(`/api/v1/namespaces/${ns}/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'idx-cm' }, data: { a: ns } }), 201);
      expectCode(await c.post(`/api/v1/namespaces/${ns}/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'idx-cm2' } }), 201);
      expectCode(await c.post(`/api/v1/namespaces/${ns}/secrets`, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'idx-s' } }), 201);
    }
    expectCode(await c.delete('/api/v1/namespaces/default/configmaps/idx-cm'), 200);

    assert.deepEqual(summary(await nodeWatch), ['ADDED /idx-n1', 'MODIFIED /idx-n1']);
    assert.deepEqual(summary(await cmWatch), ['ADDED default/idx-cm', 'DELETED default/idx-cm']);
    // Cluster-wide: the same name in both namespaces.
    assert.deepEqual(summary(await secretWatch), ['ADDED idx-other/idx-s', 'ADDED default/idx-s']);
  });
});
