import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isStatusError, type StoredObject } from '@plinth/api';
import type { AuthRequest, AuthResult, Authenticator } from '@plinth/auth';
import { createTokenReviewStorage } from './tokenreview.js';
import { createSelfSubjectReviewStorage } from './selfsubjectreview.js';
import type { CreateContext } from './create-only.js';

const CTX: CreateContext = { user: { name: 'caller', uid: 'c-1', groups: ['devs', 'system:authenticated'], extra: { scopes: ['a', 'b'] } }, namespace: '', name: '', dryRun: false };
const noAdmission = async (): Promise<void> => undefined;

/**
 * An authenticator answering from a table of tokens, recording each request it sees. Accepted
 * tokens are valid for every audience asked for (and say so, as kube's authenticators do).
 */
function tableAuthenticator(answers: Record<string, AuthResult | Error>, seen: AuthRequest[] = []): Authenticator {
  return {
    async authenticate(req) {
      seen.push(req);
      const h = req.headers['authorization'];
      const a = answers[String(h).replace(/^Bearer /, '')];
      if (a instanceof Error) throw a;
      if (a?.kind === 'authenticated' && req.audiences) return { ...a, audiences: [...req.audiences] };
      return a ?? { kind: 'no-opinion' };
    },
  };
}

function review(spec: Record<string, unknown>): StoredObject {
  return { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', metadata: { name: 'r' }, spec };
}

const ADMIN: AuthResult = { kind: 'authenticated', user: { name: 'admin', uid: 'admin-uid', groups: ['system:masters', 'system:authenticated'] } };

test('an accepted token: authenticated, the user, the API audiences; metadata and spec echoed', async () => {
  const seen: AuthRequest[] = [];
  const s = createTokenReviewStorage({ authenticator: tableAuthenticator({ good: ADMIN }, seen), apiAudiences: ['https://api.example'] });
  const out = await s.create(CTX, review({ token: 'good' }), noAdmission);
  assert.deepEqual(out, {
    kind: 'TokenReview',
    apiVersion: 'authentication.k8s.io/v1',
    metadata: { name: 'r', creationTimestamp: null },
    spec: { token: 'good' },
    status: {
      authenticated: true,
      user: { username: 'admin', uid: 'admin-uid', groups: ['system:masters', 'system:authenticated'] },
      audiences: ['https://api.example'],
    },
  });
  // The authenticator sees nothing but the token, for the API audiences (kube's TokenReview REST).
  assert.deepEqual(seen, [{ headers: { authorization: 'Bearer good' }, peerCertificates: [], audiences: ['https://api.example'] }]);
});

test('status.audiences are what the authenticator reports, not what was asked', async () => {
  const narrow: AuthResult = { ...ADMIN, audiences: ['vault'] } as AuthResult;
  const s = createTokenReviewStorage({ authenticator: { authenticate: async () => narrow }, apiAudiences: ['https://api.example'] });
  const out = await s.create(CTX, review({ token: 'good', audiences: ['vault', 'other'] }), noAdmission);
  assert.deepEqual((out['status'] as { audiences: string[] }).audiences, ['vault']);
  // An authenticator that reports none (a client certificate cannot be reviewed; a custom one) → no audiences.
  const none = createTokenReviewStorage({ authenticator: { authenticate: async () => ADMIN }, apiAudiences: ['https://api.example'] });
  assert.equal((((await none.create(CTX, review({ token: 'good' }), noAdmission))['status']) as { audiences?: string[] }).audiences, undefined);
});

test('spec.audiences reach the authenticator and come back for an accepted token', async () => {
  const seen: AuthRequest[] = [];
  const s = createTokenReviewStorage({ authenticator: tableAuthenticator({ good: ADMIN }, seen), apiAudiences: ['https://api.example'] });
  const out = await s.create(CTX, review({ token: 'good', audiences: ['vault'] }), noAdmission);
  assert.deepEqual(seen[0]!.audiences, ['vault']);
  assert.deepEqual((out['status'] as { audiences: string[] }).audiences, ['vault']);
});

test('a refused token is not authenticated and says why; a blank one is no credential at all', async () => {
  const s = createTokenReviewStorage({
    authenticator: tableAuthenticator({ expired: { kind: 'rejected', reason: 'token has expired' }, broken: new Error('webhook unreachable') }),
    apiAudiences: [],
  });
  assert.deepEqual((await s.create(CTX, review({ token: 'garbage' }), noAdmission))['status'], { user: {}, error: 'invalid bearer token' });
  assert.deepEqual((await s.create(CTX, review({ token: 'expired' }), noAdmission))['status'], { user: {}, error: 'token has expired' });
  assert.deepEqual((await s.create(CTX, review({ token: 'broken' }), noAdmission))['status'], { user: {}, error: 'webhook unreachable' });
  assert.deepEqual((await s.create(CTX, review({ token: '  ' }), noAdmission))['status'], { user: {} });
});

test('a review without a token is a 400, before admission and the authenticator', async () => {
  const seen: AuthRequest[] = [];
  let admitted = false;
  const s = createTokenReviewStorage({ authenticator: tableAuthenticator({}, seen), apiAudiences: [] });
  await assert.rejects(
    s.create(CTX, review({}), async () => {
      admitted = true;
    }),
    (e: unknown) => isStatusError(e) && e.code === 400 && e.message === 'token is required for TokenReview in authentication',
  );
  assert.equal(admitted, false);
  assert.equal(seen.length, 0);
});

test('a self subject review answers the caller, stamped now, ignoring the body', async () => {
  const before = Date.now() - 1000;
  const out = await createSelfSubjectReviewStorage().create(CTX, { metadata: { name: 'ignored' }, status: { userInfo: { username: 'forged' } } }, noAdmission);
  assert.equal(out.kind, 'SelfSubjectReview');
  assert.equal(out.apiVersion, 'authentication.k8s.io/v1');
  assert.deepEqual(Object.keys(out.metadata), ['creationTimestamp']);
  assert.ok(Date.parse(String(out.metadata.creationTimestamp)) >= before);
  assert.deepEqual(out['status'], { userInfo: { username: 'caller', uid: 'c-1', groups: ['devs', 'system:authenticated'], extra: { scopes: ['a', 'b'] } } });
});
