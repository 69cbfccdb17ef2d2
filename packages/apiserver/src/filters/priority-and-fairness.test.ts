import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import type { IncomingMessage } from 'node:http';
import { parseRequestInfo } from '../request-info.js';
import { BOOTSTRAP_FLOW_SCHEMAS, BOOTSTRAP_PRIORITY_LEVELS, PriorityAndFairness, bootstrapUID, compileFlowSchema, compilePriorityLevel } from './priority-and-fairness.js';

const info = (method: string, path: string) => parseRequestInfo(method, path, new URLSearchParams());

test("each level's seats: ceil(server limit × shares / sum of shares), exempt unlimited", () => {
  const apf = new PriorityAndFairness({ serverConcurrencyLimit: 600, requestWaitLimitMs: 15_000 });
  const seats = Object.fromEntries([...apf.levels].map(([name, l]) => [name, l.seats]));
  // 600 = kube's defaults (400 + 200); the shares add up to 245.
  assert.deepEqual(seats, { exempt: Infinity, system: 74, 'node-high': 98, 'leader-election': 25, 'workload-high': 98, 'workload-low': 245, 'global-default': 49, 'catch-all': 13 });
});

test('classification by precedence: subjects, verbs, resources (with subresources), namespaces, non-resource URLs', () => {
  const apf = new PriorityAndFairness({ serverConcurrencyLimit: 600, requestWaitLimitMs: 15_000 });
  const fs = (method: string, path: string, user: string, groups: string[]) => apf.classify(info(method, path), user, groups)?.spec.name;
  const authenticated = ['system:authenticated'];
  assert.equal(fs('GET', '/api/v1/pods', 'admin', ['system:masters', ...authenticated]), 'exempt');
  assert.equal(fs('GET', '/readyz', 'system:anonymous', ['system:unauthenticated']), 'probes');
  assert.equal(fs('GET', '/healthz', 'bob', authenticated), 'probes');
  assert.equal(fs('GET', '/readyz/etcd', 'bob', authenticated), 'global-default');
  assert.equal(fs('POST', '/readyz', 'bob', authenticated), 'global-default');
  assert.equal(fs('GET', '/api/v1/nodes/n1', 'system:node:n1', ['system:nodes', ...authenticated]), 'system-node-high');
  assert.equal(fs('PUT', '/api/v1/nodes/n1/status', 'system:node:n1', ['system:nodes', ...authenticated]), 'system-node-high');
  assert.equal(fs('GET', '/api/v1/namespaces/default/pods', 'system:node:n1', ['system:nodes', ...authenticated]), 'system-nodes');
  assert.equal(fs('PUT', '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kcm', 'system:kube-controller-manager', authenticated), 'system-leader-election');
  assert.equal(fs('PUT', '/api/v1/namespaces/default/endpoints/svc', 'system:kube-controller-manager', authenticated), 'endpoint-controller');
  assert.equal(fs('PUT', '/api/v1/namespaces/default/endpoints/svc', 'system:serviceaccount:kube-system:endpoint-controller', ['system:serviceaccounts', 'system:serviceaccounts:kube-system', ...authenticated]), 'endpoint-controller');
  assert.equal(fs('DELETE', '/api/v1/namespaces/default/endpoints/svc', 'system:kube-controller-manager', authenticated), 'kube-controller-manager');
  assert.equal(fs('GET', '/api/v1/namespaces/kube-system/configmaps/x', 'system:serviceaccount:kube-system:foo', ['system:serviceaccounts', ...authenticated]), 'system-leader-election');
  assert.equal(fs('GET', '/api/v1/namespaces/apps/configmaps/x', 'system:serviceaccount:kube-system:foo', ['system:serviceaccounts', ...authenticated]), 'workload-leader-election');
  assert.equal(fs('GET', '/api/v1/namespaces/apps/configmaps', 'system:serviceaccount:kube-system:foo', ['system:serviceaccounts', ...authenticated]), 'kube-system-service-accounts');
  assert.equal(fs('GET', '/api/v1/pods', 'system:kube-scheduler', authenticated), 'kube-scheduler');
  assert.equal(fs('GET', '/api/v1/pods', 'system:serviceaccount:apps:robot', ['system:serviceaccounts', 'system:serviceaccounts:apps', ...authenticated]), 'service-accounts');
  assert.equal(fs('GET', '/api/v1/pods', 'bob', authenticated), 'global-default');
  assert.equal(fs('GET', '/version', 'system:anonymous', ['system:unauthenticated']), 'global-default');
  // Nobody in either group: no bootstrap schema matches (kube's chain always adds one of them).
  assert.equal(fs('GET', '/api/v1/pods', 'odd', []), undefined);
});

