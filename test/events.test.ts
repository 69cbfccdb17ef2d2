/**
 * Events in three versions over one storage, against a real etcd and a real plinth: an Event
 * written through each of core/v1, events.k8s.io/v1 and v1beta1 reads back through the other two
 * with kube's conversions, field by field; watches convert; v1beta1 warns; field selectors work on
 * list and watch; per-version validation; Protobuf; `kubectl get events` and `kubectl events`.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { rmSync } from 'node:fs';
import { decodeProtobuf, encodeProtobuf } from '@plinth/apiserver';
import { kubectlPath, tempDir, usePlinth } from './harness.js';

const env = usePlinth();
const PB = 'application/vnd.kubernetes.protobuf';
const CORE = '/api/v1/namespaces/default/events';
const V1 = '/apis/events.k8s.io/v1/namespaces/default/events';
const V1BETA1 = '/apis/events.k8s.io/v1beta1/namespaces/default/events';
const BETA_WARNING = '299 - "events.k8s.io/v1beta1 Event is deprecated in v1.22+, unavailable in v1.25+"';
const cacheDir = tempDir('plinth-kubectl-cache-');
after(() => rmSync(cacheDir, { recursive: true, force: true }));

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- test convenience

function kubectl(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(kubectlPath(), ['--kubeconfig', env.plinth.server.kubeconfigPath, '--cache-dir', cacheDir, ...args], { encoding: 'utf8', timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr });
    });
  });
}

/** The body without metadata (compared separately: same object, same name and uid). */
function fields(obj: Json): Json {
  const { metadata: _m, ...rest } = obj;
  return rest;
}

test('a core/v1 Event reads back through events.k8s.io/v1 and v1beta1, converted', async () => {
  const c = env.plinth.client;
  const created = await c.post(CORE, {
    metadata: { name: 'from-core' },
    involvedObject: { kind: 'Pod', namespace: 'default', name: 'web-1', uid: 'pod-uid', apiVersion: 'v1', resourceVersion: '12', fieldPath: 'spec.containers{web}' },
    reason: 'Started',
    message: 'Started container web',
    source: { component: 'kubelet', host: 'node-1' },
    firstTimestamp: '2022-05-01T10:00:00Z',
    lastTimestamp: '2022-05-01T10:05:00Z',
    count: 3,
    type: 'Normal',
    eventTime: '2022-05-01T10:00:00.123456Z',
    series: { count: 3, lastObservedTime: '2022-05-01T10:05:00.000001Z' },
    action: 'Start',
    related: { kind: 'Node', name: 'node-1' },
    reportingComponent: 'kubelet',
    reportingInstance: 'node-1',
  });
  assert.equal(created.status, 201, created.raw.toString());
  assert.equal(created.body.apiVersion, 'v1');
  const uid = created.body.metadata.uid;
  for (const [path, version] of [[V1, 'v1'], [V1BETA1, 'v1beta1']] as const) {
    const r = await c.get(`${path}/from-core`);
    assert.equal(r.status, 200);
    assert.equal(r.body.metadata.uid, uid);
    assert.deepEqual(fields(r.body), {
      apiVersion: `events.k8s.io/${version}`,
      kind: 'Event',
      eventTime: '2022-05-01T10:00:00.123456Z',
      series: { count: 3, lastObservedTime: '2022-05-01T10:05:00.000001Z' },
      reportingController: 'kubelet',
      reportingInstance: 'node-1',
      action: 'Start',
      reason: 'Started',
      regarding: { kind: 'Pod', namespace: 'default', name: 'web-1', uid: 'pod-uid', apiVersion: 'v1', resourceVersion: '12', fieldPath: 'spec.containers{web}' },
      related: { kind: 'Node', name: 'node-1' },
      note: 'Started container web',
      type: 'Normal',
      deprecatedSource: { component: 'kubelet', host: 'node-1' },
      deprecatedFirstTimestamp: '2022-05-01T10:00:00Z',
      deprecatedLastTimestamp: '2022-05-01T10:05:00Z',
      deprecatedCount: 3,
    });
  }
});

