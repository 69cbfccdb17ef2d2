import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fieldErrorString } from '../../field-errors.js';
import type { StoredObject } from '../../types.js';
import { validateLocalSubjectAccessReview, validateSelfSubjectAccessReview, validateSubjectAccessReview } from './validation.js';

const obj = (spec: Record<string, unknown>, metadata: StoredObject['metadata'] = {}): StoredObject => ({ apiVersion: 'authorization.k8s.io/v1', kind: 'X', metadata, spec });
const messages = (errs: ReturnType<typeof validateSubjectAccessReview>): string[] => errs.map(fieldErrorString);

test('SubjectAccessReview: exactly one kind of attributes, a user or a group, empty metadata', () => {
  assert.deepEqual(messages(validateSubjectAccessReview(obj({ user: 'u', resourceAttributes: {} }))), []);
  assert.deepEqual(messages(validateSubjectAccessReview(obj({ groups: ['g'], nonResourceAttributes: {} }))), []);
  assert.deepEqual(messages(validateSubjectAccessReview(obj({ groups: [], resourceAttributes: {} }))), ['spec.user: Invalid value: "": at least one of user or group must be specified']);
  assert.deepEqual(messages(validateSubjectAccessReview(obj({ user: 'u', resourceAttributes: {}, nonResourceAttributes: { verb: 'get' } }))), [
    'spec.nonResourceAttributes: Invalid value: authorization.NonResourceAttributes{Path:"", Verb:"get"}: cannot be specified in combination with resourceAttributes',
  ]);
  // creationTimestamp: null (as kubectl sends it) and managedFields count as empty.
  assert.deepEqual(messages(validateSubjectAccessReview(obj({ user: 'u', resourceAttributes: {} }, { creationTimestamp: null, managedFields: [] }))), []);
  // The value as Go's %#v prints kube's v1.ObjectMeta.
  assert.deepEqual(messages(validateSubjectAccessReview(obj({ user: 'u', resourceAttributes: {} }, { name: 'x', labels: { b: '2', a: '1' }, creationTimestamp: '2024-05-01T10:20:30Z' }))), [
    'metadata: Invalid value: v1.ObjectMeta{Name:"x", GenerateName:"", Namespace:"", SelfLink:"", UID:"", ResourceVersion:"", Generation:0, CreationTimestamp:time.Date(2024, time.May, 1, 10, 20, 30, 0, time.Local), DeletionTimestamp:<nil>, DeletionGracePeriodSeconds:(*int64)(nil), Labels:map[string]string{"a":"1", "b":"2"}, Annotations:map[string]string(nil), OwnerReferences:[]v1.OwnerReference(nil), Finalizers:[]string(nil), ZZZ_DeprecatedClusterName:"", ManagedFields:[]v1.ManagedFieldsEntry(nil)}: must be empty',
  ]);
});

test('SelfSubjectAccessReview: no user needed; metadata must be empty', () => {
  assert.deepEqual(messages(validateSelfSubjectAccessReview(obj({ resourceAttributes: {} }))), []);
  assert.deepEqual(messages(validateSelfSubjectAccessReview(obj({}))), ['spec.resourceAttributes: Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes must be specified']);
  assert.equal(validateSelfSubjectAccessReview(obj({ resourceAttributes: {} }, { namespace: 'n' })).length, 1);
});

test('LocalSubjectAccessReview: the namespace may be set and must be the attributes\' namespace', () => {
  assert.deepEqual(messages(validateLocalSubjectAccessReview(obj({ user: 'u', resourceAttributes: { namespace: 'n' } }, { namespace: 'n' }))), []);
  assert.deepEqual(messages(validateLocalSubjectAccessReview(obj({ user: 'u', resourceAttributes: {} }, { namespace: 'n' }))), ['spec.resourceAttributes.namespace: Invalid value: "": must match metadata.namespace']);
  assert.match(messages(validateLocalSubjectAccessReview(obj({ user: 'u', resourceAttributes: { namespace: 'n' } }, { namespace: 'n', name: 'x' })))[0]!, /must be empty except for namespace$/);
});
