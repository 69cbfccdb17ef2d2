/**
 * The audit log (--audit-policy-file, --audit-log-*): audit.k8s.io/v1 events as kube-apiserver 1.24
 * writes them — levels, stages, rule matching, annotations, rotation — and the Audit-Id header.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { eventually, startInProcess, startProcess, startTestEtcd, tempDir, type InProcessPlinth, type TestClient, type TestEtcd } from './harness.js';

const POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
rules:
  - level: None
    users: ["quiet-user"]
  - level: None
    nonResourceURLs: ["/healthz*", "/readyz*", "/livez*"]
  - level: Metadata
    resources: [{group: "", resources: ["secrets"]}]
  - level: Request
    userGroups: ["request-group"]
    omitStages: ["RequestReceived"]
  - level: RequestResponse
    resources: [{group: "", resources: ["configmaps"], resourceNames: ["rr-cm"]}]
    omitManagedFields: true
  - level: None
    verbs: ["list"]
    namespaces: ["kube-public"]
  - level: Metadata
`;

const ADMIN = 'plinth-admin';
const RITA = 'rita-token-0123456789'; // in request-group and system:masters
const BOB = 'bob-token-0123456789'; // no roles at first
const QUIET = 'quiet-token-0123456789';

let etcd: TestEtcd;
let plinth: InProcessPlinth;
let logPath: string;
let c: TestClient;
let seq = 0;

/** A fresh audit ID to send, so each test finds its own events. */
const newID = (what: string): string => `test-${what}-${++seq}-${process.pid}`;

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- audit events are checked field by field
type Ev = any;

function readEvents(path = logPath): Ev[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

/** The events of one audit ID once its last stage (`last`) is written. */
async function eventsOf(id: string, last = 'ResponseComplete'): Promise<Ev[]> {
  return eventually(async () => {
    const evs = readEvents().filter((e) => e.auditID === id);
    return evs.some((e) => e.stage === last) ? evs : undefined;
  }, 10_000, `the audit events of ${id}`);
}

const MICRO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

before(async () => {
  etcd = await startTestEtcd();
  const dir = tempDir('plinth-audit-');
  logPath = join(dir, 'log', 'audit.log');
  writeFileSync(join(dir, 'policy.yaml'), POLICY);
  writeFileSync(join(dir, 'tokens.csv'), `${RITA},rita,2001,"request-group,system:masters"\n${BOB},bob,2002\n${QUIET},quiet-user,2003,"system:masters"\n`);
  plinth = await startInProcess({ etcd, args: [`--audit-policy-file=${join(dir, 'policy.yaml')}`, `--audit-log-path=${logPath}`, `--token-auth-file=${join(dir, 'tokens.csv')}`] });
  c = plinth.client;
});

after(async () => {
  await plinth?.stop();
  await etcd?.stop();
});

test('Metadata level: kube fields, both stages, no objects; a 404 keeps the client Audit-ID', async () => {
  const id = newID('meta');
  const r = await c.get('/api/v1/namespaces/default/configmaps/nope', { headers: { 'audit-id': id, 'user-agent': 'audit-test/1.0' } });
  assert.equal(r.status, 404);
  assert.equal(r.headers['audit-id'], id);
  const evs = await eventsOf(id);
  assert.deepEqual(evs.map((e) => e.stage), ['RequestReceived', 'ResponseComplete']);
  const [received, done] = evs;
  for (const e of evs) {
    assert.equal(e.kind, 'Event');
    assert.equal(e.apiVersion, 'audit.k8s.io/v1');
    assert.equal(e.level, 'Metadata');
    assert.equal(e.requestURI, '/api/v1/namespaces/default/configmaps/nope');
    assert.equal(e.verb, 'get');
    assert.equal(e.user.username, ADMIN);
    assert.ok(e.user.groups.includes('system:masters'));
    assert.deepEqual(e.sourceIPs, ['127.0.0.1']);
    assert.equal(e.userAgent, 'audit-test/1.0');
    assert.deepEqual(e.objectRef, { resource: 'configmaps', namespace: 'default', name: 'nope', apiVersion: 'v1' });
    assert.match(e.requestReceivedTimestamp, MICRO);
    assert.match(e.stageTimestamp, MICRO);
    assert.equal(e.requestObject, undefined);
    assert.equal(e.responseObject, undefined);
  }
  assert.equal(received.stageTimestamp, received.requestReceivedTimestamp);
  assert.equal(received.responseStatus, undefined);
  assert.equal(received.annotations, undefined);
  assert.deepEqual(done.responseStatus, { metadata: {}, status: 'Failure', message: 'configmaps "nope" not found', reason: 'NotFound', details: { name: 'nope', kind: 'configmaps' }, code: 404 });
  // system:masters is allowed by the privileged-group authorizer, which gives no reason.
  assert.deepEqual(done.annotations, { 'authorization.k8s.io/decision': 'allow', 'authorization.k8s.io/reason': '' });
  assert.ok(done.stageTimestamp >= done.requestReceivedTimestamp);
});

test('Audit-Id: a new UUID on every response when the client sends none, also on 401', async () => {
  const ok = await c.get('/api/v1/namespaces/default');
  assert.equal(ok.status, 200);
  assert.match(String(ok.headers['audit-id']), /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  const again = await c.get('/api/v1/namespaces/default');
  assert.notEqual(again.headers['audit-id'], ok.headers['audit-id']);
  const unauthorized = await c.get('/api/v1/namespaces', { token: 'not-a-token' });
  assert.equal(unauthorized.status, 401);
  assert.match(String(unauthorized.headers['audit-id']), /^[0-9a-f-]{36}$/);
  const evs = await eventsOf(String(unauthorized.headers['audit-id']), 'ResponseStarted');
  // kube's WithFailedAuthenticationAudit: one event, at ResponseStarted, with no user.
  assert.equal(evs.length, 1);
  assert.deepEqual(evs[0].user, {});
  assert.equal(evs[0].responseStatus.code, 401);
  assert.equal(evs[0].verb, 'list');
});

test('Request level (userGroups): the request object, no response object; the rule omits RequestReceived', async () => {
  const id = newID('request');
  const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'req-cm' }, data: { greeting: 'hello' } };
  assert.equal((await c.post('/api/v1/namespaces/default/configmaps', cm, { token: RITA, headers: { 'audit-id': id } })).status, 201);
  const evs = await eventsOf(id);
  assert.deepEqual(evs.map((e) => e.stage), ['ResponseComplete']);
  const e = evs[0];
  assert.equal(e.level, 'Request');
  assert.equal(e.verb, 'create');
  assert.equal(e.user.username, 'rita');
  // The object names the event's object when the URL does not.
  assert.deepEqual(e.objectRef, { resource: 'configmaps', namespace: 'default', name: 'req-cm', apiVersion: 'v1' });
  assert.deepEqual(e.requestObject.data, { greeting: 'hello' });
  assert.equal(e.requestObject.metadata.name, 'req-cm');
  assert.equal(e.responseObject, undefined);
  assert.deepEqual(e.responseStatus, { metadata: {}, code: 201 });
});

