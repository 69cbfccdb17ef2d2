/**
 * Service cluster-IP and node-port allocation on a real etcd, as kube 1.24's Service REST and
 * its repair loops: RangeAllocation objects at kube's keys, kube's 422/500 messages, CAS between
 * replicas, persistence, dry runs, type changes, and the repair of leaks and missing allocations.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Etcd3 } from 'etcd3';
import { EtcdStore } from '@plinth/storage';
import { type Service, type ServiceSpec, defaultService, isStatusError, prepareServiceForCreate, prepareServiceForUpdate, validateServiceCreate, validateServiceUpdate } from '@plinth/api';
import { createClusterIPRepair, createNodePortRepair, createServiceREST, type RepairEvent, type ServiceREST } from '@plinth/apiserver';
import { startTestEtcd, type TestEtcd } from './harness.js';

let etcd: TestEtcd;
let raw: Etcd3;
const stores: EtcdStore[] = [];
let prefixN = 0;

before(async () => {
  etcd = await startTestEtcd();
  raw = new Etcd3({ hosts: [etcd.endpoint] });
});

after(async () => {
  raw.close();
  for (const s of stores) await s.close();
  await etcd.stop();
});

function newStore(): EtcdStore {
  const s = new EtcdStore({ endpoints: [etcd.endpoint] });
  stores.push(s);
  return s;
}

interface Cluster {
  prefix: string;
  store: EtcdStore;
  rest: ServiceREST;
  /** Runs both repair loops once (what initializes the ranges). */
  repair(): Promise<void>;
  events: RepairEvent[];
  logs: string[];
}

/** A replica's allocators on its own etcd client, in a key space of the test's own. */
async function cluster(flags: { cidr?: string; ports?: string } = {}, prefix = `/t${++prefixN}`): Promise<Cluster> {
  const store = newStore();
  const rest = createServiceREST({ store, etcdPrefix: prefix, serviceClusterIPRange: flags.cidr ?? '', serviceNodePortRange: flags.ports ?? '30000-32767' });
  const events: RepairEvent[] = [];
  const logs: string[] = [];
  const opts = { store, etcdPrefix: prefix, onEvent: (e: RepairEvent) => events.push(e), log: (m: string) => logs.push(m) };
  const ipRepair = createClusterIPRepair(rest, opts);
  const portRepair = createNodePortRepair(rest, opts);
  const c: Cluster = {
    prefix,
    store,
    rest,
    events,
    logs,
    async repair() {
      await ipRepair.runOnce();
      await portRepair.runOnce();
    },
  };
  return c;
}

function svc(name: string, spec: ServiceSpec): Service {
  const s: Service = { apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: 'default' }, spec: structuredClone(spec) };
  defaultService(s);
  return s;
}

/** Create as the Service store will (kube's order): allocate, prepare, validate, store, commit (or revert). */
async function create(c: Cluster, s: Service, dryRun = false): Promise<Service> {
  const txn = await c.rest.allocateOnCreate(s, dryRun);
  try {
    prepareServiceForCreate(s);
    assert.deepEqual(validateServiceCreate(s), [], 'the allocated Service validates');
    if (!dryRun) await c.store.create(`${c.prefix}/services/specs/default/${s.metadata.name}`, s);
    await txn.commit();
    return s;
  } catch (e) {
    await txn.revert();
    throw e;
  }
}

async function update(c: Cluster, next: Service): Promise<Service> {
  const key = `${c.prefix}/services/specs/default/${next.metadata.name}`;
  const old = (await c.store.get(key)) as Service;
  const txn = await c.rest.reallocateOnUpdate(next, old, false);
  try {
    prepareServiceForUpdate(next, old);
    assert.deepEqual(validateServiceUpdate(next, old), [], 'the updated Service validates');
    const out = (await c.store.guaranteedUpdate(key, () => next)) as Service;
    await txn.commit();
    return out;
  } catch (e) {
    await txn.revert();
    throw e;
  }
}

