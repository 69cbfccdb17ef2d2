/**
 * The workload groups against core/v1 (issue 25): Deployment create and update through apps/v1
 * (defaults, pod-template validation, the generation rule on every write) next to the same
 * operations on ConfigMaps of the Deployment's stored size (probed at the start: the request sizes are
 * alike, but a Deployment is stored with its defaults and ~100 managed fields at 2.5× its request),
 * and a HorizontalPodAutoscaler read through
 * autoscaling/v1 (converted from the stored v2 on every read) next to the same read through v2.
 * All at concurrency 32; the "raw" column holds the reference side; the target is the issue's ≥ 0.8×.
 * The compared writes run in alternation for ROUNDS rounds; each row is the round with the median
 * ratio (see lib/rounds.ts).
 */
import type { BenchContext, PhaseResult } from '../lib/context.js';
import { phase } from '../lib/context.js';
import { ensureNamespace } from '../lib/plinth.js';
import { cpuPerOp, medianRound, ROUNDS, roundsNote, type Round } from '../lib/rounds.js';
import type { Row } from '../lib/report.js';

const NS = 'bench-workloads';
const name = (i: number): string => `w-${String(i).padStart(6, '0')}`;
const json = (o: unknown): Buffer => Buffer.from(JSON.stringify(o));

interface Stored {
  metadata: { resourceVersion: string };
}

/** A Deployment as `kubectl create deployment` writes it, with one label, port and resource limit. */
function deployment(n: string, i: number): Record<string, unknown> {
  const labels = { app: n };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: n, labels },
    spec: {
      replicas: 1 + (i % 3),
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: { containers: [{ name: 'web', image: `registry.example.com/web:1.${i % 50}`, ports: [{ containerPort: 8080 }], resources: { limits: { cpu: '500m', memory: '256Mi' } } }] },
      },
    },
  };
}

/** The line a ConfigMap's `app.conf` repeats (23 bytes). */
const CONF_LINE = (i: number): string => `listen 8080\nworkers ${i % 8}\n`;

/** A ConfigMap whose `app.conf` holds `lines` lines: about a Deployment's request size at 12. */
const configMapOf = (lines: number) => (n: string, i: number): Record<string, unknown> => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: n, labels: { app: n } },
  data: { 'app.conf': CONF_LINE(i).repeat(lines) },
});

/**
 * The lines that make a ConfigMap's stored size (as served: defaults, managedFields) that of a
 * Deployment's: both probed once. A Deployment is stored with its defaults, status and a FieldsV1
 * of ~100 members, 2.5× its request (1.9 KB for a 0.4 KB request).
 */
async function linesForDeploymentSize(client: BenchContext['plinth']['client'], deploys: string, cms: string): Promise<number> {
  const size = async (path: string, o: Record<string, unknown>): Promise<number> => {
    const r = await client.request('POST', path, json(o));
    if (r.status !== 201) throw new Error(`size probe ${path}: ${r.status}`);
    return r.body.length;
  };
  const target = await size(deploys, deployment(name(999_999), 1));
  const base = await size(cms, configMapOf(0)(name(999_999), 1));
  return Math.max(1, Math.round((target - base) / CONF_LINE(1).length));
}

function hpa(n: string): Record<string, unknown> {
  return {
    apiVersion: 'autoscaling/v2',
    kind: 'HorizontalPodAutoscaler',
    metadata: { name: n },
    spec: {
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: n },
      minReplicas: 1,
      maxReplicas: 10,
      metrics: [
        { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 70 } } },
        { type: 'Resource', resource: { name: 'memory', target: { type: 'AverageValue', averageValue: '200Mi' } } },
      ],
    },
  };
}

