/**
 * Custom resources against a built-in kind: create and quorum get of a custom resource whose
 * version schema has 30 properties (validated by the compiled ajv schema, pruned and defaulted on
 * every write), next to the same operations on ServiceAccounts, at concurrency 32. The "raw"
 * column of these rows is the ServiceAccount figure; the target is the issue's ≥ 0.8×.
 */
import type { BenchContext, PhaseResult } from '../lib/context.js';
import { phase } from '../lib/context.js';
import { ensureNamespace } from '../lib/plinth.js';
import { serviceAccount, toBytes } from '../lib/objects.js';

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const NS = 'bench-crd';
const saPath = `/api/v1/namespaces/${NS}/serviceaccounts`;
const crPath = `/apis/bench.plinth.io/v1/namespaces/${NS}/benchitems`;
const name = (i: number): string => `item-${String(i).padStart(6, '0')}`;

/** 30 properties of the kinds CRDs declare: bounded integers, patterns, enums, defaults, lists, maps. */
function specSchema(): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  for (let i = 0; i < 10; i++) properties[`count${i}`] = { type: 'integer', minimum: 0, maximum: 1000 };
  for (let i = 0; i < 8; i++) properties[`name${i}`] = { type: 'string', maxLength: 63, pattern: '^[a-z0-9-]+$' };
  for (let i = 0; i < 4; i++) properties[`mode${i}`] = { type: 'string', enum: ['Fast', 'Safe', 'Off'], default: 'Safe' };
  for (let i = 0; i < 3; i++) properties[`flag${i}`] = { type: 'boolean', default: false };
  properties['ratio'] = { type: 'number', minimum: 0, maximum: 1 };
  properties['tags'] = { type: 'array', items: { type: 'string' }, maxItems: 16, 'x-kubernetes-list-type': 'set' };
  properties['ports'] = {
    type: 'array',
    'x-kubernetes-list-type': 'map',
    'x-kubernetes-list-map-keys': ['name'],
    items: { type: 'object', required: ['name'], properties: { name: { type: 'string' }, port: { type: 'integer', minimum: 1, maximum: 65535 } } },
  };
  properties['labels'] = { type: 'object', additionalProperties: { type: 'string' } };
  properties['size'] = { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] };
  return properties;
}

function item(i: number): Record<string, unknown> {
  const spec: Record<string, unknown> = { ratio: 0.5, tags: ['a', 'b'], ports: [{ name: 'http', port: 80 }], labels: { team: 'platform' }, size: '10Gi' };
  for (let k = 0; k < 10; k++) spec[`count${k}`] = (i + k) % 1000;
  for (let k = 0; k < 8; k++) spec[`name${k}`] = `name-${k}-${i % 97}`;
  for (let k = 0; k < 4; k++) spec[`mode${k}`] = 'Fast';
  return { apiVersion: 'bench.plinth.io/v1', kind: 'BenchItem', metadata: { name: name(i), labels: { 'bench.plinth.io/shard': `shard-${i % 16}` } }, spec };
}

export async function crdScenario(ctx: BenchContext): Promise<void> {
  const N = ctx.size(5000);
  const G = ctx.size(10000);
  const W = ctx.size(300);
  const client = ctx.plinth.client;
  await ensureNamespace(client, NS);
  const crd = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'benchitems.bench.plinth.io' },
    spec: {
      group: 'bench.plinth.io',
      scope: 'Namespaced',
      names: { plural: 'benchitems', singular: 'benchitem', kind: 'BenchItem', listKind: 'BenchItemList' },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: specSchema() } } } } }],
    },
  };
  await client.json('POST', CRDS, Buffer.from(JSON.stringify(crd)), [201, 409]);
  for (let t = 0; ; t++) {
    const r = await client.request('GET', `${crPath}?limit=1`, undefined);
    if (r.status === 200) break;
    if (t > 100) throw new Error(`custom resource not served: ${r.status}`);
    await new Promise((res) => setTimeout(res, 100));
  }

  const results: Record<string, PhaseResult> = {};
  const create = (path: string, body: (i: number) => Buffer) => async (i: number): Promise<void> => {
    await client.json('POST', path, body(i), 201);
  };
  const saBody = (prefix: string) => (i: number): Buffer => toBytes(serviceAccount(NS, `${prefix}${name(i)}`, i));
  const crBody = (prefix: string) => (i: number): Buffer => {
    const o = item(i);
    (o['metadata'] as { name: string }).name = `${prefix}${name(i)}`;
    return Buffer.from(JSON.stringify(o));
  };
  results['create-sa'] = await phase(ctx, { name: 'create c=32 (ServiceAccount)', side: 'plinth', total: N, concurrency: 32, warmup: { total: W, op: create(saPath, saBody('warm-')) }, op: create(saPath, saBody('')) });
  results['create-cr'] = await phase(ctx, { name: 'create c=32 (custom resource)', side: 'plinth', total: N, concurrency: 32, warmup: { total: W, op: create(crPath, crBody('warm-')) }, op: create(crPath, crBody('')) });
  const get = (path: string) => async (i: number): Promise<void> => {
    await client.json('GET', `${path}/${name(i % N)}`, undefined, 200);
  };
  results['get-sa'] = await phase(ctx, { name: 'get quorum c=32 (ServiceAccount)', side: 'plinth', total: G, concurrency: 32, warmup: { total: W, op: get(saPath) }, op: get(saPath) });
  results['get-cr'] = await phase(ctx, { name: 'get quorum c=32 (custom resource)', side: 'plinth', total: G, concurrency: 32, warmup: { total: W, op: get(crPath) }, op: get(crPath) });

  const note = 'raw column: the same operation on ServiceAccounts through plinth';
  ctx.rows.push({ scenario: 'CR create c=32 throughput (30-prop schema)', unit: 'ops/s', plinth: results['create-cr']!.opsPerSec, raw: results['create-sa']!.opsPerSec, target: { kind: 'ratioAtLeast', value: 0.8 }, note });
  ctx.rows.push({ scenario: 'CR get quorum c=32 throughput', unit: 'ops/s', plinth: results['get-cr']!.opsPerSec, raw: results['get-sa']!.opsPerSec, target: { kind: 'ratioAtLeast', value: 0.8 }, note });
  // plinth's process CPU per request: the stable figure when the machine is shared (ratio ≤ 1.25
  // is the same ≥ 0.8× when plinth's one thread is the bottleneck).
  const cpu = (p: PhaseResult): number => (p.plinthCpuUs ?? 0) / p.ops;
  const cpuNote = 'plinth server process CPU per request (/proc); raw column: the same for ServiceAccounts';
  ctx.rows.push({ scenario: 'CR CPU per create', unit: 'µs', plinth: cpu(results['create-cr']!), raw: cpu(results['create-sa']!), target: { kind: 'ratioAtMost', value: 1.25 }, note: cpuNote });
  ctx.rows.push({ scenario: 'CR CPU per get quorum', unit: 'µs', plinth: cpu(results['get-cr']!), raw: cpu(results['get-sa']!), target: { kind: 'ratioAtMost', value: 1.25 }, note: cpuNote });
  ctx.details['crd'] = { objects: N, gets: G, warmup: W, phases: results };
}
