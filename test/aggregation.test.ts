/**
 * API aggregation on a real server (kube-aggregator 1.24's rules): an HTTPS backend serving
 * metrics.k8s.io/v1beta1 as metrics-server does, registered by an APIService + Service + Endpoints
 * on loopback. The backend sees kube's front-proxy headers over the proxy client certificate,
 * discovery merges the group, `kubectl top` reaches it, and a dead backend is Available False
 * and answered 503.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:https';
import type { IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { networkInterfaces } from 'node:os';
import type { TLSSocket } from 'node:tls';
import { eventually, kubectlPath, tempDir, usePlinth } from './harness.js';
import { expectCode } from './assertions.js';
import { Pki } from './auth-fixtures.js';

const pki = new Pki(tempDir('plinth-aggregation-'))
  .rootCA('backend-ca')
  .issue('metrics-server', '/CN=metrics-server', 'backend-ca', ['basicConstraints=critical,CA:FALSE', 'keyUsage=critical,digitalSignature', 'extendedKeyUsage=serverAuth', 'subjectAltName=DNS:metrics-server.kube-system.svc'])
  .rootCA('front-proxy-ca')
  .issue('front-proxy-client', '/CN=front-proxy-client', 'front-proxy-ca');

const env = usePlinth([
  `--proxy-client-cert-file=${pki.certFile('front-proxy-client')}`,
  `--proxy-client-key-file=${pki.keyFile('front-proxy-client')}`,
  `--requestheader-client-ca-file=${pki.certFile('front-proxy-ca')}`,
  '--requestheader-allowed-names=front-proxy-client',
  '--requestheader-username-headers=X-Remote-User',
  '--requestheader-group-headers=X-Remote-Group',
  '--requestheader-extra-headers-prefix=X-Remote-Extra-',
]);
const AS = '/apis/apiregistration.k8s.io/v1/apiservices';
const NAME = 'v1beta1.metrics.k8s.io';

interface Seen {
  path: string;
  headers: IncomingHttpHeaders;
  clientCN: string | undefined;
}
const seen: Seen[] = [];
let backend: Server;
let backendPort = 0;
/**
 * kube's Endpoints validation refuses loopback addresses, so the backend listens on the machine's
 * first non-loopback IPv4 address (the tests that need it are skipped on a machine with none).
 */
const BACKEND_IP = Object.values(networkInterfaces()).flat().find((i) => i && !i.internal && i.family === 'IPv4')?.address;
const needsIP = BACKEND_IP ? {} : { skip: 'no non-loopback IPv4 address for an Endpoints object' };

const now = () => new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
const RESOURCES = {
  kind: 'APIResourceList',
  apiVersion: 'v1',
  groupVersion: 'metrics.k8s.io/v1beta1',
  resources: [
    { name: 'nodes', singularName: '', namespaced: false, kind: 'NodeMetrics', verbs: ['get', 'list'] },
    { name: 'pods', singularName: '', namespaced: true, kind: 'PodMetrics', verbs: ['get', 'list'] },
  ],
};

function answer(path: string): unknown {
  if (path === '/apis/metrics.k8s.io/v1beta1') return RESOURCES;
  if (path === '/apis/metrics.k8s.io/v1beta1/nodes') {
    return { kind: 'NodeMetricsList', apiVersion: 'metrics.k8s.io/v1beta1', metadata: {}, items: [{ metadata: { name: 'agg-node', creationTimestamp: now() }, timestamp: now(), window: '10s', usage: { cpu: '250m', memory: '512Mi' } }] };
  }
  if (path === '/apis/metrics.k8s.io/v1beta1/namespaces/default/pods') {
    return { kind: 'PodMetricsList', apiVersion: 'metrics.k8s.io/v1beta1', metadata: {}, items: [{ metadata: { name: 'web-0', namespace: 'default', creationTimestamp: now() }, timestamp: now(), window: '10s', containers: [{ name: 'web', usage: { cpu: '5m', memory: '20Mi' } }] }] };
  }
  return undefined;
}

