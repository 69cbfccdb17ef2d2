/**
 * Kubelet TLS bootstrap end to end against a real plinth and etcd, as kubeadm sets it up: a
 * bootstrap token creates a CertificateSigningRequest for the kube-apiserver-client-kubelet
 * signer, the in-process csrapproving controller approves it after a SubjectAccessReview, the
 * in-process csrsigning controller (--cluster-signing-cert-file/-key-file = the CA that
 * --client-ca-file trusts) signs it, and the issued certificate authenticates as
 * system:node:<name> in system:nodes. Also: renewal by the node itself (selfnodeclient), manual
 * approval with `kubectl certificate approve`, kube's signer rules (Failed condition), denial,
 * expirationSeconds and --cluster-signing-duration, and the flags' checks.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { X509Certificate, randomInt } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Agent, request as httpsRequest } from 'node:https';
import { parseFlags, startServer, createLogger } from '@plinth/apiserver';
import { eventually, kubectlPath, tempDir, usePlinth, type TestClient } from './harness.js';
import { expectCode } from './assertions.js';
import { Pki } from './auth-fixtures.js';

const dir = tempDir('plinth-kubelet-bootstrap-');
const pki = new Pki(dir);
pki.rootCA('cluster-ca');
after(() => rmSync(dir, { recursive: true, force: true }));

const env = usePlinth([
  '--enable-bootstrap-token-auth',
  '--feature-gates=APISelfSubjectReview=true',
  `--client-ca-file=${pki.certFile('cluster-ca')}`,
  // kube-controller-manager's flags: the signer uses the CA the apiserver trusts for clients.
  `--cluster-signing-cert-file=${pki.certFile('cluster-ca')}`,
  `--cluster-signing-key-file=${pki.keyFile('cluster-ca')}`,
  '--cluster-signing-duration=2h',
]);

const CSRS = '/apis/certificates.k8s.io/v1/certificatesigningrequests';
const KUBELET_CLIENT = 'kubernetes.io/kube-apiserver-client-kubelet';
const KUBELET_USAGES = ['digital signature', 'key encipherment', 'client auth'];
const NODE_TOKEN_GROUP = 'system:bootstrappers:kubeadm:default-node-token';
const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';
const rand = (n: number): string => Array.from({ length: n }, () => ALPHABET[randomInt(ALPHABET.length)]).join('');

/** A key and a PEM certificate request for `subject` (openssl, as a kubelet would make them). */
function keyAndRequest(name: string, subject: string): { key: string; request: string } {
  execFileSync('openssl', ['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', `${name}.key`], { cwd: dir });
  const request = execFileSync('openssl', ['req', '-new', '-key', `${name}.key`, '-subj', subject], { cwd: dir, encoding: 'utf8' });
  return { key: readFileSync(join(dir, `${name}.key`), 'utf8'), request };
}

function csrBody(name: string, request: string, spec: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    apiVersion: 'certificates.k8s.io/v1',
    kind: 'CertificateSigningRequest',
    metadata: { name },
    spec: { request: Buffer.from(request).toString('base64'), signerName: KUBELET_CLIENT, usages: KUBELET_USAGES, ...spec },
  };
}

/** A kubeadm-style bootstrap token in the node-token group; usable once the watch cache has it. */
async function createBootstrapToken(c: TestClient, extraGroups = NODE_TOKEN_GROUP): Promise<string> {
  const id = rand(6);
  const secret = rand(16);
  const res = await c.post('/api/v1/namespaces/kube-system/secrets', {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: `bootstrap-token-${id}` },
    type: 'bootstrap.kubernetes.io/token',
    stringData: { 'token-id': id, 'token-secret': secret, 'usage-bootstrap-authentication': 'true', 'auth-extra-groups': extraGroups },
  });
  expectCode(res, 201, 'create the bootstrap token Secret');
  await eventually(async () => (await c.get(`/api/v1/namespaces/kube-system/secrets/bootstrap-token-${id}?resourceVersion=0`)).status === 200, 10_000, 'the token Secret in the watch cache');
  return `${id}.${secret}`;
}

async function bind(c: TestClient, name: string, role: string, group: string): Promise<void> {
  const res = await c.post('/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: group }],
  });
  expectCode(res, 201, `bind ${role} to ${group}`);
}

