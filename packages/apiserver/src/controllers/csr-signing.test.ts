/**
 * The signer's pure parts: certificates as kube's local signer makes them (verified with
 * node:crypto and openssl), its duration rule, and each kubernetes.io signer's checks with kube's
 * messages. A throw-away CA made with openssl.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseCertificateRequest, type ParsedCSR } from '@plinth/api';
import { loadCertificateAuthority } from './certificate-authority.js';
import { certificateDuration } from './csr-signing.js';
import { apiserverClientProblem, kubeletClientProblem, kubeletServingProblem } from './csr-rules.js';
import { loadSigners } from './csr-signers.js';
import { parseFlags } from '../flags.js';

const dir = mkdtempSync(join(tmpdir(), 'plinth-csr-signing-'));
const openssl = (...args: string[]): string => execFileSync('openssl', args, { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
openssl('ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', 'ca.key');
openssl('req', '-x509', '-new', '-key', 'ca.key', '-sha256', '-days', '2', '-subj', '/CN=test-ca', '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign', '-out', 'ca.crt');
openssl('genrsa', '-out', 'node.key', '2048');
const ca = loadCertificateAuthority(join(dir, 'ca.crt'), join(dir, 'ca.key'));
const caCert = new X509Certificate(openssl('x509', '-in', 'ca.crt'));
test.after(() => rmSync(dir, { recursive: true, force: true }));

function request(subject: string, san?: string): ParsedCSR {
  return parseCertificateRequest(openssl('req', '-new', '-key', 'node.key', '-subj', subject, ...(san ? ['-addext', `subjectAltName=${san}`] : [])));
}

test("a certificate as kube's local signer makes it", () => {
  const now = Date.now();
  const pem = ca.sign(request('/O=system:nodes/CN=system:node:n1', 'DNS:n1,IP:10.0.0.1'), { usages: ['digital signature', 'key encipherment', 'server auth'], ttlMs: 3_600_000, now });
  const cert = new X509Certificate(pem);
  assert.ok(cert.verify(caCert.publicKey));
  assert.equal(cert.issuer, 'CN=test-ca');
  assert.equal(cert.subject, 'O=system:nodes\nCN=system:node:n1');
  assert.equal(cert.subjectAltName, 'DNS:n1, IP Address:10.0.0.1');
  assert.equal(cert.ca, false);
  assert.deepEqual(cert.keyUsage, ['1.3.6.1.5.5.7.3.1']);
  assert.ok(cert.serialNumber.length <= 32);
  // Short-lived: the start is backdated 5 minutes, the end is not.
  assert.equal(Date.parse(cert.validFrom), Math.floor((now - 300_000) / 1000) * 1000);
  assert.equal(Date.parse(cert.validTo), Math.floor((now + 3_600_000) / 1000) * 1000);
  writeFileSync(join(dir, 'n1.crt'), pem);
  const text = openssl('x509', '-in', 'n1.crt', '-noout', '-text');
  assert.match(text, /Key Usage: critical\n\s+Digital Signature, Key Encipherment\n/);
  assert.match(text, /Basic Constraints: critical\n\s+CA:FALSE\n/);
  assert.match(openssl('verify', '-CAfile', 'ca.crt', 'n1.crt'), /n1.crt: OK/);
});

test("a long TTL is backdated with the start and capped by the CA's expiry", () => {
  const now = Date.now();
  const long = new X509Certificate(ca.sign(request('/CN=a'), { usages: ['client auth'], ttlMs: 10 * 3_600_000, now }));
  assert.equal(Date.parse(long.validTo), Math.floor((now - 300_000 + 10 * 3_600_000) / 1000) * 1000);
  const capped = new X509Certificate(ca.sign(request('/CN=a'), { usages: ['client auth'], ttlMs: 365 * 86_400_000, now }));
  assert.equal(capped.validTo, caCert.validTo);
});

test("the signer's refusals: unknown usages, an expired CA", () => {
  assert.throws(() => ca.sign(request('/CN=a'), { usages: ['client auth', 'bogus'], ttlMs: 3_600_000 }), { message: 'unrecognized usage values: ["bogus"]' });
  const expiry = new Date(ca.notAfter).toISOString().slice(0, 19).replace('T', ' ');
  assert.throws(() => ca.sign(request('/CN=a'), { usages: ['client auth'], ttlMs: 3_600_000, now: ca.notAfter + 3_600_000 }), { message: `the signer has expired: NotAfter=${expiry} +0000 UTC` });
  assert.throws(() => ca.sign(request('/CN=a'), { usages: ['client auth'], ttlMs: 3_600_000, now: ca.notAfter + 60_000 }), { message: `refusing to sign a certificate that expired in the past: NotAfter=${expiry} +0000 UTC` });
});

test("spec.expirationSeconds within [10m, --cluster-signing-duration] (kube's signer.duration)", () => {
  const max = 8760 * 3_600_000;
  assert.equal(certificateDuration(undefined, max), max);
  assert.equal(certificateDuration(600, max), 600_000);
  assert.equal(certificateDuration(3600, max), 3_600_000);
  assert.equal(certificateDuration(10 * 365 * 86_400, max), max);
  assert.equal(certificateDuration(60, 3_600_000), 600_000);
});

test("each signer's checks, with kube's messages", () => {
  const client = ['digital signature', 'key encipherment', 'client auth'];
  const serving = ['digital signature', 'key encipherment', 'server auth'];
  assert.equal(kubeletClientProblem(request('/O=system:nodes/CN=system:node:n1'), client), '');
  assert.equal(kubeletClientProblem(request('/O=system:nodes/CN=system:node:n1'), ['client auth', 'digital signature']), '');
  assert.equal(kubeletClientProblem(request('/O=system:nodes/O=extra/CN=system:node:n1'), client), 'subject organization is not system:nodes');
  assert.equal(kubeletClientProblem(request('/O=system:nodes/CN=system:node:n1', 'DNS:n1'), client), 'DNS subjectAltNames are not allowed');
  assert.equal(kubeletClientProblem(request('/O=system:nodes/CN=system:node:n1', 'email:a@b.c'), client), 'Email subjectAltNames are not allowed');
  assert.equal(kubeletClientProblem(request('/O=system:nodes/CN=system:node:n1', 'IP:10.0.0.1'), client), 'IP subjectAltNames are not allowed');
  assert.equal(kubeletClientProblem(request('/O=system:nodes/CN=system:node:n1', 'URI:spiffe://x'), client), 'URI subjectAltNames are not allowed');
  assert.equal(kubeletClientProblem(request('/O=system:nodes/CN=n1'), client), 'subject common name does not begin with system:node:');
  assert.equal(kubeletClientProblem(request('/O=system:nodes/CN=system:node:n1'), ['client auth']), 'usages did not match [client auth digital signature key encipherment]');

  assert.equal(kubeletServingProblem(request('/O=system:nodes/CN=system:node:n1', 'DNS:n1'), serving), '');
  assert.equal(kubeletServingProblem(request('/O=system:nodes/CN=system:node:n1', 'IP:10.0.0.1'), ['digital signature', 'server auth']), '');
  assert.equal(kubeletServingProblem(request('/O=system:nodes/CN=system:node:n1'), serving), 'DNS or IP subjectAltName is required');
  assert.equal(kubeletServingProblem(request('/O=system:nodes/CN=system:node:n1', 'DNS:n1,URI:spiffe://x'), serving), 'URI subjectAltNames are not allowed');
  assert.equal(kubeletServingProblem(request('/O=system:nodes/CN=system:node:n1', 'DNS:n1'), client), 'usages did not match [digital signature key encipherment server auth]');
  assert.equal(kubeletServingProblem(request('/O=system:nodes/CN=n1', 'DNS:n1'), serving), 'subject common name does not begin with system:node:');

  assert.equal(apiserverClientProblem(request('/CN=a'), ['client auth']), '');
  assert.equal(apiserverClientProblem(request('/CN=a'), ['digital signature']), 'missing required usage for client certificate: client auth');
  assert.equal(apiserverClientProblem(request('/CN=a'), ['client auth', 'server auth']), 'invalid usage for client certificate: server auth');
});

test('which signers sign: the default pair for all four, or each signer its own pair', () => {
  assert.equal(loadSigners(parseFlags([])).size, 0);
  const all = loadSigners(parseFlags([`--cluster-signing-cert-file=${join(dir, 'ca.crt')}`, `--cluster-signing-key-file=${join(dir, 'ca.key')}`]));
  assert.deepEqual([...all.keys()].sort(), ['kubernetes.io/kube-apiserver-client', 'kubernetes.io/kube-apiserver-client-kubelet', 'kubernetes.io/kubelet-serving', 'kubernetes.io/legacy-unknown']);
  const one = loadSigners(parseFlags([`--cluster-signing-kubelet-client-cert-file=${join(dir, 'ca.crt')}`, `--cluster-signing-kubelet-client-key-file=${join(dir, 'ca.key')}`]));
  assert.deepEqual([...one.keys()], ['kubernetes.io/kube-apiserver-client-kubelet']);
  assert.throws(
    () => loadSigners(parseFlags([`--cluster-signing-kubelet-serving-cert-file=${join(dir, 'missing.crt')}`, `--cluster-signing-kubelet-serving-key-file=${join(dir, 'ca.key')}`])),
    /^Error: --cluster-signing-kubelet-serving-\{cert,key\}-file: error reading CA cert file ".*missing\.crt": ENOENT/,
  );
});