async function remove(c: Cluster, name: string): Promise<void> {
  const last = (await c.store.delete(`${c.prefix}/services/specs/default/${name}`)) as Service;
  await c.rest.releaseOnDelete(last, false);
}

async function rangeObject(key: string): Promise<Record<string, unknown>> {
  const text = await raw.get(key).string();
  assert.ok(text, `${key} exists`);
  return JSON.parse(text!) as Record<string, unknown>;
}

/** The offsets set in a stored RangeAllocation's bitmap (kube's big-endian big.Int bytes). */
function offsets(data: string): number[] {
  const bytes = Buffer.from(data, 'base64');
  const out: number[] = [];
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[bytes.length - 1 - i]!;
    for (let bit = 0; bit < 8; bit++) if (b & (1 << bit)) out.push(i * 8 + bit);
  }
  return out;
}

const statusOf = (e: unknown): { code: number; message: string } => {
  assert.ok(isStatusError(e), `a Status error, got ${String(e)}`);
  return { code: e.code, message: e.message };
};

test('nothing is allocated before the repair loop initialized the ranges (kube)', async () => {
  const c = await cluster();
  await assert.rejects(c.rest.allocateOnCreate(svc('a', { ports: [{ port: 80 }] }), false), (e) => {
    assert.deepEqual(statusOf(e), { code: 500, message: 'Internal error occurred: failed to allocate a serviceIP: cannot allocate resources of type serviceipallocations at this time' });
    return true;
  });
});

test('ranges are stored as kube stores them: RangeAllocation JSON at /registry/ranges/*', async () => {
  const c = await cluster({}, '/registry');
  await c.repair();
  const ips = await rangeObject('/registry/ranges/serviceips');
  assert.deepEqual(ips, { kind: 'RangeAllocation', apiVersion: 'v1', metadata: { creationTimestamp: null }, range: '10.0.0.0/24', data: '' });
  const ports = await rangeObject('/registry/ranges/servicenodeports');
  assert.equal(ports['range'], '30000-32767');
  const s = await create(c, svc('kubernetes', { clusterIP: '10.0.0.1', ports: [{ port: 443 }] }));
  assert.deepEqual(s.spec!.clusterIPs, ['10.0.0.1']);
  assert.equal((await rangeObject('/registry/ranges/serviceips'))['data'], 'AQ==', 'offset 0 is 10.0.0.1');
  const np = await create(c, svc('np', { type: 'NodePort', ports: [{ port: 80, nodePort: 30007 }] }));
  assert.equal(np.spec!.ports![0]!.nodePort, 30007);
  assert.deepEqual(offsets((await rangeObject('/registry/ranges/servicenodeports'))['data'] as string), [7]);
});