/** A request with a client certificate (the TestClient speaks bearer tokens only). */
function withCert(method: string, path: string, creds: { cert: string; key: string }, body?: unknown): Promise<{ status: number; body: any }> { // eslint-disable-line @typescript-eslint/no-explicit-any -- test convenience
  const base = new URL(env.plinth.client.base);
  const ca = readFileSync(env.plinth.server.caFile!, 'utf8');
  const agent = new Agent({ ca, cert: creds.cert, key: creds.key });
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      { hostname: base.hostname, port: base.port, path, method, agent, headers: payload ? { 'content-type': 'application/json', 'content-length': String(payload.length) } : {} },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (d: Buffer) => chunks.push(d));
        res.on('end', () => {
          agent.destroy();
          const text = Buffer.concat(chunks).toString();
          let parsed: unknown;
          try {
            parsed = JSON.parse(text);
          } catch {
            parsed = text;
          }
          resolve({ status: res.statusCode ?? 0, body: parsed });
        });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** Who the server says a client certificate is (SelfSubjectReview). */
async function whoami(creds: { cert: string; key: string }): Promise<{ username: string; groups: string[] }> {
  const res = await withCert('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', creds, { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  const u = res.body.status.userInfo;
  return { username: u.username, groups: [...u.groups].sort() };
}

/** Waits for the CSR's certificate and returns it (PEM) with the CSR. */
async function issued(c: TestClient, name: string): Promise<{ pem: string; csr: any }> { // eslint-disable-line @typescript-eslint/no-explicit-any -- test convenience
  const csr = await eventually(async () => {
    const r = await c.get(`${CSRS}/${name}`);
    return r.body?.status?.certificate ? r.body : undefined;
  }, 15_000, `the certificate of ${name}`);
  return { pem: Buffer.from(csr.status.certificate, 'base64').toString(), csr };
}

const conditions = (csr: any): Array<{ type: string; status: string; reason?: string; message?: string }> => csr.status?.conditions ?? []; // eslint-disable-line @typescript-eslint/no-explicit-any -- test convenience

/** kubectl, asynchronously: the server runs in this process. */
function kubectl(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(kubectlPath(), ['--kubeconfig', env.plinth.server.kubeconfigPath, ...args], { encoding: 'utf8', timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr });
    });
  });
}

