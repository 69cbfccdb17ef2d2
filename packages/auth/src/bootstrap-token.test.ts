import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { StoredObject } from '@plinth/api';
import {
  bootstrapTokenExpiration,
  bootstrapTokenGroups,
  createBootstrapTokenAuthenticator,
  parseBootstrapToken,
  parseRFC3339,
  validateBootstrapGroupName,
} from './bootstrap-token.js';
import type { AuthResult } from './authenticator.js';

const ID = 'abcdef';
const SECRET = '0123456789abcdef';
const TOKEN = `${ID}.${SECRET}`;
const NOW = Date.parse('2024-05-01T12:00:00Z');

/** A Secret as plinth stores it: `data` values are base64 text. */
function secret(data: Record<string, string>, extra: Partial<StoredObject> = {}): StoredObject {
  const encoded = Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString('base64')]));
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    type: 'bootstrap.kubernetes.io/token',
    metadata: { name: `bootstrap-token-${ID}`, namespace: 'kube-system', uid: 'u1' },
    data: encoded,
    ...extra,
  } as StoredObject;
}

const valid = (more: Record<string, string> = {}): Record<string, string> => ({
  'token-id': ID,
  'token-secret': SECRET,
  'usage-bootstrap-authentication': 'true',
  ...more,
});

/** Authenticates `token` against a store holding `stored` (by namespace/name), recording each read. */
async function authWith(stored: StoredObject | undefined, token = TOKEN, audiences?: string[]): Promise<{ result: AuthResult; reads: string[] }> {
  const reads: string[] = [];
  const auth = createBootstrapTokenAuthenticator({
    now: () => NOW,
    getSecret: async (ns, name) => {
      reads.push(`${ns}/${name}`);
      return stored && stored.metadata.namespace === ns && stored.metadata.name === name ? stored : undefined;
    },
  });
  const result = await auth.authenticate({ headers: { authorization: `Bearer ${token}` }, peerCertificates: [], ...(audiences ? { audiences } : {}) });
  return { result, reads };
}

test('token format: six and sixteen lower-case alphanumerics around a dot', () => {
  assert.deepEqual(parseBootstrapToken(TOKEN), { id: ID, secret: SECRET });
  for (const bad of ['ABCDEF.0123456789abcdef', 'abcde.0123456789abcdef', 'abcdef.0123456789abcde', 'abcdef0123456789abcdef', 'abcdef.0123456789abcdef\n', ' abcdef.0123456789abcdef', 'abcdef.0123456789abcdeg0', 'abcdef-0123456789abcdef']) {
    assert.equal(parseBootstrapToken(bad), undefined, bad);
  }
});

test('a bearer token of another form is not a bootstrap token: no opinion, no Secret read', async () => {
  for (const token of ['not-a-bootstrap-token', 'ABCDEF.0123456789ABCDEF', 'a.b.c']) {
    const { result, reads } = await authWith(secret(valid()), token);
    assert.equal(result.kind, 'no-opinion', token);
    assert.deepEqual(reads, []);
  }
  const auth = createBootstrapTokenAuthenticator({ getSecret: async () => assert.fail('no read without a token') });
  assert.equal((await auth.authenticate({ headers: {}, peerCertificates: [] })).kind, 'no-opinion');
});

test('a valid token authenticates as system:bootstrap:<id> in system:bootstrappers, from kube-system/bootstrap-token-<id>', async () => {
  const { result, reads } = await authWith(secret(valid()));
  assert.deepEqual(reads, [`kube-system/bootstrap-token-${ID}`]);
  assert.deepEqual(result, { kind: 'authenticated', user: { name: `system:bootstrap:${ID}`, groups: ['system:bootstrappers'] } });
});

test('the Secret must exist, be of the bootstrap type, hold the same secret and id, and not be deleting', async () => {
  const refused = async (s: StoredObject | undefined, what: string, token = TOKEN): Promise<void> => {
    const { result } = await authWith(s, token);
    assert.equal(result.kind, 'rejected', what);
    // The token's secret never appears in a reason.
    assert.ok(result.kind === 'rejected' && !result.reason.includes(SECRET), what);
  };
  await refused(undefined, 'no such secret');
  await refused(secret(valid()), 'wrong secret part', `${ID}.ffffffffffffffff`);
  await refused(secret(valid({ 'token-secret': `${SECRET}0` })), 'stored secret longer');
  await refused(secret(valid({ 'token-id': 'zzzzzz' })), 'token-id differs from the name');
  await refused(secret(valid(), { type: 'Opaque' }), 'not the bootstrap type');
  await refused(secret({}), 'no data');
  await refused(secret(valid(), { metadata: { name: `bootstrap-token-${ID}`, namespace: 'kube-system', deletionTimestamp: '2024-05-01T11:00:00Z' } }), 'being deleted');
  // Secret data as written through the API with stringData ends up base64 in data: decoded, it matches.
  assert.equal((await authWith(secret(valid()))).result.kind, 'authenticated');
});

