import { test } from 'node:test';
import assert from 'node:assert/strict';
import { evaluatePod, forbiddenDetail, forbiddenReason, MAX_VERSION } from './evaluator.js';
import { LATEST, parseVersion, policyToEvaluate, type Level, type Version } from './api.js';
import * as b from './checks-baseline.js';
import * as r from './checks-restricted.js';
import type { PodView } from './pod.js';

type Json = Record<string, unknown>;
const view = (spec: Json, annotations: Record<string, string> = {}): PodView => ({ spec, annotations });
const failure = (res: { allowed: boolean; reason?: string; detail?: string }) => ({ reason: res.reason, detail: res.detail });
const evaluate = (level: Level, version: Version, pod: PodView): string => forbiddenDetail(evaluatePod({ level, version }, pod));

// The cases are PSA 1.24's own unit cases (policy/check_*_test.go), with its expected texts.
test('baseline checks word their failures as PSA', () => {
  assert.deepEqual(
    failure(b.capabilitiesBaseline_1_0(view({ containers: [
      { name: 'a', securityContext: { capabilities: { add: ['FOO', 'BAR'] } } },
      { name: 'b', securityContext: { capabilities: { add: ['BAR', 'BAZ'] } } },
    ] }))),
    { reason: 'non-default capabilities', detail: 'containers "a", "b" must not include "BAR", "BAZ", "FOO" in securityContext.capabilities.add' },
  );
  assert.deepEqual(
    failure(b.appArmorProfile_1_0(view({}, {
      'container.apparmor.security.beta.kubernetes.io/': 'bogus',
      'container.apparmor.security.beta.kubernetes.io/a': '',
      'container.apparmor.security.beta.kubernetes.io/b': 'runtime/default',
      'container.apparmor.security.beta.kubernetes.io/c': 'localhost/',
      'container.apparmor.security.beta.kubernetes.io/e': 'unconfined',
      'container.apparmor.security.beta.kubernetes.io/f': 'unknown',
    }))),
    {
      reason: 'forbidden AppArmor profiles',
      detail: 'container.apparmor.security.beta.kubernetes.io/="bogus", container.apparmor.security.beta.kubernetes.io/e="unconfined", container.apparmor.security.beta.kubernetes.io/f="unknown"',
    },
  );
  assert.deepEqual(failure(b.hostNamespaces_1_0(view({ hostNetwork: true, hostPID: true, hostIPC: true }))), { reason: 'host namespaces', detail: 'hostNetwork=true, hostPID=true, hostIPC=true' });
  assert.deepEqual(failure(b.hostPathVolumes_1_0(view({ volumes: [{ name: 'a', hostPath: {} }, { name: 'b', emptyDir: {} }, { name: 'c', hostPath: {} }] }))), { reason: 'hostPath volumes', detail: 'volumes "a", "c"' });
  assert.deepEqual(
    failure(b.hostPorts_1_0(view({ containers: [{ name: 'a', ports: [{ hostPort: 10 }, { hostPort: 20 }] }, { name: 'b', ports: [{ hostPort: 0 }, { hostPort: 30 }] }] }))),
    { reason: 'hostPort', detail: 'containers "a", "b" use hostPorts 10, 20, 30' },
  );
  assert.deepEqual(
    failure(b.procMount_1_0(view({ containers: [{ name: 'a', securityContext: { procMount: 'Default' } }, { name: 'b', securityContext: { procMount: 'Unmasked' } }, { name: 'c', securityContext: { procMount: 'other' } }] }))),
    { reason: 'procMount', detail: 'containers "b", "c" must not set securityContext.procMount to "Unmasked", "other"' },
  );
  assert.deepEqual(
    failure(b.seLinuxOptions_1_0(view({
      securityContext: { seLinuxOptions: { type: 'foo', user: 'u' } },
      containers: [{ name: 'a', securityContext: { seLinuxOptions: { type: 'container_t' } } }, { name: 'b', securityContext: { seLinuxOptions: { type: 'bar', role: 'r' } } }],
    }))),
    { reason: 'seLinuxOptions', detail: 'pod and container "b" set forbidden securityContext.seLinuxOptions: types "bar", "foo"; user may not be set; role may not be set' },
  );
  // PSA 1.24 lists a user or role only next to a forbidden type.
  assert.deepEqual(failure(b.seLinuxOptions_1_0(view({ securityContext: { seLinuxOptions: { user: 'u' } } }))), { reason: 'seLinuxOptions', detail: 'pod set forbidden securityContext.seLinuxOptions: ' });
  assert.deepEqual(
    failure(b.seccompProfileBaseline_1_0(view({ containers: [{ name: 'a' }, { name: 'b' }] }, {
      'seccomp.security.alpha.kubernetes.io/pod': 'unconfined',
      'container.seccomp.security.alpha.kubernetes.io/a': 'docker/default',
      'container.seccomp.security.alpha.kubernetes.io/b': 'bogus',
    }))),
    { reason: 'seccompProfile', detail: 'forbidden annotations container.seccomp.security.alpha.kubernetes.io/b="bogus", seccomp.security.alpha.kubernetes.io/pod="unconfined"' },
  );
  assert.deepEqual(
    failure(b.seccompProfileBaseline_1_19(view({
      securityContext: { seccompProfile: { type: 'Unconfined' } },
      containers: [{ name: 'a' }, { name: 'c', securityContext: { seccompProfile: { type: 'Unconfined' } } }, { name: 'd', securityContext: { seccompProfile: { type: 'Unconfined' } } }, { name: 'e', securityContext: { seccompProfile: { type: 'RuntimeDefault' } } }],
    }))),
    { reason: 'seccompProfile', detail: 'pod and containers "c", "d" must not set securityContext.seccompProfile.type to "Unconfined"' },
  );
  assert.deepEqual(failure(b.sysctls_1_0(view({ securityContext: { sysctls: [{ name: 'a' }, { name: 'kernel.shm_rmid_forced' }, { name: 'b' }] } }))), { reason: 'forbidden sysctls', detail: 'a, b' });
  assert.deepEqual(
    failure(b.windowsHostProcess_1_0(view({
      securityContext: { windowsOptions: { hostProcess: true } },
      containers: [{ name: 'a' }, { name: 'd', securityContext: { windowsOptions: { hostProcess: false } } }, { name: 'e', securityContext: { windowsOptions: { hostProcess: true } } }, { name: 'f', securityContext: { windowsOptions: { hostProcess: true } } }],
    }))),
    { reason: 'hostProcess', detail: 'pod and containers "e", "f" must not set securityContext.windowsOptions.hostProcess=true' },
  );
  assert.deepEqual(failure(b.privileged_1_0(view({ initContainers: [{ name: 'i', securityContext: { privileged: true } }], containers: [{ name: 'a', securityContext: { privileged: false } }] }))), {
    reason: 'privileged',
    detail: 'container "i" must not set securityContext.privileged=true',
  });
});

