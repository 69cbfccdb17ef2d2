import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isStatusError, localsubjectaccessreviews, selfsubjectaccessreviews, selfsubjectrulesreviews, subjectaccessreviews, type StoredObject } from '@plinth/api';
import type { Attributes, Authorizer, Decision } from '@plinth/auth';
import { createAuthorizationStorages } from './authorization.js';
import type { CreateContext } from './create-only.js';

const ctx: CreateContext = { user: { name: 'me', groups: ['g'] }, namespace: '', name: '', dryRun: false };
const validate = async (): Promise<void> => {};

function storages(authorizer: Authorizer) {
  const m = createAuthorizationStorages({ authorizer });
  return { sar: m.get(subjectaccessreviews)!, ssar: m.get(selfsubjectaccessreviews)!, lsar: m.get(localsubjectaccessreviews)!, ssrr: m.get(selfsubjectrulesreviews)! };
}

function review(spec: Record<string, unknown>, metadata: StoredObject['metadata'] = {}): StoredObject {
  return { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', metadata, spec };
}

test('the three decisions and an authorizer error, as kube writes the status', async () => {
  const answers: Array<Decision | Error> = [
    { decision: 'allow', reason: 'ok' },
    { decision: 'deny', reason: 'nope' },
    { decision: 'no-opinion' },
    new Error('boom'),
    { decision: 'no-opinion', reason: 'webhook', error: 'connection refused' },
  ];
  const seen: Attributes[] = [];
  const { sar } = storages({
    authorize(a) {
      seen.push(a);
      const next = answers.shift()!;
      if (next instanceof Error) throw next;
      return next;
    },
  });
  const spec = { user: 'u', groups: ['x'], uid: 'id', extra: { k: ['v'] }, resourceAttributes: { verb: 'get', resource: 'pods', subresource: 'log', namespace: 'n', name: 'p' } };
  const statuses = [];
  for (let i = 0; i < 5; i++) statuses.push((await sar.create(ctx, review(spec), validate))['status']);
  assert.deepEqual(statuses, [
    { allowed: true, reason: 'ok' },
    { allowed: false, denied: true, reason: 'nope' },
    { allowed: false },
    { allowed: false, evaluationError: 'boom' },
    { allowed: false, reason: 'webhook', evaluationError: 'connection refused' },
  ]);
  // The user asked about (not the caller), every version when none is named.
  assert.deepEqual(seen[0], {
    user: { name: 'u', groups: ['x'], uid: 'id', extra: { k: ['v'] } },
    verb: 'get',
    isResourceRequest: true,
    path: '',
    apiGroup: '',
    apiVersion: '*',
    namespace: 'n',
    resource: 'pods',
    subresource: 'log',
    name: 'p',
  });
});

test('SelfSubjectAccessReview asks about the caller; non-resource attributes', async () => {
  let seen: Attributes | undefined;
  const { ssar } = storages({ authorize: (a) => ((seen = a), { decision: 'allow' }) });
  const out = await ssar.create(ctx, review({ nonResourceAttributes: { path: '/logs', verb: 'get' } }), validate);
  assert.equal(out.kind, 'SelfSubjectAccessReview');
  assert.deepEqual(seen, { user: ctx.user, verb: 'get', isResourceRequest: false, path: '/logs', apiGroup: '', apiVersion: '', namespace: '', resource: '', subresource: '', name: '' });
});

test('LocalSubjectAccessReview: 400 without or against the request namespace', async () => {
  const { lsar } = storages({ authorize: () => ({ decision: 'allow' }) });
  const spec = { user: 'u', resourceAttributes: { verb: 'get', resource: 'pods', namespace: 'a' } };
  const bad = (e: unknown, message: string): boolean => isStatusError(e) && e.code === 400 && e.message === message;
  await assert.rejects(lsar.create({ ...ctx, namespace: '' }, review(spec, { namespace: 'a' }), validate), (e) => bad(e, 'namespace is required on this type: '));
  await assert.rejects(lsar.create({ ...ctx, namespace: 'b' }, review(spec, { namespace: 'a' }), validate), (e) => bad(e, 'spec.resourceAttributes.namespace must match namespace: b'));
  assert.deepEqual((await lsar.create({ ...ctx, namespace: 'a' }, review(spec, { namespace: 'a' }), validate))['status'], { allowed: true });
});

test('validation runs before admission and the authorizer', async () => {
  let asked = false;
  let admitted = false;
  const { sar } = storages({ authorize: () => ((asked = true), { decision: 'allow' }) });
  await assert.rejects(
    sar.create(ctx, review({ user: 'u' }), async () => {
      admitted = true;
    }),
    (e) => isStatusError(e) && e.code === 422,
  );
  assert.equal(asked || admitted, false);
});

test('SelfSubjectRulesReview: the rules in kube\'s v1 shape; an authorizer without rules is incomplete', async () => {
  const { ssrr } = storages({
    authorize: () => ({ decision: 'no-opinion' }),
    rulesFor: (user, ns) => {
      assert.deepEqual([user, ns], [ctx.user, 'n1']);
      return {
        resourceRules: [{ verbs: ['get'], apiGroups: [''], resources: ['pods'], resourceNames: [] }],
        nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['/logs'] }],
        incomplete: false,
        evaluationError: 'role missing',
      };
    },
  });
  const out = await ssrr.create(ctx, { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectRulesReview', metadata: { name: 'x' }, spec: { namespace: 'n1' } }, validate);
  assert.deepEqual(out, {
    kind: 'SelfSubjectRulesReview',
    apiVersion: 'authorization.k8s.io/v1',
    metadata: { creationTimestamp: null },
    spec: {},
    status: { resourceRules: [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }], nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['/logs'] }], incomplete: false, evaluationError: 'role missing' },
  });
  const none = storages({ authorize: () => ({ decision: 'allow' }) }).ssrr;
  assert.deepEqual((await none.create(ctx, { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectRulesReview', metadata: {}, spec: { namespace: 'n1' } }, validate))['status'], {
    resourceRules: [],
    nonResourceRules: [],
    incomplete: true,
  });
});
