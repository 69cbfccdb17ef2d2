/**
 * The density run (ClusterLoader2's density test in small, research-28 §5.3/§6.7): N hollow nodes,
 * the scheduler and controller stand-ins, `podsPerNode × N` pods through one Deployment per
 * namespace (a namespace per 100 nodes, created by the test client as CL2 does), all Running, then
 * the Deployments deleted (propagationPolicy Background: plinth's garbage collector removes the
 * ReplicaSets and pods, the nodes finish the pods' deletion). Reports the API SLOs from plinth's
 * metrics over the whole run, the watch ledger (every bound pod seen and seen deleted by its node),
 * CPU and RSS.
 */
import { Agent } from 'node:https';
import { performance } from 'node:perf_hooks';
import { createHollowClient, LatencyRecorder, type ServerInfo } from './client.js';
import { createControllers } from './controller.js';
import type { HollowIdentities } from './identities.js';
import { createHollowNodes, Ledger } from './nodes.js';
import { createScheduler } from './scheduler.js';
import { diffBuckets, evaluateSlos, parseDurationBuckets, type SloKey } from './slo.js';
import { CpuMeter, RssSampler } from '../lib/proc.js';

/** What to run and against which plinth. */
export interface DensityOptions {
  info: ServerInfo;
  adminToken: string;
  ids: HollowIdentities;
  /** Hollow nodes to run (the first `nodes` of ids.nodes). */
  nodes: number;
  podsPerNode: number;
  /** Name prefix of the namespaces (default `density`). */
  namespacePrefix?: string;
  /** plinth's and etcd's process ids, for CPU and RSS (omitted: not measured). */
  plinthPid?: number;
  etcdPid?: number;
  /**
   * Give up waiting for pods Running / gone after this long (default: CL2 density's
   * saturationDeploymentTimeout, pods ÷ 20 + 180 s).
   */
  phaseTimeoutMs?: number;
  log?(msg: string): void;
}

/** A density run's figures. */
export interface DensityReport {
  nodes: number;
  podsWanted: number;
  /** Pods Running at the peak, as the controllers' pod watch saw them. */
  podsRunning: number;
  bindings: number;
  ledger: { bound: number; seenByItsNode: number; seenDeleted: number; missing: string[] };
  allDeleted: boolean;
  slos: SloKey[];
  slosMet: boolean;
  phaseMs: { register: number; saturate: number; delete: number; total: number };
  /** Shares of one core over the run; `other`: the rest of the machine (other processes). */
  cpuPct?: { plinth: number; etcd: number; generator: number; other: number };
  plinthRssPeakBytes?: number;
  watches: { watches: number; events: number; relists: number };
  clientErrors: number;
  errors: string[];
  /** Every SLO met, every pod Running and collected, the ledger complete. */
  held: boolean;
  /** What held the run back, when it did not hold. */
  limit?: string;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function until(cond: () => boolean, timeoutMs: number): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) return false;
    await sleep(200);
  }
  return true;
}

