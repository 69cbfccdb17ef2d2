/**
 * Leader election and API server identity across three plinth processes on one etcd: one Lease
 * (kube-system/plinth-apiserver) names the replica that runs the singleton controllers, a killed
 * leader is replaced within the lease duration, a stopped one hands over at once; each replica
 * renews an `apiserver-<id>` identity Lease and expired ones are deleted; with several replicas a
 * CRD is Established only once every replica serves it.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { eventually, startInProcess, startProcess, startTestEtcd, tempDir, type PlinthProcess, type TestEtcd } from './harness.js';

const LEASE = '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases';
const LEASE_SECONDS = 6;
const ELECTION = [`--leader-elect-lease-duration=${LEASE_SECONDS}s`, '--leader-elect-renew-deadline=4s', '--leader-elect-retry-period=1s'];
const MICRO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

let etcd: TestEtcd;
let replicas: PlinthProcess[] = [];

/** The identity a process logged when it became leader, in order. */
function leaderships(p: PlinthProcess): string[] {
  return [...p.output().matchAll(/leader election: became leader.*?"identity":"([^"]+)"/g)].map((m) => m[1]!);
}

/** Which live replica holds the election Lease now (by the identity it logged). */
async function currentLeader(live: PlinthProcess[]): Promise<{ replica: PlinthProcess; lease: any }> {
  return eventually(async () => {
    const lease = (await live[0]!.client.get(`${LEASE}/plinth-apiserver`)).body;
    const holder = lease?.spec?.holderIdentity;
    const replica = live.find((p) => leaderships(p).includes(holder));
    return replica && { replica, lease };
  }, 30_000, 'a leader among the live replicas');
}

before(async () => {
  etcd = await startTestEtcd();
  for (let i = 0; i < 3; i++) replicas.push(await startProcess(tempDir('plinth-le-'), [`--etcd-servers=${etcd.endpoint}`, ...ELECTION]));
});

after(async () => {
  await Promise.all(replicas.map((p) => p.stop('SIGKILL')));
  await etcd.stop();
});

test('exactly one replica leads, recorded in a coordination.k8s.io/v1 Lease as client-go records it', async () => {
  const { replica, lease } = await currentLeader(replicas);
  assert.equal(replicas.filter((p) => leaderships(p).length > 0).length, 1, 'one replica ever became leader');
  assert.equal(lease.spec.leaseDurationSeconds, LEASE_SECONDS);
  assert.match(lease.spec.holderIdentity, /^[^_]+_[0-9a-f-]{36}$/, 'client-go identity: <hostname>_<uuid>');
  assert.match(lease.spec.acquireTime, MICRO_TIME);
  assert.match(lease.spec.renewTime, MICRO_TIME);
  assert.equal(lease.spec.leaseTransitions, 0);
  // The leader renews every retry period: the renew time moves, the holder stays.
  const renewed = await eventually(async () => {
    const l = (await replica.client.get(`${LEASE}/plinth-apiserver`)).body;
    return l.spec.renewTime !== lease.spec.renewTime && l;
  }, 10_000, 'a renewal');
  assert.equal(renewed.spec.holderIdentity, lease.spec.holderIdentity);
  assert.equal(renewed.spec.acquireTime, lease.spec.acquireTime);
});

test('every replica renews its own identity Lease apiserver-<id>', async () => {
  const leases = await eventually(async () => {
    const list = (await replicas[1]!.client.get(`${LEASE}?labelSelector=${encodeURIComponent('apiserver.kubernetes.io/identity=kube-apiserver')}`)).body;
    return list.items.length === 3 && list.items;
  }, 20_000, 'three identity leases');
  const names = new Set<string>();
  for (const l of leases) {
    assert.match(l.metadata.name, /^apiserver-[0-9a-f]{16}$/);
    assert.ok(l.spec.holderIdentity.startsWith(`${l.metadata.name}_`), `holder ${l.spec.holderIdentity} starts with the lease name`);
    assert.equal(l.spec.leaseDurationSeconds, 3600);
    assert.match(l.spec.renewTime, MICRO_TIME);
    assert.ok(l.metadata.labels['kubernetes.io/hostname']);
    names.add(l.metadata.name);
  }
  assert.equal(names.size, 3);
  // Renewed every 10 s.
  const first = leases[0];
  await eventually(async () => (await replicas[0]!.client.get(`${LEASE}/${first.metadata.name}`)).body.spec.renewTime !== first.spec.renewTime, 25_000, 'an identity lease renewal');
});

