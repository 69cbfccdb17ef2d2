/**
 * The local cluster of deploy/local-cluster/cluster.sh, as an operator runs it: 3 etcd members
 * (TLS, client-certificate auth), 3 plinth replicas and haproxy. Replicas share nothing but etcd:
 * whatever a client got from one replica (a resourceVersion, a continue token, a watch position,
 * a CRD, an RBAC grant, a service-account token) holds on the others and through the load balancer.
 * Then `down` leaves no process behind and `up` on the same directory restarts with the data.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { forceCompaction } from '@plinth/storage';
import { eventually, kubectlPath, tempDir, type TestClient, type Response } from './harness.js';
import { startLocalCluster, type LocalCluster } from './cluster-harness.js';

const dir = tempDir('plinth-cluster-');
let cluster: LocalCluster;
const NS = 'default';
const CM = `/api/v1/namespaces/${NS}/configmaps`;
/** A request through haproxy on a new connection each time, so consecutive ones reach different replicas. */
const fresh = { headers: { connection: 'close' } };

before(async () => {
  const t0 = Date.now();
  cluster = await startLocalCluster({ dir });
  console.log(`cluster.sh up: ${Date.now() - t0} ms`);
});

after(async () => {
  await cluster?.down();
  rmSync(dir, { recursive: true, force: true });
});

function kubectl(...args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(kubectlPath(), ['--kubeconfig', cluster.kubeconfig, ...args], { timeout: 20_000 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`kubectl ${args.join(' ')}: ${stderr || err.message}`));
      else resolve(stdout);
    });
  });
}

const replicas = (): TestClient[] => [0, 1, 2].map((i) => cluster.replica(i));
const names = (r: Response): string[] => r.body.items.map((i: { metadata: { name: string } }) => i.metadata.name);

test('kubectl works through the load balancer with DIR/kubeconfig', async () => {
  assert.match(await kubectl('get', 'ns'), /kube-system\s+Active/);
  await kubectl('create', 'configmap', 'kept', '-n', NS, '--from-literal=survives=restart');
  await kubectl('create', 'configmap', 'short-lived', '-n', NS, '--from-literal=a=b');
  assert.equal(await kubectl('get', 'configmap', 'kept', '-n', NS, '-o', 'jsonpath={.data.survives}'), 'restart');
  await kubectl('delete', 'configmap', 'short-lived', '-n', NS);
  assert.match(await kubectl('get', 'configmap', '-n', NS), /kept/);
  await assert.rejects(kubectl('get', 'configmap', 'short-lived', '-n', NS), /NotFound|not found/);
});

test('the etcd cluster has three members and every replica serves', async () => {
  const info = cluster.info();
  const { members } = await cluster.etcdClient().cluster.memberList({});
  assert.equal(members.length, 3);
  assert.deepEqual(members.map((m) => m.clientURLs[0]).sort(), info.etcd.map((e) => e.clientURL).sort());
  for (const url of info.etcd.map((e) => e.clientURL)) assert.match(url, /^https:/, 'etcd clients speak TLS');
  for (const [i, r] of replicas().entries()) {
    assert.equal((await r.get('/readyz')).status, 200, `replica ${i} ready`);
    assert.equal((await r.get(`${CM}/kept`)).status, 200, `replica ${i} serves`);
  }
  for (let i = 0; i < 6; i++) assert.equal((await cluster.lb.get('/readyz', fresh)).status, 200);
  // TLS end to end: haproxy passes TLS through to the replicas, whose certificate the kubeconfig's CA verifies.
  assert.ok(info.loadBalancer.url.startsWith('https://'));
});

test('a write on one replica is read at once on the others (consistent reads from the watch cache)', async () => {
  const rs = replicas();
  let stale = 0;
  for (let i = 0; i < 12; i++) {
    const writer = rs[i % 3]!;
    const created = await writer.post(CM, { metadata: { name: `lin-${i}` }, data: { i: String(i) } });
    assert.equal(created.status, 201);
    for (const [j, reader] of rs.entries()) {
      if (reader === writer) continue;
      const got = await reader.get(`${CM}/lin-${i}`);
      assert.equal(got.status, 200, `lin-${i} written on ${i % 3}, read on ${j}`);
      assert.equal(got.body.metadata.resourceVersion, created.body.metadata.resourceVersion);
      const list = await reader.get(CM);
      if (!names(list).includes(`lin-${i}`)) stale++;
      assert.ok(Number(list.body.metadata.resourceVersion) >= Number(created.body.metadata.resourceVersion), 'list RV not older than the write');
    }
    // Through haproxy on a new connection: whichever replica answers.
    assert.ok(names(await cluster.lb.get(CM, fresh)).includes(`lin-${i}`));
    // An update on another replica, then a read back on the writer.
    const upd = await rs[(i + 1) % 3]!.put(`${CM}/lin-${i}`, { ...created.body, data: { i: `${i}-updated` } });
    assert.equal(upd.status, 200);
    assert.equal((await writer.get(`${CM}/lin-${i}`)).body.data.i, `${i}-updated`);
  }
  assert.equal(stale, 0, 'consistent lists never miss a write made on another replica');
});