async function startBackend(port = 0): Promise<void> {
  backend = createServer({ cert: pki.pem('metrics-server'), key: pki.keyPem('metrics-server'), ca: pki.pem('front-proxy-ca'), requestCert: true, rejectUnauthorized: false }, (req, res) => {
    const path = (req.url ?? '').split('?')[0]!;
    const peer = (req.socket as TLSSocket).getPeerCertificate();
    seen.push({ path, headers: req.headers, clientCN: peer && typeof peer.subject?.CN === 'string' ? peer.subject.CN : undefined });
    const body = answer(path);
    res.writeHead(body ? 200 : 404, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body ?? { kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 404, reason: 'NotFound' }));
  });
  await new Promise<void>((r) => backend.listen(port, BACKEND_IP ?? '127.0.0.1', r));
  backendPort = (backend.address() as AddressInfo).port;
}

async function stopBackend(): Promise<void> {
  const closed = new Promise<void>((r) => backend.close(() => r()));
  backend.closeAllConnections();
  await closed;
}

function kubectl(...args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(kubectlPath(), ['--kubeconfig', env.plinth.server.kubeconfigPath, ...args], { encoding: 'utf8', timeout: 60_000 }, (err, stdout, stderr) =>
      err ? reject(new Error(`kubectl ${args.join(' ')}: ${stderr}`)) : resolve(stdout),
    );
  });
}

const available = async (): Promise<Record<string, string>> => {
  const got = await env.plinth.client.get(`${AS}/${NAME}`);
  return ((got.body.status?.conditions ?? []) as Array<Record<string, string>>).find((c) => c['type'] === 'Available') ?? {};
};