test('an events.k8s.io/v1 Event reads back through core/v1 and v1beta1, converted', async () => {
  const c = env.plinth.client;
  const created = await c.post(V1, {
    metadata: { name: 'from-v1' },
    eventTime: '2022-05-01T12:00:00.500000+02:00',
    reportingController: 'example.com/operator',
    reportingInstance: 'operator-7f9',
    action: 'Reconcile',
    reason: 'ScaledUp',
    regarding: { kind: 'Deployment', namespace: 'default', name: 'web', apiVersion: 'apps/v1' },
    note: 'scaled to 3',
    type: 'Warning',
  });
  assert.equal(created.status, 201, created.raw.toString());
  assert.equal(created.headers['warning'], undefined);
  // MicroTime in UTC with microseconds; the structs kube always writes.
  assert.deepEqual(fields(created.body), {
    apiVersion: 'events.k8s.io/v1',
    kind: 'Event',
    eventTime: '2022-05-01T10:00:00.500000Z',
    reportingController: 'example.com/operator',
    reportingInstance: 'operator-7f9',
    action: 'Reconcile',
    reason: 'ScaledUp',
    regarding: { kind: 'Deployment', namespace: 'default', name: 'web', apiVersion: 'apps/v1' },
    note: 'scaled to 3',
    type: 'Warning',
    deprecatedSource: {},
  });
  const core = await c.get(`${CORE}/from-v1`);
  assert.deepEqual(fields(core.body), {
    apiVersion: 'v1',
    kind: 'Event',
    involvedObject: { kind: 'Deployment', namespace: 'default', name: 'web', apiVersion: 'apps/v1' },
    reason: 'ScaledUp',
    message: 'scaled to 3',
    source: {},
    type: 'Warning',
    eventTime: '2022-05-01T10:00:00.500000Z',
    action: 'Reconcile',
    reportingComponent: 'example.com/operator',
    reportingInstance: 'operator-7f9',
  });
  const beta = await c.get(`${V1BETA1}/from-v1`);
  assert.deepEqual(fields(beta.body), { ...fields(created.body), apiVersion: 'events.k8s.io/v1beta1' });
  assert.equal(beta.headers['warning'], BETA_WARNING);
  // managedFields record the version the write was made in.
  assert.equal(core.body.metadata.managedFields[0].apiVersion, 'events.k8s.io/v1');
});

test('an events.k8s.io/v1beta1 Event (deprecated fields allowed) reads back through core/v1 and v1, and warns', async () => {
  const c = env.plinth.client;
  const created = await c.post(V1BETA1, {
    metadata: { name: 'from-beta' },
    eventTime: '2022-05-01T10:00:00.000000Z',
    series: { count: 2, lastObservedTime: '2022-05-01T10:01:00.000000Z' },
    reportingController: 'example.com/old',
    reportingInstance: 'old-1',
    action: 'Sync',
    reason: 'Synced',
    regarding: { kind: 'Service', namespace: 'default', name: 'svc' },
    note: 'ok',
    type: 'Normal',
    deprecatedSource: { component: 'old-ctl', host: 'h1' },
    deprecatedFirstTimestamp: '2022-05-01T09:00:00Z',
    deprecatedCount: 5,
  });
  assert.equal(created.status, 201, created.raw.toString());
  assert.equal(created.headers['warning'], BETA_WARNING);
  const core = await c.get(`${CORE}/from-beta`);
  assert.deepEqual(fields(core.body), {
    apiVersion: 'v1',
    kind: 'Event',
    involvedObject: { kind: 'Service', namespace: 'default', name: 'svc' },
    reason: 'Synced',
    message: 'ok',
    source: { component: 'old-ctl', host: 'h1' },
    firstTimestamp: '2022-05-01T09:00:00Z',
    count: 5,
    type: 'Normal',
    eventTime: '2022-05-01T10:00:00.000000Z',
    series: { count: 2, lastObservedTime: '2022-05-01T10:01:00.000000Z' },
    action: 'Sync',
    reportingComponent: 'example.com/old',
    reportingInstance: 'old-1',
  });
  const v1 = await c.get(`${V1}/from-beta`);
  assert.equal(v1.headers['warning'], undefined);
  assert.deepEqual(fields(v1.body), { ...fields(created.body), apiVersion: 'events.k8s.io/v1' });
  // Every request to v1beta1 warns, reads and lists included.
  assert.equal((await c.get(V1BETA1)).headers['warning'], BETA_WARNING);
});

