/**
 * Fault tests on the local cluster (deploy/local-cluster/cluster.sh: 3 etcd members, 3 replicas,
 * haproxy), in sequence on one cluster: a replica killed under load, etcd members stopped, a
 * rolling restart, and compaction coordination. Every write is made through haproxy by a client
 * that retries nothing; test/cluster-load.ts records what was acknowledged and verifies it. The
 * figures (acknowledged writes, errors by kind, recovery times) are printed as diagnostics.
 */
import { test, before, after } from 'node:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Etcd3 } from 'etcd3';
import assert from 'node:assert/strict';
import { startLocalCluster, type LocalCluster } from './cluster-harness.js';
import { eventually } from './harness.js';
import {
  PlainClient,
  startLoad,
  listState,
  verify,
  diffStates,
  totalErrors,
  lbSessions,
  lbBackends,
  startNodeReflector,
  startPythonReflector,
  replyKind,
  failureKind,
  type Load,
  type Reflector,
  type ReflectorStats,
  type TrackedObject,
} from './cluster-load.js';

const COMPACTION_INTERVAL_S = 5;

let cluster: LocalCluster;
let client: PlainClient;
const loads: Load[] = [];
const reflectors: Reflector[] = [];
/** Writes made by hand (not by a load) whose outcome is unknown, by namespace. */
const probes = new Map<string, TrackedObject[]>();

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const secs = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

before(async () => {
  cluster = await startLocalCluster({ args: [`--etcd-compaction-interval=${COMPACTION_INTERVAL_S}s`] });
  client = new PlainClient(cluster.info().loadBalancer.url, cluster.caPem, cluster.token);
  for (const ns of ['faults-kill', 'faults-etcd']) {
    const r = await client.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    assert.equal(r.status, 201, replyKind(r));
  }
});

after(async () => {
  for (const r of reflectors) await r.stop().catch(() => undefined);
  client?.close();
  await cluster?.down();
});

/** Waits until haproxy sends to every replica (a replica that was not ready is DOWN for a while after). */
async function allBackendsUp(): Promise<void> {
  await eventually(
    async () => {
      const status = (await lbBackends(cluster.dir)).map((b) => b.status);
      if (!status.every((s) => s === 'UP')) throw new Error(`haproxy sees ${status.join(', ')}`);
      return true;
    },
    30_000,
    'haproxy to see every replica UP',
  );
}

/** Every load's acknowledged writes (and every probe) are on the server in their final state. */
async function verifyAll(t: { diagnostic(m: string): void }, when: string): Promise<void> {
  const namespaces = new Set([...loads.map((l) => l.ns), ...probes.keys()]);
  for (const ns of namespaces) {
    const objects = [...loads.filter((l) => l.ns === ns).flatMap((l) => l.objects), ...(probes.get(ns) ?? [])];
    const { state } = await listState(client, ns);
    const v = verify(objects, state);
    t.diagnostic(
      `${when}: ${ns}: ${v.acknowledgedPresent} acknowledged objects present, ${v.acknowledgedAbsent} acknowledged deletions absent; ` +
        `unknown outcomes: ${v.unknownApplied} applied, ${v.unknownNotApplied} not applied`,
    );
    assert.deepEqual(v.problems, [], `${when}: ${ns}: acknowledged writes differ from the server`);
  }
}

/** Waits until the reflector's cache equals the server's state of `ns`; returns its stats. */
async function converged(r: Reflector, ns: string, timeoutMs = 30_000): Promise<ReflectorStats> {
  let last: string[] = [];
  try {
    await eventually(
      async () => {
        const { state } = await listState(client, ns);
        last = diffStates(await r.cache(), state);
        return last.length === 0;
      },
      timeoutMs,
      `the ${r.name} cache of ${ns} to match the server`,
    );
  } catch (e) {
    throw new Error(`${(e as Error).message}\n${last.slice(0, 20).join('\n')}\nstats: ${JSON.stringify(await r.stats())}`);
  }
  const s = await r.stats();
  assert.deepEqual(s.anomalies, [], `${r.name}: events that contradict its cache`);
  return s;
}

