/**
 * Scenarios 1–4 and 8: create at concurrency 1 and 32, quorum get, resourceVersion=0 get and
 * update at concurrency 32 — plinth over HTTPS against raw etcd txns/ranges of the same bytes —
 * and the CPU each side spends per create and per get.
 */
import type { BenchContext, PhaseResult } from '../lib/context.js';
import { phase } from '../lib/context.js';
import { ensureNamespace } from '../lib/plinth.js';
import { serviceAccount, storedServiceAccount, toBytes } from '../lib/objects.js';

interface Meta {
  metadata: { resourceVersion: string };
}

const saPath = (ns: string): string => `/api/v1/namespaces/${ns}/serviceaccounts`;
const name = (i: number): string => `sa-${String(i).padStart(6, '0')}`;

export async function crudScenario(ctx: BenchContext): Promise<void> {
  const N = ctx.size(5000);
  const W = ctx.size(300);
  const G = ctx.size(10000);
  const client = ctx.plinth.client;
  const kv = ctx.raw.kv;
  for (const ns of ['bench-warm', 'bench-c1', 'bench-c32']) await ensureNamespace(client, ns);

  const plinthCreate = async (ns: string, n: string, serial: number): Promise<string> => {
    const o = await client.json<Meta>('POST', saPath(ns), toBytes(serviceAccount(ns, n, serial)), 201);
    return o.metadata.resourceVersion;
  };
  const rawCreate = async (key: string, ns: string, n: string, serial: number): Promise<number> => {
    const k = Buffer.from(key);
    const res = await kv.txn({
      compare: [{ key: k, target: 'Create', result: 'Equal', create_revision: 0 }],
      success: [{ request_put: { key: k, value: toBytes(storedServiceAccount(ns, n, serial)) } }],
      failure: [],
    });
    if (!res.succeeded) throw new Error(`raw create ${key}: exists`);
    return Number(res.header.revision);
  };

  // Resource versions of what the c=32 runs created, for the update runs.
  const plinthRv: string[] = [];
  const rawRev: number[] = [];
  const warmPlinthRv: string[] = [];
  const warmRawRev: number[] = [];
  const results: Record<string, PhaseResult> = {};

  for (const c of [1, 32]) {
    const ns = `bench-c${c}`;
    const last = c === 32;
    results[`create-c${c}-raw`] = await phase(ctx, {
      name: `create c=${c}`,
      side: 'raw',
      total: N,
      concurrency: c,
      warmup: {
        total: W,
        op: async (i) => {
          const rev = await rawCreate(`/rawbench/warm/c${c}-${name(i)}`, 'bench-warm', name(i), i);
          if (last) warmRawRev[i] = rev;
        },
      },
      op: async (i) => {
        const rev = await rawCreate(`/rawbench/${ns}/${name(i)}`, ns, name(i), i);
        if (last) rawRev[i] = rev;
      },
    });
    results[`create-c${c}-plinth`] = await phase(ctx, {
      name: `create c=${c}`,
      side: 'plinth',
      total: N,
      concurrency: c,
      warmup: {
        total: W,
        op: async (i) => {
          const rv = await plinthCreate('bench-warm', `c${c}-${name(i)}`, i);
          if (last) warmPlinthRv[i] = rv;
        },
      },
      op: async (i) => {
        const rv = await plinthCreate(ns, name(i), i);
        if (last) plinthRv[i] = rv;
      },
    });
  }

  // Reads of the c=32 objects, round robin.
  const rawGet = (serializable: boolean) => async (i: number): Promise<void> => {
    const res = await kv.range({ key: Buffer.from(`/rawbench/bench-c32/${name(i % N)}`), serializable });
    const v = res.kvs[0];
    if (!v) throw new Error('raw get: not found');
    JSON.parse(v.value.toString('utf8'));
  };
  const plinthGet = (query: string) => async (i: number): Promise<void> => {
    await client.json<Meta>('GET', `${saPath('bench-c32')}/${name(i % N)}${query}`, undefined, 200);
  };
  results['get-quorum-raw'] = await phase(ctx, { name: 'get quorum c=32', side: 'raw', total: G, concurrency: 32, warmup: { total: W, op: rawGet(false) }, op: rawGet(false) });
  results['get-quorum-plinth'] = await phase(ctx, { name: 'get quorum c=32', side: 'plinth', total: G, concurrency: 32, warmup: { total: W, op: plinthGet('') }, op: plinthGet('') });
  results['get-rv0-raw'] = await phase(ctx, { name: 'get rv=0 c=32', side: 'raw', total: G, concurrency: 32, warmup: { total: W, op: rawGet(true) }, op: rawGet(true) });
  results['get-rv0-plinth'] = await phase(ctx, {
    name: 'get rv=0 c=32',
    side: 'plinth',
    total: G,
    concurrency: 32,
    warmup: { total: W, op: plinthGet('?resourceVersion=0') },
    op: plinthGet('?resourceVersion=0'),
  });

  // Updates: each object once, with the resourceVersion its create returned.
  const rawUpdate = (prefix: string, ns: string, revs: number[], prefixName: string) => async (i: number): Promise<void> => {
    const k = Buffer.from(`${prefix}${prefixName}${name(i)}`);
    const obj = storedServiceAccount(ns, name(i), i);
    obj.metadata.annotations['bench.plinth.io/updated'] = 'true';
    const res = await kv.txn({
      compare: [{ key: k, target: 'Mod', result: 'Equal', mod_revision: revs[i]! }],
      success: [{ request_put: { key: k, value: toBytes(obj) } }],
      failure: [{ request_range: { key: k } }],
    });
    if (!res.succeeded) throw new Error(`raw update ${k.toString()}: conflict`);
  };
  const plinthUpdate = (ns: string, rvs: string[], prefixName: string) => async (i: number): Promise<void> => {
    const obj = serviceAccount(ns, `${prefixName}${name(i)}`, i);
    obj.metadata.annotations['bench.plinth.io/updated'] = 'true';
    obj.metadata.resourceVersion = rvs[i]!;
    await client.json<Meta>('PUT', `${saPath(ns)}/${prefixName}${name(i)}`, toBytes(obj), 200);
  };
  results['update-raw'] = await phase(ctx, {
    name: 'update c=32',
    side: 'raw',
    total: N,
    concurrency: 32,
    warmup: { total: W, op: rawUpdate('/rawbench/warm/', 'bench-warm', warmRawRev, 'c32-') },
    op: rawUpdate('/rawbench/bench-c32/', 'bench-c32', rawRev, ''),
  });
  results['update-plinth'] = await phase(ctx, {
    name: 'update c=32',
    side: 'plinth',
    total: N,
    concurrency: 32,
    warmup: { total: W, op: plinthUpdate('bench-warm', warmPlinthRv, 'c32-') },
    op: plinthUpdate('bench-c32', plinthRv, ''),
  });

  const r = (k: string): PhaseResult => results[k]!;
  const pair = (scenario: string, key: string, unit: string, pick: (p: PhaseResult) => number, target: BenchContext['rows'][number]['target']): void => {
    ctx.rows.push({ scenario, unit, plinth: pick(r(`${key}-plinth`)), raw: pick(r(`${key}-raw`)), target });
  };
  const none = { kind: 'none' } as const;
  const ops = (p: PhaseResult): number => p.opsPerSec;
  const p50 = (p: PhaseResult): number => p.latency.p50Ms;
  const p99 = (p: PhaseResult): number => p.latency.p99Ms;
  pair('create c=1 throughput', 'create-c1', 'ops/s', ops, none);
  pair('create c=1 p50', 'create-c1', 'ms', p50, none);
  pair('create c=1 p99', 'create-c1', 'ms', p99, none);
  pair('create c=32 throughput', 'create-c32', 'ops/s', ops, { kind: 'ratioAtLeast', value: 0.6 });
  pair('create c=32 p50', 'create-c32', 'ms', p50, none);
  pair('create c=32 p99', 'create-c32', 'ms', p99, { kind: 'ratioAtMost', value: 2 });
  pair('get quorum c=32 throughput', 'get-quorum', 'ops/s', ops, { kind: 'ratioAtLeast', value: 0.6 });
  pair('get quorum c=32 p99', 'get-quorum', 'ms', p99, none);
  pair('get rv=0 c=32 throughput', 'get-rv0', 'ops/s', ops, { kind: 'ratioAtLeast', value: 1.5 });
  pair('get rv=0 c=32 p99', 'get-rv0', 'ms', p99, none);
  pair('update c=32 throughput', 'update', 'ops/s', ops, none);
  pair('update c=32 p99', 'update', 'ms', p99, none);
  // Scenario 8: plinth's process CPU per request next to the raw client's own CPU per etcd op.
  const plinthCpuPerOp = (p: PhaseResult): number => (p.plinthCpuUs ?? 0) / p.ops;
  const rawCpuPerOp = (p: PhaseResult): number => p.loadgenCpuUs / p.ops;
  for (const [label, key] of [
    ['CPU per create (c=32)', 'create-c32'],
    ['CPU per get quorum', 'get-quorum'],
    ['CPU per get rv=0', 'get-rv0'],
  ] as const) {
    ctx.rows.push({
      scenario: label,
      unit: 'µs',
      plinth: plinthCpuPerOp(r(`${key}-plinth`)),
      raw: rawCpuPerOp(r(`${key}-raw`)),
      target: none,
      note: label === 'CPU per create (c=32)' ? 'plinth: server process CPU per request (/proc); raw: the etcd3 client process CPU per op (process.cpuUsage); etcd CPU in the JSON' : undefined,
    });
  }
  ctx.details['crud'] = { objects: N, warmup: W, gets: G, phases: results };
}
