/**
 * /metrics (issue 12): kube-apiserver 1.24's metric names, types, labels and buckets, scraped over
 * HTTPS from a plinth on a real etcd and parsed with a strict text-format parser; counters grow by
 * exactly the requests made; watch, storage, deprecated-API and authentication metrics; who may
 * scrape; hidden metrics and --show-hidden-metrics-for-version.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { request as httpsRequest } from 'node:https';
import { startInProcess, startTestEtcd, tempDir, eventually, type InProcessPlinth, type TestEtcd, type TestClient } from './harness.js';
import { parseExposition, valueOf, samplesOf, bucketsOf, type Family } from './metrics-parser.js';

const MONITOR_TOKEN = 'monitor-token-0123456789';
const BOB_TOKEN = 'bob-token-0123456789';
const NS = 'metrics-test';

let etcd: TestEtcd;
let plinth: InProcessPlinth;
let c: TestClient;
let args: string[];

before(async () => {
  const dir = tempDir('plinth-metrics-');
  writeFileSync(join(dir, 'tokens.csv'), `${MONITOR_TOKEN},prometheus,2001,"system:monitoring"\n${BOB_TOKEN},bob,2002\n`);
  args = [`--token-auth-file=${join(dir, 'tokens.csv')}`];
  etcd = await startTestEtcd();
  plinth = await startInProcess({ etcd, args });
  c = plinth.client;
  const ns = await c.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  assert.equal(ns.status, 201);
});

after(async () => {
  await plinth?.stop();
  await etcd?.stop();
});

async function scrape(client: TestClient = c, token?: string): Promise<Map<string, Family>> {
  const res = await client.get('/metrics', token === undefined ? {} : { token });
  assert.equal(res.status, 200, res.raw.toString());
  assert.equal(res.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8');
  return parseExposition(res.raw.toString('utf8'));
}

/** Every apiserver_request_total series matching `match`, by its labels, with its value. */
function requestCounts(m: Map<string, Family>, match: Record<string, string>): Map<string, number> {
  const out = new Map<string, number>();
  for (const s of samplesOf(m, 'apiserver_request_total', match)) {
    const { verb, dry_run, scope, subresource, code } = s.labels;
    out.set(`${verb} dry_run=${dry_run} scope=${scope} sub=${subresource} ${code}`, s.value);
  }
  return out;
}

function delta(before: Map<string, number>, after: Map<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of after) {
    const d = v - (before.get(k) ?? 0);
    if (d !== 0) out[k] = d;
  }
  return out;
}

const cm = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { a: 'b' } });
const CM = `/api/v1/namespaces/${NS}/configmaps`;

