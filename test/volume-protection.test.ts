/**
 * The in-process pvc-protection and pv-protection controllers (kube-controller-manager 1.24's
 * pkg/controller/volume/{pvcprotection,pvprotection}) on a real server. The server runs with the
 * StorageObjectInUseProtection admission plugin off, so the finalizers seen here are the
 * controllers' own: added to claims and volumes that lack them, removed once the claim is used by
 * no scheduled pod, or the volume is no longer Bound, so a deleted claim or volume goes.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { eventually, usePlinth } from './harness.js';
import { expectCode } from './assertions.js';

const env = usePlinth(['--disable-admission-plugins=StorageObjectInUseProtection']);
const NS = 'default';
const PVC = `/api/v1/namespaces/${NS}/persistentvolumeclaims`;
const PODS = `/api/v1/namespaces/${NS}/pods`;
const PV = '/api/v1/persistentvolumes';

const claim = (name: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  metadata: { name, ...extra },
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
});

const pod = (name: string, volumes: unknown[], nodeName?: string): Record<string, unknown> => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name },
  spec: { ...(nodeName ? { nodeName } : {}), containers: [{ name: 'c', image: 'busybox' }], volumes },
});

const usesClaim = (claimName: string) => [{ name: 'data', persistentVolumeClaim: { claimName } }];

/** Waits until `path` has the finalizer (the controller's work). */
const finalized = (path: string, finalizer: string) =>
  eventually(async () => ((await env.plinth.client.get(path)).body.metadata?.finalizers ?? []).includes(finalizer), 10_000, `${path} has ${finalizer}`);

const gone = (path: string) => eventually(async () => (await env.plinth.client.get(path)).status === 404, 10_000, `${path} is gone`);

/** Deleted, and still there (terminating, finalizer kept) a second later. */
async function staysTerminating(path: string, finalizer: string): Promise<void> {
  expectCode(await env.plinth.client.delete(path), 200);
  await new Promise((r) => setTimeout(r, 1000));
  const res = await env.plinth.client.get(path);
  expectCode(res, 200);
  assert.ok(res.body.metadata.deletionTimestamp, 'terminating');
  assert.deepEqual(res.body.metadata.finalizers, [finalizer]);
}