test('expired identity Leases are deleted by the survivors; live ones stay', async () => {
  const client = replicas[2]!.client;
  const lease = (name: string, renewedMsAgo: number): object => ({
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name, labels: { 'apiserver.kubernetes.io/identity': 'kube-apiserver' } },
    spec: { holderIdentity: `${name}_gone`, leaseDurationSeconds: 3600, renewTime: new Date(Date.now() - renewedMsAgo).toISOString().replace('Z', '000Z') },
  });
  assert.equal((await client.post(LEASE, lease('apiserver-0000000000dead00', 2 * 3600_000))).status, 201);
  assert.equal((await client.post(LEASE, lease('apiserver-00000000a11ve000', 60_000))).status, 201);
  // An expired lease without the identity label is not an API server's: left alone.
  assert.equal((await client.post(LEASE, { ...lease('not-an-apiserver', 2 * 3600_000), metadata: { name: 'not-an-apiserver' } })).status, 201);
  await eventually(async () => (await client.get(`${LEASE}/apiserver-0000000000dead00`)).status === 404, 30_000, 'the expired identity lease deleted');
  assert.equal((await client.get(`${LEASE}/apiserver-00000000a11ve000`)).status, 200);
  assert.equal((await client.get(`${LEASE}/not-an-apiserver`)).status, 200);
  await client.delete(`${LEASE}/apiserver-00000000a11ve000`);
});

test('with several replicas a CRD is Established only once every replica serves it', async () => {
  const crds = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
  const created = await replicas[0]!.client.post(crds, {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'gizmos.le.example.com' },
    spec: {
      group: 'le.example.com',
      scope: 'Namespaced',
      names: { plural: 'gizmos', singular: 'gizmo', kind: 'Gizmo', listKind: 'GizmoList' },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
    },
  });
  assert.equal(created.status, 201);
  const seen = new Set<string>();
  await eventually(async () => {
    const crd = (await replicas[1]!.client.get(`${crds}/gizmos.le.example.com`)).body;
    const est = crd.status?.conditions?.find((c: { type: string }) => c.type === 'Established');
    if (est) seen.add(`${est.status}/${est.reason}`);
    return est?.status === 'True';
  }, 30_000, 'Established');
  // kube's establishing controller in HA: Installing first, Established 5 s later.
  assert.ok(seen.has('False/Installing'), `Installing was observed before Established (saw ${[...seen].join(', ')})`);
  for (const p of replicas) {
    const res = await p.client.get('/apis/le.example.com/v1/namespaces/default/gizmos');
    assert.equal(res.status, 200, `replica serves gizmos once Established (${res.status})`);
  }
});

test('a killed leader is replaced within the lease duration; a stopped one hands over at once', async () => {
  const first = await currentLeader(replicas);
  const killedAt = Date.now();
  await first.replica.stop('SIGKILL');
  let live = replicas.filter((p) => p !== first.replica);
  const second = await currentLeader(live);
  const takeoverMs = Date.now() - killedAt;
  console.log(`# leader killed (SIGKILL): replaced after ${takeoverMs} ms (lease duration ${LEASE_SECONDS} s)`);
  assert.notEqual(second.lease.spec.holderIdentity, first.lease.spec.holderIdentity);
  assert.equal(second.lease.spec.leaseTransitions, first.lease.spec.leaseTransitions + 1);
  // Within the lease duration after the last renewal it saw, plus a retry period (and slack for a loaded machine).
  assert.ok(takeoverMs < 2 * LEASE_SECONDS * 1000, `takeover after ${takeoverMs} ms`);

  // The new leader runs the singleton controllers: a namespace deleted through the other
  // replica is finalized.
  const other = live.find((p) => p !== second.replica)!;
  assert.equal((await other.client.post('/api/v1/namespaces', { metadata: { name: 'le-ns' } })).status, 201);
  assert.equal((await other.client.delete('/api/v1/namespaces/le-ns')).status, 200);
  await eventually(async () => (await other.client.get('/api/v1/namespaces/le-ns')).status === 404, 20_000, 'the namespace finalized by the new leader');

  // Graceful stop: the Lease is released (client-go's ReleaseOnCancel), the last replica takes over
  // without waiting out the lease duration.
  const stoppedAt = Date.now();
  await second.replica.stop('SIGTERM');
  live = live.filter((p) => p !== second.replica);
  const third = await currentLeader(live);
  const handoverMs = Date.now() - stoppedAt;
  console.log(`# leader stopped (SIGTERM): handed over after ${handoverMs} ms`);
  assert.equal(third.replica, other);
  assert.equal(third.lease.spec.leaseTransitions, second.lease.spec.leaseTransitions + 1);
  assert.ok(handoverMs < LEASE_SECONDS * 1000, `handover after ${handoverMs} ms`);
});

test('--leader-elect=false: no election Lease, the singleton controllers run anyway', async () => {
  const own = await startTestEtcd();
  const p = await startInProcess({ etcd: own, args: ['--leader-elect=false'] });
  try {
    assert.equal((await p.client.post('/api/v1/namespaces', { metadata: { name: 'solo' } })).status, 201);
    assert.equal((await p.client.delete('/api/v1/namespaces/solo')).status, 200);
    await eventually(async () => (await p.client.get('/api/v1/namespaces/solo')).status === 404, 20_000, 'the namespace finalized');
    assert.equal((await p.client.get(`${LEASE}/plinth-apiserver`)).status, 404);
  } finally {
    await p.stop();
    await own.stop();
  }
});
