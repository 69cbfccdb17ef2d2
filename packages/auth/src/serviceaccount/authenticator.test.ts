import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SignJWT, base64url, decodeJwt } from 'jose';
import type { StoredObject } from '@plinth/api';
import { buildServiceAccountKeys, keyIdOf, type ServiceAccountKeys } from './keys.js';
import { createServiceAccountTokenIssuer } from './issuer.js';
import { createServiceAccountAuthenticator, type ServiceAccountAuthenticatorOptions } from './authenticator.js';
import type { ServiceAccountTokenGetter } from './claims.js';
import type { AuthResult } from '../authenticator.js';
import type { TokenIssuer } from '../token-issuer.js';

const dir = mkdtempSync(join(tmpdir(), 'plinth-sa-authn-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const signer = generateKeyPairSync('rsa', { modulusLength: 2048 });
const rotated = generateKeyPairSync('ec', { namedCurve: 'P-256' }); // an older key, still verifying
const stranger = generateKeyPairSync('rsa', { modulusLength: 2048 }); // not one of ours

let keys: ServiceAccountKeys;
const ISSUER = 'https://issuer.example';
const NOW = new Date('2024-05-01T12:00:00Z');
const NOW_S = NOW.getTime() / 1000;

/** Objects the getter serves: `ns/name` → object. */
const accounts = new Map<string, StoredObject>();
const secrets = new Map<string, StoredObject>();
const pods = new Map<string, StoredObject>();
const getter: ServiceAccountTokenGetter = {
  getServiceAccount: async (ns, name) => accounts.get(`${ns}/${name}`),
  getSecret: async (ns, name) => secrets.get(`${ns}/${name}`),
};

function obj(namespace: string, name: string, uid: string, extra: Record<string, unknown> = {}): StoredObject {
  return { metadata: { namespace, name, uid }, ...extra } as StoredObject;
}

async function setup(): Promise<void> {
  if (keys) return;
  const signingKeyFile = join(dir, 'sign.pem');
  writeFileSync(signingKeyFile, signer.privateKey.export({ type: 'pkcs1', format: 'pem' }));
  const oldKeyFile = join(dir, 'old.pub');
  writeFileSync(oldKeyFile, rotated.publicKey.export({ type: 'spki', format: 'pem' }));
  keys = await buildServiceAccountKeys({ signingKeyFile, keyFiles: [oldKeyFile] }, dir);
}

function issuer(): TokenIssuer {
  return createServiceAccountTokenIssuer({ keys, issuers: [ISSUER], apiAudiences: ['api'], maxExpirationSeconds: 0, extendExpiration: true, jwksURI: '', now: () => NOW });
}

function authn(o: Partial<ServiceAccountAuthenticatorOptions> = {}) {
  return createServiceAccountAuthenticator({ keys, issuers: [ISSUER, 'https://old-issuer.example'], apiAudiences: ['api'], lookup: true, getter, now: () => NOW, ...o });
}

async function run(token: string, o: Partial<ServiceAccountAuthenticatorOptions> = {}, audiences?: string[]): Promise<AuthResult> {
  return authn(o).authenticate({ headers: { authorization: `Bearer ${token}` }, peerCertificates: [], ...(audiences ? { audiences } : {}) });
}

function assertRejected(r: AuthResult, reason: RegExp, what: string): void {
  assert.equal(r.kind, 'rejected', what);
  assert.ok(r.kind === 'rejected' && reason.test(r.reason), `${what}: ${r.kind === 'rejected' ? r.reason : ''}`);
}

/** A bound-token payload for ns1/robot, signed with `key` (ours by default). */
function sign(claims: Record<string, unknown>, key: KeyObject = signer.privateKey, header: Record<string, unknown> = { alg: 'RS256', kid: keyIdOf(signer.publicKey) }): Promise<string> {
  return new SignJWT(claims).setProtectedHeader(header as { alg: string }).sign(key);
}

const bound = (over: Record<string, unknown> = {}): Record<string, unknown> => ({
  iss: ISSUER,
  sub: 'system:serviceaccount:ns1:robot',
  aud: ['api'],
  iat: NOW_S,
  nbf: NOW_S,
  exp: NOW_S + 600,
  'kubernetes.io': { namespace: 'ns1', serviceaccount: { name: 'robot', uid: 'sa-1' } },
  ...over,
});

function reset(): void {
  accounts.clear();
  secrets.clear();
  pods.clear();
  accounts.set('ns1/robot', obj('ns1', 'robot', 'sa-1'));
}

test('a bound token is the account: user, uid, groups', async () => {
  await setup();
  reset();
  const { token } = await issuer().issue({ namespace: 'ns1', name: 'robot', uid: 'sa-1', audiences: ['api'], expirationSeconds: 600 });
  assert.deepEqual(await run(token), {
    kind: 'authenticated',
    user: { name: 'system:serviceaccount:ns1:robot', uid: 'sa-1', groups: ['system:serviceaccounts', 'system:serviceaccounts:ns1'] },
    audiences: ['api'],
  });
  // Every configured issuer is accepted; a key listed in --service-account-key-file verifies.
  const old = await sign(bound({ iss: 'https://old-issuer.example' }), rotated.privateKey, { alg: 'ES256', kid: keyIdOf(rotated.publicKey) });
  assert.equal((await run(old)).kind, 'authenticated');
  // No kid (or an unknown one): every key is tried.
  assert.equal((await run(await sign(bound(), signer.privateKey, { alg: 'RS256' }))).kind, 'authenticated');
  assert.equal((await run(await sign(bound(), rotated.privateKey, { alg: 'ES256', kid: 'nope' }))).kind, 'authenticated');
});

test('not a JWT, or another issuer\'s: no opinion', async () => {
  await setup();
  reset();
  for (const token of ['abc', 'a.b.c', '{"iss":"https://issuer.example"}', await sign(bound({ iss: 'https://elsewhere.example' })), await sign(bound({ iss: undefined }))]) {
    assert.equal((await run(token)).kind, 'no-opinion', token);
  }
  assert.equal((await authn().authenticate({ headers: {}, peerCertificates: [] })).kind, 'no-opinion');
});

test('refused: expired, not yet valid, wrong audience, unknown key, tampered, alg none', async () => {
  await setup();
  reset();
  assertRejected(await run(await sign(bound({ exp: NOW_S - 61 }))), /expired/, 'expired');
  // kube's leeway: a minute of clock skew is tolerated either way.
  assert.equal((await run(await sign(bound({ exp: NOW_S - 30 })))).kind, 'authenticated', 'expired within leeway');
  assert.equal((await run(await sign(bound({ nbf: NOW_S + 30 })))).kind, 'authenticated', 'nbf within leeway');
  assertRejected(await run(await sign(bound({ nbf: NOW_S + 120 }))), /not valid yet/, 'not yet valid');

  assertRejected(await run(await sign(bound({ aud: ['vault'] }))), /audiences/, 'wrong audience');
  assertRejected(await run(await sign(bound()), {}, ['vault']), /audiences/, 'not for the TokenReview audience');
  const forX = await run(await sign(bound({ aud: ['vault', 'x'] })), {}, ['x', 'y']);
  assert.equal(forX.kind, 'authenticated', 'for the TokenReview audience');
  // The audiences it is valid for: the token's that were asked for (kube's Response.Audiences).
  assert.deepEqual(forX.kind === 'authenticated' && forX.audiences, ['x']);

  assertRejected(await run(await sign(bound(), stranger.privateKey)), /signature/, 'unknown key');
  assertRejected(await run(await sign(bound(), stranger.privateKey, { alg: 'RS256', kid: keyIdOf(stranger.publicKey) })), /signature/, 'unknown kid');

  const good = await sign(bound());
  const [h, , s] = good.split('.');
  const forged = base64url.encode(JSON.stringify(bound({ sub: 'system:serviceaccount:ns1:admin', 'kubernetes.io': { namespace: 'ns1', serviceaccount: { name: 'admin', uid: 'sa-1' } } })));
  assertRejected(await run(`${h}.${forged}.${s}`), /signature/, 'tampered payload');

  const none = `${base64url.encode(JSON.stringify({ alg: 'none' }))}.${base64url.encode(JSON.stringify(bound()))}.`;
  assertRejected(await run(none), /signature/, 'alg none');
  const hs = await new SignJWT(bound()).setProtectedHeader({ alg: 'HS256' }).sign(signer.publicKey.export({ type: 'spki', format: 'der' }));
  assertRejected(await run(hs), /signature/, 'HS256 with the public key as secret');
});

test('bound tokens name live objects: account (and uid), bound Secret, bound Pod', async () => {
  await setup();
  reset();
  const token = await sign(bound());
  accounts.delete('ns1/robot');
  assertRejected(await run(token), /not found/, 'account deleted');
  // Always looked up, whatever --service-account-lookup says.
  assertRejected(await run(token, { lookup: false }), /not found/, 'account deleted, lookup off');
  accounts.set('ns1/robot', obj('ns1', 'robot', 'sa-2'));
  assertRejected(await run(token), /UID/, 'account re-created');
  const deleting = (secondsAgo: number): StoredObject => ({ metadata: { namespace: 'ns1', name: 'robot', uid: 'sa-1', deletionTimestamp: new Date((NOW_S - secondsAgo) * 1000).toISOString() } }) as StoredObject;
  accounts.set('ns1/robot', deleting(120));
  assertRejected(await run(token), /deleted/, 'account being deleted for long');
  accounts.set('ns1/robot', deleting(10));
  assert.equal((await run(token)).kind, 'authenticated', 'account deleted within the leeway');
  reset();

  const secretBound = await sign(bound({ 'kubernetes.io': { namespace: 'ns1', serviceaccount: { name: 'robot', uid: 'sa-1' }, secret: { name: 's', uid: 'sec-1' } } }));
  assertRejected(await run(secretBound), /invalidated/, 'bound secret missing');
  secrets.set('ns1/s', obj('ns1', 's', 'sec-2'));
  assertRejected(await run(secretBound), /UID/, 'bound secret re-created');
  secrets.set('ns1/s', obj('ns1', 's', 'sec-1'));
  assert.equal((await run(secretBound)).kind, 'authenticated', 'bound secret present');

  const podBound = await sign(bound({ 'kubernetes.io': { namespace: 'ns1', serviceaccount: { name: 'robot', uid: 'sa-1' }, pod: { name: 'p', uid: 'pod-1' } } }));
  assertRejected(await run(podBound), /invalidated/, 'pods cannot be looked up');
  pods.set('ns1/p', obj('ns1', 'p', 'pod-1'));
  const withPods = { getter: { ...getter, getPod: async (ns: string, name: string) => pods.get(`${ns}/${name}`) } };
  assert.deepEqual(await run(podBound, withPods), {
    kind: 'authenticated',
    user: {
      name: 'system:serviceaccount:ns1:robot',
      uid: 'sa-1',
      groups: ['system:serviceaccounts', 'system:serviceaccounts:ns1'],
      extra: { 'authentication.kubernetes.io/pod-name': ['p'], 'authentication.kubernetes.io/pod-uid': ['pod-1'] },
    },
    audiences: ['api'],
  });

  const failing = { getter: { ...getter, getServiceAccount: async () => Promise.reject(new Error('etcd down')) } };
  assertRejected(await run(token, failing), /could not be validated/, 'lookup fails');
});

test('legacy tokens: the Secret must hold the token; lookup off trusts the signature', async () => {
  await setup();
  reset();
  const token = await issuer().issueLegacy({ namespace: 'ns1', serviceAccountName: 'robot', serviceAccountUID: 'sa-1', secretName: 'robot-token' });
  const tokenSecret = (t: string, extra: Record<string, unknown> = {}) => obj('ns1', 'robot-token', 'sec-1', { data: { token: Buffer.from(t).toString('base64') }, ...extra });

  assertRejected(await run(token), /invalidated/, 'no secret');
  secrets.set('ns1/robot-token', tokenSecret(token));
  const ok = await run(token);
  assert.deepEqual(ok, { kind: 'authenticated', user: { name: 'system:serviceaccount:ns1:robot', uid: 'sa-1', groups: ['system:serviceaccounts', 'system:serviceaccounts:ns1'] }, audiences: ['api'] });
  // No audience in the token: good for the API audiences only.
  assertRejected(await run(token, {}, ['vault']), /audiences/, 'legacy token for another audience');

  // A validly signed token naming this Secret that the Secret does not hold.
  const other = await sign({ ...decodeJwt(token), 'kubernetes.io/serviceaccount/service-account.uid': 'sa-1', extra: 'x' });
  assertRejected(await run(other), /server's copy/, 'secret holds another token');
  secrets.set('ns1/robot-token', { ...tokenSecret(token), metadata: { namespace: 'ns1', name: 'robot-token', uid: 'sec-1', deletionTimestamp: NOW.toISOString() } } as StoredObject);
  assertRejected(await run(token), /invalidated/, 'secret being deleted');
  secrets.set('ns1/robot-token', tokenSecret(token));
  accounts.set('ns1/robot', obj('ns1', 'robot', 'sa-2'));
  assertRejected(await run(token), /UID/, 'account re-created');
  accounts.delete('ns1/robot');
  assertRejected(await run(token), /not found/, 'account deleted');

  // --service-account-lookup=false: a legacy token is valid as long as its signature is.
  secrets.clear();
  assert.equal((await run(token, { lookup: false })).kind, 'authenticated');

  // Claims must agree with each other.
  const legacy = decodeJwt(token);
  const bad = await sign({ ...legacy, sub: 'system:serviceaccount:ns1:other' });
  assertRejected(await run(bad, { lookup: false }), /sub claim is invalid/, 'sub mismatch');
  const { ['kubernetes.io/serviceaccount/service-account.uid']: _uid, ...noUid } = legacy;
  assertRejected(await run(await sign(noUid), { lookup: false }), /serviceAccountUID claim is missing/, 'uid missing');
});
