import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LATEST } from './api.js';
import { loadPodSecurityConfig } from './config.js';

const cfg = (body: Record<string, unknown>, apiVersion = 'pod-security.admission.config.k8s.io/v1beta1') => ({ apiVersion, kind: 'PodSecurityConfiguration', ...body });

test('no configuration: privileged:latest for every mode, no exemptions', () => {
  const c = loadPodSecurityConfig(undefined);
  for (const mode of ['enforce', 'audit', 'warn'] as const) assert.deepEqual(c.defaults[mode], { level: 'privileged', version: LATEST });
  assert.equal(c.exemptions.namespaces.size, 0);
});

test('v1alpha1 and v1beta1: defaults with versions, unset modes defaulted, exemptions read', () => {
  const c = loadPodSecurityConfig(cfg({ defaults: { enforce: 'baseline', 'enforce-version': 'v1.22', warn: 'restricted' }, exemptions: { usernames: ['u'], namespaces: ['kube-system'], runtimeClasses: ['rc.example'] } }, 'pod-security.admission.config.k8s.io/v1alpha1'));
  assert.deepEqual(c.defaults.enforce, { level: 'baseline', version: 22 });
  assert.deepEqual(c.defaults.warn, { level: 'restricted', version: LATEST });
  assert.deepEqual(c.defaults.audit, { level: 'privileged', version: LATEST });
  assert.ok(c.exemptions.usernames.has('u') && c.exemptions.namespaces.has('kube-system') && c.exemptions.runtimeClasses.has('rc.example'));
});

test('a bad configuration fails start-up with what kube says of it', () => {
  assert.throws(() => loadPodSecurityConfig({ apiVersion: 'pod-security.admission.config.k8s.io/v1', kind: 'PodSecurityConfiguration' }), /couldn't init admission plugin "PodSecurity": expected kind PodSecurityConfiguration/);
  assert.throws(
    () => loadPodSecurityConfig(cfg({ defaults: { enforce: 'strict', 'warn-version': '1.2' } })),
    { message: 'failed to initialize admission plugin "PodSecurity": PodSecurity configuration error: [enforce: must be one of privileged, baseline, restricted, warn-version: must be "latest" or "v1.x"]' },
  );
  assert.throws(
    () => loadPodSecurityConfig(cfg({ exemptions: { namespaces: ['ok', 'Bad_NS', 'ok'], usernames: [''] } })),
    {
      message:
        'failed to initialize admission plugin "PodSecurity": PodSecurity invalid: [exemptions.namespaces[1]: Invalid value: "Bad_NS": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or \'-\', and must start and end with an alphanumeric character (e.g. \'my-name\',  or \'123-abc\', regex used for validation is \'[a-z0-9]([-a-z0-9]*[a-z0-9])?\'), ' +
        'exemptions.namespaces[2]: Duplicate value: "ok", exemptions.usernames[0]: Invalid value: "": username must not be empty]',
    },
  );
});