describe('kubelet TLS bootstrap', () => {
  let nodeCreds: { cert: string; key: string };

  it('a bootstrap token gets a kubelet client certificate, auto-approved and signed, that authenticates as system:node:<name>', async () => {
    const c = env.plinth.client;
    // kubeadm's bindings: the node token group may create CSRs and have them auto-approved; nodes may renew.
    await bind(c, 'kubeadm:kubelet-bootstrap', 'system:node-bootstrapper', NODE_TOKEN_GROUP);
    await bind(c, 'kubeadm:node-autoapprove-bootstrap', 'system:certificates.k8s.io:certificatesigningrequests:nodeclient', NODE_TOKEN_GROUP);
    await bind(c, 'kubeadm:node-autoapprove-certificate-rotation', 'system:certificates.k8s.io:certificatesigningrequests:selfnodeclient', 'system:nodes');
    const token = await createBootstrapToken(c);

    const { key, request } = keyAndRequest('n1', '/O=system:nodes/CN=system:node:n1');
    const created = await c.post(CSRS, csrBody('node-csr-n1', request, { expirationSeconds: 3600 }), { token });
    expectCode(created, 201, 'the bootstrap token creates its CSR');
    assert.match(created.body.spec.username, /^system:bootstrap:[a-z0-9]{6}$/);

    const { pem, csr } = await issued(c, 'node-csr-n1');
    const approved = conditions(csr).find((x) => x.type === 'Approved');
    assert.deepEqual(
      { status: approved?.status, reason: approved?.reason, message: approved?.message },
      { status: 'True', reason: 'AutoApproved', message: 'Auto approving kubelet client certificate after SubjectAccessReview.' },
    );
    const cert = new X509Certificate(pem);
    const ca = new X509Certificate(pki.pem('cluster-ca'));
    assert.ok(cert.verify(ca.publicKey), 'signed by the cluster CA');
    assert.equal(cert.issuer, ca.subject);
    assert.equal(cert.subject, 'O=system:nodes\nCN=system:node:n1');
    assert.equal(cert.ca, false);
    assert.deepEqual(cert.keyUsage, ['1.3.6.1.5.5.7.3.2'], 'client auth');
    // expirationSeconds honoured: kube backdates the start 5 minutes, not the end of a short-lived certificate.
    const lifetime = (Date.parse(cert.validTo) - Date.parse(cert.validFrom)) / 1000;
    assert.ok(Math.abs(lifetime - 3900) <= 2, `lifetime ${lifetime}s`);

    nodeCreds = { cert: pem, key };
    assert.deepEqual(await whoami(nodeCreds), { username: 'system:node:n1', groups: ['system:authenticated', 'system:nodes'] });
    // kube 1.24's own way to see it: the 403 names the user (with Node,RBAC a reason may follow).
    const denied = await withCert('GET', '/api/v1/secrets', nodeCreds);
    assert.equal(denied.status, 403);
    assert.match(denied.body.message, /^secrets is forbidden: User "system:node:n1" cannot list resource "secrets" in API group "" at the cluster scope/);
  });

  it('the node renews its own certificate: approved as selfnodeclient', async () => {
    const c = env.plinth.client;
    // With --authorization-mode=Node,RBAC the Node authorizer lets nodes create CSRs; under RBAC alone, a binding does.
    await bind(c, 'test:nodes-create-csrs', 'system:node-bootstrapper', 'system:nodes');
    const { request } = keyAndRequest('n1-renew', '/O=system:nodes/CN=system:node:n1');
    const created = await withCert('POST', CSRS, nodeCreds, csrBody('node-csr-n1-renew', request));
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal(created.body.spec.username, 'system:node:n1');
    const { csr } = await issued(c, 'node-csr-n1-renew');
    const approved = conditions(csr).find((x) => x.type === 'Approved');
    assert.equal(approved?.reason, 'AutoApproved');
    assert.equal(approved?.message, 'Auto approving self kubelet client certificate after SubjectAccessReview.');
  });

  it('a requester without the nodeclient permission stays pending', async () => {
    const c = env.plinth.client;
    // A token outside the auto-approved group (still allowed to create CSRs).
    await bind(c, 'test:other-token-csrs', 'system:node-bootstrapper', 'system:bootstrappers:other');
    const token = await createBootstrapToken(c, 'system:bootstrappers:other');
    const { request } = keyAndRequest('n2', '/O=system:nodes/CN=system:node:n2');
    expectCode(await c.post(CSRS, csrBody('node-csr-n2', request), { token }), 201, 'create');
    await new Promise((r) => setTimeout(r, 2000));
    const csr = (await c.get(`${CSRS}/node-csr-n2`)).body;
    assert.deepEqual(conditions(csr), []);
    assert.equal(csr.status.certificate, undefined);
  });

  it('kubectl certificate approve: a kube-apiserver-client certificate, valid for --cluster-signing-duration', async () => {
    const c = env.plinth.client;
    const { key, request } = keyAndRequest('jane', '/O=dev/CN=jane');
    // A long expirationSeconds is capped by --cluster-signing-duration (2h).
    expectCode(await c.post(CSRS, csrBody('jane', request, { signerName: 'kubernetes.io/kube-apiserver-client', expirationSeconds: 86400 })), 201, 'create');
    await new Promise((r) => setTimeout(r, 500));
    assert.equal((await c.get(`${CSRS}/jane`)).body.status.certificate, undefined, 'not signed before approval');

    const approve = await kubectl('certificate', 'approve', 'jane');
    assert.equal(approve.code, 0, approve.stderr);
    assert.match(approve.stdout, /certificatesigningrequest.certificates.k8s.io\/jane approved/);
    const { pem } = await issued(c, 'jane');
    const cert = new X509Certificate(pem);
    const lifetime = (Date.parse(cert.validTo) - Date.parse(cert.validFrom)) / 1000;
    assert.ok(Math.abs(lifetime - (7200 + 300)) <= 2, `lifetime ${lifetime}s`);
    assert.deepEqual(await whoami({ cert: pem, key }), { username: 'jane', groups: ['dev', 'system:authenticated'] });
    assert.match((await kubectl('get', 'csr', 'jane')).stdout, /jane\s+\S+\s+kubernetes.io\/kube-apiserver-client\s+\S+\s+24h\s+Approved,Issued/);
  });

  it("a request that breaks its signer's rules fails with kube's reason and message", async () => {
    const c = env.plinth.client;
    const cases: Array<[string, string, Record<string, unknown>, string]> = [
      ['bad-org', '/O=other/CN=system:node:n3', {}, 'subject organization is not system:nodes'],
      ['bad-cn', '/O=system:nodes/CN=n3', {}, 'subject common name does not begin with system:node:'],
      ['bad-usages', '/O=system:nodes/CN=system:node:n3', { usages: ['digital signature', 'client auth', 'server auth'] }, 'usages did not match [client auth digital signature key encipherment]'],
      ['bad-client-usage', '/CN=bob', { signerName: 'kubernetes.io/kube-apiserver-client', usages: ['server auth'] }, 'invalid usage for client certificate: server auth'],
    ];
    for (const [name, subject, spec] of cases) {
      const { request } = keyAndRequest(name, subject);
      expectCode(await c.post(CSRS, csrBody(name, request, spec)), 201, `create ${name}`);
      const approve = await kubectl('certificate', 'approve', name);
      assert.equal(approve.code, 0, approve.stderr);
    }
    for (const [name, , , message] of cases) {
      const csr = await eventually(async () => {
        const r = (await c.get(`${CSRS}/${name}`)).body;
        return conditions(r).some((x) => x.type === 'Failed') ? r : undefined;
      }, 15_000, `${name} to fail`);
      const failed = conditions(csr).find((x) => x.type === 'Failed');
      assert.deepEqual({ status: failed?.status, reason: failed?.reason, message: failed?.message }, { status: 'True', reason: 'SignerValidationFailure', message }, name);
      assert.equal(csr.status.certificate, undefined);
    }
    assert.match((await kubectl('get', 'csr', 'bad-org')).stdout, /Approved,Failed/);
  });

  it('a denied request is never signed', async () => {
    const c = env.plinth.client;
    const { request } = keyAndRequest('denied', '/O=system:nodes/CN=system:node:n4');
    // Created by the admin: not a bootstrap token, but the admin may create nodeclient CSRs — deny first.
    expectCode(await c.post(CSRS, csrBody('denied', request, { signerName: 'kubernetes.io/kube-apiserver-client', usages: ['client auth'] })), 201, 'create');
    const deny = await kubectl('certificate', 'deny', 'denied');
    assert.equal(deny.code, 0, deny.stderr);
    await new Promise((r) => setTimeout(r, 1500));
    const csr = (await c.get(`${CSRS}/denied`)).body;
    assert.equal(csr.status.certificate, undefined);
    assert.deepEqual(conditions(csr).map((x) => x.type), ['Denied']);
  });
});