test('the exposition: content type, HELP with the stability class, kube types, labels and buckets, process metrics', async () => {
  assert.equal((await c.get(CM)).status, 200);
  const m = await scrape();
  const expect: Array<[string, Family['type'], string, string[]]> = [
    ['apiserver_request_total', 'counter', '[STABLE] ', ['verb', 'dry_run', 'group', 'version', 'resource', 'subresource', 'scope', 'component', 'code']],
    ['apiserver_request_duration_seconds', 'histogram', '[STABLE] ', ['verb', 'dry_run', 'group', 'version', 'resource', 'subresource', 'scope', 'component', 'le']],
    ['apiserver_response_sizes', 'histogram', '[STABLE] ', ['verb', 'group', 'version', 'resource', 'subresource', 'scope', 'component', 'le']],
    ['apiserver_current_inflight_requests', 'gauge', '[STABLE] ', ['request_kind']],
    ['apiserver_storage_objects', 'gauge', '[STABLE] ', ['resource']],
    ['etcd_request_duration_seconds', 'histogram', '[ALPHA] ', ['operation', 'type', 'le']],
    ['authentication_attempts', 'counter', '[ALPHA] ', ['result']],
  ];
  for (const [name, type, prefix, labels] of expect) {
    const f = m.get(name);
    assert.ok(f, `${name} is exposed`);
    assert.equal(f.type, type, name);
    assert.ok(f.help?.startsWith(prefix), `${name} HELP: ${f.help}`);
    const sample = f.samples.find((s) => s.name === name || s.name === `${name}_bucket`);
    assert.ok(sample, `${name} has a sample`);
    assert.deepEqual(Object.keys(sample.labels).sort(), [...labels].sort(), `${name} labels`);
  }
  for (const [name, type] of [
    ['apiserver_longrunning_requests', 'gauge'],
    ['apiserver_requested_deprecated_apis', 'gauge'],
    ['apiserver_watch_events_total', 'counter'],
    ['apiserver_watch_events_sizes', 'histogram'],
    ['apiserver_audit_event_total', 'counter'],
    ['apiserver_audit_error_total', 'counter'],
    ['apiserver_admission_webhook_admission_duration_seconds', 'histogram'],
  ] as const) {
    assert.equal(m.get(name)?.type, type, `${name} declared as a ${type}`);
  }
  assert.equal(m.get('apiserver_requested_deprecated_apis')!.help, '[STABLE] Gauge of deprecated APIs that have been requested, broken out by API group, version, resource, subresource, and removed_release.');
  assert.deepEqual(bucketsOf(m, 'apiserver_request_duration_seconds'), [0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60]);
  assert.deepEqual(bucketsOf(m, 'apiserver_response_sizes'), [1000, 10000, 100000, 1000000, 10000000, 100000000, 1000000000]);
  assert.deepEqual(bucketsOf(m, 'etcd_request_duration_seconds'), [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 15, 30, 60]);
  assert.deepEqual(valueOf(m, 'apiserver_current_inflight_requests', { request_kind: 'mutating' }) !== undefined, true);
  assert.deepEqual(valueOf(m, 'apiserver_current_inflight_requests', { request_kind: 'readOnly' }) !== undefined, true);
  // prom-client's process and Node.js metrics.
  for (const name of ['process_cpu_user_seconds_total', 'process_resident_memory_bytes', 'nodejs_heap_size_used_bytes', 'nodejs_eventloop_lag_seconds']) assert.ok(m.has(name), name);
  // Deprecated in 1.22 and 1.23: shown with the spec's notice (rule 13 hides them in 1.25 and 1.26).
  for (const [name, from] of [['etcd_object_counts', '1.22'], ['apiserver_longrunning_gauge', '1.23'], ['apiserver_registered_watchers', '1.23']] as const) {
    assert.ok(m.get(name)?.help?.startsWith(`[ALPHA] (Deprecated from ${from}) `), `${name} is shown, marked deprecated`);
  }
});

