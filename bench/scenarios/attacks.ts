/**
 * Issue 23 point 3: how long one hostile request holds the event loop, i.e. blocks every other
 * client. Each attack is sent at the largest input plinth accepts for it (the 3 MiB body limit,
 * or the 1.5 MiB object limit where the input is stored), while a second connection keeps a
 * GET /readyz in flight; the row's figure is that probe's longest wait. The note says what the
 * attack was answered and how long it took itself.
 *
 * Attacks: a YAML flow map of many keys (the duplicate-key check was quadratic), a JSON
 * server-side apply body (it went through the YAML parser), a strategic merge patch of a long
 * list with `$setElementOrder` (list merges were quadratic), a CRD `pattern` that backtracks
 * for ever in JavaScript against a long value (now Go's RE2), a JSON patch of 10,000 operations
 * inserting into a long list, and a write to an object with a long associative list (the
 * managedFields merge was quadratic).
 */
import { performance } from 'node:perf_hooks';
import type { BenchContext } from '../lib/context.js';
import { KubeClient, type HttpResponse } from '../lib/http.js';
import { ensureNamespace } from '../lib/plinth.js';
import type { Row } from '../lib/report.js';
import { sleep } from '../lib/stats.js';

const NS = 'bench-attacks';
const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const GROUP = 'attacks.bench.plinth.io';

interface Attack {
  /** The row: what was sent and how big. */
  name: string;
  method: string;
  path: string;
  body: Buffer;
  contentType: string;
  /** Statuses that mean plinth answered as kube does. */
  expect: number[];
}

interface Measured {
  status: number;
  requestMs: number;
  probeMaxMs: number;
  probes: number;
}

const mb = (bytes: number): string => `${(bytes / 1e6).toFixed(1)} MB`;
const n = (x: number): string => x.toLocaleString('en-US');

export async function attacksScenario(ctx: BenchContext): Promise<void> {
  const client = ctx.plinth.client;
  await ensureNamespace(client, NS);
  const details: Record<string, unknown> = {};
  ctx.details['attacks'] = details;
  const attacks: Array<() => Promise<Attack>> = [
    async () => yamlFlowMap(ctx.size(265_000)),
    async () => jsonApply(ctx.size(40_000)),
    async () => strategicMergePatch(ctx, ctx.size(25_000)),
    async () => crdPattern(ctx, ctx.size(1_000_000)),
    async () => jsonPatchSplices(ctx, ctx.size(500_000), ctx.size(10_000)),
    async () => wideObjectWrite(ctx, ctx.size(25_000)),
  ];
  for (const make of attacks) {
    const attack = await make();
    const m = await measure(ctx, attack);
    details[attack.name] = m;
    ctx.log(`  ${attack.name}: ${m.status} in ${m.requestMs.toFixed(0)} ms; /readyz waited at most ${m.probeMaxMs.toFixed(0)} ms (${m.probes} probes)`);
    const row: Row = {
      scenario: `${attack.name}: others blocked`,
      unit: 'ms',
      plinth: m.probeMaxMs,
      raw: null,
      target: { kind: 'none' },
      note: `answered ${m.status} in ${m.requestMs.toFixed(0)} ms (body ${mb(attack.body.length)}); longest /readyz of ${m.probes}`,
    };
    if (!attack.expect.includes(m.status)) row.failure = `answered ${m.status}, expected ${attack.expect.join(' or ')}`;
    ctx.rows.push(row);
  }
}

/** Sends the attack while a second connection keeps a /readyz in flight; the longest wait. */
async function measure(ctx: BenchContext, attack: Attack): Promise<Measured> {
  const probe = new KubeClient(ctx.plinth.client.info, 1);
  let done = false;
  let probeMaxMs = 0;
  let probes = 0;
  const loop = (async () => {
    while (!done || probes === 0) {
      const t0 = performance.now();
      await probe.request('GET', '/readyz').catch(() => undefined);
      probeMaxMs = Math.max(probeMaxMs, performance.now() - t0);
      probes++;
    }
  })();
  try {
    await sleep(50);
    const t0 = performance.now();
    const res: HttpResponse = await ctx.plinth.client.request(attack.method, attack.path, attack.body, attack.contentType);
    const requestMs = performance.now() - t0;
    done = true;
    await loop;
    return { status: res.status, requestMs, probeMaxMs, probes };
  } finally {
    done = true;
    await loop;
    probe.close();
  }
}

/** A SelfSubjectAccessReview whose spec holds a YAML flow map of `keys` keys (~3 MB at 265,000, under the 3 MiB body limit). */
function yamlFlowMap(keys: number): Attack {
  const map = Array.from({ length: keys }, (_, i) => `k${i}: v`).join(', ');
  const body = Buffer.from(`apiVersion: authorization.k8s.io/v1\nkind: SelfSubjectAccessReview\nspec: {resourceAttributes: {verb: get, resource: secrets}, ${map}}\n`);
  return { name: `YAML flow map of ${n(keys)} keys`, method: 'POST', path: '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', body, contentType: 'application/yaml', expect: [201] };
}

