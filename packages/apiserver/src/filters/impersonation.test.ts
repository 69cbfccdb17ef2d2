import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isDeepStrictEqual } from 'node:util';
import { isStatusError, type UserInfo } from '@plinth/api';
import type { Attributes } from '@plinth/auth';
import { contextOf, setContext } from '../context.js';
import { parseRequestInfo } from '../request-info.js';
import { impersonatedUser, impersonationAttributes, parseImpersonationRequests, withImpersonation } from './impersonation.js';

/** Raw headers as Node keeps them: name, value, name, value … in the order sent. */
function raw(...pairs: Array<[string, string]>): string[] {
  return pairs.flat();
}

test('no impersonation headers: nothing to impersonate', () => {
  assert.deepEqual(parseImpersonationRequests(raw(['Accept', 'application/json'], ['Impersonate-User', ''])), []);
});

test('user, repeated groups (each header one value, commas kept), extras with %-decoded lower-cased keys, uid', () => {
  const reqs = parseImpersonationRequests(
    raw(
      ['Impersonate-User', 'jane'],
      ['Impersonate-Group', 'devs'],
      ['impersonate-group', 'a, b'],
      ['Impersonate-Extra-Example.COM%2Fscopes', 'view'],
      ['Impersonate-Extra-example.com%2Fscopes', 'edit'],
      ['Impersonate-Extra-Bad%zz', 'x'],
      ['Impersonate-Uid', 'u-1'],
    ),
  );
  assert.deepEqual(
    reqs.map((r) => [r.kind, r.name, r.fieldPath]),
    [
      ['User', 'jane', ''],
      ['Group', 'devs', ''],
      ['Group', 'a, b', ''],
      ['UserExtra', 'view', 'example.com/scopes'],
      ['UserExtra', 'edit', 'example.com/scopes'],
      ['UserExtra', 'x', 'bad%zz'],
      ['UID', 'u-1', ''],
    ],
  );
  assert.deepEqual(impersonatedUser(reqs), {
    name: 'jane',
    uid: 'u-1',
    groups: ['devs', 'a, b', 'system:authenticated'],
    extra: { 'example.com/scopes': ['view', 'edit'], 'bad%zz': ['x'] },
  });
});

test('the first Impersonate-User counts (Go Header.Get)', () => {
  assert.equal(parseImpersonationRequests(raw(['Impersonate-User', 'a'], ['Impersonate-User', 'b']))[0]!.name, 'a');
});

test('groups, extras or a uid without a user: 400 naming the requests as Go prints them', () => {
  for (const [headers, message] of [
    [raw(['Impersonate-Group', 'devs']), 'requested [{Group  devs    }] without impersonating a user'],
    [raw(['Impersonate-Extra-Scopes', 'v']), 'requested [{UserExtra  v  authentication.k8s.io/v1  scopes}] without impersonating a user'],
    [raw(['Impersonate-Uid', '7']), 'requested [{UID  7  authentication.k8s.io/v1  }] without impersonating a user'],
  ] as const) {
    assert.throws(
      () => parseImpersonationRequests(headers),
      (e: unknown) => isStatusError(e) && e.code === 400 && e.message === message,
    );
  }
});

test('service accounts: checked as serviceaccounts in their namespace; their groups unless groups are named', () => {
  const reqs = parseImpersonationRequests(raw(['Impersonate-User', 'system:serviceaccount:ns1:robot']));
  assert.deepEqual(reqs[0], { kind: 'ServiceAccount', namespace: 'ns1', name: 'robot', apiVersion: '', fieldPath: '' });
  const a = impersonationAttributes({ name: 'admin', groups: [] }, reqs[0]!);
  assert.deepEqual([a.verb, a.apiGroup, a.resource, a.namespace, a.name], ['impersonate', '', 'serviceaccounts', 'ns1', 'robot']);
  assert.deepEqual(impersonatedUser(reqs), { name: 'system:serviceaccount:ns1:robot', groups: ['system:serviceaccounts', 'system:serviceaccounts:ns1', 'system:authenticated'] });
  const named = parseImpersonationRequests(raw(['Impersonate-User', 'system:serviceaccount:ns1:robot'], ['Impersonate-Group', 'g']));
  assert.deepEqual(impersonatedUser(named).groups, ['g', 'system:authenticated']);
  // Not a well-formed service account name: an ordinary user.
  for (const name of ['system:serviceaccount:ns1', 'system:serviceaccount:NS:robot', 'system:serviceaccount:a:b:c']) {
    assert.equal(parseImpersonationRequests(raw(['Impersonate-User', name]))[0]!.kind, 'User', name);
  }
});

