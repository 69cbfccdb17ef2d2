/**
 * Pods through kube 1.24's admission chain (issue 26): a namespace that enforces the restricted
 * Pod Security level, with a LimitRange (defaults to apply), a ResourceQuota (charged on every
 * create) and a PriorityClass; each pod passes ServiceAccount (the token volume), LimitRanger,
 * PodSecurity, Priority and ResourceQuota. Beside it, a ConfigMap create in a plain namespace (no
 * LimitRange, no quota: the reference pays for no plugin that acts on it).
 * Concurrency 32; the "raw" column holds the ConfigMap side; the target is the issue's ≥ 0.6×.
 * The two sides run in alternation for ROUNDS rounds; the row is the round with the median ratio
 * (see lib/rounds.ts).
 */
import type { BenchContext } from '../lib/context.js';
import { phase } from '../lib/context.js';
import type { KubeClient } from '../lib/http.js';
import { cpuPerOp, medianRound, ROUNDS, roundsNote, type Round } from '../lib/rounds.js';
import { sleep } from '../lib/stats.js';

const NS = 'bench-admission';
const REF_NS = 'bench-admission-ref';
const name = (i: number): string => `a-${String(i).padStart(6, '0')}`;
const json = (o: unknown): Buffer => Buffer.from(JSON.stringify(o));

/** A pod the restricted level admits, with a priority class and no resources (LimitRanger sets them). */
function pod(n: string, i: number): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: n, labels: { app: 'bench', shard: String(i % 8) } },
    spec: {
      priorityClassName: 'bench-admission',
      securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
      containers: [
        {
          name: 'web',
          image: `registry.example.com/web:1.${i % 50}`,
          ports: [{ containerPort: 8080 }],
          securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
        },
      ],
    },
  };
}

function configMap(n: string, i: number): Record<string, unknown> {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: n, labels: { app: 'bench' } }, data: { 'app.conf': `listen 8080\nworkers ${i % 8}\n`.repeat(6) } };
}

async function setUp(client: KubeClient): Promise<void> {
  const ns = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS, labels: { 'pod-security.kubernetes.io/enforce': 'restricted', 'pod-security.kubernetes.io/enforce-version': 'v1.24' } } };
  await client.json('POST', '/api/v1/namespaces', json(ns), [201, 409]);
  await client.json('POST', '/api/v1/namespaces', json({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: REF_NS } }), [201, 409]);
  await client.json('POST', '/apis/scheduling.k8s.io/v1/priorityclasses', json({ apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name: 'bench-admission' }, value: 1000 }), [201, 409]);
  const limits = { apiVersion: 'v1', kind: 'LimitRange', metadata: { name: 'defaults' }, spec: { limits: [{ type: 'Container', default: { cpu: '200m', memory: '128Mi' }, defaultRequest: { cpu: '100m', memory: '64Mi' }, max: { cpu: '2', memory: '1Gi' } }] } };
  await client.json('POST', `/api/v1/namespaces/${NS}/limitranges`, json(limits), [201, 409]);
  const quota = { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'compute' }, spec: { hard: { pods: '1000000', 'requests.cpu': '100000', 'requests.memory': '100000Gi', 'limits.cpu': '100000', 'limits.memory': '100000Gi' } } };
  await client.json('POST', `/api/v1/namespaces/${NS}/resourcequotas`, json(quota), [201, 409]);
  // The ServiceAccount plugin needs the namespace's default account, which a controller creates.
  for (let i = 0; i < 200; i++) {
    const r = await client.request('GET', `/api/v1/namespaces/${NS}/serviceaccounts/default`);
    if (r.status === 200) return;
    await sleep(50);
  }
  throw new Error(`the default ServiceAccount of ${NS} did not appear`);
}

export async function admissionScenario(ctx: BenchContext): Promise<void> {
  // 6,000 per phase: 3,000 took about 2 s, short enough for another process to swing the ratio.
  const N = ctx.size(6000);
  // Each side warms up as long as it is measured: steady state, not V8's tier-up. A ConfigMap write
  // arrives here warm from the earlier scenarios while a Deployment or Pod path has run a few
  // thousand times at most, and plinth's per-request cost for those keeps falling for ~20,000
  // requests (pod validation: 91 µs average over the first 2,000, 21 µs over the 18,000th-20,000th).
  const W = ctx.size(3000);
  const client = ctx.plinth.client;
  await setUp(client);
  const create = (path: string, make: (n: string, i: number) => Record<string, unknown>, prefix: string) => async (i: number): Promise<void> => {
    await client.json('POST', path, json(make(`${prefix}${name(i)}`, i)), 201);
  };
  const cms = `/api/v1/namespaces/${REF_NS}/configmaps`;
  const pods = `/api/v1/namespaces/${NS}/pods`;
  // The sides alternate, round after round; each warms up before its first round only.
  const rounds: Round[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const tag = `r${r}-`;
    const warm = (path: string, make: (n: string, i: number) => Record<string, unknown>) => (r === 0 ? { warmup: { total: W, op: create(path, make, 'warm-') } } : {});
    const round: Round = {};
    round['create-cm'] = await phase(ctx, { name: `create c=32 (ConfigMap, plain namespace) round ${r + 1}`, side: 'plinth', total: N, concurrency: 32, ...warm(cms, configMap), op: create(cms, configMap, tag) });
    round['create-pod'] = await phase(ctx, { name: `create c=32 (Pod, full admission chain) round ${r + 1}`, side: 'plinth', total: N, concurrency: 32, ...warm(pods, pod), op: create(pods, pod, tag) });
    rounds.push(round);
  }
  // The chain really ran: the last pod carries what ServiceAccount, LimitRanger and Priority set.
  const last = await client.json<{ spec: { priority?: number; volumes?: Array<{ name: string }>; containers: Array<{ resources?: { limits?: Record<string, string> } }> } }>('GET', `${pods}/r${ROUNDS - 1}-${name(N - 1)}`, undefined, 200);
  const chainRan = last.spec.priority === 1000 && !!last.spec.volumes?.some((v) => v.name.startsWith('kube-api-access-')) && last.spec.containers[0]?.resources?.limits?.['cpu'] === '200m';
  const { round, ratios } = medianRound(rounds, 'create-pod', 'create-cm');
  ctx.rows.push({
    scenario: 'Pod create c=32 (admission chain)',
    unit: 'ops/s',
    plinth: round['create-pod']!.opsPerSec,
    raw: round['create-cm']!.opsPerSec,
    target: { kind: 'ratioAtLeast', value: 0.6 },
    note: `raw column: ConfigMap create in a namespace without LimitRange or quota through plinth; ${roundsNote(ratios)}; chain applied to the pods: ${chainRan ? 'yes' : 'NO'}`,
    ...(chainRan ? {} : { met: false }),
  });
  ctx.rows.push({ scenario: 'Pod CPU per create (admission chain)', unit: 'µs', plinth: cpuPerOp(rounds, 'create-pod'), raw: cpuPerOp(rounds, 'create-cm'), target: { kind: 'none' }, note: `plinth server process CPU per request (/proc) over all ${ROUNDS} rounds; raw column: the same for ConfigMaps` });
  ctx.details['admission'] = { objects: N, warmup: W, chainRan, rounds, ratios };
}
