/**
 * plinth started with the command line kubeadm 1.24 writes into its kube-apiserver static pod
 * manifest (cmd/kubeadm/app/phases/controlplane/manifests.go getAPIServerCommand), with a
 * kubeadm-shaped PKI (ca, apiserver, apiserver-kubelet-client, front-proxy-ca/-client, sa.key/.pub)
 * and an etcd reached over TLS with client certificates, as kubeadm's stacked etcd is. What each
 * flag does is checked through a client: client certificates of the cluster CA, the front proxy's
 * headers, service-account tokens of kubeadm's issuer, the Service range, and certificates signed
 * by the in-process csrsigning controller from kubeadm's kube-controller-manager flags.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Agent, request as httpsRequest } from 'node:https';
import { startEmbeddedEtcd, type EmbeddedEtcd } from '@plinth/storage';
import { startInProcess, tempDir, type InProcessPlinth } from './harness.js';
import { Pki } from './auth-fixtures.js';

const dir = tempDir('plinth-kubeadm-');
const pki = new Pki(dir);
pki.rootCA('ca');
pki.issue('apiserver', '/CN=kube-apiserver', 'ca', [
  'keyUsage=critical,digitalSignature,keyEncipherment',
  'extendedKeyUsage=serverAuth',
  'subjectAltName=DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,IP:10.96.0.1,IP:127.0.0.1',
]);
pki.issue('apiserver-kubelet-client', '/O=system:masters/CN=kube-apiserver-kubelet-client', 'ca');
pki.issue('admin', '/O=system:masters/CN=kubernetes-admin', 'ca');
pki.issue('jane', '/O=dev/CN=jane', 'ca');
pki.rootCA('front-proxy-ca');
pki.issue('front-proxy-client', '/CN=front-proxy-client', 'front-proxy-ca');
execFileSync('openssl', ['genrsa', '-out', 'sa.key', '2048'], { cwd: dir, stdio: 'ignore' });
execFileSync('openssl', ['rsa', '-in', 'sa.key', '-pubout', '-out', 'sa.pub'], { cwd: dir, stdio: 'ignore' });

/** kubeadm's advertise address is the node's IP; it only goes into the kubernetes Endpoints here. */
const ADVERTISE = '192.168.10.2';
const pkiPath = (f: string): string => join(dir, f);

/**
 * kubeadm 1.24's kube-apiserver flags, in its (sorted) order. --secure-port=6443 becomes a free
 * port (tests run side by side).
 */
function kubeadmFlags(etcd: EmbeddedEtcd): string[] {
  return [
    `--advertise-address=${ADVERTISE}`,
    '--allow-privileged=true',
    '--authorization-mode=Node,RBAC',
    `--client-ca-file=${pkiPath('ca.crt')}`,
    '--enable-admission-plugins=NodeRestriction',
    '--enable-bootstrap-token-auth=true',
    `--etcd-cafile=${pkiPath('etcd-ca.crt')}`,
    `--etcd-certfile=${pkiPath('apiserver-etcd-client.crt')}`,
    `--etcd-keyfile=${pkiPath('apiserver-etcd-client.key')}`,
    `--etcd-servers=${etcd.endpoint}`,
    `--kubelet-client-certificate=${pkiPath('apiserver-kubelet-client.crt')}`,
    `--kubelet-client-key=${pkiPath('apiserver-kubelet-client.key')}`,
    '--kubelet-preferred-address-types=InternalIP,ExternalIP,Hostname',
    `--proxy-client-cert-file=${pkiPath('front-proxy-client.crt')}`,
    `--proxy-client-key-file=${pkiPath('front-proxy-client.key')}`,
    '--requestheader-allowed-names=front-proxy-client',
    `--requestheader-client-ca-file=${pkiPath('front-proxy-ca.crt')}`,
    '--requestheader-extra-headers-prefix=X-Remote-Extra-',
    '--requestheader-group-headers=X-Remote-Group',
    '--requestheader-username-headers=X-Remote-User',
    '--secure-port=0', // kubeadm: 6443
    '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
    `--service-account-key-file=${pkiPath('sa.pub')}`,
    `--service-account-signing-key-file=${pkiPath('sa.key')}`,
    '--service-cluster-ip-range=10.96.0.0/12',
    `--tls-cert-file=${pkiPath('apiserver.crt')}`,
    `--tls-private-key-file=${pkiPath('apiserver.key')}`,
    // kubeadm's kube-controller-manager flags for csrsigning (its CA); plinth runs that controller in-process.
    `--cluster-signing-cert-file=${pkiPath('ca.crt')}`,
    `--cluster-signing-key-file=${pkiPath('ca.key')}`,
  ];
}

interface Reply {
  status: number;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- test convenience
}

let etcd: EmbeddedEtcd;
let plinth: InProcessPlinth;

/** A request over TLS verified against kubeadm's ca.crt, with a client certificate and/or headers. */
function call(method: string, path: string, opts: { as?: string; token?: string; headers?: Record<string, string>; body?: unknown } = {}): Promise<Reply> {
  const base = new URL(plinth.server.url);
  const agent = new Agent({ ca: pki.pem('ca'), ...(opts.as ? { cert: pki.pem(opts.as), key: readFileSync(pki.keyFile(opts.as), 'utf8') } : {}) });
  const payload = opts.body === undefined ? undefined : Buffer.from(JSON.stringify(opts.body));
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  if (opts.token) headers['authorization'] = `Bearer ${opts.token}`;
  if (payload) Object.assign(headers, { 'content-type': 'application/json', 'content-length': String(payload.length) });
  return new Promise((resolve, reject) => {
    const req = httpsRequest({ hostname: base.hostname, port: base.port, path, method, agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (d: Buffer) => chunks.push(d));
      res.on('end', () => {
        agent.destroy();
        const text = Buffer.concat(chunks).toString();
        let body: unknown = text;
        try {
          body = JSON.parse(text);
        } catch {
          // not JSON (e.g. /readyz)
        }
        resolve({ status: res.statusCode ?? 0, body });
      });
    });
    req.on('error', reject);
    req.end(payload);
  });
}

