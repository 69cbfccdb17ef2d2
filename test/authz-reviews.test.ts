/**
 * authorization.k8s.io/v1 access reviews and impersonation against a real plinth: discovery,
 * OpenAPI, JSON and Protobuf bodies, kube's validation errors, the authorizer's decisions, kubectl
 * `auth can-i` (single checks, --list, -n, sub-resources, non-resource URLs, --as), and
 * `kubectl --as/--as-group` through the impersonation filter.
 *
 * plinth runs with --authorization-mode=RBAC. Tests named "(RBAC)" assert what RBAC decides for
 * users other than the admin.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { decodeProtobuf, encodeProtobuf } from '@plinth/apiserver';
import { kubectlPath, tempDir, usePlinth } from './harness.js';

const dir = tempDir('plinth-authz-reviews-');
const BOB = 'bob-token-0123456789';
const CAROL = 'carol-token-0123456789';
writeFileSync(join(dir, 'tokens.csv'), `${BOB},bob,bob-uid\njane-token-0123456789,jane,jane-uid\n${CAROL},carol,carol-uid\n`);
const env = usePlinth(['--feature-gates=APISelfSubjectReview=true', '--authorization-mode=RBAC', `--token-auth-file=${join(dir, 'tokens.csv')}`]);
const cacheDir = tempDir('plinth-kubectl-cache-');
after(() => {
  rmSync(dir, { recursive: true, force: true });
  rmSync(cacheDir, { recursive: true, force: true });
});

const AUTHZ = '/apis/authorization.k8s.io/v1';
const RBAC = '/apis/rbac.authorization.k8s.io/v1';
const PB = 'application/vnd.kubernetes.protobuf';
const NS = 'reviews';

/** kubectl against the in-process server, asynchronously so this process keeps serving. */
function kubectl(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(kubectlPath(), ['--kubeconfig', env.plinth.server.kubeconfigPath, '--cache-dir', cacheDir, ...args], { encoding: 'utf8', timeout: 60_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

async function create(path: string, body: unknown): Promise<void> {
  const r = await env.plinth.client.post(path, body);
  assert.equal(r.status, 201, JSON.stringify(r.body));
}

function sar(spec: Record<string, unknown>, kind = 'SubjectAccessReview', metadata?: Record<string, unknown>): Record<string, unknown> {
  return { apiVersion: 'authorization.k8s.io/v1', kind, ...(metadata ? { metadata } : {}), spec };
}

/**
 * The objects the tests share, created once by the first test that needs them (node 20 runs a
 * file's top-level `before` hooks without waiting for each other, so usePlinth's may not be done).
 */
let fixtures: Promise<void> | undefined;
function ready(): Promise<void> {
  return (fixtures ??= createFixtures());
}

async function createFixtures(): Promise<void> {
  await create('/api/v1/namespaces', { metadata: { name: NS } });
  // What the non-admin users are granted, explicitly, so the tests hold with any bootstrap policy:
  // everyone here may ask about themselves; bob and jane may read pods (and their logs) in NS;
  // carol may impersonate users (only).
  await create(`${RBAC}/clusterroles`, {
    metadata: { name: 'reviews-self' },
    rules: [{ apiGroups: ['authorization.k8s.io', 'authentication.k8s.io'], resources: ['selfsubjectaccessreviews', 'selfsubjectrulesreviews', 'selfsubjectreviews'], verbs: ['create'] }],
  });
  await create(`${RBAC}/clusterrolebindings`, {
    metadata: { name: 'reviews-self' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'reviews-self' },
    subjects: ['bob', 'jane', 'carol'].map((name) => ({ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name })),
  });
  await create(`${RBAC}/namespaces/${NS}/roles`, { metadata: { name: 'pod-reader' }, rules: [{ apiGroups: [''], resources: ['pods', 'pods/log', 'serviceaccounts'], verbs: ['get', 'list'] }] });
  await create(`${RBAC}/namespaces/${NS}/rolebindings`, {
    metadata: { name: 'pod-reader' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'pod-reader' },
    subjects: ['bob', 'jane'].map((name) => ({ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name })),
  });
  await create(`${RBAC}/clusterroles`, { metadata: { name: 'user-impersonator' }, rules: [{ apiGroups: [''], resources: ['users'], verbs: ['impersonate'] }] });
  await create(`${RBAC}/clusterrolebindings`, {
    metadata: { name: 'user-impersonator' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'user-impersonator' },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'carol' }],
  });
}

test('discovery: authorization.k8s.io/v1 serves the four reviews, create only, LocalSubjectAccessReview namespaced', async () => {
  await ready();
  const c = env.plinth.client;
  const names = (await c.get('/apis')).body.groups.map((g: { name: string }) => g.name);
  const at = (n: string): number => names.indexOf(n);
  assert.ok(at('authentication.k8s.io') >= 0 && at('authentication.k8s.io') < at('authorization.k8s.io') && at('authorization.k8s.io') < at('rbac.authorization.k8s.io'), names.join());
  const gv = await c.get(AUTHZ);
  assert.deepEqual(gv.body, {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: 'authorization.k8s.io/v1',
    resources: [
      { name: 'localsubjectaccessreviews', singularName: 'localsubjectaccessreview', namespaced: true, kind: 'LocalSubjectAccessReview', verbs: ['create'] },
      { name: 'selfsubjectaccessreviews', singularName: 'selfsubjectaccessreview', namespaced: false, kind: 'SelfSubjectAccessReview', verbs: ['create'] },
      { name: 'selfsubjectrulesreviews', singularName: 'selfsubjectrulesreview', namespaced: false, kind: 'SelfSubjectRulesReview', verbs: ['create'] },
      { name: 'subjectaccessreviews', singularName: 'subjectaccessreview', namespaced: false, kind: 'SubjectAccessReview', verbs: ['create'] },
    ],
  });
  // Nothing is stored: no list, no get.
  assert.equal((await c.get(`${AUTHZ}/subjectaccessreviews`)).status, 405);
  assert.equal((await c.get(`${AUTHZ}/subjectaccessreviews/x`)).status, 404);
});

test('OpenAPI v2 describes the review kinds and their create paths', async () => {
  await ready();
  const v2 = (await env.plinth.client.get('/openapi/v2')).body;
  for (const kind of ['SubjectAccessReview', 'SubjectAccessReviewSpec', 'SubjectAccessReviewStatus', 'ResourceAttributes', 'NonResourceAttributes', 'SelfSubjectAccessReview', 'SelfSubjectAccessReviewSpec', 'LocalSubjectAccessReview', 'SelfSubjectRulesReview', 'SelfSubjectRulesReviewSpec', 'SubjectRulesReviewStatus', 'ResourceRule', 'NonResourceRule']) {
    assert.ok(v2.definitions[`io.k8s.api.authorization.v1.${kind}`], kind);
  }
  assert.equal(v2.definitions['io.k8s.api.authorization.v1.SubjectAccessReviewList'], undefined);
  assert.deepEqual(v2.definitions['io.k8s.api.authorization.v1.SubjectAccessReviewStatus'].required, ['allowed']);
  assert.equal(v2.paths[`${AUTHZ}/subjectaccessreviews`].post.operationId, 'createAuthorizationV1SubjectAccessReview');
  assert.equal(v2.paths[`${AUTHZ}/selfsubjectrulesreviews`].post.operationId, 'createAuthorizationV1SelfSubjectRulesReview');
  assert.equal(v2.paths[`${AUTHZ}/namespaces/{namespace}/localsubjectaccessreviews`].post.operationId, 'createAuthorizationV1NamespacedLocalSubjectAccessReview');
});

test('SubjectAccessReview: the authorizer decides for the user asked about; the review comes back with its status', async () => {
  await ready();
  const c = env.plinth.client;
  const spec = { user: 'someone', groups: ['system:masters'], resourceAttributes: { verb: 'delete', resource: 'nodes' } };
  const r = await c.post(`${AUTHZ}/subjectaccessreviews`, sar(spec));
  assert.equal(r.status, 201);
  assert.deepEqual(r.body, { kind: 'SubjectAccessReview', apiVersion: 'authorization.k8s.io/v1', metadata: { creationTimestamp: null }, spec, status: { allowed: true } });
  // Anonymous may not list pods under any policy: allowed false, written out.
  const anon = await c.post(`${AUTHZ}/subjectaccessreviews`, sar({ user: 'system:anonymous', groups: ['system:unauthenticated'], resourceAttributes: { verb: 'list', resource: 'pods' } }));
  assert.equal(anon.status, 201);
  assert.equal(anon.body.status.allowed, false);
  assert.equal(anon.body.status.denied, undefined);
  // A non-resource path, for a group alone.
  const nonRes = await c.post(`${AUTHZ}/subjectaccessreviews`, sar({ groups: ['system:masters'], nonResourceAttributes: { path: '/logs', verb: 'get' } }));
  assert.equal(nonRes.body.status.allowed, true);
});

test('SelfSubjectAccessReview as the admin (system:masters): allowed, resource and non-resource', async () => {
  await ready();
  const c = env.plinth.client;
  for (const spec of [{ resourceAttributes: { verb: 'get', resource: 'pods', namespace: NS } }, { nonResourceAttributes: { path: '/logs', verb: 'get' } }]) {
    const r = await c.post(`${AUTHZ}/selfsubjectaccessreviews`, sar(spec, 'SelfSubjectAccessReview'));
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.deepEqual(r.body.status, { allowed: true });
    assert.deepEqual(r.body.spec, spec);
  }
});

test('LocalSubjectAccessReview: in the namespace of the path; the namespace is defaulted into metadata', async () => {
  await ready();
  const c = env.plinth.client;
  const spec = { user: 'x', groups: ['system:masters'], resourceAttributes: { verb: 'get', resource: 'pods', namespace: NS } };
  const r = await c.post(`${AUTHZ}/namespaces/${NS}/localsubjectaccessreviews`, sar(spec, 'LocalSubjectAccessReview'));
  assert.equal(r.status, 201, JSON.stringify(r.body));
  assert.deepEqual(r.body.metadata, { namespace: NS, creationTimestamp: null });
  assert.deepEqual(r.body.status, { allowed: true });
  // kube's namespace rules: the attributes must name the review's namespace (422) ...
  const other = await c.post(`${AUTHZ}/namespaces/${NS}/localsubjectaccessreviews`, sar({ ...spec, resourceAttributes: { verb: 'get', resource: 'pods', namespace: 'elsewhere' } }, 'LocalSubjectAccessReview'));
  assert.equal(other.status, 422);
  assert.equal(other.body.message, '.authorization.k8s.io "" is invalid: spec.resourceAttributes.namespace: Invalid value: "elsewhere": must match metadata.namespace');
  // ... the body's namespace must be the path's (400), and non-resource checks are not local.
  const body = await c.post(`${AUTHZ}/namespaces/${NS}/localsubjectaccessreviews`, sar(spec, 'LocalSubjectAccessReview', { namespace: 'elsewhere' }));
  assert.equal(body.status, 400);
  assert.equal(body.body.message, 'the namespace of the provided object does not match the namespace sent on the request');
  const nonRes = await c.post(`${AUTHZ}/namespaces/${NS}/localsubjectaccessreviews`, sar({ user: 'x', nonResourceAttributes: { path: '/logs', verb: 'get' } }, 'LocalSubjectAccessReview'));
  assert.equal(nonRes.status, 422);
  assert.equal(nonRes.body.message, '.authorization.k8s.io "" is invalid: spec.nonResourceAttributes: Invalid value: authorization.NonResourceAttributes{Path:"/logs", Verb:"get"}: disallowed on this kind of request');
  // Not at the cluster scope.
  assert.equal((await c.post(`${AUTHZ}/localsubjectaccessreviews`, sar(spec, 'LocalSubjectAccessReview'))).status, 404);
});

test('validation: kube 1.24 messages and codes', async () => {
  await ready();
  const c = env.plinth.client;
  const empty = await c.post(`${AUTHZ}/subjectaccessreviews`, sar({}));
  assert.equal(empty.status, 422);
  assert.equal(empty.body.reason, 'Invalid');
  assert.equal(
    empty.body.message,
    '.authorization.k8s.io "" is invalid: [spec.resourceAttributes: Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes must be specified, spec.user: Invalid value: "": at least one of user or group must be specified]',
  );
  assert.deepEqual(empty.body.details, {
    group: 'authorization.k8s.io',
    kind: '',
    name: '',
    causes: [
      { reason: 'FieldValueInvalid', message: 'Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes must be specified', field: 'spec.resourceAttributes' },
      { reason: 'FieldValueInvalid', message: 'Invalid value: "": at least one of user or group must be specified', field: 'spec.user' },
    ],
  });
  const both = await c.post(`${AUTHZ}/selfsubjectaccessreviews`, sar({ resourceAttributes: { verb: 'get', resource: 'pods' }, nonResourceAttributes: { path: '/x', verb: 'get' } }, 'SelfSubjectAccessReview'));
  assert.equal(both.status, 422);
  assert.equal(both.body.message, '.authorization.k8s.io "" is invalid: spec.nonResourceAttributes: Invalid value: authorization.NonResourceAttributes{Path:"/x", Verb:"get"}: cannot be specified in combination with resourceAttributes');
  const named = await c.post(`${AUTHZ}/selfsubjectaccessreviews`, sar({ resourceAttributes: { verb: 'get', resource: 'pods' } }, 'SelfSubjectAccessReview', { name: 'mine' }));
  assert.equal(named.status, 422);
  assert.equal(named.body.details.causes[0].field, 'metadata');
  assert.match(named.body.details.causes[0].message, /must be empty$/);
  // SelfSubjectRulesReview needs a namespace: a 400 from the REST, as kube.
  const noNs = await c.post(`${AUTHZ}/selfsubjectrulesreviews`, { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectRulesReview', spec: {} });
  assert.equal(noNs.status, 400);
  assert.equal(noNs.body.message, 'no namespace on request');
});

test('SelfSubjectRulesReview as the admin: the authorizer\'s rules, a fresh review with only the status', async () => {
  await ready();
  const r = await env.plinth.client.post(`${AUTHZ}/selfsubjectrulesreviews`, { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectRulesReview', spec: { namespace: NS } });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  assert.equal(r.body.kind, 'SelfSubjectRulesReview');
  assert.deepEqual(r.body.metadata, { creationTimestamp: null });
  assert.deepEqual(r.body.spec, {});
  assert.ok(Array.isArray(r.body.status.resourceRules) && Array.isArray(r.body.status.nonResourceRules), JSON.stringify(r.body.status));
  assert.equal(typeof r.body.status.incomplete, 'boolean');
  // system:masters is always allowed, but not through rules: kube's rule resolvers list only what
  // policy grants (with the bootstrap policy, cluster-admin's `*` rules).
  for (const rule of r.body.status.resourceRules) assert.ok(Array.isArray(rule.verbs));
});

test('Protobuf: a SubjectAccessReview in and out', async () => {
  await ready();
  const body = encodeProtobuf(sar({ user: 'pb', groups: ['system:masters'], resourceAttributes: { verb: 'get', resource: 'secrets', namespace: NS } }));
  const r = await env.plinth.client.request('POST', `${AUTHZ}/subjectaccessreviews`, { rawBody: body, headers: { 'content-type': PB, accept: PB } });
  assert.equal(r.status, 201, r.raw.toString());
  const out = decodeProtobuf(r.raw) as Record<string, any>;
  assert.equal(out['kind'], 'SubjectAccessReview');
  assert.deepEqual(out['spec'], { user: 'pb', groups: ['system:masters'], resourceAttributes: { verb: 'get', resource: 'secrets', namespace: NS } });
  assert.deepEqual(out['status'], { allowed: true });
  const rules = await env.plinth.client.request('POST', `${AUTHZ}/selfsubjectrulesreviews`, {
    rawBody: encodeProtobuf({ apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectRulesReview', spec: { namespace: NS } }),
    headers: { 'content-type': PB, accept: PB },
  });
  assert.equal(rules.status, 201, rules.raw.toString());
  assert.equal(typeof (decodeProtobuf(rules.raw) as Record<string, any>)['status'].incomplete, 'boolean');
});

test('kubectl auth can-i as the admin: yes (exit 0) for resources, sub-resources, non-resource URLs, namespaces', async () => {
  await ready();
  for (const args of [['get', 'pods'], ['get', 'pods/log', '-n', NS], ['get', '/logs'], ['delete', 'nodes'], ['create', 'deployments.apps', '-n', NS]]) {
    const r = await kubectl('auth', 'can-i', ...args);
    assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
    assert.equal(r.stdout.trim(), 'yes');
  }
});

test('kubectl auth can-i --list prints the rules table', async () => {
  await ready();
  const r = await kubectl('auth', 'can-i', '--list', '-n', NS);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^Resources\s+Non-Resource URLs\s+Resource Names\s+Verbs/);
});

test('kubectl auth can-i --as: the admin asks on behalf of jane, who may read pods in the namespace', async () => {
  await ready();
  const yes = await kubectl('auth', 'can-i', 'get', 'pods', '-n', NS, '--as=jane');
  assert.equal(yes.code, 0, yes.stderr);
  assert.equal(yes.stdout.trim(), 'yes');
  const logs = await kubectl('auth', 'can-i', 'get', 'pods', '--subresource=log', '-n', NS, '--as=jane');
  assert.equal(logs.stdout.trim(), 'yes', logs.stderr);
});

test('(RBAC) kubectl auth can-i: no (exit 1) for what jane is not granted; --list shows her rules', async () => {
  await ready();
  const no = await kubectl('auth', 'can-i', 'delete', 'pods', '-n', NS, '--as=jane');
  assert.equal(no.stdout.trim(), 'no', no.stderr);
  assert.equal(no.code, 1);
  const nonRes = await kubectl('auth', 'can-i', 'get', '/logs', '--as=jane');
  assert.equal(nonRes.stdout.trim(), 'no', nonRes.stderr);
  assert.equal(nonRes.code, 1);
  const list = await kubectl('auth', 'can-i', '--list', '-n', NS, '--as=jane');
  assert.equal(list.code, 0, list.stderr);
  assert.match(list.stdout, /^pods\s+\[\]\s+\[\]\s+\[get list\]$/m);
  assert.match(list.stdout, /^pods\/log\s+\[\]\s+\[\]\s+\[get list\]$/m);
});

test('(RBAC) SubjectAccessReview for a user by bindings, and SelfSubjectRulesReview of bob lists his role', async () => {
  await ready();
  const c = env.plinth.client;
  const allowed = await c.post(`${AUTHZ}/subjectaccessreviews`, sar({ user: 'bob', resourceAttributes: { verb: 'list', resource: 'pods', namespace: NS } }));
  assert.equal(allowed.body.status.allowed, true);
  // kube's RBAC names what allowed it.
  assert.match(allowed.body.status.reason, /^RBAC: allowed by RoleBinding "[^"]+\/reviews" of (Cluster)?Role "[^"]+" to User "bob"$/);
  const refused = await c.post(`${AUTHZ}/subjectaccessreviews`, sar({ user: 'bob', resourceAttributes: { verb: 'delete', resource: 'pods', namespace: NS } }));
  assert.equal(refused.body.status.allowed, false);
  // kube's rule resolvers are the modes' (RBAC), not system:masters' authorizer: the admin's
  // rules are what RBAC grants its groups, and the list is complete.
  const admin = await c.post(`${AUTHZ}/selfsubjectrulesreviews`, { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectRulesReview', spec: { namespace: NS } });
  assert.equal(admin.body.status.incomplete, false, JSON.stringify(admin.body.status));
  const rules = await c.post(`${AUTHZ}/selfsubjectrulesreviews`, { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectRulesReview', spec: { namespace: NS } }, { token: BOB });
  assert.equal(rules.status, 201, JSON.stringify(rules.body));
  assert.equal(rules.body.status.incomplete, false);
  assert.ok(rules.body.status.resourceRules.some((r: any) => JSON.stringify(r) === JSON.stringify({ verbs: ['get', 'list'], apiGroups: [''], resources: ['pods', 'pods/log', 'serviceaccounts'] })), JSON.stringify(rules.body.status));
});

test('impersonation by the admin: kubectl --as/--as-group acts as the user, with kube\'s groups', async () => {
  await ready();
  const whoami = async (...as: string[]): Promise<any> => {
    const r = await kubectl(...as, 'auth', 'whoami', '-o', 'json');
    assert.equal(r.code, 0, r.stderr);
    return JSON.parse(r.stdout).status.userInfo;
  };
  // jane may create selfsubjectreviews (bound above), so this holds under any policy.
  assert.deepEqual(await whoami('--as=jane'), { username: 'jane', groups: ['system:authenticated'] });
  assert.deepEqual(await whoami('--as=jane', '--as-group=devs', '--as-group=qa'), { username: 'jane', groups: ['devs', 'qa', 'system:authenticated'] });
  assert.deepEqual(await whoami('--as=jane', '--as-uid=1234'), { username: 'jane', uid: '1234', groups: ['system:authenticated'] });
});

test('impersonation headers: repeated groups, %-encoded extra keys, service accounts; no user is a 400', async () => {
  await ready();
  const c = env.plinth.client;
  const review = { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' };
  const r = await c.post('/apis/authentication.k8s.io/v1/selfsubjectreviews', review, {
    headers: { 'Impersonate-User': 'jane', 'Impersonate-Group': ['system:masters', 'devs'], 'Impersonate-Extra-Example.com%2Fscopes': ['a', 'b'] } as unknown as Record<string, string>,
  });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  assert.deepEqual(r.body.status.userInfo, { username: 'jane', groups: ['system:masters', 'devs', 'system:authenticated'], extra: { 'example.com/scopes': ['a', 'b'] } });
  const sa = await c.post('/apis/authentication.k8s.io/v1/selfsubjectreviews', review, { headers: { 'Impersonate-User': `system:serviceaccount:${NS}:robot`, 'Impersonate-Group': 'system:masters' } });
  assert.deepEqual(sa.body.status.userInfo, { username: `system:serviceaccount:${NS}:robot`, groups: ['system:masters', 'system:authenticated'] });
  const noUser = await c.get('/api/v1/namespaces', { headers: { 'Impersonate-Group': 'devs' } });
  assert.equal(noUser.status, 400);
  assert.equal(noUser.body.message, 'requested [{Group  devs    }] without impersonating a user');
});

test('(RBAC) impersonation refused: 403 with kube\'s message for a user without the impersonate verb', async () => {
  await ready();
  const c = env.plinth.client;
  const bob = await c.get(`/api/v1/namespaces/${NS}/serviceaccounts`, { token: BOB, headers: { 'Impersonate-User': 'jane' } });
  assert.equal(bob.status, 403);
  assert.equal(bob.body.message, 'users "jane" is forbidden: User "bob" cannot impersonate resource "users" in API group "" at the cluster scope');
  assert.deepEqual(bob.body.details, { name: 'jane', kind: 'users' });
  // carol may impersonate users, not groups.
  const carol = await c.get(`/api/v1/namespaces/${NS}/serviceaccounts`, { token: CAROL, headers: { 'Impersonate-User': 'jane' } });
  assert.equal(carol.status, 200, JSON.stringify(carol.body));
  const group = await c.get(`/api/v1/namespaces/${NS}/serviceaccounts`, { token: CAROL, headers: { 'Impersonate-User': 'jane', 'Impersonate-Group': 'system:masters' } });
  assert.equal(group.status, 403);
  assert.equal(group.body.message, 'groups "system:masters" is forbidden: User "carol" cannot impersonate resource "groups" in API group "" at the cluster scope');
  const kc = await kubectl('--token', BOB, '--as=jane', 'get', 'serviceaccounts', '-n', NS);
  assert.notEqual(kc.code, 0);
  assert.match(kc.stderr, /users "jane" is forbidden: User "bob" cannot impersonate resource "users" in API group "" at the cluster scope/);
});