function figures(what: string, l: Load): string {
  const s = l.stats;
  return `${what}: acknowledged ${JSON.stringify(s.acknowledged)}, reads ${s.reads}, unknown outcomes ${s.unknownOutcomes}, errors ${JSON.stringify(s.errors)}`;
}

/** Index of the replica whose haproxy session count went up between two snapshots (-1 when unclear). */
function grew(before: number[], after: number[]): number {
  const up = after.map((n, i) => n - before[i]!).flatMap((d, i) => (d > 0 ? [i] : []));
  return up.length === 1 ? up[0]! : -1;
}

test('kill -9 of a replica under a write/watch load: every acknowledged write is there, client-node and Python caches end exact', async (t) => {
  const ns = 'faults-kill';
  // The Python watch first; the replica that serves it is the one to kill.
  let s0 = await lbSessions(cluster.dir);
  const py = await startPythonReflector(cluster.kubeconfig, ns);
  reflectors.push(py);
  const victim = grew(s0, await lbSessions(cluster.dir));
  assert.ok(victim >= 0, 'cannot tell which replica serves the Python watch');
  // The client-node watch on the same replica (haproxy balances new connections round-robin).
  s0 = await lbSessions(cluster.dir);
  const node = await startNodeReflector(cluster.kubeconfig, ns);
  reflectors.push(node);
  await node.watchOpened();
  let nodeOn = grew(s0, await lbSessions(cluster.dir));
  for (let i = 0; i < 6 && nodeOn !== victim; i++) {
    s0 = await lbSessions(cluster.dir);
    node.reconnect();
    await node.watchOpened();
    await sleep(100);
    nodeOn = grew(s0, await lbSessions(cluster.dir));
  }
  t.diagnostic(`watches: Python on replica ${victim}, client-node on replica ${nodeOn}; killing replica ${victim}`);

  const load = startLoad(client, ns);
  loads.push(load);
  await sleep(4000);
  const before = { ...load.stats.acknowledged };
  const killedAt = Date.now();
  await cluster.stopApiserver(victim, 'SIGKILL');
  await sleep(5000);
  const stats = await load.stop();
  t.diagnostic(figures('kill -9', load));
  t.diagnostic(`acknowledged before the kill: ${JSON.stringify(before)}; load ran ${secs(Date.now() - killedAt)} after it`);
  assert.ok(stats.acknowledged.create + stats.acknowledged.update > before.create + before.update, 'writes go on after the kill');
  // Only writes that were in flight on the killed replica may fail.
  for (const kind of Object.keys(stats.errors)) assert.doesNotMatch(kind, /^read: not the acknowledged state/);

  const restart = cluster.startApiserver(victim);
  await verifyAll(t, 'after kill -9');
  for (const r of [py, node]) {
    const s = await converged(r, ns);
    t.diagnostic(`${r.name} cache: ${JSON.stringify(s)}`);
    assert.ok(s.resumes + s.relists >= 1, `${r.name}: its watch was on the killed replica and must have been resumed`);
  }
  await restart;
});

