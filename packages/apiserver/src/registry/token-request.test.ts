import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isStatusError, notFound, type StoredObject } from '@plinth/api';
import type { ServiceAccountTokenRequest, TokenIssuer } from '@plinth/auth';
import { createTokenRequestStorage, type ObjectGetter, type TokenRequestDeps } from './token-request.js';
import type { CreateContext } from './create-only.js';

const SA: StoredObject = { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'robot', namespace: 'team', uid: 'sa-uid' } };
const SECRET: StoredObject = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'bound', namespace: 'team', uid: 'secret-uid' } };
const POD: StoredObject = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'runner', namespace: 'team', uid: 'pod-uid' }, spec: { serviceAccountName: 'robot' } };
const OTHER_POD: StoredObject = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'other', namespace: 'team', uid: 'other-uid' }, spec: { serviceAccountName: 'default' } };

/** Objects by name; anything else is kube's NotFound. */
function getter(resource: string, objects: StoredObject[]): ObjectGetter {
  return {
    async get(_scope, name) {
      const o = objects.find((x) => x.metadata.name === name);
      if (!o) throw notFound({ group: '', resource }, name);
      return structuredClone(o);
    },
  };
}

/** An issuer that records what it was asked and answers with a fixed token. */
function recordingIssuer(calls: ServiceAccountTokenRequest[], fail?: Error): TokenIssuer {
  return {
    apiAudiences: ['https://issuer.example'],
    async issue(req) {
      calls.push(req);
      if (fail) throw fail;
      return { token: 'signed.jwt.token', expirationTimestamp: new Date(Date.UTC(2030, 0, 1, 0, 10, 0, 500)) };
    },
    issueLegacy: async () => 'legacy',
    openidConfiguration: () => ({}),
    jwks: () => ({ keys: [] }),
  };
}

const CTX: CreateContext = { user: { name: 'admin', groups: [] }, namespace: 'team', name: 'robot', dryRun: false };