test('continue tokens move between replicas and through the load balancer', async () => {
  for (let i = 0; i < 12; i++) assert.equal((await cluster.lb.post(CM, { metadata: { name: `page-${String(i).padStart(2, '0')}` } })).status, 201);
  const all = names(await cluster.replica(2).get(CM));
  const p1 = await cluster.replica(0).get(`${CM}?limit=5`);
  assert.equal(p1.status, 200);
  assert.ok(p1.body.metadata.continue, 'page 1 has a continue token');
  const p2 = await cluster.replica(1).get(`${CM}?limit=5&continue=${encodeURIComponent(p1.body.metadata.continue)}`);
  assert.equal(p2.status, 200, JSON.stringify(p2.body));
  assert.equal(p2.body.metadata.resourceVersion, p1.body.metadata.resourceVersion, 'one snapshot across replicas');
  // A write between pages does not show: the pages come from page 1's snapshot.
  await cluster.replica(2).post(CM, { metadata: { name: 'page-zz-after-snapshot' } });
  let token = p2.body.metadata.continue as string | undefined;
  const seen = [...names(p1), ...names(p2)];
  while (token) {
    const p = await cluster.lb.get(`${CM}?limit=5&continue=${encodeURIComponent(token)}`, fresh);
    assert.equal(p.status, 200, JSON.stringify(p.body));
    seen.push(...names(p));
    token = p.body.metadata.continue || undefined;
  }
  assert.deepEqual(seen, all, 'pages from three replicas add up to the list, each item once, in order');
  assert.ok(!seen.includes('page-zz-after-snapshot'));
});

test('a watch resumes on any replica from a resourceVersion another replica gave', async () => {
  const list = await cluster.replica(0).get(CM);
  const rv = list.body.metadata.resourceVersion as string;
  await cluster.replica(1).post(CM, { metadata: { name: 'watch-a' } });
  const deleted = await cluster.replica(1).delete(`${CM}/lin-0`);
  assert.equal(deleted.status, 200);
  const want = ['ADDED:watch-a', 'DELETED:lin-0'];
  const targets: Array<[string, TestClient]> = [['replica 2', cluster.replica(2)], ['replica 0', cluster.replica(0)], ['load balancer', cluster.lb]];
  for (const [what, c] of targets) {
    const w = await c.watch(`${CM}?watch=1&resourceVersion=${rv}`, (evs) => evs.length >= 2, 10_000);
    assert.equal(w.status, 200);
    assert.deepEqual(w.events.map((e) => `${e.type}:${e.object.metadata.name}`), want, `watch from another replica's RV on ${what}`);
  }
  // A watch from an object's RV (got on replica 0) on replica 1 sees what came after it.
  const obj = await cluster.replica(0).get(`${CM}/watch-a`);
  const pending = cluster.replica(1).watch(`${CM}?watch=1&resourceVersion=${obj.body.metadata.resourceVersion}`, (evs) => evs.length >= 2, 10_000);
  await cluster.replica(2).put(`${CM}/watch-a`, { ...obj.body, data: { n: '1' } });
  const w = await pending;
  // Exactly the history after that RV: the delete made on replica 1 since, then this update.
  const pending2 = cluster.lb.watch(`${CM}?watch=1&resourceVersion=${obj.body.metadata.resourceVersion}`, (evs) => evs.length >= 2, 10_000);
  const w2 = await pending2;
  assert.deepEqual(w.events.map((e) => `${e.type}:${e.object.metadata.name}`), ['DELETED:lin-0', 'MODIFIED:watch-a']);
  assert.deepEqual(w2.events.map((e) => `${e.type}:${e.object.metadata.name}`), ['DELETED:lin-0', 'MODIFIED:watch-a']);
});