test('the attributes checked for each kind of request', () => {
  const who = { name: 'admin', groups: [] };
  const reqs = parseImpersonationRequests(raw(['Impersonate-User', 'jane'], ['Impersonate-Group', 'g'], ['Impersonate-Extra-Scopes', 'v'], ['Impersonate-Uid', '7']));
  assert.deepEqual(
    reqs.map((r) => impersonationAttributes(who, r)).map((a) => [a.apiGroup, a.apiVersion, a.resource, a.subresource, a.name]),
    [
      ['', '', 'users', '', 'jane'],
      ['', '', 'groups', '', 'g'],
      ['authentication.k8s.io', 'v1', 'userextras', 'scopes', 'v'],
      ['authentication.k8s.io', 'v1', 'uids', '', '7'],
    ],
  );
});

test('system:authenticated and system:anonymous, as kube adds them', () => {
  const user = (...h: Array<[string, string]>) => impersonatedUser(parseImpersonationRequests(raw(...h)));
  assert.deepEqual(user(['Impersonate-User', 'jane'], ['Impersonate-Group', 'system:authenticated']).groups, ['system:authenticated']);
  assert.deepEqual(user(['Impersonate-User', 'jane'], ['Impersonate-Group', 'system:unauthenticated']).groups, ['system:unauthenticated']);
  assert.deepEqual(user(['Impersonate-User', 'system:anonymous']).groups, ['system:unauthenticated']);
  assert.deepEqual(user(['Impersonate-User', 'system:anonymous'], ['Impersonate-Group', 'g']).groups, ['g', 'system:unauthenticated']);
  assert.deepEqual(user(['Impersonate-User', 'system:anonymous'], ['Impersonate-Group', 'system:unauthenticated']).groups, ['system:unauthenticated']);
});

/** A request through withImpersonation with an authorizer that allows only what `allowed` says. */
async function through(rawHeaders: string[], allowed: (a: Attributes) => boolean): Promise<{ user?: UserInfo; headers?: IncomingMessage['headers']; asked: Attributes[] }> {
  const headers: IncomingMessage['headers'] = {};
  for (let i = 0; i < rawHeaders.length; i += 2) headers[rawHeaders[i]!.toLowerCase()] = rawHeaders[i + 1]!;
  const req = { rawHeaders, headers } as unknown as IncomingMessage;
  setContext(req, { info: parseRequestInfo('GET', '/api/v1/namespaces', new URLSearchParams()), query: new URLSearchParams(), user: { name: 'bob', groups: ['system:authenticated'] }, start: 0n });
  const asked: Attributes[] = [];
  const out: { user?: UserInfo; headers?: IncomingMessage['headers']; asked: Attributes[] } = { asked };
  const handler = withImpersonation(
    async (r) => {
      out.user = contextOf(r).user;
      out.headers = r.headers;
    },
    { authorize: (a) => (asked.push(a), allowed(a) ? { decision: 'allow' } : { decision: 'no-opinion' }) },
  );
  await handler(req, {} as ServerResponse);
  return out;
}

test('withImpersonation: every request checked with the requestor; the next handler sees the new user, no impersonation headers', async () => {
  const r = await through(['Impersonate-User', 'jane', 'Impersonate-Group', 'devs', 'Accept', '*/*'], () => true);
  assert.deepEqual(r.asked.map((a) => [a.user.name, a.verb, a.resource, a.name]), [['bob', 'impersonate', 'users', 'jane'], ['bob', 'impersonate', 'groups', 'devs']]);
  assert.deepEqual(r.user, { name: 'jane', groups: ['devs', 'system:authenticated'] });
  assert.deepEqual(r.headers, { accept: '*/*' });
});

test('withImpersonation: refused with kube\'s 403 at the first request not allowed', async () => {
  const forbiddenWith = (message: string, details: object) => (e: unknown) => isStatusError(e) && e.code === 403 && e.message === message && isDeepStrictEqual(e.details, details);
  await assert.rejects(
    through(['Impersonate-User', 'jane'], () => false),
    forbiddenWith('users "jane" is forbidden: User "bob" cannot impersonate resource "users" in API group "" at the cluster scope', { name: 'jane', kind: 'users' }),
  );
  await assert.rejects(
    through(['Impersonate-User', 'jane', 'Impersonate-Group', 'system:masters'], (a) => a.resource === 'users'),
    forbiddenWith('groups "system:masters" is forbidden: User "bob" cannot impersonate resource "groups" in API group "" at the cluster scope', { name: 'system:masters', kind: 'groups' }),
  );
  await assert.rejects(
    through(['Impersonate-User', 'system:serviceaccount:ns1:robot'], () => false),
    forbiddenWith('serviceaccounts "robot" is forbidden: User "bob" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "ns1"', { name: 'robot', kind: 'serviceaccounts' }),
  );
  await assert.rejects(
    through(['Impersonate-User', 'jane', 'Impersonate-Extra-Scopes', 'view'], (a) => a.resource === 'users'),
    forbiddenWith('userextras.authentication.k8s.io "view" is forbidden: User "bob" cannot impersonate resource "userextras/scopes" in API group "authentication.k8s.io" at the cluster scope', {
      name: 'view',
      group: 'authentication.k8s.io',
      kind: 'userextras',
    }),
  );
});
