import { test } from 'node:test';
import assert from 'node:assert/strict';
import { disabledByRuntimeConfig } from './runtime-config.js';

const defs = [
  { group: '', version: 'v1', plural: 'configmaps' },
  { group: '', version: 'v1', plural: 'events' },
  { group: 'events.k8s.io', version: 'v1', plural: 'events' },
  { group: 'events.k8s.io', version: 'v1beta1', plural: 'events' },
  { group: 'coordination.k8s.io', version: 'v1', plural: 'leases' },
];

function resolve(config: Record<string, string>): { off: string[]; errs: string[] } {
  const errs: string[] = [];
  const off = [...disabledByRuntimeConfig(config, defs, errs)].sort();
  return { off, errs };
}

test('nothing set: everything served', () => {
  assert.deepEqual(resolve({}), { off: [], errs: [] });
});

test('group/version and group/version/resource keys; an omitted value means true; the core group spellings', () => {
  assert.deepEqual(resolve({ 'coordination.k8s.io/v1': 'false' }).off, ['coordination.k8s.io/v1/leases']);
  assert.deepEqual(resolve({ 'v1/configmaps': 'false' }).off, ['/v1/configmaps']);
  assert.deepEqual(resolve({ 'api/v1/configmaps': 'false' }).off, ['/v1/configmaps']);
  assert.deepEqual(resolve({ v1: 'false' }).off, ['/v1/configmaps', '/v1/events']);
  assert.deepEqual(resolve({ 'api/v1': '0' }).off, ['/v1/configmaps', '/v1/events']);
  assert.deepEqual(resolve({ 'api/all': 'false', 'coordination.k8s.io/v1': '' }).off, ['/v1/configmaps', '/v1/events', 'events.k8s.io/v1/events', 'events.k8s.io/v1beta1/events']);
});

test('api/* keys, then versions, then resources: the most specific key wins', () => {
  assert.deepEqual(resolve({ 'api/beta': 'false' }).off, ['events.k8s.io/v1beta1/events']);
  assert.deepEqual(resolve({ 'api/ga': 'false', 'api/beta': 'false', 'v1/events': 'true' }).off, ['/v1/configmaps', 'coordination.k8s.io/v1/leases', 'events.k8s.io/v1/events', 'events.k8s.io/v1beta1/events']);
  assert.deepEqual(resolve({ 'api/beta': 'false', 'events.k8s.io/v1beta1': 'true' }).off, []);
  assert.deepEqual(resolve({ 'events.k8s.io/v1': 'false', 'events.k8s.io/v1/events': 'true' }).off, []);
  assert.deepEqual(resolve({ 'api/alpha': 'true' }).off, []);
  // The spec: an omitted value means true, also for the api/* keys.
  assert.deepEqual(resolve({ 'api/all': 'false', 'api/beta': '' }).off, resolve({ 'api/all': 'false', 'api/beta': 'true' }).off);
  assert.deepEqual(resolve({ 'api/all': 'false', 'api/beta': '' }).errs, []);
});

test('errors in kube’s words', () => {
  assert.deepEqual(resolve({ 'api/all': 'false' }).errs, ['invalid key with only api/all=false']);
  assert.deepEqual(resolve({ 'foo.io/v1': 'false', 'bar.io/v1': '' }).errs, ['unknown api groups foo.io,bar.io']);
  assert.deepEqual(resolve({ 'coordination.k8s.io/v2': 'false' }).errs, ['group version coordination.k8s.io/v2 that has not been registered']);
  assert.deepEqual(resolve({ v2: 'false' }).errs, ['runtime-config invalid key v2']);
  assert.deepEqual(resolve({ 'api/beta': 'maybe' }).errs, ['invalid value api/beta=maybe']);
  assert.deepEqual(resolve({ 'coordination.k8s.io/v1': 'nope' }).errs, ['invalid value of coordination.k8s.io/v1: nope, err: strconv.ParseBool: parsing "nope": invalid syntax']);
  assert.deepEqual(resolve({ 'coordination.k8s.io/v1/Leases': 'false' }).errs, ['invalid key coordination.k8s.io/v1/Leases: group/version/resource and resource is always lowercase plural, not "Leases"']);
  assert.deepEqual(resolve({ 'coordination.k8s.io/v1/widgets': 'false' }).errs, ['invalid key coordination.k8s.io/v1/widgets: resource "widgets" is not served in coordination.k8s.io/v1']);
});
