/**
 * Service-account tokens against a real plinth: legacy token Secrets filled by the token
 * controller authenticate as their account until the Secret or the account goes; the discovery
 * documents let a relying party verify tokens with jose; configured issuers, audiences and keys
 * (bound tokens signed with a key the test owns); the generated signing key survives a restart.
 */
import { describe, it, before, after, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, createPublicKey, generateKeyPairSync, randomUUID, type KeyObject } from 'node:crypto';
import { existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SignJWT, createLocalJWKSet, jwtVerify, decodeJwt, type JSONWebKeySet } from 'jose';
import { usePlinth, eventually, startProcess, startTestEtcd, tempDir, type TestClient, type TestEtcd } from './harness.js';
import { expectCode, expectStatus } from './assertions.js';
import { AUTHENTICATED_PROBE } from './auth-fixtures.js';

const saPath = (ns: string, name = ''): string => `/api/v1/namespaces/${ns}/serviceaccounts${name ? `/${name}` : ''}`;
const secretPath = (ns: string, name = ''): string => `/api/v1/namespaces/${ns}/secrets${name ? `/${name}` : ''}`;
const SSR = '/apis/authentication.k8s.io/v1/selfsubjectreviews';

async function createNamespace(c: TestClient, name: string): Promise<void> {
  expectCode(await c.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } }), 201, `namespace ${name}`);
}

async function createAccount(c: TestClient, ns: string, name: string): Promise<any> {
  const res = await c.post(saPath(ns), { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name } });
  expectCode(res, 201, `serviceaccount ${name}`);
  return res.body;
}

function tokenSecret(name: string, account: string, annotations: Record<string, string> = {}): unknown {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, annotations: { 'kubernetes.io/service-account.name': account, ...annotations } },
    type: 'kubernetes.io/service-account-token',
  };
}

const b64 = (s: string | undefined): string => Buffer.from(s ?? '', 'base64').toString('utf8');

/** Creates a token Secret for the account and waits for the controller to fill it; the Secret. */
async function legacyTokenSecret(c: TestClient, ns: string, name: string, account: string): Promise<any> {
  expectCode(await c.post(secretPath(ns), tokenSecret(name, account)), 201, `secret ${name}`);
  return eventually(async () => {
    const res = await c.get(secretPath(ns, name));
    return res.status === 200 && res.body.data?.token ? res.body : undefined;
  }, 10_000, `the token of ${ns}/${name}`);
}

async function statusWith(c: TestClient, token: string, path = AUTHENTICATED_PROBE): Promise<number> {
  return (await c.get(path, { token })).status;
}

