/**
 * RBAC `resourceNames` and a list or watch whose fieldSelector requires `metadata.name` (issue 23
 * point 11): kube 1.24's RequestInfoFactory takes that name as the request's name, so a rule with
 * `resourceNames: [s1]` and verbs list/watch allows `?fieldSelector=metadata.name=s1` — and
 * `kubectl get secret s1 -w` works for such a user. Another name, no selector, a `/watch/` path
 * (whose verb kube fixes before it looks at the query) stay 403. The audit event names the object
 * as kube's does; the route's metric stays a LIST of its collection.
 */
import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { eventually, kubectlPath, tempDir, usePlinth } from './harness.js';
import { expectCode, expectStatus } from './assertions.js';
import { parseExposition, valueOf } from './metrics-parser.js';

const dir = tempDir('plinth-fsname-');
const tokenFile = join(dir, 'tokens.csv');
const policyFile = join(dir, 'policy.yaml');
const auditLog = join(dir, 'audit.log');
writeFileSync(tokenFile, ['sam-token,sam,sam-uid', 'cleo-token,cleo,cleo-uid', ''].join('\n'));
writeFileSync(policyFile, 'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n');

const env = usePlinth([`--token-auth-file=${tokenFile}`, `--audit-policy-file=${policyFile}`, `--audit-log-path=${auditLog}`]);
const RBAC = '/apis/rbac.authorization.k8s.io/v1';
const SECRETS = '/api/v1/namespaces/team/secrets';
const byName = (name: string): string => `fieldSelector=${encodeURIComponent(`metadata.name=${name}`)}`;
const sam = { token: 'sam-token' };
const names = (items: Array<{ metadata: { namespace: string; name: string } }>): string[] => items.map((i) => `${i.metadata.namespace}/${i.metadata.name}`).sort();

let ready: Promise<void> | undefined;
const setUp = (): Promise<void> => (ready ??= createFixtures());

async function createFixtures(): Promise<void> {
  const c = env.plinth.client;
  for (const ns of ['team', 'other']) {
    expectCode(await c.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }), 201);
    for (const s of ['s1', 's2']) expectCode(await c.post(`/api/v1/namespaces/${ns}/secrets`, { apiVersion: 'v1', kind: 'Secret', metadata: { name: s }, stringData: { k: `${ns}-${s}` } }), 201);
  }
  const rules = [{ apiGroups: [''], resources: ['secrets'], resourceNames: ['s1'], verbs: ['get', 'list', 'watch'] }];
  const subject = (name: string) => [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name }];
  const roleRef = (kind: string) => ({ apiGroup: 'rbac.authorization.k8s.io', kind, name: 's1-reader' });
  // sam: s1 in team only; cleo: s1 in every namespace.
  expectCode(await c.post(`${RBAC}/namespaces/team/roles`, { metadata: { name: 's1-reader' }, rules }), 201);
  expectCode(await c.post(`${RBAC}/namespaces/team/rolebindings`, { metadata: { name: 'sam' }, roleRef: roleRef('Role'), subjects: subject('sam') }), 201);
  expectCode(await c.post(`${RBAC}/clusterroles`, { metadata: { name: 's1-reader' }, rules }), 201);
  expectCode(await c.post(`${RBAC}/clusterrolebindings`, { metadata: { name: 'cleo-s1' }, roleRef: roleRef('ClusterRole'), subjects: subject('cleo') }), 201);
}