test('a v1 write is seen by a v1beta1 watch and a core/v1 watch, converted', async () => {
  const c = env.plinth.client;
  const rv = (await c.get(CORE)).body.metadata.resourceVersion;
  const betaWatch = c.watch(`${V1BETA1}?watch=1&resourceVersion=${rv}`, (evs) => evs.some((e) => e.object.metadata.name === 'watched'));
  const coreWatch = c.watch(`${CORE}?watch=1&resourceVersion=${rv}&fieldSelector=involvedObject.name%3Dwatched-pod`, (evs) => evs.length >= 1);
  const w = await c.post(V1, {
    metadata: { name: 'watched' },
    eventTime: '2022-05-01T10:00:00.000000Z',
    reportingController: 'example.com/ctl',
    reportingInstance: 'i',
    action: 'A',
    reason: 'R',
    regarding: { kind: 'Pod', namespace: 'default', name: 'watched-pod' },
    type: 'Normal',
  });
  assert.equal(w.status, 201, w.raw.toString());
  const beta = (await betaWatch).events.find((e) => e.object.metadata.name === 'watched');
  assert.equal(beta.type, 'ADDED');
  assert.equal(beta.object.apiVersion, 'events.k8s.io/v1beta1');
  assert.deepEqual(beta.object.regarding, { kind: 'Pod', namespace: 'default', name: 'watched-pod' });
  assert.equal(beta.object.reportingController, 'example.com/ctl');
  const core = (await coreWatch).events;
  assert.deepEqual(core.map((e) => [e.type, e.object.apiVersion, e.object.metadata.name, e.object.involvedObject.name, e.object.reportingComponent]), [['ADDED', 'v1', 'watched', 'watched-pod', 'example.com/ctl']]);
});

test('core/v1 field selectors on list and watch: involvedObject.*, type, reason, source', async () => {
  const c = env.plinth.client;
  const mk = (name: string, pod: string, type: string) =>
    c.post(CORE, { metadata: { name }, involvedObject: { kind: 'Pod', namespace: 'default', name: pod }, reason: 'Sel', type, source: { component: 'sel-test' } });
  const rv = (await c.get(CORE)).body.metadata.resourceVersion;
  const watch = c.watch(`${CORE}?watch=1&resourceVersion=${rv}&fieldSelector=type%3DWarning,reason%3DSel`, (evs) => evs.length >= 2);
  for (const [n, p, t] of [['sel-a', 'pod-a', 'Normal'], ['sel-b', 'pod-a', 'Warning'], ['sel-c', 'pod-b', 'Warning']]) {
    assert.equal((await mk(n!, p!, t!)).status, 201);
  }
  const names = async (sel: string): Promise<string[]> => {
    const r = await c.get(`${CORE}?fieldSelector=${encodeURIComponent(sel)}`);
    assert.equal(r.status, 200, r.raw.toString());
    return r.body.items.map((i: Json) => i.metadata.name).sort();
  };
  assert.deepEqual(await names('involvedObject.name=pod-a'), ['sel-a', 'sel-b']);
  assert.deepEqual(await names('involvedObject.name=pod-a,type=Warning'), ['sel-b']);
  assert.deepEqual(await names('type=Warning,reason=Sel'), ['sel-b', 'sel-c']);
  assert.deepEqual(await names('source=sel-test,involvedObject.kind=Pod,involvedObject.name!=pod-a'), ['sel-c']);
  // source falls back to reportingComponent for events without a source.
  assert.deepEqual(await names('source=example.com/operator'), ['from-v1']);
  assert.deepEqual((await watch).events.map((e) => e.object.metadata.name), ['sel-b', 'sel-c']);
  const bad = await c.get(`${CORE}?fieldSelector=regarding.name%3Dpod-a`);
  assert.equal(bad.status, 400);
  assert.equal(bad.body.message, 'field label not supported: regarding.name');
});

