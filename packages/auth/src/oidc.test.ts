import { test } from 'node:test';
import assert from 'node:assert/strict';
import { oidcUntrustedIssuer, oidcUsernamePrefix, oidcUserFromClaims, createOIDCAuthenticator, type OIDCClaimMapping } from './oidc.js';
import { checkIDTokenClaims, NBF_LEEWAY_MS, OIDCTokenError } from './oidc-provider.js';

const ISSUER = 'https://idp.example.com';
const b64 = (v: unknown): string => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64url');
/** An unsigned compact token with this payload (only the shape matters here). */
const jwt = (payload: unknown): string => `${b64({ alg: 'RS256' })}.${b64(payload)}.${b64('sig')}`;

test('username prefix: the flag, else <issuer># unless the claim is email; "-" means none', () => {
  const p = (usernameClaim: string, usernamePrefix: string): string => oidcUsernamePrefix({ issuerURL: ISSUER, usernameClaim, usernamePrefix });
  assert.equal(p('sub', ''), `${ISSUER}#`);
  assert.equal(p('preferred_username', ''), `${ISSUER}#`);
  assert.equal(p('email', ''), '');
  assert.equal(p('sub', '-'), '');
  assert.equal(p('email', '-'), '');
  assert.equal(p('sub', 'oidc:'), 'oidc:');
  assert.equal(p('email', 'oidc:'), 'oidc:');
});

const mapping = (m: Partial<OIDCClaimMapping> = {}): OIDCClaimMapping => ({
  usernameClaim: 'sub',
  usernamePrefix: `${ISSUER}#`,
  groupsClaim: 'groups',
  groupsPrefix: '',
  requiredClaims: {},
  ...m,
});
const rejects = (claims: Record<string, unknown>, m: OIDCClaimMapping, pattern: RegExp): void => {
  assert.throws(() => oidcUserFromClaims(claims, m), (e: unknown) => e instanceof OIDCTokenError && pattern.test(e.message));
};

test('the user: prefixed name, groups from an array or a single string, each prefixed', () => {
  assert.deepEqual(oidcUserFromClaims({ sub: 'alice', groups: ['dev', 'ops'] }, mapping()), { name: `${ISSUER}#alice`, groups: ['dev', 'ops'] });
  assert.deepEqual(oidcUserFromClaims({ sub: 'alice', groups: 'admins' }, mapping({ groupsPrefix: 'oidc:' })), { name: `${ISSUER}#alice`, groups: ['oidc:admins'] });
  assert.deepEqual(oidcUserFromClaims({ sub: 'alice', groups: ['a', 'b'] }, mapping({ usernamePrefix: '', groupsPrefix: 'o:' })), { name: 'alice', groups: ['o:a', 'o:b'] });
  // No groups claim configured, or the claim absent: no groups.
  assert.deepEqual(oidcUserFromClaims({ sub: 'alice', groups: ['x'] }, mapping({ groupsClaim: '' })).groups, []);
  assert.deepEqual(oidcUserFromClaims({ sub: 'alice' }, mapping({ groupsPrefix: 'o:' })).groups, []);
});

test('the username claim must be present and a string; groups must be strings', () => {
  rejects({ name: 'alice' }, mapping(), /username claims "sub": claim not present/);
  rejects({ sub: 42 }, mapping(), /not a string/);
  rejects({ sub: null }, mapping(), /not a string/);
  rejects({ sub: 'alice', groups: [1, 2] }, mapping(), /groups claim/);
  rejects({ sub: 'alice', groups: { a: 1 } }, mapping(), /groups claim/);
});

test('email claim: email_verified false is refused, absent is accepted, non-boolean is refused', () => {
  const m = mapping({ usernameClaim: 'email', usernamePrefix: '' });
  assert.equal(oidcUserFromClaims({ email: 'a@example.com', email_verified: true }, m).name, 'a@example.com');
  assert.equal(oidcUserFromClaims({ email: 'a@example.com' }, m).name, 'a@example.com');
  rejects({ email: 'a@example.com', email_verified: false }, m, /email not verified/);
  rejects({ email: 'a@example.com', email_verified: 'true' }, m, /email_verified/);
  // Only the email claim looks at email_verified.
  assert.equal(oidcUserFromClaims({ sub: 'alice', email_verified: false }, mapping()).name, `${ISSUER}#alice`);
});

test('required claims: present, a string, exactly equal', () => {
  const m = mapping({ requiredClaims: { hd: 'example.com', tier: 'gold' } });
  assert.equal(oidcUserFromClaims({ sub: 'a', hd: 'example.com', tier: 'gold' }, m).name, `${ISSUER}#a`);
  rejects({ sub: 'a', hd: 'example.com' }, m, /required claim tier not present/);
  rejects({ sub: 'a', hd: 'example.org', tier: 'gold' }, m, /required claim hd value does not match/);
  rejects({ sub: 'a', hd: ['example.com'], tier: 'gold' }, m, /parse claim hd/);
});

