/**
 * OpenID Connect authentication against a local HTTPS issuer the test runs (its own CA, discovery,
 * JWKS, a distributed-claims endpoint): valid ID tokens authenticate with kube's prefix rules,
 * every check go-oidc and kube make refuses its bad token with 401, the key set follows a key
 * rotation, and an issuer that is down at start-up neither blocks plinth nor stays unused.
 */
import { describe, it, before, after, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { SignJWT, UnsecuredJWT, type JWTPayload } from 'jose';
import { startTestEtcd, startInProcess, tempDir, eventually, type TestEtcd, type InProcessPlinth } from './harness.js';
import { expectCode, expectStatus } from './assertions.js';
import { AUTHENTICATED_PROBE, Pki, TestIssuer, newSigningKey as newKey } from './auth-fixtures.js';

const CLIENT_ID = 'plinth-test';
const now = (): number => Math.floor(Date.now() / 1000);
const NAMESPACES = AUTHENTICATED_PROBE;
const SSR = '/apis/authentication.k8s.io/v1/selfsubjectreviews';

let dir: string;
let etcd: TestEtcd;
let tls: { ca: string; caFile: string; cert: string; key: string };

before(async () => {
  dir = tempDir('plinth-oidc-');
  const pki = new Pki(dir).rootCA('idp-ca').serving('idp', 'idp-ca');
  tls = { ca: pki.pem('idp-ca'), caFile: pki.certFile('idp-ca'), cert: pki.pem('idp'), key: pki.keyPem('idp') };
  etcd = await startTestEtcd();
});
after(async () => {
  await etcd?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** The OIDC flags, and the gate that serves SelfSubjectReview (how these tests read the user). */
function oidcFlags(issuer: TestIssuer, extra: string[] = []): string[] {
  return ['--feature-gates=APISelfSubjectReview=true', `--oidc-issuer-url=${issuer.url}`, `--oidc-client-id=${CLIENT_ID}`, `--oidc-ca-file=${tls.caFile}`, ...extra];
}

/** `status.userInfo` of a SelfSubjectReview made with `token`. */
async function whoami(_t: TestContext, plinth: InProcessPlinth, token: string): Promise<{ username: string; groups: string[] }> {
  const res = await plinth.client.post(SSR, { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' }, { token });
  assert.ok(res.status === 201, `SelfSubjectReview: ${res.status} ${res.raw.toString().slice(0, 300)}`);
  return res.body.status.userInfo;
}

describe('OIDC with a running issuer', () => {
  let issuer: TestIssuer;
  let plinth: InProcessPlinth;
  const get = (token: string) => plinth.client.get(NAMESPACES, { token });
  const expectAccepted = async (token: string, what: string): Promise<void> => expectCode(await get(token), 200, what);
  const expectRefused = async (token: string, what: string): Promise<void> => {
    const res = await get(token);
    expectCode(res, 401, what);
    expectStatus(res, 401, 'Unauthorized');
  };

  before(async () => {
    issuer = await TestIssuer.start(tls, { clientID: CLIENT_ID });
    plinth = await startInProcess({
      etcd,
      args: oidcFlags(issuer, ['--oidc-groups-claim=groups', '--oidc-groups-prefix=oidc:', '--oidc-required-claim=hd=example.com']),
    });
    // Discovery runs in the background: wait for the first token to go through.
    const token = await issuer.sign({ sub: 'alice', hd: 'example.com' });
    await eventually(async () => (await get(token)).status === 200, 10_000, 'the OIDC authenticator to initialize');
  });
  after(async () => {
    await plinth?.stop();
    await issuer?.close();
  });

  it('accepts a valid ID token', async () => {
    await expectAccepted(await issuer.sign({ sub: 'alice', hd: 'example.com', groups: ['dev', 'ops'] }), 'valid token');
    // aud may be an array that contains the client id.
    await expectAccepted(await issuer.sign({ sub: 'alice', hd: 'example.com', aud: ['other-client', CLIENT_ID] }), 'aud array');
  });

  it('names the user <issuer>#<sub> and prefixes each group', async (t) => {
    const user = await whoami(t, plinth, await issuer.sign({ sub: 'alice', hd: 'example.com', groups: ['dev', 'ops'] }));
    assert.equal(user.username, `${issuer.url}#alice`);
    assert.deepEqual(user.groups, ['oidc:dev', 'oidc:ops', 'system:authenticated']);
    const single = await whoami(t, plinth, await issuer.sign({ sub: 'bob', hd: 'example.com', groups: 'admins' }));
    assert.deepEqual(single?.groups, ['oidc:admins', 'system:authenticated']);
  });

  it('refuses an expired token', async () => {
    await expectRefused(await issuer.sign({ sub: 'alice', hd: 'example.com', iat: now() - 600, exp: now() - 5 }), 'expired');
  });

  it('allows nbf up to a minute ahead (go-oidc leeway), not more', async () => {
    await expectAccepted(await issuer.sign({ sub: 'alice', hd: 'example.com', nbf: now() + 30 }), 'nbf 30 s ahead');
    await expectRefused(await issuer.sign({ sub: 'alice', hd: 'example.com', nbf: now() + 180 }), 'nbf 3 min ahead');
  });

  it('refuses a token for another audience', async () => {
    await expectRefused(await issuer.sign({ sub: 'alice', hd: 'example.com', aud: 'other-client' }), 'wrong audience');
  });

  it("refuses a token signed by another key under the issuer's kid", async () => {
    const forger = await newKey('forger');
    await expectRefused(await issuer.sign({ sub: 'mallory', hd: 'example.com' }, { key: forger, kid: issuer.keys[0]!.kid }), 'wrong signature');
  });

  it('refuses a token without the required claim, or with another value', async () => {
    await expectRefused(await issuer.sign({ sub: 'alice' }), 'required claim missing');
    await expectRefused(await issuer.sign({ sub: 'alice', hd: 'example.org' }), 'required claim mismatch');
  });

  it('refuses unsigned (alg none) and HMAC-signed tokens', async () => {
    await expectRefused(new UnsecuredJWT(issuer.claims({ sub: 'mallory', hd: 'example.com' })).encode(), 'alg none');
    const hs256 = await new SignJWT(issuer.claims({ sub: 'mallory', hd: 'example.com' }))
      .setProtectedHeader({ alg: 'HS256', kid: issuer.keys[0]!.kid })
      .sign(new TextEncoder().encode('a shared secret of at least 32 bytes!'));
    await expectRefused(hs256, 'HS256');
  });

  it('resolves a distributed groups claim from its endpoint', async (t) => {
    const token = (accessToken: string): Promise<string> =>
      issuer.sign({
        sub: 'carol',
        hd: 'example.com',
        _claim_names: { groups: 'src1' },
        _claim_sources: { src1: { endpoint: `${issuer.url}/claims`, access_token: accessToken } },
      });
    // The endpoint refuses a wrong access token: the claim cannot be resolved, the token is refused.
    await expectRefused(await token('wrong'), 'unresolvable distributed claim');
    await expectAccepted(await token(issuer.claimsAccessToken), 'distributed claim');
    const user = await whoami(t, plinth, await token(issuer.claimsAccessToken));
    assert.deepEqual(user.groups, ['oidc:from-endpoint', 'system:authenticated']);
  });

  it('follows a key rotation: a token with a new kid refetches the key set', async () => {
    const before = issuer.jwksFetches;
    const retired = issuer.keys[0]!;
    issuer.keys = [await newKey('key-2')];
    await expectAccepted(await issuer.sign({ sub: 'alice', hd: 'example.com' }), 'token signed by the new key');
    assert.ok(issuer.jwksFetches > before, 'the key set was fetched again');
    await expectRefused(await issuer.sign({ sub: 'alice', hd: 'example.com' }, { key: retired }), 'token signed by the retired key');
  });

  it('does not refetch the key set for every unknown kid', async () => {
    const before = issuer.jwksFetches;
    const stranger = await newKey('stranger');
    for (let i = 0; i < 20; i++) {
      await expectRefused(await issuer.sign({ sub: 'mallory', hd: 'example.com' }, { key: stranger, kid: `made-up-${i}` }), `unknown kid ${i}`);
    }
    assert.ok(issuer.jwksFetches - before <= 1, `20 unknown kids caused ${issuer.jwksFetches - before} key-set fetches`);
  });
});

describe('OIDC with the issuer down at start-up (email as the username claim)', () => {
  let issuer: TestIssuer;
  let plinth: InProcessPlinth;
  const get = (token: string) => plinth.client.get(NAMESPACES, { token });
  const email = (extra: JWTPayload): Promise<string> => issuer.sign({ sub: 'u-1', email: 'alice@example.com', ...extra });

  before(async () => {
    issuer = await TestIssuer.start(tls, { clientID: CLIENT_ID, down: true });
    // Start-up neither waits for nor fails on the unreachable issuer.
    plinth = await startInProcess({ etcd, args: oidcFlags(issuer, ['--oidc-username-claim=email']) });
  });
  after(async () => {
    await plinth?.stop();
    await issuer?.close();
  });

  it('refuses tokens while the issuer is down, accepts them once it is up', async () => {
    const token = await email({ email_verified: true });
    expectStatus(await get(token), 401, 'Unauthorized');
    issuer.down = false;
    await eventually(async () => (await get(token)).status === 200, 15_000, 'tokens to work once the issuer is up');
  });

  it('refuses email_verified=false and accepts an absent email_verified', async () => {
    expectStatus(await get(await email({ email_verified: false })), 401, 'Unauthorized');
    expectCode(await get(await email({})), 200, 'no email_verified');
  });

  it('uses the email unprefixed as the user name', async (t) => {
    const user = await whoami(t, plinth, await email({ email_verified: true }));
    assert.equal(user.username, 'alice@example.com');
    assert.deepEqual(user.groups, ['system:authenticated']);
  });
});
