/**
 * ConfigMaps and coordination.k8s.io/v1 Leases against a real etcd over HTTPS: kubectl's create,
 * get, describe, the immutable flow and the 1 MiB limit; binaryData and MicroTime through JSON and
 * Protobuf; and a leader election between two processes of the official Python client.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { decodeProtobuf, encodeProtobuf } from '@plinth/apiserver';
import { REPO_ROOT, eventually, kubectlPath, tempDir, usePlinth } from './harness.js';

const env = usePlinth();
const PB = 'application/vnd.kubernetes.protobuf';
const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io';
const MiB = 1024 * 1024;
const NS = 'default';
const CM = `/api/v1/namespaces/${NS}/configmaps`;
const LEASES = `/apis/coordination.k8s.io/v1/namespaces/${NS}/leases`;

/** kubectl, asynchronously: plinth runs in this process, so a blocking spawn would starve it. */
function kubectl(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(kubectlPath(), ['--kubeconfig', env.plinth.server.kubeconfigPath, ...args], { encoding: 'utf8', timeout: 60_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

async function ok(...args: string[]): Promise<string> {
  const r = await kubectl(...args);
  assert.equal(r.code, 0, `kubectl ${args.join(' ')} failed:\n${r.stderr}`);
  return r.stdout;
}

async function fails(...args: string[]): Promise<string> {
  const r = await kubectl(...args);
  assert.notEqual(r.code, 0, `kubectl ${args.join(' ')} should have failed:\n${r.stdout}`);
  return r.stderr.trim();
}

describe('configmaps with kubectl', () => {
  it('create --from-literal --from-file (text and binary), get (NAME DATA AGE), describe', async () => {
    const dir = tempDir('plinth-cm-');
    writeFileSync(join(dir, 'app.conf'), 'line1\nline2\n');
    const blob = Buffer.from([0, 1, 2, 0xfe, 0xff, 0x80, 0x7f, 10]);
    writeFileSync(join(dir, 'blob.bin'), blob);
    assert.match(await ok('create', 'configmap', 'app', '--from-literal=mode=fast', '--from-literal=level=3', `--from-file=${join(dir, 'app.conf')}`, `--from-file=${join(dir, 'blob.bin')}`), /^configmap\/app created$/m);

    const cm = JSON.parse(await ok('get', 'cm', 'app', '-o', 'json'));
    assert.deepEqual(cm.data, { 'app.conf': 'line1\nline2\n', level: '3', mode: 'fast' });
    assert.deepEqual(cm.binaryData, { 'blob.bin': blob.toString('base64') }, 'non-UTF-8 files go to binaryData');

    const lines = (await ok('get', 'cm', 'app')).trimEnd().split('\n');
    assert.match(lines[0]!, /^NAME\s+DATA\s+AGE$/);
    assert.match(lines[1]!, /^app\s+4\s+\d+s$/, 'DATA counts data and binaryData entries');

    // kubectl's ConfigMap describer also searches the object's events (a field-selected list).
    const described = await ok('describe', 'cm', 'app');
    assert.match(described, /^Name:\s+app$/m);
    // kubectl prints the data keys in Go's map order, which varies from run to run.
    assert.match(described, /^Data\n====\n/m);
    assert.match(described, /^app\.conf:\n----\nline1\nline2\n/m);
    assert.match(described, /^mode:\n----\nfast\n/m);
    assert.match(described, /^BinaryData\n====\nblob\.bin: 8 bytes$/m);
    assert.match(described, /^Events:\s+<none>$/m);
  });

  it('kubectl describe lists an object\'s Events (a ServiceAccount with one)', async () => {
    const sa = await env.plinth.client.post(`/api/v1/namespaces/${NS}/serviceaccounts`, { metadata: { name: 'described' } });
    assert.equal(sa.status, 201, sa.raw.toString());
    const ev = await env.plinth.client.post(`/api/v1/namespaces/${NS}/events`, {
      metadata: { name: 'described.1' },
      involvedObject: { kind: 'ServiceAccount', apiVersion: 'v1', namespace: NS, name: 'described', uid: sa.body.metadata.uid },
      reason: 'Audited',
      message: 'looked at by the test',
      source: { component: 'auditor' },
      type: 'Warning',
      count: 1,
      firstTimestamp: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
      lastTimestamp: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
    });
    assert.equal(ev.status, 201, ev.raw.toString());
    // An Event about another object with the same name is not listed.
    await env.plinth.client.post(`/api/v1/namespaces/${NS}/events`, {
      metadata: { name: 'other.1' },
      involvedObject: { kind: 'Pod', apiVersion: 'v1', namespace: NS, name: 'described' },
      reason: 'Elsewhere',
      message: 'not about the ServiceAccount',
      type: 'Normal',
    });
    const described = await ok('describe', 'serviceaccount', 'described');
    assert.match(described, /^Name:\s+described$/m);
    assert.match(described, /^Events:\n\s+Type\s+Reason\s+Age\s+From\s+Message\n\s+----\s+------\s+----\s+----\s+-------\n\s+Warning\s+Audited\s+\S+\s+auditor\s+looked at by the test$/m);
    assert.doesNotMatch(described, /Elsewhere/);
  });

  it('the Table kube prints: Name, Data (an integer), Age', async () => {
    const r = await env.plinth.client.get(`${CM}/app`, { headers: { accept: TABLE } });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body.columnDefinitions.map((c: { name: string; type: string }) => [c.name, c.type]), [['Name', 'string'], ['Data', 'string'], ['Age', 'string']]);
    assert.deepEqual(r.body.rows[0].cells.slice(0, 2), ['app', 4]);
  });

  it('api-resources lists configmaps as cm and leases without a short name', async () => {
    const out = await ok('api-resources');
    assert.match(out, /^configmaps\s+cm\s+v1\s+true\s+ConfigMap$/m);
    assert.match(out, /^leases\s+coordination\.k8s\.io\/v1\s+true\s+Lease$/m);
  });

  it('immutable: data, binaryData and the flag itself are frozen; metadata is not', async () => {
    await ok('create', 'configmap', 'frozen', '--from-literal=a=1');
    await ok('patch', 'cm', 'frozen', '-p', '{"immutable":true}');
    const FORBIDDEN = 'Forbidden: field is immutable when `immutable` is set';
    assert.equal(await fails('patch', 'cm', 'frozen', '-p', '{"data":{"a":"2"}}'), `The ConfigMap "frozen" is invalid: data: ${FORBIDDEN}`);
    assert.equal(await fails('patch', 'cm', 'frozen', '-p', '{"binaryData":{"b":"AA=="}}'), `The ConfigMap "frozen" is invalid: binaryData: ${FORBIDDEN}`);
    assert.equal(await fails('patch', 'cm', 'frozen', '-p', '{"immutable":false}'), `The ConfigMap "frozen" is invalid: immutable: ${FORBIDDEN}`);
    await ok('label', 'cm', 'frozen', 'tier=config');

    const cur = (await env.plinth.client.get(`${CM}/frozen`)).body;
    const r = await env.plinth.client.put(`${CM}/frozen`, { ...cur, immutable: undefined, data: { a: '3' } });
    assert.equal(r.status, 422);
    assert.equal(r.body.reason, 'Invalid');
    assert.deepEqual(r.body.details.causes, [
      { reason: 'FieldValueForbidden', message: FORBIDDEN, field: 'immutable' },
      { reason: 'FieldValueForbidden', message: FORBIDDEN, field: 'data' },
    ]);
    const after = (await env.plinth.client.get(`${CM}/frozen`)).body;
    assert.deepEqual([after.immutable, after.data, after.metadata.labels], [true, { a: '1' }, { tier: 'config' }]);
    await ok('delete', 'cm', 'frozen');
  });

  it('1 MiB of values is the limit: one byte more is 422 on the whole object', async () => {
    const dir = tempDir('plinth-cm-big-');
    writeFileSync(join(dir, 'exact'), 'a'.repeat(MiB));
    writeFileSync(join(dir, 'over'), 'a'.repeat(MiB + 1));
    await ok('create', 'configmap', 'exact', `--from-file=${join(dir, 'exact')}`);
    assert.equal(await fails('create', 'configmap', 'over', `--from-file=${join(dir, 'over')}`), 'error: failed to create configmap: ConfigMap "over" is invalid: []: Too long: must have at most 1048576 bytes');
    // data and decoded binaryData count together
    const r = await env.plinth.client.post(CM, { metadata: { name: 'split' }, data: { a: 'x'.repeat(MiB / 2) }, binaryData: { b: Buffer.alloc(MiB / 2 + 1).toString('base64') } });
    assert.equal(r.status, 422);
    assert.equal(r.body.message, 'ConfigMap "split" is invalid: []: Too long: must have at most 1048576 bytes');
    assert.deepEqual(r.body.details.causes, [{ reason: 'FieldValueTooLong', message: 'Too long: must have at most 1048576 bytes', field: '[]' }]);
    assert.equal((await env.plinth.client.get(`${CM}/split`)).status, 404);
  });
});

describe('configmaps over the API', () => {
  it('each key rule is a 422 with its cause, and nothing is stored', async () => {
    const KEY = "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')";
    const cases: Array<[string, Record<string, unknown>, Array<{ reason: string; message: string; field: string }>]> = [
      ['slash', { data: { 'a/b': 'v' } }, [{ reason: 'FieldValueInvalid', message: `Invalid value: "a/b": ${KEY}`, field: 'data[a/b]' }]],
      ['dot', { binaryData: { '.': 'AA==' } }, [{ reason: 'FieldValueInvalid', message: `Invalid value: ".": must not be '.'`, field: 'binaryData[.]' }]],
      ['dotdot', { data: { '..x': 'v' } }, [{ reason: 'FieldValueInvalid', message: `Invalid value: "..x": must not start with '..'`, field: 'data[..x]' }]],
      ['long', { data: { ['k'.repeat(254)]: 'v' } }, [{ reason: 'FieldValueInvalid', message: `Invalid value: "${'k'.repeat(254)}": must be no more than 253 characters`, field: `data[${'k'.repeat(254)}]` }]],
      ['dup', { data: { same: 'v' }, binaryData: { same: 'AA==' } }, [{ reason: 'FieldValueInvalid', message: 'Invalid value: "same": duplicate of key present in binaryData', field: 'data[same]' }]],
    ];
    for (const [name, body, causes] of cases) {
      const r = await env.plinth.client.post(CM, { metadata: { name }, ...body });
      assert.equal(r.status, 422, name);
      assert.deepEqual(r.body.details, { name, kind: 'ConfigMap', causes }, name);
      assert.equal(r.body.message, `ConfigMap "${name}" is invalid: ${causes[0]!.field}: ${causes[0]!.message}`);
      assert.equal((await env.plinth.client.get(`${CM}/${name}`)).status, 404);
    }
    const badName = await env.plinth.client.post(CM, { metadata: { name: 'Upper' } });
    assert.equal(badName.status, 422);
    assert.equal(badName.body.details.causes[0].field, 'metadata.name');
  });

  it('binaryData round trips every byte value through JSON and Protobuf; bad base64 is 400', async () => {
    const all = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
    const created = await env.plinth.client.post(CM, { metadata: { name: 'bytes' }, data: { text: 'ünïcode ✓' }, binaryData: { all: all.toString('base64') } });
    assert.equal(created.status, 201);
    const json = (await env.plinth.client.get(`${CM}/bytes`)).body;
    assert.ok(Buffer.from(json.binaryData.all, 'base64').equals(all));
    assert.equal(json.data.text, 'ünïcode ✓');

    const pb = await env.plinth.client.get(`${CM}/bytes`, { headers: { accept: PB } });
    assert.equal(pb.headers['content-type'], PB);
    const decoded = decodeProtobuf(pb.raw) as { binaryData: Record<string, string>; data: Record<string, string> };
    assert.ok(Buffer.from(decoded.binaryData['all']!, 'base64').equals(all));
    assert.equal(decoded.data['text'], 'ünïcode ✓');

    // A Protobuf body with raw bytes, read back in JSON.
    const body = encodeProtobuf({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'bytes-pb' }, immutable: true, binaryData: { k: Buffer.from([0xff, 0]).toString('base64') } });
    const r = await env.plinth.client.request('POST', CM, { rawBody: body, headers: { 'content-type': PB, accept: PB } });
    assert.equal(r.status, 201, r.raw.toString());
    assert.deepEqual((decodeProtobuf(r.raw) as { binaryData: unknown }).binaryData, { k: '/wA=' });
    const back = (await env.plinth.client.get(`${CM}/bytes-pb`)).body;
    assert.deepEqual([back.immutable, back.binaryData], [true, { k: '/wA=' }]);

    const bad = await env.plinth.client.post(CM, { metadata: { name: 'bad64' }, binaryData: { a: 'YQ' } });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.reason, 'BadRequest');
    assert.match(bad.body.message, /illegal base64 data at input byte 0$/);
    assert.equal((await env.plinth.client.get(`${CM}/bad64`)).status, 404);
  });

  it('field selectors: metadata.name and metadata.namespace only, with kube\'s message', async () => {
    const r = await env.plinth.client.get(`${CM}?fieldSelector=metadata.name%3Dbytes`);
    assert.deepEqual(r.body.items.map((i: { metadata: { name: string } }) => i.metadata.name), ['bytes']);
    const bad = await env.plinth.client.get(`${CM}?fieldSelector=data.a%3Db`);
    assert.equal(bad.status, 400);
    assert.equal(bad.body.message, '"data.a" is not a known field selector: only "metadata.name", "metadata.namespace"');
  });
});

