/**
 * The chart's default values rendered (`helm template`, nothing set): the generated serving
 * certificate and CA for the Service's names, the bundled 3-member etcd with TLS between members and
 * for plinth from a generated member certificate, and the admin credential in a Secret.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { FULLNAME, NS, arg, argsOf, get, render, secretData, type Obj } from './helm.js';

test('defaults, nothing set: a generated serving certificate for the Service\'s names, the bundled 3-member etcd with a generated member certificate, plinth presenting it', async () => {
  const objs = await render('defaults');
  const deploy = get(objs, 'Deployment', FULLNAME);
  const spec = deploy.spec.template.spec;
  const args = argsOf(objs);

  // plinth's serving certificate: signed by the CA in ca.crt, for the names clients use.
  const serving = get(objs, 'Secret', `${FULLNAME}-tls`);
  assert.equal(serving.type, 'kubernetes.io/tls');
  assert.equal(serving.metadata.annotations['helm.sh/resource-policy'], 'keep');
  const ca = new X509Certificate(secretData(objs, `${FULLNAME}-tls`, 'ca.crt'));
  const cert = new X509Certificate(secretData(objs, `${FULLNAME}-tls`, 'tls.crt'));
  assert.ok(ca.ca && cert.verify(ca.publicKey) && cert.checkIssued(ca), 'tls.crt is signed by ca.crt');
  assert.ok(cert.checkPrivateKey(createPrivateKey(secretData(objs, `${FULLNAME}-tls`, 'tls.key'))), 'tls.key matches tls.crt');
  for (const name of [FULLNAME, `${FULLNAME}.${NS}`, `${FULLNAME}.${NS}.svc`, `${FULLNAME}.${NS}.svc.cluster.local`]) {
    assert.equal(cert.checkHost(name), name, `the serving certificate covers ${name}`);
  }
  assert.equal(cert.checkHost('other.example.com'), undefined);
  assert.equal(spec.volumes.find((v: Obj) => v.name === 'tls').secret.secretName, `${FULLNAME}-tls`);
  const extra = await render('defaults', ['--set', 'tls.generated.extraDnsNames={plinth.example.com}', '--set', 'tls.generated.ipAddresses={10.0.0.7}']);
  const extraCert = new X509Certificate(secretData(extra, `${FULLNAME}-tls`, 'tls.crt'));
  assert.equal(extraCert.checkHost('plinth.example.com'), 'plinth.example.com');
  assert.equal(extraCert.checkIP('10.0.0.7'), '10.0.0.7');

  // The bundled etcd, https for peers and clients with client certificates, on by default.
  const sts = get(objs, 'StatefulSet', `${FULLNAME}-etcd`);
  assert.equal(sts.spec.replicas, 3);
  const etcdArgs = sts.spec.template.spec.containers[0].args as string[];
  for (const flag of ['--listen-client-urls', '--advertise-client-urls', '--listen-peer-urls', '--initial-advertise-peer-urls']) {
    assert.match(arg(etcdArgs, flag)!, /^https:\/\//, flag);
  }
  assert.deepEqual(
    ['--cert-file', '--key-file', '--trusted-ca-file', '--client-cert-auth', '--peer-cert-file', '--peer-key-file', '--peer-trusted-ca-file', '--peer-client-cert-auth'].map((f) => arg(etcdArgs, f)),
    ['/etc/etcd/tls/tls.crt', '/etc/etcd/tls/tls.key', '/etc/etcd/tls/ca.crt', 'true', '/etc/etcd/tls/tls.crt', '/etc/etcd/tls/tls.key', '/etc/etcd/tls/ca.crt', 'true'],
  );
  const etcdCa = new X509Certificate(secretData(objs, `${FULLNAME}-etcd-tls`, 'ca.crt'));
  const etcdCert = new X509Certificate(secretData(objs, `${FULLNAME}-etcd-tls`, 'tls.crt'));
  assert.ok(etcdCert.checkIssued(etcdCa) && etcdCert.verify(etcdCa.publicKey));
  assert.notEqual(etcdCa.fingerprint256, ca.fingerprint256, 'the etcd CA is not the serving CA: a member certificate is no plinth certificate');
  // Every member's name (peers and plinth dial these), serverAuth and clientAuth (members are both).
  for (const i of [0, 1, 2]) {
    const host = `${FULLNAME}-etcd-${i}.${FULLNAME}-etcd-headless.${NS}.svc.cluster.local`;
    assert.ok(etcdCert.checkHost(host), `the member certificate covers ${host}`);
  }
  assert.deepEqual(etcdCert.keyUsage?.sort(), ['1.3.6.1.5.5.7.3.1', '1.3.6.1.5.5.7.3.2']);
  assert.equal(arg(args, '--etcd-servers'), [0, 1, 2].map((i) => `https://${FULLNAME}-etcd-${i}.${FULLNAME}-etcd-headless.${NS}.svc.cluster.local:2379`).join(','));
  assert.deepEqual([arg(args, '--etcd-cafile'), arg(args, '--etcd-certfile'), arg(args, '--etcd-keyfile')], ['/etc/plinth/etcd/ca.crt', '/etc/plinth/etcd/tls.crt', '/etc/plinth/etcd/tls.key']);
  assert.equal(spec.volumes.find((v: Obj) => v.name === 'etcd-client').secret.secretName, `${FULLNAME}-etcd-tls`);

  // The admin credential in a Secret, and NOTES say how to read it and the CA.
  assert.equal(secretData(objs, `${FULLNAME}-admin-token`, 'token').length, 48);
  assert.equal(spec.volumes.find((v: Obj) => v.name === 'admin-token').secret.secretName, `${FULLNAME}-admin-token`);
});