test('UIDs are derived from the object names: stable, distinct, UUID-shaped', () => {
  const a = bootstrapUID('flowschemas', 'global-default');
  assert.equal(a, bootstrapUID('flowschemas', 'global-default'));
  assert.notEqual(a, bootstrapUID('prioritylevelconfigurations', 'global-default'));
  assert.match(a, /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
});

test("a flow's requests queue in its hand of queues until those are full; released seats go to the queued in turn", async () => {
  // Limit 7: one seat per limited level.
  const apf = new PriorityAndFairness({ serverConcurrencyLimit: 7, requestWaitLimitMs: 60_000 });
  const bob = apf.classify(info('GET', '/api/v1/pods'), 'bob', ['system:authenticated'])!;
  const alice = apf.classify(info('GET', '/api/v1/pods'), 'alice', ['system:authenticated'])!;
  const level = bob.level;
  const req = () => new EventEmitter() as unknown as IncomingMessage;
  assert.equal(apf.acquire(bob, 'bob', req()), true);
  // 6 queues × 50 for bob's flow, then refusals.
  const waiting: Array<Promise<boolean>> = [];
  for (let i = 0; i < 300; i++) {
    const r = apf.acquire(bob, 'bob', req());
    assert.ok(r instanceof Promise, `request ${i} queues`);
    waiting.push(r);
  }
  assert.equal(apf.acquire(bob, 'bob', req()), false);
  // Another flow has queues of its own (its hand is not bob's, with this hash).
  const aliceWaits = apf.acquire(alice, 'alice', req());
  assert.ok(aliceWaits instanceof Promise);
  assert.equal(level.waiting, 301);
  let served = 0;
  for (const w of [...waiting, aliceWaits]) void w.then((ok) => ok && served++);
  level.release();
  await new Promise((r) => setImmediate(r));
  // One queued request (bob's or alice's: queues take turns) has the seat.
  assert.equal(served, 1);
  assert.equal(level.inUse, 1);
  assert.equal(level.waiting, 300);
  // The client going away while queued leaves the queue (and is not served).
  const gone = req();
  const r = apf.acquire(bob, 'bob', gone) as Promise<boolean>;
  gone.emit('close');
  assert.equal(await r, false);
  for (let i = 0; i < 301; i++) level.release();
  assert.equal(await aliceWaits, true);
  await new Promise((r) => setImmediate(r));
  assert.equal(served, 301);
  assert.equal(level.waiting, 0);
});

test('exempt never waits; catch-all (Reject) refuses rather than queues', () => {
  const apf = new PriorityAndFairness({ serverConcurrencyLimit: 7, requestWaitLimitMs: 60_000 });
  const exempt = apf.classify(info('GET', '/api/v1/pods'), 'admin', ['system:masters'])!;
  for (let i = 0; i < 1000; i++) assert.equal(apf.acquire(exempt, '', new EventEmitter() as unknown as IncomingMessage), true);
  const catchAll = new PriorityAndFairness({
    serverConcurrencyLimit: 1,
    requestWaitLimitMs: 60_000,
    levels: [{ name: 'catch-all', shares: 5 }],
    schemas: [{ name: 'catch-all', priorityLevel: 'catch-all', matchingPrecedence: 10000, distinguisher: 'ByUser', rules: [{ subjects: [{ kind: 'Group', name: '*' }], resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], namespaces: ['*'], clusterScope: true }], nonResourceRules: [] }] }],
  });
  const s = catchAll.classify(info('GET', '/api/v1/pods'), 'bob', [])!;
  assert.equal(catchAll.acquire(s, 'bob', new EventEmitter() as unknown as IncomingMessage), true);
  assert.equal(catchAll.acquire(s, 'bob', new EventEmitter() as unknown as IncomingMessage), false);
});