test('untrusted issuer: only compact JWTs with a JSON object payload have one', () => {
  assert.equal(oidcUntrustedIssuer(jwt({ iss: ISSUER })), ISSUER);
  assert.equal(oidcUntrustedIssuer(jwt({ sub: 'x' })), '');
  assert.equal(oidcUntrustedIssuer(jwt({ iss: 'accounts.google.com' })), 'https://accounts.google.com');
  assert.equal(oidcUntrustedIssuer('abcdef.0123456789abcdef'), undefined); // a bootstrap-token-like string
  assert.equal(oidcUntrustedIssuer('not-a-jwt'), undefined);
  assert.equal(oidcUntrustedIssuer(`${b64({})}.${b64('[1,2]')}.x`), undefined);
  assert.equal(oidcUntrustedIssuer(`${b64({})}.${b64({ iss: 7 })}.x`), undefined);
  assert.equal(oidcUntrustedIssuer(`${b64({})}.e30=.x`), undefined); // padding is not base64url-raw
});

const NOW = Date.UTC(2024, 0, 1);
const S = NOW / 1000;
const checks = { issuer: ISSUER, clientID: 'plinth', now: NOW };
const claimError = (claims: Record<string, unknown>, pattern: RegExp): void => {
  assert.throws(() => checkIDTokenClaims(claims, checks), (e: unknown) => e instanceof OIDCTokenError && pattern.test(e.message));
};

test("go-oidc's claim checks: issuer, audience (string or array), exp without leeway, nbf with a minute", () => {
  const ok = { iss: ISSUER, aud: 'plinth', sub: 'a', exp: S + 60 };
  checkIDTokenClaims(ok, checks);
  checkIDTokenClaims({ ...ok, aud: ['other', 'plinth'] }, checks);
  checkIDTokenClaims({ ...ok, exp: S }, checks); // expiring this very second is not yet expired
  checkIDTokenClaims({ ...ok, exp: String(S + 60) }, checks); // Go's json.Number takes quoted numbers
  checkIDTokenClaims({ ...ok, nbf: S + NBF_LEEWAY_MS / 1000 }, checks);
  checkIDTokenClaims({ ...ok, iat: S + 3600 }, checks); // iat is not compared with the clock
  claimError({ ...ok, iss: `${ISSUER}/` }, /different provider/);
  claimError({ ...ok, aud: 'other' }, /audience/);
  claimError({ ...ok, aud: ['a', 'b'] }, /audience/);
  claimError({ ...ok, aud: 7 }, /aud is not/);
  claimError({ ...ok, exp: S - 1 }, /expired/);
  claimError({ iss: ISSUER, aud: 'plinth', sub: 'a' }, /expired/); // no exp
  claimError({ ...ok, exp: 'soon' }, /exp is not a number/);
  claimError({ ...ok, nbf: S + NBF_LEEWAY_MS / 1000 + 1 }, /nbf/);
  claimError({ ...ok, iat: 'yesterday' }, /iat is not a number/);
  claimError({ ...ok, sub: 5 }, /sub is not a string/);
});

test('distributed claim names must point at claim sources', () => {
  const ok = { iss: ISSUER, aud: 'plinth', sub: 'a', exp: S + 60 };
  checkIDTokenClaims({ ...ok, _claim_names: { groups: 'src1' }, _claim_sources: { src1: { endpoint: 'https://x/claims' } } }, checks);
  claimError({ ...ok, _claim_names: { groups: 'src1' } }, /source does not exist/);
  claimError({ ...ok, _claim_names: { groups: '' }, _claim_sources: {} }, /failed to obtain source/);
  claimError({ ...ok, _claim_names: 'groups' }, /_claim_names is not an object/);
});

test('a token of another issuer, or no JWT, is no opinion; one of ours is refused until discovery succeeds', async () => {
  const auth = createOIDCAuthenticator({
    // Nothing listens on port 1: discovery fails and is retried in the background.
    issuerURL: 'https://127.0.0.1:1',
    clientID: 'plinth',
    caFile: '',
    usernameClaim: 'sub',
    usernamePrefix: '',
    groupsClaim: 'groups',
    groupsPrefix: '',
    requiredClaims: {},
    signingAlgs: ['RS256'],
    log: { info() {}, error() {} },
  });
  try {
    const req = (token: string) => ({ headers: { authorization: `Bearer ${token}` }, peerCertificates: [] });
    assert.deepEqual(await auth.authenticate({ headers: {}, peerCertificates: [] }), { kind: 'no-opinion' });
    assert.deepEqual(await auth.authenticate(req('opaque-token')), { kind: 'no-opinion' });
    assert.deepEqual(await auth.authenticate(req(jwt({ iss: ISSUER, sub: 'a' }))), { kind: 'no-opinion' });
    const ours = await auth.authenticate(req(jwt({ iss: 'https://127.0.0.1:1', sub: 'a' })));
    assert.equal(ours.kind, 'rejected');
    assert.ok(ours.kind === 'rejected' && /not initialized/.test(ours.reason));
  } finally {
    auth.close?.();
  }
});
