/**
 * core/v1 PersistentVolumes on a real server (groups/core/persistentvolumes.ts): kube 1.24's
 * defaults, validation causes, update rules (immutable source, status isolation both ways), the
 * `status` sub-resource, kubectl's columns, field selectors and Protobuf.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { decodeProtobuf } from '@plinth/apiserver';
import { kubectlPath, usePlinth } from './harness.js';
import { causeFields, expectCode, expectStatus } from './assertions.js';

const env = usePlinth();
const PV = '/api/v1/persistentvolumes';

function kubectl(...args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(kubectlPath(), ['--kubeconfig', env.plinth.server.kubeconfigPath, ...args], { encoding: 'utf8', timeout: 60_000 }, (err, stdout, stderr) =>
      err ? reject(new Error(`kubectl ${args.join(' ')}: ${stderr}`)) : resolve(stdout),
    );
  });
}

const volume = (name: string, spec: Record<string, unknown> = {}): Record<string, unknown> => ({
  apiVersion: 'v1',
  kind: 'PersistentVolume',
  metadata: { name },
  spec: { capacity: { storage: '1.5Gi' }, accessModes: ['ReadWriteOnce', 'ReadOnlyMany'], hostPath: { path: '/data/' + name }, ...spec },
});

type Causes = Array<{ field: string; reason: string; message: string }>;

describe('persistentvolumes', () => {
  it('are served in discovery as kube serves them', async () => {
    const res = await env.plinth.client.get('/api/v1');
    expectCode(res, 200);
    const all = res.body.resources as Array<Record<string, unknown>>;
    const pv = all.find((x) => x['name'] === 'persistentvolumes');
    assert.ok(pv);
    assert.equal(pv['namespaced'], false);
    assert.deepEqual(pv['shortNames'], ['pv']);
    assert.deepEqual(pv['verbs'], ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch']);
    assert.deepEqual(all.find((x) => x['name'] === 'persistentvolumes/status')?.['verbs'], ['get', 'patch', 'update']);
  });

  it("get kube's defaults and a Pending phase whatever status the create carries", async () => {
    const created = await env.plinth.client.post(PV, { ...volume('pv1'), status: { phase: 'Bound', message: 'mine' } });
    expectCode(created, 201);
    assert.equal(created.body.spec.persistentVolumeReclaimPolicy, 'Retain');
    assert.equal(created.body.spec.volumeMode, 'Filesystem');
    assert.equal(created.body.spec.hostPath.type, '', "hostPath's type defaults to no check");
    assert.deepEqual(created.body.status, { phase: 'Pending' });
    const got = await env.plinth.client.get(`${PV}/pv1`);
    assert.deepEqual(got.body.status, { phase: 'Pending' });
  });

  it('store capacity in canonical quantities', async () => {
    const got = await env.plinth.client.get(`${PV}/pv1`);
    assert.deepEqual(got.body.spec.capacity, { storage: '1536Mi' });
    const milli = await env.plinth.client.post(PV, volume('pv-milli', { capacity: { storage: '2000m' } }));
    expectCode(milli, 201);
    assert.deepEqual(milli.body.spec.capacity, { storage: '2' });
  });

  it("refuse a bad volume with kube's causes in kube's order", async () => {
    const res = await env.plinth.client.post(PV, {
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name: 'bad', annotations: { 'volume.beta.kubernetes.io/mount-options': 'ro' } },
      spec: { accessModes: ['ReadWriteOncePod'], capacity: { storage: '1Gi', cpu: '1' }, persistentVolumeReclaimPolicy: 'Keep', hostPath: { path: '/x' }, nfs: { server: 'h', path: '/e' } },
    });
    expectStatus(res, 422, 'Invalid', /^PersistentVolume "bad" is invalid: \[/);
    const causes = res.body.details.causes as Causes;
    assert.deepEqual(
      causes.map((c) => [c.field, c.reason]),
      [
        ['spec.accessModes', 'FieldValueNotSupported'],
        ['spec.capacity', 'FieldValueNotSupported'],
        ['spec.persistentVolumeReclaimPolicy', 'FieldValueNotSupported'],
        ['spec.nfs', 'FieldValueForbidden'],
      ],
    );
    assert.equal(causes[0]!.message, 'Unsupported value: "ReadWriteOncePod": supported values: "ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce"');
    assert.equal(causes[3]!.message, 'Forbidden: may not specify more than 1 volume type');

    const none = await env.plinth.client.post(PV, { apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: 'empty' }, spec: {} });
    expectStatus(none, 422, 'Invalid');
    assert.deepEqual(causeFields(none), ['spec.accessModes', 'spec.capacity', 'spec.capacity', 'spec']);
    assert.equal((none.body.details.causes as Causes)[3]!.message, 'Required value: must specify a volume type');

    const plugin = await env.plinth.client.post(PV, { ...volume('opts'), metadata: { name: 'opts', annotations: { 'volume.beta.kubernetes.io/mount-options': 'ro' } } });
    expectStatus(plugin, 422, 'Invalid', 'PersistentVolume "opts" is invalid: metadata.annotations.volume.beta.kubernetes.io/mount-options: Forbidden: may not specify mount options for this volume type');
  });

  it('keep the volume source immutable and ignore status changes on the resource', async () => {
    const cur = (await env.plinth.client.get(`${PV}/pv1`)).body;
    const moved = structuredClone(cur);
    moved.spec.hostPath.path = '/elsewhere';
    const res = await env.plinth.client.put(`${PV}/pv1`, moved);
    expectStatus(res, 422, 'Invalid', /^PersistentVolume "pv1" is invalid: spec\.persistentvolumesource: Forbidden: spec\.persistentvolumesource is immutable after creation\n/);

    const mode = structuredClone(cur);
    mode.spec.volumeMode = 'Block';
    const modeRes = await env.plinth.client.put(`${PV}/pv1`, mode);
    expectStatus(modeRes, 422, 'Invalid', 'PersistentVolume "pv1" is invalid: volumeMode: Invalid value: "Block": field is immutable');

    const grown = structuredClone(cur);
    grown.spec.capacity = { storage: '2Gi' };
    grown.status = { phase: 'Released' };
    const ok = await env.plinth.client.put(`${PV}/pv1`, grown);
    expectCode(ok, 200);
    assert.deepEqual(ok.body.spec.capacity, { storage: '2Gi' }, 'capacity may change');
    assert.deepEqual(ok.body.status, { phase: 'Pending' }, 'the resource keeps the old status');
  });

  it('take status through /status only, which keeps the spec', async () => {
    const cur = (await env.plinth.client.get(`${PV}/pv1/status`)).body;
    assert.equal(cur.kind, 'PersistentVolume');
    const next = structuredClone(cur);
    next.status = { phase: 'Bound', reason: 'Mine' };
    next.spec.persistentVolumeReclaimPolicy = 'Delete';
    next.spec.claimRef = { namespace: 'default', name: 'claim1' };
    const res = await env.plinth.client.put(`${PV}/pv1/status`, next);
    expectCode(res, 200);
    assert.deepEqual(res.body.status, { phase: 'Bound', reason: 'Mine' });
    assert.equal(res.body.spec.persistentVolumeReclaimPolicy, 'Retain', '/status ignores the spec');
    assert.equal(res.body.spec.claimRef, undefined);

    const patched = await env.plinth.client.request('PATCH', `${PV}/pv1/status`, {
      headers: { 'content-type': 'application/merge-patch+json' },
      body: { status: { phase: 'Released' } },
    });
    expectCode(patched, 200);
    assert.equal(patched.body.status.phase, 'Released');
  });

  it("print kube's columns in kubectl get, VOLUMEMODE when wide", async () => {
    const claimed = (await env.plinth.client.get(`${PV}/pv-milli`)).body;
    claimed.spec.claimRef = { namespace: 'default', name: 'data' };
    claimed.spec.storageClassName = 'fast';
    expectCode(await env.plinth.client.put(`${PV}/pv-milli`, claimed), 200);
    const out = (await kubectl('get', 'pv')).trimEnd().split('\n');
    assert.match(out[0]!, /^NAME\s+CAPACITY\s+ACCESS MODES\s+RECLAIM POLICY\s+STATUS\s+CLAIM\s+STORAGECLASS\s+REASON\s+AGE$/);
    assert.match(out.find((l) => l.startsWith('pv1 '))!, /^pv1\s+2Gi\s+RWO,ROX\s+Retain\s+Released\s+Mine\s+\d+s$/);
    assert.match(out.find((l) => l.startsWith('pv-milli '))!, /^pv-milli\s+2\s+RWO,ROX\s+Retain\s+Pending\s+default\/data\s+fast\s+\d+s$/);
    const wide = (await kubectl('get', 'pv', 'pv1', '-o', 'wide')).trimEnd().split('\n');
    assert.match(wide[0]!, /\sAGE\s+VOLUMEMODE$/);
    assert.match(wide[1]!, /\sFilesystem$/);
  });

  it('select by metadata.name only, and answer in Protobuf', async () => {
    const byName = await env.plinth.client.get(`${PV}?fieldSelector=metadata.name%3Dpv1`);
    expectCode(byName, 200);
    assert.deepEqual(byName.body.items.map((i: { metadata: { name: string } }) => i.metadata.name), ['pv1']);
    const phase = await env.plinth.client.get(`${PV}?fieldSelector=status.phase%3DBound`);
    expectStatus(phase, 400, 'BadRequest', '"status.phase" is not a known field selector: only "metadata.name", "metadata.namespace"');

    const pb = await env.plinth.client.get(`${PV}/pv1`, { headers: { accept: 'application/vnd.kubernetes.protobuf' } });
    expectCode(pb, 200);
    const decoded = decodeProtobuf(pb.raw) as { kind: string; spec: { capacity: unknown; hostPath: unknown }; status: unknown };
    assert.equal(decoded.kind, 'PersistentVolume');
    assert.deepEqual(decoded.spec.capacity, { storage: '2Gi' });
    assert.deepEqual(decoded.spec.hostPath, { path: '/data/pv1', type: '' });
    assert.deepEqual(decoded.status, { phase: 'Released', reason: 'Mine' });
  });
});
