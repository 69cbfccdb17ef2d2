/**
 * Webhook token authentication against a local HTTPS TokenReview service started here (its own
 * CA; it requires the client certificate the webhook kubeconfig names): accepted and refused
 * tokens, the TokenReview each --authentication-token-webhook-version sends, kube's audience
 * rule, the cache (one webhook call per token within the TTL, refusals cached, errors not), and
 * the TTL observed after the webhook goes away.
 */
import { before, after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { eventually, startInProcess, tempDir, usePlinth, type InProcessPlinth } from './harness.js';
import { expectCode, expectStatus } from './assertions.js';
import { AUTHENTICATED_PROBE, Pki, TokenReviewService } from './auth-fixtures.js';

const API_AUDIENCE = 'https://plinth.test';
const CLIENT_CN = 'plinth-webhook-client';
const TTL = '4s';

const dir = tempDir('plinth-webhook-');
const certs = join(dir, 'certs');
const serviceV1beta1 = new TokenReviewService();
const serviceV1 = new TokenReviewService();
/** v1beta1 (the default) with a short TTL: files referenced by paths relative to the kubeconfig. */
const kubeconfigV1beta1 = join(dir, 'v1beta1.kubeconfig');
/** v1 with the default TTL (2m): credentials inline as -data. */
const kubeconfigV1 = join(dir, 'v1.kubeconfig');
let plinthV1: InProcessPlinth | undefined;

before(async () => {
  mkdirSync(certs);
  const pki = new Pki(certs).rootCA('ca').serving('server', 'ca').issue('client', `/CN=${CLIENT_CN}`, 'ca');
  const tls = { cert: pki.pem('server'), key: pki.keyPem('server'), ca: pki.pem('ca') };
  await serviceV1beta1.start(tls);
  await serviceV1.start(tls);
  // No current-context would be no configuration at all (client-go), so both name one.
  writeFileSync(
    kubeconfigV1beta1,
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      '- name: authn',
      '  cluster:',
      `    server: https://127.0.0.1:${serviceV1beta1.port}/authenticate?ignored=1`,
      '    certificate-authority: certs/ca.crt',
      'users:',
      '- name: apiserver',
      '  user:',
      '    client-certificate: certs/client.crt',
      '    client-key: certs/client.key',
      'contexts:',
      '- name: webhook',
      '  context: {cluster: authn, user: apiserver}',
      'current-context: webhook',
      '',
    ].join('\n'),
  );
  const b64 = (f: string): string => readFileSync(join(certs, f)).toString('base64');
  writeFileSync(
    kubeconfigV1,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'authn', cluster: { server: `https://127.0.0.1:${serviceV1.port}/v1/review`, 'certificate-authority-data': b64('ca.crt') } }],
      users: [{ name: 'apiserver', user: { 'client-certificate-data': b64('client.crt'), 'client-key-data': b64('client.key') } }],
      contexts: [{ name: 'webhook', context: { cluster: 'authn', user: 'apiserver' } }],
      'current-context': 'webhook',
    }),
  );
});
after(async () => {
  await plinthV1?.stop();
});

const env = usePlinth(['--feature-gates=APISelfSubjectReview=true', `--authentication-token-webhook-config-file=${kubeconfigV1beta1}`, `--authentication-token-webhook-cache-ttl=${TTL}`, `--api-audiences=${API_AUDIENCE}`]);

before(async () => {
  plinthV1 = await startInProcess({ etcd: env.etcd, args: [`--authentication-token-webhook-config-file=${kubeconfigV1}`, '--authentication-token-webhook-version=v1', `--api-audiences=${API_AUDIENCE}`] });
});
after(async () => {
  await serviceV1beta1.stop();
  await serviceV1.stop();
  rmSync(dir, { recursive: true, force: true });
});

const NAMESPACES = AUTHENTICATED_PROBE;

