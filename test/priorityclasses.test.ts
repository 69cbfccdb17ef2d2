/**
 * scheduling.k8s.io/v1 PriorityClasses on a real server: the system classes made at start and never
 * deleted, kube's validation causes and update rules, the printer's columns, and the Priority
 * admission plugin (a pod's priorityClassName → spec.priority, the global default, one default).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { eventually, kubectlPath, usePlinth } from './harness.js';
import { causeFields, expectCode, expectStatus } from './assertions.js';

const env = usePlinth();
const PC = '/apis/scheduling.k8s.io/v1/priorityclasses';
const PODS = '/api/v1/namespaces/default/pods';

const pc = (name: string, value: number, extra: Record<string, unknown> = {}) => ({ apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name }, value, ...extra });
const pod = (name: string, spec: Record<string, unknown> = {}) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'c', image: 'nginx' }], ...spec } });

/** kubectl, asynchronously: the server runs in this process. */
function kubectl(...args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(kubectlPath(), ['--kubeconfig', env.plinth.server.kubeconfigPath, ...args], { encoding: 'utf8', timeout: 60_000 }, (err, stdout, stderr) =>
      err ? reject(new Error(`kubectl ${args.join(' ')}: ${stderr}`)) : resolve(stdout),
    );
  });
}

describe('priorityclasses', () => {
  it('serves discovery as kube, with the two system classes created at start', async () => {
    const d = await env.plinth.client.get('/apis/scheduling.k8s.io/v1');
    const r = (d.body.resources as Array<Record<string, unknown>>).find((x) => x['name'] === 'priorityclasses')!;
    assert.equal(r['namespaced'], false);
    assert.deepEqual(r['shortNames'], ['pc']);
    const res = await env.plinth.client.get(`${PC}/system-node-critical`);
    expectCode(res, 200);
    assert.equal(res.body.value, 2000001000);
    assert.equal(res.body.preemptionPolicy, 'PreemptLowerPriority');
    assert.equal((await env.plinth.client.get(`${PC}/system-cluster-critical`)).body.value, 2000000000);
    expectStatus(await env.plinth.client.delete(`${PC}/system-node-critical`), 403, 'Forbidden',
      'priorityclasses.scheduling.k8s.io "system-node-critical" is forbidden: this is a system priority class and cannot be deleted');
  });

  it('validates as kube: reserved names, user maximum, preemptionPolicy; value and policy immutable', async () => {
    const sys = await env.plinth.client.post(PC, pc('system-mine', 5));
    expectStatus(sys, 422, 'Invalid');
    assert.deepEqual(causeFields(sys), ['metadata.name']);
    assert.match(sys.body.message, /priority class names with 'system-' prefix are reserved for system use only. error: system-mine is not a known system priority class/);
    const big = await env.plinth.client.post(PC, pc('huge', 1_000_000_001, { preemptionPolicy: 'Sometimes' }));
    expectStatus(big, 422, 'Invalid');
    assert.deepEqual(causeFields(big), ['value', 'preemptionPolicy']);
    expectCode(await env.plinth.client.post(PC, pc('high', 1000, { preemptionPolicy: 'Never' })), 201);
    const got = (await env.plinth.client.get(`${PC}/high`)).body;
    assert.equal(got.metadata.generation, 1);
    const upd = await env.plinth.client.put(`${PC}/high`, { ...got, value: 2000, preemptionPolicy: 'PreemptLowerPriority' });
    expectStatus(upd, 422, 'Invalid');
    assert.deepEqual(causeFields(upd), ['Value', 'preemptionPolicy']);
    expectCode(await env.plinth.client.put(`${PC}/high`, { ...got, description: 'changed' }), 200);
    expectCode(await env.plinth.client.delete(`${PC}/high`), 200);
  });

  it('prints NAME VALUE GLOBAL-DEFAULT AGE, and kubectl create priorityclass works', async () => {
    assert.match(await kubectl('create', 'priorityclass', 'e2e-high', '--value=1000', '--description=e2e'), /priorityclass.scheduling.k8s.io\/e2e-high created/);
    const out = await kubectl('get', 'pc');
    assert.match(out.split('\n')[0]!, /^NAME\s+VALUE\s+GLOBAL-DEFAULT\s+AGE$/);
    assert.match(out, /\ne2e-high\s+1000\s+false\s+\d+s/);
    assert.match(out, /\nsystem-node-critical\s+2000001000\s+false/);
  });

  it('Priority admission: the named class sets priority and policy; a missing class or a stated priority is refused', async () => {
    expectCode(await env.plinth.client.post(PC, pc('batch-low', 10, { preemptionPolicy: 'Never' })), 201);
    const created = await env.plinth.client.post(PODS, pod('p1', { priorityClassName: 'batch-low' }));
    expectCode(created, 201);
    assert.equal(created.body.spec.priority, 10);
    assert.equal(created.body.spec.preemptionPolicy, 'Never');
    expectStatus(await env.plinth.client.post(PODS, pod('p2', { priorityClassName: 'nope' })), 403, 'Forbidden', 'pods "p2" is forbidden: no PriorityClass with name nope was found');
    expectStatus(await env.plinth.client.post(PODS, pod('p3', { priority: 7 })), 403, 'Forbidden',
      'pods "p3" is forbidden: the integer value of priority (7) must not be provided in pod spec; priority admission controller computed 0 from the given PriorityClass name');
    const plain = await env.plinth.client.post(PODS, pod('p4'));
    assert.equal(plain.body.spec.priority, 0);
    assert.equal(plain.body.spec.priorityClassName, undefined);
  });

  it('Priority admission: the global default applies to pods that name no class, and only one default may exist', async () => {
    expectCode(await env.plinth.client.post(PC, pc('default-one', 100, { globalDefault: true })), 201);
    const second = await env.plinth.client.post(PC, pc('default-two', 200, { globalDefault: true }));
    expectStatus(second, 403, 'Forbidden', 'priorityclasses.scheduling.k8s.io "default-two" is forbidden: PriorityClass default-one is already marked as default. Only one default can exist');
    // kube's plugin reads the default class from its informer: once the cache has it, pods get it.
    await eventually(async () => ((await env.plinth.client.get(`${PC}?resourceVersion=0`)).body.items as { metadata: { name: string } }[]).some((c) => c.metadata.name === 'default-one'), 10_000, 'the default class in the watch cache');
    const p = await env.plinth.client.post(PODS, pod('p5'));
    expectCode(p, 201);
    assert.equal(p.body.spec.priority, 100);
    assert.equal(p.body.spec.priorityClassName, 'default-one');
  });
});
