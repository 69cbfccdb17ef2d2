import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildAuthenticator, METHODS, type AuthenticatorDeps } from './config.js';
import { completeAuthenticationOptions, type AuthenticationOptions } from './options.js';

const options = (): AuthenticationOptions =>
  completeAuthenticationOptions({
    anonymous: true,
    apiAudiences: ['api'],
    bootstrapToken: false,
    serviceAccounts: { issuers: [], signingKeyFile: '', keyFiles: [], jwksURI: '', lookup: true, maxExpirationSeconds: 0, extendExpiration: true },
  });

function deps(dataDir: string): AuthenticatorDeps {
  return {
    getSecret: async () => undefined,
    getServiceAccount: async () => undefined,
    staticTokens: new Map([['static-token', { name: 'ops', uid: '1', groups: ['admins'] }]]),
    dataDir,
    log: { info: () => undefined, error: () => undefined },
  };
}

test('methods are registered once each, in kube-apiserver order', () => {
  const names = METHODS.map((m) => m.name);
  assert.equal(new Set(names).size, names.length);
  const order = ['requestheader', 'x509', 'token-file', 'service-account', 'bootstrap-token', 'oidc', 'webhook'];
  const known = names.filter((n) => order.includes(n));
  assert.deepEqual(known, order.filter((n) => known.includes(n)));
});

test('audience-agnostic tokens are for the API audiences only (kube WrapAudienceAgnosticToken)', async (t) => {
  const { mkdtempSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const dir = mkdtempSync(join(tmpdir(), 'plinth-auth-config-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const auth = await buildAuthenticator(options(), deps(dir));
  t.after(() => auth.close?.());
  const review = (audiences?: string[]) => auth.authenticate({ headers: { authorization: 'Bearer static-token' }, peerCertificates: [], ...(audiences ? { audiences } : {}) });
  assert.equal((await review()).kind, 'authenticated');
  assert.equal((await review(['api'])).kind, 'authenticated');
  const both = await review(['other', 'api']);
  assert.equal(both.kind, 'authenticated');
  // Valid for the API audiences that were asked for, and said so.
  assert.deepEqual(both.kind === 'authenticated' && both.audiences, ['api']);
  assert.equal((await review(['other'])).kind, 'no-opinion');
});