before(async () => {
  // kubeadm's stacked etcd: TLS with client certificates (the embedded etcd's own PKI).
  etcd = await startEmbeddedEtcd({ dataDir: join(dir, 'etcd') });
  writeFileSync(pkiPath('etcd-ca.crt'), etcd.tls!.ca);
  writeFileSync(pkiPath('apiserver-etcd-client.crt'), etcd.tls!.cert);
  writeFileSync(pkiPath('apiserver-etcd-client.key'), etcd.tls!.key);
  plinth = await startInProcess({ args: kubeadmFlags(etcd) });
});

after(async () => {
  await plinth?.stop();
  await etcd?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe("kubeadm 1.24's kube-apiserver command line", () => {
  it('starts, serving with --tls-cert-file, and the admin client certificate is system:masters', async () => {
    const ready = await call('GET', '/readyz', { as: 'admin' });
    assert.equal(ready.status, 200, String(ready.body));
    assert.equal((await call('GET', '/api/v1/namespaces', { as: 'admin' })).status, 200);
  });

  it('--client-ca-file: a certificate of the cluster CA authenticates as its subject', async () => {
    const res = await call('GET', '/api/v1/namespaces', { as: 'jane' });
    assert.equal(res.status, 403);
    assert.equal(res.body.message, 'namespaces is forbidden: User "jane" cannot list resource "namespaces" in API group "" at the cluster scope');
  });

  it('--requestheader-*: the front proxy client names the user in X-Remote-User', async () => {
    const res = await call('GET', '/api/v1/namespaces', { as: 'front-proxy-client', headers: { 'X-Remote-User': 'bob', 'X-Remote-Group': 'team' } });
    assert.equal(res.status, 403);
    assert.equal(res.body.message, 'namespaces is forbidden: User "bob" cannot list resource "namespaces" in API group "" at the cluster scope');
  });

  it("--service-account-*: tokens carry kubeadm's issuer and authenticate", async () => {
    const created = await call('POST', '/api/v1/namespaces/default/serviceaccounts/default/token', {
      as: 'admin',
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: {} },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const token: string = created.body.status.token;
    const claims = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString());
    assert.equal(claims.iss, 'https://kubernetes.default.svc.cluster.local');
    const res = await call('GET', '/api/v1/namespaces', { token });
    assert.equal(res.status, 403);
    assert.equal(res.body.message, 'namespaces is forbidden: User "system:serviceaccount:default:default" cannot list resource "namespaces" in API group "" at the cluster scope');
  });

  it('--service-cluster-ip-range and --advertise-address: the kubernetes Service and Endpoints', async () => {
    const svc = await call('GET', '/api/v1/namespaces/default/services/kubernetes', { as: 'admin' });
    assert.equal(svc.status, 200);
    assert.equal(svc.body.spec.clusterIP, '10.96.0.1');
    const ep = await call('GET', '/api/v1/namespaces/default/endpoints/kubernetes', { as: 'admin' });
    assert.equal(ep.status, 200);
    assert.deepEqual(ep.body.subsets[0].addresses.map((a: { ip: string }) => a.ip), [ADVERTISE]);
  });

  it("--cluster-signing-cert-file/-key-file (kube-controller-manager's): an approved CSR is signed by kubeadm's CA", async () => {
    execFileSync('openssl', ['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', 'alice.key'], { cwd: dir });
    const request = execFileSync('openssl', ['req', '-new', '-key', 'alice.key', '-subj', '/O=dev/CN=alice'], { cwd: dir, encoding: 'utf8' });
    const CSR = '/apis/certificates.k8s.io/v1/certificatesigningrequests/alice';
    const created = await call('POST', '/apis/certificates.k8s.io/v1/certificatesigningrequests', {
      as: 'admin',
      body: { apiVersion: 'certificates.k8s.io/v1', kind: 'CertificateSigningRequest', metadata: { name: 'alice' }, spec: { request: Buffer.from(request).toString('base64'), signerName: 'kubernetes.io/kube-apiserver-client', usages: ['client auth'] } },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const csr = created.body;
    csr.status = { conditions: [{ type: 'Approved', status: 'True', reason: 'Test', message: 'approved by the test' }] };
    assert.equal((await call('PUT', `${CSR}/approval`, { as: 'admin', body: csr })).status, 200);
    let pem = '';
    for (let i = 0; i < 100 && !pem; i++) {
      const got = await call('GET', CSR, { as: 'admin' });
      if (got.body.status?.certificate) pem = Buffer.from(got.body.status.certificate, 'base64').toString();
      else await new Promise((r) => setTimeout(r, 100));
    }
    assert.ok(pem, 'signed');
    assert.ok(new X509Certificate(pem).verify(new X509Certificate(pki.pem('ca')).publicKey));
    writeFileSync(pkiPath('alice.crt'), pem);
    const res = await call('GET', '/api/v1/namespaces', { as: 'alice' });
    assert.equal(res.status, 403);
    assert.equal(res.body.message, 'namespaces is forbidden: User "alice" cannot list resource "namespaces" in API group "" at the cluster scope');
  });
});