test('requested IPs and ports are honoured; taken or foreign ones are kube\'s 422', async () => {
  const c = await cluster();
  await c.repair();
  const a = await create(c, svc('a', { clusterIP: '10.0.0.5', type: 'NodePort', ports: [{ port: 80, nodePort: 30080 }] }));
  assert.equal(a.spec!.clusterIP, '10.0.0.5');
  assert.deepEqual(a.spec!.ipFamilies, ['IPv4']);
  assert.equal(a.spec!.ipFamilyPolicy, 'SingleStack');
  const expectErr = async (s: Service, code: number, message: string): Promise<void> => {
    await assert.rejects(create(c, s), (e) => {
      assert.deepEqual(statusOf(e), { code, message });
      return true;
    });
  };
  await expectErr(svc('b', { clusterIP: '10.0.0.5', ports: [{ port: 80 }] }), 422, 'Service "b" is invalid: spec.clusterIPs: Invalid value: []string{"10.0.0.5"}: failed to allocate IP 10.0.0.5: provided IP is already allocated');
  await expectErr(
    svc('c', { clusterIP: '10.1.0.5', ports: [{ port: 80 }] }),
    422,
    'Service "c" is invalid: spec.clusterIPs: Invalid value: []string{"10.1.0.5"}: failed to allocate IP 10.1.0.5: the provided IP (10.1.0.5) is not in the valid range. The range of valid IPs is 10.0.0.0/24',
  );
  await expectErr(svc('d', { type: 'NodePort', ports: [{ port: 80, nodePort: 30080 }] }), 422, 'Service "d" is invalid: spec.ports[0].nodePort: Invalid value: 30080: provided port is already allocated');
  await expectErr(
    svc('e', { type: 'NodePort', ports: [{ port: 80, nodePort: 40000 }] }),
    422,
    'Service "e" is invalid: spec.ports[0].nodePort: Invalid value: 40000: provided port is not in the valid range. The range of valid ports is 30000-32767',
  );
  await expectErr(svc('f', { clusterIP: 'fd00::1', ports: [{ port: 80 }] }), 422, 'Service "f" is invalid: spec.clusterIPs[0]: Invalid value: []string{"fd00::1"}: IPv6 is not configured on this cluster');
  await expectErr(svc('g', { ipFamilyPolicy: 'RequireDualStack', ports: [{ port: 80 }] }), 422, 'Service "g" is invalid: spec.ipFamilyPolicy: Invalid value: "RequireDualStack": this cluster is not configured for dual-stack services');
  // The failed creates gave back what they took: d's cluster IP is free again.
  const ips = offsets((await rangeObject(`${c.prefix}/ranges/serviceips`))['data'] as string);
  assert.deepEqual(ips, [4], 'only 10.0.0.5 is allocated');
});

test('two replicas on one etcd never hand out the same IP or port, and allocations survive a restart', async () => {
  const prefix = `/t${++prefixN}`;
  const one = await cluster({ cidr: '10.10.0.0/25', ports: '31000-31099' }, prefix);
  const two = await cluster({ cidr: '10.10.0.0/25', ports: '31000-31099' }, prefix);
  await one.repair();
  const made = await Promise.all(
    Array.from({ length: 60 }, (_, i) => create(i % 2 ? one : two, svc(`s${i}`, { type: 'NodePort', ports: [{ port: 80 }] }))),
  );
  const ips = made.map((s) => s.spec!.clusterIP!);
  const ports = made.map((s) => s.spec!.ports![0]!.nodePort!);
  assert.equal(new Set(ips).size, 60, 'distinct cluster IPs');
  assert.equal(new Set(ports).size, 60, 'distinct node ports');
  const stored = offsets((await rangeObject(`${prefix}/ranges/serviceips`))['data'] as string);
  assert.deepEqual(stored, ips.map((ip) => Number(ip.split('.')[3]) - 1).sort((a, b) => a - b), 'the bitmap holds exactly the handed-out IPs');
  // A new process (a restart) sees them.
  const three = await cluster({ cidr: '10.10.0.0/25', ports: '31000-31099' }, prefix);
  await assert.rejects(create(three, svc('again', { clusterIP: ips[0]!, ports: [{ port: 80 }] })), /provided IP is already allocated/);
});

test('a full range is kube\'s 500', async () => {
  const c = await cluster({ cidr: '10.20.0.0/29' });
  await c.repair();
  for (let i = 0; i < 6; i++) await create(c, svc(`s${i}`, { ports: [{ port: 80 }] }));
  await assert.rejects(create(c, svc('s6', { ports: [{ port: 80 }] })), (e) => {
    assert.deepEqual(statusOf(e), { code: 500, message: 'Internal error occurred: failed to allocate a serviceIP: range is full' });
    return true;
  });
  const p = await cluster({ ports: '30000-30000' });
  await p.repair();
  await create(p, svc('n0', { type: 'NodePort', ports: [{ port: 80 }] }));
  await assert.rejects(create(p, svc('n1', { type: 'NodePort', ports: [{ port: 80 }] })), (e) => {
    assert.deepEqual(statusOf(e), { code: 500, message: 'Internal error occurred: failed to allocate a nodePort: range is full' });
    return true;
  });
});