test('service-account tokens issued by one replica are accepted by the others (shared signing key)', async () => {
  assert.equal((await cluster.replica(0).post(`/api/v1/namespaces/${NS}/serviceaccounts`, { metadata: { name: 'reader' } })).status, 201);
  const tr = await cluster.replica(0).post(`/api/v1/namespaces/${NS}/serviceaccounts/reader/token`, {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'TokenRequest',
    spec: { expirationSeconds: 3600 },
  });
  assert.equal(tr.status, 201, JSON.stringify(tr.body));
  const token = tr.body.status.token as string;
  for (const [i, r] of replicas().entries()) {
    // Authenticated (403 names the user), not 401: the token verifies on every replica.
    const res = await r.get(`${CM}`, { token });
    assert.equal(res.status, 403, `replica ${i}: ${JSON.stringify(res.body)}`);
    assert.match(res.body.message, /system:serviceaccount:default:reader/);
  }
  // The issuer's public keys are the same everywhere.
  const jwks = await Promise.all(replicas().map(async (r) => JSON.stringify((await r.get('/openid/v1/jwks')).body)));
  assert.equal(new Set(jwks).size, 1, 'one JWKS across replicas');
});

test('an RBAC grant made on one replica authorizes on the others (eventually, within seconds)', async () => {
  const tr = await cluster.replica(1).post(`/api/v1/namespaces/${NS}/serviceaccounts/reader/token`, { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: {} });
  const token = tr.body.status.token as string;
  const RBAC = `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}`;
  assert.equal((await cluster.replica(0).post(`${RBAC}/roles`, {
    metadata: { name: 'cm-reader' },
    rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list'] }],
  })).status, 201);
  const t0 = Date.now();
  assert.equal((await cluster.replica(0).post(`${RBAC}/rolebindings`, {
    metadata: { name: 'cm-reader' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'cm-reader' },
    subjects: [{ kind: 'ServiceAccount', name: 'reader', namespace: NS }],
  })).status, 201);
  const lags: number[] = [];
  const immediate: boolean[] = [];
  for (const r of replicas()) {
    immediate.push((await r.get(CM, { token })).status === 200);
    await eventually(async () => (await r.get(CM, { token })).status === 200, 10_000, `the grant on ${r.base}`);
    lags.push(Date.now() - t0);
  }
  console.log(`RBAC grant visible on replicas 0,1,2 after ${lags.join(', ')} ms (allowed on the first try: ${immediate.join(', ')})`);
  // And revoked everywhere: deleting the binding on replica 2 denies on every replica.
  assert.equal((await cluster.replica(2).delete(`${RBAC}/rolebindings/cm-reader`)).status, 200);
  for (const r of replicas()) await eventually(async () => (await r.get(CM, { token })).status === 403, 10_000, `the revocation on ${r.base}`);
});

test('a namespace created on one replica takes content at once on the others; once deleted, no replica takes more', async () => {
  const lags: number[] = [];
  for (let n = 0; n < 3; n++) {
    const ns = `cross-${n}`;
    assert.equal((await cluster.replica(n % 3).post('/api/v1/namespaces', { metadata: { name: ns } })).status, 201);
    for (const [i, r] of replicas().entries()) {
      const created = await r.post(`/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: `from-${i}` } });
      assert.equal(created.status, 201, `replica ${i} admits content in ${ns} created on replica ${n % 3}: ${JSON.stringify(created.body)}`);
    }
    const t0 = Date.now();
    assert.equal((await cluster.replica((n + 1) % 3).delete(`/api/v1/namespaces/${ns}`)).status, 200);
    // kube's NamespaceLifecycle reads its informer's cache: across replicas this is eventual.
    for (const [i, r] of replicas().entries()) {
      await eventually(async () => {
        const res = await r.post(`/api/v1/namespaces/${ns}/configmaps`, { metadata: { generateName: `late-${i}-` } });
        return res.status === 403 || res.status === 404;
      }, 5_000, `replica ${i} refuses content in the deleted namespace ${ns}`);
      lags.push(Date.now() - t0);
    }
  }
  console.log(`new content in a deleted namespace refused on every replica after (ms): ${lags.join(', ')}`);
});

test('the replica that deleted a namespace refuses new content in it at once (kube: forceLiveLookupCache)', async () => {
  let admitted = 0;
  for (let n = 0; n < 15; n++) {
    const ns = `same-${n}`;
    const r = cluster.replica(n % 3);
    assert.equal((await r.post('/api/v1/namespaces', { metadata: { name: ns } })).status, 201);
    assert.equal((await r.post(`/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: 'before' } })).status, 201);
    assert.equal((await r.delete(`/api/v1/namespaces/${ns}`)).status, 200);
    const late = await r.post(`/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: 'late' } });
    if (late.status === 201) admitted++;
  }
  console.log(`content created right after the namespace's deletion on the same replica: ${admitted} of 15`);
  assert.equal(admitted, 0);
});

