/**
 * Scenario 6: watch fan-out. N concurrent watches on one plinth process (each its own HTTPS
 * connection), N writes at a steady rate through plinth; every event must reach every watch.
 * Latency runs from the write's acknowledgement to receipt (clamped at 0: an event may arrive
 * before its ack). Each side's measured writes follow a second of unmeasured ones (warmFanout).
 * The same against the fan-out floor (issue 28 §2, watch-floor.ts: one etcd watch, the same
 * frames written to the same N TLS watches, writes through its own POST), once with plinth's
 * etcd client (the reference of the p99 target) and once with etcd3; and with N etcd3 watches on
 * raw etcd and txn writes. etcd's own watcher count shows how many etcd watches each side needed.
 */
import { performance } from 'node:perf_hooks';
import type { Watcher } from 'etcd3';
import type { BenchContext } from '../lib/context.js';
import { CpuMeter, RssSampler, procRssBytes } from '../lib/proc.js';
import { paced, selfCpuUs, sleep } from '../lib/stats.js';
import { Receipts, warmFanout, warmWrites, type FanoutRun } from '../lib/fanout.js';
import { floorFanout, plinthBodies } from './watch-floor.js';
import { ensureNamespace } from '../lib/plinth.js';
import { etcdWatcherTotal, rawClient } from '../lib/etcd.js';
import { serviceAccountProfile, toBytes, type ObjectProfile } from '../lib/objects.js';