/** Server-side apply of a ConfigMap with `keys` data keys, as JSON (the object near 1.5 MiB with its managedFields). */
function jsonApply(keys: number): Attack {
  const data = Object.fromEntries(Array.from({ length: keys }, (_, i) => [`k${i}`, 'v']));
  const body = Buffer.from(JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'big-apply' }, data }));
  return { name: `JSON apply of a ConfigMap of ${n(keys)} keys`, method: 'PATCH', path: `/api/v1/namespaces/${NS}/configmaps/big-apply?fieldManager=bench`, body, contentType: 'application/apply-patch+yaml', expect: [200, 201] };
}

const secretRefs = (count: number): Array<{ name: string }> => Array.from({ length: count }, (_, i) => ({ name: `s-${i}` }));

/** A ServiceAccount with `count` secrets, then a patch that reverses their order with `$setElementOrder`. */
async function strategicMergePatch(ctx: BenchContext, count: number): Promise<Attack> {
  const refs = secretRefs(count);
  const name = 'smp-target';
  await ctx.plinth.client.json('POST', `/api/v1/namespaces/${NS}/serviceaccounts`, Buffer.from(JSON.stringify({ metadata: { name }, secrets: refs })), 201);
  const order = refs.slice().reverse();
  const body = Buffer.from(JSON.stringify({ '$setElementOrder/secrets': order, secrets: order }));
  return { name: `strategic merge patch of ${n(count)} secrets, $setElementOrder`, method: 'PATCH', path: `/api/v1/namespaces/${NS}/serviceaccounts/${name}`, body, contentType: 'application/strategic-merge-patch+json', expect: [200] };
}

/** Creates a CRD once; waits until its resource is served. */
async function ensureCrd(ctx: BenchContext, plural: string, kind: string, spec: Record<string, unknown>): Promise<void> {
  const crd = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${GROUP}` },
    spec: {
      group: GROUP,
      scope: 'Namespaced',
      names: { plural, singular: kind.toLowerCase(), kind, listKind: `${kind}List` },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: spec } } } } }],
    },
  };
  await ctx.plinth.client.json('POST', CRDS, Buffer.from(JSON.stringify(crd)), [201, 409]);
  for (let t = 0; (await ctx.plinth.client.request('GET', `/apis/${GROUP}/v1/namespaces/${NS}/${plural}?limit=1`)).status !== 200; t++) {
    if (t > 100) throw new Error(`${plural} not served`);
    await sleep(100);
  }
}

/** A custom resource whose `spec.name` (pattern `^([a-z0-9]+-?)+[a-z0-9]$`) is `length` characters that do not match. */
async function crdPattern(ctx: BenchContext, length: number): Promise<Attack> {
  await ensureCrd(ctx, 'patterned', 'Patterned', { name: { type: 'string', pattern: '^([a-z0-9]+-?)+[a-z0-9]$' } });
  const body = Buffer.from(JSON.stringify({ apiVersion: `${GROUP}/v1`, kind: 'Patterned', metadata: { name: 'p' }, spec: { name: `${'a'.repeat(length)}!` } }));
  return { name: `CRD pattern ^([a-z0-9]+-?)+[a-z0-9]$ on ${n(length)} characters`, method: 'POST', path: `/apis/${GROUP}/v1/namespaces/${NS}/patterned`, body, contentType: 'application/json', expect: [422] };
}

/** A custom resource with a list of `length` integers, then `ops` JSON patch operations inserting and removing at its head. */
async function jsonPatchSplices(ctx: BenchContext, length: number, ops: number): Promise<Attack> {
  await ensureCrd(ctx, 'lists', 'List', { values: { type: 'array', items: { type: 'integer' } } });
  const obj = { apiVersion: `${GROUP}/v1`, kind: 'List', metadata: { name: 'l' }, spec: { values: new Array<number>(length).fill(0) } };
  await ctx.plinth.client.json('POST', `/apis/${GROUP}/v1/namespaces/${NS}/lists`, Buffer.from(JSON.stringify(obj)), 201);
  const patch = Array.from({ length: ops }, (_, i) => (i % 2 ? { op: 'remove', path: '/spec/values/0' } : { op: 'add', path: '/spec/values/0', value: 1 }));
  return { name: `JSON patch of ${n(ops)} inserts/removes at the head of a ${n(length)}-item list`, method: 'PATCH', path: `/apis/${GROUP}/v1/namespaces/${NS}/lists/l`, body: Buffer.from(JSON.stringify(patch)), contentType: 'application/json-patch+json', expect: [200] };
}

/** A ServiceAccount with `count` secrets, then a two-operation JSON patch (managedFields of a long associative list). */
async function wideObjectWrite(ctx: BenchContext, count: number): Promise<Attack> {
  const name = 'wide-target';
  await ctx.plinth.client.json('POST', `/api/v1/namespaces/${NS}/serviceaccounts`, Buffer.from(JSON.stringify({ metadata: { name }, secrets: secretRefs(count) })), 201);
  const patch = [
    { op: 'add', path: '/secrets/0', value: { name: 'first' } },
    { op: 'remove', path: `/secrets/${count}` },
  ];
  return { name: `2-operation JSON patch of a ServiceAccount with ${n(count)} secrets`, method: 'PATCH', path: `/api/v1/namespaces/${NS}/serviceaccounts/${name}`, body: Buffer.from(JSON.stringify(patch)), contentType: 'application/json-patch+json', expect: [200] };
}