test('configure: objects compiled, a schema without its level skipped, missing mandatory objects stand in, unchanged levels keep their state', () => {
  const apf = new PriorityAndFairness({ serverConcurrencyLimit: 600, requestWaitLimitMs: 15_000 });
  const global = apf.levels.get('global-default')!;
  global.inUse = 3;
  const pl = compilePriorityLevel({ apiVersion: 'flowcontrol.apiserver.k8s.io/v1beta2', kind: 'PriorityLevelConfiguration', metadata: { name: 'team', uid: 'pl-uid' }, spec: { type: 'Limited', limited: { assuredConcurrencyShares: 20, limitResponse: { type: 'Reject' } } } });
  const rules = [{ subjects: [{ kind: 'ServiceAccount', serviceAccount: { namespace: 'team', name: '*' } }], resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], namespaces: ['*'] }] }];
  const schema = (name: string, level: string) => compileFlowSchema({ apiVersion: 'flowcontrol.apiserver.k8s.io/v1beta2', kind: 'FlowSchema', metadata: { name, uid: `${name}-uid` }, spec: { priorityLevelConfiguration: { name: level }, matchingPrecedence: name === 'dangling' ? 100 : 200, rules } });
  // The same configuration again (mandatory objects missing stand in): the level keeps its state.
  apf.configure(BOOTSTRAP_PRIORITY_LEVELS.filter((l) => l.name !== 'catch-all'), BOOTSTRAP_FLOW_SCHEMAS.filter((s) => s.name !== 'exempt'));
  assert.equal(apf.levels.get('global-default'), global);
  assert.ok(apf.levels.has('catch-all'));
  apf.configure([...BOOTSTRAP_PRIORITY_LEVELS, pl], [...BOOTSTRAP_FLOW_SCHEMAS, schema('dangling', 'nowhere'), schema('team', 'team')]);
  // The shares now add up to 265: global-default's seats change (600 × 20 / 265 → 46), and the
  // level keeps the seats its running requests hold.
  assert.equal(apf.levels.get('global-default')!.seats, 46);
  assert.equal(apf.levels.get('global-default'), global);
  assert.equal(global.inUse, 3);
  const s = apf.classify(info('GET', '/api/v1/namespaces/team/pods'), 'system:serviceaccount:team:builder', ['system:serviceaccounts', 'system:authenticated'])!;
  assert.equal(s.uid, 'team-uid');
  assert.equal(s.level.uid, 'pl-uid');
  assert.equal(apf.classify(info('GET', '/api/v1/pods'), 'admin', ['system:masters'])!.spec.name, 'exempt');
});

test('a reconfigured level keeps its running and queued requests: a new uid or fewer seats do not free seats, more seats dispatch the queue', async () => {
  const schemas = [{ name: 'all', priorityLevel: 'one', matchingPrecedence: 500, rules: [{ subjects: [{ kind: 'Group' as const, name: '*' }], resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], namespaces: ['*'], clusterScope: true }], nonResourceRules: [] }] }];
  const level = (uid: string, shares: number, queues = 4) => ({ name: 'one', uid, shares, queuing: { queues, handSize: 2, queueLengthLimit: 10 } });
  // Exempt and catch-all stand in with 0 and 5 shares: 'one' with 5 shares gets 1 of 2 seats.
  const apf = new PriorityAndFairness({ serverConcurrencyLimit: 2, requestWaitLimitMs: 60_000, levels: [level('bootstrap-uid', 5)], schemas });
  const req = () => new EventEmitter() as unknown as IncomingMessage;
  const s = apf.classify(info('GET', '/api/v1/pods'), 'bob', ['system:authenticated'])!;
  assert.equal(s.spec.name, 'all');
  assert.equal(apf.acquire(s, 'bob', req()), true);
  const queued = apf.acquire(s, 'ann', req()) as Promise<boolean>;
  let proceeded = false;
  void queued.then((ok) => (proceeded = ok));
  // The stored object replaces the bootstrap one (a new uid), queues change shape: the running
  // request still holds the only seat and the queued one stays queued.
  apf.configure([level('object-uid', 5, 3)], schemas);
  const again = apf.classify(info('GET', '/api/v1/pods'), 'carl', ['system:authenticated'])!;
  assert.equal(again.level, s.level);
  assert.equal(again.level.uid, 'object-uid');
  assert.equal(again.level.inUse, 1);
  assert.equal(again.level.waiting, 1);
  assert.notEqual(apf.acquire(again, 'carl', req()), true);
  await new Promise((r) => setImmediate(r));
  assert.equal(proceeded, false);
  // More shares, more seats: the queue is dispatched at once (ann, then carl).
  apf.configure([level('object-uid', 45, 3)], schemas);
  assert.equal(again.level.seats, 2);
  assert.equal(await queued, true);
  assert.equal(again.level.inUse, 2);
  assert.equal(again.level.waiting, 1);
  s.level.release();
  assert.equal(again.level.inUse, 2);
  assert.equal(again.level.waiting, 0);
});