test('a service-account token stops working on every replica once its ServiceAccount is deleted', async () => {
  assert.equal((await cluster.replica(2).post(`/api/v1/namespaces/${NS}/serviceaccounts`, { metadata: { name: 'doomed' } })).status, 201);
  const tr = await cluster.replica(2).post(`/api/v1/namespaces/${NS}/serviceaccounts/doomed/token`, { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: {} });
  const token = tr.body.status.token as string;
  for (const r of replicas()) assert.equal((await r.get(CM, { token })).status, 403);
  const t0 = Date.now();
  assert.equal((await cluster.replica(0).delete(`/api/v1/namespaces/${NS}/serviceaccounts/doomed`)).status, 200);
  const lags: number[] = [];
  const immediate: boolean[] = [];
  for (const r of replicas()) {
    immediate.push((await r.get(CM, { token })).status === 401);
    await eventually(async () => (await r.get(CM, { token })).status === 401, 10_000, `the token rejected on ${r.base}`);
    lags.push(Date.now() - t0);
  }
  console.log(`token of a deleted ServiceAccount rejected on replicas 0,1,2 after ${lags.join(', ')} ms (on the first try: ${immediate.join(', ')})`);
});

test('a CRD created on one replica is served by every replica once Established, and gone from all once deleted', async () => {
  const group = 'cluster.plinth.test';
  const crdOf = (plural: string, kind: string) => ({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { plural, singular: kind.toLowerCase(), kind, listKind: `${kind}List` },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { size: { type: 'integer' } } } } } } }],
    },
  });
  const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
  const isEstablished = async (c: TestClient, name: string): Promise<boolean> =>
    (await c.get(`${CRDS}/${name}`)).body?.status?.conditions?.some((x: { type: string; status: string }) => x.type === 'Established' && x.status === 'True');
  const served = async (r: TestClient, plural: string): Promise<boolean> => {
    const d = await r.get(`/apis/${group}/v1`);
    return d.status === 200 && d.body.resources?.some((x: { name: string }) => x.name === plural) && (await r.get(`/apis/${group}/v1/namespaces/${NS}/${plural}`)).status === 200;
  };
  // Several CRDs, each created on one replica: the moment it is Established there, is it served everywhere?
  const kinds = [['widgets', 'Widget'], ['gadgets', 'Gadget'], ['gizmos', 'Gizmo']] as const;
  const atOnce: string[] = [];
  for (const [n, [plural, kind]] of kinds.entries()) {
    const creator = cluster.replica(n % 3);
    const t0 = Date.now();
    assert.equal((await creator.post(CRDS, crdOf(plural, kind))).status, 201);
    await eventually(() => isEstablished(creator, `${plural}.${group}`), 15_000, `${plural} Established`);
    const est = Date.now() - t0;
    const now = await Promise.all(replicas().map((r) => served(r, plural)));
    atOnce.push(`${plural}: Established after ${est} ms on replica ${n % 3}, served by 0,1,2 at that moment: ${now.join(',')}`);
    for (const [i, r] of replicas().entries()) {
      await eventually(() => served(r, plural), 10_000, `${plural} served on replica ${i}`);
      assert.ok((await r.get('/apis')).body.groups.some((g: { name: string }) => g.name === group), `replica ${i} lists the group in /apis`);
    }
    assert.deepEqual(now, [true, true, true], `once ${plural} is Established (as seen on replica ${n % 3}), every replica serves it`);
  }
  for (const line of atOnce) console.log(`CRD ${line}`);
  // CRUD across replicas, and the schema in every replica's OpenAPI (kubectl explain, apply).
  const W = `/apis/${group}/v1/namespaces/${NS}/widgets`;
  assert.equal((await cluster.replica(1).post(W, { apiVersion: `${group}/v1`, kind: 'Widget', metadata: { name: 'w1' }, spec: { size: 3 } })).status, 201);
  assert.equal((await cluster.replica(2).get(`${W}/w1`)).body.spec.size, 3);
  assert.deepEqual(names(await cluster.lb.get(W, fresh)), ['w1']);
  assert.equal((await cluster.replica(0).delete(`${W}/w1`)).status, 200);
  for (const [i, r] of replicas().entries()) {
    await eventually(async () => (await r.get('/openapi/v2')).raw.includes('"test.plinth.cluster.v1.Gizmo"'), 10_000, `Gizmo in /openapi/v2 of replica ${i}`);
  }
  assert.match(await kubectl('get', 'widgets', '-n', NS), /^$/);
  // Deleted on one replica: every replica stops serving it.
  assert.equal((await cluster.replica(2).delete(`${CRDS}/gadgets.${group}`)).status, 200);
  for (const [i, r] of replicas().entries()) {
    await eventually(async () => (await r.get(`/apis/${group}/v1/namespaces/${NS}/gadgets`)).status === 404, 10_000, `gadgets gone from replica ${i}`);
    await eventually(async () => !(await r.get(`/apis/${group}/v1`)).body.resources.some((x: { name: string }) => x.name === 'gadgets'), 10_000, `gadgets gone from discovery on replica ${i}`);
  }
});

