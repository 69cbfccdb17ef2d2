/**
 * Issue 28 §1: the hollow cluster. For N = 1000, 500, 250, 100 (quick: 25, 10) — the target first,
 * then down — a plinth of its own (users' configuration plus `--authorization-mode=Node,RBAC` and a
 * `--token-auth-file` with every hollow identity, on the shared etcd under a prefix per step) runs
 * the density test (bench/hollow/density.ts: 30 pods per node through Deployments, all Running,
 * then deleted). The search stops at the first (largest) N that holds every SLO, the watch ledger
 * and the time, or before a step that would not fit the time budget (25 min: a step's duration is
 * estimated from the last step's, scaled by N; PLINTH_HOLLOW_STEPS and PLINTH_HOLLOW_BUDGET_S
 * change both). Sizes above the target are not tried (N = 1000 takes ~10 min here). Rows: the
 * largest N that held every SLO and the pods Running at that N.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { BenchContext } from '../lib/context.js';
import { startPlinth } from '../lib/plinth.js';
import { runDensity, type DensityReport } from '../hollow/density.js';
import { createIdentities, writeTokenFile } from '../hollow/identities.js';
import { formatSlos } from '../hollow/slo.js';

const PODS_PER_NODE = 30;

function describe(r: DensityReport): string {
  const cpu = r.cpuPct ? `plinth CPU ${r.cpuPct.plinth.toFixed(0)}%, etcd ${r.cpuPct.etcd.toFixed(0)}%, generator ${r.cpuPct.generator.toFixed(0)}% of one core, other processes ${r.cpuPct.other.toFixed(0)}%` : '';
  const rss = r.plinthRssPeakBytes ? `plinth RSS peak ${(r.plinthRssPeakBytes / 2 ** 20).toFixed(0)} MiB` : '';
  return [cpu, rss].filter(Boolean).join(', ');
}

/**
 * Deletes a step's keys and gives etcd the space back (compaction, defragmentation): N = 1,000
 * writes ~1 GB of revisions, and the scenarios after this one share the etcd (2 GiB quota).
 */
async function releaseStep(ctx: BenchContext, prefix: string): Promise<void> {
  const del = await ctx.raw.delete().prefix(prefix).exec();
  await ctx.raw.kv.compact({ revision: del.header.revision, physical: true });
  await ctx.raw.maintenance.defragment();
}

