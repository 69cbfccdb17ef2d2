/**
 * End-to-end with @kubernetes/client-node against the real executable: the same flows as the
 * kubectl test, through the generated typed clients a Node operator uses.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { KubeConfig, CoreV1Api, RbacAuthorizationV1Api, VersionApi, ApiException } from '@kubernetes/client-node';
import { startProcess, tempDir, eventually, type PlinthProcess } from './harness.js';

let dataDir: string;
let plinth: PlinthProcess;
let core: CoreV1Api;
let rbac: RbacAuthorizationV1Api;
let kc: KubeConfig;

function clients(): void {
  kc = new KubeConfig();
  kc.loadFromFile(plinth.kubeconfig);
  core = kc.makeApiClient(CoreV1Api);
  rbac = kc.makeApiClient(RbacAuthorizationV1Api);
}

async function status(p: Promise<unknown>): Promise<number> {
  try {
    await p;
    return 200;
  } catch (e) {
    if (e instanceof ApiException) return e.code;
    throw e;
  }
}

before(async () => {
  dataDir = tempDir('plinth-cn-');
  plinth = await startProcess(dataDir);
  clients();
});

after(async () => {
  await plinth?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

test('version', async () => {
  const v = await kc.makeApiClient(VersionApi).getCode();
  assert.equal(v.major, '1');
  assert.equal(v.minor, '24');
});

test('namespaces, service accounts and cluster role bindings through the typed clients', async () => {
  const ns = await core.createNamespace({ body: { metadata: { name: 'cn' } } });
  assert.equal(ns.status?.phase, 'Active');
  assert.deepEqual(ns.spec?.finalizers, ['kubernetes']);

  const sa = await core.createNamespacedServiceAccount({ namespace: 'cn', body: { metadata: { name: 'robot', labels: { app: 'x' } } } });
  assert.ok(sa.metadata?.uid);
  assert.ok(sa.metadata?.creationTimestamp instanceof Date);
  const list = await core.listNamespacedServiceAccount({ namespace: 'cn', labelSelector: 'app=x' });
  assert.deepEqual(list.items.map((i) => i.metadata?.name), ['robot']);
  assert.ok(list.metadata?.resourceVersion);

  const updated = await core.replaceNamespacedServiceAccount({
    name: 'robot',
    namespace: 'cn',
    body: { ...sa, automountServiceAccountToken: false },
  });
  assert.equal(updated.automountServiceAccountToken, false);
  assert.notEqual(updated.metadata?.resourceVersion, sa.metadata?.resourceVersion);
  // The stale version is refused.
  assert.equal(await status(core.replaceNamespacedServiceAccount({ name: 'robot', namespace: 'cn', body: sa })), 409);

  const crb = await rbac.createClusterRoleBinding({
    body: {
      metadata: { name: 'cn-view' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
      subjects: [{ kind: 'ServiceAccount', name: 'robot', namespace: 'cn' }],
    },
  });
  assert.equal(crb.subjects?.[0]?.apiGroup, undefined);
  assert.equal(await status(rbac.createClusterRoleBinding({ body: { metadata: { name: 'bad' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'x' } } })), 422);

  // Restart keeps everything.
  await plinth.stop();
  plinth = await startProcess(dataDir);
  clients();
  const read = await core.readNamespacedServiceAccount({ name: 'robot', namespace: 'cn' });
  assert.equal(read.metadata?.uid, sa.metadata?.uid);
  assert.equal((await rbac.readClusterRoleBinding({ name: 'cn-view' })).metadata?.uid, crb.metadata?.uid);

  await core.deleteNamespacedServiceAccount({ name: 'robot', namespace: 'cn' });
  assert.equal(await status(core.readNamespacedServiceAccount({ name: 'robot', namespace: 'cn' })), 404);
  await rbac.deleteClusterRoleBinding({ name: 'cn-view' });
  assert.equal(await status(rbac.readClusterRoleBinding({ name: 'cn-view' })), 404);
  const deleting = await core.deleteNamespace({ name: 'cn' });
  assert.ok(deleting);
  await eventually(async () => (await status(core.readNamespace({ name: 'cn' }))) === 404, 20_000, 'namespace cn to go');
});
