/**
 * core/v1 PersistentVolumeClaims on a real server (groups/core/persistentvolumeclaims.ts): kube
 * 1.24's defaults, data source rules, validation causes, the immutable spec and the resize of a
 * bound claim, status isolation both ways, kubectl's columns, field selectors, Protobuf, and a
 * claim made with @kubernetes/client-node.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { decodeProtobuf } from '@plinth/apiserver';
import { kubectlPath, usePlinth } from './harness.js';
import { causeFields, expectCode, expectStatus } from './assertions.js';

const env = usePlinth();
const NS = 'default';
const PVC = `/api/v1/namespaces/${NS}/persistentvolumeclaims`;

function kubectl(...args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(kubectlPath(), ['--kubeconfig', env.plinth.server.kubeconfigPath, ...args], { encoding: 'utf8', timeout: 60_000 }, (err, stdout, stderr) =>
      err ? reject(new Error(`kubectl ${args.join(' ')}: ${stderr}`)) : resolve(stdout),
    );
  });
}

const claim = (name: string, spec: Record<string, unknown> = {}): Record<string, unknown> => ({
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  metadata: { name },
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '0.5Gi' } }, ...spec },
});

type Causes = Array<{ field: string; reason: string; message: string }>;

describe('persistentvolumeclaims', () => {
  it('are served in discovery as kube serves them', async () => {
    const res = await env.plinth.client.get('/api/v1');
    const all = res.body.resources as Array<Record<string, unknown>>;
    const pvc = all.find((x) => x['name'] === 'persistentvolumeclaims');
    assert.ok(pvc);
    assert.equal(pvc['namespaced'], true);
    assert.deepEqual(pvc['shortNames'], ['pvc']);
    assert.deepEqual(pvc['verbs'], ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch']);
    assert.deepEqual(all.find((x) => x['name'] === 'persistentvolumeclaims/status')?.['verbs'], ['get', 'patch', 'update']);
  });

  it("get kube's defaults, a Pending phase and kube's data source rules", async () => {
    // PersistentVolumeClaimResize lets a bound claim grow only through a class that allows expansion.
    const sc = { apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name: 'expandable' }, provisioner: 'example.com/x', allowVolumeExpansion: true };
    expectCode(await env.plinth.client.post('/apis/storage.k8s.io/v1/storageclasses', sc), 201);
    const created = await env.plinth.client.post(PVC, { ...claim('data', { storageClassName: 'expandable' }), status: { phase: 'Bound', capacity: { storage: '9Gi' } } });
    expectCode(created, 201);
    assert.equal(created.body.spec.volumeMode, 'Filesystem');
    assert.deepEqual(created.body.status, { phase: 'Pending' });

    const fromClaim = await env.plinth.client.post(PVC, claim('clone', { dataSource: { kind: 'PersistentVolumeClaim', name: 'data' } }));
    expectCode(fromClaim, 201);
    assert.deepEqual(fromClaim.body.spec.dataSourceRef, { kind: 'PersistentVolumeClaim', name: 'data' }, 'dataSource is mirrored into dataSourceRef');
    const other = await env.plinth.client.post(PVC, claim('populated', { dataSource: { apiGroup: 'x.example.com', kind: 'Seed', name: 's' } }));
    expectCode(other, 201);
    assert.equal(other.body.spec.dataSource, undefined, 'a dataSource of another kind is dropped');
    assert.equal(other.body.spec.dataSourceRef, undefined);
    const viaRef = await env.plinth.client.post(PVC, claim('populated2', { dataSourceRef: { apiGroup: 'x.example.com', kind: 'Seed', name: 's' } }));
    expectCode(viaRef, 201);
    assert.deepEqual(viaRef.body.spec.dataSource, { apiGroup: 'x.example.com', kind: 'Seed', name: 's' }, 'dataSourceRef is mirrored into dataSource');
  });

  it('store requests in canonical quantities', async () => {
    const got = await env.plinth.client.get(`${PVC}/data`);
    assert.deepEqual(got.body.spec.resources.requests, { storage: '512Mi' });
  });

  it("refuse a bad claim with kube's causes in kube's order", async () => {
    const res = await env.plinth.client.post(PVC, {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: 'bad' },
      spec: { storageClassName: 'Fast!', volumeMode: 'Raw', resources: { requests: { storage: '0' } }, dataSource: { kind: 'PersistentVolumeClaim' } },
    });
    expectStatus(res, 422, 'Invalid', /^PersistentVolumeClaim "bad" is invalid: \[spec\.accessModes: Required value: at least 1 access mode is required, /);
    const causes = res.body.details.causes as Causes;
    assert.deepEqual(causeFields(res), ['spec.accessModes', 'spec.resources[storage]', 'spec.storageClassName', 'spec.volumeMode', 'spec.dataSource.name', 'spec.dataSourceRef.name']);
    assert.equal(causes[1]!.message, 'Invalid value: "0": must be greater than zero');
    assert.equal(causes[3]!.message, 'Unsupported value: "Raw": supported values: "Block", "Filesystem"');
  });

  it('keep the spec immutable but for a bound claim growing its request', async () => {
    const cur = (await env.plinth.client.get(`${PVC}/data`)).body;
    const modes = structuredClone(cur);
    modes.spec.accessModes = ['ReadWriteMany'];
    const res = await env.plinth.client.put(`${PVC}/data`, modes);
    expectStatus(res, 422, 'Invalid', /^PersistentVolumeClaim "data" is invalid: spec: Forbidden: spec is immutable after creation except resources\.requests for bound claims\n/);
    assert.deepEqual(causeFields(res), ['spec']);

    const unboundResize = structuredClone(cur);
    unboundResize.spec.resources.requests.storage = '1Gi';
    expectStatus(await env.plinth.client.put(`${PVC}/data`, unboundResize), 422, 'Invalid', /spec is immutable after creation except resources\.requests for bound claims/);

    // The volume name may be set once (kube's binder does it), and labels change freely.
    const named = structuredClone(cur);
    named.spec.volumeName = 'pv-data';
    named.metadata.labels = { app: 'db' };
    const bound = await env.plinth.client.put(`${PVC}/data`, named);
    expectCode(bound, 200);
    assert.equal(bound.body.spec.volumeName, 'pv-data');

    // Bind it through /status, as kube's controller would.
    const st = structuredClone(bound.body);
    st.status = { phase: 'Bound', accessModes: ['ReadWriteOnce'], capacity: { storage: '1Gi' } };
    expectCode(await env.plinth.client.put(`${PVC}/data/status`, st), 200);

    const grow = (await env.plinth.client.get(`${PVC}/data`)).body;
    grow.spec.resources.requests.storage = '2Gi';
    const grown = await env.plinth.client.put(`${PVC}/data`, grow);
    expectCode(grown, 200);
    assert.equal(grown.body.spec.resources.requests.storage, '2Gi');
    assert.equal(grown.body.status.phase, 'Bound');

    const shrink = structuredClone(grown.body);
    shrink.spec.resources.requests.storage = '1Gi';
    const shrunk = await env.plinth.client.put(`${PVC}/data`, shrink);
    expectStatus(shrunk, 422, 'Invalid', 'PersistentVolumeClaim "data" is invalid: spec.resources.requests.storage: Forbidden: field can not be less than previous value');
  });

  it('ignore status on the resource and spec on /status', async () => {
    const cur = (await env.plinth.client.get(`${PVC}/data`)).body;
    const next = structuredClone(cur);
    next.status.phase = 'Lost';
    const res = await env.plinth.client.put(`${PVC}/data`, next);
    expectCode(res, 200);
    assert.equal(res.body.status.phase, 'Bound');

    const st = structuredClone(res.body);
    st.spec.storageClassName = 'other';
    st.status.allocatedResources = { storage: '2Gi' };
    st.status.conditions = [{ type: 'Resizing', status: 'True' }];
    const sres = await env.plinth.client.put(`${PVC}/data/status`, st);
    expectCode(sres, 200);
    assert.equal(sres.body.spec.storageClassName, 'expandable', '/status keeps the spec');
    assert.equal(sres.body.status.allocatedResources, undefined, 'RecoverVolumeExpansionFailure is off in 1.24');
    assert.deepEqual(sres.body.status.conditions, [{ type: 'Resizing', status: 'True' }]);

    const noModes = structuredClone(sres.body);
    noModes.status.capacity = { storage: '-1' };
    const bad = await env.plinth.client.put(`${PVC}/data/status`, noModes);
    expectStatus(bad, 422, 'Invalid', 'PersistentVolumeClaim "data" is invalid: status.capacity[storage]: Invalid value: -1: must be a valid resource quantity');
  });

  it("print kube's columns in kubectl get, VOLUMEMODE when wide", async () => {
    const out = (await kubectl('get', 'pvc', '-n', NS)).trimEnd().split('\n');
    assert.match(out[0]!, /^NAME\s+STATUS\s+VOLUME\s+CAPACITY\s+ACCESS MODES\s+STORAGECLASS\s+AGE$/);
    assert.match(out.find((l) => l.startsWith('data '))!, /^data\s+Bound\s+pv-data\s+1Gi\s+RWO\s+expandable\s+\d+s$/);
    assert.match(out.find((l) => l.startsWith('clone '))!, /^clone\s+Pending\s+\d+s$/);
    const wide = (await kubectl('get', 'pvc', 'data', '-n', NS, '-o', 'wide')).trimEnd().split('\n');
    assert.match(wide[0]!, /\sAGE\s+VOLUMEMODE$/);
    assert.match(wide[1]!, /\sFilesystem$/);
  });

  it('select by metadata fields only, and answer in Protobuf', async () => {
    const byName = await env.plinth.client.get(`${PVC}?fieldSelector=metadata.name%3Dclone`);
    expectCode(byName, 200);
    assert.deepEqual(byName.body.items.map((i: { metadata: { name: string } }) => i.metadata.name), ['clone']);
    const all = await env.plinth.client.get(`/api/v1/persistentvolumeclaims?fieldSelector=metadata.namespace%3D${NS}`);
    expectCode(all, 200);
    assert.equal(all.body.items.length, 4);
    const other = await env.plinth.client.get(`${PVC}?fieldSelector=spec.volumeName%3Dpv-data`);
    expectStatus(other, 400, 'BadRequest', '"spec.volumeName" is not a known field selector: only "metadata.name", "metadata.namespace"');

    const pb = await env.plinth.client.get(`${PVC}/data`, { headers: { accept: 'application/vnd.kubernetes.protobuf' } });
    expectCode(pb, 200);
    const decoded = decodeProtobuf(pb.raw) as { kind: string; spec: { resources: unknown }; status: { capacity: unknown } };
    assert.equal(decoded.kind, 'PersistentVolumeClaim');
    assert.deepEqual(decoded.spec.resources, { requests: { storage: '2Gi' } });
    assert.deepEqual(decoded.status.capacity, { storage: '1Gi' });
  });

  it('are made with @kubernetes/client-node', async () => {
    const kc = new KubeConfig();
    kc.loadFromFile(env.plinth.server.kubeconfigPath);
    const core = kc.makeApiClient(CoreV1Api);
    const made = await core.createNamespacedPersistentVolumeClaim({
      namespace: NS,
      body: { metadata: { name: 'typed' }, spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'standard', resources: { requests: { storage: '1G' } } } },
    });
    assert.equal(made.status?.phase, 'Pending');
    assert.equal(made.spec?.volumeMode, 'Filesystem');
    assert.equal(made.spec?.resources?.requests?.['storage'], '1G');
    const read = await core.readNamespacedPersistentVolumeClaimStatus({ namespace: NS, name: 'typed' });
    assert.equal(read.spec?.storageClassName, 'standard');
    const list = await core.listNamespacedPersistentVolumeClaim({ namespace: NS, fieldSelector: 'metadata.name=typed' });
    assert.deepEqual(list.items.map((i) => i.metadata?.name), ['typed']);
  });
});
