/**
 * `kubectl auth can-i` against the real executable (kubectl resolves only resources plinth serves,
 * so workload kinds are asked about through resources it has) under kube's default policy: users bound (in
 * one namespace) to view, edit and admin, and one to cluster-admin, get the answers kube 1.24's
 * bootstrap roles give; `--list` shows the rules; impersonation works for those who may impersonate
 * and is refused, with kube's message, for those who may not.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { kubectlPath, startProcess, tempDir, eventually, type PlinthProcess } from './harness.js';
import { expectCode } from './assertions.js';

const dir = tempDir('plinth-can-i-');
const USERS = { viewer: 'viewer-token-0001', editor: 'editor-token-0002', nsadmin: 'nsadmin-token-0003', root: 'root-token-0004' } as const;
type User = keyof typeof USERS;
const NS = 'team';
const RBAC = '/apis/rbac.authorization.k8s.io/v1';
let plinth: PlinthProcess;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function kubectl(user: User, args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(kubectlPath(), ['--kubeconfig', plinth.kubeconfig, '--token', USERS[user], ...args], { timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

/** `kubectl auth can-i`: exit 0 and "yes", or exit 1 and "no". */
async function canI(user: User, ...args: string[]): Promise<boolean> {
  const r = await kubectl(user, ['auth', 'can-i', ...args]);
  assert.ok(r.code === 0 || r.code === 1, `kubectl auth can-i ${args.join(' ')} as ${user}: exit ${r.code}: ${r.stderr}`);
  assert.equal(r.stdout.trim().split('\n').at(-1), r.code === 0 ? 'yes' : 'no');
  return r.code === 0;
}

before(async () => {
  writeFileSync(join(dir, 'tokens.csv'), Object.entries(USERS).map(([name, token]) => `${token},${name},${name}-uid`).join('\n') + '\n');
  plinth = await startProcess(join(dir, 'data'), [`--token-auth-file=${join(dir, 'tokens.csv')}`, '--feature-gates=APISelfSubjectReview=true']);
  const c = plinth.client;
  expectCode(await c.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } }), 201, 'namespace');
  const bind = (user: User, role: string) =>
    c.post(`${RBAC}/namespaces/${NS}/rolebindings`, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: `${user}-${role}` },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }],
    });
  expectCode(await bind('viewer', 'view'), 201, 'bind view');
  expectCode(await bind('editor', 'edit'), 201, 'bind edit');
  expectCode(await bind('nsadmin', 'admin'), 201, 'bind admin');
  expectCode(
    await c.post(`${RBAC}/clusterrolebindings`, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'root-cluster-admin' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'root' }],
    }),
    201,
    'bind cluster-admin',
  );
  // The authorizer sees bindings through its cache a moment after they are written.
  await eventually(async () => (await c.get(`/api/v1/namespaces/${NS}/secrets`, { token: USERS.root })).status === 200, 10_000, 'the bindings to take effect');
  await eventually(async () => (await c.get(`/api/v1/namespaces/${NS}/configmaps`, { token: USERS.viewer })).status !== 403, 10_000, 'the view binding to take effect');
});

after(async () => {
  await plinth?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('kubectl auth can-i under kube 1.24\'s default policy', () => {
  it('view reads but never secrets, and writes nothing', async () => {
    assert.equal(await canI('viewer', 'get', 'pods', '-n', NS), true);
    assert.equal(await canI('viewer', 'list', 'configmaps', '-n', NS), true);
    assert.equal(await canI('viewer', 'get', 'secrets', '-n', NS), false);
    assert.equal(await canI('viewer', 'create', 'configmaps', '-n', NS), false);
    assert.equal(await canI('viewer', 'update', 'serviceaccounts', '-n', NS), false);
    assert.equal(await canI('viewer', 'get', 'pods', '-n', 'default'), false, 'only in its namespace');
    assert.equal(await canI('viewer', 'get', 'pods/log', '-n', NS), true, 'view reads pods/log');
  });

  it('edit writes workloads and secrets but not RBAC', async () => {
    assert.equal(await canI('editor', 'get', 'secrets', '-n', NS), true);
    assert.equal(await canI('editor', 'create', 'configmaps', '-n', NS), true);
    assert.equal(await canI('editor', 'update', 'serviceaccounts', '-n', NS), true);
    assert.equal(await canI('editor', 'create', 'rolebindings.rbac.authorization.k8s.io', '-n', NS), false);
    assert.equal(await canI('editor', 'create', 'roles.rbac.authorization.k8s.io', '-n', NS), false);
  });

  it('admin manages RBAC in its namespace only', async () => {
    assert.equal(await canI('nsadmin', 'create', 'rolebindings.rbac.authorization.k8s.io', '-n', NS), true);
    assert.equal(await canI('nsadmin', 'create', 'roles.rbac.authorization.k8s.io', '-n', NS), true);
    assert.equal(await canI('nsadmin', 'delete', 'secrets', '-n', NS), true);
    assert.equal(await canI('nsadmin', 'create', 'namespaces'), false);
    assert.equal(await canI('nsadmin', 'create', 'clusterroles.rbac.authorization.k8s.io'), false);
  });

  it('cluster-admin may do everything, everywhere', async () => {
    assert.equal(await canI('root', 'create', 'namespaces'), true);
    assert.equal(await canI('root', '*', '*'), true);
    assert.equal(await canI('root', 'get', '/logs/anything'), true);
  });

  it('non-resource URLs: everyone reads the public health paths, nobody else the rest', async () => {
    assert.equal(await canI('viewer', 'get', '/healthz'), true);
    assert.equal(await canI('viewer', 'get', '/api'), true);
    assert.equal(await canI('viewer', 'get', '/metrics'), false);
  });

  it('--list shows the rules a user has in the namespace', async () => {
    const r = await kubectl('viewer', ['auth', 'can-i', '--list', '-n', NS]);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.split('\n');
    assert.match(lines[0]!, /^Resources\s+Non-Resource URLs\s+Resource Names\s+Verbs/);
    assert.ok(lines.some((l) => /^pods\s+\[\]\s+\[\]\s+\[get list watch\]/.test(l)), r.stdout);
    assert.ok(lines.some((l) => /^selfsubjectreviews\.authentication\.k8s\.io\s+\[\]\s+\[\]\s+\[create\]/.test(l)), r.stdout);
    assert.ok(!lines.some((l) => /^secrets\s/.test(l)), 'no secrets rule for view');
  });

  it('impersonation: cluster-admin may act as another user; others are refused with kube\'s message', async () => {
    assert.equal(await canI('root', 'get', 'secrets', '-n', NS, '--as=viewer'), false);
    assert.equal(await canI('root', 'get', 'pods', '-n', NS, '--as=viewer'), true);
    const who = await kubectl('root', ['auth', 'whoami', '-o', 'json', '--as=viewer', '--as-group=testers']);
    assert.equal(who.code, 0, who.stderr);
    const user = JSON.parse(who.stdout).status.userInfo;
    assert.equal(user.username, 'viewer');
    assert.deepEqual([...user.groups].sort(), ['system:authenticated', 'testers']);
    const refused = await kubectl('viewer', ['get', 'namespaces', '--as=root']);
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /users "root" is forbidden: User "viewer" cannot impersonate resource "users" in API group "" at the cluster scope/);
  });
});
