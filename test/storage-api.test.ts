/**
 * storage.k8s.io on a real server (groups/storage/): StorageClasses, CSIDrivers, CSINodes,
 * VolumeAttachments (+status) and CSIStorageCapacities in v1 and the deprecated v1beta1 — kube
 * 1.24's defaults, causes, immutable fields, status isolation, Tables and Protobuf.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { decodeProtobuf } from '@plinth/apiserver';
import { eventually, kubectlPath, usePlinth } from './harness.js';
import { expectCode, expectStatus } from './assertions.js';

const env = usePlinth();
const G = '/apis/storage.k8s.io/v1';
const BETA = '/apis/storage.k8s.io/v1beta1';

function kubectl(...args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(kubectlPath(), ['--kubeconfig', env.plinth.server.kubeconfigPath, ...args], { encoding: 'utf8', timeout: 60_000 }, (err, stdout, stderr) =>
      err ? reject(new Error(`kubectl ${args.join(' ')}: ${stderr}`)) : resolve(stdout),
    );
  });
}

type Causes = Array<{ field: string; reason: string; message: string }>;
const causesOf = (body: { details: { causes: Causes } }): string[][] => body.details.causes.map((c) => [c.field, c.reason, c.message]);

describe('storage.k8s.io', () => {
  it('is served in discovery with kube 1.24 resources and verbs', async () => {
    const v1 = await env.plinth.client.get(G);
    expectCode(v1, 200);
    const names = (v1.body.resources as Array<{ name: string }>).map((r) => r.name);
    assert.deepEqual(names, ['csidrivers', 'csinodes', 'csistoragecapacities', 'storageclasses', 'volumeattachments', 'volumeattachments/status']);
    const sc = (v1.body.resources as Array<Record<string, unknown>>).find((r) => r['name'] === 'storageclasses')!;
    assert.deepEqual(sc['shortNames'], ['sc']);
    assert.equal(sc['namespaced'], false);
    const beta = await env.plinth.client.get(BETA);
    assert.deepEqual((beta.body.resources as Array<{ name: string; namespaced: boolean }>).map((r) => [r.name, r.namespaced]), [['csistoragecapacities', true]]);
    const group = await env.plinth.client.get('/apis/storage.k8s.io');
    assert.equal(group.body.preferredVersion.version, 'v1');
  });

  it('StorageClass: defaults, causes, immutable fields', async () => {
    const created = await env.plinth.client.post(`${G}/storageclasses`, { apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name: 'fast' }, provisioner: 'example.com/fast' });
    expectCode(created, 201);
    assert.equal(created.body.reclaimPolicy, 'Delete');
    assert.equal(created.body.volumeBindingMode, 'Immediate');
    const bad = await env.plinth.client.post(`${G}/storageclasses`, { apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name: 'bad' }, reclaimPolicy: 'Recycle', volumeBindingMode: 'Later' });
    expectStatus(bad, 422, 'Invalid', /^StorageClass.storage.k8s.io "bad" is invalid: \[/);
    assert.deepEqual(causesOf(bad.body), [
      ['provisioner', 'FieldValueRequired', 'Required value'],
      ['reclaimPolicy', 'FieldValueNotSupported', 'Unsupported value: "Recycle": supported values: "Delete", "Retain"'],
      ['volumeBindingMode', 'FieldValueNotSupported', 'Unsupported value: "Later": supported values: "Immediate", "WaitForFirstConsumer"'],
    ]);
    const changed = await env.plinth.client.put(`${G}/storageclasses/fast`, { ...created.body, provisioner: 'other.io/x', parameters: { a: 'b' }, reclaimPolicy: 'Retain', volumeBindingMode: 'WaitForFirstConsumer' });
    expectStatus(changed, 422, 'Invalid');
    assert.deepEqual(causesOf(changed.body), [
      ['parameters', 'FieldValueForbidden', 'Forbidden: updates to parameters are forbidden.'],
      ['provisioner', 'FieldValueForbidden', 'Forbidden: updates to provisioner are forbidden.'],
      ['reclaimPolicy', 'FieldValueForbidden', 'Forbidden: updates to reclaimPolicy are forbidden.'],
      ['volumeBindingMode', 'FieldValueInvalid', 'Invalid value: "WaitForFirstConsumer": field is immutable'],
    ]);
    const expand = await env.plinth.client.put(`${G}/storageclasses/fast`, { ...created.body, allowVolumeExpansion: true });
    expectCode(expand, 200);
  });

  it("StorageClass Table: kube's columns and '(default)' after the default class", async () => {
    await env.plinth.client.post(`${G}/storageclasses`, {
      apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', provisioner: 'example.com/std',
      metadata: { name: 'standard', annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } },
    });
    const out = await kubectl('get', 'sc');
    const lines = out.trim().split('\n').map((l) => l.split(/\s{2,}/));
    assert.deepEqual(lines[0], ['NAME', 'PROVISIONER', 'RECLAIMPOLICY', 'VOLUMEBINDINGMODE', 'ALLOWVOLUMEEXPANSION', 'AGE']);
    assert.deepEqual(lines.find((l) => l[0]!.startsWith('fast'))!.slice(0, 5), ['fast', 'example.com/fast', 'Delete', 'Immediate', 'true']);
    assert.deepEqual(lines.find((l) => l[0]!.startsWith('standard'))!.slice(0, 2), ['standard (default)', 'example.com/std']);
  });

  it('CSIDriver: defaults, immutable fields, generation on token changes, Table', async () => {
    const created = await env.plinth.client.post(`${G}/csidrivers`, { apiVersion: 'storage.k8s.io/v1', kind: 'CSIDriver', metadata: { name: 'csi.example.com' }, spec: {} });
    expectCode(created, 201);
    assert.deepEqual(created.body.spec, {
      attachRequired: true, podInfoOnMount: false, volumeLifecycleModes: ['Persistent'],
      storageCapacity: false, fsGroupPolicy: 'ReadWriteOnceWithFSType', requiresRepublish: false,
    });
    assert.equal(created.body.metadata.generation, undefined);
    const changed = await env.plinth.client.put(`${G}/csidrivers/csi.example.com`, {
      ...created.body, spec: { ...created.body.spec, attachRequired: false, podInfoOnMount: true, fsGroupPolicy: 'File', volumeLifecycleModes: ['Persistent', 'Ephemeral'] },
    });
    expectStatus(changed, 422, 'Invalid');
    assert.deepEqual(causesOf(changed.body), [
      ['spec.attachedRequired', 'FieldValueInvalid', 'Invalid value: false: field is immutable'],
      ['spec.fsGroupPolicy', 'FieldValueInvalid', 'Invalid value: "File": field is immutable'],
      ['spec.podInfoOnMount', 'FieldValueInvalid', 'Invalid value: true: field is immutable'],
      ['spec.volumeLifecycleModes', 'FieldValueInvalid', 'Invalid value: []storage.VolumeLifecycleMode{"Persistent", "Ephemeral"}: field is immutable'],
    ]);
    const tokens = await env.plinth.client.put(`${G}/csidrivers/csi.example.com`, { ...created.body, spec: { ...created.body.spec, tokenRequests: [{ audience: 'vault' }], requiresRepublish: true } });
    expectCode(tokens, 200);
    assert.equal(tokens.body.metadata.generation, 1);
    const short = await env.plinth.client.put(`${G}/csidrivers/csi.example.com`, { ...tokens.body, spec: { ...tokens.body.spec, tokenRequests: [{ audience: 'a', expirationSeconds: 60 }, { audience: 'a' }] } });
    expectStatus(short, 422, 'Invalid');
    assert.deepEqual(causesOf(short.body).map((c) => c[0]), ['spec.tokenRequests[0].expirationSeconds', 'spec.tokenRequests[1].audience', 'spec.tokenRequests[0].expirationSeconds', 'spec.tokenRequests[1].audience']);
    const out = await kubectl('get', 'csidrivers');
    assert.match(out.split('\n')[0]!, /^NAME\s+ATTACHREQUIRED\s+PODINFOONMOUNT\s+STORAGECAPACITY\s+TOKENREQUESTS\s+REQUIRESREPUBLISH\s+MODES\s+AGE$/);
    assert.match(out.split('\n')[1]!, /^csi\.example\.com\s+true\s+false\s+false\s+vault\s+true\s+Persistent\s+/);
  });

  it('CSINode: node IDs and a listed driver that may not change', async () => {
    const node = { apiVersion: 'storage.k8s.io/v1', kind: 'CSINode', metadata: { name: 'node-1' }, spec: { drivers: [{ name: 'csi.example.com', nodeID: 'n1', topologyKeys: ['zone'] }] } };
    const created = await env.plinth.client.post(`${G}/csinodes`, node);
    expectCode(created, 201);
    const bad = await env.plinth.client.post(`${G}/csinodes`, { ...node, metadata: { name: 'node-2' }, spec: { drivers: [{ name: 'd.io', nodeID: '' }, { name: 'd.io', nodeID: 'x'.repeat(257) }] } });
    expectStatus(bad, 422, 'Invalid');
    assert.deepEqual(causesOf(bad.body).map((c) => [c[0], c[1]]), [
      ['spec.drivers[0].nodeID', 'FieldValueRequired'],
      ['spec.drivers[1].nodeID', 'FieldValueInvalid'],
      ['spec.drivers[1].name', 'FieldValueDuplicate'],
    ]);
    const changed = await env.plinth.client.put(`${G}/csinodes/node-1`, { ...created.body, spec: { drivers: [{ name: 'csi.example.com', nodeID: 'n2' }] } });
    expectStatus(changed, 422, 'Invalid');
    assert.equal(changed.body.details.causes[0].field, 'CSINodeDriver');
    const out = await kubectl('get', 'csinodes', 'node-1');
    assert.match(out, /^NAME\s+DRIVERS\s+AGE\nnode-1\s+1\s+/);
  });

  it('VolumeAttachment: status cleared on create, isolated both ways, spec immutable', async () => {
    const va = { apiVersion: 'storage.k8s.io/v1', kind: 'VolumeAttachment', metadata: { name: 'va1' }, spec: { attacher: 'csi.example.com', nodeName: 'node-1', source: { persistentVolumeName: 'pv-1' } }, status: { attached: true } };
    const created = await env.plinth.client.post(`${G}/volumeattachments`, va);
    expectCode(created, 201);
    assert.deepEqual(created.body.status, { attached: false });
    const status = await env.plinth.client.put(`${G}/volumeattachments/va1/status`, { ...created.body, spec: { ...va.spec, nodeName: 'other' }, status: { attached: true, attachmentMetadata: { a: 'b' } } });
    expectCode(status, 200);
    assert.equal(status.body.spec.nodeName, 'node-1');
    assert.equal(status.body.status.attached, true);
    const main = await env.plinth.client.put(`${G}/volumeattachments/va1`, { ...status.body, status: { attached: false } });
    expectCode(main, 200);
    assert.equal(main.body.status.attached, true, 'an update of the resource keeps the status');
    const moved = await env.plinth.client.put(`${G}/volumeattachments/va1`, { ...main.body, spec: { ...va.spec, nodeName: 'node-2' } });
    expectStatus(moved, 422, 'Invalid');
    assert.equal(moved.body.details.causes[0].field, 'spec');
    assert.match(moved.body.details.causes[0].message, /field is immutable$/);
    const none = await env.plinth.client.post(`${G}/volumeattachments`, { ...va, metadata: { name: 'va2' }, spec: { attacher: '', nodeName: 'node-1', source: {} } });
    expectStatus(none, 422, 'Invalid');
    assert.deepEqual(causesOf(none.body).map((c) => [c[0], c[1]]), [
      ['spec.attacher', 'FieldValueRequired'],
      ['spec.source', 'FieldValueRequired'],
      // ValidateVolumeAttachmentV1: the attacher as a CSI driver name (required, then a DNS subdomain).
      ['spec.attacher', 'FieldValueRequired'],
      ['spec.attacher', 'FieldValueInvalid'],
    ]);
    const out = await kubectl('get', 'volumeattachments');
    assert.match(out, /^NAME\s+ATTACHER\s+PV\s+NODE\s+ATTACHED\s+AGE\nva1\s+csi\.example\.com\s+pv-1\s+node-1\s+true\s+/);
  });

  it('CSIStorageCapacity: v1 ↔ v1beta1 round trip over one storage, the Warning on v1beta1', async () => {
    const body = (version: string, name: string) => ({
      apiVersion: `storage.k8s.io/${version}`, kind: 'CSIStorageCapacity', metadata: { name, namespace: 'default' },
      storageClassName: 'fast', capacity: '1536Mi', maximumVolumeSize: '1Gi', nodeTopology: { matchLabels: { zone: 'a' } },
    });
    const v1 = await env.plinth.client.post(`${G}/namespaces/default/csistoragecapacities`, body('v1', 'cap1'));
    expectCode(v1, 201);
    assert.equal(v1.headers['warning'], undefined);
    const asBeta = await env.plinth.client.get(`${BETA}/namespaces/default/csistoragecapacities/cap1`);
    expectCode(asBeta, 200);
    assert.equal(asBeta.headers['warning'], '299 - "storage.k8s.io/v1beta1 CSIStorageCapacity is deprecated in v1.24+, unavailable in v1.27+; use storage.k8s.io/v1 CSIStorageCapacity"');
    assert.equal(asBeta.body.apiVersion, 'storage.k8s.io/v1beta1');
    const strip = (o: Record<string, unknown>) => ({ ...o, apiVersion: undefined });
    assert.deepEqual(strip(asBeta.body), strip(v1.body));
    const beta = await env.plinth.client.post(`${BETA}/namespaces/default/csistoragecapacities`, body('v1beta1', 'cap2'));
    expectCode(beta, 201);
    const back = await env.plinth.client.get(`${G}/namespaces/default/csistoragecapacities/cap2`);
    assert.equal(back.body.apiVersion, 'storage.k8s.io/v1');
    assert.deepEqual(strip(back.body), strip(beta.body));
    const list = await env.plinth.client.get(`${G}/csistoragecapacities`);
    assert.deepEqual((list.body.items as Array<{ metadata: { name: string } }>).map((i) => i.metadata.name).sort(), ['cap1', 'cap2']);
    const moved = await env.plinth.client.put(`${G}/namespaces/default/csistoragecapacities/cap1`, { ...v1.body, storageClassName: 'slow' });
    expectStatus(moved, 422, 'Invalid');
    assert.deepEqual(causesOf(moved.body), [['storageClassName', 'FieldValueInvalid', 'Invalid value: "slow": field is immutable']]);
    const bad = await env.plinth.client.post(`${G}/namespaces/default/csistoragecapacities`, { ...body('v1', 'cap3'), storageClassName: 'Bad_Name', capacity: '-1' });
    expectStatus(bad, 422, 'Invalid');
    // kube's strategy validates a new object twice: each cause twice.
    assert.deepEqual(causesOf(bad.body).map((c) => c[0]), ['storageClassName', 'capacity', 'storageClassName', 'capacity']);
    const out = await kubectl('get', 'csistoragecapacities', '-n', 'default');
    assert.match(out, /^NAME\s+STORAGECLASSNAME\s+CAPACITY\ncap1\s+fast\s+1536Mi\n/);
  });

  it('answer in Protobuf', async () => {
    const pb = await env.plinth.client.get(`${G}/storageclasses/fast`, { headers: { accept: 'application/vnd.kubernetes.protobuf' } });
    expectCode(pb, 200);
    const decoded = decodeProtobuf(pb.raw) as { kind: string; provisioner: string; reclaimPolicy: string };
    assert.equal(decoded.kind, 'StorageClass');
    assert.equal(decoded.provisioner, 'example.com/fast');
    assert.equal(decoded.reclaimPolicy, 'Delete');
    const cap = await env.plinth.client.get(`${BETA}/namespaces/default/csistoragecapacities/cap1`, { headers: { accept: 'application/vnd.kubernetes.protobuf' } });
    expectCode(cap, 200);
    assert.equal((decodeProtobuf(cap.raw) as { storageClassName: string }).storageClassName, 'fast');
  });
});

describe('storage admission plugins', () => {
  const PVC = '/api/v1/namespaces/default/persistentvolumeclaims';
  const claim = (name: string, spec: Record<string, unknown> = {}) => ({
    apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, ...spec },
  });

  it('DefaultStorageClass gives a claim without a class the default one; two defaults are refused', async () => {
    // 'standard' is the default class (created above).
    const res = await env.plinth.client.post(PVC, claim('plain'));
    expectCode(res, 201);
    assert.equal(res.body.spec.storageClassName, 'standard');
    const explicit = await env.plinth.client.post(PVC, claim('none', { storageClassName: '' }));
    expectCode(explicit, 201);
    assert.equal(explicit.body.spec.storageClassName, '', 'an explicit empty class is kept');
    await env.plinth.client.post(`${G}/storageclasses`, {
      apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', provisioner: 'example.com/b',
      metadata: { name: 'second', annotations: { 'storageclass.beta.kubernetes.io/is-default-class': 'true' } },
    });
    const two = await eventually(async () => {
      const r = await env.plinth.client.post(PVC, claim('two'));
      if (r.status === 201) await env.plinth.client.delete(`${PVC}/two`);
      return r.status === 403 ? r : undefined;
    }, 10_000, 'the second default class to be seen');
    expectStatus(two, 403, 'Forbidden', 'persistentvolumeclaims "two" is forbidden: Internal error occurred: 2 default StorageClasses were found');
    expectCode(await env.plinth.client.delete(`${G}/storageclasses/second`), 200);
  });

  it('StorageObjectInUseProtection adds the protection finalizers to new claims and volumes', async () => {
    const pvc = (await env.plinth.client.get(`${PVC}/plain`)).body;
    assert.deepEqual(pvc.metadata.finalizers, ['kubernetes.io/pvc-protection']);
    const pv = await env.plinth.client.post('/api/v1/persistentvolumes', {
      apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: 'pv-protected' },
      spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: '/data' } },
    });
    expectCode(pv, 201);
    assert.deepEqual(pv.body.metadata.finalizers, ['kubernetes.io/pv-protection']);
  });

  it('PersistentVolumeClaimResize lets a bound claim grow only through a class that allows expansion', async () => {
    const cur = (await env.plinth.client.get(`${PVC}/plain`)).body;
    const grow = (o: Record<string, any>) => ({ ...o, spec: { ...o.spec, resources: { requests: { storage: '2Gi' } } } });
    // An unbound claim's spec is immutable: validation answers before the plugin would.
    expectStatus(await env.plinth.client.put(`${PVC}/plain`, grow(cur)), 422, 'Invalid');
    const named = await env.plinth.client.put(`${PVC}/plain`, { ...cur, spec: { ...cur.spec, volumeName: 'pv-protected' } });
    expectCode(named, 200);
    const st = await env.plinth.client.put(`${PVC}/plain/status`, { ...named.body, status: { phase: 'Bound', accessModes: ['ReadWriteOnce'], capacity: { storage: '1Gi' } } });
    expectCode(st, 200);
    const bound = await env.plinth.client.put(`${PVC}/plain`, grow(st.body));
    expectStatus(bound, 403, 'Forbidden', 'persistentvolumeclaims "plain" is forbidden: only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize');
    const sc = (await env.plinth.client.get(`${G}/storageclasses/standard`)).body;
    expectCode(await env.plinth.client.put(`${G}/storageclasses/standard`, { ...sc, allowVolumeExpansion: true }), 200);
    // The plugin reads classes from the watch cache (kube: an informer): the change shows up soon.
    const ok = await eventually(async () => {
      const r = await env.plinth.client.put(`${PVC}/plain`, grow(st.body));
      return r.status === 200 ? r : undefined;
    }, 10_000, 'the claim to grow');
    assert.equal(ok.body.spec.resources.requests.storage, '2Gi');
  });
});