function request(spec: Record<string, unknown> = {}, metadata: StoredObject['metadata'] = {}): StoredObject {
  return { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', metadata, spec: { expirationSeconds: 3600, ...spec } };
}

function storage(over: Partial<TokenRequestDeps> = {}, calls: ServiceAccountTokenRequest[] = []) {
  return createTokenRequestStorage({
    serviceAccounts: getter('serviceaccounts', [SA]),
    secrets: getter('secrets', [SECRET]),
    pods: getter('pods', [POD, OTHER_POD]),
    issuer: recordingIssuer(calls),
    apiAudiences: ['https://api.example'],
    maxExpirationSeconds: 0,
    ...over,
  });
}

const noAdmission = async (): Promise<void> => undefined;

async function refusal(p: Promise<unknown>): Promise<{ code: number; reason: string; message: string; causes?: unknown }> {
  try {
    await p;
  } catch (e) {
    assert.ok(isStatusError(e), `not a StatusError: ${String(e)}`);
    return { code: e.code, reason: e.reason, message: e.message, causes: e.details?.causes };
  }
  assert.fail('expected a refusal');
}

test('a token request is answered with the token, its expiry, the defaulted audiences and the account', async () => {
  const calls: ServiceAccountTokenRequest[] = [];
  const seen: StoredObject[] = [];
  const out = await storage({}, calls).create(CTX, request({ expirationSeconds: 600 }, { labels: { a: 'b' } }), async (o) => {
    seen.push(o);
  });
  assert.deepEqual(calls, [{ namespace: 'team', name: 'robot', uid: 'sa-uid', audiences: ['https://issuer.example'], expirationSeconds: 600 }]);
  assert.equal(out.kind, 'TokenRequest');
  assert.equal(out.apiVersion, 'authentication.k8s.io/v1');
  assert.equal(out.metadata.name, 'robot');
  assert.equal(out.metadata.namespace, 'team');
  assert.deepEqual(out.metadata.labels, { a: 'b' });
  assert.match(String(out.metadata.creationTimestamp), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  assert.deepEqual(out['spec'], { audiences: ['https://issuer.example'], expirationSeconds: 600, boundObjectRef: null });
  // metav1.Time: second precision.
  assert.deepEqual(out['status'], { token: 'signed.jwt.token', expirationTimestamp: '2030-01-01T00:10:00Z' });
  assert.equal(seen.length, 1, 'validating admission runs once');
});

test('audiences given are kept; without an issuer the API audiences default them and the answer is a 500', async () => {
  const calls: ServiceAccountTokenRequest[] = [];
  await storage({}, calls).create(CTX, request({ audiences: ['x', 'y'] }), noAdmission);
  assert.deepEqual(calls[0]!.audiences, ['x', 'y']);
  const r = await refusal(storage({ issuer: undefined }).create(CTX, request(), noAdmission));
  assert.equal(r.code, 500);
  assert.equal(r.reason, 'InternalError');
  assert.match(r.message, /issuer/);
});

test('name and account checks come first: a body naming another account is 422, a missing account 404', async () => {
  const other = await refusal(storage().create(CTX, request({}, { name: 'other' }), noAdmission));
  assert.equal(other.code, 422);
  assert.equal(other.message, 'TokenRequest.authentication.k8s.io "robot" is invalid: metadata.name: Invalid value: "other": must match the service account name if specified');
  const missing = await refusal(storage().create({ ...CTX, name: 'nope' }, request(), noAdmission));
  assert.equal(missing.code, 404);
  assert.equal(missing.message, 'serviceaccounts "nope" not found');
});

test('expirationSeconds outside [600, 2^32] is 422 with kube\'s messages and field path', async () => {
  const short = await refusal(storage().create(CTX, request({ expirationSeconds: 60 }), noAdmission));
  assert.equal(short.code, 422);
  assert.equal(short.message, 'TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes');
  assert.deepEqual(short.causes, [{ reason: 'FieldValueInvalid', message: 'Invalid value: 60: may not specify a duration less than 10 minutes', field: 'spec.expirationSeconds' }]);
  const long = await refusal(storage().create(CTX, request({ expirationSeconds: 2 ** 32 + 1 }), noAdmission));
  assert.equal(long.message, `TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: Invalid value: ${2 ** 32 + 1}: may not specify a duration larger than 2^32 seconds`);
  await storage().create(CTX, request({ expirationSeconds: 2 ** 32 }), noAdmission);
});

test('--service-account-max-token-expiration caps the requested duration', async () => {
  const calls: ServiceAccountTokenRequest[] = [];
  const out = await storage({ maxExpirationSeconds: 7200 }, calls).create(CTX, request({ expirationSeconds: 86400 }), noAdmission);
  assert.equal(calls[0]!.expirationSeconds, 7200);
  assert.equal((out['spec'] as { expirationSeconds: number }).expirationSeconds, 7200);
});

test('a bound object must exist with the given uid; only Secrets and Pods can be bound', async () => {
  const calls: ServiceAccountTokenRequest[] = [];
  await storage({}, calls).create(CTX, request({ boundObjectRef: { kind: 'Secret', apiVersion: 'v1', name: 'bound' } }), noAdmission);
  assert.deepEqual(calls[0]!.boundObject, { kind: 'Secret', apiVersion: 'v1', name: 'bound', uid: 'secret-uid' });
  const wrongUID = await refusal(storage().create(CTX, request({ boundObjectRef: { kind: 'Secret', apiVersion: 'v1', name: 'bound', uid: 'old' } }), noAdmission));
  assert.equal(wrongUID.code, 409);
  assert.equal(
    wrongUID.message,
    'Operation cannot be fulfilled on Secret "bound": the UID in the bound object reference (old) does not match the UID in record. The object might have been deleted and then recreated',
  );
  const missingSecret = await refusal(storage().create(CTX, request({ boundObjectRef: { kind: 'Secret', apiVersion: 'v1', name: 'gone' } }), noAdmission));
  assert.deepEqual([missingSecret.code, missingSecret.message], [404, 'secrets "gone" not found']);
  const pod = await refusal(storage().create(CTX, request({ boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'web' } }), noAdmission));
  assert.deepEqual([pod.code, pod.message], [404, 'pods "web" not found']);
  await storage({}, calls).create(CTX, request({ boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'runner', uid: 'pod-uid' } }), noAdmission);
  assert.deepEqual(calls[1]!.boundObject, { kind: 'Pod', apiVersion: 'v1', name: 'runner', uid: 'pod-uid' });
  const otherAccount = await refusal(storage().create(CTX, request({ boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'other' } }), noAdmission));
  assert.deepEqual([otherAccount.code, otherAccount.message], [400, 'cannot bind token for serviceaccount "robot" to pod running with different serviceaccount name.']);
  const other = await refusal(storage().create(CTX, request({ boundObjectRef: { kind: 'ConfigMap', apiVersion: 'v1', name: 'c' } }), noAdmission));
  assert.deepEqual([other.code, other.message], [400, 'cannot bind token to object of type /v1, Kind=ConfigMap']);
  const grouped = await refusal(storage().create(CTX, request({ boundObjectRef: { kind: 'Pod', apiVersion: 'apps/v1', name: 'p' } }), noAdmission));
  assert.equal(grouped.message, 'cannot bind token to object of type apps/v1, Kind=Pod');
});

test('validating admission can refuse, before any token is signed; an issuer failure is a 500', async () => {
  const calls: ServiceAccountTokenRequest[] = [];
  const denied = new Error('denied');
  await assert.rejects(storage({}, calls).create(CTX, request(), async () => Promise.reject(denied)), (e) => e === denied);
  assert.equal(calls.length, 0);
  const failed = await refusal(storage({ issuer: recordingIssuer([], new Error('key unreadable')) }).create(CTX, request(), noAdmission));
  assert.deepEqual([failed.code, failed.message], [500, 'Internal error occurred: failed to generate token: key unreadable']);
});