test('restricted checks word their failures as PSA', () => {
  assert.deepEqual(
    failure(r.allowPrivilegeEscalation_1_8(view({ containers: [{ name: 'a' }, { name: 'b', securityContext: {} }, { name: 'c', securityContext: { allowPrivilegeEscalation: true } }, { name: 'd', securityContext: { allowPrivilegeEscalation: false } }] }))),
    { reason: 'allowPrivilegeEscalation != false', detail: 'containers "a", "b", "c" must set securityContext.allowPrivilegeEscalation=false' },
  );
  assert.deepEqual(
    failure(r.capabilitiesRestricted_1_22(view({ containers: [
      { name: 'a' },
      { name: 'b', securityContext: { capabilities: { drop: ['ALL'], add: ['NET_BIND_SERVICE', 'FOO'] } } },
      { name: 'c', securityContext: { capabilities: { add: ['BAR'] } } },
    ] }))),
    { reason: 'unrestricted capabilities', detail: 'containers "a", "c" must set securityContext.capabilities.drop=["ALL"]; containers "b", "c" must not include "BAR", "FOO" in securityContext.capabilities.add' },
  );
  assert.deepEqual(
    failure(r.restrictedVolumes_1_0(view({ volumes: [{ name: 'a', hostPath: {} }, { name: 'b', configMap: {} }, { name: 'c', nfs: {} }, { name: 'd', somethingNew: {} }] }))),
    { reason: 'restricted volume types', detail: 'volumes "a", "c", "d" use restricted volume types "hostPath", "nfs", "unknown"' },
  );
  assert.deepEqual(failure(r.restrictedVolumes_1_0(view({ volumes: [{ name: 'a', gitRepo: {} }] }))), { reason: 'restricted volume types', detail: 'volume "a" uses restricted volume type "gitRepo"' });
  assert.deepEqual(
    failure(r.runAsNonRoot_1_0(view({ securityContext: { runAsNonRoot: false }, containers: [{ name: 'a' }, { name: 'b', securityContext: { runAsNonRoot: false } }] }))),
    { reason: 'runAsNonRoot != true', detail: 'pod and container "b" must not set securityContext.runAsNonRoot=false' },
  );
  assert.deepEqual(failure(r.runAsNonRoot_1_0(view({ containers: [{ name: 'a' }, { name: 'b', securityContext: { runAsNonRoot: true } }] }))), {
    reason: 'runAsNonRoot != true',
    detail: 'pod or container "a" must set securityContext.runAsNonRoot=true',
  });
  assert.equal(r.runAsNonRoot_1_0(view({ securityContext: { runAsNonRoot: true }, containers: [{ name: 'a' }] })).allowed, true);
  assert.deepEqual(failure(r.runAsUser_1_23(view({ securityContext: { runAsUser: 0 }, containers: [{ name: 'a', securityContext: { runAsUser: 0 } }, { name: 'b', securityContext: { runAsUser: 1 } }] }))), {
    reason: 'runAsUser=0',
    detail: 'pod and container "a" must not set runAsUser=0',
  });
  assert.deepEqual(failure(r.seccompProfileRestricted_1_19(view({ containers: [{ name: 'a' }, { name: 'b', securityContext: {} }, { name: 'd', securityContext: { seccompProfile: { type: 'RuntimeDefault' } } }] }))), {
    reason: 'seccompProfile',
    detail: 'pod or containers "a", "b" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost"',
  });
  assert.deepEqual(failure(r.seccompProfileRestricted_1_19(view({ securityContext: { seccompProfile: { type: 'Unconfined' } }, containers: [{ name: 'a' }] }))), {
    reason: 'seccompProfile',
    detail: 'pod must not set securityContext.seccompProfile.type to "Unconfined"',
  });
});