describe('signing flags', () => {
  it("kube-controller-manager's pairing rules", () => {
    assert.throws(() => parseFlags(['--cluster-signing-cert-file=/a']), /--cluster-signing-cert-file and --cluster-signing-key-file must be given together/);
    assert.throws(() => parseFlags(['--cluster-signing-kubelet-client-cert-file=/a']), /"cluster-signing-kubelet-client": cannot specify key without cert or cert without key/);
    assert.throws(
      () => parseFlags(['--cluster-signing-cert-file=/a', '--cluster-signing-key-file=/b', '--cluster-signing-kubelet-serving-cert-file=/c', '--cluster-signing-kubelet-serving-key-file=/d']),
      /cannot specify --cluster-signing-\{cert,key\}-file and other --cluster-signing-\*-file flags at the same time/,
    );
    assert.equal(parseFlags([]).clusterSigningDuration, 8760 * 3_600_000);
  });

  it('a CA key that does not match its certificate fails start-up naming the flag', async () => {
    pki.rootCA('other-ca');
    const data = tempDir('plinth-data-');
    try {
      await assert.rejects(
        startServer(
          parseFlags(['--secure-port=0', `--data-dir=${data}`, `--cluster-signing-cert-file=${pki.certFile('cluster-ca')}`, `--cluster-signing-key-file=${pki.keyFile('other-ca')}`]),
          createLogger(-1, { write: () => true } as unknown as NodeJS.WritableStream),
        ),
        /--cluster-signing-\{cert,key\}-file: .*does not match/,
      );
    } finally {
      rmSync(data, { recursive: true, force: true });
    }
  });
});
