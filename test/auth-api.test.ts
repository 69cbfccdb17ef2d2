/**
 * authentication.k8s.io/v1 against a real plinth: TokenReview, SelfSubjectReview and the
 * serviceaccounts/token sub-resource — discovery, OpenAPI, JSON/YAML/Protobuf bodies, the routes
 * kube has (and the 404/405 of those it has not), and kubectl's `auth whoami`, `api-resources`
 * and `create token`. Issuing tokens needs the service-account issuer, tested where it lives.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { rmSync } from 'node:fs';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { decodeProtobuf, encodeProtobuf } from '@plinth/apiserver';
import { eventually, kubectlPath, tempDir, usePlinth } from './harness.js';

// kube 1.28's SelfSubjectReview is served only with its gate on (off by default, as kube 1.24 has no such API).
const env = usePlinth(['--feature-gates=APISelfSubjectReview=true']);
const PB = 'application/vnd.kubernetes.protobuf';
const AUTHN = '/apis/authentication.k8s.io/v1';
const DEFAULT_ISSUER = 'https://kubernetes.default.svc.cluster.local';
const cacheDir = tempDir('plinth-kubectl-cache-');
after(() => rmSync(cacheDir, { recursive: true, force: true }));

/** kubectl against the in-process server: run asynchronously, so this process keeps serving. */
function kubectl(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(kubectlPath(), ['--kubeconfig', env.plinth.server.kubeconfigPath, '--cache-dir', cacheDir, ...args], { encoding: 'utf8', timeout: 60_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

function review(token: string | undefined, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', ...extra, spec: token === undefined ? {} : { token } };
}

test('discovery: the authentication.k8s.io group, its two reviews, and serviceaccounts/token in v1', async () => {
  const c = env.plinth.client;
  const apis = await c.get('/apis');
  const names = apis.body.groups.map((g: { name: string }) => g.name);
  // kube's group order: authentication before rbac.
  assert.ok(names.indexOf('authentication.k8s.io') >= 0 && names.indexOf('authentication.k8s.io') < names.indexOf('rbac.authorization.k8s.io'), names.join());
  const group = await c.get('/apis/authentication.k8s.io');
  assert.deepEqual(group.body, {
    kind: 'APIGroup',
    apiVersion: 'v1',
    name: 'authentication.k8s.io',
    versions: [{ groupVersion: 'authentication.k8s.io/v1', version: 'v1' }],
    preferredVersion: { groupVersion: 'authentication.k8s.io/v1', version: 'v1' },
  });
  const gv = await c.get(AUTHN);
  assert.deepEqual(gv.body, {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: 'authentication.k8s.io/v1',
    resources: [
      // Nothing is stored, so there is no storageVersionHash.
      { name: 'selfsubjectreviews', singularName: 'selfsubjectreview', namespaced: false, kind: 'SelfSubjectReview', verbs: ['create'] },
      { name: 'tokenreviews', singularName: 'tokenreview', namespaced: false, kind: 'TokenReview', verbs: ['create'] },
    ],
  });
  const core = await c.get('/api/v1');
  const token = core.body.resources.find((r: { name: string }) => r.name === 'serviceaccounts/token');
  assert.deepEqual(token, { name: 'serviceaccounts/token', singularName: '', namespaced: true, group: 'authentication.k8s.io', version: 'v1', kind: 'TokenRequest', verbs: ['create'] });
  // The JSON keys in kube's APIResource order.
  assert.match(core.raw.toString(), /"name":"serviceaccounts\/token","singularName":"","namespaced":true,"group":"authentication.k8s.io","version":"v1","kind":"TokenRequest","verbs":\["create"\]/);
  const pb = decodeProtobuf((await c.get(AUTHN, { headers: { accept: PB } })).raw) as { resources: Array<{ name: string }> };
  assert.deepEqual(pb.resources.map((r) => r.name), ['selfsubjectreviews', 'tokenreviews']);
  const pbCore = decodeProtobuf((await c.get('/api/v1', { headers: { accept: PB } })).raw) as { resources: Array<{ name: string }> };
  assert.deepEqual(pbCore.resources.find((r) => r.name === 'serviceaccounts/token'), token);
});

test('OpenAPI v2 and v3 describe the kinds and their create paths', async () => {
  const c = env.plinth.client;
  const v2 = (await c.get('/openapi/v2')).body;
  for (const kind of ['TokenReview', 'TokenReviewSpec', 'TokenReviewStatus', 'UserInfo', 'SelfSubjectReview', 'SelfSubjectReviewStatus', 'TokenRequest', 'TokenRequestSpec', 'TokenRequestStatus', 'BoundObjectReference']) {
    assert.ok(v2.definitions[`io.k8s.api.authentication.v1.${kind}`], kind);
  }
  assert.equal(v2.definitions['io.k8s.api.authentication.v1.TokenReviewList'], undefined);
  assert.equal(v2.paths[`${AUTHN}/tokenreviews`].post.operationId, 'createAuthenticationV1TokenReview');
  assert.equal(v2.paths[`${AUTHN}/selfsubjectreviews`].post.operationId, 'createAuthenticationV1SelfSubjectReview');
  assert.equal(v2.paths['/api/v1/namespaces/{namespace}/serviceaccounts/{name}/token'].post.operationId, 'createCoreV1NamespacedServiceAccountToken');
  const disco = (await c.get('/openapi/v3')).body;
  const doc = (await c.get(disco.paths['apis/authentication.k8s.io/v1'].serverRelativeURL)).body;
  assert.deepEqual(Object.keys(doc.paths).sort(), [`${AUTHN}/selfsubjectreviews`, `${AUTHN}/tokenreviews`]);
  assert.deepEqual(doc.components.schemas['io.k8s.api.authentication.v1.TokenReview']['x-kubernetes-group-version-kind'], [{ group: 'authentication.k8s.io', kind: 'TokenReview', version: 'v1' }]);
  const core = (await c.get(disco.paths['api/v1'].serverRelativeURL)).body;
  const post = core.paths['/api/v1/namespaces/{namespace}/serviceaccounts/{name}/token'].post;
  assert.deepEqual(post.requestBody.content['*/*'].schema, { $ref: '#/components/schemas/io.k8s.api.authentication.v1.TokenRequest' });
  assert.ok(core.components.schemas['io.k8s.api.authentication.v1.TokenRequest']);
});

test('TokenReview of the admin token: authenticated as plinth-admin; metadata and spec come back', async () => {
  const c = env.plinth.client;
  const r = await c.post(`${AUTHN}/tokenreviews`, review(c.token, { metadata: { name: 'check' } }));
  assert.equal(r.status, 201, r.raw.toString());
  assert.equal(r.headers['content-type'], 'application/json');
  assert.equal(r.body.kind, 'TokenReview');
  assert.equal(r.body.apiVersion, 'authentication.k8s.io/v1');
  assert.deepEqual(r.body.metadata, { name: 'check', creationTimestamp: null });
  assert.deepEqual(r.body.spec, { token: c.token });
  assert.equal(r.body.status.authenticated, true);
  assert.equal(r.body.status.user.username, 'plinth-admin');
  assert.ok(r.body.status.user.groups.includes('system:masters'));
  assert.ok(r.body.status.user.groups.includes('system:authenticated'));
  assert.deepEqual(r.body.status.audiences, [DEFAULT_ISSUER]);
  assert.equal(r.body.status.error, undefined);
  // Nothing was stored: there is nothing to read back.
  assert.equal((await c.get(`${AUTHN}/tokenreviews/check`)).status, 404);
});

test('TokenReview of a token nobody issued: not authenticated, kube\'s "invalid bearer token"', async () => {
  const r = await env.plinth.client.post(`${AUTHN}/tokenreviews`, review('not-a-real-token'));
  assert.equal(r.status, 201);
  assert.deepEqual(r.body.status, { user: {}, error: 'invalid bearer token' });
});

test('TokenReview without a token is a 400 BadRequest, as kube\'s REST answers it; a wrong kind is a 400 too', async () => {
  const c = env.plinth.client;
  for (const body of [review(undefined), review('')]) {
    const r = await c.post(`${AUTHN}/tokenreviews`, body);
    assert.equal(r.status, 400);
    assert.equal(r.body.reason, 'BadRequest');
    assert.equal(r.body.message, 'token is required for TokenReview in authentication');
  }
  const wrong = await c.post(`${AUTHN}/tokenreviews`, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'x' } });
  assert.equal(wrong.status, 400);
  assert.match(wrong.body.message, /cannot be handled as a TokenReview/);
  const typed = await c.post(`${AUTHN}/tokenreviews`, { spec: { token: 42 } });
  assert.equal(typed.status, 400);
  assert.match(typed.body.message, /cannot unmarshal number into Go struct field TokenReview\.spec\.token of type string/);
});

test('create options are validated as for any create: dryRun=All is accepted, other values are 422', async () => {
  const c = env.plinth.client;
  const dry = await c.post(`${AUTHN}/tokenreviews?dryRun=All&fieldManager=me`, review(c.token));
  assert.equal(dry.status, 201);
  assert.equal(dry.body.status.authenticated, true);
  const bad = await c.post(`${AUTHN}/tokenreviews?dryRun=Some`, review(c.token));
  assert.equal(bad.status, 422);
  assert.equal(bad.body.details.kind, 'CreateOptions');
});

test('TokenReview in YAML and in Protobuf, both ways', async () => {
  const c = env.plinth.client;
  const yaml = await c.request('POST', `${AUTHN}/tokenreviews`, {
    rawBody: stringifyYaml(review(c.token)),
    headers: { 'content-type': 'application/yaml', accept: 'application/yaml' },
  });
  assert.equal(yaml.status, 201);
  assert.equal(yaml.headers['content-type'], 'application/yaml');
  assert.equal(parseYaml(yaml.raw.toString()).status.user.username, 'plinth-admin');

  const body = encodeProtobuf({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', metadata: { name: 'pb' }, spec: { token: c.token, audiences: [DEFAULT_ISSUER] } });
  const pb = await c.request('POST', `${AUTHN}/tokenreviews`, { rawBody: body, headers: { 'content-type': PB, accept: PB } });
  assert.equal(pb.status, 201, pb.raw.toString());
  assert.equal(pb.headers['content-type'], PB);
  assert.deepEqual([...pb.raw.subarray(0, 4)], [0x6b, 0x38, 0x73, 0x00]);
  const decoded = decodeProtobuf(pb.raw) as { kind: string; metadata: { name: string }; spec: { token: string }; status: { authenticated: boolean; user: { username: string; groups: string[] }; audiences: string[] } };
  assert.equal(decoded.kind, 'TokenReview');
  assert.equal(decoded.metadata.name, 'pb');
  assert.equal(decoded.spec.token, c.token);
  assert.equal(decoded.status.authenticated, true);
  assert.equal(decoded.status.user.username, 'plinth-admin');
  assert.ok(decoded.status.user.groups.includes('system:authenticated'));
  assert.deepEqual(decoded.status.audiences, [DEFAULT_ISSUER]);
});

test('the review resources have one route, POST: other verbs are 405, other paths 404', async () => {
  const c = env.plinth.client;
  for (const plural of ['tokenreviews', 'selfsubjectreviews']) {
    for (const [method, path] of [
      ['GET', `${AUTHN}/${plural}`],
      ['GET', `${AUTHN}/${plural}?watch=true`],
      ['PUT', `${AUTHN}/${plural}`],
      ['DELETE', `${AUTHN}/${plural}`],
    ] as const) {
      const r = await c.request(method, path);
      assert.equal(r.status, 405, `${method} ${path}`);
      assert.equal(r.body.reason, 'MethodNotAllowed');
    }
    for (const [method, path] of [
      ['GET', `${AUTHN}/${plural}/x`],
      ['POST', `${AUTHN}/${plural}/x`],
      ['DELETE', `${AUTHN}/${plural}/x`],
      ['GET', `${AUTHN}/${plural}/x/status`],
      ['POST', `${AUTHN}/namespaces/default/${plural}`],
      ['GET', `${AUTHN}/watch/${plural}`],
    ] as const) {
      const r = await c.request(method, path, method === 'POST' ? { body: review(c.token) } : {});
      assert.equal(r.status, 404, `${method} ${path}`);
      assert.equal(r.body.reason, 'NotFound');
    }
  }
});

test('SelfSubjectReview: the caller as authenticated; anonymous callers are refused by the authorizer', async () => {
  const c = env.plinth.client;
  const r = await c.post(`${AUTHN}/selfsubjectreviews`, { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' });
  assert.equal(r.status, 201, r.raw.toString());
  assert.equal(r.body.kind, 'SelfSubjectReview');
  assert.match(r.body.metadata.creationTimestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  assert.equal(r.body.status.userInfo.username, 'plinth-admin');
  assert.ok(r.body.status.userInfo.groups.includes('system:masters'));
  const pb = await c.request('POST', `${AUTHN}/selfsubjectreviews`, { rawBody: encodeProtobuf({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview', metadata: {} }), headers: { 'content-type': PB, accept: PB } });
  assert.equal((decodeProtobuf(pb.raw) as { status: { userInfo: { username: string } } }).status.userInfo.username, 'plinth-admin');

  const anonymous = await c.post(`${AUTHN}/selfsubjectreviews`, {}, { token: null });
  assert.equal(anonymous.status, 403);
  assert.equal(anonymous.body.reason, 'Forbidden');
  assert.match(anonymous.body.message, /User "system:anonymous" cannot create resource "selfsubjectreviews" in API group "authentication.k8s.io" at the cluster scope/);
});

test('kubectl auth whoami prints the admin identity; kubectl api-resources lists the reviews', async () => {
  const who = await kubectl('auth', 'whoami', '-o', 'json');
  assert.equal(who.code, 0, who.stderr);
  const ssr = JSON.parse(who.stdout);
  assert.equal(ssr.kind, 'SelfSubjectReview');
  assert.equal(ssr.apiVersion, 'authentication.k8s.io/v1');
  assert.equal(ssr.status.userInfo.username, 'plinth-admin');
  assert.deepEqual(ssr.status.userInfo.groups, ['system:masters', 'system:authenticated']);
  const table = await kubectl('auth', 'whoami');
  assert.equal(table.code, 0, table.stderr);
  assert.match(table.stdout, /^Username\s+plinth-admin$/m);

  const resources = await kubectl('api-resources');
  assert.equal(resources.code, 0, resources.stderr);
  assert.match(resources.stdout, /^tokenreviews\s+authentication\.k8s\.io\/v1\s+false\s+TokenReview$/m);
  assert.match(resources.stdout, /^selfsubjectreviews\s+authentication\.k8s\.io\/v1\s+false\s+SelfSubjectReview$/m);
  assert.doesNotMatch(resources.stdout, /serviceaccounts\/token/);
  const creatable = await kubectl('api-resources', '--verbs=create', '--api-group=authentication.k8s.io', '-o', 'name');
  assert.deepEqual(creatable.stdout.trim().split('\n'), ['selfsubjectreviews.authentication.k8s.io', 'tokenreviews.authentication.k8s.io']);
  // Listing something that cannot be listed is kube's MethodNotAllowed.
  assert.match((await kubectl('get', 'tokenreviews')).stderr, /MethodNotAllowed|does not allow this method/);
});

test('TokenRequest: the account must exist, the duration must be at least 10 minutes, the name must match', async () => {
  const c = env.plinth.client;
  assert.equal((await c.post('/api/v1/namespaces/default/serviceaccounts', { metadata: { name: 'token-robot' } })).status, 201);
  const path = '/api/v1/namespaces/default/serviceaccounts/token-robot/token';
  const tr = (spec: Record<string, unknown>, metadata: Record<string, unknown> = {}): Record<string, unknown> => ({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', metadata, spec });

  const missing = await c.post('/api/v1/namespaces/default/serviceaccounts/nope/token', tr({}));
  assert.equal(missing.status, 404);
  assert.equal(missing.body.message, 'serviceaccounts "nope" not found');
  assert.deepEqual(missing.body.details, { name: 'nope', kind: 'serviceaccounts' });

  const short = await c.post(path, tr({ expirationSeconds: 60 }));
  assert.equal(short.status, 422);
  assert.equal(short.body.reason, 'Invalid');
  assert.equal(short.body.message, 'TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes');
  assert.deepEqual(short.body.details, {
    name: '',
    kind: 'TokenRequest',
    causes: [{ reason: 'FieldValueInvalid', message: 'Invalid value: 60: may not specify a duration less than 10 minutes', field: 'spec.expirationSeconds' }],
    group: 'authentication.k8s.io',
  });
  const pbShort = await c.request('POST', path, { rawBody: encodeProtobuf(tr({ expirationSeconds: 59 })), headers: { 'content-type': PB } });
  assert.equal(pbShort.status, 422);
  assert.match(pbShort.body.message, /Invalid value: 59: may not specify a duration less than 10 minutes/);

  const other = await c.post(path, tr({}, { name: 'someone-else' }));
  assert.equal(other.status, 422);
  assert.match(other.body.message, /metadata\.name: Invalid value: "someone-else": must match the service account name if specified/);
  const otherNs = await c.post(path, tr({}, { namespace: 'kube-system' }));
  assert.equal(otherNs.status, 400);
  assert.equal(otherNs.body.message, 'the namespace of the provided object does not match the namespace sent on the request');

  const pod = await c.post(path, tr({ boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'web' } }));
  assert.deepEqual([pod.status, pod.body.message], [404, 'pods "web" not found']);
  const secret = await c.post(path, tr({ boundObjectRef: { kind: 'Secret', apiVersion: 'v1', name: 'gone' } }));
  assert.deepEqual([secret.status, secret.body.message], [404, 'secrets "gone" not found']);

  const wrongKind = await c.post(path, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'token-robot' } });
  assert.equal(wrongKind.status, 400);
  assert.match(wrongKind.body.message, /cannot be handled as a TokenRequest/);
});

test('TokenRequest has one route, POST in a namespace: other verbs are 405, other paths 404', async () => {
  const c = env.plinth.client;
  const path = '/api/v1/namespaces/default/serviceaccounts/token-robot/token';
  for (const method of ['GET', 'PUT', 'PATCH', 'DELETE']) {
    const r = await c.request(method, path, method === 'PUT' || method === 'PATCH' ? { body: {} } : {});
    assert.equal(r.status, 405, method);
    assert.equal(r.body.reason, 'MethodNotAllowed');
  }
  for (const p of ['/api/v1/serviceaccounts/token-robot/token', `${path}/extra`, '/api/v1/watch/namespaces/default/serviceaccounts/token-robot/token']) {
    assert.equal((await c.request(p.includes('watch') ? 'GET' : 'POST', p, { body: {} })).status, 404, p);
  }
});

test('kubectl create token reaches the endpoint and prints the server\'s refusals', async () => {
  const missing = await kubectl('create', 'token', 'nobody', '-n', 'default', '--duration=10m', '--audience=x');
  assert.notEqual(missing.code, 0);
  assert.match(missing.stderr, /serviceaccounts "nobody" not found/);
  const short = await kubectl('create', 'token', 'token-robot', '-n', 'default', '--duration=5m');
  assert.notEqual(short.code, 0);
  assert.match(short.stderr, /may not specify a duration less than 10 minutes/);
});

test('TokenRequest runs validating admission: no token for an account in a terminating namespace', async () => {
  const c = env.plinth.client;
  assert.equal((await c.post('/api/v1/namespaces', { metadata: { name: 'closing' } })).status, 201);
  // A finalizer keeps the account (and so the namespace, Terminating) while the test looks.
  const sa = await c.post('/api/v1/namespaces/closing/serviceaccounts', { metadata: { name: 'robot', finalizers: ['example.com/hold'] } });
  assert.equal(sa.status, 201);
  assert.equal((await c.delete('/api/v1/namespaces/closing')).status, 200);
  const refused = await eventually(async () => {
    const r = await c.post('/api/v1/namespaces/closing/serviceaccounts/robot/token', { spec: {} });
    return r.status === 403 ? r : undefined;
  }, 10_000, 'NamespaceLifecycle to refuse the token');
  assert.equal(refused.body.message, 'serviceaccounts "robot" is forbidden: unable to create new content in namespace closing because it is being terminated');
  const release = await c.request('PATCH', '/api/v1/namespaces/closing/serviceaccounts/robot', {
    rawBody: JSON.stringify({ metadata: { finalizers: null } }),
    headers: { 'content-type': 'application/merge-patch+json' },
  });
  assert.equal(release.status, 200);
});
