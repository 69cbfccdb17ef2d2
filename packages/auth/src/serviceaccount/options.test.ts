import { test } from 'node:test';
import assert from 'node:assert/strict';
import { validateAuthenticationOptions, type AuthenticationOptions, type ServiceAccountOptions } from '../options.js';
import { openIDDiscoveryProblem } from './openid.js';

function options(sa: Partial<ServiceAccountOptions>): AuthenticationOptions {
  return {
    anonymous: true,
    apiAudiences: [],
    bootstrapToken: false,
    serviceAccounts: { issuers: [], signingKeyFile: '', keyFiles: [], lookup: true, maxExpirationSeconds: 0, extendExpiration: true, jwksURI: '', ...sa },
  };
}

test('verifying keys need a signing key (kube validateTokenRequest)', () => {
  assert.deepEqual(validateAuthenticationOptions(options({ keyFiles: ['sa.pub'] })), ['--service-account-signing-key-file, --service-account-issuer, and --api-audiences should be specified together']);
  assert.deepEqual(validateAuthenticationOptions(options({ keyFiles: ['sa.pub'], signingKeyFile: 'sa.key' })), []);
  assert.deepEqual(validateAuthenticationOptions(options({})), [], 'neither: plinth generates its key');
});

test('--service-account-jwks-uri must be an https URL', () => {
  assert.deepEqual(validateAuthenticationOptions(options({ jwksURI: 'https://keys.example/jwks' })), []);
  assert.deepEqual(validateAuthenticationOptions(options({ jwksURI: 'http://keys.example/jwks' })), ['service-account-jwks-uri requires https scheme, parsed as: http://keys.example/jwks']);
  assert.match(validateAuthenticationOptions(options({ jwksURI: 'not a url' }))[0]!, /must be a valid URL/);
});

test('discovery is served only for https issuers without query or fragment', () => {
  assert.equal(openIDDiscoveryProblem('https://kubernetes.default.svc.cluster.local'), undefined);
  assert.match(openIDDiscoveryProblem('api')!, /not a URL/);
  assert.match(openIDDiscoveryProblem('http://issuer.example')!, /https scheme/);
  assert.match(openIDDiscoveryProblem('https://issuer.example?x=1')!, /query/);
  assert.match(openIDDiscoveryProblem('https://issuer.example#f')!, /fragment/);
});