test('RequestResponse level (resources + resourceNames): request and response objects; other names fall through', async () => {
  assert.equal((await c.post('/api/v1/namespaces/default/configmaps', { metadata: { name: 'rr-cm' }, data: { a: '1' } })).status, 201);
  const getID = newID('rr-get');
  assert.equal((await c.get('/api/v1/namespaces/default/configmaps/rr-cm', { headers: { 'audit-id': getID } })).status, 200);
  const got = (await eventsOf(getID)).find((e) => e.stage === 'ResponseComplete');
  assert.equal(got.level, 'RequestResponse');
  assert.equal(got.responseObject.kind, 'ConfigMap');
  assert.deepEqual(got.responseObject.data, { a: '1' });
  // The rule's omitManagedFields drops them from the logged objects (the response still has them).
  assert.equal(got.responseObject.metadata.managedFields, undefined);
  assert.equal(got.responseObject.metadata.name, 'rr-cm');
  assert.equal(got.requestObject, undefined);

  const patchID = newID('rr-patch');
  const patched = await c.request('PATCH', '/api/v1/namespaces/default/configmaps/rr-cm', { body: { data: { b: '2' } }, headers: { 'content-type': 'application/merge-patch+json', 'audit-id': patchID } });
  assert.equal(patched.status, 200);
  const p = (await eventsOf(patchID)).find((e) => e.stage === 'ResponseComplete');
  assert.equal(p.verb, 'patch');
  // kube's LogRequestPatch: the patch itself is the request object.
  assert.deepEqual(p.requestObject, { data: { b: '2' } });
  assert.deepEqual(p.responseObject.data, { a: '1', b: '2' });

  const otherID = newID('rr-other');
  await c.get('/api/v1/namespaces/default/configmaps/req-cm', { headers: { 'audit-id': otherID } });
  const other = (await eventsOf(otherID)).find((e) => e.stage === 'ResponseComplete');
  assert.equal(other.level, 'Metadata');
  assert.equal(other.responseObject, undefined);
});

