/**
 * node.k8s.io RuntimeClasses on a real server: v1 and the deprecated v1beta1 over one storage
 * version (round trips both ways, kube's Warning: v1beta1 names no replacement), validation causes and the immutable handler, the
 * printer's columns, and the RuntimeClass admission plugin (overhead, scheduling, missing class).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { usePlinth } from './harness.js';
import { causeFields, expectCode, expectStatus } from './assertions.js';

const env = usePlinth();
const V1 = '/apis/node.k8s.io/v1/runtimeclasses';
const V1BETA1 = '/apis/node.k8s.io/v1beta1/runtimeclasses';
const PODS = '/api/v1/namespaces/default/pods';

const rc = (version: string, name: string, extra: Record<string, unknown> = {}) => ({ apiVersion: `node.k8s.io/${version}`, kind: 'RuntimeClass', metadata: { name }, handler: 'runc', ...extra });
const pod = (name: string, spec: Record<string, unknown> = {}) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'c', image: 'nginx' }], ...spec } });
const SCHEDULING = { nodeSelector: { sandbox: 'yes' }, tolerations: [{ key: 'sandbox', operator: 'Exists', effect: 'NoSchedule' }] };

describe('runtimeclasses', () => {
  it('round-trips through v1beta1 and v1 (stored once), v1beta1 with kube\'s deprecation warning', async () => {
    const created = await env.plinth.client.post(V1BETA1, rc('v1beta1', 'gvisor', { handler: 'runsc', overhead: { podFixed: { cpu: '250m', memory: '64Mi' } }, scheduling: SCHEDULING }));
    expectCode(created, 201);
    assert.equal(created.headers['warning'], '299 - "node.k8s.io/v1beta1 RuntimeClass is deprecated in v1.22+, unavailable in v1.25+"');
    const v1 = (await env.plinth.client.get(`${V1}/gvisor`)).body;
    assert.equal(v1.apiVersion, 'node.k8s.io/v1');
    assert.deepEqual([v1.handler, v1.overhead, v1.scheduling], ['runsc', { podFixed: { cpu: '250m', memory: '64Mi' } }, SCHEDULING]);
    const back = (await env.plinth.client.get(`${V1BETA1}/gvisor`)).body;
    assert.equal(back.apiVersion, 'node.k8s.io/v1beta1');
    assert.deepEqual({ ...back, apiVersion: 'node.k8s.io/v1' }, v1);
  });

  it('validates as kube: handler a DNS label and immutable, overhead and scheduling checked', async () => {
    const bad = await env.plinth.client.post(V1, rc('v1', 'bad', { handler: 'Not_A_Label', overhead: { podFixed: { cpu: '-1' } }, scheduling: { nodeSelector: { 'a/b/c': 'x' } } }));
    expectStatus(bad, 422, 'Invalid');
    assert.deepEqual(causeFields(bad), ['handler', 'overhead.limits[cpu]', 'scheduling.nodeSelector']);
    expectCode(await env.plinth.client.post(V1, rc('v1', 'plain')), 201);
    const got = (await env.plinth.client.get(`${V1}/plain`)).body;
    const upd = await env.plinth.client.put(`${V1}/plain`, { ...got, handler: 'crun' });
    expectStatus(upd, 422, 'Invalid', 'RuntimeClass.node.k8s.io "plain" is invalid: handler: Invalid value: "crun": field is immutable');
  });

  it('prints NAME HANDLER AGE', async () => {
    const t = await env.plinth.client.get(V1, { headers: { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' } });
    expectCode(t, 200);
    assert.deepEqual(t.body.columnDefinitions.map((c: { name: string }) => c.name), ['Name', 'Handler', 'Age']);
    assert.deepEqual(t.body.rows.find((r: { cells: unknown[] }) => r.cells[0] === 'gvisor').cells.slice(0, 2), ['gvisor', 'runsc']);
  });

  it('RuntimeClass admission: the class\'s overhead and scheduling go into the pod; conflicts and missing classes are refused', async () => {
    const p = await env.plinth.client.post(PODS, pod('sandboxed', { runtimeClassName: 'gvisor', nodeSelector: { zone: 'a' }, tolerations: [{ key: 'other', operator: 'Exists' }] }));
    expectCode(p, 201);
    assert.deepEqual(p.body.spec.overhead, { cpu: '250m', memory: '64Mi' });
    assert.deepEqual(p.body.spec.nodeSelector, { zone: 'a', sandbox: 'yes' });
    assert.deepEqual(p.body.spec.tolerations.map((t: { key: string }) => t.key), ['other', 'node.kubernetes.io/not-ready', 'node.kubernetes.io/unreachable', 'sandbox']);
    expectStatus(await env.plinth.client.post(PODS, pod('missing', { runtimeClassName: 'nope' })), 403, 'Forbidden', 'pods "missing" is forbidden: pod rejected: RuntimeClass "nope" not found');
    expectStatus(await env.plinth.client.post(PODS, pod('other-overhead', { runtimeClassName: 'gvisor', overhead: { cpu: '1' } })), 403, 'Forbidden',
      'pods "other-overhead" is forbidden: pod rejected: Pod\'s Overhead doesn\'t match RuntimeClass\'s defined Overhead');
    expectStatus(await env.plinth.client.post(PODS, pod('conflict', { runtimeClassName: 'gvisor', nodeSelector: { sandbox: 'no' } })), 403, 'Forbidden',
      'pods "conflict" is forbidden: conflict: runtimeClass.scheduling.nodeSelector[sandbox] = yes; pod.spec.nodeSelector[sandbox] = no');
    expectStatus(await env.plinth.client.post(PODS, pod('no-class-overhead', { runtimeClassName: 'plain', overhead: { cpu: '1' } })), 403, 'Forbidden',
      'pods "no-class-overhead" is forbidden: pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead');
  });
});