describe('pvc-protection', () => {
  it('adds the finalizer to a claim that lacks it', async () => {
    expectCode(await env.plinth.client.post(PVC, claim('plain')), 201);
    await finalized(`${PVC}/plain`, 'kubernetes.io/pvc-protection');
  });

  it('lets an unused claim go once deleted', async () => {
    expectCode(await env.plinth.client.delete(`${PVC}/plain`), 200);
    await gone(`${PVC}/plain`);
  });

  it('keeps a deleted claim a scheduled pod uses until the pod is gone', async () => {
    expectCode(await env.plinth.client.post(PVC, claim('used')), 201);
    await finalized(`${PVC}/used`, 'kubernetes.io/pvc-protection');
    expectCode(await env.plinth.client.post(PODS, pod('user', usesClaim('used'), 'node-1')), 201);
    await staysTerminating(`${PVC}/used`, 'kubernetes.io/pvc-protection');
    expectCode(await env.plinth.client.delete(`${PODS}/user`, { body: { gracePeriodSeconds: 0 } }), 200);
    await gone(`${PVC}/used`);
  });

  it('frees a claim when its pod ends (Succeeded) only once the pod is gone, as kube 1.24', async () => {
    expectCode(await env.plinth.client.post(PVC, claim('job-data')), 201);
    await finalized(`${PVC}/job-data`, 'kubernetes.io/pvc-protection');
    expectCode(await env.plinth.client.post(PODS, pod('job', usesClaim('job-data'), 'node-1')), 201);
    const cur = (await env.plinth.client.get(`${PODS}/job`)).body;
    expectCode(await env.plinth.client.put(`${PODS}/job/status`, { ...cur, status: { ...cur.status, phase: 'Succeeded' } }), 200);
    // A scheduled pod keeps its claim whatever its phase (kube's podUsesPVC).
    await staysTerminating(`${PVC}/job-data`, 'kubernetes.io/pvc-protection');
    expectCode(await env.plinth.client.delete(`${PODS}/job`, { body: { gracePeriodSeconds: 0 } }), 200);
    await gone(`${PVC}/job-data`);
  });

  it('does not count an unscheduled pod (no nodeName) as a user', async () => {
    expectCode(await env.plinth.client.post(PVC, claim('pending')), 201);
    await finalized(`${PVC}/pending`, 'kubernetes.io/pvc-protection');
    expectCode(await env.plinth.client.post(PODS, pod('waiting', usesClaim('pending'))), 201);
    expectCode(await env.plinth.client.delete(`${PVC}/pending`), 200);
    await gone(`${PVC}/pending`);
    expectCode(await env.plinth.client.delete(`${PODS}/waiting`), 200);
  });

  it("keeps an ephemeral volume's claim (<pod>-<volume>, controlled by the pod) until the pod is gone", async () => {
    const ephemeral = [{ name: 'scratch', ephemeral: { volumeClaimTemplate: { spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } } } }];
    const p = await env.plinth.client.post(PODS, pod('eph', ephemeral, 'node-1'));
    expectCode(p, 201);
    const owner = { apiVersion: 'v1', kind: 'Pod', name: 'eph', uid: p.body.metadata.uid, controller: true };
    expectCode(await env.plinth.client.post(PVC, claim('eph-scratch', { ownerReferences: [owner] })), 201);
    // The right name, but not controlled by the pod: not its claim (kube's VolumeIsForPod).
    expectCode(await env.plinth.client.post(PODS, pod('eph2', ephemeral, 'node-1')), 201);
    expectCode(await env.plinth.client.post(PVC, claim('eph2-scratch')), 201);
    await finalized(`${PVC}/eph2-scratch`, 'kubernetes.io/pvc-protection');
    expectCode(await env.plinth.client.delete(`${PVC}/eph2-scratch`), 200);
    await gone(`${PVC}/eph2-scratch`);
    await finalized(`${PVC}/eph-scratch`, 'kubernetes.io/pvc-protection');
    await staysTerminating(`${PVC}/eph-scratch`, 'kubernetes.io/pvc-protection');
    expectCode(await env.plinth.client.delete(`${PODS}/eph`, { body: { gracePeriodSeconds: 0 } }), 200);
    await gone(`${PVC}/eph-scratch`);
  });
});

describe('pv-protection', () => {
  const volume = (name: string) => ({
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name },
    spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: '/data' } },
  });

  it('adds the finalizer, and lets an unbound volume go once deleted', async () => {
    expectCode(await env.plinth.client.post(PV, volume('pv-free')), 201);
    await finalized(`${PV}/pv-free`, 'kubernetes.io/pv-protection');
    expectCode(await env.plinth.client.delete(`${PV}/pv-free`), 200);
    await gone(`${PV}/pv-free`);
  });

  it('keeps a deleted Bound volume until its phase changes', async () => {
    expectCode(await env.plinth.client.post(PV, volume('pv-bound')), 201);
    await finalized(`${PV}/pv-bound`, 'kubernetes.io/pv-protection');
    const cur = (await env.plinth.client.get(`${PV}/pv-bound`)).body;
    expectCode(await env.plinth.client.put(`${PV}/pv-bound/status`, { ...cur, status: { phase: 'Bound' } }), 200);
    await staysTerminating(`${PV}/pv-bound`, 'kubernetes.io/pv-protection');
    const bound = (await env.plinth.client.get(`${PV}/pv-bound`)).body;
    expectCode(await env.plinth.client.put(`${PV}/pv-bound/status`, { ...bound, status: { phase: 'Released' } }), 200);
    await gone(`${PV}/pv-bound`);
  });
});