test('apiserver_request_total grows by exactly the requests made, with kube label sets and codes', async () => {
  const b = requestCounts(await scrape(), { group: '', version: 'v1', resource: 'configmaps', component: 'apiserver' });
  const authBefore = await scrape();
  for (const name of ['a', 'b', 'c']) assert.equal((await c.post(CM, cm(name))).status, 201);
  assert.equal((await c.post(CM, cm('a'))).status, 409);
  assert.equal((await c.post(`${CM}?dryRun=All`, cm('d'))).status, 201);
  for (let i = 0; i < 2; i++) assert.equal((await c.get(`${CM}/a`)).status, 200);
  assert.equal((await c.get(`${CM}/missing`)).status, 404);
  for (let i = 0; i < 4; i++) assert.equal((await c.get(CM)).status, 200);
  assert.equal((await c.get('/api/v1/configmaps')).status, 200);
  assert.equal((await c.request('PATCH', `${CM}/a`, { rawBody: JSON.stringify({ data: { x: 'y' } }), headers: { 'content-type': 'application/merge-patch+json' } })).status, 200);
  assert.equal((await c.request('PATCH', `${CM}/b?fieldManager=metrics-test`, { rawBody: JSON.stringify(cm('b')), headers: { 'content-type': 'application/apply-patch+yaml' } })).status, 200);
  assert.equal((await c.put(`${CM}/c`, { ...cm('c'), data: { z: '1' } })).status, 200);
  assert.equal((await c.delete(`${CM}/c`)).status, 200);
  // Refused by filters: not counted (kube counts what its routes serve).
  assert.equal((await c.get(CM, { token: 'not-a-valid-token' })).status, 401);
  assert.equal((await c.get(CM, { token: null })).status, 403);
  assert.equal((await c.get(CM, { token: BOB_TOKEN })).status, 403);
  // A resource nobody serves: no route, no series.
  assert.equal((await c.get(`/api/v1/namespaces/${NS}/nosuchthings`)).status, 404);

  const m = await scrape();
  const a = requestCounts(m, { group: '', version: 'v1', resource: 'configmaps', component: 'apiserver' });
  assert.deepEqual(delta(b, a), {
    'POST dry_run= scope=resource sub= 201': 3,
    'POST dry_run= scope=resource sub= 409': 1,
    'POST dry_run=All scope=resource sub= 201': 1,
    'GET dry_run= scope=resource sub= 200': 2,
    'GET dry_run= scope=resource sub= 404': 1,
    'LIST dry_run= scope=namespace sub= 200': 4,
    'LIST dry_run= scope=cluster sub= 200': 1,
    'PATCH dry_run= scope=resource sub= 200': 1,
    'APPLY dry_run= scope=resource sub= 200': 1,
    'PUT dry_run= scope=resource sub= 200': 1,
    'DELETE dry_run= scope=resource sub= 200': 1,
  });
  assert.equal(samplesOf(m, 'apiserver_request_total', { resource: 'nosuchthings' }).length, 0);
  // The latency histogram counted the same requests; reads have response sizes.
  const lat = valueOf(m, 'apiserver_request_duration_seconds_count', { verb: 'POST', dry_run: '', resource: 'configmaps', scope: 'resource', group: '', version: 'v1', subresource: '', component: 'apiserver' });
  assert.ok(lat !== undefined && lat >= 4, `POST latency count ${lat}`);
  const sizes = valueOf(m, 'apiserver_response_sizes_count', { verb: 'GET', resource: 'configmaps', scope: 'resource', group: '', version: 'v1', subresource: '', component: 'apiserver' });
  assert.ok(sizes !== undefined && sizes >= 3, `GET response sizes count ${sizes}`);
  assert.equal(samplesOf(m, 'apiserver_response_sizes_count', { verb: 'POST' }).length, 0, 'writes have no response sizes');
  // Authentication attempts: one invalid token is an error; no credential (anonymous) a success.
  const errors = (valueOf(m, 'authentication_attempts', { result: 'error' }) ?? 0) - (valueOf(authBefore, 'authentication_attempts', { result: 'error' }) ?? 0);
  assert.equal(errors, 1);
  // etcd latency by operation and kube's object type.
  for (const operation of ['create', 'update', 'delete']) {
    const n = valueOf(m, 'etcd_request_duration_seconds_count', { operation, type: '*core.ConfigMap' });
    assert.ok(n !== undefined && n >= 1, `etcd ${operation} *core.ConfigMap: ${n}`);
  }
});

test('health endpoints are counted as kube counts them; other non-resource requests are not', async () => {
  const match = { verb: 'GET', subresource: '/healthz', component: '', scope: '', group: '', version: '', resource: '', dry_run: '', code: '200' };
  const before = valueOf(await scrape(), 'apiserver_request_total', match) ?? 0;
  assert.equal((await c.get('/healthz')).status, 200);
  assert.equal((await c.get('/version')).status, 200);
  assert.equal((await c.get('/apis')).status, 200);
  const m = await scrape();
  assert.equal(valueOf(m, 'apiserver_request_total', match), before + 1);
  for (const sub of ['/version', '/apis', '/metrics']) assert.equal(samplesOf(m, 'apiserver_request_total', { subresource: sub }).length, 0, sub);
});

/** Opens a watch; resolves once the response headers arrived, with a function that closes it. */
function openWatch(path: string): Promise<{ events: string[]; close(): void }> {
  return new Promise((resolve, reject) => {
    const u = new URL(path, c.base);
    const req = httpsRequest(u, { method: 'GET', headers: { authorization: `Bearer ${c.token}` }, rejectUnauthorized: false }, (res) => {
      const events: string[] = [];
      res.setEncoding('utf8');
      res.on('data', (d: string) => events.push(d));
      res.on('error', () => undefined);
      resolve({ events, close: () => req.destroy() });
    });
    req.on('error', (e) => {
      if ((e as NodeJS.ErrnoException).code !== 'ECONNRESET') reject(e);
    });
    req.end();
  });
}