const plain = view({ containers: [{ name: 'c', image: 'x' }] });

test('restricted runs baseline checks first, then its own, each in check-ID order', () => {
  const pod = view({ hostNetwork: true, volumes: [{ name: 'h', hostPath: {} }], containers: [{ name: 'c', securityContext: { privileged: true } }] });
  assert.equal(
    forbiddenReason(evaluatePod({ level: 'restricted', version: LATEST }, pod)),
    'host namespaces, privileged, allowPrivilegeEscalation != false, unrestricted capabilities, restricted volume types, runAsNonRoot != true, seccompProfile',
  );
  // Restricted volumes replaces the baseline hostPath check, so the volume is named once.
  assert.equal(forbiddenReason(evaluatePod({ level: 'baseline', version: LATEST }, pod)), 'host namespaces, hostPath volumes, privileged');
  assert.deepEqual(evaluatePod({ level: 'privileged', version: LATEST }, pod), []);
});

test('versions: each check applies from its version on; latest and future versions run the newest', () => {
  assert.equal(MAX_VERSION, 23);
  const reasons = (v: Version) => forbiddenReason(evaluatePod({ level: 'restricted', version: v }, plain));
  assert.equal(reasons(7), 'runAsNonRoot != true');
  assert.equal(reasons(8), 'allowPrivilegeEscalation != false, runAsNonRoot != true');
  assert.equal(reasons(19), 'allowPrivilegeEscalation != false, runAsNonRoot != true, seccompProfile');
  assert.equal(reasons(22), 'allowPrivilegeEscalation != false, unrestricted capabilities, runAsNonRoot != true, seccompProfile');
  assert.equal(reasons(LATEST), reasons(22));
  assert.equal(reasons(parseVersion('v1.99').version), reasons(22));
  // Before v1.22 restricted keeps the baseline capabilities check; before v1.19 the seccomp annotations.
  const caps = view({ containers: [{ name: 'c', securityContext: { allowPrivilegeEscalation: false, runAsNonRoot: true, capabilities: { add: ['SYS_ADMIN'] } } }] }, { 'seccomp.security.alpha.kubernetes.io/pod': 'unconfined' });
  assert.equal(evaluate('restricted', 18, caps), 'non-default capabilities (container "c" must not include "SYS_ADMIN" in securityContext.capabilities.add), seccompProfile (forbidden annotation seccomp.security.alpha.kubernetes.io/pod="unconfined")');
  assert.equal(evaluate('restricted', 23, caps),
    'unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"]; container "c" must not include "SYS_ADMIN" in securityContext.capabilities.add), seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")');
  const root = view({ securityContext: { runAsUser: 0, runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } }, containers: [{ name: 'c', securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } } }] });
  assert.equal(evaluate('restricted', 22, root), '');
  assert.equal(evaluate('restricted', 23, root), 'runAsUser=0 (pod must not set runAsUser=0)');
});

test('namespace labels: levels, versions and their errors as PSA parses them', () => {
  const defaults = { enforce: { level: 'privileged' as Level, version: LATEST }, audit: { level: 'privileged' as Level, version: LATEST }, warn: { level: 'privileged' as Level, version: LATEST } };
  const ok = policyToEvaluate({ 'pod-security.kubernetes.io/enforce': 'baseline', 'pod-security.kubernetes.io/enforce-version': 'v1.22' }, defaults);
  assert.deepEqual(ok.errors, []);
  assert.deepEqual(ok.policy.enforce, { level: 'baseline', version: 22 });
  const bad = policyToEvaluate({ 'pod-security.kubernetes.io/enforce': 'x', 'pod-security.kubernetes.io/warn': 'y', 'pod-security.kubernetes.io/audit-version': 'v1.01' }, defaults);
  // An invalid enforce level fails closed (restricted); warn and audit fail open (privileged).
  assert.equal(bad.policy.enforce.level, 'restricted');
  assert.equal(bad.policy.warn.level, 'privileged');
  assert.deepEqual(bad.errors.map((e) => e.field), [
    'metadata.labels[pod-security.kubernetes.io/enforce]',
    'metadata.labels[pod-security.kubernetes.io/audit-version]',
    'metadata.labels[pod-security.kubernetes.io/warn]',
  ]);
  for (const v of ['1.24', 'v2.0', 'v1.', 'v1.01', 'Latest']) assert.equal(parseVersion(v).error, 'must be "latest" or "v1.x"', v);
  assert.equal(parseVersion('v1.0').version, 0);
});
