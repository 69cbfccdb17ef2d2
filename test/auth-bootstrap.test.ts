/**
 * Bootstrap token authentication and the token cleaner against a real plinth and etcd: tokens
 * backed by `bootstrap.kubernetes.io/token` Secrets in kube-system created through the API, every
 * way a token is refused, and the cleaner deleting expired token Secrets (and nothing else).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import { eventually, usePlinth, type TestClient } from './harness.js';
import { expectCode, expectStatus } from './assertions.js';
import { AUTHENTICATED_PROBE } from './auth-fixtures.js';

const SECRETS = (ns: string): string => `/api/v1/namespaces/${ns}/secrets`;
const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';
const rand = (n: number): string => Array.from({ length: n }, () => ALPHABET[randomInt(ALPHABET.length)]).join('');

interface BootstrapToken {
  id: string;
  token: string;
  path: string;
}

/** Creates the Secret of a fresh token (a kubeadm-style Secret, written with stringData). */
async function createToken(c: TestClient, data: Record<string, string | undefined> = {}, opts: { type?: string; namespace?: string } = {}): Promise<BootstrapToken> {
  const id = rand(6);
  const secret = rand(16);
  const namespace = opts.namespace ?? 'kube-system';
  const stringData: Record<string, string> = { 'token-id': id, 'token-secret': secret, 'usage-bootstrap-authentication': 'true' };
  for (const [k, v] of Object.entries(data)) {
    if (v === undefined) delete stringData[k];
    else stringData[k] = v;
  }
  const res = await c.post(SECRETS(namespace), {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: `bootstrap-token-${id}` },
    type: opts.type ?? 'bootstrap.kubernetes.io/token',
    stringData,
  });
  expectCode(res, 201, 'create bootstrap token secret');
  const path = `${SECRETS(namespace)}/bootstrap-token-${id}`;
  // kube's authenticator reads a Secret lister: a token is usable once the watch cache has seen its
  // Secret. A list at the Secret's resourceVersion, not older, is answered by the cache once it has
  // (an expired token's Secret may already be gone again: the token cleaner is quick).
  const rv = res.body.metadata.resourceVersion as string;
  await eventually(async () => (await c.get(`${SECRETS(namespace)}?resourceVersion=${rv}&resourceVersionMatch=NotOlderThan`)).status === 200, 10_000, 'the watch cache at the token Secret\'s revision');
  return { id, token: `${id}.${secret}`, path };
}

const inSeconds = (s: number): string => new Date(Date.now() + s * 1000).toISOString().replace(/\.\d+Z$/, 'Z');

describe('with --enable-bootstrap-token-auth', () => {
  const env = usePlinth(['--enable-bootstrap-token-auth', '--feature-gates=APISelfSubjectReview=true']);

  it('a token authenticates as system:bootstrap:<id> with its groups', async () => {
    const c = env.plinth.client;
    const tok = await createToken(c, { 'auth-extra-groups': 'system:bootstrappers:kubeadm:default-node-token', expiration: inSeconds(3600), description: 'test' });
    expectCode(await c.get(AUTHENTICATED_PROBE, { token: tok.token }), 200, 'GET namespaces with a bootstrap token');

    const review = await c.post('/apis/authentication.k8s.io/v1/selfsubjectreviews', { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' }, { token: tok.token });
    expectCode(review, 201, 'SelfSubjectReview');
    const user = review.body.status.userInfo;
    assert.equal(user.username, `system:bootstrap:${tok.id}`);
    assert.deepEqual([...user.groups].sort(), ['system:authenticated', 'system:bootstrappers', 'system:bootstrappers:kubeadm:default-node-token']);
  });

  it('a wrong secret part, an unknown id, or a token not marked for authentication is a 401', async () => {
    const c = env.plinth.client;
    const tok = await createToken(c);
    expectCode(await c.get(AUTHENTICATED_PROBE, { token: tok.token }), 200, 'the right token');
    expectStatus(await c.get(AUTHENTICATED_PROBE, { token: `${tok.id}.${rand(16)}` }), 401, 'Unauthorized');
    expectStatus(await c.get(AUTHENTICATED_PROBE, { token: `${rand(6)}.${rand(16)}` }), 401, 'Unauthorized');

    const noUsage = await createToken(c, { 'usage-bootstrap-authentication': undefined });
    expectStatus(await c.get(AUTHENTICATED_PROBE, { token: noUsage.token }), 401, 'Unauthorized');
    const badGroup = await createToken(c, { 'auth-extra-groups': 'system:masters' });
    expectStatus(await c.get(AUTHENTICATED_PROBE, { token: badGroup.token }), 401, 'Unauthorized');
    const notBootstrapType = await createToken(c, {}, { type: 'Opaque' });
    expectStatus(await c.get(AUTHENTICATED_PROBE, { token: notBootstrapType.token }), 401, 'Unauthorized');
  });

  it('an expired token is a 401, and the cleaner deletes its Secret', async () => {
    const c = env.plinth.client;
    const tok = await createToken(c, { expiration: inSeconds(-60) });
    expectStatus(await c.get(AUTHENTICATED_PROBE, { token: tok.token }), 401, 'Unauthorized');
    await eventually(async () => (await c.get(tok.path)).status === 404, 15_000, 'the expired token Secret to be deleted');
  });

  it('a token stops working once its Secret is deleted', async () => {
    const c = env.plinth.client;
    const tok = await createToken(c);
    expectCode(await c.get(AUTHENTICATED_PROBE, { token: tok.token }), 200, 'before deletion');
    expectCode(await c.delete(tok.path), 200, 'delete the Secret');
    await eventually(async () => (await c.get(AUTHENTICATED_PROBE, { token: tok.token })).status === 401, 15_000, 'the token to be refused');
  });

  it('the cleaner deletes a token Secret when its expiration passes, and leaves the others alone', async () => {
    const c = env.plinth.client;
    const expiring = await createToken(c, { expiration: inSeconds(3) });
    const later = await createToken(c, { expiration: inSeconds(3600) });
    const forever = await createToken(c);
    // Not bootstrap token Secrets of kube-system: an Opaque one, and one in another namespace.
    const opaque = await createToken(c, { expiration: inSeconds(-60) }, { type: 'Opaque' });
    const elsewhere = await createToken(c, { expiration: inSeconds(-60) }, { namespace: 'default' });

    await eventually(async () => (await c.get(expiring.path)).status === 404, 20_000, 'the expiring token Secret to be deleted');
    for (const kept of [later, forever, opaque, elsewhere]) expectCode(await c.get(kept.path), 200, `${kept.path} kept`);
    expectCode(await c.get(AUTHENTICATED_PROBE, { token: later.token }), 200, 'an unexpired token still works');
  });
});

describe('without --enable-bootstrap-token-auth', () => {
  const env = usePlinth([]);

  it('a bootstrap token is a 401 and no cleaner deletes expired token Secrets', async () => {
    const c = env.plinth.client;
    const tok = await createToken(c);
    expectStatus(await c.get(AUTHENTICATED_PROBE, { token: tok.token }), 401, 'Unauthorized');
    const expired = await createToken(c, { expiration: inSeconds(-60) });
    // With the flag the cleaner deletes such a Secret as soon as it sees it; give it that chance.
    await new Promise((r) => setTimeout(r, 2000));
    expectCode(await c.get(expired.path), 200, 'the expired token Secret is still there');
  });
});
