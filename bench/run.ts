/**
 * `make bench`: one etcd and one plinth process (the real executable, configured as users run it:
 * authentication, RBAC, default admission, metrics, audit at level Metadata to a file) on free
 * ports, the floor servers (bench/floor/) beside it in the crud scenario, every
 * scenario run back to back against plinth and raw etcd, one table at the end, and the figures
 * in bench/results/latest.json. `--quick` runs every scenario at a tenth of the size.
 */
import { statSync } from 'node:fs';
import { cpus, totalmem, platform, release, loadavg } from 'node:os';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { startBenchEtcd, rawClient, etcdVersion, etcdWatcherTotal, type BenchEtcd } from './lib/etcd.js';
import { startPlinth, type PlinthProcess } from './lib/plinth.js';
import { evaluate, formatTable, writeJson } from './lib/report.js';
import type { BenchContext } from './lib/context.js';
import { procRssBytes } from './lib/proc.js';
import { crudScenario } from './scenarios/crud.js';
import { listScenario } from './scenarios/list.js';
import { watchScenario } from './scenarios/watch.js';
import { memoryScenario } from './scenarios/memory.js';
import { robustnessScenario } from './scenarios/robustness.js';
import { authzScenario } from './scenarios/authz.js';
import { crdScenario } from './scenarios/crd.js';
import { workloadsScenario } from './scenarios/workloads.js';
import { admissionScenario } from './scenarios/admission.js';
import { metricsScenario } from './scenarios/metrics.js';
import { attacksScenario } from './scenarios/attacks.js';
import { gcScenario } from './scenarios/gc.js';
import { hollowScenario } from './scenarios/hollow.js';
import { podProfile } from './lib/objects.js';

const BENCH_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..');

type Scenario = [string, (ctx: BenchContext) => Promise<void>];

