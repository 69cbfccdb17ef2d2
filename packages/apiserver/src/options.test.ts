import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseFlags, FlagError } from './flags.js';
import { completeOptions, priorityAndFairnessConflict } from './options.js';

test('methods whose flags are unset stay off; the issuer and audiences get kube defaults', () => {
  const { authentication: a } = completeOptions(parseFlags([]));
  assert.equal(a.oidc, undefined);
  assert.equal(a.webhook, undefined);
  assert.equal(a.clientCert, undefined);
  assert.equal(a.requestHeader, undefined);
  assert.deepEqual(a.serviceAccounts.issuers, ['https://kubernetes.default.svc.cluster.local']);
  assert.deepEqual(a.apiAudiences, ['https://kubernetes.default.svc.cluster.local']);
  const b = completeOptions(parseFlags(['--service-account-issuer=https://one', '--service-account-issuer=https://two'])).authentication;
  assert.deepEqual(b.apiAudiences, ['https://one']);
});

test('bad authentication flags fail start-up with every problem named', () => {
  const bad = (args: string[], re: RegExp): void => assert.throws(() => completeOptions(parseFlags(args)), (e) => e instanceof FlagError && re.test(e.message));
  bad(['--oidc-issuer-url=https://idp.example'], /oidc-issuer-url and oidc-client-id should be specified together/);
  bad(['--oidc-issuer-url=http://idp.example', '--oidc-client-id=c'], /must use https scheme/);
  bad(['--oidc-issuer-url=https://idp.example', '--oidc-client-id=c', '--oidc-signing-algs=HS256'], /unsupported signing alg "HS256"/);
  bad(['--authentication-token-webhook-config-file=w.yaml', '--authentication-token-webhook-version=v2'], /must be v1 or v1beta1/);
  bad(['--service-account-max-token-expiration=10m'], /at least 1h/);
  bad(['--service-account-issuer=https://a', '--service-account-issuer=https://a'], /duplicate/);
  bad(['--requestheader-username-headers=X-Remote-User'], /requires requestheader-client-ca-file/);
  // As kube: a proxy CA without username headers configures no proxy authenticator.
  assert.equal(completeOptions(parseFlags(['--requestheader-client-ca-file=ca.crt'])).authentication.requestHeader, undefined);
});

test('admission flags: kube 1.24 defaults plinth implements, in kube order; bad names fail with kube\'s messages', () => {
  assert.deepEqual(completeOptions(parseFlags([])).admissionPlugins, ['NamespaceLifecycle', 'LimitRanger', 'ServiceAccount', 'TaintNodesByCondition', 'PodSecurity', 'Priority', 'DefaultTolerationSeconds', 'DefaultStorageClass', 'StorageObjectInUseProtection', 'PersistentVolumeClaimResize', 'RuntimeClass', 'CertificateApproval', 'CertificateSigning', 'CertificateSubjectRestriction', 'DefaultIngressClass', 'MutatingAdmissionWebhook', 'ValidatingAdmissionWebhook', 'ResourceQuota']);
  const o = completeOptions(parseFlags(['--enable-admission-plugins=AlwaysDeny,NamespaceExists', '--disable-admission-plugins=ServiceAccount,LimitRanger']));
  assert.deepEqual(o.admissionPlugins, ['NamespaceLifecycle', 'NamespaceExists', 'TaintNodesByCondition', 'PodSecurity', 'Priority', 'DefaultTolerationSeconds', 'DefaultStorageClass', 'StorageObjectInUseProtection', 'PersistentVolumeClaimResize', 'RuntimeClass', 'CertificateApproval', 'CertificateSigning', 'CertificateSubjectRestriction', 'DefaultIngressClass', 'MutatingAdmissionWebhook', 'ValidatingAdmissionWebhook', 'ResourceQuota', 'AlwaysDeny']);
  assert.throws(
    () => completeOptions(parseFlags(['--enable-admission-plugins=Nope', '--oidc-issuer-url=https://idp.example'])),
    (e) => e instanceof FlagError && /plugin "Nope" is unknown/.test(e.message) && /oidc-client-id/.test(e.message),
  );
});