/** The search from the target down and its two rows (see the file comment). */
export async function hollowScenario(ctx: BenchContext): Promise<void> {
  // PLINTH_HOLLOW_STEPS=500 runs one size; PLINTH_HOLLOW_BUDGET_S changes the time budget.
  const envSteps = process.env['PLINTH_HOLLOW_STEPS']?.split(',').map(Number).filter((n) => n > 0);
  const steps = (envSteps?.length ? envSteps : ctx.quick ? [25, 10] : [1000, 500, 250, 100]).sort((a, b) => b - a);
  const budgetMs = Number(process.env['PLINTH_HOLLOW_BUDGET_S'] ?? (ctx.quick ? 150 : 1500)) * 1000;
  const started = performance.now();
  const ids = createIdentities(steps[0]!);
  const dir = mkdtempSync(join(tmpdir(), 'plinth-hollow-'));
  const tokenFile = join(dir, 'tokens.csv');
  writeTokenFile(tokenFile, ids);
  const reports: DensityReport[] = [];
  let best: DensityReport | undefined;
  let limit = '';
  let lastStepMs = 0;
  let lastN = 0;
  try {
    for (const n of steps) {
      const left = budgetMs - (performance.now() - started);
      const estimate = lastN ? (lastStepMs * n) / lastN : 0;
      if (estimate > left) {
        const budget = `time budget: N=${n} would take ~${(estimate / 1000).toFixed(0)} s, ${(left / 1000).toFixed(0)} s left of ${(budgetMs / 1000).toFixed(0)} s (not an SLO)`;
        limit = limit ? `${limit}; then ${budget}` : budget;
        break;
      }
      const t = performance.now();
      const plinth = await startPlinth({
        etcdEndpoint: ctx.etcd.endpoint,
        prefix: `/hollow-${n}`,
        maxSockets: 4,
        extraArgs: [`--token-auth-file=${tokenFile}`, '--authorization-mode=Node,RBAC'],
      });
      let r: DensityReport;
      try {
        r = await runDensity({
          info: { server: plinth.client.info.server, caPem: plinth.client.info.caPem },
          adminToken: plinth.client.info.token,
          ids,
          nodes: n,
          podsPerNode: PODS_PER_NODE,
          plinthPid: plinth.pid,
          etcdPid: ctx.etcd.pid,
          // CL2's saturation timeout (pods ÷ 20 + 180 s), within what is left of the budget.
          phaseTimeoutMs: Math.max(60_000, Math.min(((n * PODS_PER_NODE) / 20 + 180) * 1000, left)),
          log: (m) => ctx.log(`  ${m}`),
        });
      } finally {
        await plinth.stop();
        await releaseStep(ctx, `/hollow-${n}/`);
      }
      lastStepMs = performance.now() - t;
      lastN = n;
      reports.push(r);
      ctx.log(`  hollow N=${n}: ${r.held ? 'held every SLO' : `NOT held (${r.limit ?? ''})`}; ${describe(r)}; watch ledger ${r.ledger.seenByItsNode}/${r.ledger.bound} seen, ${r.ledger.seenDeleted} deletions seen; ${(lastStepMs / 1000).toFixed(0)} s`);
      ctx.log(`\n${formatSlos(r.slos)}\n`);
      if (r.errors.length) ctx.log(`  first errors: ${r.errors.slice(0, 3).join(' | ')}`);
      if (r.held) {
        best = r;
        break;
      }
      // The limit is what held back the smallest size that failed (the one just above the answer).
      limit = `N=${n}: ${r.limit ?? 'not held'} (${describe(r)})`;
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  if (best && best.nodes === steps[0]) {
    // Nothing failed: name what came closest to its SLO (the resource that would limit first).
    const tight = [...best.slos].sort((a, b) => b.p99 / b.thresholdS - a.p99 / a.thresholdS)[0];
    const closest = tight ? `; closest to its SLO: ${tight.key} p99 ${tight.p99.toFixed(2)} s of ${tight.thresholdS} s` : '';
    limit = `the largest size tried (N=${best.nodes}) held; larger sizes are not tried${closest}`;
  }
  else if (!limit) limit = 'no size tried';
  const at = best ? `; at N=${best.nodes}: ${describe(best)}` : '';
  ctx.log(`hollow cluster: largest N within SLOs ${best?.nodes ?? 0}; limit: ${limit}${at}`);
  const note = `30 pods/node via Deployments, kube 1.24 kubelet/scheduler/controller traffic, SLOs from plinth's apiserver_request_duration_seconds as CL2; limit: ${limit}${at}`;
  ctx.rows.push({
    scenario: 'hollow cluster: nodes held within SLOs',
    unit: 'nodes',
    plinth: best?.nodes ?? 0,
    raw: null,
    target: { kind: 'plinthAtLeast', value: 1000, unit: 'nodes' },
    note,
  });
  ctx.rows.push({
    scenario: 'hollow cluster: pods',
    unit: 'pods',
    plinth: best?.podsRunning ?? 0,
    raw: null,
    target: { kind: 'plinthAtLeast', value: 30_000, unit: 'pods' },
    note: 'pods Running (as the controllers\' pod watch saw them) at the largest N that held',
  });
  // loadgenCpuPct: run.ts prints the generator's peak CPU from the details.
  ctx.details['hollow'] = { steps: reports.map((r) => ({ ...r, loadgenCpuPct: r.cpuPct?.generator ?? 0, otherCpuPct: r.cpuPct?.other ?? 0 })), limit, largestN: best?.nodes ?? 0 };
}
