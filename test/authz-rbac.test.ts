/**
 * Authorization against a real plinth: RBAC (the default mode) for users of a token file — Roles
 * and ClusterRoles through RoleBindings, ClusterRoleBindings, groups, service-account subjects,
 * resourceNames, subresources and nonResourceURLs — every 403 compared with kube's text, and
 * bindings created and deleted taking effect; then `--authorization-mode` with AlwaysAllow,
 * AlwaysDeny and a Webhook (a local HTTPS SubjectAccessReview service requiring the client
 * certificate its kubeconfig names).
 */
import { before, after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { join } from 'node:path';
import { eventually, startInProcess, startProcess, tempDir, usePlinth, type InProcessPlinth, type PlinthProcess, type Response } from './harness.js';
import { expectCode, expectStatus } from './assertions.js';
import { Pki } from './auth-fixtures.js';

const dir = tempDir('plinth-authz-');
const tokenFile = join(dir, 'tokens.csv');
writeFileSync(
  tokenFile,
  [
    'alice-token,alice,alice-uid,"devs,readers"',
    'bob-token,bob,bob-uid',
    'carol-token,carol,carol-uid,auditors',
    'dave-token,dave,dave-uid',
    'sa-token,system:serviceaccount:a:builder,sa-uid,"system:serviceaccounts,system:serviceaccounts:a"',
    '',
  ].join('\n'),
);

const RBAC = '/apis/rbac.authorization.k8s.io/v1';
const sa = (ns: string, name = ''): string => `/api/v1/namespaces/${ns}/serviceaccounts${name ? `/${name}` : ''}`;
const secret = (ns: string, name = ''): string => `/api/v1/namespaces/${ns}/secrets${name ? `/${name}` : ''}`;
const tokenRequest = { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: {} };

const rule = (verbs: string[], resources: string[], extra: Record<string, unknown> = {}) => ({ verbs, apiGroups: [''], resources, ...extra });
const role = (name: string, rules: unknown[], namespace?: string) => ({
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind: namespace ? 'Role' : 'ClusterRole',
  metadata: { name, ...(namespace ? { namespace } : {}) },
  rules,
});
const binding = (name: string, roleKind: string, roleName: string, subjects: unknown[], namespace?: string) => ({
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind: namespace ? 'RoleBinding' : 'ClusterRoleBinding',
  metadata: { name, ...(namespace ? { namespace } : {}) },
  roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: roleKind, name: roleName },
  subjects,
});
const user = (name: string) => ({ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name });
const group = (name: string) => ({ kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name });

/** kube's 403 for a resource request (NewForbidden + forbiddenMessage). */
function expectForbidden(res: Response, message: string | RegExp, details?: { name?: string; kind?: string; group?: string }): void {
  expectStatus(res, 403, 'Forbidden', message);
  if (details) assert.deepEqual(res.body.details, details);
}