/** The rows for one kind (ServiceAccounts by default, 1,000 watches × 1,000 writes). */
export async function watchScenario(ctx: BenchContext, profile: ObjectProfile = serviceAccountProfile, size = { watchers: 1000, writes: 1000 }): Promise<void> {
  const WATCHERS = ctx.size(size.watchers);
  const WRITES = ctx.size(size.writes);
  const RATE = 200;
  const settleMs = 30_000;
  const ns = `bench-watch${profile.label ? `-${profile.resource}` : ''}`;
  const L = profile.label;
  const client = ctx.plinth.client;
  await ensureNamespace(client, ns);
  const path = `/api/v1/namespaces/${ns}/${profile.resource}`;

  // --- plinth ---
  const p = new Receipts(WATCHERS, WRITES);
  const baseline = await etcdWatcherTotal(ctx.etcd.endpoint);
  await warmWrites(client, path, (name, i) => toBytes(profile.make(ns, name, i)));
  const rv = (await client.json<{ metadata: { resourceVersion: string } }>('GET', path, undefined, 200)).metadata.resourceVersion;
  const rssBefore = procRssBytes(ctx.plinth.pid);
  const streams: Array<{ close(): void }> = [];
  let t0 = performance.now();
  for (let b = 0; b < WATCHERS; b += 100) {
    const batch = Array.from({ length: Math.min(100, WATCHERS - b) }, (_, k) => {
      const w = b + k;
      return client.openRawStream(`${path}?watch=1&resourceVersion=${rv}&timeoutSeconds=900`, p.reader(w));
    });
    streams.push(...(await Promise.all(batch)));
  }
  const plinthOpenMs = performance.now() - t0;
  await sleep(500);
  const plinthAdded = (await etcdWatcherTotal(ctx.etcd.endpoint)) - baseline;
  const rssWith = procRssBytes(ctx.plinth.pid);
  ctx.log(`  plinth: ${WATCHERS} watches open in ${plinthOpenMs.toFixed(0)} ms; etcd watchers added: ${plinthAdded}; RSS ${(rssBefore / 2 ** 20).toFixed(0)} → ${(rssWith / 2 ** 20).toFixed(0)} MiB`);
  await warmFanout(client, path, (name, i) => toBytes(profile.make(ns, name, i)), RATE);
  p.firstWatchBytes = 0;
  const sampler = new RssSampler(ctx.plinth.pid);
  const meter = new CpuMeter({ plinth: ctx.plinth.pid, etcd: ctx.etcd.pid });
  sampler.start();
  meter.start();
  let cpu0 = selfCpuUs();
  t0 = performance.now();
  const pw = await paced(WRITES, RATE, async (i) => {
    p.sent[i] = performance.now();
    await client.json('POST', path, toBytes(profile.make(ns, `fan-${i}`, i)), 201);
    p.acked[i] = performance.now();
  });
  await p.allDelivered(settleMs);
  let wall = performance.now() - t0;
  const pCpu = meter.stop();
  const peak = sampler.stop();
  const pLoadgen = ((selfCpuUs() - cpu0) / (wall * 1000)) * 100;
  for (const s of streams) s.close();
  const ps = p.summaries();
  const p99BySecond = p.p99ByWrites(RATE);
  ctx.log(`  plinth: p99 per second of writes (ms): ${p99BySecond.join(' ')}`);
  const plinthRun: FanoutRun = {
    watchers: WATCHERS,
    writes: WRITES,
    ratePerSec: RATE,
    openMs: plinthOpenMs,
    expected: WATCHERS * WRITES,
    delivered: p.delivered,
    latencyFromAck: ps.fromAck,
    latencyFromSend: ps.fromSend,
    etcdWatchersAdded: plinthAdded,
    writeErrors: pw.errors,
    achievedWriteRate: p.achievedRate(),
    loadgenCpuPct: pLoadgen,
    etcdCpuPct: pCpu['etcd']!.cpuPct,
    otherCpuPct: pCpu['other']!.cpuPct,
    plinthCpuPct: pCpu['plinth']!.cpuPct,
    serverCpuPct: pCpu['plinth']!.cpuPct,
    serverRssPeak: peak,
    bytesPerEvent: p.firstWatchBytes / WRITES,
    plinthRssBeforeWatches: rssBefore,
    plinthRssWithWatches: rssWith,
    plinthRssPeak: peak,
  };
  ctx.log(
    `  plinth: delivered ${p.delivered}/${WATCHERS * WRITES}, p50 ${ps.fromAck.p50Ms.toFixed(1)} ms p99 ${ps.fromAck.p99Ms.toFixed(1)} ms; cpu loadgen ${pLoadgen.toFixed(0)}% plinth ${plinthRun.plinthCpuPct!.toFixed(0)}% etcd ${plinthRun.etcdCpuPct.toFixed(0)}% other ${plinthRun.otherCpuPct.toFixed(0)}%; peak RSS ${(peak / 2 ** 20).toFixed(0)} MiB; ${plinthRun.bytesPerEvent!.toFixed(0)} B per event on a watch` +
      (pw.errors ? `; ${pw.errors} write errors, e.g. ${pw.firstError ?? ''}` : ''),
  );

  // --- the fan-out floor, with plinth's etcd client and with etcd3 ---
  const bodies = await plinthBodies(ctx, { profile, namespace: ns, writes: WRITES });
  const floorRun = { profile, namespace: ns, watchers: WATCHERS, writes: WRITES, ratePerSec: RATE, settleMs, bodies };
  const fl = await floorFanout(ctx, { ...floorRun, etcdClient: 'fastkv' });
  const fl3 = await floorFanout(ctx, { ...floorRun, etcdClient: 'etcd3' });

  // --- raw etcd: the same number of watches (on their own client) and writes ---
  const r = new Receipts(WATCHERS, WRITES);
  const prefix = `/rawbench/watch-${profile.resource}/`;
  const watchClient = rawClient(ctx.etcd.endpoint);
  const rawBaseline = await etcdWatcherTotal(ctx.etcd.endpoint);
  t0 = performance.now();
  const watchers: Watcher[] = await Promise.all(
    Array.from({ length: WATCHERS }, async (_, w) => {
      const watcher = await watchClient.watch().prefix(prefix).create();
      watcher.on('put', (kv) => r.mark(w, Number(kv.key.toString().slice(prefix.length + 4)), performance.now()));
      return watcher;
    }),
  );
  const rawOpenMs = performance.now() - t0;
  await sleep(500);
  const rawAdded = (await etcdWatcherTotal(ctx.etcd.endpoint)) - rawBaseline;
  const rMeter = new CpuMeter({ etcd: ctx.etcd.pid });
  rMeter.start();
  cpu0 = selfCpuUs();
  t0 = performance.now();
  const kv = ctx.raw.kv;
  const rw = await paced(WRITES, RATE, async (i) => {
    const k = Buffer.from(`${prefix}fan-${i}`);
    r.sent[i] = performance.now();
    const res = await kv.txn({
      compare: [{ key: k, target: 'Create', result: 'Equal', create_revision: 0 }],
      success: [{ request_put: { key: k, value: toBytes(profile.stored(ns, `fan-${i}`, i)) } }],
      failure: [],
    });
    if (!res.succeeded) throw new Error('raw watch write: exists');
    r.acked[i] = performance.now();
  });
  await r.allDelivered(settleMs);
  wall = performance.now() - t0;
  const rCpu = rMeter.stop();
  const rLoadgen = ((selfCpuUs() - cpu0) / (wall * 1000)) * 100;
  await Promise.all(watchers.map((w) => w.cancel()));
  watchClient.close();
  const rs = r.summaries();
  const rawRun: FanoutRun = {
    watchers: WATCHERS,
    writes: WRITES,
    ratePerSec: RATE,
    openMs: rawOpenMs,
    expected: WATCHERS * WRITES,
    delivered: r.delivered,
    latencyFromAck: rs.fromAck,
    latencyFromSend: rs.fromSend,
    etcdWatchersAdded: rawAdded,
    writeErrors: rw.errors,
    achievedWriteRate: r.achievedRate(),
    loadgenCpuPct: rLoadgen,
    etcdCpuPct: rCpu['etcd']!.cpuPct,
    otherCpuPct: rCpu['other']!.cpuPct,
  };
  ctx.log(
    `  raw: ${WATCHERS} watches open in ${rawOpenMs.toFixed(0)} ms (+${rawAdded} etcd watchers); delivered ${r.delivered}/${WATCHERS * WRITES}, p50 ${rs.fromAck.p50Ms.toFixed(1)} ms p99 ${rs.fromAck.p99Ms.toFixed(1)} ms; cpu loadgen ${rLoadgen.toFixed(0)}% etcd ${rawRun.etcdCpuPct.toFixed(0)}% other ${rawRun.otherCpuPct.toFixed(0)}%`,
  );

  const plinthFeeds = baseline - ctx.etcdWatchersBeforePlinth;
  const n = `${WATCHERS.toLocaleString('en-US')}×${WRITES.toLocaleString('en-US')}`;
  const all = { value: WATCHERS * WRITES, text: 'all' };
  const ETCD3_FLOOR = 'floor (etcd3)';
  // Rows with a floor column show the floor with plinth's etcd client (FastKV); `(etcd3)` rows the other.
  ctx.rows.push(
    { scenario: `${L}watch ${n} events delivered`, unit: '', plinth: p.delivered, floor: fl.delivered, raw: r.delivered, target: { kind: 'plinthEquals', ...all } },
    { scenario: `${L}fan-out floor: watch ${n} events delivered`, unit: '', plinth: null, floor: fl.delivered, raw: r.delivered, of: 'floor', target: { kind: 'floorEquals', ...all } },
    {
      scenario: `${L}fan-out floor (etcd3): watch ${n} events delivered`,
      unit: '',
      plinth: null,
      floor: fl3.delivered,
      raw: r.delivered,
      of: 'floor',
      floorName: ETCD3_FLOOR,
      target: { kind: 'floorEquals', ...all },
    },
    { scenario: `${L}watch delivery p50 (${RATE} writes/s)`, unit: 'ms', plinth: ps.fromAck.p50Ms, floor: fl.latencyFromAck.p50Ms, raw: rs.fromAck.p50Ms, target: { kind: 'none' } },
    {
      scenario: `${L}watch delivery p99 (${RATE} writes/s)`,
      unit: 'ms',
      plinth: ps.fromAck.p99Ms,
      raw: rs.fromAck.p99Ms,
      target: { kind: 'none' },
      note: `was ≤ 100 ms; the fan-out floor is now the reference (issue 28 §2): see "${L}watch delivery p99 vs fan-out floor"`,
    },
    // Issue 28 §2: against the least a node:https server must do for the same fan-out.
    {
      scenario: `${L}watch delivery p99 vs fan-out floor`,
      unit: 'ms',
      plinth: ps.fromAck.p99Ms,
      floor: fl.latencyFromAck.p99Ms,
      raw: rs.fromAck.p99Ms,
      vs: 'floor',
      target: { kind: 'ratioAtMost', value: 1.25 },
      note:
        `floor: one etcd watch through plinth's own watch feed, writes through FastKV, plinth's stored objects as bodies; ` +
        `p50 ${fl.latencyFromAck.p50Ms.toFixed(1)} ms (etcd3 floor ${fl3.latencyFromAck.p50Ms.toFixed(1)} ms); ` +
        `bytes per event on a watch: plinth ${plinthRun.bytesPerEvent!.toFixed(0)}, floor ${fl.bytesPerEvent!.toFixed(0)}`,
    },
    {
      scenario: `${L}watch delivery p99 vs fan-out floor (etcd3)`,
      unit: 'ms',
      plinth: ps.fromAck.p99Ms,
      floor: fl3.latencyFromAck.p99Ms,
      raw: rs.fromAck.p99Ms,
      vs: 'floor',
      floorName: ETCD3_FLOOR,
      target: { kind: 'none' },
    },
    {
      scenario: `${L}watch delivery p99 from write start`,
      unit: 'ms',
      plinth: ps.fromSend.p99Ms,
      floor: fl.latencyFromSend.p99Ms,
      raw: rs.fromSend.p99Ms,
      target: { kind: 'none' },
      note: 'includes the time the write itself waited: an overloaded server acknowledges late, which hides delay from the ack-based figure',
    },
    { scenario: `${L}watch writes achieved (offered ${RATE}/s)`, unit: '/s', plinth: plinthRun.achievedWriteRate, floor: fl.achievedWriteRate, raw: rawRun.achievedWriteRate, target: { kind: 'none' } },
    {
      scenario: `${L}watch server CPU vs fan-out floor`,
      unit: '%',
      plinth: plinthRun.plinthCpuPct!,
      floor: fl.serverCpuPct!,
      raw: null,
      vs: 'floor',
      target: { kind: 'none' },
      note: `the server process during the writes and their delivery, % of one core (etcd3 floor ${fl3.serverCpuPct!.toFixed(0)}%)`,
    },
    {
      scenario: `${L}watch etcd watchers added by ${WATCHERS} watches`,
      unit: '',
      plinth: plinthAdded,
      floor: fl.etcdWatchersAdded,
      raw: rawAdded,
      target: { kind: 'plinthEquals', value: 0, text: '0 (one per resource)' },
      note: `plinth holds ${plinthFeeds} etcd watches in all (its watch-cache feeds + compaction key), opened at start-up; the floor opens one at its first watch`,
    },
    { scenario: `${L}watch plinth RSS peak (${WATCHERS} watches)`, unit: 'MiB', plinth: peak / 2 ** 20, floor: fl.serverRssPeak! / 2 ** 20, raw: null, target: { kind: 'none' } },
  );
  ctx.details[`watch${L ? `-${profile.resource}` : ''}`] = {
    plinth: { ...plinthRun, p99BySecondMs: p99BySecond },
    floor: fl,
    floorEtcd3: fl3,
    raw: rawRun,
    plinthEtcdWatchesTotal: plinthFeeds,
  };
}
