/**
 * A profiling driver for the admission scenario (issue 26): starts its own etcd and plinth, sets up
 * the scenario's namespaces (restricted Pod Security, a LimitRange, a ResourceQuota, a
 * PriorityClass; a plain one for ConfigMaps), warms the create path of pods through the chain (or
 * of ConfigMaps), then measures it alone and prints plinth's CPU per create from /proc.
 * PROFILE_OUT=file writes a CPU profile of the first PROFILE_SECONDS (default 4) of the measured
 * part, from plinth's /debug/pprof/profile.
 *
 *   node bench/dist/profile-pods.js pod|cm [N] [warm-up]
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { startBenchEtcd } from './lib/etcd.js';
import { startPlinth } from './lib/plinth.js';
import { sleep } from './lib/stats.js';

const [kind = 'pod', n = '6000', w = '3000'] = process.argv.slice(2);
const N = Number(n);
const W = Number(w);
const NS = 'padm';
const REF_NS = 'padm-ref';
const json = (o: unknown): Buffer => Buffer.from(JSON.stringify(o));
const name = (prefix: string, i: number): string => `${prefix}${String(i).padStart(6, '0')}`;

/** The scenario's pod: admitted by the restricted level, resources from the LimitRange. */
const pod = (n: string, i: number): Record<string, unknown> => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: n, labels: { app: 'bench', shard: String(i % 8) } },
  spec: {
    priorityClassName: 'bench-admission',
    securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
    containers: [{ name: 'web', image: `registry.example.com/web:1.${i % 50}`, ports: [{ containerPort: 8080 }], securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } } }],
  },
});
const configMap = (n: string, i: number): Record<string, unknown> => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: n, labels: { app: 'bench' } }, data: { 'app.conf': `listen 8080\nworkers ${i % 8}\n`.repeat(6) } });

const etcd = await startBenchEtcd();
const plinth = await startPlinth({ etcdEndpoint: etcd.endpoint });
const client = plinth.client;
await client.json('POST', '/api/v1/namespaces', json({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS, labels: { 'pod-security.kubernetes.io/enforce': 'restricted', 'pod-security.kubernetes.io/enforce-version': 'v1.24' } } }), 201);
await client.json('POST', '/api/v1/namespaces', json({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: REF_NS } }), 201);
await client.json('POST', '/apis/scheduling.k8s.io/v1/priorityclasses', json({ apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name: 'bench-admission' }, value: 1000 }), 201);
const limits = { apiVersion: 'v1', kind: 'LimitRange', metadata: { name: 'defaults' }, spec: { limits: [{ type: 'Container', default: { cpu: '200m', memory: '128Mi' }, defaultRequest: { cpu: '100m', memory: '64Mi' }, max: { cpu: '2', memory: '1Gi' } }] } };
await client.json('POST', `/api/v1/namespaces/${NS}/limitranges`, json(limits), 201);
const quota = { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'compute' }, spec: { hard: { pods: '1000000', 'requests.cpu': '100000', 'requests.memory': '100000Gi', 'limits.cpu': '100000', 'limits.memory': '100000Gi' } } };
await client.json('POST', `/api/v1/namespaces/${NS}/resourcequotas`, json(quota), 201);
for (let i = 0; i < 200 && (await client.request('GET', `/api/v1/namespaces/${NS}/serviceaccounts/default`)).status !== 200; i++) await sleep(50);

const path = kind === 'pod' ? `/api/v1/namespaces/${NS}/pods` : `/api/v1/namespaces/${REF_NS}/configmaps`;
const make = kind === 'pod' ? pod : configMap;
/** plinth's user + system CPU so far, in µs (clock ticks of 10 ms). */
const cpuUs = (): number => {
  const f = readFileSync(`/proc/${plinth.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(f[11]) + Number(f[12])) * 10_000;
};
async function run(prefix: string, total: number): Promise<void> {
  let i = 0;
  const worker = async (): Promise<void> => {
    while (i < total) {
      const k = i++;
      await client.json('POST', path, json(make(name(prefix, k), k)), 201);
    }
  };
  await Promise.all(Array.from({ length: 32 }, worker));
}
// PREFILL=n: n ConfigMaps of ~2 KB in a namespace of their own first, for a server whose cache and
// heap are as large as the full bench's by the time it reaches the admission scenario.
const prefill = Number(process.env['PREFILL'] ?? 0);
if (prefill > 0) {
  await client.json('POST', '/api/v1/namespaces', json({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'padm-fill' } }), 201);
  let i = 0;
  const body = 'x'.repeat(2000);
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      while (i < prefill) await client.json('POST', '/api/v1/namespaces/padm-fill/configmaps', json({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `fill-${i++}` }, data: { body } }), 201);
    }),
  );
}
// The scenario's names: the measured ones sort before the warm-up's.
await run('warm-', W);
const cpu0 = cpuUs();
const t0 = Date.now();
const out = process.env['PROFILE_OUT'];
const profiled = out
  ? client.request('GET', `/debug/pprof/profile?seconds=${process.env['PROFILE_SECONDS'] ?? '4'}`).then((r) => writeFileSync(out, r.body))
  : undefined;
await run('a-', N);
const ms = Date.now() - t0;
await profiled;
console.log(`${kind} create: ${((N / ms) * 1000).toFixed(0)} ops/s, plinth cpu ${((cpuUs() - cpu0) / N).toFixed(0)} µs/op`);
await plinth.stop();
await etcd.stop();