test('authorization flags: RBAC by default; bad combinations fail start-up naming the flags', () => {
  assert.deepEqual(completeOptions(parseFlags([])).authorization, { modes: ['RBAC'] });
  const w = completeOptions(parseFlags(['--authorization-mode=Webhook,RBAC', '--authorization-webhook-config-file=w.yaml', '--authorization-webhook-version=v1'])).authorization;
  assert.deepEqual(w, { modes: ['Webhook', 'RBAC'], webhook: { configFile: 'w.yaml', version: 'v1', authorizedTTLms: 300_000, unauthorizedTTLms: 30_000 } });
  const bad = (args: string[], re: RegExp): void => assert.throws(() => completeOptions(parseFlags(args)), (e) => e instanceof FlagError && re.test(e.message));
  bad(['--authorization-mode=RBAC,Magic'], /authorization-mode "Magic" is not a valid mode/);
  bad(['--authorization-mode=RBAC,RBAC'], /has mode specified more than once/);
  bad(['--authorization-mode=Webhook'], /authorization-mode Webhook's authorization config file not passed/);
  bad(['--authorization-webhook-config-file=w.yaml'], /cannot specify --authorization-webhook-config-file without mode Webhook/);
});

test('Service network options: kube 1.24 ranges, messages and the advertised address', () => {
  const d = completeOptions(parseFlags(['--bind-address=10.9.8.7'])).services;
  assert.equal(d.ranges.apiServerServiceIP, '10.0.0.1');
  assert.equal(d.nodePortRange, '30000-32767');
  assert.equal(d.advertiseAddress, '10.9.8.7', 'the bind address when it is neither unspecified nor loopback');
  assert.equal(completeOptions(parseFlags(['--advertise-address=192.168.7.7'])).services.advertiseAddress, '192.168.7.7');
  const bad = (args: string[]): string => {
    try {
      completeOptions(parseFlags(args));
    } catch (e) {
      return (e as Error).message;
    }
    return '';
  };
  assert.equal(bad(['--service-cluster-ip-range=10.0.0.0/8']), 'specified --service-cluster-ip-range is too large; for 32-bit addresses, the mask must be >= 12');
  assert.equal(bad(['--service-cluster-ip-range=10.0.0.0/24,10.1.0.0/24']), '--service-cluster-ip-range[0] and --service-cluster-ip-range[1] must be of different IP family');
  assert.equal(bad(['--service-cluster-ip-range=300.0.0.0/24']), 'service-cluster-ip-range[0] is not a valid cidr');
});

test("--runtime-config that turns off APF's flowcontrol versions conflicts with APF, as kube 1.24 checks it", () => {
  const conflict = (rc: Record<string, string>): string | undefined => priorityAndFairnessConflict(rc);
  assert.match(conflict({ 'api/all': 'false', v1: 'true' }) ?? '', /^--runtime-config=api\/all=false conflicts with --enable-priority-and-fairness=true and --feature-gates=APIPriorityAndFairness=true$/);
  assert.match(conflict({ 'api/beta': 'false' }) ?? '', /api\/beta=false conflicts/);
  // kube's precedence: the flowcontrol version first; one of them explicitly on settles it.
  assert.equal(conflict({ 'api/beta': 'false', 'flowcontrol.apiserver.k8s.io/v1beta2': 'true' }), undefined);
  assert.match(conflict({ 'flowcontrol.apiserver.k8s.io/v1beta1': 'false' }) ?? '', /v1beta1=false conflicts/);
  assert.equal(conflict({ 'batch/v1': 'false' }), undefined);
  const off = (args: string[]) => completeOptions(parseFlags(args));
  assert.throws(() => off(['--runtime-config=api/beta=false']), (e: unknown) => e instanceof FlagError && /conflicts with --enable-priority-and-fairness=true/.test(e.message));
  assert.doesNotThrow(() => off(['--runtime-config=api/beta=false', '--enable-priority-and-fairness=false']));
  assert.doesNotThrow(() => off(['--runtime-config=api/beta=false', '--feature-gates=APIPriorityAndFairness=false']));
});

test('an invalid PodSecurity configuration fails start-up while the plugin is enabled', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'psa-config-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'admission.yaml');
  writeFileSync(file, [
    'apiVersion: apiserver.config.k8s.io/v1',
    'kind: AdmissionConfiguration',
    'plugins:',
    '- name: PodSecurity',
    '  configuration: {apiVersion: pod-security.admission.config.k8s.io/v1beta1, kind: PodSecurityConfiguration, defaults: {enforce: strict}}',
  ].join('\n'));
  assert.throws(
    () => completeOptions(parseFlags([`--admission-control-config-file=${file}`])),
    (e) => e instanceof FlagError && e.message.includes('PodSecurity configuration error: enforce: must be one of privileged, baseline, restricted'),
  );
  // Disabled, its configuration is not read (kube initialises enabled plugins only).
  assert.doesNotThrow(() => completeOptions(parseFlags([`--admission-control-config-file=${file}`, '--disable-admission-plugins=PodSecurity'])));
});

test("--controllers: an unknown name fails start-up with kube's message", () => {
  assert.throws(() => completeOptions(parseFlags(['--controllers=*,-nope'])), (e) => e instanceof FlagError && e.message.includes('"nope" is not in the list of known controllers'));
  assert.doesNotThrow(() => completeOptions(parseFlags(['--controllers=*,-garbagecollector,-namespace'])));
});
