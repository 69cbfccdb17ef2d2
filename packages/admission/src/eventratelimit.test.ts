import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ResourceDefinition, StoredObject } from '@plinth/api';
import { StatusError } from '@plinth/api';
import { createEventRateLimit, parseEventRateLimitConfig, TokenBucket } from './eventratelimit.js';
import { operationOptions, type AdmissionAttributes } from './interfaces.js';

const config = (limits: unknown) => ({ apiVersion: 'eventratelimit.admission.k8s.io/v1alpha1', kind: 'Configuration', limits });

function eventAttrs(namespace: string, user: string, object: Partial<StoredObject> = {}): AdmissionAttributes {
  return {
    operation: 'CREATE',
    resource: { group: '', version: 'v1', plural: 'events' } as ResourceDefinition,
    subresource: '',
    namespace,
    name: 'e',
    kind: { group: '', version: 'v1', kind: 'Event' },
    object: { apiVersion: 'v1', kind: 'Event', metadata: { name: 'e', namespace }, ...object } as StoredObject,
    oldObject: undefined,
    options: operationOptions('CREATE', {}),
    user: { name: user, groups: [] },
    dryRun: false,
  };
}

test('a token bucket starts with burst tokens and refills at qps up to burst', () => {
  const b = new TokenBucket(2, 3, 0);
  assert.deepEqual([b.tryAccept(0), b.tryAccept(0), b.tryAccept(0), b.tryAccept(0)], [true, true, true, false]);
  assert.equal(b.tryAccept(499), false, 'less than one token after 0.499 s at 2 qps');
  assert.equal(b.tryAccept(500), true);
  // A long pause gives back at most burst tokens.
  assert.deepEqual([b.tryAccept(60_000), b.tryAccept(60_000), b.tryAccept(60_000), b.tryAccept(60_000)], [true, true, true, false]);
});

test('the configuration is validated as kube validates it', () => {
  assert.throws(() => parseEventRateLimitConfig(undefined), { message: 'limits: Invalid value: []eventratelimit.Limit(nil): must not be empty' });
  assert.throws(() => parseEventRateLimitConfig(config([])), { message: 'limits: Invalid value: []eventratelimit.Limit{}: must not be empty' });
  assert.throws(() => parseEventRateLimitConfig({ ...config([]), kind: 'Other' }), { message: 'no kind "Other" is registered for version "eventratelimit.admission.k8s.io/v1alpha1"' });
  assert.throws(() => parseEventRateLimitConfig(config([{ type: 'User', qps: 1.5, burst: 1 }])), { message: 'json: cannot unmarshal number 1.5 into Go struct field Limit.limits.qps of type int32' });
  assert.throws(() => parseEventRateLimitConfig(config([{ type: 'User', qps: 1 }])), { message: 'limits[0].burst: Invalid value: 0: must be positive' });
  // A Server limit's cacheSize is not checked.
  assert.deepEqual(parseEventRateLimitConfig(config([{ type: 'Server', qps: 1, burst: 2, cacheSize: -1 }])), [{ type: 'Server', qps: 1, burst: 2, cacheSize: -1 }]);
  assert.throws(() => createEventRateLimit({ config: undefined }), /^Error: failed to initialize admission: couldn't init admission plugin "EventRateLimit": limits: /);
});

test('user and source+object keys; every limit takes a token and all refusals are aggregated; the LRU forgets old keys', async () => {
  let now = 0;
  const plugin = createEventRateLimit({
    config: config([{ type: 'User', qps: 1, burst: 1, cacheSize: 1 }, { type: 'SourceAndObject', qps: 1, burst: 1 }]),
    now: () => now,
  });
  const ev = { source: { component: 'kubelet', host: 'n1' }, involvedObject: { kind: 'Pod', namespace: 'ns', name: 'p', uid: 'u1', apiVersion: 'v1' } };
  await plugin.validate!(eventAttrs('ns', 'alice', ev));
  await assert.rejects(async () => plugin.validate!(eventAttrs('ns', 'alice', ev)), (e: unknown) => {
    assert.ok(e instanceof StatusError);
    assert.equal(e.code, 429);
    assert.equal(e.reason, 'TooManyRequests');
    assert.equal(e.message, 'Too many requests: [limit reached on type User for key alice, limit reached on type SourceAndObject for key kubeletn1Podnspu1v1]');
    return true;
  });
  // bob's bucket evicts alice's (cacheSize 1): alice starts over with a full bucket.
  await plugin.validate!(eventAttrs('ns', 'bob', { source: { component: 'other' } }));
  await plugin.validate!(eventAttrs('ns', 'alice', { source: { component: 'third' } }));
  // Dry runs and other kinds are not counted.
  await plugin.validate!({ ...eventAttrs('ns', 'alice', ev), dryRun: true });
  await plugin.validate!({ ...eventAttrs('ns', 'alice', ev), kind: { group: 'events.k8s.io', version: 'v1', kind: 'Event' } });
  now = 1000;
  await plugin.validate!(eventAttrs('ns', 'alice', ev));
});
