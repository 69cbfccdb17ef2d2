/**
 * apiregistration.k8s.io/v1 APIServices on a real server: kube-aggregator's validation causes,
 * defaults and status rules, the printer, and the local APIServices of kube's autoregister
 * controller (one per served group/version, Available with reason Local).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { eventually, kubectlPath, usePlinth } from './harness.js';
import { causeFields, expectCode, expectStatus } from './assertions.js';

const env = usePlinth(['--runtime-config=batch/v1beta1=false']);
const AS = '/apis/apiregistration.k8s.io/v1/apiservices';

const svc = (name: string, spec: Record<string, unknown>) => ({ apiVersion: 'apiregistration.k8s.io/v1', kind: 'APIService', metadata: { name }, spec });

function kubectl(...args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(kubectlPath(), ['--kubeconfig', env.plinth.server.kubeconfigPath, ...args], { encoding: 'utf8', timeout: 60_000 }, (err, stdout, stderr) =>
      err ? reject(new Error(`kubectl ${args.join(' ')}: ${stderr}`)) : resolve(stdout),
    );
  });
}

describe('apiservices', () => {
  it('is the first group of /apis, cluster-scoped, with a status sub-resource', async () => {
    const groups = (await env.plinth.client.get('/apis')).body.groups as Array<{ name: string }>;
    assert.equal(groups[0]!.name, 'apiregistration.k8s.io');
    const d = await env.plinth.client.get('/apis/apiregistration.k8s.io/v1');
    const names = (d.body.resources as Array<Record<string, unknown>>).map((r) => r['name']);
    assert.deepEqual(names, ['apiservices', 'apiservices/status']);
    const r = (d.body.resources as Array<Record<string, unknown>>)[0]!;
    assert.equal(r['namespaced'], false);
    assert.deepEqual(r['categories'], ['api-extensions']);
  });

  it('registers a local APIService per served group/version, as kube: labels, priorities, Available Local', async () => {
    const items = await eventually(async () => {
      const l = (await env.plinth.client.get(AS)).body.items as Array<Record<string, any>>;
      assert.ok(l.some((o) => o.metadata.name === 'v1.apps'));
      return l;
    });
    const byName = new Map(items.map((o) => [o.metadata.name as string, o]));
    const core = byName.get('v1.')!;
    // The core group is "", which kube's JSON leaves out (omitempty).
    assert.deepEqual(core.spec, { version: 'v1', groupPriorityMinimum: 18000, versionPriority: 1 });
    assert.equal(core.metadata.labels['kube-aggregator.kubernetes.io/automanaged'], 'onstart');
    assert.deepEqual(byName.get('v2.autoscaling')!.spec, { group: 'autoscaling', version: 'v2', groupPriorityMinimum: 17500, versionPriority: 30 });
    assert.deepEqual(byName.get('v1.apiregistration.k8s.io')!.spec.groupPriorityMinimum, 18000);
    const cond = byName.get('v1.apps')!.status.conditions[0];
    assert.equal(cond.type, 'Available');
    assert.equal(cond.status, 'True');
    assert.equal(cond.reason, 'Local');
    assert.equal(cond.message, 'Local APIServices are always available');
    // --runtime-config=batch/v1beta1=false: no APIService for it.
    assert.ok(byName.has('v1.batch'));
    assert.ok(!byName.has('v1beta1.batch'));
  });

  it('validates as kube-aggregator: the name, priorities, service reference, caBundle vs insecureSkipTLSVerify', async () => {
    const bad = await env.plinth.client.post(AS, svc('v1.wrong.example.com', { group: 'metrics.example.com', version: 'v1', groupPriorityMinimum: 0, versionPriority: 1001, service: { namespace: '', name: 'm', port: 70000 }, insecureSkipTLSVerify: true, caBundle: Buffer.from('x').toString('base64') }));
    expectStatus(bad, 422, 'Invalid');
    assert.deepEqual(causeFields(bad), ['metadata.name', 'spec.groupPriorityMinimum', 'spec.versionPriority', 'spec.service.namespace', 'spec.service.port', 'spec.insecureSkipTLSVerify']);
    assert.match(bad.body.message, /metadata.name: Invalid value: "v1.wrong.example.com": must be `spec.version\+"."\+spec.group`: "v1.metrics.example.com"/);
    assert.match(bad.body.message, /spec.groupPriorityMinimum: Invalid value: 0: must be positive and less than 20000/);
    assert.match(bad.body.message, /spec.service.port: Invalid value: 70000: port is not valid: must be between 1 and 65535, inclusive/);
    assert.match(bad.body.message, /spec.insecureSkipTLSVerify: Invalid value: true: may not be true if caBundle is present/);
    const local = await env.plinth.client.post(AS, svc('v1.local.example.com', { group: 'local.example.com', version: 'v1', groupPriorityMinimum: 100, versionPriority: 10, insecureSkipTLSVerify: true }));
    expectStatus(local, 422, 'Invalid');
    assert.match(local.body.message, /spec.insecureSkipTLSVerify: Invalid value: true: local APIServices may not have insecureSkipTLSVerify/);
  });

  it('defaults the service port to 443, resets status on create, keeps spec through /status', async () => {
    const created = await env.plinth.client.post(AS, svc('v1beta1.metrics.example.com', { group: 'metrics.example.com', version: 'v1beta1', groupPriorityMinimum: 100, versionPriority: 100, insecureSkipTLSVerify: true, service: { namespace: 'kube-system', name: 'metrics' } }));
    expectCode(created, 201);
    assert.equal(created.body.spec.service.port, 443);
    assert.deepEqual(created.body.status, {});
    // The availability controller writes its condition first (no Service): update over its write.
    const latest = await eventually(async () => {
      const o = (await env.plinth.client.get(`${AS}/v1beta1.metrics.example.com`)).body;
      return o.status?.conditions?.[0]?.reason === 'ServiceNotFound' ? o : undefined;
    }, 20_000);
    const badStatus = await env.plinth.client.put(`${AS}/v1beta1.metrics.example.com/status`, { ...latest, status: { conditions: [{ type: 'Available', status: 'Maybe' }] } });
    expectStatus(badStatus, 422, 'Invalid');
    assert.deepEqual(causeFields(badStatus), ['status.conditions[0].status']);
    const st = await env.plinth.client.put(`${AS}/v1beta1.metrics.example.com/status`, { ...latest, spec: { ...latest.spec, versionPriority: 5 }, status: { conditions: [{ type: 'Available', status: 'False', reason: 'MissingEndpoints', message: 'x', lastTransitionTime: '2024-01-01T00:00:00Z' }] } });
    expectCode(st, 200);
    assert.equal(st.body.spec.versionPriority, 100);
  });

  it('registers an APIService per group/version a CRD serves, and removes it with the CRD', async () => {
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'widgets.reg.example.com' },
      spec: {
        group: 'reg.example.com',
        scope: 'Namespaced',
        names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
        versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object' } } }],
      },
    };
    expectCode(await env.plinth.client.post('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd), 201);
    const got = await eventually(async () => {
      const r = await env.plinth.client.get(`${AS}/v1.reg.example.com`);
      return r.status === 200 ? r.body : undefined;
    }, 20_000);
    assert.equal(got.metadata.labels['kube-aggregator.kubernetes.io/automanaged'], 'true');
    assert.deepEqual(got.spec, { group: 'reg.example.com', version: 'v1', groupPriorityMinimum: 1000, versionPriority: 100 });
    assert.equal(got.status.conditions[0].reason, 'Local');
    expectCode(await env.plinth.client.delete('/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.reg.example.com'), 200);
    await eventually(async () => (await env.plinth.client.get(`${AS}/v1.reg.example.com`)).status === 404, 30_000);
  });

  it('prints NAME SERVICE AVAILABLE AGE as kube', async () => {
    const out = await kubectl('get', 'apiservices');
    assert.match(out.split('\n')[0]!, /^NAME\s+SERVICE\s+AVAILABLE\s+AGE$/);
    assert.match(out, /\nv1\.apps\s+Local\s+True\s+\d+s/);
    // The availability controller finds no Service: False with kube's reason.
    await eventually(async () => /\nv1beta1\.metrics\.example\.com\s+kube-system\/metrics\s+False \(ServiceNotFound\)\s+\d+s/.test(await kubectl('get', 'apiservices')), 20_000);
  });
});