test('watch metrics while a watch is open: long-running gauge, events sent and their sizes; the WATCH is counted when it ends', async () => {
  const lr = { verb: 'WATCH', group: '', version: 'v1', resource: 'configmaps', subresource: '', scope: 'namespace', component: 'apiserver' };
  const kind = { group: '', version: 'v1', kind: 'ConfigMap' };
  const before = await scrape();
  const eventsBefore = valueOf(before, 'apiserver_watch_events_total', kind) ?? 0;
  const watchesBefore = valueOf(before, 'apiserver_request_total', { ...lr, dry_run: '', code: '200' }) ?? 0;
  const w = await openWatch(`${CM}?watch=true&resourceVersion=0`);
  try {
    const during = await eventually(async () => {
      const m = await scrape();
      return valueOf(m, 'apiserver_longrunning_requests', lr) === 1 && m;
    }, 10_000, 'the watch in apiserver_longrunning_requests');
    // The initial ADDED events of the configmaps already there.
    const initial = (valueOf(during, 'apiserver_watch_events_total', kind) ?? 0) - eventsBefore;
    assert.ok(initial >= 1, `initial events ${initial}`);
    assert.equal((await c.post(CM, cm('watched'))).status, 201);
    const m = await eventually(async () => {
      const s = await scrape();
      return (valueOf(s, 'apiserver_watch_events_total', kind) ?? 0) - eventsBefore === initial + 1 && s;
    }, 10_000, 'one more watch event');
    assert.equal(valueOf(m, 'apiserver_watch_events_sizes_count', kind), valueOf(m, 'apiserver_watch_events_total', kind));
    assert.deepEqual(bucketsOf(m, 'apiserver_watch_events_sizes'), [1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072]);
    // A deletion's event carries the deleted object whole (the last state the watch cache holds):
    // a ~3 KB ConfigMap's ADDED and DELETED both land between 2 and 4 KiB.
    const bucket = (s: typeof m, le: number): number => samplesOf(s, 'apiserver_watch_events_sizes_bucket', kind).find((x) => Number(x.labels['le']) === le)?.value ?? 0;
    const [under2k, under4k] = [bucket(m, 2048), bucket(m, 4096)];
    assert.equal((await c.post(CM, { ...cm('sized'), data: { blob: 'x'.repeat(3000) } })).status, 201);
    assert.equal((await c.delete(`${CM}/sized`)).status, 200);
    const m2 = await eventually(async () => {
      const s = await scrape();
      return (valueOf(s, 'apiserver_watch_events_total', kind) ?? 0) - eventsBefore === initial + 3 && s;
    }, 10_000, 'the sized ConfigMap\'s two watch events');
    assert.deepEqual([bucket(m2, 2048), bucket(m2, 4096)], [under2k, under4k + 2]);
    assert.equal(valueOf(m2, 'apiserver_watch_events_sizes_count', kind), valueOf(m2, 'apiserver_watch_events_total', kind));
  } finally {
    w.close();
  }
  const after = await eventually(async () => {
    const m = await scrape();
    return valueOf(m, 'apiserver_longrunning_requests', lr) === 0 && m;
  }, 10_000, 'the watch to end');
  assert.equal(valueOf(after, 'apiserver_request_total', { ...lr, dry_run: '', code: '200' }), watchesBefore + 1);
});

test('apiserver_storage_objects counts the stored objects of each resource', async () => {
  await c.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'metrics-count' } });
  for (const name of ['x', 'y']) assert.equal((await c.post('/api/v1/namespaces/metrics-count/secrets', { apiVersion: 'v1', kind: 'Secret', metadata: { name } })).status, 201);
  await eventually(async () => {
    const total = (await c.get('/api/v1/secrets')).body.items.length as number;
    const namespaces = (await c.get('/api/v1/namespaces')).body.items.length as number;
    const m = await scrape();
    return valueOf(m, 'apiserver_storage_objects', { resource: 'secrets' }) === total && valueOf(m, 'apiserver_storage_objects', { resource: 'namespaces' }) === namespaces;
  }, 10_000, 'apiserver_storage_objects to match the lists');
  const m = await scrape();
  assert.ok((valueOf(m, 'apiserver_storage_objects', { resource: 'clusterroles.rbac.authorization.k8s.io' }) ?? 0) > 10, 'group resources are qualified');
});

test('a deprecated API version sets apiserver_requested_deprecated_apis; a current one adds no series', async () => {
  const v1 = await c.get(`/apis/events.k8s.io/v1/namespaces/${NS}/events`);
  assert.equal(v1.status, 200);
  let m = await scrape();
  assert.equal(samplesOf(m, 'apiserver_requested_deprecated_apis').length, 0, 'no deprecated API requested yet');
  const beta = await c.get(`/apis/events.k8s.io/v1beta1/namespaces/${NS}/events`);
  assert.equal(beta.status, 200);
  m = await scrape();
  assert.deepEqual(samplesOf(m, 'apiserver_requested_deprecated_apis'), [
    { name: 'apiserver_requested_deprecated_apis', labels: { group: 'events.k8s.io', version: 'v1beta1', resource: 'events', subresource: '', removed_release: '1.25' }, value: 1 },
  ]);
  // Joinable to apiserver_request_total.
  assert.equal(valueOf(m, 'apiserver_request_total', { group: 'events.k8s.io', version: 'v1beta1', resource: 'events', verb: 'LIST', code: '200' }), 1);
});