test('after a compaction every replica answers 410 Expired for an older resourceVersion', async () => {
  const old = await cluster.replica(0).get(`${CM}?limit=2`);
  const oldRV = old.body.metadata.resourceVersion as string;
  const oldToken = old.body.metadata.continue as string;
  assert.ok(oldToken);
  for (let i = 0; i < 3; i++) await cluster.lb.post(CM, { metadata: { name: `after-compaction-mark-${i}` } });
  const latest = await cluster.lb.post(CM, { metadata: { name: 'compaction-point' } });
  const compactTo = Number(latest.body.metadata.resourceVersion);
  // As a replica's compactor does: record it in compact_rev_key (every replica's caches follow it), compact.
  await forceCompaction(cluster.etcdClient(), compactTo);
  for (const [i, r] of replicas().entries()) {
    await eventually(async () => {
      const w = await r.watch(`${CM}?watch=1&resourceVersion=${oldRV}`, (evs) => evs.length >= 1, 5_000);
      return w.events[0]?.type === 'ERROR' && w.events[0].object.code === 410;
    }, 10_000, `a watch from the compacted RV gets 410 on replica ${i}`);
    const exact = await r.get(`${CM}?resourceVersion=${oldRV}&resourceVersionMatch=Exact`);
    assert.equal(exact.status, 410, `replica ${i}: exact list at a compacted RV`);
    assert.equal(exact.body.reason, 'Expired');
    const cont = await r.get(`${CM}?limit=2&continue=${encodeURIComponent(oldToken)}`);
    assert.equal(cont.status, 410, `replica ${i}: continue token from before the compaction`);
    assert.equal(cont.body.reason, 'Expired');
    // History from the compaction point on is still served.
    const w = await r.watch(`${CM}?watch=1&resourceVersion=${compactTo}`, () => false, 300);
    assert.ok(!w.events.some((e) => e.type === 'ERROR'), `replica ${i}: a watch from the compaction point is fine`);
  }
});

test('down leaves no process behind; up on the same DIR restarts with the data', async () => {
  const before = cluster.info();
  const pids = [...before.etcd.map((e) => e.pid), ...before.apiservers.map((a) => a.pid), before.loadBalancer.pid];
  const issued = await cluster.replica(0).post(`/api/v1/namespaces/${NS}/serviceaccounts/reader/token`, { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: {} });
  let t0 = Date.now();
  await cluster.down();
  console.log(`cluster.sh down: ${Date.now() - t0} ms`);
  const left = pgrep(dir);
  assert.equal(left, '', `processes of ${dir} after down:\n${left}`);
  for (const pid of pids) assert.ok(!running(pid), `pid ${pid} is gone`);
  t0 = Date.now();
  cluster = await startLocalCluster({ dir });
  console.log(`cluster.sh up (restart on existing data): ${Date.now() - t0} ms`);
  assert.equal(cluster.info().loadBalancer.url, before.loadBalancer.url, 'the same address: DIR/kubeconfig stays valid');
  assert.equal(await kubectl('get', 'configmap', 'kept', '-n', NS, '-o', 'jsonpath={.data.survives}'), 'restart');
  assert.equal((await cluster.lb.get(`/apis/cluster.plinth.test/v1/namespaces/${NS}/widgets`)).status, 200, 'the CRD is served after the restart');
  // A token issued before the restart still authenticates (the keys live in DIR).
  assert.equal((await cluster.lb.get(CM, { token: issued.body.status.token })).status, 403);
  await cluster.down();
  assert.equal(pgrep(dir), '');
});

function pgrep(pattern: string): string {
  try {
    return execFileSync('pgrep', ['-fa', pattern], { encoding: 'utf8' }).trim();
  } catch {
    return ''; // exit 1: no process
  }
}

/** The process runs (a zombie waiting for init to reap it does not count). */
function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^[ZX]/.test(stat.slice(stat.lastIndexOf(')') + 2));
  } catch {
    return false;
  }
}
