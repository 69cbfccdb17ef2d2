/**
 * The `kubernetes` Service and its Endpoints kept by two reconcilers on one real etcd, as kube
 * 1.24's bootstrap controller with the lease reconciler: each replica's advertise address leased
 * under /registry/masterleases, the live ones listed (kube's order), a stopped replica removed at
 * once, a dead one (no more refreshes) dropped when its etcd lease expires; the `kubernetes`
 * EndpointSlice following the Endpoints.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Etcd3 } from 'etcd3';
import { EtcdStore } from '@plinth/storage';
import type { Endpoints, Service } from '@plinth/api';
import { createKubernetesServiceController, createServiceREST, type KubernetesServiceController } from '@plinth/apiserver';
import { eventually, startTestEtcd, type TestEtcd } from './harness.js';

let etcd: TestEtcd;
let raw: Etcd3;
const stores: EtcdStore[] = [];
const running: KubernetesServiceController[] = [];

before(async () => {
  etcd = await startTestEtcd();
  raw = new Etcd3({ hosts: [etcd.endpoint] });
});

after(async () => {
  for (const c of running) await c.stop();
  raw.close();
  for (const s of stores) await s.close();
  await etcd.stop();
});

const TTL_SECONDS = 2;
const INTERVAL_MS = 300;

/** A replica: its own etcd client, allocators and reconciler. */
function replica(advertiseAddress: string): KubernetesServiceController {
  const store = new EtcdStore({ endpoints: [etcd.endpoint] });
  stores.push(store);
  const rest = createServiceREST({ store });
  const c = createKubernetesServiceController({ store, rest, advertiseAddress, securePort: 6443, leaseTTLSeconds: TTL_SECONDS, intervalMs: INTERVAL_MS });
  running.push(c);
  return c;
}

async function getJSON<T>(key: string): Promise<T | undefined> {
  const text = await raw.get(key).string();
  return text ? (JSON.parse(text) as T) : undefined;
}

const addresses = async (): Promise<string[] | undefined> => (await getJSON<Endpoints>('/registry/services/endpoints/default/kubernetes'))?.subsets?.[0]?.addresses?.map((a) => a.ip!);

test('two replicas: the Service, the Endpoints listing both, a stopped one and a dead one drop out', async () => {
  const a = replica('10.20.0.1');
  const b = replica('10.20.0.10');
  await Promise.all([a.start(), b.start()]);
  await eventually(async () => JSON.stringify(await addresses()) === '["10.20.0.1","10.20.0.10"]', 10_000, 'both addresses in the Endpoints');

  const ep = (await getJSON<Endpoints>('/registry/services/endpoints/default/kubernetes'))!;
  assert.deepEqual(ep.subsets, [{ addresses: [{ ip: '10.20.0.1' }, { ip: '10.20.0.10' }], ports: [{ name: 'https', port: 6443, protocol: 'TCP' }] }]);
  assert.equal(ep.metadata.labels?.['endpointslice.kubernetes.io/skip-mirror'], 'true');

  const svc = (await getJSON<Service>('/registry/services/specs/default/kubernetes'))!;
  assert.deepEqual(svc.metadata.labels, { provider: 'kubernetes', component: 'apiserver' });
  assert.deepEqual(svc.spec, {
    ports: [{ name: 'https', protocol: 'TCP', port: 443, targetPort: 6443 }],
    clusterIP: '10.0.0.1',
    clusterIPs: ['10.0.0.1'],
    type: 'ClusterIP',
    sessionAffinity: 'None',
    ipFamilies: ['IPv4'],
    ipFamilyPolicy: 'SingleStack',
    internalTrafficPolicy: 'Cluster',
  });
  assert.equal((await getJSON<Record<string, unknown>>('/registry/ranges/serviceips'))?.['data'], 'AQ==', '10.0.0.1 is allocated');

  // The leases: Endpoints objects under kube's keys, with an etcd lease.
  const lease = await raw.get('/registry/masterleases/10.20.0.1').exec();
  assert.notEqual(String(lease.kvs[0]!.lease), '0', 'written with a TTL');
  const leaseObj = JSON.parse(lease.kvs[0]!.value.toString()) as Endpoints;
  assert.equal(leaseObj.kind, 'Endpoints');
  assert.deepEqual(leaseObj.subsets, [{ addresses: [{ ip: '10.20.0.1' }] }]);

  // kube's EndpointsAdapter: the kubernetes EndpointSlice (discovery.k8s.io/v1) follows the Endpoints.
  const slice = async () => getJSON<Record<string, unknown> & { metadata: { labels?: Record<string, string>; generation?: number } }>('/registry/endpointslices/default/kubernetes');
  const ready = (...ips: string[]) => ips.map((ip) => ({ addresses: [ip], conditions: { ready: true } }));
  await eventually(async () => JSON.stringify((await slice())?.['endpoints']) === JSON.stringify(ready('10.20.0.1', '10.20.0.10')), 5_000, 'both addresses in the EndpointSlice');
  const s = (await slice())!;
  assert.deepEqual(s.metadata.labels, { 'kubernetes.io/service-name': 'kubernetes' });
  assert.deepEqual([s['apiVersion'], s['kind'], s['addressType'], s['ports']], ['discovery.k8s.io/v1', 'EndpointSlice', 'IPv4', [{ name: 'https', port: 6443, protocol: 'TCP' }]]);

  // A graceful stop takes the address out at once, from the slice too.
  await b.stop();
  assert.deepEqual(await addresses(), ['10.20.0.1']);
  // The slice follows the Endpoints in a write of its own.
  await eventually(async () => JSON.stringify((await slice())?.['endpoints']) === JSON.stringify(ready('10.20.0.1')), 5_000, 'the stopped replica out of the EndpointSlice');
  assert.equal(await raw.get('/registry/masterleases/10.20.0.10').string(), null);

  // A replica that died (its lease is no longer refreshed) is listed until etcd expires the lease.
  const deadLease = raw.lease(TTL_SECONDS, { autoKeepAlive: false });
  await deadLease.put('/registry/masterleases/10.20.0.9').value(JSON.stringify({ kind: 'Endpoints', apiVersion: 'v1', metadata: { generation: 1, creationTimestamp: null }, subsets: [{ addresses: [{ ip: '10.20.0.9' }] }] }));
  await eventually(async () => JSON.stringify(await addresses()) === '["10.20.0.1","10.20.0.9"]', 5_000, 'the other replica listed');
  const listedAt = Date.now();
  await eventually(async () => JSON.stringify(await addresses()) === '["10.20.0.1"]', 10_000, 'the dead replica dropped');
  // Generous bound: the lease TTL, plus a pass, plus scheduling slack on a loaded machine.
  assert.ok(Date.now() - listedAt < (TTL_SECONDS + 4) * 1000, 'dropped within about the lease TTL');

  await a.stop();
});
