import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseCsvLine, parseTokenFile, createTokenAuthenticator } from './token-file.js';
import { createUnionAuthenticator, bearerToken } from './authenticator.js';

test('CSV lines split with quoted group columns', () => {
  assert.deepEqual(parseCsvLine('tok,alice,1001,"g1,g2"'), ['tok', 'alice', '1001', 'g1,g2']);
  assert.deepEqual(parseCsvLine('tok,bob,1002'), ['tok', 'bob', '1002']);
  assert.deepEqual(parseCsvLine('"a""b",x,y'), ['a"b', 'x', 'y']);
  assert.throws(() => parseCsvLine('tok,"unterminated'), /quoted-field/);
});

test('token file parses users and groups, skipping blank lines', () => {
  const users = parseTokenFile('t1,alice,u1,"dev,ops"\n\nt2,bob,u2\n');
  assert.deepEqual(users.get('t1'), { name: 'alice', uid: 'u1', groups: ['dev', 'ops'] });
  assert.deepEqual(users.get('t2'), { name: 'bob', uid: 'u2', groups: [] });
});

test('token file errors name the line', () => {
  assert.throws(() => parseTokenFile('t1,alice,u1\nt2,bob\n', 'f.csv'), /f\.csv: line 2: .*at least 3 columns/);
  assert.throws(() => parseTokenFile('t1,alice,u1\nt1,bob,u2\n'), /line 2: duplicate token/);
});

test('bearer tokens authenticate and gain system:authenticated', async () => {
  const auth = createUnionAuthenticator([createTokenAuthenticator({ tokens: parseTokenFile('secret,alice,u1,admins') })]);
  const ok = await auth.authenticate({ headers: { authorization: 'Bearer secret' }, peerCertificates: [] });
  assert.equal(ok.kind, 'authenticated');
  assert.ok(ok.kind === 'authenticated');
  assert.deepEqual(ok.user.groups, ['admins', 'system:authenticated']);
  // A presented token nobody accepts is a failed credential (401), not an absent one.
  assert.equal((await auth.authenticate({ headers: { authorization: 'Bearer nope' }, peerCertificates: [] })).kind, 'rejected');
  assert.equal((await auth.authenticate({ headers: {}, peerCertificates: [] })).kind, 'no-opinion');
  assert.equal(bearerToken({ headers: { authorization: 'Basic abc' } }), undefined);
});

test('bearer tokens are read as kube reads them', () => {
  const tok = (authorization: string): string | undefined => bearerToken({ headers: { authorization } });
  assert.equal(tok('Bearer abc'), 'abc');
  assert.equal(tok('bearer abc'), 'abc');
  assert.equal(tok('  Bearer abc  '), 'abc');
  assert.equal(tok('Bearer abc trailing'), 'abc');
  // Two spaces: the token part is empty, so there is no credential at all (kube ignores it).
  assert.equal(tok('Bearer  abc'), undefined);
  assert.equal(tok('Bearer'), undefined);
  assert.equal(tok('Bearer '), undefined);
  assert.equal(tok('Bearerabc'), undefined);
});