describe('resourceNames and a fieldSelector on metadata.name', () => {
  before(setUp);

  it('list and watch with fieldSelector=metadata.name=s1 are allowed, and serve s1 alone', async () => {
    const c = env.plinth.client;
    const list = await c.get(`${SECRETS}?${byName('s1')}`, sam);
    expectCode(list, 200);
    assert.deepEqual(names(list.body.items), ['team/s1']);
    // `==` is the same requirement; other requirements beside it do not matter.
    expectCode(await c.get(`${SECRETS}?fieldSelector=${encodeURIComponent('metadata.name==s1,metadata.namespace=team')}`, sam), 200);
    // A watch as sam, ended by the server after a second (the harness's watch helper is the admin's).
    const watch = await c.request('GET', `${SECRETS}?${byName('s1')}&watch=1&timeoutSeconds=1`, sam);
    assert.equal(watch.status, 200);
    const events = watch.raw.toString().split('\n').filter(Boolean).map((l) => JSON.parse(l));
    assert.deepEqual(events.map((e) => `${e.type} ${e.object.metadata.name}`), ['ADDED s1']);
  });

  it('another name, no selector, a selector that is not an exact name, or a /watch/ path: 403 as in kube', async () => {
    const c = env.plinth.client;
    const s2 = await c.get(`${SECRETS}?${byName('s2')}`, sam);
    expectStatus(s2, 403, 'Forbidden', 'secrets "s2" is forbidden: User "sam" cannot list resource "secrets" in API group "" in the namespace "team"');
    // kube's NewForbidden names the object the request named.
    assert.deepEqual(s2.body.details, { name: 's2', kind: 'secrets' });
    expectStatus(await c.get(SECRETS, sam), 403, 'Forbidden');
    expectStatus(await c.get(`${SECRETS}?fieldSelector=${encodeURIComponent('metadata.name!=s2')}`, sam), 403, 'Forbidden');
    expectStatus(await c.get(`${SECRETS}?${byName('s1')}&limit=junk`, sam), 403, 'Forbidden');
    expectStatus(await c.get(`/api/v1/watch/namespaces/team/secrets?${byName('s1')}`, sam), 403, 'Forbidden', /cannot watch resource "secrets"/);
    expectStatus(await c.get(`/api/v1/namespaces/other/secrets?${byName('s1')}`, sam), 403, 'Forbidden');
    // A write is never a list: deletecollection with the selector stays forbidden and deletes nothing.
    expectStatus(await c.delete(`${SECRETS}?${byName('s1')}`, sam), 403, 'Forbidden');
    expectCode(await c.get(`${SECRETS}/s1`), 200);
  });

  it('across all namespaces, the named list and watch serve that name in every namespace (the path has no name)', async () => {
    const c = env.plinth.client;
    const cleo = { token: 'cleo-token' };
    const list = await c.get(`/api/v1/secrets?${byName('s1')}`, cleo);
    expectCode(list, 200);
    assert.deepEqual(names(list.body.items), ['other/s1', 'team/s1']);
    const watch = await c.request('GET', `/api/v1/secrets?${byName('s1')}&watch=1&timeoutSeconds=1`, cleo);
    assert.equal(watch.status, 200);
    const events = watch.raw.toString().split('\n').filter(Boolean).map((l) => JSON.parse(l));
    assert.deepEqual(events.map((e) => `${e.type} ${e.object.metadata.namespace}/${e.object.metadata.name}`).sort(), ['ADDED other/s1', 'ADDED team/s1']);
    expectStatus(await c.get('/api/v1/secrets', cleo), 403, 'Forbidden');
  });

  it("the audit event names s1 as kube's does; the metric counts a LIST of the namespace's collection", async () => {
    const c = env.plinth.client;
    const id = `fsname-${process.pid}`;
    const count = async (labels: Record<string, string>): Promise<number> => valueOf(parseExposition((await c.get('/metrics')).raw.toString()), 'apiserver_request_total', { resource: 'secrets', code: '200', ...labels }) ?? 0;
    const lists = await count({ verb: 'LIST', scope: 'namespace' });
    const gets = await count({ verb: 'GET', scope: 'resource' });
    expectCode(await c.get(`${SECRETS}?${byName('s1')}`, { ...sam, headers: { 'audit-id': id } }), 200);
    const done = await eventually(async () => {
      const lines = readFileSync(auditLog, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
      return lines.find((e) => e.auditID === id && e.stage === 'ResponseComplete');
    }, 10_000, 'the audit event');
    assert.equal(done.verb, 'list');
    assert.deepEqual(done.objectRef, { resource: 'secrets', namespace: 'team', name: 's1', apiVersion: 'v1' });
    assert.equal(await count({ verb: 'LIST', scope: 'namespace' }), lists + 1);
    assert.equal(await count({ verb: 'GET', scope: 'resource' }), gets);
  });

  it('kubectl get secret s1 -w works for a user who may read s1 alone', async () => {
    const c = env.plinth.client;
    const kubectl = spawn(kubectlPath(), ['--kubeconfig', env.plinth.server.kubeconfigPath, '--token', 'sam-token', '-n', 'team', 'get', 'secret', 's1', '-w', '--no-headers'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    kubectl.stdout.on('data', (d: Buffer) => (out += d.toString()));
    kubectl.stderr.on('data', (d: Buffer) => (err += d.toString()));
    try {
      await eventually(async () => /^s1\s/m.test(out), 20_000, `kubectl's first row (stderr: ${err})`);
      // A change to s1 arrives on the watch.
      const patched = await c.request('PATCH', `${SECRETS}/s1`, { rawBody: JSON.stringify({ metadata: { labels: { seen: 'yes' } } }), headers: { 'content-type': 'application/merge-patch+json' } });
      expectCode(patched, 200);
      await eventually(async () => out.split('\n').filter((l) => /^s1\s/.test(l)).length >= 2, 20_000, `kubectl's second row (out: ${out}, stderr: ${err})`);
      assert.equal(err.trim(), '');
    } finally {
      kubectl.kill();
    }
  });
});
