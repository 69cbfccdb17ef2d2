/**
 * The PodSecurity admission plugin on a real server (Pod Security Admission 1.24): enforce
 * refusals with PSA's messages, warnings kubectl prints, audit annotations in the audit log,
 * defaults and exemptions from --admission-control-config-file, version pinning, namespace label
 * validation and the warnings of a tightened enforce level, workloads warned but not refused.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { eventually, kubectlPath, tempDir, usePlinth } from './harness.js';
import { expectCode, expectStatus } from './assertions.js';

const dir = tempDir('plinth-psa-');
const logPath = join(dir, 'audit.log');
writeFileSync(join(dir, 'policy.yaml'), 'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n  - level: Metadata\n');
writeFileSync(
  join(dir, 'admission.yaml'),
  [
    'apiVersion: apiserver.config.k8s.io/v1',
    'kind: AdmissionConfiguration',
    'plugins:',
    '  - name: PodSecurity',
    '    configuration:',
    '      apiVersion: pod-security.admission.config.k8s.io/v1beta1',
    '      kind: PodSecurityConfiguration',
    '      defaults:',
    '        audit: baseline',
    '      exemptions:',
    '        usernames: [psa-exempt-user]',
    '        namespaces: [psa-exempt]',
    '        runtimeClasses: [exempt-rc]',
  ].join('\n'),
);
const env = usePlinth([
  '--allow-privileged=true',
  `--admission-control-config-file=${join(dir, 'admission.yaml')}`,
  `--audit-policy-file=${join(dir, 'policy.yaml')}`,
  `--audit-log-path=${logPath}`,
]);

type Json = Record<string, unknown>;
const ENFORCE = 'pod-security.kubernetes.io/enforce';

const pod = (name: string, spec: Json = {}, container: Json = {}): Json => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name },
  spec: { containers: [{ name: 'c', image: 'nginx', ...container }], ...spec },
});
const privileged = { securityContext: { privileged: true } };
/** A container the restricted profile allows (with a pod-level seccomp profile). */
const restrictedOk = { securityContext: { allowPrivilegeEscalation: false, runAsNonRoot: true, capabilities: { drop: ['ALL'] } } };
const seccompOk = { securityContext: { seccompProfile: { type: 'RuntimeDefault' } } };

const RESTRICTED_PLAIN_POD =
  'allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false), ' +
  'unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"]), ' +
  'runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true), ' +
  'seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")';

async function namespace(name: string, labels: Record<string, string>): Promise<void> {
  expectCode(await env.plinth.client.post('/api/v1/namespaces', { metadata: { name, labels } }), 201);
}
const podsOf = (ns: string): string => `/api/v1/namespaces/${ns}/pods`;
const MERGE = 'application/merge-patch+json';
const patch = (path: string, body: unknown, type = MERGE) => env.plinth.client.request('PATCH', path, { body, headers: { 'content-type': type } });

/** kubectl, asynchronously (the server runs in this process), with its stderr. */
function kubectl(...args: string[]): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(kubectlPath(), ['--kubeconfig', env.plinth.server.kubeconfigPath, ...args], { encoding: 'utf8', timeout: 60_000 }, (err, stdout, stderr) =>
      err ? reject(new Error(`kubectl ${args.join(' ')}: ${stderr}`)) : resolve({ stdout, stderr }),
    );
  });
}

/** The audit event (ResponseComplete) of the create of `name` in `ns`. */
async function auditEventOf(ns: string, name: string, resource = 'pods'): Promise<Json> {
  return eventually(async () => {
    const evs = readFileSync(logPath, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Json);
    return evs.find((e) => {
      const ref = e['objectRef'] as Json | undefined;
      return e['stage'] === 'ResponseComplete' && e['verb'] === 'create' && ref?.['resource'] === resource && ref['namespace'] === ns && ref['name'] === name;
    });
  }, 10_000, `audit event of pod ${ns}/${name}`);
}