/** The identity the server saw (SelfSubjectReview). */
async function whoami(_t: TestContext, c: TestClient, token: string): Promise<any> {
  const res = await c.post(SSR, { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' }, { token });
  expectCode(res, 201, 'selfsubjectreview');
  return res.body.status.userInfo;
}

describe('service-account tokens with the embedded defaults', () => {
  const env = usePlinth(['--feature-gates=APISelfSubjectReview=true']);
  let c: TestClient;
  const ns = 'sa-legacy';
  before(async () => {
    c = env.plinth.client;
    await createNamespace(c, ns);
  });

  let robot: { uid: string; token: string } | undefined;

  it('fills a token Secret (token, ca.crt, namespace, uid) and the token is the account', async () => {
    const sa = await createAccount(c, ns, 'robot');
    const secret = await legacyTokenSecret(c, ns, 'robot-token', 'robot');
    assert.equal(b64(secret.data['ca.crt']), readFileSync(env.plinth.server.caFile!, 'utf8'), 'ca.crt is the CA the admin kubeconfig trusts');
    assert.equal(b64(secret.data.namespace), ns);
    assert.equal(secret.metadata.annotations['kubernetes.io/service-account.uid'], sa.metadata.uid);
    const token = b64(secret.data.token);
    assert.deepEqual(
      { ...decodeJwt(token) },
      {
        iss: 'kubernetes/serviceaccount',
        'kubernetes.io/serviceaccount/namespace': ns,
        'kubernetes.io/serviceaccount/secret.name': 'robot-token',
        'kubernetes.io/serviceaccount/service-account.name': 'robot',
        'kubernetes.io/serviceaccount/service-account.uid': sa.metadata.uid,
        sub: `system:serviceaccount:${ns}:robot`,
      },
    );
    assert.equal(await statusWith(c, token), 200);
    // No token Secret is made for an account on its own (1.24: no auto-generation).
    const list = await c.get(secretPath(ns));
    assert.deepEqual(list.body.items.map((s: any) => s.metadata.name), ['robot-token']);
    robot = { uid: sa.metadata.uid, token };
  });

  it('the server sees the account: user, uid, groups (SelfSubjectReview)', async (t) => {
    assert.ok(robot, 'the token of the test above');
    const user = await whoami(t, c, robot.token);
    assert.equal(user.username, `system:serviceaccount:${ns}:robot`);
    assert.equal(user.uid, robot.uid);
    assert.deepEqual(user.groups, ['system:serviceaccounts', `system:serviceaccounts:${ns}`, 'system:authenticated']);
    assert.equal(user.extra, undefined);
  });

  it('a deleted token Secret revokes its token (401)', async () => {
    await createAccount(c, ns, 'short-lived');
    const token = b64((await legacyTokenSecret(c, ns, 'short-lived-token', 'short-lived')).data.token);
    assert.equal(await statusWith(c, token), 200);
    expectCode(await c.delete(secretPath(ns, 'short-lived-token')), 200);
    await eventually(async () => (await statusWith(c, token)) === 401, 5000, '401 after the Secret is deleted');
    expectStatus(await c.get(AUTHENTICATED_PROBE, { token }), 401, 'Unauthorized');
  });

  it('a deleted account takes its token Secrets and tokens with it; a new account of that name is another', async () => {
    await createAccount(c, ns, 'doomed');
    const token = b64((await legacyTokenSecret(c, ns, 'doomed-token', 'doomed')).data.token);
    assert.equal(await statusWith(c, token), 200);
    expectCode(await c.delete(saPath(ns, 'doomed')), 200);
    await eventually(async () => (await c.get(secretPath(ns, 'doomed-token'))).status === 404, 10_000, 'the token Secret deleted');
    await eventually(async () => (await statusWith(c, token)) === 401, 5000, '401 after the account is deleted');
    const again = await createAccount(c, ns, 'doomed');
    assert.equal(await statusWith(c, token), 401, 'the old token is not the new account');
    // The new account's own token works.
    const fresh = b64((await legacyTokenSecret(c, ns, 'doomed-token-2', 'doomed')).data.token);
    assert.equal(decodeJwt(fresh)['kubernetes.io/serviceaccount/service-account.uid'], again.metadata.uid);
    assert.equal(await statusWith(c, fresh), 200);
  });

  it('token Secrets of a missing account, or of another uid, are deleted', async () => {
    expectCode(await c.post(secretPath(ns), tokenSecret('orphan-token', 'nobody')), 201);
    await createAccount(c, ns, 'real');
    expectCode(await c.post(secretPath(ns), tokenSecret('stale-token', 'real', { 'kubernetes.io/service-account.uid': randomUUID() })), 201);
    for (const name of ['orphan-token', 'stale-token']) {
      await eventually(async () => (await c.get(secretPath(ns, name))).status === 404, 10_000, `${name} deleted`);
    }
  });

  it('serves the discovery documents; the JWKS verifies tokens', async () => {
    const cfg = await c.get('/.well-known/openid-configuration');
    expectCode(cfg, 200);
    assert.equal(cfg.headers['content-type'], 'application/json');
    assert.equal(cfg.headers['cache-control'], 'public, max-age=3600');
    assert.deepEqual(cfg.body, {
      issuer: 'https://kubernetes.default.svc.cluster.local',
      jwks_uri: `${env.plinth.server.url}/openid/v1/jwks`,
      response_types_supported: ['id_token'],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: ['RS256'],
    });

    const jwks = await c.get('/openid/v1/jwks');
    expectCode(jwks, 200);
    assert.equal(jwks.headers['content-type'], 'application/jwk-set+json');
    assert.equal(jwks.body.keys.length, 1);
    const [key] = jwks.body.keys;
    assert.deepEqual([key.use, key.kty, key.alg], ['sig', 'RSA', 'RS256']);
    assert.equal(key.d, undefined, 'no private key material');
    // kube's kid: SHA-256 of the DER public key of the generated signing key.
    const der = createPublicKey(readFileSync(join(env.plinth.dataDir, 'sa-signing.key'))).export({ type: 'spki', format: 'der' });
    assert.equal(key.kid, createHash('sha256').update(der).digest('base64url'));

    await createAccount(c, ns, 'verified');
    const token = b64((await legacyTokenSecret(c, ns, 'verified-token', 'verified')).data.token);
    const { payload, protectedHeader } = await jwtVerify(token, createLocalJWKSet(jwks.body as JSONWebKeySet), { issuer: 'kubernetes/serviceaccount' });
    assert.equal(payload.sub, `system:serviceaccount:${ns}:verified`);
    assert.equal(protectedHeader.kid, key.kid);
  });
});

describe('service-account tokens with configured issuers, audiences and keys', () => {
  const dir = tempDir('plinth-sa-keys-');
  const signing = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const extra = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const signingFile = join(dir, 'sa.key');
  const extraFile = join(dir, 'old.pub');
  writeFileSync(signingFile, signing.privateKey.export({ type: 'pkcs1', format: 'pem' }));
  writeFileSync(extraFile, extra.publicKey.export({ type: 'spki', format: 'pem' }));
  const env = usePlinth([
    '--feature-gates=APISelfSubjectReview=true',
    '--service-account-issuer=https://issuer.example',
    '--service-account-issuer=https://previous.example',
    '--api-audiences=api',
    '--service-account-max-token-expiration=1h',
    `--service-account-signing-key-file=${signingFile}`,
    `--service-account-key-file=${extraFile}`,
  ]);
  let c: TestClient;
  const ns = 'sa-bound';
  const kidOf = (k: KeyObject): string => createHash('sha256').update(k.export({ type: 'spki', format: 'der' })).digest('base64url');
  let uid = '';
  before(async () => {
    c = env.plinth.client;
    await createNamespace(c, ns);
    uid = (await createAccount(c, ns, 'app')).metadata.uid;
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  /** A bound token as kube issues one, for ns/app. */
  const bound = (over: Record<string, unknown> = {}, key: KeyObject = signing.privateKey, alg = 'RS256', kid = kidOf(signing.publicKey)) => {
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({ iss: 'https://issuer.example', sub: `system:serviceaccount:${ns}:app`, aud: ['api'], iat: now, nbf: now, exp: now + 600, jti: randomUUID(), 'kubernetes.io': { namespace: ns, serviceaccount: { name: 'app', uid } }, ...over })
      .setProtectedHeader({ alg, kid })
      .sign(key);
  };

  it('bound tokens of any configured issuer and any configured key authenticate', async () => {
    assert.equal(await statusWith(c, await bound()), 200);
    assert.equal(await statusWith(c, await bound({ iss: 'https://previous.example' })), 200);
    assert.equal(await statusWith(c, await bound({}, extra.privateKey, 'ES256', kidOf(extra.publicKey))), 200);
    // With a signing key given, none is generated.
    assert.equal(existsSync(join(env.plinth.dataDir, 'sa-signing.key')), false);
  });

  it('a bound token is its account to the server (SelfSubjectReview)', async (t) => {
    const user = await whoami(t, c, await bound());
    assert.equal(user.username, `system:serviceaccount:${ns}:app`);
    assert.equal(user.uid, uid);
    assert.deepEqual(user.groups, ['system:serviceaccounts', `system:serviceaccounts:${ns}`, 'system:authenticated']);
  });

  it('refuses tokens for other audiences, expired, of other keys, or of vanished accounts', async () => {
    assert.equal(await statusWith(c, await bound({ aud: ['https://issuer.example'] })), 401, 'not for --api-audiences');
    assert.equal(await statusWith(c, await bound({ exp: Math.floor(Date.now() / 1000) - 120 })), 401, 'expired');
    const stranger = generateKeyPairSync('rsa', { modulusLength: 2048 });
    assert.equal(await statusWith(c, await bound({}, stranger.privateKey, 'RS256', kidOf(stranger.publicKey))), 401, 'unknown key');
    assert.equal(await statusWith(c, await bound({ 'kubernetes.io': { namespace: ns, serviceaccount: { name: 'app', uid: randomUUID() } } })), 401, 'another uid');
    assert.equal(await statusWith(c, await bound({ 'kubernetes.io': { namespace: ns, serviceaccount: { name: 'app', uid }, secret: { name: 'gone', uid: randomUUID() } } })), 401, 'bound Secret missing');
    // Another issuer's JWT is not a service-account token at all (and nothing else takes it).
    assert.equal(await statusWith(c, await bound({ iss: 'https://elsewhere.example' })), 401);
  });

  it('legacy tokens still work; discovery names the first issuer and every key', async () => {
    await createAccount(c, ns, 'legacy');
    const secret = await legacyTokenSecret(c, ns, 'legacy-token', 'legacy');
    const token = b64(secret.data.token);
    assert.equal(await statusWith(c, token), 200);

    const cfg = await c.get('/.well-known/openid-configuration');
    expectCode(cfg, 200);
    assert.equal(cfg.body.issuer, 'https://issuer.example');
    assert.equal(cfg.body.jwks_uri, `${env.plinth.server.url}/openid/v1/jwks`);
    assert.deepEqual(cfg.body.id_token_signing_alg_values_supported, ['ES256', 'RS256']);
    const jwks = await c.get('/openid/v1/jwks');
    assert.deepEqual(jwks.body.keys.map((k: any) => k.kid).sort(), [kidOf(signing.publicKey), kidOf(extra.publicKey)].sort());
    const set = createLocalJWKSet(jwks.body as JSONWebKeySet);
    await jwtVerify(token, set, { issuer: 'kubernetes/serviceaccount' });
    await jwtVerify(await bound(), set, { issuer: 'https://issuer.example', audience: 'api' });
  });
});

describe('the generated signing key', () => {
  let etcd: TestEtcd;
  const dataDir = tempDir('plinth-sa-restart-');
  before(async () => {
    etcd = await startTestEtcd();
  });
  after(async () => {
    await etcd?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('is private to its owner and reused after a restart: tokens survive', async () => {
    const args = [`--etcd-servers=${etcd.endpoint}`];
    const first = await startProcess(dataDir, args);
    let token: string;
    let keyPem: string;
    try {
      await createNamespace(first.client, 'sa-restart');
      await createAccount(first.client, 'sa-restart', 'survivor');
      token = b64((await legacyTokenSecret(first.client, 'sa-restart', 'survivor-token', 'survivor')).data.token);
      assert.equal(await statusWith(first.client, token), 200);
      const keyFile = join(dataDir, 'sa-signing.key');
      assert.equal(statSync(keyFile).mode & 0o777, 0o600);
      keyPem = readFileSync(keyFile, 'utf8');
    } finally {
      await first.stop();
    }
    const second = await startProcess(dataDir, args);
    try {
      assert.equal(readFileSync(join(dataDir, 'sa-signing.key'), 'utf8'), keyPem, 'the same key');
      assert.equal(await statusWith(second.client, token), 200, 'a token from before the restart');
    } finally {
      await second.stop();
    }
  });
});
