import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Attributes, PolicyRule } from '../authorizer.js';
import { nonResourceURLMatches, resourceMatches, ruleAllows, subjectAppliesTo } from './rules.js';

const user = { name: 'alice', groups: ['devs', 'system:authenticated'] };
const res = (verb: string, resource: string, extra: Partial<Attributes> = {}): Attributes => ({
  user,
  verb,
  isResourceRequest: true,
  path: '',
  apiGroup: '',
  apiVersion: 'v1',
  namespace: 'ns',
  resource,
  subresource: '',
  name: '',
  ...extra,
});
const path = (verb: string, p: string): Attributes => ({ ...res(verb, ''), isResourceRequest: false, path: p, namespace: '' });

test('verbs, groups and resources match exactly or by *', () => {
  const rule: PolicyRule = { verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'] };
  assert.ok(ruleAllows(res('get', 'pods'), rule));
  assert.ok(!ruleAllows(res('delete', 'pods'), rule));
  assert.ok(!ruleAllows(res('get', 'secrets'), rule));
  assert.ok(!ruleAllows(res('get', 'pods', { apiGroup: 'apps' }), rule));
  const all: PolicyRule = { verbs: ['*'], apiGroups: ['*'], resources: ['*'] };
  assert.ok(ruleAllows(res('escalate', 'clusterroles', { apiGroup: 'rbac.authorization.k8s.io' }), all));
  assert.ok(ruleAllows(res('get', 'pods', { subresource: 'log' }), all));
  // A rule without apiGroups matches no resource request.
  assert.ok(!ruleAllows(res('get', 'pods'), { verbs: ['*'], resources: ['*'] }));
  // A resource rule never allows a path, a path rule never a resource.
  assert.ok(!ruleAllows(path('get', '/healthz'), all));
  assert.ok(!ruleAllows(res('get', 'pods'), { verbs: ['*'], nonResourceURLs: ['*'] }));
});

test('subresources: exact resource/subresource, */subresource, and never the bare resource', () => {
  const status = res('update', 'pods', { subresource: 'status', name: 'p' });
  assert.ok(ruleAllows(status, { verbs: ['update'], apiGroups: [''], resources: ['pods/status'] }));
  assert.ok(ruleAllows(status, { verbs: ['update'], apiGroups: [''], resources: ['*/status'] }));
  assert.ok(!ruleAllows(status, { verbs: ['update'], apiGroups: [''], resources: ['pods'] }));
  assert.ok(!ruleAllows(status, { verbs: ['update'], apiGroups: [''], resources: ['*/scale'] }));
  // */status is only for subresource requests; pods/status does not grant pods.
  assert.ok(!resourceMatches({ verbs: [], resources: ['*/status'] }, 'pods', ''));
  assert.ok(!ruleAllows(res('update', 'pods', { name: 'p' }), { verbs: ['update'], apiGroups: [''], resources: ['pods/status'] }));
});

test('resourceNames: only requests naming a listed object', () => {
  const rule: PolicyRule = { verbs: ['*'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['cfg'] };
  assert.ok(ruleAllows(res('get', 'configmaps', { name: 'cfg' }), rule));
  assert.ok(ruleAllows(res('delete', 'configmaps', { name: 'cfg' }), rule));
  assert.ok(!ruleAllows(res('get', 'configmaps', { name: 'other' }), rule));
  for (const verb of ['list', 'create', 'deletecollection', 'watch']) assert.ok(!ruleAllows(res(verb, 'configmaps'), rule), verb);
  // A watch of one object (fieldSelector metadata.name) carries the name.
  assert.ok(ruleAllows(res('watch', 'configmaps', { name: 'cfg' }), rule));
});

test('nonResourceURLs: exact, *, and prefixes ending in *', () => {
  const r = (u: string): PolicyRule => ({ verbs: ['get'], nonResourceURLs: [u] });
  assert.ok(nonResourceURLMatches(r('/healthz'), '/healthz'));
  assert.ok(!nonResourceURLMatches(r('/healthz'), '/healthz/etcd'));
  assert.ok(nonResourceURLMatches(r('/healthz/*'), '/healthz/etcd'));
  assert.ok(!nonResourceURLMatches(r('/healthz/*'), '/healthz'));
  assert.ok(nonResourceURLMatches(r('/api*'), '/apis/apps'));
  assert.ok(nonResourceURLMatches(r('/logs**'), '/logs/x'));
  assert.ok(nonResourceURLMatches(r('*'), '/anything'));
  assert.ok(ruleAllows(path('get', '/version'), r('/version')));
  assert.ok(!ruleAllows(path('post', '/version'), r('/version')));
});

test('subjects: users by name, groups by membership, service accounts by user name and namespace', () => {
  assert.ok(subjectAppliesTo(user, { kind: 'User', name: 'alice' }, ''));
  assert.ok(!subjectAppliesTo(user, { kind: 'User', name: 'bob' }, ''));
  assert.ok(subjectAppliesTo(user, { kind: 'Group', name: 'devs' }, ''));
  assert.ok(!subjectAppliesTo(user, { kind: 'Group', name: 'alice' }, ''));
  const sa = { name: 'system:serviceaccount:ns:builder', groups: [] };
  assert.ok(subjectAppliesTo(sa, { kind: 'ServiceAccount', name: 'builder', namespace: 'ns' }, ''));
  assert.ok(subjectAppliesTo(sa, { kind: 'ServiceAccount', name: 'builder' }, 'ns'), 'defaults to the binding namespace');
  assert.ok(!subjectAppliesTo(sa, { kind: 'ServiceAccount', name: 'builder' }, ''), 'no namespace at cluster scope');
  assert.ok(!subjectAppliesTo(sa, { kind: 'ServiceAccount', name: 'builder' }, 'other'));
  assert.ok(!subjectAppliesTo(user, { kind: 'Robot', name: 'alice' }, ''));
});