test('usage-bootstrap-authentication must be exactly "true"', async () => {
  const { 'usage-bootstrap-authentication': _, ...noUsage } = valid();
  assert.equal((await authWith(secret(noUsage))).result.kind, 'rejected');
  for (const v of ['false', 'True', 'yes', '1', ' true']) {
    assert.equal((await authWith(secret(valid({ 'usage-bootstrap-authentication': v })))).result.kind, 'rejected', v);
  }
});

test('expiration: RFC 3339, refused once passed or when unparseable', async () => {
  const at = (expiration: string): Promise<AuthResult> => authWith(secret(valid({ expiration }))).then((r) => r.result);
  assert.equal((await at('2024-05-01T12:00:01Z')).kind, 'authenticated');
  assert.equal((await at('2024-05-01T11:59:59Z')).kind, 'rejected');
  assert.equal((await at('2024-05-01T12:00:00Z')).kind, 'rejected', 'expiring now is expired');
  assert.equal((await at('2024-05-01T13:30:00+02:00')).kind, 'rejected', 'offsets count (11:30 UTC)');
  assert.equal((await at('2024-05-01T10:30:00-02:00')).kind, 'authenticated', '12:30 UTC');
  assert.equal((await at('tomorrow')).kind, 'rejected', 'unparseable: treated as expired');
  assert.equal((await at('2030-05-01 12:00:00Z')).kind, 'rejected', 'a space is not RFC 3339');

  const exp = (expiration?: string) => bootstrapTokenExpiration(secret(expiration === undefined ? valid() : valid({ expiration })), NOW);
  assert.deepEqual(exp(), { expired: false, remainingMs: 0 }, 'no expiration: never expires');
  assert.deepEqual(exp('2024-05-01T12:00:10Z'), { expired: false, remainingMs: 10_000 });
  assert.equal(exp('2024-02-30T00:00:00Z').expired, true, 'no such day');
});

test('RFC 3339 as Go parses it', () => {
  assert.equal(parseRFC3339('2024-05-01T12:00:00Z'), Date.parse('2024-05-01T12:00:00Z'));
  assert.equal(parseRFC3339('2024-05-01T12:00:00.250Z'), Date.parse('2024-05-01T12:00:00.250Z'), 'fractional seconds');
  assert.equal(parseRFC3339('2024-05-01T12:00:00+01:30'), Date.parse('2024-05-01T10:30:00Z'));
  assert.equal(parseRFC3339('2024-02-29T00:00:00Z'), Date.parse('2024-02-29T00:00:00Z'), 'leap day');
  for (const bad of ['2023-02-29T00:00:00Z', '2024-13-01T00:00:00Z', '2024-05-01T24:00:00Z', '2024-05-01T12:60:00Z', '2024-05-01T12:00:60Z', '2024-05-01T12:00:00', '2024-05-01t12:00:00z', '2024-05-01T12:00Z', '']) {
    assert.equal(parseRFC3339(bad), undefined, bad);
  }
});

test('auth-extra-groups: each must match system:bootstrappers:[a-z0-9:-]{0,255}[a-z0-9], else refused', async () => {
  const groups = (extra: string) => bootstrapTokenGroups(secret(valid({ 'auth-extra-groups': extra })));
  assert.deepEqual(groups('system:bootstrappers:worker,system:bootstrappers:a:b-c,system:bootstrappers:worker'), {
    groups: ['system:bootstrappers', 'system:bootstrappers:a:b-c', 'system:bootstrappers:worker'],
  });
  for (const bad of ['system:bootstrappers', 'system:bootstrappers:', 'system:bootstrappers:x-', 'system:masters', 'system:bootstrappers:Worker', 'system:bootstrappers:a, system:bootstrappers:b', 'system:bootstrappers:a,', `system:bootstrappers:${'a'.repeat(257)}`]) {
    assert.ok('error' in groups(bad), bad);
  }
  assert.equal(validateBootstrapGroupName(`system:bootstrappers:${'a'.repeat(256)}`), undefined);

  const { result } = await authWith(secret(valid({ 'auth-extra-groups': 'system:bootstrappers:kubeadm:default-node-token' })));
  assert.deepEqual(result, { kind: 'authenticated', user: { name: `system:bootstrap:${ID}`, groups: ['system:bootstrappers', 'system:bootstrappers:kubeadm:default-node-token'] } });
  assert.equal((await authWith(secret(valid({ 'auth-extra-groups': 'system:masters' })))).result.kind, 'rejected');
});

test('a failing Secret read refuses the token without leaking it', async () => {
  const auth = createBootstrapTokenAuthenticator({
    getSecret: async () => {
      throw new Error('etcd down');
    },
  });
  const r = await auth.authenticate({ headers: { authorization: `Bearer ${TOKEN}` }, peerCertificates: [] });
  assert.equal(r.kind, 'rejected');
});