describe('leases', () => {
  const spec = { holderIdentity: 'node-a', leaseDurationSeconds: 40, acquireTime: '2026-01-02T03:04:05.123456Z', renewTime: '2026-01-02T05:04:06.000001+02:00', leaseTransitions: 0 };

  it('create, get and update in JSON; MicroTime stays microsecond-exact and is stored in UTC', async () => {
    const created = await env.plinth.client.post(LEASES, { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'json' }, spec });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.deepEqual(created.body.spec, { ...spec, renewTime: '2026-01-02T03:04:06.000001Z' });
    const got = (await env.plinth.client.get(`${LEASES}/json`)).body;
    assert.deepEqual(got.spec, created.body.spec);
    const renewed = await env.plinth.client.put(`${LEASES}/json`, { ...got, spec: { ...got.spec, holderIdentity: 'node-b', renewTime: '2026-01-02T03:05:00.500000Z', leaseTransitions: 1 } });
    assert.equal(renewed.status, 200);
    assert.deepEqual([renewed.body.spec.holderIdentity, renewed.body.spec.renewTime, renewed.body.spec.leaseTransitions], ['node-b', '2026-01-02T03:05:00.500000Z', 1]);
    // A stale resourceVersion loses, as a second candidate must.
    const stale = await env.plinth.client.put(`${LEASES}/json`, { ...got, spec: { ...got.spec, holderIdentity: 'node-c' } });
    assert.equal(stale.status, 409);
  });

  it('PUT creates a missing lease (kube allows create on update)', async () => {
    const r = await env.plinth.client.put(`${LEASES}/by-put`, { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'by-put' }, spec: { holderIdentity: '' } });
    assert.equal(r.status, 201);
    assert.deepEqual(r.body.spec, { holderIdentity: '' }, 'an empty *string is kept');
  });

  it('invalid specs are 422 with kube\'s causes; a MicroTime without six digits is 400', async () => {
    const r = await env.plinth.client.post(LEASES, { metadata: { name: 'bad' }, spec: { leaseDurationSeconds: 0, leaseTransitions: -1 } });
    assert.equal(r.status, 422);
    assert.equal(r.body.message, 'Lease.coordination.k8s.io "bad" is invalid: [spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0, spec.leaseTransitions: Invalid value: -1: must to greater or equal than 0]');
    assert.deepEqual(r.body.details, {
      name: 'bad',
      group: 'coordination.k8s.io',
      kind: 'Lease',
      causes: [
        { reason: 'FieldValueInvalid', message: 'Invalid value: 0: must be greater than 0', field: 'spec.leaseDurationSeconds' },
        { reason: 'FieldValueInvalid', message: 'Invalid value: -1: must to greater or equal than 0', field: 'spec.leaseTransitions' },
      ],
    });
    const t = await env.plinth.client.post(LEASES, { metadata: { name: 'bad-time' }, spec: { renewTime: '2026-01-02T03:04:05Z' } });
    assert.equal(t.status, 400);
    assert.match(t.body.message, /parsing time "2026-01-02T03:04:05Z" as "2006-01-02T15:04:05\.000000Z07:00": cannot parse "Z" as "\.000000"$/);
    assert.equal((await env.plinth.client.get(`${LEASES}/bad-time`)).status, 404);
  });

  it('create, get and update in Protobuf; MicroTime as seconds and nanos', async () => {
    const lease = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'pb' }, spec: { ...spec, renewTime: '2026-01-02T03:04:06.000001Z' } };
    const created = await env.plinth.client.request('POST', LEASES, { rawBody: encodeProtobuf(lease), headers: { 'content-type': PB, accept: PB } });
    assert.equal(created.status, 201, created.raw.toString());
    const obj = decodeProtobuf(created.raw) as typeof lease & { metadata: { resourceVersion: string } };
    assert.deepEqual(obj.spec, lease.spec);
    // The JSON view of what the Protobuf client wrote.
    assert.deepEqual((await env.plinth.client.get(`${LEASES}/pb`)).body.spec, lease.spec);

    const next = { ...obj, spec: { ...obj.spec, renewTime: '2026-01-02T03:04:16.654321Z', leaseTransitions: 2 } };
    const updated = await env.plinth.client.request('PUT', `${LEASES}/pb`, { rawBody: encodeProtobuf(next), headers: { 'content-type': PB, accept: PB } });
    assert.equal(updated.status, 200, updated.raw.toString());
    const got = await env.plinth.client.get(`${LEASES}/pb`, { headers: { accept: PB } });
    assert.deepEqual((decodeProtobuf(got.raw) as typeof lease).spec, next.spec);
    const list = decodeProtobuf((await env.plinth.client.get(LEASES, { headers: { accept: PB } })).raw) as { kind: string; items: Array<{ metadata: { name: string } }> };
    assert.equal(list.kind, 'LeaseList');
    assert.ok(list.items.some((i) => i.metadata.name === 'pb'));
  });

  it('kubectl apply --server-side of a Lease and a ConfigMap, then a merge patch of renewTime', async () => {
    const dir = tempDir('plinth-lease-apply-');
    const file = join(dir, 'objs.yaml');
    writeFileSync(
      file,
      'apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata:\n  name: applied\nspec:\n  holderIdentity: ctrl-0\n  leaseDurationSeconds: 15\n  renewTime: "2026-01-02T03:04:05.000000Z"\n' +
        '---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\ndata:\n  k: v\nbinaryData:\n  b: AAE=\n',
    );
    await ok('apply', '--server-side', '-f', file);
    await ok('patch', 'lease', 'applied', '--type=merge', '-p', '{"spec":{"renewTime":"2026-01-02T03:04:15.250000Z"}}');
    const lease = (await env.plinth.client.get(`${LEASES}/applied`)).body;
    assert.deepEqual(lease.spec, { holderIdentity: 'ctrl-0', leaseDurationSeconds: 15, renewTime: '2026-01-02T03:04:15.250000Z' });
    assert.deepEqual(lease.metadata.managedFields.map((m: { manager: string; operation: string }) => [m.manager, m.operation]), [['kubectl', 'Apply'], ['kubectl-patch', 'Update']]);
    const cm = (await env.plinth.client.get(`${CM}/applied`)).body;
    assert.deepEqual([cm.data, cm.binaryData], [{ k: 'v' }, { b: 'AAE=' }]);
  });

  it('kubectl get leases: NAME HOLDER AGE', async () => {
    const lines = (await ok('get', 'leases')).trimEnd().split('\n');
    assert.match(lines[0]!, /^NAME\s+HOLDER\s+AGE$/);
    assert.ok(lines.some((l) => /^json\s+node-b\s+\d+s$/.test(l)), lines.join('\n'));
    assert.ok(lines.some((l) => /^by-put\s+\d+s$/.test(l)), 'an empty holder prints as an empty cell');
  });

  it('kubectl describe lease: the generic describer with the spec and an Events section', async () => {
    const described = await ok('describe', 'lease', 'json');
    assert.match(described, /^Name:\s+json$/m);
    assert.match(described, /^API Version:\s+coordination\.k8s\.io\/v1$/m);
    assert.match(described, /^\s+Holder Identity:\s+node-b$/m);
    assert.match(described, /^\s+Renew Time:\s+2026-01-02T03:05:00\.500000Z$/m);
    assert.match(described, /^Events:\s+<none>$/m);
  });
});