test('etcd: one member stopped gives no client error; two stopped give 5xx within the timeout and failing /readyz; members back recover', async (t) => {
  const ns = 'faults-etcd';
  const etcd = cluster.etcdClient();
  const members = (await etcd.cluster.memberList({})).members;
  const leaderId = (await etcd.maintenance.status({})).leader;
  const index = (id: string): number => Number(/^etcd-(\d)$/.exec(members.find((m) => m.ID === id)!.name)![1]);
  const leader = index(leaderId);
  const followers = [0, 1, 2].filter((i) => i !== leader);
  t.diagnostic(`etcd leader: etcd-${leader}`);

  const load = startLoad(client, ns);
  loads.push(load);
  await sleep(2000);
  await cluster.stopEtcd(followers[0]!);
  const oneDownAt = Date.now();
  const errorsBefore = totalErrors(load.stats);
  const ackedBefore = load.stats.acknowledged.create + load.stats.acknowledged.update + load.stats.acknowledged.delete;
  await sleep(6000);
  const ackedOneDown = load.stats.acknowledged.create + load.stats.acknowledged.update + load.stats.acknowledged.delete - ackedBefore;
  const readsOneDown = load.stats.reads;
  await load.stop();
  t.diagnostic(figures(`etcd-${followers[0]} stopped`, load));
  t.diagnostic(`with one member down for ${secs(Date.now() - oneDownAt)}: ${ackedOneDown} writes acknowledged`);
  assert.equal(totalErrors(load.stats) - errorsBefore, 0, `no client error with one etcd member down: ${JSON.stringify(load.stats.errors)}`);
  assert.equal(totalErrors(load.stats), 0);
  assert.ok(ackedOneDown > 0 && readsOneDown > 0);

  // Two members down: no quorum.
  await cluster.stopEtcd(followers[1]!);
  const twoDownAt = Date.now();
  // Every replica's /readyz, polled straight (not through haproxy), while the writes below fail.
  const readyzFailing = eventually(
    async () => {
      const codes = await Promise.all([0, 1, 2].map((i) => cluster.replica(i).get('/readyz').then((r) => r.status, () => 0)));
      return codes.every((c) => c >= 500) && Date.now();
    },
    30_000,
    '/readyz to fail on every replica',
  );
  readyzFailing.catch(() => undefined); // awaited below
  const mine: TrackedObject[] = [];
  probes.set(ns, mine);
  const outcomes: string[] = [];
  await Promise.all(
    [0, 1, 2].map(async (i) => {
      const o: TrackedObject = { name: `probe-${i}`, acked: { present: false }, unknown: { op: 'create', value: `probe-${i}` } };
      mine.push(o);
      const t0 = Date.now();
      let what: string;
      try {
        const r = await client.request('POST', `/api/v1/namespaces/${ns}/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: o.name }, data: { v: o.unknown!.value } }, 60_000);
        what = `${r.status} ${r.body?.reason}: ${r.body?.message}`;
        assert.ok(r.status >= 500 && r.status < 600, `a write without etcd quorum: ${what}`);
        assert.equal(r.body?.kind, 'Status');
      } catch (e) {
        if (e instanceof assert.AssertionError) throw e;
        what = failureKind(e);
        assert.fail(`a write without etcd quorum must end with a 5xx Status, not ${what}`);
      }
      const took = Date.now() - t0;
      outcomes.push(`${what} after ${secs(took)}`);
      assert.ok(took < 30_000, `a write without quorum ended after ${secs(took)}`);
    }),
  );
  const listStart = Date.now();
  const read = await client.request('GET', `/api/v1/namespaces/${ns}/configmaps`, undefined, 60_000);
  outcomes.push(`list: ${read.status} ${read.body?.reason} after ${secs(Date.now() - listStart)}`);
  assert.ok(read.status >= 500, `a list without etcd quorum: ${read.status}`);
  t.diagnostic(`without quorum: ${outcomes.join('; ')}`);
  const readyzFailed = await readyzFailing;
  t.diagnostic(`/readyz failed on every replica ${secs(readyzFailed - twoDownAt)} after the second member stopped`);

  const backAt = Date.now();
  await Promise.all(followers.map((i) => cluster.startEtcd(i)));
  await eventually(
    async () => {
      const codes = await Promise.all([0, 1, 2].map((i) => cluster.replica(i).get('/readyz').then((r) => r.status, () => 0)));
      return codes.every((c) => c === 200);
    },
    60_000,
    '/readyz to recover on every replica',
  );
  t.diagnostic(`/readyz ok again on every replica ${secs(Date.now() - backAt)} after the members were started`);
  // What clients see: the load balancer sends to every replica again (its checks passed `rise` times).
  await allBackendsUp();
  t.diagnostic(`haproxy sees every replica UP ${secs(Date.now() - backAt)} after the members were started`);
  await eventually(async () => (await client.request('GET', '/readyz')).status === 200, 10_000, '/readyz through the load balancer');
  await verifyAll(t, 'after etcd members back');
});

test('rolling restart (SIGTERM, shutdown delay): a client that retries nothing sees no failed request', async (t) => {
  // In the namespace the client-node and Python caches watch, with names of its own.
  const ns = 'faults-kill';
  // A client of its own: Node's https agent with keep-alive, no retry anywhere.
  const plain = new PlainClient(cluster.info().loadBalancer.url, cluster.caPem, cluster.token, { maxSockets: 4 });
  // The claim is about restarts: it starts from a cluster whose every replica takes traffic.
  await allBackendsUp();
  const cutsBefore = await Promise.all(reflectors.map(async (r) => { const s = await r.stats(); return s.resumes + s.relists; }));
  const load = startLoad(plain, ns, { prefix: 'r', workers: 3 });
  loads.push(load);
  const marks: Array<[string, number]> = [];
  try {
    await sleep(1500);
    for (const i of [0, 1, 2]) {
      const t0 = Date.now();
      marks.push([`SIGTERM to replica ${i}`, t0]);
      await cluster.stopApiserver(i, 'SIGTERM');
      const stoppedIn = Date.now() - t0;
      marks.push([`replica ${i} exited`, Date.now()]);
      await cluster.startApiserver(i);
      marks.push([`replica ${i} ready`, Date.now()]);
      t.diagnostic(`replica ${i}: stopped in ${secs(stoppedIn)}, ready again after ${secs(Date.now() - t0)}; errors so far ${JSON.stringify(load.stats.errors)}`);
    }
    await sleep(1000);
  } finally {
    await load.stop();
    plain.close();
  }
  t.diagnostic(figures('rolling restart', load));
  // When the failures happened, among the restarts (seconds since the first SIGTERM).
  const at = (ms: number): string => ((ms - marks[0]![1]) / 1000).toFixed(2);
  const timeline = [...marks.map(([what, when]) => ({ when, line: what })), ...load.stats.firstFailures.map((f) => ({ when: f.at, line: `failed after ${f.tookMs} ms: ${f.kind}` }))];
  if (load.stats.firstFailures.length > 0) {
    t.diagnostic(`timeline: ${timeline.sort((a, b) => a.when - b.when).map((e) => `${at(e.when)} ${e.line}`).join('; ')}`);
    // What the replicas logged as errors meanwhile (their logs go with the cluster directory).
    for (const i of [0, 1, 2]) {
      const lines = readFileSync(join(cluster.dir, 'logs', `apiserver-${i}.log`), 'utf8').split('\n');
      const errors = lines.filter((l) => l.includes('"level":"error"') || l.includes('"level":"warn"')).slice(-8);
      t.diagnostic(`replica ${i} errors and warnings (last ${errors.length}): ${errors.map((l) => l.slice(0, 400)).join(' | ')}`);
    }
  }
  t.diagnostic(`longest request: ${secs(plain.maxLatencyMs)}`);
  assert.deepEqual(load.stats.errors, {}, 'failed requests during the rolling restart');
  await verifyAll(t, 'after the rolling restart');
  // Every replica restarted, so every watch was cut and resumed; the caches are exact.
  for (const [i, r] of reflectors.entries()) {
    const s = await converged(r, ns);
    t.diagnostic(`${r.name} cache after the rolling restart: ${JSON.stringify(s)}`);
    assert.ok(s.resumes + s.relists >= cutsBefore[i]! + 1, `${r.name}: its watch was resumed`);
  }
});

test('exactly one compaction per interval across the replicas', async (t) => {
  const etcd = cluster.etcdClient();
  const KEY = 'compact_rev_key';
  const puts: Array<{ version: number; value: number }> = [];
  // The key now, and every put from the next revision on (no gap between the two).
  const now = await etcd.kv.range({ key: Buffer.from(KEY) });
  const startValue = Number(now.kvs[0]?.value.toString() ?? 0);
  const watcher = await etcd.watch().key(KEY).startRevision(String(Number(now.header.revision) + 1)).create();
  watcher.on('put', (kv) => puts.push({ version: Number(kv.version), value: Number(kv.value.toString()) }));
  // etcd's compacted revision: the oldest revision a range can still read.
  const readable = async (client: Etcd3, revision: number): Promise<boolean> => {
    try {
      await client.kv.range({ key: Buffer.from(KEY), revision: String(revision) });
      return true;
    } catch (e) {
      if (!/compacted/.test(String((e as Error).message))) throw e;
      return false;
    }
  };
  const compactedRevision = async (low: number, client: Etcd3 = etcd): Promise<number> => {
    for (;;) {
      let hi = Number((await client.kv.range({ key: Buffer.from(KEY) })).header.revision);
      let lo = low;
      while (lo < hi) {
        const mid = Math.floor((lo + hi) / 2);
        if (await readable(client, mid)) hi = mid;
        else lo = mid + 1;
      }
      // A search that a compaction overtook ends between the old and the new compacted revision
      // (its early probes read what its late ones could not). Only a result whose predecessor is
      // unreadable and which is readable afterwards, in that order, is the compacted revision.
      if (lo <= 1 || ((await readable(client, lo - 1)) === false && (await readable(client, lo)))) return lo;
    }
  };
  const windowMs = 3 * COMPACTION_INTERVAL_S * 1000 + 1000;
  const compactions: number[] = [];
  let current = await compactedRevision(1);
  const current0 = current;
  // Each member's own view (the pooled client reads from any), for the diagnostics.
  const { etcd: etcdMembers, etcdClientTLS: tls } = cluster.info();
  const credentials = { rootCertificate: readFileSync(tls.ca), certChain: readFileSync(tls.cert), privateKey: readFileSync(tls.key) };
  const perMember = etcdMembers.map((m) => new Etcd3({ hosts: [m.clientURL], credentials }));
  const memberViews = async (): Promise<string> =>
    JSON.stringify(await Promise.all(perMember.map((c) => compactedRevision(1, c).catch((e: Error) => e.message))));
  t.diagnostic(`at the start: compact_rev_key version ${now.kvs[0]?.version ?? 0} value ${startValue}; compacted revision ${current}, per member ${await memberViews()}`);
  const start = Date.now();
  while (Date.now() - start < windowMs) {
    await sleep(250);
    const c = await compactedRevision(current);
    if (c !== current) compactions.push(c);
    current = c;
  }
  await sleep(500); // the last put's event, and its compaction
  const last = await compactedRevision(current);
  if (last !== current) compactions.push(last);
  await watcher.cancel();
  t.diagnostic(`at the end: compacted revision per member ${await memberViews()}`);
  for (const c of perMember) c.close();
  t.diagnostic(`${secs(windowMs)} with --etcd-compaction-interval=${COMPACTION_INTERVAL_S}s on 3 replicas: compact_rev_key rounds ${JSON.stringify(puts)}, etcd compactions to ${JSON.stringify(compactions)}`);
  const rounds = puts.filter((p) => p.value > 0);
  assert.ok(rounds.length >= 1, 'at least one compaction round');
  assert.ok(rounds.length <= Math.ceil(windowMs / (COMPACTION_INTERVAL_S * 1000)), `one round per interval, not one per replica: ${rounds.length}`);
  // Each round compacts once, to the revision it recorded. A round that recorded its revision
  // just before the window may compact just after it started; one cut short between its record
  // and its compaction (kube's compactor has the same gap: a replica stopped, etcd without quorum,
  // as in the tests before this one) never does, and the next round compacts further.
  const pending = current0 < startValue && compactions[0] === startValue ? [startValue] : [];
  // The reverse edge: the first round recorded its revision after the key was read (so its put is
  // among the rounds) and compacted before the first reading of the compacted revision (current0):
  // it happened, but before the readings that count compactions began.
  const counted = rounds.map((p) => p.value).filter((v, i) => !(i === 0 && v === current0));
  assert.deepEqual(compactions, [...pending, ...counted]);
  for (let i = 1; i < puts.length; i++) assert.equal(puts[i]!.version, puts[i - 1]!.version + 1);
});