test('validation per version: 422 with kube\'s causes; MicroTime must carry microseconds', async () => {
  const c = env.plinth.client;
  const strict = await c.post(V1, {
    metadata: { name: 'bad-v1' },
    eventTime: '2022-05-01T10:00:00.000000Z',
    reportingController: 'example.com/ctl',
    reportingInstance: 'i',
    action: 'A',
    reason: 'R',
    regarding: { namespace: 'default' },
    type: 'Info',
    deprecatedCount: 2,
  });
  assert.equal(strict.status, 422);
  assert.equal(strict.body.reason, 'Invalid');
  assert.deepEqual(strict.body.details.causes, [
    { reason: 'FieldValueInvalid', message: 'Invalid value: "": has invalid value: Info', field: 'type' },
    { reason: 'FieldValueInvalid', message: 'Invalid value: "": needs to be unset', field: 'count' },
  ]);
  assert.equal(strict.body.details.group, 'events.k8s.io');
  // The same body is fine through v1beta1 (legacy rules only).
  const beta = await c.post(V1BETA1, { ...strict.body.details && {}, metadata: { name: 'ok-beta' }, eventTime: '2022-05-01T10:00:00.000000Z', reportingController: 'example.com/ctl', reportingInstance: 'i', action: 'A', reason: 'R', regarding: { namespace: 'default' }, type: 'Info', deprecatedCount: 2 });
  assert.equal(beta.status, 201, beta.raw.toString());
  const legacy = await c.post(CORE, { metadata: { name: 'bad-core' }, involvedObject: { namespace: 'other' } });
  assert.equal(legacy.status, 422);
  assert.deepEqual(legacy.body.details.causes, [{ reason: 'FieldValueInvalid', message: 'Invalid value: "other": does not match event.namespace', field: 'involvedObject.namespace' }]);
  const micro = await c.post(V1, { metadata: { name: 'bad-time' }, eventTime: '2022-05-01T10:00:00Z' });
  assert.equal(micro.status, 400);
  assert.match(micro.body.message, /parsing time "2022-05-01T10:00:00Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "Z" as ".000000"/);
  // events.k8s.io/v1 updates: the event is immutable.
  const got = (await c.get(`${V1}/from-v1`)).body;
  const upd = await c.put(`${V1}/from-v1`, { ...got, note: 'changed' });
  assert.equal(upd.status, 422);
  assert.deepEqual(upd.body.details.causes, [{ reason: 'FieldValueInvalid', message: 'Invalid value: "changed": field is immutable', field: 'message' }]);
  const relabel = await c.put(`${V1}/from-v1`, { ...got, metadata: { ...got.metadata, labels: { seen: 'yes' } } });
  assert.equal(relabel.status, 200, relabel.raw.toString());
});

test('discovery: events.k8s.io prefers v1 and serves v1beta1; short name ev everywhere', async () => {
  const c = env.plinth.client;
  const group = await c.get('/apis/events.k8s.io');
  assert.deepEqual(group.body.versions.map((v: Json) => v.version), ['v1', 'v1beta1']);
  assert.equal(group.body.preferredVersion.version, 'v1');
  const groups = (await c.get('/apis')).body.groups.map((g: Json) => g.name);
  assert.ok(groups.indexOf('events.k8s.io') < groups.indexOf('authentication.k8s.io'));
  for (const path of ['/api/v1', '/apis/events.k8s.io/v1', '/apis/events.k8s.io/v1beta1']) {
    const ev = (await c.get(path)).body.resources.find((r: Json) => r.name === 'events');
    assert.deepEqual([ev.kind, ev.namespaced, ev.shortNames], ['Event', true, ['ev']], path);
  }
});

test('Protobuf: each version round trips, over the wire both ways', async () => {
  const c = env.plinth.client;
  for (const [path, apiVersion] of [[CORE, 'v1'], [V1, 'events.k8s.io/v1'], [V1BETA1, 'events.k8s.io/v1beta1']] as const) {
    const json = await c.get(`${path}/from-v1`);
    const pb = await c.get(`${path}/from-v1`, { headers: { accept: PB } });
    assert.equal(pb.status, 200);
    assert.equal(pb.headers['content-type'], PB);
    assert.deepEqual(decodeProtobuf(pb.raw), json.body, apiVersion);
    const name = `pb-${apiVersion.replace(/[./]/g, '-')}`;
    const body = { ...json.body, metadata: { name } };
    const created = await c.request('POST', path, { rawBody: encodeProtobuf(body), headers: { 'content-type': PB, accept: PB } });
    assert.equal(created.status, 201, created.raw.toString());
    const back = decodeProtobuf(created.raw) as Json;
    assert.equal(back.apiVersion, apiVersion);
    assert.deepEqual(fields(back), fields(json.body));
  }
});

test('kubectl get events and kubectl events show the event columns', async () => {
  const get = await kubectl('get', 'events', '-n', 'default', '--field-selector', 'involvedObject.name=web-1');
  assert.equal(get.code, 0, get.stderr);
  const lines = get.stdout.trimEnd().split('\n');
  assert.deepEqual(lines[0]!.split(/\s{2,}/), ['LAST SEEN', 'TYPE', 'REASON', 'OBJECT', 'MESSAGE']);
  assert.match(lines[1]!, /^\S+\s+Normal\s+Started\s+pod\/web-1\s+Started container web$/);
  const wide = await kubectl('get', 'ev', '-n', 'default', '-o', 'wide', '--field-selector', 'involvedObject.name=web-1');
  assert.equal(wide.code, 0, wide.stderr);
  const wl = wide.stdout.trimEnd().split('\n');
  assert.deepEqual(wl[0]!.split(/\s{2,}/), ['LAST SEEN', 'TYPE', 'REASON', 'OBJECT', 'SUBOBJECT', 'SOURCE', 'MESSAGE', 'FIRST SEEN', 'COUNT', 'NAME']);
  assert.match(wl[1]!, /Normal\s+Started\s+pod\/web-1\s+spec\.containers\{web\}\s+kubelet, node-1\s+Started container web\s+\S+\s+3\s+from-core$/);
  const viaV1 = await kubectl('get', 'events.v1.events.k8s.io', '-n', 'default', 'from-v1');
  assert.equal(viaV1.code, 0, viaV1.stderr);
  assert.match(viaV1.stdout.trimEnd().split('\n')[1]!, /Warning\s+ScaledUp\s+deployment\/web\s+scaled to 3$/);
  const beta = await kubectl('get', 'events.v1beta1.events.k8s.io', '-n', 'default', 'from-beta');
  assert.equal(beta.code, 0, beta.stderr);
  assert.match(beta.stderr, /Warning: events\.k8s\.io\/v1beta1 Event is deprecated in v1\.22\+, unavailable in v1\.25\+/);

  const events = await kubectl('events', '-n', 'default');
  assert.equal(events.code, 0, events.stderr);
  const el = events.stdout.trimEnd().split('\n');
  assert.deepEqual(el[0]!.split(/\s{2,}/), ['LAST SEEN', 'TYPE', 'REASON', 'OBJECT', 'MESSAGE']);
  assert.ok(el.some((l) => /Normal\s+Started\s+Pod\/web-1\s+Started container web$/.test(l)), events.stdout);
  // --for resolves the object and lists its events with involvedObject field selectors.
  const c = env.plinth.client;
  assert.equal((await c.post('/api/v1/namespaces/default/serviceaccounts', { metadata: { name: 'robot' } })).status, 201);
  assert.equal((await c.post(CORE, { metadata: { name: 'robot.1' }, involvedObject: { kind: 'ServiceAccount', namespace: 'default', name: 'robot', apiVersion: 'v1' }, reason: 'Rotated', message: 'token rotated', type: 'Normal' })).status, 201);
  const forSa = await kubectl('events', '-n', 'default', '--for', 'serviceaccount/robot');
  assert.equal(forSa.code, 0, forSa.stderr);
  const fl = forSa.stdout.trimEnd().split('\n');
  assert.equal(fl.length, 2, forSa.stdout);
  assert.match(fl[1]!, /Normal\s+Rotated\s+ServiceAccount\/robot\s+token rotated$/);
  const warnings = await kubectl('events', '-n', 'default', '--types', 'Warning');
  assert.equal(warnings.code, 0, warnings.stderr);
  assert.match(warnings.stdout, /ScaledUp\s+Deployment\/web\s+scaled to 3/);
  assert.doesNotMatch(warnings.stdout, /Started container web/);
});

test('a core/v1 Event whose name events.k8s.io/v1 would refuse on create can still be updated through v1', async () => {
  const c = env.plinth.client;
  // `a..b` is a valid core/v1 Event name (a path segment), not a DNS subdomain (events.k8s.io/v1's rule).
  const created = await c.post(CORE, { metadata: { name: 'a..b' }, involvedObject: { kind: 'Pod', namespace: 'default', name: 'p' }, reason: 'Odd', message: 'odd name', type: 'Normal' });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const viaV1 = (await c.get(`${V1}/a..b`)).body;
  const updated = await c.put(`${V1}/a..b`, { ...viaV1, metadata: { ...viaV1.metadata, labels: { seen: 'v1' } } });
  assert.equal(updated.status, 200, JSON.stringify(updated.body));
  assert.deepEqual((await c.get(`${CORE}/a..b`)).body.metadata.labels, { seen: 'v1' });
  // Creating such a name through v1 is still refused.
  const refused = await c.post(V1, { ...viaV1, metadata: { name: 'c..d' } });
  assert.equal(refused.status, 422);
});