/** One candidate: test/fixtures/leader_election.py under Debian's python (where python3-kubernetes lives). */
interface Candidate {
  id: string;
  child: ChildProcess;
  /** stdout and stderr as they arrived (for diagnostics and the module's log lines). */
  out(): string;
  /** stdout alone: `LEADING <id>` lines are not interleaved with the log on stderr. */
  stdout(): string;
}

function candidate(id: string, lock: 'configmap' | 'lease', name: string): Candidate {
  // The client writes the kubeconfig's CA to a temporary file that it removes only at a normal exit,
  // and candidates end with SIGKILL: TMPDIR puts it in a directory the harness removes.
  const child = spawn('/usr/bin/python3', [join(REPO_ROOT, 'test/fixtures/leader_election.py'), env.plinth.server.kubeconfigPath, id, lock, NS, name], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, TMPDIR: tempDir('plinth-py-') },
  });
  let out = '';
  let stdout = '';
  child.stdout!.on('data', (d: Buffer) => {
    out += d.toString();
    stdout += d.toString();
  });
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  return { id, child, out: () => out, stdout: () => stdout };
}

const leads = (c: Candidate): boolean => c.stdout().includes(`LEADING ${c.id}\n`);
const count = (text: string, needle: string): number => text.split(needle).length - 1;

