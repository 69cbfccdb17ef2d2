import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify } from 'jose';
import { buildServiceAccountKeys, keyIdOf, type ServiceAccountKeys } from './keys.js';
import { createServiceAccountTokenIssuer, type ServiceAccountTokenIssuerOptions } from './issuer.js';
import { EXPIRATION_EXTENSION_SECONDS } from './claims.js';

const dir = mkdtempSync(join(tmpdir(), 'plinth-sa-issuer-'));
after(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
async function keysFor(privateKey: KeyObject, extraPublic: KeyObject[] = []): Promise<ServiceAccountKeys> {
  const signingKeyFile = join(dir, `k${n++}.pem`);
  writeFileSync(signingKeyFile, privateKey.export({ type: 'pkcs8', format: 'pem' }));
  const keyFiles = extraPublic.map((k) => {
    const f = join(dir, `p${n++}.pem`);
    writeFileSync(f, k.export({ type: 'spki', format: 'pem' }));
    return f;
  });
  return buildServiceAccountKeys({ signingKeyFile, keyFiles }, dir);
}

const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
const NOW = new Date('2024-05-01T12:00:00.400Z');
const NOW_S = Math.floor(NOW.getTime() / 1000);

async function issuerWith(o: Partial<ServiceAccountTokenIssuerOptions> = {}) {
  return createServiceAccountTokenIssuer({
    keys: await keysFor(rsa.privateKey),
    issuers: ['https://issuer.example', 'https://old.example'],
    apiAudiences: ['api', 'https://issuer.example'],
    maxExpirationSeconds: 0,
    extendExpiration: true,
    jwksURI: '',
    now: () => NOW,
    ...o,
  });
}

const req = { namespace: 'ns1', name: 'robot', uid: 'sa-uid', audiences: ['api'], expirationSeconds: 3600 };

test('bound tokens carry kube\'s claims, signed by the first issuer with the key\'s kid', async () => {
  const issuer = await issuerWith();
  const { token, expirationTimestamp } = await issuer.issue({ ...req, boundObject: { kind: 'Secret', apiVersion: 'v1', name: 's1', uid: 'secret-uid' } });
  assert.deepEqual(decodeProtectedHeader(token), { alg: 'RS256', kid: keyIdOf(rsa.publicKey) });
  const claims = decodeJwt(token);
  assert.match(String(claims.jti), /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.deepEqual(
    { ...claims, jti: 'x' },
    {
      aud: ['api'],
      exp: NOW_S + 3600,
      iat: NOW_S,
      iss: 'https://issuer.example',
      jti: 'x',
      'kubernetes.io': { namespace: 'ns1', serviceaccount: { name: 'robot', uid: 'sa-uid' }, secret: { name: 's1', uid: 'secret-uid' } },
      nbf: NOW_S,
      sub: 'system:serviceaccount:ns1:robot',
    },
  );
  // Claims in go-jose's order (sorted keys).
  assert.deepEqual(Object.keys(claims), ['aud', 'exp', 'iat', 'iss', 'jti', 'kubernetes.io', 'nbf', 'sub']);
  assert.equal(expirationTimestamp.getTime(), (NOW_S + 3600) * 1000);
  const second = await issuer.issue(req);
  assert.notEqual(decodeJwt(second.token).jti, claims.jti, 'every token has its own jti');
  assert.equal((decodeJwt(second.token)['kubernetes.io'] as Record<string, unknown>)['secret'], undefined);
});

test('the lifetime is capped by --service-account-max-token-expiration', async () => {
  const issuer = await issuerWith({ maxExpirationSeconds: 7200 });
  const { token, expirationTimestamp } = await issuer.issue({ ...req, expirationSeconds: 86400 });
  assert.equal(decodeJwt(token).exp, NOW_S + 7200);
  assert.equal(expirationTimestamp.getTime(), (NOW_S + 7200) * 1000);
  assert.equal(decodeJwt((await issuer.issue({ ...req, expirationSeconds: 600 })).token).exp, NOW_S + 600);
});

test('only pod-bound API tokens of exactly 1h7s are extended (warnafter), as kube\'s safe rollout', async () => {
  const issuer = await issuerWith();
  const pod = { kind: 'Pod' as const, apiVersion: 'v1', name: 'p', uid: 'pod-uid' };
  const extended = await issuer.issue({ ...req, expirationSeconds: 3607, boundObject: pod });
  const c = decodeJwt(extended.token);
  assert.equal(c.exp, NOW_S + EXPIRATION_EXTENSION_SECONDS);
  assert.deepEqual(c['kubernetes.io'], { namespace: 'ns1', serviceaccount: { name: 'robot', uid: 'sa-uid' }, pod: { name: 'p', uid: 'pod-uid' }, warnafter: NOW_S + 3607 });
  // The status reports the requested expiry.
  assert.equal(extended.expirationTimestamp.getTime(), (NOW_S + 3607) * 1000);

  const notExtended = async (r: Parameters<typeof issuer.issue>[0], i = issuer) => assert.equal(decodeJwt((await i.issue(r)).token).exp, NOW_S + r.expirationSeconds);
  await notExtended({ ...req, expirationSeconds: 3607 }); // not pod-bound
  await notExtended({ ...req, expirationSeconds: 3607, boundObject: { ...pod, kind: 'Secret' } });
  await notExtended({ ...req, expirationSeconds: 3608, boundObject: pod });
  await notExtended({ ...req, audiences: ['vault'], expirationSeconds: 3607, boundObject: pod }); // not for the API
  await notExtended({ ...req, expirationSeconds: 3607, boundObject: pod }, await issuerWith({ extendExpiration: false }));
});

test('legacy tokens: kube\'s legacy claims, no audience, no expiry', async () => {
  const issuer = await issuerWith();
  const token = await issuer.issueLegacy({ namespace: 'ns1', serviceAccountName: 'robot', serviceAccountUID: 'sa-uid', secretName: 'robot-token' });
  assert.deepEqual(decodeProtectedHeader(token), { alg: 'RS256', kid: keyIdOf(rsa.publicKey) });
  assert.deepEqual(decodeJwt(token), {
    iss: 'kubernetes/serviceaccount',
    'kubernetes.io/serviceaccount/namespace': 'ns1',
    'kubernetes.io/serviceaccount/secret.name': 'robot-token',
    'kubernetes.io/serviceaccount/service-account.name': 'robot',
    'kubernetes.io/serviceaccount/service-account.uid': 'sa-uid',
    sub: 'system:serviceaccount:ns1:robot',
  });
});

test('discovery documents: issuer, jwks_uri, algorithms; the JWKS verifies issued tokens', async () => {
  const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const issuer = createServiceAccountTokenIssuer({
    keys: await keysFor(rsa.privateKey, [ec.publicKey]),
    issuers: ['https://issuer.example'],
    apiAudiences: ['api'],
    maxExpirationSeconds: 0,
    extendExpiration: true,
    jwksURI: '',
  });
  assert.deepEqual(issuer.openidConfiguration('127.0.0.1:6443'), {
    issuer: 'https://issuer.example',
    jwks_uri: 'https://127.0.0.1:6443/openid/v1/jwks',
    response_types_supported: ['id_token'],
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: ['ES256', 'RS256'],
  });
  const jwks = issuer.jwks();
  assert.deepEqual(
    jwks.keys.map((k) => [k['use'], k['kty'], k['alg'], k['kid']]),
    [
      ['sig', 'EC', 'ES256', keyIdOf(ec.publicKey)],
      ['sig', 'RSA', 'RS256', keyIdOf(rsa.publicKey)],
    ],
  );
  assert.deepEqual(Object.keys(jwks.keys[1]!), ['use', 'kty', 'kid', 'alg', 'n', 'e']);
  const { token } = await issuer.issue(req);
  const { payload } = await jwtVerify(token, createLocalJWKSet(jwks as Parameters<typeof createLocalJWKSet>[0]), { issuer: 'https://issuer.example', audience: 'api' });
  assert.equal(payload.sub, 'system:serviceaccount:ns1:robot');

  const pinned = await issuerWith({ jwksURI: 'https://keys.example/jwks' });
  assert.equal(pinned.openidConfiguration('127.0.0.1:6443')['jwks_uri'], 'https://keys.example/jwks');
});
