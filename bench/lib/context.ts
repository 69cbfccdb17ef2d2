/**
 * What every scenario gets: sizes (a tenth with --quick), the etcd and plinth under test, a raw
 * etcd client, and where rows and detailed figures go. `phase` runs one measured load with a
 * warm-up and records CPU of plinth, etcd and the load generator around it.
 */
import type { Etcd3 } from 'etcd3';
import type { BenchEtcd } from './etcd.js';
import type { PlinthProcess } from './plinth.js';
import type { Row } from './report.js';
import { CpuMeter } from './proc.js';
import { runLoad, type LoadResult } from './stats.js';

export interface BenchContext {
  quick: boolean;
  /** A full-run size, divided by 10 with --quick. */
  size(n: number): number;
  etcd: BenchEtcd;
  raw: Etcd3;
  plinth: PlinthProcess;
  /** etcd watchers open before plinth started (to count plinth's own). */
  etcdWatchersBeforePlinth: number;
  rows: Row[];
  /** Detailed figures per scenario, written to the JSON file. */
  details: Record<string, unknown>;
  log(msg: string): void;
}

/**
 * Who answers: plinth, raw etcd through the client, or a floor server (bench/floor/): `floor`
 * with plinth's own etcd client (FastKV), `floor-etcd3` with the etcd3 library, `express` (the
 * floor's handler in express 5, FastKV).
 */
export type Side = 'plinth' | 'raw' | 'floor' | 'floor-etcd3' | 'express';

export interface PhaseResult extends LoadResult {
  name: string;
  side: Side;
  concurrency: number;
  warmupOps: number;
  /** CPU used during the measured run by plinth (plinth phases only) and etcd. */
  plinthCpuUs?: number;
  plinthCpuPct?: number;
  /** CPU of the server process answering (plinth or a floor; not raw phases). */
  serverCpuUs?: number;
  serverCpuPct?: number;
  etcdCpuUs: number;
  etcdCpuPct: number;
  /** Busy CPU on the machine outside plinth, etcd and the load generator (% of one core). */
  otherCpuPct: number;
}

export interface PhaseSpec {
  name: string;
  side: Side;
  total: number;
  concurrency: number;
  op: (i: number) => Promise<void>;
  /** The answering process for floor sides (plinth sides use ctx.plinth). */
  serverPid?: number;
  warmup?: { total: number; op: (i: number) => Promise<void> };
}

export async function phase(ctx: BenchContext, spec: PhaseSpec): Promise<PhaseResult> {
  let warmupOps = 0;
  if (spec.warmup && spec.warmup.total > 0) {
    const w = await runLoad(spec.warmup.total, spec.concurrency, spec.warmup.op);
    if (w.errors > 0) throw new Error(`${spec.name} (${spec.side}) warm-up: ${w.errors} errors, e.g. ${w.firstError ?? ''}`);
    warmupOps = w.ops;
  }
  const pids: Record<string, number> = { etcd: ctx.etcd.pid };
  if (spec.side === 'plinth') pids['server'] = ctx.plinth.pid;
  else if (spec.serverPid !== undefined) pids['server'] = spec.serverPid;
  const meter = new CpuMeter(pids);
  meter.start();
  const r = await runLoad(spec.total, spec.concurrency, spec.op);
  const cpu = meter.stop();
  if (r.errors > 0) throw new Error(`${spec.name} (${spec.side}): ${r.errors} of ${spec.total} failed, e.g. ${r.firstError ?? ''}`);
  const out: PhaseResult = {
    name: spec.name,
    side: spec.side,
    concurrency: spec.concurrency,
    warmupOps,
    ...r,
    etcdCpuUs: cpu['etcd']!.cpuUs,
    etcdCpuPct: cpu['etcd']!.cpuPct,
    otherCpuPct: cpu['other']!.cpuPct,
  };
  if (cpu['server']) {
    out.serverCpuUs = cpu['server'].cpuUs;
    out.serverCpuPct = cpu['server'].cpuPct;
    if (spec.side === 'plinth') {
      out.plinthCpuUs = cpu['server'].cpuUs;
      out.plinthCpuPct = cpu['server'].cpuPct;
    }
  }
  ctx.log(
    `  ${spec.name} [${spec.side}] ${r.ops} ops in ${(r.wallMs / 1000).toFixed(1)} s: ${r.opsPerSec.toFixed(0)}/s p50 ${r.latency.p50Ms.toFixed(1)} ms p99 ${r.latency.p99Ms.toFixed(1)} ms; cpu loadgen ${r.loadgenCpuPct.toFixed(0)}%` +
      (r.loadgenMainThreadCpuPct !== undefined ? ` (JS thread ${r.loadgenMainThreadCpuPct.toFixed(0)}%)` : '') +
      (out.serverCpuPct !== undefined ? ` ${spec.side} ${out.serverCpuPct.toFixed(0)}%` : '') +
      ` etcd ${out.etcdCpuPct.toFixed(0)}% other ${out.otherCpuPct.toFixed(0)}%`,
  );
  return out;
}