describe('RBAC (the default mode), against the plinth executable', () => {
  // The real executable, as `make run` starts it: the permission matrix holds for what users run.
  const env = {} as { plinth: PlinthProcess };
  const exeDir = tempDir('plinth-rbac-exe-');
  before(async () => {
    env.plinth = await startProcess(join(exeDir, 'data'), [`--token-auth-file=${tokenFile}`]);
  });
  after(async () => {
    await env.plinth?.stop();
    rmSync(exeDir, { recursive: true, force: true });
  });
  const as = (token: string) => ({ token });

  before(async () => {
    const c = env.plinth.client;
    for (const ns of ['a', 'b']) expectCode(await c.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }), 201);
    for (const ns of ['a', 'b']) expectCode(await c.post(sa(ns), { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'builder' } }), 201);
    const objects: Array<[string, unknown]> = [
      // alice: read service accounts in a (Role via RoleBinding).
      [`${RBAC}/namespaces/a/roles`, role('sa-reader', [rule(['get', 'list'], ['serviceaccounts'])], 'a')],
      [`${RBAC}/namespaces/a/rolebindings`, binding('alice-reads', 'Role', 'sa-reader', [user('alice')], 'a')],
      // group devs: read secrets in b only (ClusterRole via RoleBinding).
      [`${RBAC}/clusterroles`, role('secret-reader', [rule(['get'], ['secrets'])])],
      [`${RBAC}/namespaces/b/rolebindings`, binding('devs-read-secrets', 'ClusterRole', 'secret-reader', [group('devs')], 'b')],
      // group auditors: list namespaces and service accounts everywhere (ClusterRoleBinding).
      [`${RBAC}/clusterroles`, role('auditor', [rule(['get', 'list'], ['namespaces', 'serviceaccounts'])])],
      [`${RBAC}/clusterrolebindings`, binding('auditors', 'ClusterRole', 'auditor', [group('auditors')])],
      // bob: one named service account, and its tokens (a subresource).
      [`${RBAC}/namespaces/a/roles`, role('builder-only', [rule(['get'], ['serviceaccounts'], { resourceNames: ['builder'] }), rule(['create'], ['serviceaccounts/token'], { resourceNames: ['builder'] })], 'a')],
      [`${RBAC}/namespaces/a/rolebindings`, binding('bob-builder', 'Role', 'builder-only', [user('bob')], 'a')],
      // dave: any token subresource (*/token), paths by prefix, and a binding to a missing role.
      [`${RBAC}/clusterroles`, role('tokens-and-paths', [rule(['create'], ['*/token']), { verbs: ['get'], nonResourceURLs: ['/logs/*', '/metrics'] }])],
      [`${RBAC}/clusterrolebindings`, binding('dave', 'ClusterRole', 'tokens-and-paths', [user('dave')])],
      [`${RBAC}/namespaces/b/rolebindings`, binding('dave-ghost', 'Role', 'ghost', [user('dave')], 'b')],
      // the service account: a subject without namespace means the binding's.
      [`${RBAC}/namespaces/a/rolebindings`, binding('builder-reads', 'Role', 'sa-reader', [{ kind: 'ServiceAccount', name: 'builder' }], 'a')],
    ];
    for (const [path, body] of objects) expectCode(await c.post(path, body), 201, path);
    // Bindings reach the authorizer through its informers: wait for the last one.
    await eventually(async () => (await c.get(sa('a'), as('sa-token'))).status === 200, 10_000, 'the bindings to be seen');
  });

  it('a Role through a RoleBinding: its verbs in its namespace, nothing else', async () => {
    const c = env.plinth.client;
    expectCode(await c.get(sa('a', 'builder'), as('alice-token')), 200);
    expectCode(await c.get(sa('a'), as('alice-token')), 200);
    expectForbidden(await c.delete(sa('a', 'builder'), as('alice-token')), 'serviceaccounts "builder" is forbidden: User "alice" cannot delete resource "serviceaccounts" in API group "" in the namespace "a"', { name: 'builder', kind: 'serviceaccounts' });
    expectForbidden(await c.get(sa('b'), as('alice-token')), 'serviceaccounts is forbidden: User "alice" cannot list resource "serviceaccounts" in API group "" in the namespace "b"', { kind: 'serviceaccounts' });
    expectForbidden(await c.get('/api/v1/serviceaccounts', as('alice-token')), 'serviceaccounts is forbidden: User "alice" cannot list resource "serviceaccounts" in API group "" at the cluster scope');
    expectForbidden(await c.get(`${RBAC}/namespaces/a/roles`, as('alice-token')), 'roles.rbac.authorization.k8s.io is forbidden: User "alice" cannot list resource "roles" in API group "rbac.authorization.k8s.io" in the namespace "a"', { kind: 'roles', group: 'rbac.authorization.k8s.io' });
  });

  it('a ClusterRole through a RoleBinding to a group: only in the binding namespace', async () => {
    const c = env.plinth.client;
    expectStatus(await c.get(secret('b', 'nothing'), as('alice-token')), 404, 'NotFound');
    expectForbidden(await c.get(secret('a', 'nothing'), as('alice-token')), 'secrets "nothing" is forbidden: User "alice" cannot get resource "secrets" in API group "" in the namespace "a"');
    expectForbidden(await c.get(secret('b'), as('alice-token')), 'secrets is forbidden: User "alice" cannot list resource "secrets" in API group "" in the namespace "b"');
  });

  it('a ClusterRoleBinding: everywhere, cluster scope included', async () => {
    const c = env.plinth.client;
    expectCode(await c.get('/api/v1/namespaces', as('carol-token')), 200);
    expectCode(await c.get('/api/v1/serviceaccounts', as('carol-token')), 200);
    expectCode(await c.get(sa('b', 'builder'), as('carol-token')), 200);
    // kube's RequestInfo: a namespace's own URL is in that namespace.
    expectForbidden(await c.delete('/api/v1/namespaces/b', as('carol-token')), 'namespaces "b" is forbidden: User "carol" cannot delete resource "namespaces" in API group "" in the namespace "b"');
    expectForbidden(await c.post(`${RBAC}/clusterroles`, role('x', []), as('carol-token')), 'clusterroles.rbac.authorization.k8s.io is forbidden: User "carol" cannot create resource "clusterroles" in API group "rbac.authorization.k8s.io" at the cluster scope');
  });

  it('resourceNames: only the named object, never a list', async () => {
    const c = env.plinth.client;
    expectCode(await c.get(sa('a', 'builder'), as('bob-token')), 200);
    expectForbidden(await c.get(sa('a', 'default'), as('bob-token')), 'serviceaccounts "default" is forbidden: User "bob" cannot get resource "serviceaccounts" in API group "" in the namespace "a"');
    expectForbidden(await c.get(sa('a'), as('bob-token')), 'serviceaccounts is forbidden: User "bob" cannot list resource "serviceaccounts" in API group "" in the namespace "a"');
    expectForbidden(await c.post(sa('a'), { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'x' } }, as('bob-token')), 'serviceaccounts is forbidden: User "bob" cannot create resource "serviceaccounts" in API group "" in the namespace "a"');
  });

  it('subresources: resource/subresource and */subresource, never the bare resource', async () => {
    const c = env.plinth.client;
    expectCode(await c.post(`${sa('a', 'builder')}/token`, tokenRequest, as('bob-token')), 201);
    expectForbidden(await c.post(`${sa('b', 'builder')}/token`, tokenRequest, as('bob-token')), 'serviceaccounts "builder" is forbidden: User "bob" cannot create resource "serviceaccounts/token" in API group "" in the namespace "b"');
    expectCode(await c.post(`${sa('b', 'builder')}/token`, tokenRequest, as('dave-token')), 201);
    expectForbidden(await c.get(sa('b', 'builder'), as('dave-token')), /^serviceaccounts "builder" is forbidden: User "dave" cannot get resource "serviceaccounts" in API group "" in the namespace "b"/);
  });

  it('nonResourceURLs: exact paths and prefixes; forbidden paths as kube words them', async () => {
    const c = env.plinth.client;
    // Paths outside kube's default policy: "allowed" is the path's answer after authorization (the
    // scrape; a 404 for /logs, which plinth does not serve) and "refused" the 403 before it.
    expectCode(await c.get('/metrics', as('dave-token')), 200);
    expectCode(await c.get('/logs/kube-apiserver.log', as('dave-token')), 404);
    expectForbidden(await c.get('/logs', as('dave-token')), 'forbidden: User "dave" cannot get path "/logs"');
    expectForbidden(await c.get('/metrics', as('bob-token')), 'forbidden: User "bob" cannot get path "/metrics"');
  });

  it('a binding to a missing role: the 403 names it (kube\'s RBAC reason)', async () => {
    const res = await env.plinth.client.get(secret('b'), as('dave-token'));
    expectForbidden(res, 'secrets is forbidden: User "dave" cannot list resource "secrets" in API group "" in the namespace "b": RBAC: role.rbac.authorization.k8s.io "ghost" not found');
  });

  it('service-account subjects (namespace from the binding)', async () => {
    const c = env.plinth.client;
    expectCode(await c.get(sa('a', 'builder'), as('sa-token')), 200);
    expectForbidden(await c.get(sa('b', 'builder'), as('sa-token')), 'serviceaccounts "builder" is forbidden: User "system:serviceaccount:a:builder" cannot get resource "serviceaccounts" in API group "" in the namespace "b"');
  });

  it('bindings created and deleted take effect', async () => {
    const c = env.plinth.client;
    expectStatus(await c.get(secret('a', 'x'), as('bob-token')), 403, 'Forbidden');
    expectCode(await c.post(`${RBAC}/namespaces/a/rolebindings`, binding('bob-secrets', 'ClusterRole', 'secret-reader', [user('bob')], 'a')), 201);
    await eventually(async () => (await c.get(secret('a', 'x'), as('bob-token'))).status === 404, 10_000, 'the new binding to allow bob');
    expectCode(await c.delete(`${RBAC}/namespaces/a/rolebindings/bob-secrets`), 200);
    await eventually(async () => (await c.get(secret('a', 'x'), as('bob-token'))).status === 403, 10_000, 'the deleted binding to stop allowing bob');
    // A role losing a rule takes it away from everyone bound to it.
    expectCode(await c.put(`${RBAC}/clusterroles/auditor`, role('auditor', [rule(['get', 'list'], ['namespaces'])])), 200);
    await eventually(async () => (await c.get('/api/v1/serviceaccounts', as('carol-token'))).status === 403, 10_000, 'the narrowed role to apply');
    expectCode(await c.get('/api/v1/namespaces', as('carol-token')), 200);
  });

  it('system:masters is always allowed', async () => {
    expectCode(await env.plinth.client.get('/api/v1/serviceaccounts'), 200);
  });
});