test('None: by user, by non-resource URL, by verb + namespace; first match wins', async () => {
  const quietID = newID('quiet-user');
  const healthID = newID('healthz');
  const listID = newID('list-public');
  const getPublicID = newID('get-public');
  await c.get('/api/v1/namespaces/default/configmaps', { token: QUIET, headers: { 'audit-id': quietID } });
  await c.get('/healthz', { headers: { 'audit-id': healthID } });
  await c.get('/api/v1/namespaces/kube-public/configmaps', { headers: { 'audit-id': listID } });
  await c.get('/api/v1/namespaces/kube-public/configmaps/nothing', { headers: { 'audit-id': getPublicID } });
  // A later request's events are written after these would have been.
  const get = (await eventsOf(getPublicID)).find((e) => e.stage === 'ResponseComplete');
  assert.equal(get.level, 'Metadata');
  const ids = new Set(readEvents().map((e) => e.auditID));
  for (const id of [quietID, healthID, listID]) assert.ok(!ids.has(id), `${id} was audited`);
});

test("Secrets at Metadata level: no data anywhere in the log, even for a user whose group rule logs requests", async () => {
  const id = newID('secret');
  const secretValue = Buffer.from('hunter2-very-secret').toString('base64');
  const r = await c.post('/api/v1/namespaces/default/secrets', { metadata: { name: 'audit-secret' }, data: { password: secretValue } }, { token: RITA, headers: { 'audit-id': id } });
  assert.equal(r.status, 201);
  const getID = newID('secret-get');
  assert.equal((await c.get('/api/v1/namespaces/default/secrets/audit-secret', { headers: { 'audit-id': getID } })).status, 200);
  const evs = [...(await eventsOf(id)), ...(await eventsOf(getID))];
  for (const e of evs) {
    assert.equal(e.level, 'Metadata');
    assert.equal(e.requestObject, undefined);
    assert.equal(e.responseObject, undefined);
  }
  assert.equal(evs.find((e) => e.auditID === id && e.stage === 'ResponseComplete').objectRef.name, 'audit-secret');
  assert.ok(!readFileSync(logPath, 'utf8').includes(secretValue));
  assert.ok(!readFileSync(logPath, 'utf8').includes('hunter2'));
});

test('a watch gives RequestReceived, ResponseStarted and ResponseComplete', async () => {
  const id = newID('watch');
  const r = await c.get('/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=1', { headers: { 'audit-id': id } });
  assert.equal(r.status, 200);
  const evs = await eventsOf(id);
  assert.deepEqual(evs.map((e) => e.stage), ['RequestReceived', 'ResponseStarted', 'ResponseComplete']);
  assert.equal(evs[0].verb, 'watch');
  assert.deepEqual(evs[1].responseStatus, { metadata: {}, code: 200 });
  assert.deepEqual(evs[2].responseStatus, { metadata: {}, code: 200 });
  assert.ok(evs[2].stageTimestamp >= evs[1].stageTimestamp);
});

test('authorization annotations: forbid on 403; RBAC names the binding that allowed', async () => {
  const id = newID('forbid');
  const r = await c.get('/api/v1/namespaces/default/configmaps', { token: BOB, headers: { 'audit-id': id } });
  assert.equal(r.status, 403);
  const e = (await eventsOf(id)).find((x) => x.stage === 'ResponseComplete');
  assert.equal(e.annotations['authorization.k8s.io/decision'], 'forbid');
  assert.equal(typeof e.annotations['authorization.k8s.io/reason'], 'string');
  assert.equal(e.responseStatus.code, 403);
  assert.equal(e.responseStatus.reason, 'Forbidden');

  const rbac = '/apis/rbac.authorization.k8s.io/v1';
  assert.equal((await c.post(`${rbac}/clusterroles`, { metadata: { name: 'audit-cm-reader' }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['list'] }] })).status, 201);
  assert.equal((await c.post(`${rbac}/clusterrolebindings`, { metadata: { name: 'bob-reads-cms' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'audit-cm-reader' }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'bob' }] })).status, 201);
  const allowedID = await eventually(async () => {
    const aid = newID('allow');
    return (await c.get('/api/v1/namespaces/default/configmaps', { token: BOB, headers: { 'audit-id': aid } })).status === 200 ? aid : undefined;
  }, 10_000, "bob's binding to take effect");
  const allowed = (await eventsOf(allowedID)).find((x) => x.stage === 'ResponseComplete');
  assert.deepEqual(allowed.annotations, {
    'authorization.k8s.io/decision': 'allow',
    'authorization.k8s.io/reason': 'RBAC: allowed by ClusterRoleBinding "bob-reads-cms" of ClusterRole "audit-cm-reader" to User "bob"',
  });
});

