/**
 * networking.k8s.io/v1 on a real server: Ingresses (validation causes, generation, status
 * isolation, kube's columns, `kubectl create ingress`), IngressClasses (controller immutable,
 * parameters' scope default), NetworkPolicies (defaults, causes), and the DefaultIngressClass
 * admission plugin.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { kubectlPath, usePlinth } from './harness.js';
import { causeFields, expectCode, expectStatus } from './assertions.js';

const env = usePlinth();
const G = '/apis/networking.k8s.io/v1';
const ING = `${G}/namespaces/default/ingresses`;
const IC = `${G}/ingressclasses`;
const NP = `${G}/namespaces/default/networkpolicies`;

function kubectl(...args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(kubectlPath(), ['--kubeconfig', env.plinth.server.kubeconfigPath, ...args], { encoding: 'utf8', timeout: 60_000 }, (err, stdout, stderr) =>
      err ? reject(new Error(`kubectl ${args.join(' ')}: ${stderr}`)) : resolve(stdout),
    );
  });
}

const backend = { service: { name: 'web', port: { number: 80 } } };
const ingress = (name: string, spec: Record<string, unknown>) => ({ apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name }, spec });
const ic = (name: string, spec: Record<string, unknown>, annotations?: Record<string, string>) => ({ apiVersion: 'networking.k8s.io/v1', kind: 'IngressClass', metadata: { name, ...(annotations ? { annotations } : {}) }, spec });

describe('networking.k8s.io/v1', () => {
  it('serves discovery as kube', async () => {
    const res = (await env.plinth.client.get(G)).body.resources as Array<Record<string, unknown>>;
    assert.deepEqual(res.map((r) => r['name']), ['ingressclasses', 'ingresses', 'ingresses/status', 'networkpolicies', 'networkpolicies/status']);
    assert.deepEqual(res.find((r) => r['name'] === 'ingresses')!['shortNames'], ['ing']);
    assert.deepEqual(res.find((r) => r['name'] === 'networkpolicies')!['shortNames'], ['netpol']);
    assert.equal(res.find((r) => r['name'] === 'ingressclasses')!['namespaced'], false);
  });

  it('validates Ingresses as kube: pathType required and known, backends service xor resource, hosts', async () => {
    const bad = await env.plinth.client.post(ING, ingress('bad', {
      ingressClassName: 'Bad_Class',
      rules: [
        { host: '1.2.3.4', http: { paths: [{ path: '/a', backend }, { path: 'rel', pathType: 'Prefix', backend: { ...backend, resource: { kind: 'Bucket', name: 'b' } } }, { path: '/x', pathType: 'Regex', backend: { service: { name: 'web', port: {} } } }] } },
      ],
    }));
    expectStatus(bad, 422, 'Invalid');
    assert.deepEqual(causeFields(bad), ['spec.rules[0].host', 'spec.rules[0].http.paths[0].pathType', 'spec.rules[0].http.paths[1].path', 'spec.rules[0].http.paths[1].backend', 'spec.rules[0].http.paths[2].pathType', 'spec.rules[0].http.paths[2].backend', 'spec.ingressClassName']);
    assert.match(bad.body.message, /spec.rules\[0\].http.paths\[0\].pathType: Required value: pathType must be specified/);
    assert.match(bad.body.message, /spec.rules\[0\].http.paths\[2\].pathType: Unsupported value: "Regex": supported values: "Exact", "ImplementationSpecific", "Prefix"/);
    const empty = await env.plinth.client.post(ING, ingress('empty', {}));
    expectStatus(empty, 422, 'Invalid', 'Ingress.networking.k8s.io "empty" is invalid: spec: Invalid value: []networking.IngressRule(nil): either `defaultBackend` or `rules` must be specified');
  });

  it('keeps status and spec apart, and bumps generation on spec changes only', async () => {
    const created = await env.plinth.client.post(ING, { ...ingress('web', { ingressClassName: 'nginx', rules: [{ host: 'example.com', http: { paths: [{ path: '/', pathType: 'Prefix', backend }] } }] }), status: { loadBalancer: { ingress: [{ ip: '10.0.0.1' }] } } });
    expectCode(created, 201);
    assert.deepEqual(created.body.status, { loadBalancer: {} });
    assert.equal(created.body.metadata.generation, 1);
    const st = await env.plinth.client.put(`${ING}/web/status`, { ...created.body, spec: { defaultBackend: backend }, status: { loadBalancer: { ingress: [{ ip: '10.0.0.1' }] } } });
    expectCode(st, 200);
    assert.equal(st.body.metadata.generation, 1);
    assert.equal(st.body.spec.defaultBackend, undefined);
    const badStatus = await env.plinth.client.put(`${ING}/web/status`, { ...st.body, status: { loadBalancer: { ingress: [{ ip: 'nope' }] } } });
    expectStatus(badStatus, 422, 'Invalid');
    assert.deepEqual(causeFields(badStatus), ['status.loadBalancer.ingress[0].ip']);
    const upd = await env.plinth.client.put(`${ING}/web`, { ...st.body, spec: { ...st.body.spec, tls: [{ hosts: ['example.com'] }] }, status: {} });
    expectCode(upd, 200);
    assert.equal(upd.body.metadata.generation, 2);
    assert.deepEqual(upd.body.status, { loadBalancer: { ingress: [{ ip: '10.0.0.1' }] } });
    const t = await env.plinth.client.get(`${ING}/web`, { headers: { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' } });
    assert.deepEqual(t.body.columnDefinitions.map((c: { name: string }) => c.name), ['Name', 'Class', 'Hosts', 'Address', 'Ports', 'Age']);
    assert.deepEqual(t.body.rows[0].cells.slice(0, 5), ['web', 'nginx', 'example.com', '10.0.0.1', '80, 443']);
  });

  it('IngressClasses: controller required, immutable; parameters scope defaulted to Cluster', async () => {
    const bad = await env.plinth.client.post(IC, ic('bad', { parameters: { kind: 'Params', name: 'p', scope: 'Namespace' } }));
    expectStatus(bad, 422, 'Invalid');
    assert.deepEqual(causeFields(bad), ['spec.controller', 'spec.parameters.namespace']);
    const ok = await env.plinth.client.post(IC, ic('nginx', { controller: 'k8s.io/ingress-nginx', parameters: { apiGroup: 'k8s.example.com', kind: 'Params', name: 'p' } }));
    expectCode(ok, 201);
    assert.equal(ok.body.spec.parameters.scope, 'Cluster');
    const upd = await env.plinth.client.put(`${IC}/nginx`, { ...ok.body, spec: { ...ok.body.spec, controller: 'example.com/other' } });
    expectStatus(upd, 422, 'Invalid', 'IngressClass.networking.k8s.io "nginx" is invalid: spec.controller: Invalid value: "example.com/other": field is immutable');
    const out = await kubectl('get', 'ingressclass', 'nginx');
    assert.match(out, /^NAME\s+CONTROLLER\s+PARAMETERS\s+AGE\nnginx\s+k8s.io\/ingress-nginx\s+Params.k8s.example.com\/p\s+\d+s/);
  });

  it('DefaultIngressClass: the default class fills an Ingress without one; two defaults refuse it', async () => {
    expectCode(await env.plinth.client.post(IC, ic('default-a', { controller: 'example.com/a' }, { 'ingressclass.kubernetes.io/is-default-class': 'true' })), 201);
    const filled = await env.plinth.client.post(ING, ingress('defaulted', { defaultBackend: backend }));
    expectCode(filled, 201);
    assert.equal(filled.body.spec.ingressClassName, 'default-a');
    const legacy = await env.plinth.client.post(ING, { ...ingress('legacy', { defaultBackend: backend }), metadata: { name: 'legacy', annotations: { 'kubernetes.io/ingress.class': 'x' } } });
    assert.equal(legacy.body.spec.ingressClassName, undefined);
    expectCode(await env.plinth.client.post(IC, ic('default-b', { controller: 'example.com/b' }, { 'ingressclass.kubernetes.io/is-default-class': 'true' })), 201);
    expectStatus(await env.plinth.client.post(ING, ingress('refused', { defaultBackend: backend })), 403, 'Forbidden',
      'ingresses.networking.k8s.io "refused" is forbidden: Internal error occurred: 2 default IngressClasses were found, only 1 allowed');
    expectCode(await env.plinth.client.delete(`${IC}/default-b`), 200);
  });

  it('kubectl create ingress works and prints kube\'s columns', async () => {
    assert.match(await kubectl('create', 'ingress', 'kweb', '--rule=example.com/=svc:80'), /ingress.networking.k8s.io\/kweb created/);
    const got = JSON.parse(await kubectl('get', 'ingress', 'kweb', '-o', 'json'));
    assert.deepEqual(got.spec.rules[0].http.paths[0], { path: '/', pathType: 'Exact', backend: { service: { name: 'svc', port: { number: 80 } } } });
    assert.equal(got.spec.ingressClassName, 'default-a');
    assert.match(await kubectl('get', 'ing', 'kweb'), /^NAME\s+CLASS\s+HOSTS\s+ADDRESS\s+PORTS\s+AGE\nkweb\s+default-a\s+example.com\s+80\s+\d+s/);
  });

  it('NetworkPolicies: policyTypes and protocols defaulted, kube\'s causes', async () => {
    const np = await env.plinth.client.post(NP, { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: { name: 'np' }, spec: { podSelector: { matchLabels: { app: 'web' } }, egress: [{ ports: [{ port: 53 }] }] } });
    expectCode(np, 201);
    assert.deepEqual(np.body.spec.policyTypes, ['Ingress', 'Egress']);
    assert.equal(np.body.spec.egress[0].ports[0].protocol, 'TCP');
    assert.equal(np.body.metadata.generation, 1);
    const bad = await env.plinth.client.post(NP, { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: { name: 'bad' }, spec: { podSelector: {}, ingress: [{ ports: [{ protocol: 'ICMP', port: 'http', endPort: 90 }], from: [{}, { ipBlock: { cidr: '10.0.0.0/8', except: ['11.0.0.0/16'] }, podSelector: {} }] }], policyTypes: ['Ingress', 'Sideways'] } });
    expectStatus(bad, 422, 'Invalid');
    assert.deepEqual(causeFields(bad), ['spec.ingress[0].ports[0].protocol', 'spec.ingress[0].ports[0].endPort', 'spec.ingress[0].from[0]', 'spec.ingress[0].from[1].ipBlock.except[0]', 'spec.ingress[0].from[1]', 'spec.policyTypes[1]']);
    assert.match(await kubectl('get', 'netpol', 'np'), /^NAME\s+POD-SELECTOR\s+AGE\nnp\s+app=web\s+\d+s/);
  });

  it('NetworkPolicies: status is its own endpoint; with the NetworkPolicyStatus gate off its conditions are dropped', async () => {
    const cond = { type: 'Accepted', status: 'True', reason: 'Ok', message: 'm', lastTransitionTime: '2024-01-01T00:00:00Z' };
    const np = await env.plinth.client.post(NP, { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: { name: 'st' }, spec: { podSelector: {} }, status: { conditions: [cond] } });
    expectCode(np, 201);
    assert.deepEqual(np.body.status, {});
    const put = await env.plinth.client.put(`${NP}/st/status`, { ...np.body, spec: { podSelector: { matchLabels: { a: 'b' } } }, status: { conditions: [cond] } });
    expectCode(put, 200);
    assert.deepEqual(put.body.spec.podSelector, {});
    assert.deepEqual(put.body.status, {});
    const upd = await env.plinth.client.put(`${NP}/st`, { ...put.body, spec: { podSelector: { matchLabels: { a: 'b' } } }, status: { conditions: [cond] } });
    expectCode(upd, 200);
    assert.deepEqual(upd.body.status, {});
    assert.equal(upd.body.metadata.generation, 2);
  });
});
