/**
 * flowcontrol.apiserver.k8s.io on a real server: discovery (v1beta2 preferred, v1beta1 deprecated
 * with kube's Warning), the bootstrap objects kube 1.24 creates, defaults and validation causes,
 * round trips through both versions, kubectl's columns, and API Priority and Fairness configured
 * from the objects (a new FlowSchema routes the next request, visible in the X-Kubernetes-PF-*
 * headers; the Dangling condition; mandatory objects kept).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { eventually, kubectlPath, usePlinth } from './harness.js';
import { causeFields, expectCode, expectStatus } from './assertions.js';

const env = usePlinth();
const G2 = '/apis/flowcontrol.apiserver.k8s.io/v1beta2';
const G1 = '/apis/flowcontrol.apiserver.k8s.io/v1beta1';

function kubectl(...args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(kubectlPath(), ['--kubeconfig', env.plinth.server.kubeconfigPath, ...args], { encoding: 'utf8', timeout: 60_000 }, (err, stdout, stderr) =>
      err ? reject(new Error(`kubectl ${args.join(' ')}: ${stderr}`)) : resolve(stdout),
    );
  });
}

const asAlice = { headers: { 'Impersonate-User': 'alice', 'Impersonate-Group': 'team-a' } };
const pl = (name: string, spec: Record<string, unknown>) => ({ apiVersion: 'flowcontrol.apiserver.k8s.io/v1beta2', kind: 'PriorityLevelConfiguration', metadata: { name }, spec });
const fs = (name: string, spec: Record<string, unknown>) => ({ apiVersion: 'flowcontrol.apiserver.k8s.io/v1beta2', kind: 'FlowSchema', metadata: { name }, spec });
const aliceRules = [{ subjects: [{ kind: 'User', user: { name: 'alice' } }], resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], namespaces: ['*'], clusterScope: true }] }];

describe('flowcontrol.apiserver.k8s.io', () => {
  it('serves v1beta2 (preferred) and v1beta1, last in /apis', async () => {
    const groups = (await env.plinth.client.get('/apis')).body.groups as Array<{ name: string; preferredVersion: { version: string }; versions: Array<{ version: string }> }>;
    const last = groups[groups.length - 1]!;
    assert.equal(last.name, 'flowcontrol.apiserver.k8s.io');
    assert.deepEqual(last.versions.map((v) => v.version), ['v1beta2', 'v1beta1']);
    assert.equal(last.preferredVersion.version, 'v1beta2');
    for (const g of [G2, G1]) {
      const res = (await env.plinth.client.get(g)).body.resources as Array<Record<string, unknown>>;
      assert.deepEqual(res.map((r) => r['name']), ['flowschemas', 'flowschemas/status', 'prioritylevelconfigurations', 'prioritylevelconfigurations/status']);
      assert.equal(res[0]!['namespaced'], false);
    }
  });

  it('creates kube 1.24 bootstrap objects at start, annotated for auto-update', async () => {
    const fsNames = ((await env.plinth.client.get(`${G2}/flowschemas`)).body.items as Array<{ metadata: { name: string; annotations: Record<string, string> } }>);
    assert.deepEqual(fsNames.map((o) => o.metadata.name).sort(), ['catch-all', 'endpoint-controller', 'exempt', 'global-default', 'kube-controller-manager', 'kube-scheduler', 'kube-system-service-accounts', 'probes', 'service-accounts', 'system-leader-election', 'system-node-high', 'system-nodes', 'workload-leader-election']);
    assert.equal(fsNames[0]!.metadata.annotations['apf.kubernetes.io/autoupdate-spec'], 'true');
    const plNames = ((await env.plinth.client.get(`${G2}/prioritylevelconfigurations`)).body.items as Array<{ metadata: { name: string } }>).map((o) => o.metadata.name).sort();
    assert.deepEqual(plNames, ['catch-all', 'exempt', 'global-default', 'leader-election', 'node-high', 'system', 'workload-high', 'workload-low']);
    const health = await env.plinth.client.get('/healthz?verbose');
    assert.match(health.raw.toString(), /\[\+\]poststarthook\/priority-and-fairness-config-producer ok/);
  });

  it('defaults and validates as kube', async () => {
    const created = await env.plinth.client.post(`${G2}/prioritylevelconfigurations`, pl('defaults', { type: 'Limited', limited: { limitResponse: { type: 'Queue', queuing: {} } } }));
    expectCode(created, 201);
    assert.deepEqual(created.body.spec.limited, { assuredConcurrencyShares: 30, limitResponse: { type: 'Queue', queuing: { queues: 64, handSize: 8, queueLengthLimit: 50 } } });
    const f = await env.plinth.client.post(`${G2}/flowschemas`, fs('defaults', { priorityLevelConfiguration: { name: 'defaults' }, rules: [{ ...aliceRules[0], subjects: [{ kind: 'User', user: { name: 'carol' } }] }] }));
    expectCode(f, 201);
    assert.equal(f.body.spec.matchingPrecedence, 1000);
    assert.equal(f.body.spec.distinguisherMethod, undefined);
    const bad = await env.plinth.client.post(`${G2}/flowschemas`, fs('bad', { priorityLevelConfiguration: { name: '' }, matchingPrecedence: 1, rules: [{ subjects: [], resourceRules: [{ verbs: ['*', 'get'], apiGroups: [], resources: ['*'], namespaces: ['Bad'] }] }] }));
    expectStatus(bad, 422, 'Invalid');
    assert.deepEqual(causeFields(bad), ['spec.matchingPrecedence', 'spec.priorityLevelConfiguration.name', 'spec.rules[0].subjects', 'spec.rules[0].resourceRules[0].verbs', 'spec.rules[0].resourceRules[0].apiGroups', 'spec.rules[0].resourceRules[0].namespaces[0]']);
    assert.match(bad.body.message, /spec.matchingPrecedence: Invalid value: 1: only the schema named 'exempt' may have matchingPrecedence 1/);
    const big = await env.plinth.client.post(`${G2}/flowschemas`, fs('big', { priorityLevelConfiguration: { name: 'x' }, matchingPrecedence: 10001 }));
    assert.match(big.body.message, /spec.matchingPrecedence: Invalid value: 10001: must not be greater than 10000/);
    const exemptName = await env.plinth.client.post(`${G2}/prioritylevelconfigurations`, pl('not-exempt', { type: 'Exempt' }));
    assert.match(exemptName.body.message, /spec.type: Invalid value: "Exempt": type must be 'Exempt' if and only if name is 'exempt'/);
    const catchAll = (await env.plinth.client.get(`${G2}/prioritylevelconfigurations/catch-all`)).body;
    const changed = await env.plinth.client.put(`${G2}/prioritylevelconfigurations/catch-all`, { ...catchAll, spec: { type: 'Limited', limited: { assuredConcurrencyShares: 50, limitResponse: { type: 'Reject' } } } });
    expectStatus(changed, 422, 'Invalid');
    assert.match(changed.body.message, /spec of 'catch-all' must equal the fixed value/);
  });

  it('round-trips through v1beta1 and v1beta2, v1beta1 with kube\'s deprecation Warning', async () => {
    const created = await env.plinth.client.post(`${G1}/prioritylevelconfigurations`, { ...pl('old', { type: 'Limited', limited: { assuredConcurrencyShares: 7, limitResponse: { type: 'Reject' } } }), apiVersion: 'flowcontrol.apiserver.k8s.io/v1beta1' });
    expectCode(created, 201);
    assert.equal(created.headers['warning'], '299 - "flowcontrol.apiserver.k8s.io/v1beta1 PriorityLevelConfiguration is deprecated in v1.23+, unavailable in v1.26+; use flowcontrol.apiserver.k8s.io/v1beta2 PriorityLevelConfiguration"');
    assert.equal(created.body.apiVersion, 'flowcontrol.apiserver.k8s.io/v1beta1');
    const v2 = (await env.plinth.client.get(`${G2}/prioritylevelconfigurations/old`)).body;
    assert.equal(v2.apiVersion, 'flowcontrol.apiserver.k8s.io/v1beta2');
    assert.deepEqual(v2.spec, created.body.spec);
    const back = (await env.plinth.client.get(`${G1}/prioritylevelconfigurations/old`)).body;
    assert.deepEqual(back.spec, v2.spec);
    const fsOld = await env.plinth.client.get(`${G1}/flowschemas/global-default`);
    assert.match(String(fsOld.headers['warning']), /v1beta1 FlowSchema is deprecated in v1.23\+, unavailable in v1.26\+; use flowcontrol.apiserver.k8s.io\/v1beta2 FlowSchema/);
    assert.equal((await env.plinth.client.get(`${G2}/flowschemas/global-default`)).headers['warning'], undefined);
  });

  it('classifies the next request with a new FlowSchema, headers naming the objects\' UIDs', async () => {
    const globalFS = (await env.plinth.client.get(`${G2}/flowschemas/global-default`)).body;
    const before = await env.plinth.client.get('/api/v1/namespaces/default/configmaps', asAlice);
    assert.equal(before.headers['x-kubernetes-pf-flowschema-uid'], globalFS.metadata.uid);
    const level = await env.plinth.client.post(`${G2}/prioritylevelconfigurations`, pl('alice-level', { type: 'Limited', limited: { assuredConcurrencyShares: 5, limitResponse: { type: 'Reject' } } }));
    expectCode(level, 201);
    const schema = await env.plinth.client.post(`${G2}/flowschemas`, fs('alice', { priorityLevelConfiguration: { name: 'alice-level' }, matchingPrecedence: 500, distinguisherMethod: { type: 'ByUser' }, rules: aliceRules }));
    expectCode(schema, 201);
    await eventually(async () => (await env.plinth.client.get('/api/v1/namespaces/default/configmaps', asAlice)).headers['x-kubernetes-pf-flowschema-uid'] === schema.body.metadata.uid, 10_000, 'alice routed by the new schema');
    const after = await env.plinth.client.get('/api/v1/namespaces/default/configmaps', asAlice);
    assert.equal(after.headers['x-kubernetes-pf-prioritylevel-uid'], level.body.metadata.uid);
    // Others are not affected.
    const admin = await env.plinth.client.get('/api/v1/namespaces/default/configmaps');
    assert.notEqual(admin.headers['x-kubernetes-pf-flowschema-uid'], schema.body.metadata.uid);
  });

  it('writes the Dangling condition, and a schema without its level is ignored', async () => {
    const schema = await env.plinth.client.post(`${G2}/flowschemas`, fs('dangling', { priorityLevelConfiguration: { name: 'nowhere' }, matchingPrecedence: 400, rules: [{ subjects: [{ kind: 'User', user: { name: 'bob' } }], nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }], resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], namespaces: ['*'], clusterScope: true }] }] }));
    expectCode(schema, 201);
    const cond = await eventually(async () => {
      const o = (await env.plinth.client.get(`${G2}/flowschemas/dangling`)).body;
      return (o.status?.conditions ?? []).find((c: { type: string }) => c.type === 'Dangling');
    }, 10_000, 'Dangling condition');
    assert.equal(cond.status, 'True');
    assert.equal(cond.reason, 'NotFound');
    assert.equal(cond.message, 'This FlowSchema references the PriorityLevelConfiguration object named "nowhere" but there is no such object');
    const bob = await env.plinth.client.get('/api/v1/namespaces/default/configmaps', { headers: { 'Impersonate-User': 'bob' } });
    assert.notEqual(bob.headers['x-kubernetes-pf-flowschema-uid'], schema.body.metadata.uid);
    const found = await eventually(async () => {
      const o = (await env.plinth.client.get(`${G2}/flowschemas/global-default`)).body;
      return (o.status?.conditions ?? []).find((c: { type: string }) => c.type === 'Dangling');
    }, 10_000, 'Found condition');
    assert.equal(found.status, 'False');
    assert.equal(found.reason, 'Found');
    const table = await kubectl('get', 'flowschemas', 'dangling');
    assert.match(table, /^NAME\s+PRIORITYLEVEL\s+MATCHINGPRECEDENCE\s+DISTINGUISHERMETHOD\s+AGE\s+MISSINGPL\ndangling\s+nowhere\s+400\s+<none>\s+\d+s\s+True\n$/);
    const plTable = await kubectl('get', 'prioritylevelconfigurations', 'catch-all', 'exempt');
    assert.match(plTable, /^NAME\s+TYPE\s+ASSUREDCONCURRENCYSHARES\s+QUEUES\s+HANDSIZE\s+QUEUELENGTHLIMIT\s+AGE\ncatch-all\s+Limited\s+5\s+<none>\s+<none>\s+<none>\s+\d+s\nexempt\s+Exempt\s+<none>\s+<none>\s+<none>\s+<none>\s+\d+s\n$/);
  });

  it('keeps the mandatory objects: a deleted one comes back; a suggested one with autoupdate false is left alone', async () => {
    expectCode(await env.plinth.client.delete(`${G2}/prioritylevelconfigurations/catch-all`), 200);
    const back = await eventually(async () => {
      const r = await env.plinth.client.get(`${G2}/prioritylevelconfigurations/catch-all`);
      return r.status === 200 ? r.body : undefined;
    }, 10_000, 'catch-all recreated');
    assert.equal(back.spec.limited.assuredConcurrencyShares, 5);
    const sys = (await env.plinth.client.get(`${G2}/prioritylevelconfigurations/system`)).body;
    const mine = await env.plinth.client.put(`${G2}/prioritylevelconfigurations/system`, { ...sys, metadata: { ...sys.metadata, annotations: { 'apf.kubernetes.io/autoupdate-spec': 'false' } }, spec: { ...sys.spec, limited: { ...sys.spec.limited, assuredConcurrencyShares: 31 } } });
    expectCode(mine, 200);
    const auto = (await env.plinth.client.get(`${G2}/prioritylevelconfigurations/workload-low`)).body;
    expectCode(await env.plinth.client.put(`${G2}/prioritylevelconfigurations/workload-low`, { ...auto, spec: { ...auto.spec, limited: { ...auto.spec.limited, assuredConcurrencyShares: 99 } } }), 200);
    await eventually(async () => (await env.plinth.client.get(`${G2}/prioritylevelconfigurations/workload-low`)).body.spec.limited.assuredConcurrencyShares === 100, 10_000, 'workload-low spec restored');
    assert.equal((await env.plinth.client.get(`${G2}/prioritylevelconfigurations/system`)).body.spec.limited.assuredConcurrencyShares, 31);
  });
});