async function election(lock: 'configmap' | 'lease', name: string, holderOf: () => Promise<string | undefined>): Promise<void> {
  const candidates = [candidate(`${name}-a`, lock, name), candidate(`${name}-b`, lock, name)];
  try {
    const leader = await eventually(async () => candidates.find(leads), 30_000, 'a leader');
    const follower = candidates.find((c) => c !== leader)!;
    // The follower has seen the lock held by the leader several times and not taken it.
    await eventually(async () => count(follower.out(), `lease held by ${leader.id} and has not expired`) >= 3, 30_000, `the follower to see ${leader.id} lead:\n${follower.out()}`);
    assert.ok(!leads(follower), `exactly one leader:\n${follower.out()}`);
    assert.equal(await holderOf(), leader.id);

    const exited = new Promise((r) => leader.child.once('exit', r));
    leader.child.kill('SIGKILL');
    await exited;
    // What the follower printed up to the deadline, not only up to the kill.
    await eventually(async () => leads(follower), 30_000, 'the follower to take over').catch((e: Error) => {
      throw new Error(`${e.message}; the follower printed:\n${follower.out()}\nthe leader printed:\n${leader.out()}`);
    });
    assert.equal(await holderOf(), follower.id);
  } finally {
    for (const c of candidates) if (c.child.exitCode === null && c.child.signalCode === null) c.child.kill('SIGKILL');
  }
}

describe('leader election with the official Python client (kubernetes.leaderelection)', () => {
  it('ConfigMapLock (the lock the 22.6 module ships): one leader, the other takes over after a SIGKILL', async () => {
    await election('configmap', 'py-cm', async () => {
      const cm = (await env.plinth.client.get(`${CM}/py-cm`)).body;
      const record = cm.metadata?.annotations?.['control-plane.alpha.kubernetes.io/leader'];
      return record ? (JSON.parse(record) as { holderIdentity?: string }).holderIdentity : undefined;
    });
  });

  it('the same election over a Lease: one leader, the other takes over after a SIGKILL', async () => {
    await election('lease', 'py-lease', async () => (await env.plinth.client.get(`${LEASES}/py-lease`)).body.spec?.holderIdentity);
  });
});
