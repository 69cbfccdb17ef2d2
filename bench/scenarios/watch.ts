/**
 * Scenario 6: watch fan-out. N concurrent watches on one plinth process (each its own HTTPS
 * connection), N writes at a steady rate through plinth; every event must reach every watch.
 * Latency runs from the write's acknowledgement to receipt (clamped at 0: an event may arrive
 * before its ack). The same with N etcd3 watches on raw etcd and txn writes. etcd's own watcher
 * count shows how many etcd watches each side needed.
 */
import { performance } from 'node:perf_hooks';
import type { Watcher } from 'etcd3';
import type { BenchContext } from '../lib/context.js';
import { CpuMeter, RssSampler, procRssBytes } from '../lib/proc.js';
import { Histogram, paced, selfCpuUs, sleep, type LatencySummary } from '../lib/stats.js';
import { ensureNamespace } from '../lib/plinth.js';
import { etcdWatcherTotal, rawClient } from '../lib/etcd.js';
import { serviceAccountProfile, toBytes, type ObjectProfile } from '../lib/objects.js';

interface FanoutRun {
  watchers: number;
  writes: number;
  ratePerSec: number;
  openMs: number;
  expected: number;
  delivered: number;
  /** From the write's acknowledgement to receipt (negative clamped to 0). */
  latencyFromAck: LatencySummary;
  /** From the write's start to receipt. */
  latencyFromSend: LatencySummary;
  etcdWatchersAdded: number;
  writeErrors: number;
  /** Writes acknowledged per second (offered: ratePerSec). */
  achievedWriteRate: number;
  loadgenCpuPct: number;
  etcdCpuPct: number;
  otherCpuPct: number;
  plinthCpuPct?: number;
  plinthRssBeforeWatches?: number;
  plinthRssWithWatches?: number;
  plinthRssPeak?: number;
}

/** Tracks first receipt of (watcher, write) and the time each write was sent and acknowledged. */
class Receipts {
  readonly at: Float64Array;
  readonly sent: Float64Array;
  readonly acked: Float64Array;
  delivered = 0;

  constructor(readonly watchers: number, readonly writes: number) {
    this.at = new Float64Array(watchers * writes);
    this.sent = new Float64Array(writes);
    this.acked = new Float64Array(writes);
  }

  mark(watcher: number, write: number, now: number): void {
    if (write < 0 || write >= this.writes) return;
    const k = watcher * this.writes + write;
    if (this.at[k] === 0) {
      this.at[k] = now;
      this.delivered++;
    }
  }

  summaries(): { fromAck: LatencySummary; fromSend: LatencySummary } {
    const ack = new Histogram();
    const send = new Histogram();
    for (let k = 0; k < this.at.length; k++) {
      const t = this.at[k]!;
      if (t === 0) continue;
      const w = k % this.writes;
      ack.add(Math.max(0, t - this.acked[w]!));
      send.add(t - this.sent[w]!);
    }
    return { fromAck: ack.summary(), fromSend: send.summary() };
  }

  /** p99 delivery latency from the acknowledgement, per run of `perBucket` consecutive writes. */
  p99ByWrites(perBucket: number): number[] {
    const buckets: Histogram[] = [];
    for (let k = 0; k < this.at.length; k++) {
      const t = this.at[k]!;
      if (t === 0) continue;
      const w = k % this.writes;
      (buckets[Math.floor(w / perBucket)] ??= new Histogram()).add(Math.max(0, t - this.acked[w]!));
    }
    return buckets.map((h) => Math.round(h.summary().p99Ms));
  }

  /** Writes acknowledged per second, from the first write's start to the last acknowledgement. */
  achievedRate(): number {
    let first = Infinity;
    let last = 0;
    for (let i = 0; i < this.writes; i++) {
      first = Math.min(first, this.sent[i]!);
      last = Math.max(last, this.acked[i]!);
    }
    return last > first ? (this.writes * 1000) / (last - first) : 0;
  }

  async allDelivered(timeoutMs: number): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    while (this.delivered < this.at.length && performance.now() < deadline) await sleep(50);
  }
}

const MARKER = Buffer.from('"name":"fan-');