describe('AlwaysAllow', () => {
  const env = usePlinth([`--token-auth-file=${tokenFile}`, '--authorization-mode=AlwaysAllow']);
  it('allows every user everything', async () => {
    expectCode(await env.plinth.client.get(secret('default'), { token: 'bob-token' }), 200);
    expectCode(await env.plinth.client.get('/healthz', { token: 'bob-token' }), 200);
  });
});

/** A SubjectAccessReview service: allows alice, denies mallory (with a reason), both for `both`, no opinion otherwise. */
class SubjectAccessReviewService {
  readonly reviews: Array<{ body: Record<string, any>; clientCN: string }> = [];
  #server: Server | undefined;
  port = 0;

  async start(tls: { cert: string; key: string; ca: string }): Promise<void> {
    this.#server = createServer({ ...tls, requestCert: true, rejectUnauthorized: true }, (req, res) => {
      let text = '';
      req.on('data', (c: Buffer) => (text += c.toString()));
      req.on('end', () => {
        const body = JSON.parse(text) as Record<string, any>;
        this.reviews.push({ body, clientCN: String((req.socket as TLSSocket).getPeerCertificate().subject?.CN ?? '') });
        const name = body['spec']?.['user'];
        const status =
          name === 'alice' ? { allowed: true } : name === 'mallory' ? { allowed: false, denied: true, reason: 'mallory is banned' } : name === 'both' ? { allowed: true, denied: true } : { allowed: false, reason: 'not my call' };
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ apiVersion: body['apiVersion'], kind: 'SubjectAccessReview', status }));
      });
    });
    await new Promise<void>((r) => this.#server!.listen(0, '127.0.0.1', r));
    this.port = (this.#server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    if (!this.#server) return;
    const closed = new Promise<void>((r) => this.#server!.close(() => r()));
    this.#server.closeAllConnections();
    await closed;
  }
}

describe('Webhook, then AlwaysDeny', () => {
  const service = new SubjectAccessReviewService();
  const kubeconfig = join(dir, 'authz.kubeconfig');
  const tokens = join(dir, 'webhook-tokens.csv');
  let plinthV1: InProcessPlinth | undefined;
  before(async () => {
    const certs = join(dir, 'certs');
    mkdirSync(certs);
    const pki = new Pki(certs).rootCA('ca').serving('server', 'ca').issue('client', '/CN=plinth-authz', 'ca');
    await service.start({ cert: pki.pem('server'), key: pki.keyPem('server'), ca: pki.pem('ca') });
    writeFileSync(
      kubeconfig,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'authz', cluster: { server: `https://127.0.0.1:${service.port}/authorize`, 'certificate-authority': 'certs/ca.crt' } }],
        users: [{ name: 'apiserver', user: { 'client-certificate': 'certs/client.crt', 'client-key': 'certs/client.key' } }],
        contexts: [{ name: 'c', context: { cluster: 'authz', user: 'apiserver' } }],
        'current-context': 'c',
      }),
    );
    writeFileSync(tokens, 'alice-token,alice,alice-uid,"devs,readers"\nmallory-token,mallory,m-uid\nbob-token,bob,bob-uid\nboth-token,both,both-uid\n');
  });
  after(async () => {
    await plinthV1?.stop();
    await service.stop();
  });
  // usePlinth's before runs after the one above: the kubeconfig exists when the server starts.
  const env = usePlinth([`--token-auth-file=${tokens}`, '--authorization-mode=Webhook,AlwaysDeny', `--authorization-webhook-config-file=${kubeconfig}`, '--authorization-webhook-cache-unauthorized-ttl=0s']);

  it('sends a v1beta1 SubjectAccessReview with the client certificate; allowed answers are cached', async () => {
    const c = env.plinth.client;
    expectCode(await c.get(sa('default'), { token: 'alice-token' }), 200);
    const r = service.reviews.at(-1)!;
    assert.equal(r.clientCN, 'plinth-authz');
    assert.equal(r.body['apiVersion'], 'authorization.k8s.io/v1beta1');
    assert.deepEqual(r.body['spec'], {
      resourceAttributes: { namespace: 'default', verb: 'list', version: 'v1', resource: 'serviceaccounts' },
      user: 'alice',
      group: ['devs', 'readers', 'system:authenticated'],
      uid: 'alice-uid',
    });
    const before = service.reviews.length;
    expectCode(await c.get(sa('default'), { token: 'alice-token' }), 200);
    assert.equal(service.reviews.length, before, 'the allowed answer came from the cache');
  });

  it('a denial is final; no opinion falls through to AlwaysDeny', async () => {
    const c = env.plinth.client;
    expectForbidden(await c.get(sa('default'), { token: 'mallory-token' }), 'serviceaccounts is forbidden: User "mallory" cannot list resource "serviceaccounts" in API group "" in the namespace "default": mallory is banned');
    expectForbidden(await c.get('/version', { token: 'bob-token' }), 'forbidden: User "bob" cannot get path "/version": not my call\nEverything is forbidden.');
    const r = service.reviews.at(-1)!;
    assert.deepEqual(r.body['spec']['nonResourceAttributes'], { path: '/version', verb: 'get' });
    // The unauthorized TTL is 0: every refusal asks again.
    const n = service.reviews.length;
    expectStatus(await c.get('/version', { token: 'bob-token' }), 403, 'Forbidden');
    assert.equal(service.reviews.length, n + 1);
  });

  it('an answer both allowing and denying, and an unreachable webhook: 500, as kube', async () => {
    const c = env.plinth.client;
    const both = await c.get(sa('default'), { token: 'both-token' });
    expectCode(both, 500);
    assert.equal(both.headers['content-type'], 'text/plain; charset=utf-8');
    assert.equal(both.raw.toString(), 'Internal Server Error: "/api/v1/namespaces/default/serviceaccounts": webhook subject access review returned both allow and deny response\n');
  });

  it('--authorization-webhook-version=v1 sends groups as `groups`', async () => {
    plinthV1 = await startInProcess({
      etcd: env.etcd,
      args: [`--token-auth-file=${tokens}`, '--authorization-mode=Webhook', `--authorization-webhook-config-file=${kubeconfig}`, '--authorization-webhook-version=v1'],
    });
    expectCode(await plinthV1.client.get(secret('default'), { token: 'alice-token' }), 200);
    const r = service.reviews.at(-1)!;
    assert.equal(r.body['apiVersion'], 'authorization.k8s.io/v1');
    assert.deepEqual(r.body['spec']['groups'], ['devs', 'readers', 'system:authenticated']);
  });

  it('the webhook gone: cached allowances still hold; other requests fail with the error', async () => {
    const port = service.port;
    await service.stop();
    const c = env.plinth.client;
    expectCode(await c.get(sa('default'), { token: 'alice-token' }), 200);
    const res = await c.get('/version', { token: 'bob-token' });
    expectCode(res, 500);
    assert.match(res.raw.toString(), new RegExp(`^Internal Server Error: "/version": Post "https://127\\.0\\.0\\.1:${port}/authorize": .*ECONNREFUSED`));
  });
});