/** One density run at `opts.nodes` nodes; every actor is stopped before it returns. */
export async function runDensity(opts: DensityOptions): Promise<DensityReport> {
  const log = opts.log ?? ((): void => undefined);
  const timeout = opts.phaseTimeoutMs ?? ((opts.nodes * opts.podsPerNode) / 20 + 180) * 1000;
  const recorder = new LatencyRecorder();
  const ledger = new Ledger();
  const adminAgent = new Agent({ ca: opts.info.caPem, keepAlive: true, maxSockets: 4 });
  // The test client (CL2's own requests: namespaces, Deployments, metrics).
  const admin = createHollowClient({ info: opts.info, token: opts.adminToken, userAgent: 'clusterloader/v1.24.0 (linux/amd64) kubernetes/$Format', agent: adminAgent, recorder: new LatencyRecorder() });
  const scrape = async (): Promise<string> => {
    const r = await admin.call<string>('GET', '/metrics');
    if (r.status !== 200) throw new Error(`GET /metrics: ${r.status}`);
    return String(r.body);
  };
  const pids: Record<string, number> = {};
  if (opts.plinthPid !== undefined) pids['plinth'] = opts.plinthPid;
  if (opts.etcdPid !== undefined) pids['etcd'] = opts.etcdPid;
  const meter = new CpuMeter(pids);
  const rss = opts.plinthPid !== undefined ? new RssSampler(opts.plinthPid) : undefined;
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const before = parseDurationBuckets(await scrape());
  meter.start();
  rss?.start(1000);

  const nodes = createHollowNodes({ info: opts.info, nodes: opts.ids.nodes.slice(0, opts.nodes), recorder, ledger });
  const scheduler = createScheduler({ info: opts.info, token: opts.ids.scheduler, recorder, ledger });
  const controllers = createControllers({ info: opts.info, deploymentToken: opts.ids.deploymentController, replicaSetToken: opts.ids.replicaSetController, recorder });
  const prefix = opts.namespacePrefix ?? 'density';
  const namespaces = Math.max(1, Math.ceil(opts.nodes / 100));
  const podsWanted = opts.nodes * opts.podsPerNode;
  const nsNames = Array.from({ length: namespaces }, (_, i) => `${prefix}-${i}`);
  const inDensity = new Set(nsNames);
  const ourPods = (): number => {
    let n = 0;
    for (const p of controllers.pods.store.values()) if (inDensity.has(p.metadata.namespace ?? '')) n++;
    return n;
  };
  const running = (): number => {
    let n = 0;
    for (const p of controllers.pods.store.values()) if (inDensity.has(p.metadata.namespace ?? '') && p.status?.['phase'] === 'Running') n++;
    return n;
  };
  let podsRunning = 0;
  let allDeleted = false;
  let registerMs = 0;
  let saturateMs = 0;
  let deleteMs = 0;
  const errors: string[] = [];
  let limit: string | undefined;
  try {
    await Promise.all([nodes.ready, scheduler.synced, controllers.synced]);
    registerMs = performance.now() - t0;
    log(`hollow: ${opts.nodes} nodes registered, leases and pod watches up in ${(registerMs / 1000).toFixed(1)} s`);

    const t1 = performance.now();
    for (const ns of nsNames) await admin.must('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }, [201, 409]);
    for (let i = 0; i < namespaces; i++) {
      const replicas = Math.floor(podsWanted / namespaces) + (i < podsWanted % namespaces ? 1 : 0);
      const name = 'saturation-deployment-0';
      const labels = { name, group: 'saturation' };
      await admin.must('POST', `/apis/apps/v1/namespaces/${nsNames[i]}/deployments`, {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name, labels: { group: 'saturation' } },
        spec: {
          replicas,
          selector: { matchLabels: { name } },
          template: {
            metadata: { labels },
            spec: {
              containers: [{ name: name, image: 'k8s.gcr.io/pause:3.1', resources: { requests: { cpu: '1m', memory: '10M' } } }],
              tolerations: [
                { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 900 },
                { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 900 },
              ],
            },
          },
        },
      }, [201]);
    }
    const allRunning = await until(() => running() >= podsWanted, timeout);
    podsRunning = running();
    saturateMs = performance.now() - t1;
    log(`hollow: ${podsRunning} of ${podsWanted} pods Running in ${(saturateMs / 1000).toFixed(1)} s (${scheduler.bindings()} bindings)`);
    if (!allRunning) limit = `pods Running: ${podsRunning} of ${podsWanted} after ${(timeout / 1000).toFixed(0)} s`;

    const t2 = performance.now();
    for (const ns of nsNames) {
      await admin.must('DELETE', `/apis/apps/v1/namespaces/${ns}/deployments/saturation-deployment-0`, { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Background' }, [200, 202]);
    }
    allDeleted = await until(() => ourPods() === 0 && [...ledger.bound.keys()].every((uid) => ledger.deleted.has(uid)), timeout);
    deleteMs = performance.now() - t2;
    log(`hollow: Deployments deleted, ${allDeleted ? 'every pod gone' : `${ourPods()} pods left`} after ${(deleteMs / 1000).toFixed(1)} s`);
    if (!allDeleted) limit ??= `pods not collected after ${(timeout / 1000).toFixed(0)} s`;
  } catch (e) {
    errors.push(String(e));
    limit ??= `error: ${String(e).slice(0, 200)}`;
  }
  const cpu = meter.stop();
  const own = process.cpuUsage(cpu0);
  const generatorPct = ((own.user + own.system) / 1000 / Math.max(1, performance.now() - t0)) * 100;
  const rssPeak = rss?.stop();
  const after = parseDurationBuckets(await scrape());
  const watches = nodes.watchStats();
  nodes.stop();
  scheduler.stop();
  controllers.stop();
  adminAgent.destroy();
  errors.push(...nodes.errors, ...scheduler.errors.map((e) => `scheduler: ${e}`), ...controllers.errors.map((e) => `controllers: ${e}`));

  const slos = evaluateSlos(diffBuckets(after, before), recorder);
  const slosMet = slos.every((k) => k.met);
  const missing: string[] = [];
  let seenByItsNode = 0;
  let seenDeleted = 0;
  for (const [uid, node] of ledger.bound) {
    if (ledger.seen.get(uid) === node) seenByItsNode++;
    else if (missing.length < 20) missing.push(`pod ${uid} bound to ${node} never seen by its watch`);
    if (ledger.deleted.has(uid)) seenDeleted++;
    else if (missing.length < 20) missing.push(`pod ${uid} on ${node}: DELETED never seen`);
  }
  const ledgerOk = seenByItsNode === ledger.bound.size && seenDeleted === ledger.bound.size && ledger.bound.size >= podsWanted;
  if (!slosMet) limit ??= `SLO ${slos.find((k) => !k.met)!.key} p99 ${slos.find((k) => !k.met)!.p99.toFixed(2)} s`;
  if (!ledgerOk) limit ??= `watch ledger: ${ledger.bound.size - seenByItsNode} bound pods unseen, ${ledger.bound.size - seenDeleted} deletions unseen`;
  const total = performance.now() - t0;
  return {
    nodes: opts.nodes,
    podsWanted,
    podsRunning,
    bindings: scheduler.bindings(),
    ledger: { bound: ledger.bound.size, seenByItsNode, seenDeleted, missing },
    allDeleted,
    slos,
    slosMet,
    phaseMs: { register: registerMs, saturate: saturateMs, delete: deleteMs, total },
    ...(opts.plinthPid !== undefined && opts.etcdPid !== undefined
      ? { cpuPct: { plinth: cpu['plinth']!.cpuPct, etcd: cpu['etcd']!.cpuPct, generator: generatorPct, other: cpu['other']!.cpuPct } }
      : {}),
    ...(rssPeak !== undefined ? { plinthRssPeakBytes: rssPeak } : {}),
    watches,
    clientErrors: recorder.errors,
    errors,
    held: slosMet && ledgerOk && allDeleted && podsRunning >= podsWanted && limit === undefined,
    ...(limit !== undefined ? { limit } : {}),
  };
}

