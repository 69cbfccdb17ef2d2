/**
 * The fan-out floor's side of the watch scenario (issue 28 §2): the same N watches, each its own
 * TLS connection, on a floor process (bench/floor/fanout.ts: one etcd watch, each event's frame
 * written to every watch), and the same N writes at the same rate through the floor's own POST.
 * Latency as on plinth: from the write's acknowledgement to receipt.
 *
 * The floor writes what plinth stored for the same write (`bodies`: plinth's objects, read back
 * after its run, without uid, creationTimestamp and resourceVersion, which the floor sets): its
 * frames then carry the same fields (managedFields, defaults) and are the size of plinth's, so
 * both sides encrypt and send the same bytes per event. Computing those fields is plinth's work
 * and stays out of the floor.
 */
import { performance } from 'node:perf_hooks';
import type { BenchContext } from '../lib/context.js';
import { startFloor, type FloorClient } from '../lib/floor.js';
import { CpuMeter, RssSampler } from '../lib/proc.js';
import { paced, selfCpuUs, sleep } from '../lib/stats.js';
import { etcdWatcherTotal } from '../lib/etcd.js';
import { toBytes, type ObjectProfile } from '../lib/objects.js';
import { Receipts, warmFanout, warmWrites, type FanoutRun } from '../lib/fanout.js';

/**
 * The floor's write bodies: plinth's stored `fan-<i>` objects of `namespace` (one list), as the
 * client would send them (apiVersion and kind back in front; no uid, creationTimestamp or
 * resourceVersion).
 */
export async function plinthBodies(ctx: BenchContext, o: { profile: ObjectProfile; namespace: string; writes: number }): Promise<Array<Buffer | undefined>> {
  const list = await ctx.plinth.client.json<{ items: Array<{ metadata: Record<string, unknown> }> }>('GET', `/api/v1/namespaces/${o.namespace}/${o.profile.resource}`, undefined, 200);
  const head = o.profile.make(o.namespace, 'fan-0', 0) as { apiVersion?: string; kind?: string };
  const out = new Array<Buffer | undefined>(o.writes);
  for (const item of list.items) {
    const m = /^fan-(\d+)$/.exec(String(item.metadata['name']));
    if (!m || Number(m[1]) >= o.writes) continue;
    delete item.metadata['uid'];
    delete item.metadata['creationTimestamp'];
    delete item.metadata['resourceVersion'];
    out[Number(m[1])] = toBytes({ apiVersion: head.apiVersion, kind: head.kind, ...item });
  }
  return out;
}

/** One floor run: which etcd client, and the same sizes and rate as plinth's run. */
export interface FloorFanoutOptions {
  etcdClient: FloorClient;
  profile: ObjectProfile;
  namespace: string;
  watchers: number;
  writes: number;
  ratePerSec: number;
  settleMs: number;
  /** The body of write i (plinth's stored object for it, see above); default profile.make. */
  bodies?: ReadonlyArray<Buffer | undefined>;
}

/** One run against a floor of its own (started and stopped here; its keys deleted after). */
export async function floorFanout(ctx: BenchContext, o: FloorFanoutOptions): Promise<FanoutRun & { p99BySecondMs: number[] }> {
  const prefix = `/floor-watch-${o.etcdClient}`;
  const floor = await startFloor({ kind: 'floor', etcdClient: o.etcdClient, etcdEndpoint: ctx.etcd.endpoint, plinth: ctx.plinth, prefix, maxSockets: 64 });
  const label = `floor (${o.etcdClient})`;
  try {
    const path = `/api/v1/namespaces/${o.namespace}/${o.profile.resource}`;
    const rec = new Receipts(o.watchers, o.writes);
    // The floor has no list: watches start at etcd's current revision, as plinth's at its list's.
    await warmWrites(floor.client, path, (name, i) => toBytes(o.profile.make(o.namespace, name, i)));
    const rv = (await ctx.raw.kv.range({ key: Buffer.from(prefix), count_only: true })).header.revision;
    const baseline = await etcdWatcherTotal(ctx.etcd.endpoint);
    const streams: Array<{ close(): void }> = [];
    let t0 = performance.now();
    for (let b = 0; b < o.watchers; b += 100) {
      const batch = Array.from({ length: Math.min(100, o.watchers - b) }, (_, k) => {
        const w = b + k;
        return floor.client.openRawStream(`${path}?watch=1&resourceVersion=${rv}`, rec.reader(w));
      });
      streams.push(...(await Promise.all(batch)));
    }
    const openMs = performance.now() - t0;
    await sleep(500);
    const added = (await etcdWatcherTotal(ctx.etcd.endpoint)) - baseline;
    await warmFanout(floor.client, path, (name, i) => toBytes(o.profile.make(o.namespace, name, i)), o.ratePerSec);
    rec.firstWatchBytes = 0;
    const sampler = new RssSampler(floor.pid);
    const meter = new CpuMeter({ floor: floor.pid, etcd: ctx.etcd.pid });
    sampler.start();
    meter.start();
    const cpu0 = selfCpuUs();
    t0 = performance.now();
    const pw = await paced(o.writes, o.ratePerSec, async (i) => {
      rec.sent[i] = performance.now();
      await floor.client.json('POST', path, o.bodies?.[i] ?? toBytes(o.profile.make(o.namespace, `fan-${i}`, i)), 201);
      rec.acked[i] = performance.now();
    });
    await rec.allDelivered(o.settleMs);
    const wall = performance.now() - t0;
    const cpu = meter.stop();
    const peak = sampler.stop();
    const loadgen = ((selfCpuUs() - cpu0) / (wall * 1000)) * 100;
    for (const s of streams) s.close();
    const sum = rec.summaries();
    const p99BySecondMs = rec.p99ByWrites(o.ratePerSec);
    const run = {
      watchers: o.watchers,
      writes: o.writes,
      ratePerSec: o.ratePerSec,
      openMs,
      expected: o.watchers * o.writes,
      delivered: rec.delivered,
      latencyFromAck: sum.fromAck,
      latencyFromSend: sum.fromSend,
      etcdWatchersAdded: added,
      writeErrors: pw.errors,
      achievedWriteRate: rec.achievedRate(),
      loadgenCpuPct: loadgen,
      etcdCpuPct: cpu['etcd']!.cpuPct,
      otherCpuPct: cpu['other']!.cpuPct,
      serverCpuPct: cpu['floor']!.cpuPct,
      serverRssPeak: peak,
      bytesPerEvent: rec.firstWatchBytes / o.writes,
      p99BySecondMs,
    };
    ctx.log(`  ${label}: ${o.watchers} watches open in ${openMs.toFixed(0)} ms (+${added} etcd watchers); p99 per second of writes (ms): ${p99BySecondMs.join(' ')}`);
    ctx.log(
      `  ${label}: delivered ${rec.delivered}/${run.expected}, p50 ${sum.fromAck.p50Ms.toFixed(1)} ms p99 ${sum.fromAck.p99Ms.toFixed(1)} ms; cpu loadgen ${loadgen.toFixed(0)}% floor ${run.serverCpuPct.toFixed(0)}% etcd ${run.etcdCpuPct.toFixed(0)}% other ${run.otherCpuPct.toFixed(0)}%; peak RSS ${(peak / 2 ** 20).toFixed(0)} MiB; ${run.bytesPerEvent.toFixed(0)} B per event on a watch` +
        (pw.errors ? `; ${pw.errors} write errors, e.g. ${pw.firstError ?? ''}` : ''),
    );
    return run;
  } finally {
    await floor.stop();
    await ctx.raw.delete().prefix(`${prefix}/`).exec();
  }
}
