/**
 * ReplicationControllers end to end against the real executable: @kubernetes/client-node's and the
 * Python client's typed calls create, read, scale (the Scale sub-resource) and delete one.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { ApiException, CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { REPO_ROOT, startProcess, tempDir, type PlinthProcess } from './harness.js';

let dataDir: string;
let plinth: PlinthProcess;

before(async () => {
  dataDir = tempDir('plinth-rc-');
  plinth = await startProcess(dataDir);
});

after(async () => {
  await plinth?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

test('client-node: create, read, scale and delete a replication controller', async () => {
  const kc = new KubeConfig();
  kc.loadFromFile(plinth.kubeconfig);
  const core = kc.makeApiClient(CoreV1Api);
  const namespace = 'default';
  const rc = await core.createNamespacedReplicationController({
    namespace,
    body: { metadata: { name: 'cnrc' }, spec: { template: { metadata: { labels: { app: 'cnrc' } }, spec: { containers: [{ name: 'web', image: 'nginx:1.25' }] } } } },
  });
  assert.equal(rc.spec?.replicas, 1);
  assert.deepEqual(rc.spec?.selector, { app: 'cnrc' });

  const scale = await core.readNamespacedReplicationControllerScale({ name: 'cnrc', namespace });
  assert.deepEqual([scale.spec?.replicas, scale.status?.selector], [1, 'app=cnrc']);
  const replaced = await core.replaceNamespacedReplicationControllerScale({ name: 'cnrc', namespace, body: { ...scale, spec: { replicas: 2 } } });
  assert.equal(replaced.spec?.replicas, 2);
  // client-node patches with a JSON patch by default.
  const patched = await core.patchNamespacedReplicationControllerScale({ name: 'cnrc', namespace, body: [{ op: 'replace', path: '/spec/replicas', value: 5 }] });
  assert.equal(patched.spec?.replicas, 5);
  const bad = await core.replaceNamespacedReplicationControllerScale({ name: 'cnrc', namespace, body: { ...patched, spec: { replicas: -1 } } }).catch((e: unknown) => e);
  assert.ok(bad instanceof ApiException);
  assert.equal(bad.code, 422);

  const read = await core.readNamespacedReplicationController({ name: 'cnrc', namespace });
  assert.deepEqual([read.spec?.replicas, read.metadata?.generation], [5, 3]);
  await core.deleteNamespacedReplicationController({ name: 'cnrc', namespace, propagationPolicy: 'Background' });
  const gone = await core.readNamespacedReplicationController({ name: 'cnrc', namespace }).catch((e: unknown) => e);
  assert.ok(gone instanceof ApiException);
  assert.equal(gone.code, 404);
});

test('the Python client: create, read, scale and delete a replication controller', () => {
  // Debian's package is importable only from the system python, not a pyenv one on PATH.
  const r = spawnSync('/usr/bin/python3', [join(REPO_ROOT, 'test/python/rc_flows.py'), plinth.kubeconfig], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}\n--- server log ---\n${plinth.output().slice(-2000)}`);
  assert.match(r.stdout, /^ok$/m);
});