test('a dry run allocates nothing (and answers kube\'s placeholder values)', async () => {
  const c = await cluster();
  await c.repair();
  const before = await rangeObject(`${c.prefix}/ranges/serviceips`);
  const s = await create(c, svc('dry', { type: 'NodePort', ports: [{ port: 80 }] }), true);
  assert.equal(s.spec!.clusterIP, '10.0.0.0');
  assert.equal(s.spec!.ports![0]!.nodePort, 32769);
  assert.deepEqual(await rangeObject(`${c.prefix}/ranges/serviceips`), before);
  assert.equal((await rangeObject(`${c.prefix}/ranges/servicenodeports`))['data'], '');
});

test('delete and type changes release; an update keeps what the client omitted', async () => {
  const c = await cluster();
  await c.repair();
  const lb = await create(c, svc('lb', { type: 'LoadBalancer', externalTrafficPolicy: 'Local', ports: [{ port: 80 }] }));
  const hc = lb.spec!.healthCheckNodePort!;
  assert.ok(hc >= 30000 && hc <= 32767, 'a health-check node port for a Local LoadBalancer');
  const np = lb.spec!.ports![0]!.nodePort!;
  const ip = lb.spec!.clusterIP!;
  const portBits = async (): Promise<number[]> => offsets((await rangeObject(`${c.prefix}/ranges/servicenodeports`))['data'] as string);
  const ipBits = async (): Promise<number[]> => offsets((await rangeObject(`${c.prefix}/ranges/serviceips`))['data'] as string);
  assert.deepEqual((await portBits()).sort(), [np - 30000, hc - 30000].sort());
  // Resubmitting the manifest (no clusterIP, no node ports) keeps the allocated ones.
  const resubmit = svc('lb', { type: 'LoadBalancer', externalTrafficPolicy: 'Local', ports: [{ port: 80 }] });
  await update(c, resubmit);
  assert.equal(resubmit.spec!.clusterIP, ip);
  assert.equal(resubmit.spec!.ports![0]!.nodePort, np);
  assert.equal(resubmit.spec!.healthCheckNodePort, hc);
  // LoadBalancer → ClusterIP (only the type changed): node ports and the health-check port go.
  const toCluster = structuredClone(resubmit);
  toCluster.spec!.type = 'ClusterIP';
  await update(c, toCluster);
  assert.equal(toCluster.spec!.ports![0]!.nodePort, undefined, 'the strategy wiped the unchanged node port');
  assert.deepEqual(await portBits(), []);
  assert.deepEqual(await ipBits(), [Number(ip.split('.')[3]) - 1]);
  // ClusterIP → ExternalName: the cluster IP goes.
  const toExternal = structuredClone(toCluster);
  toExternal.spec = { ...toExternal.spec, type: 'ExternalName', externalName: 'db.example.com' };
  delete toExternal.spec.internalTrafficPolicy;
  await update(c, toExternal);
  assert.equal(toExternal.spec.clusterIP, undefined);
  assert.deepEqual(await ipBits(), []);
  // ExternalName → ClusterIP: a new one.
  const back = structuredClone(toExternal);
  back.spec = { ...back.spec, type: 'ClusterIP', internalTrafficPolicy: 'Cluster' };
  await update(c, back);
  assert.equal((await ipBits()).length, 1);
  await remove(c, 'lb');
  assert.deepEqual(await ipBits(), []);
});

