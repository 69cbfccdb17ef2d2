/**
 * What recording metrics and auditing cost: creates at concurrency 32 against two plinths on the
 * same etcd, one as users run it (metrics recorded, audit policy at level Metadata for every
 * request into a log file) and one started with PLINTH_METRICS=off (the metrics filters are the
 * handlers they wrap, no etcd observer) and no audit flags. Rounds alternate between the two so
 * that drift on the machine hits both sides alike; each side's figure is the median of its rounds.
 * The row's two columns are plinth with both on (plinth) and both off (in the raw column); the
 * target is on ≥ 0.9× off.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import type { BenchContext } from '../lib/context.js';
import { ensureNamespace, startPlinth, type PlinthProcess } from '../lib/plinth.js';
import { serviceAccount, toBytes } from '../lib/objects.js';
import { runLoad } from '../lib/stats.js';

const ROUNDS = 7;

export async function metricsScenario(ctx: BenchContext): Promise<void> {
  // Rounds of at least 1000 creates even with --quick: shorter ones are mostly noise.
  const N = Math.max(1000, ctx.size(3000));
  const W = Math.max(500, ctx.size(300));
  const sides: Array<{ key: 'on' | 'off'; plinth: PlinthProcess; rates: number[]; p50: number[] }> = [];
  try {
    for (const key of ['off', 'on'] as const) {
      const plinth = await startPlinth({
        etcdEndpoint: ctx.etcd.endpoint,
        prefix: `/bench-metrics-${key}`,
        maxSockets: 64,
        ...(key === 'off' ? { env: { PLINTH_METRICS: 'off' }, audit: false } : { audit: true }),
      });
      sides.push({ key, plinth, rates: [], p50: [] });
      await ensureNamespace(plinth.client, 'bench-metrics');
    }
    const create = (p: PlinthProcess, prefix: string) => async (i: number): Promise<void> => {
      const name = `${prefix}-${String(i).padStart(6, '0')}`;
      await p.client.json('POST', '/api/v1/namespaces/bench-metrics/serviceaccounts', toBytes(serviceAccount('bench-metrics', name, i)), 201);
    };
    for (const s of sides) {
      const w = await runLoad(W, 32, create(s.plinth, 'warm'));
      if (w.errors > 0) throw new Error(`metrics ${s.key} warm-up: ${w.firstError ?? ''}`);
    }
    for (let round = 0; round < ROUNDS; round++) {
      for (const s of round % 2 === 0 ? sides : [...sides].reverse()) {
        const r = await runLoad(N, 32, create(s.plinth, `r${round}`));
        if (r.errors > 0) throw new Error(`metrics ${s.key} round ${round}: ${r.errors} errors, e.g. ${r.firstError ?? ''}`);
        s.rates.push(r.opsPerSec);
        s.p50.push(r.latency.p50Ms);
        ctx.log(`metrics ${s.key} round ${round}: ${r.opsPerSec.toFixed(0)} creates/s, p50 ${r.latency.p50Ms.toFixed(2)} ms`);
      }
    }
    // The "on" side must actually have recorded: its /metrics counts the creates.
    const on = sides.find((s) => s.key === 'on')!;
    const text = (await on.plinth.client.request('GET', '/metrics')).body.toString('utf8');
    const auditBytes = statSync(join(on.plinth.dataDir, 'audit.log'), { throwIfNoEntry: false })?.size ?? 0;
    if (auditBytes === 0) throw new Error('metrics and audit on: the audit log is empty');
    if (!/apiserver_request_total\{verb="POST",dry_run="",group="",version="v1",resource="serviceaccounts"[^}]*code="201"\} \d+/.test(text)) throw new Error('metrics on: /metrics does not count the creates');
    const rate = (s: (typeof sides)[number]): number => [...s.rates].sort((a, b) => a - b)[Math.floor(s.rates.length / 2)]!;
    const off = sides.find((s) => s.key === 'off')!;
    ctx.rows.push({
      scenario: 'create c=32, metrics and audit (Metadata) on vs both off',
      unit: 'ops/s',
      plinth: rate(on),
      raw: rate(off),
      target: { kind: 'ratioAtLeast', value: 0.9 },
      note: `the raw column is plinth with PLINTH_METRICS=off and no audit flags; medians of ${ROUNDS} alternating rounds of ${N} creates`,
    });
    ctx.details['metrics'] = { ...Object.fromEntries(sides.map((s) => [s.key, { medianOpsPerSec: rate(s), roundOpsPerSec: s.rates, roundP50Ms: s.p50 }])), auditLogBytesOn: auditBytes };
  } finally {
    for (const s of sides) await s.plinth.stop();
  }
}