describe('webhook token authentication (v1beta1, the default)', () => {
  it('authenticates a token the webhook accepts, after a TokenReview over mutual TLS', async () => {
    const token = 'good-v1beta1';
    expectCode(await env.plinth.client.get(NAMESPACES, { token }), 200, 'list namespaces with an accepted token');
    const review = serviceV1beta1.reviews.find((r) => r.spec.token === token);
    assert.ok(review, 'the webhook was asked');
    assert.equal(review.apiVersion, 'authentication.k8s.io/v1beta1');
    assert.equal(review.kind, 'TokenReview');
    // kube sends the API audiences of an ordinary request.
    assert.deepEqual(review.spec, { token, audiences: [API_AUDIENCE] });
    // The server's path, cleaned, without the query; plinth's certificate from the kubeconfig.
    assert.equal(review.path, '/authenticate');
    assert.equal(review.clientCN, CLIENT_CN);
  });

  it('sees the user, uid, groups and extra the webhook returned', async () => {
    const res = await env.plinth.client.post('/apis/authentication.k8s.io/v1/selfsubjectreviews', { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' }, { token: 'good-whoami' });
    expectCode(res, 201, 'SelfSubjectReview');
    assert.deepEqual(res.body.status.userInfo, {
      username: 'alice@example.com',
      uid: 'alice-uid',
      groups: ['developers', 'webhook-users', 'system:authenticated'],
      extra: { 'example.com/team': ['payments', 'ops'] },
    });
  });

  it('answers 401 for a token the webhook refuses, and for one meant for other audiences', async () => {
    expectStatus(await env.plinth.client.get(NAMESPACES, { token: 'refuse-me' }), 401, 'Unauthorized');
    expectStatus(await env.plinth.client.get(NAMESPACES, { token: 'error-me' }), 401, 'Unauthorized');
    // Authenticated, but for https://elsewhere.test only: no overlap with the API audiences.
    expectStatus(await env.plinth.client.get(NAMESPACES, { token: 'aud-elsewhere' }), 401, 'Unauthorized');
    assert.equal(serviceV1beta1.seen('aud-elsewhere'), 1);
  });
});

describe('webhook token authentication (v1)', () => {
  it('sends authentication.k8s.io/v1 TokenReviews and authenticates', async () => {
    expectCode(await plinthV1!.client.get(NAMESPACES, { token: 'good-v1' }), 200, 'list namespaces with an accepted token');
    const review = serviceV1.reviews.find((r) => r.spec.token === 'good-v1');
    assert.ok(review);
    assert.equal(review.apiVersion, 'authentication.k8s.io/v1');
    assert.equal(review.kind, 'TokenReview');
    assert.deepEqual(review.spec.audiences, [API_AUDIENCE]);
    assert.equal(review.path, '/v1/review');
    assert.equal(review.clientCN, CLIENT_CN);
  });

  it('asks the webhook once per token within the TTL, concurrent requests included', async () => {
    const token = 'good-repeated';
    for (let i = 0; i < 5; i++) expectCode(await plinthV1!.client.get(NAMESPACES, { token }), 200);
    const concurrent = await Promise.all(Array.from({ length: 5 }, () => plinthV1!.client.get(NAMESPACES, { token: 'good-concurrent' })));
    for (const res of concurrent) expectCode(res, 200);
    assert.equal(serviceV1.seen(token), 1);
    assert.equal(serviceV1.seen('good-concurrent'), 1);
  });

  it('caches refusals too, but not errors', async () => {
    for (let i = 0; i < 3; i++) expectStatus(await plinthV1!.client.get(NAMESPACES, { token: 'refuse-cached' }), 401, 'Unauthorized');
    assert.equal(serviceV1.seen('refuse-cached'), 1);
    for (let i = 0; i < 2; i++) expectStatus(await plinthV1!.client.get(NAMESPACES, { token: 'error-uncached' }), 401, 'Unauthorized');
    assert.equal(serviceV1.seen('error-uncached'), 2, 'an answer with status.error is an error: asked again');
  });
});

describe('the cache TTL once the webhook is gone', () => {
  it(`keeps a cached token working for --authentication-token-webhook-cache-ttl (${TTL}), then refuses it`, async () => {
    const token = 'good-ttl';
    expectCode(await env.plinth.client.get(NAMESPACES, { token }), 200, 'before the webhook stops');
    await serviceV1beta1.stop();
    expectCode(await env.plinth.client.get(NAMESPACES, { token }), 200, 'cached, right after the webhook stopped');
    // A token not in the cache cannot be checked: 401.
    expectStatus(await env.plinth.client.get(NAMESPACES, { token: 'good-never-seen' }), 401, 'Unauthorized');
    await eventually(async () => (await env.plinth.client.get(NAMESPACES, { token })).status === 401, 20_000, 'the cached answer to expire');
    assert.equal(serviceV1beta1.seen(token), 1);
  });
});
