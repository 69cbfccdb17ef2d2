/**
 * Scenario 5: list 10,000 objects — unpaginated and in pages of 500 — through plinth (from etcd,
 * resourceVersion unset) against raw etcd ranges of the same objects decoded as a client would
 * (pages at a pinned revision). Also plinth's resourceVersion=0 list from the watch cache.
 */
import { performance } from 'node:perf_hooks';
import type { BenchContext } from '../lib/context.js';
import { CpuMeter } from '../lib/proc.js';
import { Histogram, selfCpuUs, sleep, type LatencySummary } from '../lib/stats.js';
import { ensureNamespace } from '../lib/plinth.js';
import { serviceAccountProfile, toBytes, type ObjectProfile } from '../lib/objects.js';
import { bulkPut } from '../lib/etcd.js';

interface ListBody {
  metadata: { resourceVersion: string; continue?: string };
  items: unknown[];
}

interface ListRun {
  reps: number;
  objects: number;
  latency: LatencySummary;
  objectsPerSec: number;
  loadgenCpuPct: number;
  plinthCpuPct?: number;
  etcdCpuPct: number;
  otherCpuPct: number;
}

const PAGE = 500;

/** The rows for one kind (ServiceAccounts by default); `sizes` scales the count for bigger objects. */
export async function listScenario(ctx: BenchContext, profile: ObjectProfile = serviceAccountProfile, sizes = 1): Promise<void> {
  const N = ctx.size(Math.round(10000 * sizes));
  const reps = 5;
  const ns = `bench-list-${profile.resource}`;
  const client = ctx.plinth.client;
  const kv = ctx.raw.kv;
  const rawPrefix = `/rawbench/list-${profile.resource}/`;
  await ensureNamespace(client, ns);

  const entries: Array<[string, Buffer]> = [];
  for (let i = 0; i < N; i++) {
    const n = `ls-${String(i).padStart(6, '0')}`;
    const value = toBytes(profile.stored(ns, n, i));
    entries.push([`/registry/${profile.resource}/${ns}/${n}`, value]);
    entries.push([`${rawPrefix}${n}`, value]);
  }
  const t0 = performance.now();
  await bulkPut(ctx.raw, entries);
  ctx.log(`  loaded ${N} objects twice (plinth's keys and raw keys) in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  // Wait until plinth's watch cache holds them all (plus the namespace's own `default`
  // ServiceAccount, if a controller made one: plinth's lists then hold that one more).
  let plinthCount = 0;
  for (let tries = 0; ; tries++) {
    const l = await client.json<ListBody>('GET', `/api/v1/namespaces/${ns}/${profile.resource}?resourceVersion=0`, undefined, 200);
    plinthCount = l.items.length;
    if (plinthCount >= N) break;
    if (tries > 300) throw new Error(`plinth's cache shows ${plinthCount} of ${N} objects`);
    await sleep(100);
  }

  const measure = async (side: 'plinth' | 'raw', fn: () => Promise<number>): Promise<ListRun> => {
    await fn(); // warm-up
    const pids: Record<string, number> = { etcd: ctx.etcd.pid };
    if (side === 'plinth') pids['plinth'] = ctx.plinth.pid;
    const meter = new CpuMeter(pids);
    const hist = new Histogram();
    const cpu0 = selfCpuUs();
    meter.start();
    const start = performance.now();
    for (let i = 0; i < reps; i++) {
      const s = performance.now();
      const got = await fn();
      if (got !== (side === 'plinth' ? plinthCount : N)) throw new Error(`list (${side}) returned ${got} of ${N}`);
      hist.add(performance.now() - s);
    }
    const wall = performance.now() - start;
    const cpu = meter.stop();
    const latency = hist.summary();
    const run: ListRun = {
      reps,
      objects: N,
      latency,
      objectsPerSec: (N * reps * 1000) / wall,
      loadgenCpuPct: ((selfCpuUs() - cpu0) / (wall * 1000)) * 100,
      etcdCpuPct: cpu['etcd']!.cpuPct,
      otherCpuPct: cpu['other']!.cpuPct,
    };
    if (cpu['plinth']) run.plinthCpuPct = cpu['plinth'].cpuPct;
    return run;
  };

  const path = `/api/v1/namespaces/${ns}/${profile.resource}`;
  const plinthList = (query: string) => async (): Promise<number> => {
    let count = 0;
    let cont = '';
    for (;;) {
      const q = [query, cont ? `continue=${encodeURIComponent(cont)}` : ''].filter(Boolean).join('&');
      const l = await client.json<ListBody>('GET', q ? `${path}?${q}` : path, undefined, 200);
      count += l.items.length;
      cont = l.metadata.continue ?? '';
      if (!cont) return count;
    }
  };
  const rawList = (limit: number) => async (): Promise<number> => {
    const prefix = Buffer.from(rawPrefix);
    const end = Buffer.from(`${rawPrefix.slice(0, -1)}0`);
    let key = prefix;
    let revision = 0;
    let count = 0;
    for (;;) {
      const res = await kv.range({ key, range_end: end, limit, revision });
      if (revision === 0) revision = Number(res.header.revision);
      const items = res.kvs.map((x) => JSON.parse(x.value.toString('utf8')) as unknown);
      count += items.length;
      const last = res.kvs[res.kvs.length - 1];
      if (!res.more || !last) return count;
      key = Buffer.concat([last.key, Buffer.from([0])]);
    }
  };

  const runs: Record<string, ListRun> = {};
  runs['unpaged-raw'] = await measure('raw', rawList(0));
  runs['unpaged-plinth'] = await measure('plinth', plinthList(''));
  runs['paged-raw'] = await measure('raw', rawList(PAGE));
  runs['paged-plinth'] = await measure('plinth', plinthList(`limit=${PAGE}`));
  runs['rv0-plinth'] = await measure('plinth', plinthList('resourceVersion=0'));
  for (const [k, v] of Object.entries(runs)) {
    ctx.log(
      `  list ${k}: ${v.latency.p50Ms.toFixed(0)} ms p50 per ${N}-object list, ${v.objectsPerSec.toFixed(0)} objects/s; cpu loadgen ${v.loadgenCpuPct.toFixed(0)}%` +
        (v.plinthCpuPct !== undefined ? ` plinth ${v.plinthCpuPct.toFixed(0)}%` : '') +
        ` etcd ${v.etcdCpuPct.toFixed(0)}% other ${v.otherCpuPct.toFixed(0)}%`,
    );
  }
  const label = `${N.toLocaleString('en-US')}`;
  const none = { kind: 'none' } as const;
  ctx.rows.push(
    { scenario: `${profile.label}list ${label} unpaged`, unit: 'obj/s', plinth: runs['unpaged-plinth']!.objectsPerSec, raw: runs['unpaged-raw']!.objectsPerSec, target: none },
    { scenario: `${profile.label}list ${label} unpaged p50`, unit: 'ms', plinth: runs['unpaged-plinth']!.latency.p50Ms, raw: runs['unpaged-raw']!.latency.p50Ms, target: none },
    { scenario: `${profile.label}list ${label} paged (limit ${PAGE})`, unit: 'obj/s', plinth: runs['paged-plinth']!.objectsPerSec, raw: runs['paged-raw']!.objectsPerSec, target: { kind: 'ratioAtLeast', value: 0.8 } },
    { scenario: `${profile.label}list ${label} paged p50`, unit: 'ms', plinth: runs['paged-plinth']!.latency.p50Ms, raw: runs['paged-raw']!.latency.p50Ms, target: none },
    {
      scenario: `${profile.label}list ${label} rv=0 (cache)`,
      unit: 'obj/s',
      plinth: runs['rv0-plinth']!.objectsPerSec,
      raw: runs['unpaged-raw']!.objectsPerSec,
      target: { kind: 'ratioAtLeast', value: 1.5 },
      note: 'raw column: the unpaged raw range',
    },
  );
  ctx.details[`list${profile.label ? `-${profile.resource}` : ''}`] = { objects: N, pageSize: PAGE, reps, runs };
}
