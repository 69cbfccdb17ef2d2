/**
 * A profiling driver for the workloads scenario's writes (issue 25): starts its own etcd and
 * plinth, warms one kind's create (or update) path, then measures it alone and prints plinth's CPU
 * per request from /proc. Start with PLINTH_BENCH_NODE_ARGS="--cpu-prof --cpu-prof-dir=DIR" to get
 * a .cpuprofile of the whole run (warm-up included; use a large N so the measured part dominates).
 *
 *   node bench/dist/profile-writes.js deploy|cm|cm-stored|pod create|update|status|delete [N] [warm-up]
 *
 * `pod`: the pods-crud scenario's pod (bench/lib/objects.ts), its update an annotation as there.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { startBenchEtcd } from './lib/etcd.js';
import { ensureNamespace, startPlinth } from './lib/plinth.js';
import { pod } from './lib/objects.js';

type Obj = Record<string, unknown> & { metadata: Record<string, unknown> };

const [kind = 'deploy', op = 'create', n = '6000', w = '3000'] = process.argv.slice(2);
const N = Number(n);
const W = Number(w);
const NS = 'bw';

const deployment = (name: string, i: number): Obj => {
  const labels = { app: name };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, labels },
    spec: {
      replicas: 1 + (i % 3),
      selector: { matchLabels: labels },
      template: { metadata: { labels }, spec: { containers: [{ name: 'web', image: `registry.example.com/web:1.${i % 50}`, ports: [{ containerPort: 8080 }], resources: { limits: { cpu: '500m', memory: '256Mi' } } }] } },
    },
  };
};
/** `cm`: the Deployment's request size (12 lines); `cm-stored`: its stored size (63 lines, as the workloads scenario probes it). */
const configMapOf = (lines: number) => (name: string, i: number): Obj => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels: { app: name } }, data: { 'app.conf': `listen 8080\nworkers ${i % 8}\n`.repeat(lines) } });

const etcd = await startBenchEtcd();
const plinth = await startPlinth({ etcdEndpoint: etcd.endpoint });
const client = plinth.client;
await ensureNamespace(client, NS);
const path = kind === 'deploy' ? `/apis/apps/v1/namespaces/${NS}/deployments` : kind === 'pod' ? `/api/v1/namespaces/${NS}/pods` : `/api/v1/namespaces/${NS}/configmaps`;
const make = kind === 'deploy' ? deployment : kind === 'pod' ? (name: string, i: number): Obj => pod(NS, name, i) : configMapOf(kind === 'cm-stored' ? 63 : 12);
/** A process's user + system CPU so far, in µs (clock ticks of 10 ms): plinth's unless named. */
const cpuUs = (pid = plinth.pid): number => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(f[11]) + Number(f[12])) * 10_000;
};
async function run(prefix: string, total: number, fn: (prefix: string, i: number) => Promise<void>): Promise<void> {
  let i = 0;
  const worker = async (): Promise<void> => {
    while (i < total) await fn(prefix, i++);
  };
  await Promise.all(Array.from({ length: 32 }, worker));
}
const kept = new Map<string, Obj>();
const create = async (prefix: string, i: number): Promise<void> => {
  const o = make(`${prefix}${i}`, i);
  const got = await client.json<{ metadata: { resourceVersion: string } }>('POST', path, Buffer.from(JSON.stringify(o)), 201);
  o.metadata['resourceVersion'] = got.metadata.resourceVersion;
  kept.set(prefix + i, o);
};
const update = async (prefix: string, i: number): Promise<void> => {
  const o = kept.get(prefix + i)!;
  if (kind === 'deploy') (o['spec'] as Record<string, unknown>)['replicas'] = 5;
  else if (kind === 'pod') (o.metadata['annotations'] as Record<string, string>)['bench.plinth.io/updated'] = 'true';
  else (o['data'] as Record<string, string>)['extra'] = 'x';
  await client.json('PUT', `${path}/${prefix}${i}`, Buffer.from(JSON.stringify(o)), 200);
};
/** `status`: a PUT of the status subresource (a pod's conditions, as a kubelet reports them). */
const status = async (prefix: string, i: number): Promise<void> => {
  const o = kept.get(prefix + i)!;
  o['status'] = { phase: 'Running', conditions: [{ type: 'Ready', status: i % 2 ? 'True' : 'False' }] };
  const got = await client.json<{ metadata: { resourceVersion: string } }>('PUT', `${path}/${prefix}${i}/status`, Buffer.from(JSON.stringify(o)), 200);
  o.metadata['resourceVersion'] = got.metadata.resourceVersion;
};
/** `delete`: a DELETE (pods without a grace period, as `kubectl delete --now` on a node-less pod). */
const remove = async (prefix: string, i: number): Promise<void> => {
  await client.json('DELETE', `${path}/${prefix}${i}`, undefined, 200);
};
await run('warm-', W, create);
if (op !== 'create') {
  await run('m-', N, create);
  await run('warm-', W, op === 'update' ? update : op === 'status' ? status : remove);
}
const cpu0 = cpuUs();
const etcdCpu0 = cpuUs(etcd.pid);
const t0 = Date.now();
// PROFILE_OUT=file: a CPU profile of the first PROFILE_SECONDS (default 4) of the measured part,
// from plinth's /debug/pprof/profile.
const out = process.env['PROFILE_OUT'];
const profiled = out
  ? client.request('GET', `/debug/pprof/profile?seconds=${process.env['PROFILE_SECONDS'] ?? '4'}`).then((r) => writeFileSync(out, r.body))
  : undefined;
await run('m-', N, op === 'create' ? create : op === 'update' ? update : op === 'status' ? status : remove);
const ms = Date.now() - t0;
await profiled;
console.log(`${kind} ${op}: ${((N / ms) * 1000).toFixed(0)} ops/s, plinth cpu ${((cpuUs() - cpu0) / N).toFixed(0)} µs/op, etcd cpu ${((cpuUs(etcd.pid) - etcdCpu0) / N).toFixed(0)} µs/op`);
await plinth.stop();
await etcd.stop();
