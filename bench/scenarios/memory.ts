/**
 * Scenario 7: watch-cache memory and start-up. 200,000 ServiceAccounts (20,000 with --quick) go
 * straight into etcd (multi-put txns, bulkPut) under a prefix of their own; a fresh plinth on that
 * prefix loads them into its cache at start-up. Its time to /readyz 200 is the start-up figure
 * (target ≤ 10 s with the cache ≤ 2× JSON); its settled RSS minus that of a fresh plinth on an
 * empty prefix, per object, is set beside the objects' average JSON size (target ≤ 2×).
 */
import { performance } from 'node:perf_hooks';
import type { BenchContext } from '../lib/context.js';
import { startPlinth, type PlinthProcess } from '../lib/plinth.js';
import { procRssBytes } from '../lib/proc.js';
import { sleep } from '../lib/stats.js';
import { bulkPut } from '../lib/etcd.js';
import { serviceAccountProfile, toBytes, type ObjectProfile } from '../lib/objects.js';

interface Settled {
  startupMs: number;
  rssSamples: number[];
  rss: number;
  /** Node's own view (from /metrics): heap used and total, external memory, in bytes. */
  node: Record<string, number>;
}

/** The process's Node.js memory series from its /metrics (where the RSS goes). */
async function nodeMemory(p: PlinthProcess): Promise<Record<string, number>> {
  const res = await p.client.request('GET', '/metrics');
  const out: Record<string, number> = {};
  if (res.status !== 200) return out;
  for (const line of res.body.toString('utf8').split('\n')) {
    const m = /^(nodejs_heap_size_(?:used|total)_bytes|nodejs_external_memory_bytes|nodejs_heap_space_size_used_bytes\{space="(?:old|large_object|code|new)"\}) (\S+)$/.exec(line);
    if (m) out[m[1]!.replace(/nodejs_|_bytes|\{space="|"\}/g, '')] = Number(m[2]);
  }
  return out;
}

/** Waits for start-up garbage to settle, then takes the median of a few RSS samples. */
async function settledRss(p: PlinthProcess, settleMs: number): Promise<Settled> {
  await sleep(settleMs);
  const samples: number[] = [];
  for (let i = 0; i < 8; i++) {
    samples.push(procRssBytes(p.pid));
    await sleep(250);
  }
  const sorted = [...samples].sort((a, b) => a - b);
  return { startupMs: p.startupMs, rssSamples: samples, rss: sorted[Math.floor(sorted.length / 2)]!, node: await nodeMemory(p) };
}

/** The rows for one kind: 200,000 ServiceAccounts by default (pods: 100,000). */
export async function memoryScenario(ctx: BenchContext, profile: ObjectProfile = serviceAccountProfile, count = 200_000): Promise<void> {
  const N = ctx.size(count);
  const settleMs = ctx.quick ? 3000 : 5000;
  const emptyPrefix = '/bench-mem-empty';
  const fullPrefix = '/bench-mem-full';
  const L = profile.label;

  const empty = await startPlinth({ etcdEndpoint: ctx.etcd.endpoint, prefix: emptyPrefix, maxSockets: 4 });
  let base: Settled;
  try {
    base = await settledRss(empty, settleMs);
  } finally {
    await empty.stop();
  }

  const entries: Array<[string, Buffer]> = [];
  let jsonBytes = 0;
  for (let i = 0; i < N; i++) {
    const ns = `mem-${i % 10}`;
    const n = `mem-${String(i).padStart(6, '0')}`;
    const v = toBytes(profile.stored(ns, n, i));
    jsonBytes += v.length;
    entries.push([`${fullPrefix}/${profile.resource}/${ns}/${n}`, v]);
  }
  const t0 = performance.now();
  await bulkPut(ctx.raw, entries);
  const loadMs = performance.now() - t0;
  ctx.log(`  wrote ${N} objects to etcd in ${(loadMs / 1000).toFixed(1)} s`);
  entries.length = 0;

  const full = await startPlinth({ etcdEndpoint: ctx.etcd.endpoint, prefix: fullPrefix, maxSockets: 4, readyTimeoutMs: 180_000 });
  let loaded: Settled;
  let cached = 0;
  try {
    loaded = await settledRss(full, settleMs);
    // Only now (after measuring) check that the cache holds them: a 1-item page from the cache
    // reports how many remain.
    const l = await full.client.json<{ items: unknown[]; metadata: { remainingItemCount?: number } }>(
      'GET',
      `/api/v1/${profile.resource}?resourceVersion=0&limit=1`,
      undefined,
      200,
    );
    cached = l.items.length + (l.metadata.remainingItemCount ?? 0);
    if (l.metadata.remainingItemCount === undefined) {
      const all = await full.client.json<{ items: unknown[] }>('GET', `/api/v1/${profile.resource}?resourceVersion=0`, undefined, 200);
      cached = all.items.length;
    }
  } finally {
    await full.stop();
  }
  // Leave etcd small for whatever runs next.
  await ctx.raw.delete().prefix(`${fullPrefix}/`).exec();

  const avgJson = jsonBytes / N;
  const mib = (b: number | undefined): string => ((b ?? 0) / 2 ** 20).toFixed(0);
  ctx.log(
    `  Node.js memory empty / full: heap used ${mib(base.node['heap_size_used'])} / ${mib(loaded.node['heap_size_used'])} MiB, heap total ${mib(base.node['heap_size_total'])} / ${mib(loaded.node['heap_size_total'])} MiB, external ${mib(base.node['external_memory'])} / ${mib(loaded.node['external_memory'])} MiB`,
  );
  const perObject = (loaded.rss - base.rss) / N;
  ctx.log(
    `  RSS empty ${(base.rss / 2 ** 20).toFixed(0)} MiB, with ${N} objects ${(loaded.rss / 2 ** 20).toFixed(0)} MiB (start-up ${loaded.startupMs} ms vs ${base.startupMs} ms); ${perObject.toFixed(0)} B/object vs ${avgJson.toFixed(0)} B JSON; cache shows ${cached}`,
  );
  const label = N.toLocaleString('en-US');
  const memoryMet = perObject <= 2 * avgJson;
  ctx.rows.push(
    {
      scenario: `${L}cache memory per object (${label})`,
      unit: 'B',
      plinth: perObject,
      raw: avgJson,
      target: { kind: 'ratioAtMost', value: 2 },
      note: 'plinth: (RSS with the objects − RSS empty) / count; raw column: average JSON bytes of one object',
    },
    {
      scenario: `${L}plinth start-up with ${label} objects`,
      unit: 'ms',
      plinth: loaded.startupMs,
      raw: base.startupMs,
      target: { kind: 'plinthAtMost', value: 10_000, unit: 'ms' },
      met: loaded.startupMs <= 10_000 && memoryMet,
      note: `raw column: start-up of plinth on an empty store; met needs ready ≤ 10 s and the cache ≤ 2× JSON (${(perObject / avgJson).toFixed(2)}×)`,
    },
  );
  ctx.details[`memory${L ? `-${profile.resource}` : ''}`] = { objects: N, avgJsonBytes: avgJson, loadMs, settleMs, empty: base, loaded, cachedObjectsSeen: cached, bytesPerObject: perObject };
}
