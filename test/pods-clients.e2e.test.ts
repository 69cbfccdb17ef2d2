/** @kubernetes/client-node and the Python client creating, reading and deleting pods. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { KubeConfig, CoreV1Api, ApiException } from '@kubernetes/client-node';
import { REPO_ROOT, usePlinth } from './harness.js';

const env = usePlinth();

test('client-node creates, reads, lists by field and deletes a pod', async () => {
  const kc = new KubeConfig();
  kc.loadFromFile(env.plinth.server.kubeconfigPath);
  const core = kc.makeApiClient(CoreV1Api);
  const created = await core.createNamespacedPod({ namespace: 'default', body: { metadata: { name: 'cn-pod' }, spec: { containers: [{ name: 'app', image: 'nginx', resources: { limits: { cpu: '500m', memory: '128Mi' } } }] } } });
  assert.equal(created.status?.phase, 'Pending');
  assert.equal(created.status?.qosClass, 'Guaranteed');
  const read = await core.readNamespacedPod({ name: 'cn-pod', namespace: 'default' });
  assert.equal(read.spec?.restartPolicy, 'Always');
  const list = await core.listNamespacedPod({ namespace: 'default', fieldSelector: 'spec.nodeName=' });
  assert.ok(list.items.some((p) => p.metadata?.name === 'cn-pod'));
  const deleted = await core.deleteNamespacedPod({ name: 'cn-pod', namespace: 'default' });
  assert.equal(deleted.metadata?.name, 'cn-pod');
  await assert.rejects(core.readNamespacedPod({ name: 'cn-pod', namespace: 'default' }), (e: unknown) => e instanceof ApiException && e.code === 404);
});

test('the Python client creates, reads and deletes a pod', async () => {
  // Debian's package is importable only from the system python. Not spawnSync: the server runs in this process.
  const out = await new Promise<string>((resolve, reject) => {
    execFile('/usr/bin/python3', [join(REPO_ROOT, 'test/python/pod_flows.py'), env.plinth.server.kubeconfigPath], { encoding: 'utf8', timeout: 60_000 }, (err, stdout, stderr) =>
      err ? reject(new Error(`${stdout}\n${stderr}`)) : resolve(stdout),
    );
  });
  assert.match(out, /^ok$/m);
});