test('ipFamilies and ipFamilyPolicy are defaulted against a dual-stack cluster', async () => {
  const c = await cluster({ cidr: '10.30.0.0/24,fd00:30::/120' });
  await c.repair();
  const single = await create(c, svc('single', { ports: [{ port: 80 }] }));
  assert.deepEqual([single.spec!.ipFamilyPolicy, single.spec!.ipFamilies, single.spec!.clusterIPs!.length], ['SingleStack', ['IPv4'], 1]);
  const prefer = await create(c, svc('prefer', { ipFamilyPolicy: 'PreferDualStack', ports: [{ port: 80 }] }));
  assert.deepEqual(prefer.spec!.ipFamilies, ['IPv4', 'IPv6']);
  assert.match(prefer.spec!.clusterIPs![1]!, /^fd00:30::/);
  const v6 = await create(c, svc('v6', { ipFamilies: ['IPv6'], ports: [{ port: 80 }] }));
  assert.match(v6.spec!.clusterIP!, /^fd00:30::/);
  const headless = await create(c, svc('headless', { clusterIP: 'None', ports: [{ port: 80 }] }));
  assert.deepEqual([headless.spec!.ipFamilyPolicy, headless.spec!.ipFamilies, headless.spec!.clusterIPs], ['RequireDualStack', ['IPv4', 'IPv6'], ['None']]);
  const external = await create(c, svc('ext', { type: 'ExternalName', externalName: 'x.example.com' }));
  assert.equal(external.spec!.ipFamilies, undefined);
  // Dropping the secondary needs SingleStack (kube's message).
  const down = structuredClone(prefer);
  down.spec!.clusterIPs = [down.spec!.clusterIP!];
  down.spec!.ipFamilies = ['IPv4'];
  await assert.rejects(update(c, down), (e) => {
    assert.match(statusOf(e).message, /spec\.ipFamilyPolicy: Invalid value: "PreferDualStack": must be 'SingleStack' to release the secondary cluster IP/);
    return true;
  });
  const downOk = structuredClone(down);
  downOk.spec!.ipFamilyPolicy = 'SingleStack';
  await update(c, downOk);
  assert.equal(offsets((await rangeObject(`${c.prefix}/ranges/secondaryserviceips`))['data'] as string).length, 1, 'only v6 keeps an IPv6 address');
});

test('repair: missing allocations are repaired, duplicates reported, leaks released after 3 runs', async () => {
  const c = await cluster();
  await c.repair();
  const put = (name: string, spec: ServiceSpec): Promise<unknown> => c.store.create(`${c.prefix}/services/specs/default/${name}`, svc(name, spec));
  // Services written without allocation (e.g. restored from a backup of etcd).
  await put('x', { clusterIP: '10.0.0.7', clusterIPs: ['10.0.0.7'], type: 'NodePort', ports: [{ port: 80, nodePort: 30100 }] });
  await put('y', { clusterIP: '10.0.0.7', clusterIPs: ['10.0.0.7'], ports: [{ port: 80 }] });
  await put('z', { clusterIP: '10.9.9.9', clusterIPs: ['10.9.9.9'], ports: [{ port: 80 }] });
  // A leaked allocation: taken, but no Service has it.
  await c.rest.allocators.ipAllocators.get('IPv4')!.allocate('10.0.0.9');
  await c.repair();
  const reasons = c.events.map((e) => `${e.regarding.name} ${e.reason}: ${e.note}`);
  assert.deepEqual(reasons, [
    'x ClusterIPNotAllocated: Cluster IP [IPv4]:10.0.0.7 is not allocated; repairing',
    'y ClusterIPAlreadyAllocated: Cluster IP [IPv4]:10.0.0.7 was assigned to multiple services; please recreate service',
    'z ClusterIPOutOfRange: Cluster IP [IPv4]:10.9.9.9 is not within the service CIDR 10.0.0.0/24; please recreate service',
    'x PortNotAllocated: Port 30100 is not allocated; repairing',
  ]);
  const ipBits = async (): Promise<number[]> => offsets((await rangeObject(`${c.prefix}/ranges/serviceips`))['data'] as string);
  assert.deepEqual(await ipBits(), [6, 8], '10.0.0.7 repaired, 10.0.0.9 kept while it may be racing a create');
  assert.ok(c.logs.includes('the cluster IP 10.0.0.9 may have leaked: flagging for later clean up'));
  await c.repair();
  assert.deepEqual(await ipBits(), [6, 8]);
  await c.repair();
  assert.deepEqual(await ipBits(), [6], 'released on the third run');
  assert.ok(c.logs.includes('the cluster IP 10.0.0.9 appears to have leaked: cleaning up'));
  assert.deepEqual(offsets((await rangeObject(`${c.prefix}/ranges/servicenodeports`))['data'] as string), [100]);
});