export async function workloadsScenario(ctx: BenchContext): Promise<void> {
  // 6,000 per phase: 3,000 took 1.3 s, and one second of another process swung a ratio by 0.2.
  const N = ctx.size(6000);
  const G = ctx.size(10000);
  const H = ctx.size(200);
  // Each side warms up as long as it is measured: steady state, not V8's tier-up. A ConfigMap write
  // arrives here warm from the earlier scenarios while a Deployment or Pod path has run a few
  // thousand times at most, and plinth's per-request cost for those keeps falling for ~20,000
  // requests (pod validation: 91 µs average over the first 2,000, 21 µs over the 18,000th-20,000th).
  const W = ctx.size(3000);
  const client = ctx.plinth.client;
  await ensureNamespace(client, NS);
  const deploys = `/apis/apps/v1/namespaces/${NS}/deployments`;
  const cms = `/api/v1/namespaces/${NS}/configmaps`;
  const results: Record<string, PhaseResult> = {};
  const lines = await linesForDeploymentSize(client, deploys, cms);
  const configMap = configMapOf(lines);

  // Create: the objects of the measured runs are kept (with their resourceVersions) for the updates.
  type Kept = Record<string, Array<Record<string, unknown>>>;
  const created: Kept = {};
  const create = (path: string, make: (n: string, i: number) => Record<string, unknown>, prefix: string) => async (i: number): Promise<void> => {
    const o = make(`${prefix}${name(i)}`, i);
    const got = await client.json<Stored>('POST', path, json(o), 201);
    (created[path + prefix] ??= [])[i] = { ...o, metadata: { ...(o['metadata'] as object), resourceVersion: got.metadata.resourceVersion } };
  };
  // Update: a spec change (a new generation for the Deployment), by PUT with the resourceVersion;
  // the warm-up updates the warm-up objects.
  const update = (path: string, prefix: string, change: (o: Record<string, unknown>) => void) => async (i: number): Promise<void> => {
    const o = created[path + prefix]![i]!;
    change(o);
    await client.json<Stored>('PUT', `${path}/${prefix}${name(i)}`, json(o), 200);
  };
  const changeCm = (o: Record<string, unknown>): void => void ((o['data'] as Record<string, string>)['extra'] = 'x');
  const changeDeploy = (o: Record<string, unknown>): void => void ((o['spec'] as Record<string, number>)['replicas'] = 5);
  // The compared writes run in alternation, round after round (see lib/rounds.ts); each warms up
  // before its first round only (an update's warm-up updates the warm-up objects).
  const rounds: Round[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const tag = `r${r}-`;
    const first = r === 0;
    const creates = (path: string, make: (n: string, i: number) => Record<string, unknown>, prefix = '') => ({ ...(first ? { warmup: { total: W, op: create(path, make, `warm-${prefix}`) } } : {}), op: create(path, make, prefix + tag) });
    const updates = (path: string, change: (o: Record<string, unknown>) => void) => ({ ...(first ? { warmup: { total: W, op: update(path, 'warm-', change) } } : {}), op: update(path, tag, change) });
    const round: Round = {};
    const at = ` round ${r + 1}`;
    round['create-cm'] = await phase(ctx, { name: `create c=32 (ConfigMap)${at}`, side: 'plinth', total: N, concurrency: 32, ...creates(cms, configMap) });
    // The same create with the ConfigMap of the Deployment's request size (12 lines): the smaller
    // reference this row had before, reported beside it.
    round['create-cm-small'] = await phase(ctx, { name: `create c=32 (ConfigMap, request size)${at}`, side: 'plinth', total: N, concurrency: 32, ...creates(cms, configMapOf(12), 's-') });
    round['create-deploy'] = await phase(ctx, { name: `create c=32 (Deployment)${at}`, side: 'plinth', total: N, concurrency: 32, ...creates(deploys, deployment) });
    round['update-cm'] = await phase(ctx, { name: `update c=32 (ConfigMap)${at}`, side: 'plinth', total: N, concurrency: 32, ...updates(cms, changeCm) });
    round['update-deploy'] = await phase(ctx, { name: `update c=32 (Deployment)${at}`, side: 'plinth', total: N, concurrency: 32, ...updates(deploys, changeDeploy) });
    rounds.push(round);
  }

  // HPA reads: a small set read many times, through the storage version and through v1.
  const hpas = (v: string): string => `/apis/autoscaling/${v}/namespaces/${NS}/horizontalpodautoscalers`;
  for (let i = 0; i < H; i++) await client.json('POST', hpas('v2'), json(hpa(name(i))), 201);
  const get = (v: string) => async (i: number): Promise<void> => {
    await client.json('GET', `${hpas(v)}/${name(i % H)}`, undefined, 200);
  };
  results['get-hpa-v2'] = await phase(ctx, { name: 'get quorum c=32 (HPA autoscaling/v2)', side: 'plinth', total: G, concurrency: 32, warmup: { total: W, op: get('v2') }, op: get('v2') });
  results['get-hpa-v1'] = await phase(ctx, { name: 'get quorum c=32 (HPA autoscaling/v1)', side: 'plinth', total: G, concurrency: 32, warmup: { total: W, op: get('v1') }, op: get('v1') });

  const cmNote = `raw column: the same operation on ConfigMaps of the Deployment's stored size (${lines} lines of app.conf) through plinth`;
  const median = (subject: string, reference: string) => medianRound(rounds, subject, reference);
  const row = (scenario: string, subject: string, reference: string, target: Row['target'], note: string): void => {
    const { round, ratios } = median(subject, reference);
    ctx.rows.push({ scenario, unit: 'ops/s', plinth: round[subject]!.opsPerSec, raw: round[reference]!.opsPerSec, target, note: `${note}; ${roundsNote(ratios)}` });
  };
  row('Deployment create c=32 (apps/v1)', 'create-deploy', 'create-cm', { kind: 'ratioAtLeast', value: 0.8 }, cmNote);
  // The reference for both Deployment writes is a ConfigMap create; update against update
  // is reported beside it (no target) as the stricter comparison.
  row('Deployment update c=32 (apps/v1)', 'update-deploy', 'create-cm', { kind: 'ratioAtLeast', value: 0.8 }, `raw column: ConfigMap create of the Deployment's stored size (${lines} lines of app.conf) through plinth`);
  row("Deployment create vs ConfigMap of the request's size c=32", 'create-deploy', 'create-cm-small', { kind: 'none' }, "raw column: ConfigMap create with a body of the Deployment request's size (12 lines, stored at 0.4× the Deployment's size)");
  row('Deployment update vs ConfigMap update c=32', 'update-deploy', 'update-cm', { kind: 'none' }, cmNote);
  ctx.rows.push({ scenario: 'HPA get c=32 autoscaling/v1 (conversion)', unit: 'ops/s', plinth: results['get-hpa-v1']!.opsPerSec, raw: results['get-hpa-v2']!.opsPerSec, target: { kind: 'ratioAtLeast', value: 0.8 }, note: 'raw column: the same read through autoscaling/v2 (the storage version)' });
  // plinth's process CPU per request: the steadier figure when the machine is shared.
  const cpuNote = `plinth server process CPU per request (/proc) over all ${ROUNDS} rounds; raw column: the same for ConfigMaps`;
  ctx.rows.push({ scenario: 'Deployment CPU per create', unit: 'µs', plinth: cpuPerOp(rounds, 'create-deploy'), raw: cpuPerOp(rounds, 'create-cm'), target: { kind: 'none' }, note: cpuNote });
  ctx.rows.push({ scenario: 'Deployment CPU per update', unit: 'µs', plinth: cpuPerOp(rounds, 'update-deploy'), raw: cpuPerOp(rounds, 'update-cm'), target: { kind: 'none' }, note: cpuNote });
  ctx.details['workloads'] = { objects: N, gets: G, hpas: H, warmup: W, configMapLines: lines, rounds, phases: results };
}
