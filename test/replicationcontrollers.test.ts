/**
 * core/v1 ReplicationControllers on a real server: kube 1.24's defaults, generation, status
 * isolation, validation causes, the orphaning default on delete, field selectors, kubectl's
 * columns, Protobuf, and the generic `scale` sub-resource (get, update, every patch type, 422 and
 * 409, generation, admission kind) with `kubectl scale`.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { decodeProtobuf } from '@plinth/apiserver';
import { kubectlPath, usePlinth } from './harness.js';
import { causeFields, expectCode, expectStatus } from './assertions.js';

const env = usePlinth();
const NS = 'default';
const RC = `/api/v1/namespaces/${NS}/replicationcontrollers`;

function kubectl(...args: string[]): Promise<{ stdout: string; stderr: string; code: number }> {
  return new Promise((resolve) => {
    execFile(kubectlPath(), ['--kubeconfig', env.plinth.server.kubeconfigPath, ...args], { encoding: 'utf8', timeout: 60_000 }, (err, stdout, stderr) =>
      resolve({ stdout, stderr, code: err ? ((err as { code?: number }).code ?? 1) : 0 }),
    );
  });
}

const rc = (name: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  apiVersion: 'v1',
  kind: 'ReplicationController',
  metadata: { name },
  spec: {
    template: {
      metadata: { labels: { app: name } },
      spec: { containers: [{ name: 'web', image: 'nginx:1.25' }] },
    },
  },
  ...extra,
});

describe('replicationcontrollers', () => {
  it('are in discovery with rc, the all category, status and scale (autoscaling/v1 Scale)', async () => {
    const res = await env.plinth.client.get('/api/v1');
    const all = res.body.resources as Array<Record<string, unknown>>;
    const main = all.find((r) => r['name'] === 'replicationcontrollers')!;
    assert.deepEqual(main['shortNames'], ['rc']);
    assert.deepEqual(main['categories'], ['all']);
    const scale = all.find((r) => r['name'] === 'replicationcontrollers/scale')!;
    assert.deepEqual([scale['group'], scale['version'], scale['kind']], ['autoscaling', 'v1', 'Scale']);
    assert.deepEqual(scale['verbs'], ['get', 'patch', 'update']);
    assert.ok(all.some((r) => r['name'] === 'replicationcontrollers/status'));
  });

  it('default selector, labels and replicas, clear status on create and start at generation 1', async () => {
    const created = await env.plinth.client.post(RC, rc('web', { status: { replicas: 7 } }));
    expectCode(created, 201);
    assert.deepEqual(created.body.spec.selector, { app: 'web' });
    assert.deepEqual(created.body.metadata.labels, { app: 'web' });
    assert.equal(created.body.spec.replicas, 1);
    assert.deepEqual(created.body.status, { replicas: 0 });
    assert.equal(created.body.metadata.generation, 1);
    assert.equal(created.body.spec.template.spec.restartPolicy, 'Always', 'pod spec defaults apply to the template');
  });

  it('keep status on update, spec on /status, and bump generation for spec changes only', async () => {
    const cur = (await env.plinth.client.get(`${RC}/web`)).body;
    const withStatus = await env.plinth.client.put(`${RC}/web`, { ...cur, metadata: { ...cur.metadata, annotations: { a: 'b' } }, status: { replicas: 5 } });
    expectCode(withStatus, 200);
    assert.equal(withStatus.body.status.replicas, 0, 'status is ignored by the main resource');
    assert.equal(withStatus.body.metadata.generation, 1, 'metadata is no spec change');

    const status = await env.plinth.client.put(`${RC}/web/status`, { ...withStatus.body, spec: { ...withStatus.body.spec, replicas: 9 }, status: { replicas: 2, readyReplicas: 1 } });
    expectCode(status, 200);
    assert.equal(status.body.spec.replicas, 1, '/status ignores spec');
    assert.deepEqual(status.body.status, { replicas: 2, readyReplicas: 1 });

    const badStatus = await env.plinth.client.put(`${RC}/web/status`, { ...status.body, status: { replicas: 1, readyReplicas: 3 } });
    expectStatus(badStatus, 422, 'Invalid', 'ReplicationController "web" is invalid: status.readyReplicas: Invalid value: 3: cannot be greater than status.replicas');

    const spec = await env.plinth.client.request('PATCH', `${RC}/web`, { headers: { 'content-type': 'application/merge-patch+json' }, body: { spec: { minReadySeconds: 3 } } });
    expectCode(spec, 200);
    assert.equal(spec.body.metadata.generation, 2);
  });

  it("refuse a bad controller with kube's causes in kube's order", async () => {
    const bad = rc('bad', {
      spec: {
        replicas: -1,
        selector: { app: 'other' },
        template: { metadata: { labels: { app: 'bad' } }, spec: { restartPolicy: 'Never', containers: [{ name: 'web', image: 'nginx' }] } },
      },
    });
    const res = await env.plinth.client.post(RC, bad);
    expectStatus(res, 422, 'Invalid', /^ReplicationController "bad" is invalid: \[spec\.replicas: Invalid value: -1: must be greater than or equal to 0, spec\.template\.metadata\.labels: Invalid value: map\[string\]string\{"app":"bad"\}: `selector` does not match template `labels`, /);
    assert.deepEqual(causeFields(res), ['spec.replicas', 'spec.template.metadata.labels', 'spec.template.spec.restartPolicy']);
  });

  it('select by status.replicas and refuse other field labels', async () => {
    const two = await env.plinth.client.get(`${RC}?fieldSelector=status.replicas%3D2`);
    assert.deepEqual(two.body.items.map((i: { metadata: { name: string } }) => i.metadata.name), ['web']);
    const zero = await env.plinth.client.get(`${RC}?fieldSelector=status.replicas%3D0`);
    assert.deepEqual(zero.body.items, []);
    expectStatus(await env.plinth.client.get(`${RC}?fieldSelector=spec.replicas%3D1`), 400, 'BadRequest', 'field label not supported: spec.replicas');
  });

  it("print kube's columns, wide ones too, and round-trip Protobuf", async () => {
    const out = (await kubectl('get', 'rc', 'web', '-n', NS, '-o', 'wide')).stdout.trimEnd().split('\n');
    assert.match(out[0]!, /^NAME\s+DESIRED\s+CURRENT\s+READY\s+AGE\s+CONTAINERS\s+IMAGES\s+SELECTOR$/);
    assert.match(out[1]!, /^web\s+1\s+2\s+1\s+\S+\s+web\s+nginx:1\.25\s+app=web$/);
    const pb = await env.plinth.client.get(`${RC}/web`, { headers: { accept: 'application/vnd.kubernetes.protobuf' } });
    expectCode(pb, 200);
    const decoded = decodeProtobuf(pb.raw) as { kind: string; spec: { replicas: number; selector: Record<string, string> } };
    assert.equal(decoded.kind, 'ReplicationController');
    assert.deepEqual([decoded.spec.replicas, decoded.spec.selector], [1, { app: 'web' }]);
  });

  it('serve an autoscaling/v1 Scale of the controller', async () => {
    const res = await env.plinth.client.get(`${RC}/web/scale`);
    expectCode(res, 200);
    assert.equal(res.body.apiVersion, 'autoscaling/v1');
    assert.equal(res.body.kind, 'Scale');
    assert.deepEqual(res.body.spec, { replicas: 1 });
    assert.deepEqual(res.body.status, { replicas: 2, selector: 'app=web' });
    assert.equal(res.body.metadata.namespace, NS);
    expectStatus(await env.plinth.client.get(`${RC}/nope/scale`), 404, 'NotFound', 'replicationcontrollers/scale.autoscaling "nope" not found');
    const pb = await env.plinth.client.get(`${RC}/web/scale`, { headers: { accept: 'application/vnd.kubernetes.protobuf' } });
    expectCode(pb, 200);
    assert.equal((decodeProtobuf(pb.raw) as { kind: string }).kind, 'Scale');
  });

  it('scale through update and every patch type; the write bumps the generation', async () => {
    const cur = (await env.plinth.client.get(`${RC}/web/scale`)).body;
    const gen = (await env.plinth.client.get(`${RC}/web`)).body.metadata.generation as number;
    const put = await env.plinth.client.put(`${RC}/web/scale`, { ...cur, spec: { replicas: 2 } });
    expectCode(put, 200);
    assert.equal(put.body.spec.replicas, 2);
    const after = (await env.plinth.client.get(`${RC}/web`)).body;
    assert.equal(after.spec.replicas, 2);
    assert.equal(after.metadata.generation, gen + 1);

    const patch = (type: string, body: unknown, q = ''): ReturnType<typeof env.plinth.client.request> =>
      env.plinth.client.request('PATCH', `${RC}/web/scale${q}`, { headers: { 'content-type': type }, body });
    expectCode(await patch('application/merge-patch+json', { spec: { replicas: 3 } }), 200);
    expectCode(await patch('application/strategic-merge-patch+json', { spec: { replicas: 4 } }), 200);
    expectCode(await patch('application/json-patch+json', [{ op: 'replace', path: '/spec/replicas', value: 5 }]), 200);
    const applied = await patch('application/apply-patch+yaml', { apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name: 'web' }, spec: { replicas: 6 } }, '?fieldManager=scaler&force=true');
    expectCode(applied, 200);
    assert.equal(applied.body.spec.replicas, 6);
    const final = (await env.plinth.client.get(`${RC}/web`)).body;
    assert.equal(final.spec.replicas, 6);
    assert.equal(final.metadata.generation, gen + 5);
    const entry = (final.metadata.managedFields as Array<{ manager: string; subresource?: string; operation: string }>).find((m) => m.manager === 'scaler');
    assert.deepEqual([entry?.operation, entry?.subresource], ['Apply', 'scale']);
  });

  it('refuse negative replicas (422 on Scale) and a stale resourceVersion (409)', async () => {
    const cur = (await env.plinth.client.get(`${RC}/web/scale`)).body;
    const neg = await env.plinth.client.put(`${RC}/web/scale`, { ...cur, spec: { replicas: -1 } });
    expectStatus(neg, 422, 'Invalid', 'Scale.autoscaling "web" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0');
    assert.deepEqual(neg.body.details.causes, [{ reason: 'FieldValueInvalid', message: 'Invalid value: -1: must be greater than or equal to 0', field: 'spec.replicas' }]);
    const stale = await env.plinth.client.put(`${RC}/web/scale`, { ...cur, metadata: { ...cur.metadata, resourceVersion: '1' }, spec: { replicas: 1 } });
    expectStatus(stale, 409, 'Conflict', 'Operation cannot be fulfilled on replicationcontrollers "web": the object has been modified; please apply your changes to the latest version and try again');
  });

  it('scale with kubectl, and report a --current-replicas mismatch as kubectl does', async () => {
    const ok = await kubectl('scale', 'rc', 'web', '-n', NS, '--replicas=3');
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, /^replicationcontroller\/web scaled$/m);
    assert.equal((await env.plinth.client.get(`${RC}/web`)).body.spec.replicas, 3);
    const mismatch = await kubectl('scale', 'rc', 'web', '-n', NS, '--current-replicas=5', '--replicas=1');
    assert.notEqual(mismatch.code, 0);
    assert.match(mismatch.stderr, /Expected replicas to be 5, was 3/);
    assert.equal((await env.plinth.client.get(`${RC}/web`)).body.spec.replicas, 3);
  });

  it('orphan dependents by default on delete (the orphan finalizer)', async () => {
    const res = await env.plinth.client.delete(`${RC}/web`);
    expectCode(res, 200);
    assert.deepEqual(res.body.metadata.finalizers, ['orphan']);
    assert.ok(res.body.metadata.deletionTimestamp);
  });
});