test('/metrics is the nonResourceURL get /metrics: anonymous and unprivileged users are refused, admins and system:monitoring may scrape', async () => {
  assert.equal((await c.get('/metrics', { token: null })).status, 403);
  assert.equal((await c.get('/metrics', { token: BOB_TOKEN })).status, 403);
  await scrape(c, MONITOR_TOKEN);
  await scrape(c);
  assert.equal((await c.post('/metrics', {})).status, 405);
});

test('deprecated metrics: marked and counting like their replacements; --show-hidden-metrics-for-version takes only 1.23', async () => {
  await assert.rejects(startInProcess({ etcd, args: ['--show-hidden-metrics-for-version=1.22'] }), /--show-hidden-metrics-for-version must be omitted or have the value '1\.23'\. Only the previous minor version is allowed/);
  await assert.rejects(startInProcess({ etcd, args: ['--show-hidden-metrics-for-version=1.24'] }), /Only the previous minor version is allowed/);
  const shown = await startInProcess({ etcd, args: ['--show-hidden-metrics-for-version=1.23'] });
  try {
    const m = await eventually(async () => {
      const s = await scrape(shown.client);
      return valueOf(s, 'etcd_object_counts', { resource: 'configmaps' }) !== undefined && s;
    }, 10_000, 'etcd_object_counts');
    assert.equal(m.get('etcd_object_counts')!.help, '[ALPHA] (Deprecated from 1.22) Number of stored objects at the time of last check split by kind. This metric is replaced by apiserver_storage_object_counts.');
    assert.equal(m.get('etcd_object_counts')!.type, 'gauge');
    for (const s of samplesOf(m, 'apiserver_storage_objects')) assert.equal(valueOf(m, 'etcd_object_counts', s.labels), s.value, `etcd_object_counts ${s.labels['resource']}`);
    assert.ok(m.get('apiserver_longrunning_gauge')!.help!.startsWith('[ALPHA] (Deprecated from 1.23) Gauge of all active long-running apiserver requests'));
    assert.ok(m.get('apiserver_registered_watchers')!.help!.startsWith('[ALPHA] (Deprecated from 1.23) '));
    // The deprecated watch gauges count like their replacement.
    const w = await new Promise<() => void>((resolve, reject) => {
      const req = httpsRequest(new URL('/api/v1/namespaces/default/configmaps?watch=true', shown.client.base), { headers: { authorization: `Bearer ${shown.client.token}` }, rejectUnauthorized: false }, () => resolve(() => req.destroy()));
      req.on('error', (e) => ((e as NodeJS.ErrnoException).code === 'ECONNRESET' ? undefined : reject(e)));
      req.end();
    });
    try {
      await eventually(async () => {
        const s = await scrape(shown.client);
        return valueOf(s, 'apiserver_registered_watchers', { group: '', version: 'v1', kind: 'ConfigMap' }) === 1 && valueOf(s, 'apiserver_longrunning_gauge', { verb: 'WATCH', resource: 'configmaps', scope: 'namespace' }) === 1;
      }, 10_000, 'the deprecated watch gauges');
    } finally {
      w();
    }
  } finally {
    await shown.stop();
  }
});

test('without watch caches, apiserver_storage_objects comes from an etcd count', async () => {
  const direct = await startInProcess({ etcd, args: ['--watch-cache=false'] });
  try {
    const namespaces = (await direct.client.get('/api/v1/namespaces')).body.items.length as number;
    await eventually(async () => valueOf(await scrape(direct.client), 'apiserver_storage_objects', { resource: 'namespaces' }) === namespaces, 10_000, 'the etcd count');
    const m = await scrape(direct.client);
    const lists = valueOf(m, 'etcd_request_duration_seconds_count', { operation: 'listWithCount', type: '*core.NamespaceList' });
    assert.ok(lists !== undefined && lists >= 1, `listWithCount ${lists}`);
  } finally {
    await direct.stop();
  }
});
