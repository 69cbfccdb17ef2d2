/**
 * End-to-end with the real kubectl against the real executable (as `make run` starts it):
 * the core issue's acceptance flow, including a restart that keeps the data.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { kubectlOf, startProcess, tempDir, eventually, type PlinthProcess } from './harness.js';

let dataDir: string;
let plinth: PlinthProcess;

const { kubectl, ok } = kubectlOf(() => plinth);

before(async () => {
  dataDir = tempDir('plinth-e2e-');
  plinth = await startProcess(dataDir);
});

after(async () => {
  await plinth?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

test('kubectl version reports the server', () => {
  assert.match(ok('version'), /Server Version: v1\.24\./);
});

test('kubectl api-resources lists the served resources', () => {
  const out = ok('api-resources');
  assert.match(out, /^serviceaccounts\s+sa\s+v1\s+true\s+ServiceAccount$/m);
  assert.match(out, /^namespaces\s+ns\s+v1\s+false\s+Namespace$/m);
  assert.match(out, /^clusterrolebindings\s+rbac\.authorization\.k8s\.io\/v1\s+false\s+ClusterRoleBinding$/m);
});

test('namespace, service account and cluster role binding lifecycle; data survives a restart', async () => {
  ok('create', 'namespace', 'e2e');
  ok('-n', 'e2e', 'create', 'serviceaccount', 'robot');
  const sa = JSON.parse(ok('-n', 'e2e', 'get', 'sa', 'robot', '-o', 'json'));
  assert.equal(sa.kind, 'ServiceAccount');
  assert.equal(sa.metadata.namespace, 'e2e');
  assert.match(sa.metadata.uid, /^[0-9a-f-]{36}$/);
  assert.match(ok('-n', 'e2e', 'get', 'sa'), /^robot\s/m);

  ok('create', 'clusterrolebinding', 'alice-view', '--clusterrole=view', '--user=alice');
  const crb = parseYaml(ok('get', 'clusterrolebinding', 'alice-view', '-o', 'yaml'));
  assert.deepEqual(crb.roleRef, { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' });
  assert.deepEqual(crb.subjects, [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'alice' }]);

  // Restart: same data dir, so the same embedded etcd data.
  await plinth.stop();
  plinth = await startProcess(dataDir);
  const again = JSON.parse(ok('-n', 'e2e', 'get', 'sa', 'robot', '-o', 'json'));
  assert.equal(again.metadata.uid, sa.metadata.uid);
  assert.equal(parseYaml(ok('get', 'clusterrolebinding', 'alice-view', '-o', 'yaml')).metadata.uid, crb.metadata.uid);

  assert.match(ok('-n', 'e2e', 'delete', 'sa', 'robot'), /serviceaccount "robot" deleted/);
  assert.notEqual(kubectl('-n', 'e2e', 'get', 'sa', 'robot').code, 0);
  assert.match(ok('delete', 'clusterrolebinding', 'alice-view'), /clusterrolebinding.rbac.authorization.k8s.io "alice-view" deleted/);
  assert.match(kubectl('get', 'clusterrolebinding', 'alice-view').stderr, /NotFound|not found/);
  assert.match(ok('delete', 'namespace', 'e2e'), /namespace "e2e" deleted/);
  await eventually(async () => kubectl('get', 'namespace', 'e2e').code !== 0, 20_000, 'namespace e2e to go');
});

test('kubectl errors carry the server Status', () => {
  const r = kubectl('create', 'serviceaccount', 'Bad_Name', '-n', 'default');
  assert.notEqual(r.code, 0);
  assert.match(r.stderr, /is invalid: metadata\.name: Invalid value: "Bad_Name"/);
  const dup = kubectl('create', 'namespace', 'default');
  assert.match(dup.stderr, /AlreadyExists|already exists/);
});

test('SIGTERM stops plinth and its embedded etcd cleanly', async () => {
  const code = await plinth.stop('SIGTERM');
  assert.equal(code, 0);
  // The embedded etcd's client port is closed once plinth has exited.
  const { readFileSync } = await import('node:fs');
  const { client } = JSON.parse(readFileSync(`${dataDir}/etcd/plinth-ports.json`, 'utf8')) as { client: number };
  const { createConnection } = await import('node:net');
  const refused = await new Promise<boolean>((resolve) => {
    const s = createConnection({ host: '127.0.0.1', port: client });
    s.once('connect', () => {
      s.destroy();
      resolve(false);
    });
    s.once('error', () => resolve(true));
  });
  assert.equal(refused, true);
  plinth = await startProcess(dataDir); // for `after`
});

test('a port already in use fails the start with a message, and leaves no etcd behind', async () => {
  const { spawnSync: run } = await import('node:child_process');
  const { EXECUTABLE } = await import('./harness.js');
  const port = new URL(plinth.client.base).port;
  const dir = tempDir('plinth-busy-');
  try {
    const r = run(process.execPath, [EXECUTABLE, `--secure-port=${port}`, '--bind-address=127.0.0.1', `--data-dir=${dir}`], { encoding: 'utf8', timeout: 60_000 });
    assert.equal(r.status, 1);
    assert.match(r.stderr, /cannot listen on 127\.0\.0\.1:\d+: .*EADDRINUSE/);
    const ps = run('pgrep', ['-f', `--data-dir=${dir}/etcd/member-data`], { encoding: 'utf8' });
    assert.equal(ps.stdout.trim(), '', 'the embedded etcd was stopped');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('secrets in the data dir are readable by their owner only', async () => {
  const { statSync } = await import('node:fs');
  for (const f of ['admin-token', 'admin.kubeconfig', 'certs/apiserver.key', 'certs/ca.key']) {
    assert.equal(statSync(`${dataDir}/${f}`).mode & 0o077, 0, `${f} is not private`);
  }
});

test('--shutdown-delay-duration: after SIGTERM /readyz fails while requests are still served, then plinth exits', async () => {
  const dir = tempDir('plinth-shutdown-');
  const p = await startProcess(dir, ['--shutdown-delay-duration=3s']);
  try {
    assert.equal((await p.client.get('/readyz')).status, 200);
    p.child.kill('SIGTERM');
    const ready = await eventually(async () => {
      const r = await p.client.get('/readyz?verbose');
      return r.status === 500 ? r : undefined;
    }, 2000, '/readyz to fail');
    assert.match(ready.raw.toString(), /^\[-\]shutdown failed: reason withheld$/m);
    assert.equal((await p.client.get('/api/v1/namespaces/default')).status, 200, 'still serving during the delay');
  } finally {
    assert.equal(await p.stop(), 0);
    rmSync(dir, { recursive: true, force: true });
  }
});
