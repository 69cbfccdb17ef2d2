/**
 * certificates.k8s.io/v1 CertificateSigningRequests on a real server (groups/certificates/): the
 * spec's v1 rules with kube 1.24's causes, the requester recorded from the request's user, spec
 * and status isolation, /approval and /status, the CertificateApproval, CertificateSigning and
 * CertificateSubjectRestriction plugins, kubectl's columns, `kubectl certificate approve|deny`,
 * and Protobuf. Requests are made with openssl.
 */
import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { decodeProtobuf } from '@plinth/apiserver';
import { kubectlPath, usePlinth } from './harness.js';
import { expectCode, expectStatus } from './assertions.js';

const env = usePlinth();
const CSR = '/apis/certificates.k8s.io/v1/certificatesigningrequests';

function kubectl(...args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(kubectlPath(), ['--kubeconfig', env.plinth.server.kubeconfigPath, ...args], { encoding: 'utf8', timeout: 60_000 }, (err, stdout, stderr) =>
      err ? reject(new Error(`kubectl ${args.join(' ')}: ${stderr}`)) : resolve(stdout),
    );
  });
}

/** A PEM certificate request (and a self-signed certificate) for `subject`, made by openssl. */
function makeRequest(subject: string): { csr: string; cert: string } {
  const dir = mkdtempSync(join(tmpdir(), 'plinth-csr-'));
  try {
    const key = join(dir, 'k.pem');
    execFileSync('openssl', ['req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', key, '-subj', subject, '-out', join(dir, 'r.pem')], { stdio: 'ignore' });
    execFileSync('openssl', ['req', '-x509', '-key', key, '-subj', subject, '-days', '1', '-out', join(dir, 'c.pem')], { stdio: 'ignore' });
    return { csr: readFileSync(join(dir, 'r.pem'), 'utf8'), cert: readFileSync(join(dir, 'c.pem'), 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const b64 = (s: string): string => Buffer.from(s).toString('base64');
let alice: { csr: string; cert: string };

const request = (name: string, spec: Record<string, unknown> = {}): Record<string, unknown> => ({
  apiVersion: 'certificates.k8s.io/v1',
  kind: 'CertificateSigningRequest',
  metadata: { name },
  spec: { request: b64(alice.csr), signerName: 'example.com/signer', usages: ['client auth'], ...spec },
});

type Causes = Array<{ field: string; reason: string; message: string }>;
const causesOf = (body: { details: { causes: Causes } }): string[][] => body.details.causes.map((c) => [c.field, c.reason]);
const as = (user: string, groups: string[] = []): Record<string, string> =>
  ({ 'Impersonate-User': user, ...(groups.length ? { 'Impersonate-Group': groups } : {}) }) as unknown as Record<string, string>;

describe('certificatesigningrequests', () => {
  before(async () => {
    alice = makeRequest('/CN=alice/O=devs');
    // carol may write the sub-resources (RBAC) but holds no approve/sign on any signer.
    const rbac = '/apis/rbac.authorization.k8s.io/v1';
    expectCode(await env.plinth.client.post(`${rbac}/clusterroles`, {
      apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'csr-writer' },
      rules: [{ apiGroups: ['certificates.k8s.io'], resources: ['certificatesigningrequests', 'certificatesigningrequests/approval', 'certificatesigningrequests/status'], verbs: ['get', 'update'] }],
    }), 201);
    expectCode(await env.plinth.client.post(`${rbac}/clusterrolebindings`, {
      apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'csr-writer' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'csr-writer' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'carol' }],
    }), 201);
  });

  it('are served in discovery as kube 1.24 serves them', async () => {
    const res = await env.plinth.client.get('/apis/certificates.k8s.io/v1');
    expectCode(res, 200);
    const all = res.body.resources as Array<Record<string, unknown>>;
    assert.deepEqual(all.map((r) => r['name']), ['certificatesigningrequests', 'certificatesigningrequests/approval', 'certificatesigningrequests/status']);
    assert.deepEqual(all[0]!['shortNames'], ['csr']);
    assert.equal(all[0]!['namespaced'], false);
    assert.deepEqual(all[1]!['verbs'], ['get', 'patch', 'update']);
  });

  it('record the requesting user and clear the status on create', async () => {
    const res = await env.plinth.client.post(CSR, { ...request('one', { username: 'mallory', groups: ['system:masters'] }), status: { conditions: [{ type: 'Approved', status: 'True' }] } }, {
      headers: as('bob', ['system:masters']),
    });
    expectCode(res, 201);
    assert.equal(res.body.spec.username, 'bob');
    assert.deepEqual(res.body.spec.groups, ['system:masters', 'system:authenticated']);
    assert.deepEqual(res.body.status, {});
    // An update of the resource keeps spec and status.
    const upd = await env.plinth.client.put(`${CSR}/one`, { ...res.body, metadata: { ...res.body.metadata, labels: { a: 'b' } }, spec: { ...res.body.spec, username: 'eve' }, status: { certificate: b64(alice.cert) } });
    expectCode(upd, 200);
    assert.equal(upd.body.spec.username, 'bob');
    assert.deepEqual(upd.body.status, {});
    assert.deepEqual(upd.body.metadata.labels, { a: 'b' });
  });

  it("refuse bad requests with kube's causes", async () => {
    const bad = await env.plinth.client.post(CSR, request('bad', { request: b64('nope'), signerName: '', usages: ['client auth', 'fly', 'client auth'], expirationSeconds: 60 }));
    expectStatus(bad, 422, 'Invalid', /^CertificateSigningRequest.certificates.k8s.io "bad" is invalid: \[/);
    assert.deepEqual(causesOf(bad.body), [
      ['spec.request', 'FieldValueInvalid'],
      ['spec.usages[1]', 'FieldValueNotSupported'],
      ['spec.usages[2]', 'FieldValueDuplicate'],
      ['spec.signerName', 'FieldValueRequired'],
      ['spec.expirationSeconds', 'FieldValueInvalid'],
    ]);
    assert.match(bad.body.details.causes[0].message, /PEM block type must be CERTIFICATE REQUEST$/);
    const legacy = await env.plinth.client.post(CSR, request('legacy', { signerName: 'kubernetes.io/legacy-unknown', usages: [] }));
    expectStatus(legacy, 422, 'Invalid');
    assert.deepEqual(legacy.body.details.causes.map((c: { field: string; message: string }) => [c.field, c.message]), [
      ['spec.usages', 'Required value: usages must be provided'],
      ['spec.signerName', 'Invalid value: "kubernetes.io/legacy-unknown": the legacy signerName is not allowed via this API version'],
    ]);
    // A request whose signature does not match its key.
    const der = Buffer.from(alice.csr.replace(/-----[^-]+-----|\s/g, ''), 'base64');
    der[der.length - 5] ^= 0xff;
    const tampered = `-----BEGIN CERTIFICATE REQUEST-----\n${der.toString('base64')}\n-----END CERTIFICATE REQUEST-----\n`;
    const sig = await env.plinth.client.post(CSR, request('tampered', { request: b64(tampered) }));
    expectStatus(sig, 422, 'Invalid');
    assert.equal(sig.body.details.causes[0].field, 'spec.request');
  });

  it('refuse a kube-apiserver-client request for system:masters (CertificateSubjectRestriction)', async () => {
    const masters = makeRequest('/CN=root/O=system:masters');
    const res = await env.plinth.client.post(CSR, request('masters', { request: b64(masters.csr), signerName: 'kubernetes.io/kube-apiserver-client' }));
    expectStatus(res, 403, 'Forbidden', 'certificatesigningrequests.certificates.k8s.io "masters" is forbidden: use of kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed');
    const other = await env.plinth.client.post(CSR, request('masters-other', { request: b64(masters.csr) }));
    expectCode(other, 201);
  });

  it('approve only through /approval, by users allowed to approve for the signer', async () => {
    const cur = (await env.plinth.client.get(`${CSR}/one`)).body;
    const approved = { ...cur, status: { conditions: [{ type: 'Approved', status: 'True', reason: 'ok' }] } };
    const viaStatus = await env.plinth.client.put(`${CSR}/one/status`, approved);
    expectStatus(viaStatus, 422, 'Invalid', /updates may not add a condition of type "Approved"/);
    const denied = await env.plinth.client.put(`${CSR}/one/approval`, approved, { headers: as('carol') });
    expectStatus(denied, 403, 'Forbidden', 'certificatesigningrequests.certificates.k8s.io "one" is forbidden: user not permitted to approve requests with signerName "example.com/signer"');
    const ok = await env.plinth.client.put(`${CSR}/one/approval`, approved);
    expectCode(ok, 200);
    assert.equal(ok.body.status.conditions[0].type, 'Approved');
    assert.match(ok.body.status.conditions[0].lastUpdateTime, /Z$/);
    const both = await env.plinth.client.put(`${CSR}/one/approval`, { ...ok.body, status: { conditions: [...ok.body.status.conditions, { type: 'Denied', status: 'True' }] } });
    expectStatus(both, 422, 'Invalid');
    assert.deepEqual(causesOf(both.body), [['status.conditions[1].type', 'FieldValueInvalid']]);
  });

  it('take a certificate only through /status, PEM-checked, from signers', async () => {
    const cur = (await env.plinth.client.get(`${CSR}/one`)).body;
    const notPem = await env.plinth.client.put(`${CSR}/one/status`, { ...cur, status: { ...cur.status, certificate: b64('junk') } });
    expectStatus(notPem, 422, 'Invalid', /status.certificate: Invalid value: "<certificate data>": must contain at least one CERTIFICATE PEM block/);
    const nobody = await env.plinth.client.put(`${CSR}/one/status`, { ...cur, status: { ...cur.status, certificate: b64(alice.cert) } }, { headers: as('carol') });
    expectStatus(nobody, 403, 'Forbidden', 'certificatesigningrequests.certificates.k8s.io "one" is forbidden: user not permitted to sign requests with signerName "example.com/signer"');
    const issued = await env.plinth.client.put(`${CSR}/one/status`, { ...cur, status: { ...cur.status, certificate: b64(alice.cert) } });
    expectCode(issued, 200);
    assert.equal(Buffer.from(issued.body.status.certificate, 'base64').toString(), alice.cert);
    const again = await env.plinth.client.put(`${CSR}/one/status`, { ...issued.body, status: { ...issued.body.status, certificate: b64(makeRequest('/CN=x').cert) } });
    expectStatus(again, 422, 'Invalid', /updates may not modify existing certificate content/);
  });

  it("print kube's columns and select by spec.signerName", async () => {
    const out = (await kubectl('get', 'csr', 'one')).trimEnd().split('\n');
    assert.match(out[0]!, /^NAME\s+AGE\s+SIGNERNAME\s+REQUESTOR\s+REQUESTEDDURATION\s+CONDITION$/);
    assert.match(out[1]!, /^one\s+\d+s\s+example\.com\/signer\s+bob\s+<none>\s+Approved,Issued$/);
    const sel = await env.plinth.client.get(`${CSR}?fieldSelector=spec.signerName%3Dexample.com%2Fsigner`);
    expectCode(sel, 200);
    assert.deepEqual(sel.body.items.map((i: { metadata: { name: string } }) => i.metadata.name).sort(), ['masters-other', 'one']);
    const pb = await env.plinth.client.get(`${CSR}/one`, { headers: { accept: 'application/vnd.kubernetes.protobuf' } });
    expectCode(pb, 200);
    const decoded = decodeProtobuf(pb.raw) as { kind: string; spec: { signerName: string; username: string } };
    assert.equal(decoded.kind, 'CertificateSigningRequest');
    assert.equal(decoded.spec.username, 'bob');
  });

  it('are approved and denied with kubectl certificate', async () => {
    expectCode(await env.plinth.client.post(CSR, request('by-kubectl', { expirationSeconds: 3600 })), 201);
    expectCode(await env.plinth.client.post(CSR, request('to-deny')), 201);
    assert.match(await kubectl('certificate', 'approve', 'by-kubectl'), /certificatesigningrequest.certificates.k8s.io\/by-kubectl approved/);
    assert.match(await kubectl('certificate', 'deny', 'to-deny'), /certificatesigningrequest.certificates.k8s.io\/to-deny denied/);
    const out = await kubectl('get', 'csr', 'by-kubectl', 'to-deny');
    assert.match(out, /\nby-kubectl\s+\d+s\s+example\.com\/signer\s+plinth-admin\s+60m\s+Approved\n/);
    assert.match(out, /\nto-deny\s+\d+s\s+example\.com\/signer\s+plinth-admin\s+<none>\s+Denied\n?/);
    const approved = (await env.plinth.client.get(`${CSR}/by-kubectl`)).body;
    assert.equal(approved.status.conditions[0].reason, 'KubectlApprove');
  });
});