test('a deprecated version (events.k8s.io/v1beta1) is annotated k8s.io/deprecated and k8s.io/removed-release; v1 is not', async () => {
  const oldID = newID('v1beta1');
  const newerID = newID('v1');
  assert.equal((await c.get('/apis/events.k8s.io/v1beta1/namespaces/default/events', { headers: { 'audit-id': oldID } })).status, 200);
  assert.equal((await c.get('/apis/events.k8s.io/v1/namespaces/default/events', { headers: { 'audit-id': newerID } })).status, 200);
  const old = (await eventsOf(oldID)).find((e) => e.stage === 'ResponseComplete');
  assert.equal(old.annotations['k8s.io/deprecated'], 'true');
  assert.equal(old.annotations['k8s.io/removed-release'], '1.25');
  assert.deepEqual(old.objectRef, { resource: 'events', namespace: 'default', apiGroup: 'events.k8s.io', apiVersion: 'v1beta1' });
  const newer = (await eventsOf(newerID)).find((e) => e.stage === 'ResponseComplete');
  assert.equal(newer.annotations['k8s.io/deprecated'], undefined);
  assert.equal(newer.annotations['k8s.io/removed-release'], undefined);
});

test('impersonation: the event keeps the authenticated user and records the impersonated one; X-Forwarded-For leads sourceIPs', async () => {
  const id = newID('impersonate');
  const r = await c.get('/api/v1/namespaces/default/configmaps', { headers: { 'audit-id': id, 'impersonate-user': 'alice', 'impersonate-group': 'devs', 'x-forwarded-for': '10.0.0.1, 10.0.0.2' } });
  assert.equal(r.status, 403);
  const evs = await eventsOf(id);
  assert.equal(evs[0].impersonatedUser, undefined, 'RequestReceived is before impersonation');
  const done = evs.find((e) => e.stage === 'ResponseComplete');
  assert.equal(done.user.username, ADMIN);
  assert.deepEqual(done.impersonatedUser, { username: 'alice', groups: ['devs', 'system:authenticated'] });
  assert.deepEqual(done.sourceIPs, ['10.0.0.1', '10.0.0.2', '127.0.0.1']);
  assert.equal(done.annotations['authorization.k8s.io/decision'], 'forbid');
});

test('rotation by size keeps --audit-log-maxbackup backups, named as lumberjack names them', async () => {
  const dir = tempDir('plinth-audit-rotate-');
  const path = join(dir, 'audit.log');
  writeFileSync(join(dir, 'policy.yaml'), 'apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n- level: RequestResponse\n  resources: [{group: "", resources: [configmaps]}]\n');
  const p = await startInProcess({ etcd, args: [`--audit-policy-file=${join(dir, 'policy.yaml')}`, `--audit-log-path=${path}`, '--audit-log-maxsize=1', '--audit-log-maxbackup=1'] });
  try {
    // Each create logs the object twice (request and response): ~400 KB an event, ~2.4 MB in all.
    const big = 'x'.repeat(200 * 1024);
    for (let i = 0; i < 6; i++) assert.equal((await p.client.post('/api/v1/namespaces/default/configmaps', { metadata: { name: `big-${i}` }, data: { big } }, { headers: { 'audit-id': `rotate-${i}` } })).status, 201);
    const backupRE = /^audit-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}\.\d{3}\.log$/;
    await eventually(async () => readFileSync(path, 'utf8').includes('"auditID":"rotate-5"'), 10_000, 'the last event');
    const backups = await eventually(async () => {
      const b = readdirSync(dir).filter((f) => backupRE.test(f));
      return b.length === 1 ? b : undefined;
    }, 10_000, 'exactly one backup');
    for (const f of [...backups, 'audit.log']) {
      assert.ok(statSync(join(dir, f)).size <= 1024 * 1024, `${f} is over 1 MiB`);
      for (const line of readFileSync(join(dir, f), 'utf8').split('\n').filter(Boolean)) {
        const e = JSON.parse(line);
        assert.equal(e.kind, 'Event');
        // Without omitManagedFields the objects are logged whole.
        assert.ok(Array.isArray(e.responseObject.metadata.managedFields));
        assert.equal(e.requestObject.data.big.length, big.length);
      }
    }
  } finally {
    await p.stop();
  }
});