describe('PodSecurity admission', () => {
  it('enforce refuses with 403 and PSA’s message, for restricted and baseline', async () => {
    await namespace('psa-restricted', { [ENFORCE]: 'restricted' });
    const r = await env.plinth.client.post(podsOf('psa-restricted'), pod('p'));
    expectStatus(r, 403, 'Forbidden', `pods "p" is forbidden: violates PodSecurity "restricted:latest": ${RESTRICTED_PLAIN_POD}`);
    assert.deepEqual(r.body.details, { name: 'p', kind: 'pods' });
    expectCode(await env.plinth.client.post(podsOf('psa-restricted'), pod('ok', seccompOk, restrictedOk)), 201);

    await namespace('psa-baseline', { [ENFORCE]: 'baseline' });
    expectStatus(
      await env.plinth.client.post(podsOf('psa-baseline'), pod('p', { hostNetwork: true, hostPID: true }, privileged)),
      403,
      'Forbidden',
      'pods "p" is forbidden: violates PodSecurity "baseline:latest": host namespaces (hostNetwork=true, hostPID=true), privileged (container "c" must not set securityContext.privileged=true)',
    );
    // Baseline leaves what only restricted forbids alone.
    expectCode(await env.plinth.client.post(podsOf('psa-baseline'), pod('plain')), 201);
  });

  it('warn: kubectl prints PSA’s warning, and the pod is created', async () => {
    await namespace('psa-warn', { 'pod-security.kubernetes.io/warn': 'restricted' });
    const out = await kubectl('run', 'w', '--image=nginx', '-n', 'psa-warn');
    assert.match(out.stdout, /pod\/w created/);
    assert.equal(out.stderr.trim(), `Warning: would violate PodSecurity "restricted:latest": ${RESTRICTED_PLAIN_POD.replaceAll('container "c"', 'container "w"')}`);
  });

  it('audit: the audit event carries audit-violations and enforce-policy; the configured default audit level applies', async () => {
    await namespace('psa-audit', { 'pod-security.kubernetes.io/audit': 'restricted', 'pod-security.kubernetes.io/audit-version': 'v1.23' });
    expectCode(await env.plinth.client.post(podsOf('psa-audit'), pod('a')), 201);
    const ev = await auditEventOf('psa-audit', 'a');
    const ann = ev['annotations'] as Record<string, string>;
    assert.equal(ann['pod-security.kubernetes.io/audit-violations'], `would violate PodSecurity "restricted:v1.23": ${RESTRICTED_PLAIN_POD}`);
    assert.equal(ann['pod-security.kubernetes.io/enforce-policy'], 'privileged:latest');
    // No labels: the configuration's defaults (audit baseline).
    await namespace('psa-default', {});
    expectCode(await env.plinth.client.post(podsOf('psa-default'), pod('priv', {}, privileged)), 201);
    const def = (await auditEventOf('psa-default', 'priv'))['annotations'] as Record<string, string>;
    assert.equal(def['pod-security.kubernetes.io/audit-violations'], 'would violate PodSecurity "baseline:latest": privileged (container "c" must not set securityContext.privileged=true)');
  });

  it('exemptions from the configuration: namespace, user and runtime class, with the exempt audit annotation', async () => {
    await namespace('psa-exempt', { [ENFORCE]: 'restricted' });
    expectCode(await env.plinth.client.post(podsOf('psa-exempt'), pod('x', {}, privileged)), 201);
    assert.equal(((await auditEventOf('psa-exempt', 'x'))['annotations'] as Json)['pod-security.kubernetes.io/exempt'], 'namespace');

    const asExempt = { headers: { 'Impersonate-User': 'psa-exempt-user', 'Impersonate-Group': 'system:masters' } };
    expectCode(await env.plinth.client.post(podsOf('psa-restricted'), pod('by-user', {}, privileged), asExempt), 201);
    assert.equal(((await auditEventOf('psa-restricted', 'by-user'))['annotations'] as Json)['pod-security.kubernetes.io/exempt'], 'user');

    expectCode(await env.plinth.client.post('/apis/node.k8s.io/v1/runtimeclasses', { metadata: { name: 'exempt-rc' }, handler: 'runc' }), 201);
    await eventually(async () => (await env.plinth.client.post(podsOf('psa-restricted'), pod('by-rc', { runtimeClassName: 'exempt-rc' }, privileged))).status === 201 || undefined);
    assert.equal(((await auditEventOf('psa-restricted', 'by-rc'))['annotations'] as Json)['pod-security.kubernetes.io/exempt'], 'runtimeClass');
  });

  it('version pinning: the checks of the pinned version apply', async () => {
    // Without seccomp and capabilities: allowed by restricted v1.18, seccomp required from v1.19,
    // dropping ALL capabilities from v1.22.
    const p = (name: string): Json => pod(name, {}, { securityContext: { allowPrivilegeEscalation: false, runAsNonRoot: true } });
    await namespace('psa-v118', { [ENFORCE]: 'restricted', 'pod-security.kubernetes.io/enforce-version': 'v1.18' });
    expectCode(await env.plinth.client.post(podsOf('psa-v118'), p('a')), 201);
    await namespace('psa-v121', { [ENFORCE]: 'restricted', 'pod-security.kubernetes.io/enforce-version': 'v1.21' });
    expectStatus(await env.plinth.client.post(podsOf('psa-v121'), p('a')), 403, 'Forbidden',
      'pods "a" is forbidden: violates PodSecurity "restricted:v1.21": seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")');
    await namespace('psa-v124', { [ENFORCE]: 'restricted', 'pod-security.kubernetes.io/enforce-version': 'v1.24' });
    expectStatus(await env.plinth.client.post(podsOf('psa-v124'), p('a')), 403, 'Forbidden',
      'pods "a" is forbidden: violates PodSecurity "restricted:v1.24": unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"]), seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")');
  });

  it('namespace labels: an invalid level or version is 422 on create and update', async () => {
    expectStatus(await env.plinth.client.post('/api/v1/namespaces', { metadata: { name: 'psa-bad', labels: { [ENFORCE]: 'strict' } } }), 422, 'Invalid',
      'Namespace "psa-bad" is invalid: metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "strict": must be one of privileged, baseline, restricted');
    const bad = await env.plinth.client.post('/api/v1/namespaces', { metadata: { name: 'psa-bad', labels: { 'pod-security.kubernetes.io/warn-version': '1.24', 'pod-security.kubernetes.io/audit': 'x' } } });
    expectStatus(bad, 422, 'Invalid',
      'Namespace "psa-bad" is invalid: [metadata.labels[pod-security.kubernetes.io/audit]: Invalid value: "x": must be one of privileged, baseline, restricted, metadata.labels[pod-security.kubernetes.io/warn-version]: Invalid value: "1.24": must be "latest" or "v1.x"]');
    assert.deepEqual(bad.body.details.causes.map((c: Json) => c['field']), ['metadata.labels[pod-security.kubernetes.io/audit]', 'metadata.labels[pod-security.kubernetes.io/warn-version]']);
    await namespace('psa-upd', {});
    const upd = await patch('/api/v1/namespaces/psa-upd', { metadata: { labels: { 'pod-security.kubernetes.io/enforce-version': 'v1.024' } } });
    expectStatus(upd, 422, 'Invalid', 'Namespace "psa-upd" is invalid: metadata.labels[pod-security.kubernetes.io/enforce-version]: Invalid value: "v1.024": must be "latest" or "v1.x"');
  });

  it('a stricter enforce label warns about the existing pods it would refuse', async () => {
    await namespace('psa-tighten', {});
    expectCode(await env.plinth.client.post(podsOf('psa-tighten'), pod('p1', {}, privileged)), 201);
    expectCode(await env.plinth.client.post(podsOf('psa-tighten'), pod('p0', {}, privileged)), 201);
    expectCode(await env.plinth.client.post(podsOf('psa-tighten'), pod('fine')), 201);
    await eventually(async () => ((await env.plinth.client.get(`${podsOf('psa-tighten')}?resourceVersion=0`)).body.items.length === 3) || undefined);
    const out = await kubectl('label', 'ns', 'psa-tighten', `${ENFORCE}=baseline`);
    assert.match(out.stdout, /namespace\/psa-tighten labeled/);
    assert.equal(
      out.stderr.trim(),
      ['Warning: existing pods in namespace "psa-tighten" violate the new PodSecurity enforce level "baseline:latest"', 'Warning: p0 (and 1 other pod): privileged'].join('\n'),
    );
    // Loosening warns about nothing.
    assert.equal((await kubectl('label', '--overwrite', 'ns', 'psa-tighten', `${ENFORCE}=privileged`)).stderr, '');
  });

  it('updates: only what PSA checks is evaluated again', async () => {
    await namespace('psa-updates', {});
    expectCode(await env.plinth.client.post(podsOf('psa-updates'), pod('p', {}, privileged)), 201);
    await kubectl('label', 'ns', 'psa-updates', `${ENFORCE}=baseline`);
    // The plugin reads namespaces as kube's does, through the watch cache (kube: an informer).
    await eventually(async () => (await env.plinth.client.get('/api/v1/namespaces/psa-updates?resourceVersion=0')).body.metadata.labels?.[ENFORCE] === 'baseline' || undefined);
    // A label change is not significant: allowed although the pod violates baseline.
    expectCode(await patch(`${podsOf('psa-updates')}/p`, { metadata: { labels: { a: 'b' } } }), 200);
    // A new image is: refused.
    expectStatus(await patch(`${podsOf('psa-updates')}/p`, { spec: { containers: [{ name: 'c', image: 'nginx:2' }] } }, 'application/strategic-merge-patch+json'), 403, 'Forbidden',
      'pods "p" is forbidden: violates PodSecurity "baseline:latest": privileged (container "c" must not set securityContext.privileged=true)');
    // pods/status is not checked; pods/ephemeralcontainers is, with the pod's resource name.
    const cur = (await env.plinth.client.get(`${podsOf('psa-updates')}/p`)).body;
    expectCode(await env.plinth.client.put(`${podsOf('psa-updates')}/p/status`, { ...cur, status: { ...cur.status, phase: 'Running' } }), 200);
    await namespace('psa-ephemeral', { [ENFORCE]: 'baseline' });
    expectCode(await env.plinth.client.post(podsOf('psa-ephemeral'), pod('e')), 201);
    const e = (await env.plinth.client.get(`${podsOf('psa-ephemeral')}/e/ephemeralcontainers`)).body;
    e.spec.ephemeralContainers = [{ name: 'dbg', image: 'busybox', securityContext: { capabilities: { add: ['SYS_PTRACE'] } } }];
    expectStatus(await env.plinth.client.put(`${podsOf('psa-ephemeral')}/e/ephemeralcontainers`, e), 403, 'Forbidden',
      'pods "e" is forbidden: violates PodSecurity "baseline:latest": non-default capabilities (container "dbg" must not include "SYS_PTRACE" in securityContext.capabilities.add)');
    e.spec.ephemeralContainers = [{ name: 'dbg', image: 'busybox' }];
    expectCode(await env.plinth.client.put(`${podsOf('psa-ephemeral')}/e/ephemeralcontainers`, e), 200);
  });

  it('workloads: a Deployment is warned about and audited, never refused', async () => {
    await namespace('psa-workloads', { [ENFORCE]: 'restricted', 'pod-security.kubernetes.io/warn': 'baseline' });
    const deployment = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'd' },
      spec: { selector: { matchLabels: { app: 'd' } }, template: { metadata: { labels: { app: 'd' } }, spec: { containers: [{ name: 'c', image: 'nginx', securityContext: { capabilities: { add: ['SYS_ADMIN'] } } }] } } },
    };
    const r = await env.plinth.client.post('/apis/apps/v1/namespaces/psa-workloads/deployments', deployment);
    expectCode(r, 201);
    assert.equal(r.headers['warning'], '299 - "would violate PodSecurity \\"baseline:latest\\": non-default capabilities (container \\"c\\" must not include \\"SYS_ADMIN\\" in securityContext.capabilities.add)"');
    // Audited at the configured default level; never refused, so no enforce policy is recorded.
    const ann = (await auditEventOf('psa-workloads', 'd', 'deployments'))['annotations'] as Record<string, string>;
    assert.equal(ann['pod-security.kubernetes.io/audit-violations'], 'would violate PodSecurity "baseline:latest": non-default capabilities (container "c" must not include "SYS_ADMIN" in securityContext.capabilities.add)');
    assert.equal(ann['pod-security.kubernetes.io/enforce-policy'], undefined);
  });

  it('counts evaluations, exemptions and errors as PSA’s metrics', async () => {
    const text = (await env.plinth.client.get('/metrics')).raw.toString();
    const value = (series: string): number => Number(new RegExp(`^${series.replace(/[{}"]/g, (c) => `\\${c}`)} (\\S+)$`, 'm').exec(text)?.[1] ?? 0);
    assert.match(text, /# HELP pod_security_evaluations_total \[ALPHA\] Number of policy evaluations that occurred, not counting ignored or exempt requests\./);
    // The restricted and baseline refusals of the first test at least, and the pinned v1.21 one.
    assert.ok(value('pod_security_evaluations_total{decision="deny",policy_level="restricted",policy_version="latest",mode="enforce",request_operation="create",resource="pod",subresource=""}') >= 1);
    assert.ok(value('pod_security_evaluations_total{decision="deny",policy_level="restricted",policy_version="v1.21",mode="enforce",request_operation="create",resource="pod",subresource=""}') >= 1);
    assert.ok(value('pod_security_evaluations_total{decision="deny",policy_level="baseline",policy_version="latest",mode="warn",request_operation="create",resource="controller",subresource=""}') >= 1);
    assert.ok(value('pod_security_exemptions_total{request_operation="create",resource="pod",subresource=""}') >= 3);
  });
});