async function main(argv: string[]): Promise<number> {
  const quick = argv.includes('--quick');
  const only = argv.find((a) => a.startsWith('--only='))?.slice('--only='.length).split(',');
  const out = argv.find((a) => a.startsWith('--out='))?.slice('--out='.length) ?? join(BENCH_DIR, 'results', 'latest.json');
  const started = performance.now();
  const loadAverageAtStart = loadavg();
  const log = (msg: string): void => {
    process.stderr.write(`[${((performance.now() - started) / 1000).toFixed(1).padStart(6)} s] ${msg}\n`);
  };

  let etcd: BenchEtcd | undefined;
  let plinth: PlinthProcess | undefined;
  const stopAll = async (): Promise<void> => {
    await plinth?.stop().catch(() => undefined);
    plinth = undefined;
    await etcd?.stop().catch(() => undefined);
    etcd = undefined;
  };
  const onSignal = (): void => {
    void stopAll().then(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  const scenarioTimes: Record<string, number> = {};
  const scenarioErrors: Record<string, string> = {};
  let failure: string | undefined;
  const rowsOut: ReturnType<typeof evaluate>[] = [];
  const details: Record<string, unknown> = {};
  try {
    log(`plinth bench${quick ? ' (quick: a tenth of every size)' : ''}`);
    etcd = await startBenchEtcd();
    const raw = rawClient(etcd.endpoint);
    const watchersBefore = await etcdWatcherTotal(etcd.endpoint);
    plinth = await startPlinth({ etcdEndpoint: etcd.endpoint, maxSockets: 64 });
    log(`etcd ${etcd.endpoint} (pid ${etcd.pid}), plinth pid ${plinth.pid} ready in ${plinth.startupMs} ms`);
    details['plinthRssAtStart'] = procRssBytes(plinth.pid);
    const ctx: BenchContext = {
      quick,
      size: (n) => (quick ? Math.max(1, Math.round(n / 10)) : n),
      etcd,
      raw,
      plinth,
      etcdWatchersBeforePlinth: watchersBefore,
      rows: [],
      details,
      log,
    };
    // A failing scenario is reported (table row and JSON) and the others still run.
    const runScenario = async (name: string, fn: Scenario[1]): Promise<void> => {
      log(`scenario ${name}`);
      const t = performance.now();
      try {
        await fn(ctx);
      } catch (e) {
        const msg = e instanceof Error ? (e.stack ?? e.message) : String(e);
        log(`scenario ${name} FAILED: ${msg}`);
        scenarioErrors[name] = msg;
        ctx.rows.push({ scenario: `${name}: FAILED (${msg.split('\n')[0]!.slice(0, 60)})`, unit: '', plinth: null, raw: null, target: { kind: 'none' }, met: false });
      }
      scenarioTimes[name] = performance.now() - t;
    };
    const scenarios: Scenario[] = [
      ['crud', crudScenario],
      ['list', listScenario],
      ['watch', watchScenario],
      // The same rows for Pods of realistic size (~3.5 KB: two containers, probes, env, volumes),
      // at smaller counts (a watch event is 7× bigger: 100 watches, not 1,000).
      ['pods-crud', (c) => crudScenario(c, podProfile, 0.4)],
      ['pods-list', (c) => listScenario(c, podProfile, 0.5)],
      ['pods-watch', (c) => watchScenario(c, podProfile, { watchers: 100, writes: 1000 })],
      ['authz', authzScenario],
      ['crd', crdScenario],
      ['workloads', workloadsScenario],
      ['admission', admissionScenario],
      ['metrics', metricsScenario],
      ['attacks', attacksScenario],
      ['gc', gcScenario],
      // Issue 28: a plinth of its own per step (Node,RBAC and the hollow identities), ~10 min.
      ['hollow', hollowScenario],
    ];
    for (const [name, fn] of scenarios) {
      if (only && !only.includes(name)) continue;
      await runScenario(name, fn);
    }
    details['plinthRssAtEnd'] = procRssBytes(plinth.pid);
    // Users' configuration: the shared plinth audits every request (Metadata) into its data dir.
    details['plinthAuditLogBytes'] = statSync(join(plinth.dataDir, 'audit.log'), { throwIfNoEntry: false })?.size ?? 0;
    log(`shared plinth's audit log: ${((details['plinthAuditLogBytes'] as number) / 1024).toFixed(0)} KiB`);
    // The memory and robustness scenarios start plinths of their own; the shared one is no longer needed.
    await plinth.stop();
    plinth = undefined;
    if (!only || only.includes('memory')) await runScenario('memory', memoryScenario);
    if (!only || only.includes('pods-memory')) await runScenario('pods-memory', (c) => memoryScenario(c, podProfile, 100_000));
    // Robustness runs last: it leaves ~110 MB of deleted (not compacted) revisions in etcd.
    if (!only || only.includes('robustness')) await runScenario('robustness', robustnessScenario);
    raw.close();
    rowsOut.push(...ctx.rows.map(evaluate));
  } catch (e) {
    failure = e instanceof Error ? (e.stack ?? e.message) : String(e);
    log(`FAILED: ${failure}`);
    if (plinth) process.stderr.write(`plinth output (tail):\n${plinth.output().slice(-3000)}\n`);
  } finally {
    await stopAll();
  }

  const wallMs = performance.now() - started;
  const cpu = cpus();
  const machine = {
    cpuModel: cpu[0]?.model ?? 'unknown',
    cpuCount: cpu.length,
    totalMemoryBytes: totalmem(),
    os: `${platform()} ${release()}`,
    node: process.version,
    etcd: etcdVersion(),
    loadAverageAtStart,
    loadAverageAtEnd: loadavg(),
  };
  const table = formatTable(rowsOut);
  const loadgen = peakOf(details, 'loadgenCpuPct');
  const loadgenMain = peakOf(details, 'loadgenMainThreadCpuPct');
  const other = peakOf(details, 'otherCpuPct');
  process.stdout.write(`\n${table}\n`);
  process.stdout.write(
    `\nload generator CPU: at most ${loadgen.pct.toFixed(0)}% of one core in any measured phase (${loadgen.phase}), ` +
      `its JavaScript thread at most ${loadgenMain.pct.toFixed(0)}% (${loadgenMain.phase}; the rest is V8's GC and compiler threads); ` +
      `other processes on the machine: at most ${other.pct.toFixed(0)}% (${other.phase})` +
      (other.pct > 20 ? ' — the machine was not idle, figures are noisy' : '') +
      `\n${machine.cpuCount} × ${machine.cpuModel}, node ${machine.node}, etcd ${machine.etcd}; load average at start ${machine.loadAverageAtStart.map((x) => x.toFixed(2)).join(' ')}\n`,
  );
  process.stdout.write(`wall time ${(wallMs / 1000).toFixed(1)} s${quick ? ' (quick)' : ''}; figures in ${out}\n`);
  writeJson(out, {
    date: new Date().toISOString(),
    quick,
    wallMs,
    scenarioWallMs: scenarioTimes,
    scenarioErrors,
    machine,
    rows: rowsOut.map((r) => ({
      scenario: r.scenario,
      unit: r.unit,
      plinth: r.plinth,
      raw: r.raw,
      ...(r.floor !== undefined ? { floor: r.floor } : {}),
      ...(r.vs || r.of ? { ratioOf: `${r.of ?? 'plinth'}/${r.vs ?? 'raw'}` } : {}),
      ...(r.floorName ? { floorName: r.floorName } : {}),
      ratio: r.ratio,
      target: r.targetText,
      met: r.metResult,
      ...(r.note ? { note: r.note } : {}),
      ...(r.failure !== undefined ? { failure: r.failure } : {}),
    })),
    loadgenPeakCpuPct: loadgen.pct,
    loadgenPeakMainThreadCpuPct: loadgenMain.pct,
    otherPeakCpuPct: other.pct,
    details,
    ...(failure ? { failure } : {}),
  });
  if (failure) process.stderr.write(`\nbench failed: ${failure.split('\n')[0]}\n`);
  const failed = Object.keys(scenarioErrors);
  if (failed.length) process.stderr.write(`\nscenarios failed: ${failed.join(', ')}\n`);
  return failure || failed.length ? 1 : 0;
}

/** The highest value of `field` (a CPU share) among the measured phases in `details`. */
function peakOf(details: Record<string, unknown>, field: string): { pct: number; phase: string } {
  let best = { pct: 0, phase: 'none' };
  const visit = (v: unknown, path: string): void => {
    if (!v || typeof v !== 'object') return;
    for (const [k, x] of Object.entries(v)) {
      if (k === field && typeof x === 'number' && x > best.pct) best = { pct: x, phase: path };
      else visit(x, path ? `${path}.${k}` : k);
    }
  };
  visit(details, '');
  return best;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(1);
  },
);