test('a log that cannot be written never stops requests; without a policy there are no events but still an Audit-Id', async () => {
  if (existsSync('/dev/full')) {
    const dir = tempDir('plinth-audit-full-');
    writeFileSync(join(dir, 'policy.yaml'), 'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: RequestResponse\n');
    const p = await startInProcess({ etcd, args: [`--audit-policy-file=${join(dir, 'policy.yaml')}`, '--audit-log-path=/dev/full'] });
    try {
      for (let i = 0; i < 20; i++) {
        assert.equal((await p.client.post('/api/v1/namespaces/default/configmaps', { metadata: { generateName: 'full-' }, data: { k: 'v' } })).status, 201);
        assert.equal((await p.client.get('/api/v1/namespaces/default/configmaps?limit=1')).status, 200);
      }
    } finally {
      await p.stop();
    }
  }
  const plain = await startInProcess({ etcd });
  try {
    const r = await plain.client.get('/api/v1/namespaces/default/configmaps/none', { headers: { 'audit-id': 'no-policy-id' } });
    assert.equal(r.status, 404);
    assert.equal(r.headers['audit-id'], 'no-policy-id');
    const u = await plain.client.get('/api/v1/namespaces', { token: 'bad' });
    assert.equal(u.status, 401);
    assert.match(String(u.headers['audit-id']), /^[0-9a-f-]{36}$/);
  } finally {
    await plain.stop();
  }
});

test('the executable: --audit-log-path=- writes JSON lines to stdout; a bad policy or format fails start', async () => {
  const dir = tempDir('plinth-audit-exe-');
  writeFileSync(join(dir, 'policy.yaml'), 'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: None\n  nonResourceURLs: ["/readyz"]\n- level: Metadata\n');
  const p = await startProcess(join(dir, 'data'), [`--audit-policy-file=${join(dir, 'policy.yaml')}`, '--audit-log-path=-', `--etcd-servers=${etcd.endpoint}`]);
  try {
    assert.equal((await p.client.get('/api/v1/namespaces/default', { headers: { 'audit-id': 'stdout-id' } })).status, 200);
    const lines = await eventually(async () => {
      const l = p
        .output()
        .split('\n')
        .filter((x) => x.includes('"auditID":"stdout-id"'));
      return l.length === 2 ? l : undefined;
    }, 10_000, 'two events on stdout');
    assert.deepEqual(lines.map((l) => JSON.parse(l).stage), ['RequestReceived', 'ResponseComplete']);
  } finally {
    await p.stop();
  }

  writeFileSync(join(dir, 'bad.yaml'), 'apiVersion: audit.k8s.io/v1beta1\nkind: Policy\nrules:\n- level: Metadata\n');
  await assert.rejects(startProcess(join(dir, 'data2'), [`--audit-policy-file=${join(dir, 'bad.yaml')}`, `--etcd-servers=${etcd.endpoint}`]), (e: Error) => {
    assert.match(e.message, /plinth exited with [1-9]/);
    assert.match(e.message, /Error: loading audit policy file: failed decoding: no kind "Policy" is registered for version "audit.k8s.io\/v1beta1"/);
    return true;
  });
  writeFileSync(join(dir, 'bad2.yaml'), 'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Everything\n');
  await assert.rejects(startProcess(join(dir, 'data3'), [`--audit-policy-file=${join(dir, 'bad2.yaml')}`, `--etcd-servers=${etcd.endpoint}`]), /rules\[0\]\.level: Unsupported value: "Everything"/);
  await assert.rejects(startProcess(join(dir, 'data4'), ['--audit-log-path=-', '--audit-log-format=xml', `--etcd-servers=${etcd.endpoint}`]), (e: Error) => {
    assert.match(e.message, /plinth exited with [1-9]/);
    assert.match(e.message, /invalid audit log format xml, allowed formats are "legacy,json"/);
    return true;
  });
});
