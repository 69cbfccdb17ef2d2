import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Attributes } from './authorizer.js';
import { decodeSubjectAccessReview, subjectAccessReviewRequest } from './authz-webhook.js';

const attrs: Attributes = {
  user: { name: 'jane', uid: 'u1', groups: ['g1', 'g2'], extra: { scopes: ['a'] } },
  verb: 'update',
  isResourceRequest: true,
  path: '/apis/apps/v1/namespaces/ns/deployments/web/scale',
  apiGroup: 'apps',
  apiVersion: 'v1',
  namespace: 'ns',
  resource: 'deployments',
  subresource: 'scale',
  name: 'web',
};

test('the review: kube field names per version, empty fields omitted, path only for non-resource requests', () => {
  assert.deepEqual(subjectAccessReviewRequest('v1beta1', attrs), {
    kind: 'SubjectAccessReview',
    apiVersion: 'authorization.k8s.io/v1beta1',
    metadata: { creationTimestamp: null },
    spec: {
      resourceAttributes: { namespace: 'ns', verb: 'update', group: 'apps', version: 'v1', resource: 'deployments', subresource: 'scale', name: 'web' },
      user: 'jane',
      group: ['g1', 'g2'],
      extra: { scopes: ['a'] },
      uid: 'u1',
    },
    status: { allowed: false },
  });
  const v1 = subjectAccessReviewRequest('v1', { ...attrs, isResourceRequest: false, path: '/healthz', verb: 'get', user: { name: 'jane', groups: ['g'] } });
  assert.deepEqual(v1['spec'], { nonResourceAttributes: { path: '/healthz', verb: 'get' }, user: 'jane', groups: ['g'] });
});

test('the answer: kind and version checked, wrong types refused, absent fields false', () => {
  assert.deepEqual(decodeSubjectAccessReview({ apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', status: { allowed: true } }, 'v1'), { allowed: true, denied: false, reason: '' });
  assert.deepEqual(decodeSubjectAccessReview({ status: { allowed: false, denied: true, reason: 'no' } }, 'v1beta1'), { allowed: false, denied: true, reason: 'no' });
  assert.deepEqual(decodeSubjectAccessReview({}, 'v1'), { allowed: false, denied: false, reason: '' });
  assert.throws(() => decodeSubjectAccessReview({ apiVersion: 'authorization.k8s.io/v1', status: { allowed: true } }, 'v1beta1'), /not a authorization.k8s.io\/v1beta1 SubjectAccessReview/);
  assert.throws(() => decodeSubjectAccessReview({ kind: 'TokenReview' }, 'v1'), /SubjectAccessReview/);
  assert.throws(() => decodeSubjectAccessReview({ status: { allowed: 'yes' } }, 'v1'), /status.allowed must be a boolean/);
  assert.throws(() => decodeSubjectAccessReview('allowed', 'v1'), /not a/);
});