/** Finds every `"name":"fan-<i>"` in newline-terminated event lines of a watch stream. */
function lineScanner(onWrite: (i: number) => void): (chunk: Buffer) => void {
  let tail: Buffer = Buffer.alloc(0);
  return (chunk) => {
    const data = tail.length ? Buffer.concat([tail, chunk]) : chunk;
    const lastNl = data.lastIndexOf(10);
    if (lastNl < 0) {
      tail = data;
      return;
    }
    let pos = data.indexOf(MARKER);
    while (pos >= 0 && pos < lastNl) {
      let j = pos + MARKER.length;
      let idx = 0;
      for (let ch = data[j]!; ch >= 48 && ch <= 57; ch = data[++j]!) idx = idx * 10 + (ch - 48);
      onWrite(idx);
      pos = data.indexOf(MARKER, j);
    }
    tail = Buffer.from(data.subarray(lastNl + 1));
  };
}

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
  const rv = (await client.json<{ metadata: { resourceVersion: string } }>('GET', path, undefined, 200)).metadata.resourceVersion;
  const rssBefore = procRssBytes(ctx.plinth.pid);
  const streams: Array<{ close(): void }> = [];
  let t0 = performance.now();
  for (let b = 0; b < WATCHERS; b += 100) {
    const batch = Array.from({ length: Math.min(100, WATCHERS - b) }, (_, k) => {
      const w = b + k;
      return client.openRawStream(`${path}?watch=1&resourceVersion=${rv}&timeoutSeconds=900`, lineScanner((i) => p.mark(w, i, performance.now())));
    });
    streams.push(...(await Promise.all(batch)));
  }
  const plinthOpenMs = performance.now() - t0;
  await sleep(500);
  const plinthAdded = (await etcdWatcherTotal(ctx.etcd.endpoint)) - baseline;
  const rssWith = procRssBytes(ctx.plinth.pid);
  ctx.log(`  plinth: ${WATCHERS} watches open in ${plinthOpenMs.toFixed(0)} ms; etcd watchers added: ${plinthAdded}; RSS ${(rssBefore / 2 ** 20).toFixed(0)} → ${(rssWith / 2 ** 20).toFixed(0)} MiB`);
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
    plinthRssBeforeWatches: rssBefore,
    plinthRssWithWatches: rssWith,
    plinthRssPeak: peak,
  };
  ctx.log(
    `  plinth: delivered ${p.delivered}/${WATCHERS * WRITES}, p50 ${ps.fromAck.p50Ms.toFixed(1)} ms p99 ${ps.fromAck.p99Ms.toFixed(1)} ms; cpu loadgen ${pLoadgen.toFixed(0)}% plinth ${plinthRun.plinthCpuPct!.toFixed(0)}% etcd ${plinthRun.etcdCpuPct.toFixed(0)}% other ${plinthRun.otherCpuPct.toFixed(0)}%; peak RSS ${(peak / 2 ** 20).toFixed(0)} MiB` +
      (pw.errors ? `; ${pw.errors} write errors, e.g. ${pw.firstError ?? ''}` : ''),
  );

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
  ctx.rows.push(
    {
      scenario: `${L}watch ${n} events delivered`,
      unit: '',
      plinth: p.delivered,
      raw: r.delivered,
      target: { kind: 'plinthEquals', value: WATCHERS * WRITES, text: 'all' },
    },
    { scenario: `${L}watch delivery p50 (${RATE} writes/s)`, unit: 'ms', plinth: ps.fromAck.p50Ms, raw: rs.fromAck.p50Ms, target: { kind: 'none' } },
    { scenario: `${L}watch delivery p99 (${RATE} writes/s)`, unit: 'ms', plinth: ps.fromAck.p99Ms, raw: rs.fromAck.p99Ms, target: { kind: 'plinthAtMost', value: 100, unit: 'ms' } },
    {
      scenario: `${L}watch delivery p99 from write start`,
      unit: 'ms',
      plinth: ps.fromSend.p99Ms,
      raw: rs.fromSend.p99Ms,
      target: { kind: 'none' },
      note: 'includes the time the write itself waited: an overloaded server acknowledges late, which hides delay from the ack-based figure',
    },
    { scenario: `${L}watch writes achieved (offered ${RATE}/s)`, unit: '/s', plinth: plinthRun.achievedWriteRate, raw: rawRun.achievedWriteRate, target: { kind: 'none' } },
    {
      scenario: `${L}watch etcd watchers added by ${WATCHERS} watches`,
      unit: '',
      plinth: plinthAdded,
      raw: rawAdded,
      target: { kind: 'plinthEquals', value: 0, text: '0 (one per resource)' },
      note: `plinth holds ${plinthFeeds} etcd watches in all (its watch-cache feeds + compaction key), opened at start-up`,
    },
    { scenario: `${L}watch plinth RSS peak (${WATCHERS} watches)`, unit: 'MiB', plinth: peak / 2 ** 20, raw: null, target: { kind: 'none' } },
  );
  ctx.details[`watch${L ? `-${profile.resource}` : ''}`] = { plinth: { ...plinthRun, p99BySecondMs: p99BySecond }, raw: rawRun, plinthEtcdWatchesTotal: plinthFeeds };
}