describe('aggregation', () => {
  before(async () => {
    await startBackend();
    const c = env.plinth.client;
    expectCode(await c.post('/api/v1/namespaces/kube-system/services', { apiVersion: 'v1', kind: 'Service', metadata: { name: 'metrics-server' }, spec: { ports: [{ name: 'https', port: 443, targetPort: 'https' }] } }), 201);
    expectCode(await c.post('/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'agg-node' }, status: { capacity: { cpu: '4', memory: '8Gi', pods: '110' }, allocatable: { cpu: '4', memory: '8Gi', pods: '110' } } }), 201);
    expectCode(await c.post('/api/v1/namespaces/default/pods', { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web-0' }, spec: { containers: [{ name: 'web', image: 'nginx' }] } }), 201);
  });
  after(async () => {
    if (backend.listening) await stopBackend();
  });

  it('publishes kube-system/extension-apiserver-authentication with the front-proxy configuration', async () => {
    const cm = await env.plinth.client.get('/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication');
    expectCode(cm, 200);
    assert.equal(cm.body.data['requestheader-client-ca-file'], pki.pem('front-proxy-ca'));
    assert.equal(cm.body.data['requestheader-username-headers'], '["X-Remote-User"]');
    assert.equal(cm.body.data['requestheader-group-headers'], '["X-Remote-Group"]');
    assert.equal(cm.body.data['requestheader-extra-headers-prefix'], '["X-Remote-Extra-"]');
    assert.equal(cm.body.data['requestheader-allowed-names'], '["front-proxy-client"]');
  });

  it('an APIService whose Service has no endpoints is Available False (EndpointsNotFound) and answered 503', async () => {
    const created = await env.plinth.client.post(AS, {
      apiVersion: 'apiregistration.k8s.io/v1',
      kind: 'APIService',
      metadata: { name: NAME },
      spec: { group: 'metrics.k8s.io', version: 'v1beta1', groupPriorityMinimum: 100, versionPriority: 100, caBundle: Buffer.from(pki.pem('backend-ca')).toString('base64'), service: { namespace: 'kube-system', name: 'metrics-server' } },
    });
    expectCode(created, 201);
    const cond = await eventually(async () => ((await available())['reason'] === 'EndpointsNotFound' ? available() : undefined), 20_000);
    assert.equal(cond['status'], 'False');
    assert.equal(cond['message'], 'cannot find endpoints for service/metrics-server in "kube-system"');
    const r = await env.plinth.client.get('/apis/metrics.k8s.io/v1beta1/nodes');
    assert.equal(r.status, 503);
    assert.equal(r.raw.toString('utf8'), 'service unavailable\n');
  });

  it('with endpoints the backend is Available (Passed), proxied with the front-proxy headers and certificate', needsIP, async () => {
    expectCode(await env.plinth.client.post('/api/v1/namespaces/kube-system/endpoints', { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'metrics-server' }, subsets: [{ addresses: [{ ip: BACKEND_IP }], ports: [{ name: 'https', port: backendPort }] }] }), 201);
    const cond = await eventually(async () => ((await available())['status'] === 'True' ? available() : undefined), 20_000);
    assert.equal(cond['reason'], 'Passed');
    assert.equal(cond['message'], 'all checks passed');
    // The availability probe speaks as kube-aggregator.
    const probe = seen.find((s) => s.path === '/apis/metrics.k8s.io/v1beta1')!;
    assert.equal(probe.headers['x-remote-user'], 'system:kube-aggregator');
    seen.length = 0;
    const r = await env.plinth.client.get('/apis/metrics.k8s.io/v1beta1/nodes');
    expectCode(r, 200);
    assert.equal(r.body.kind, 'NodeMetricsList');
    const req = seen.find((s) => s.path === '/apis/metrics.k8s.io/v1beta1/nodes')!;
    assert.equal(req.clientCN, 'front-proxy-client');
    assert.ok(req.headers['x-remote-user']);
    assert.match(String(req.headers['x-remote-group']), /system:masters/);
    assert.equal(req.headers['authorization'], undefined);
    // Authorized here first, as kube-aggregator's handler chain does: anonymous never reaches the backend.
    seen.length = 0;
    const anon = await env.plinth.client.get('/apis/metrics.k8s.io/v1beta1/nodes', { token: null });
    assert.equal(anon.status, 403);
    assert.equal(anon.body.message, 'nodes.metrics.k8s.io is forbidden: User "system:anonymous" cannot list resource "nodes" in API group "metrics.k8s.io" at the cluster scope');
    assert.equal(seen.length, 0);
    // A caller's own front-proxy or impersonation headers never reach the backend: only who it is.
    seen.length = 0;
    expectCode(await env.plinth.client.get('/apis/metrics.k8s.io/v1beta1/namespaces/default/pods', { headers: { 'X-Remote-User': 'mallory', 'X-Remote-Extra-Scopes': 'all' } }), 200);
    const spoofed = seen.find((s) => s.path === '/apis/metrics.k8s.io/v1beta1/namespaces/default/pods')!;
    assert.equal(spoofed.headers['x-remote-user'], req.headers['x-remote-user']);
    assert.equal(spoofed.headers['x-remote-extra-scopes'], undefined);
  });

  it('merges the group into discovery: /apis, /apis/metrics.k8s.io, kubectl api-resources and api-versions', needsIP, async () => {
    const groups = (await env.plinth.client.get('/apis')).body.groups as Array<{ name: string; preferredVersion: { groupVersion: string } }>;
    const metrics = groups.find((g) => g.name === 'metrics.k8s.io')!;
    assert.equal(metrics.preferredVersion.groupVersion, 'metrics.k8s.io/v1beta1');
    assert.equal(groups[groups.length - 1]!.name, 'metrics.k8s.io', 'priority 100 sorts after every built-in group');
    const g = await env.plinth.client.get('/apis/metrics.k8s.io');
    expectCode(g, 200);
    assert.equal(g.body.kind, 'APIGroup');
    assert.match(await kubectl('api-versions'), /^metrics\.k8s\.io\/v1beta1$/m);
    assert.match(await kubectl('api-resources', '--api-group=metrics.k8s.io'), /\nnodes\s+metrics\.k8s\.io\/v1beta1\s+false\s+NodeMetrics\n/);
    assert.match(await kubectl('get', 'apiservices', NAME), /\nv1beta1\.metrics\.k8s\.io\s+kube-system\/metrics-server\s+True\s+\d+s/);
  });

  it('kubectl top node and top pod reach the backend', needsIP, async () => {
    assert.match(await kubectl('top', 'node'), /\nagg-node\s+250m\s+6%\s+512Mi\s+6%/);
    assert.match(await kubectl('top', 'pod', '-n', 'default'), /\nweb-0\s+5m\s+20Mi/);
  });

  it('a backend that goes down is Available False (FailedDiscoveryCheck) and answered 503', needsIP, async () => {
    await stopBackend();
    const cond = await eventually(async () => ((await available())['reason'] === 'FailedDiscoveryCheck' ? available() : undefined), 20_000);
    assert.equal(cond['status'], 'False');
    assert.match(cond['message']!, /^failing or missing response from https:\/\/[\d.]+:\d+\/apis\/metrics\.k8s\.io\/v1beta1: /);
    const r = await env.plinth.client.get('/apis/metrics.k8s.io/v1beta1/nodes');
    assert.equal(r.status, 503);
    assert.match(await kubectl('get', 'apiservices', NAME), /False \(FailedDiscoveryCheck\)/);
  });
});
