import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ResourceDefinition, StoredObject } from '@plinth/api';
import type { AdmissionAttributes } from '../interfaces.js';
import { operationOptions } from '../interfaces.js';
import { createPodSecurity, type PodSecurityDeps } from './admission.js';
import { loadPodSecurityConfig } from './config.js';

const ns = (name: string, labels: Record<string, string> = {}): StoredObject => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } }) as StoredObject;
const pod = (name: string, extra: Record<string, unknown> = {}, owner?: string): StoredObject =>
  ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'n', ...(owner ? { ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: owner, uid: owner, controller: true }] } : {}) },
    spec: { containers: [{ name: 'c', image: 'x', ...extra }] },
  }) as unknown as StoredObject;

const nsDef = { group: '', version: 'v1', plural: 'namespaces', kind: 'Namespace' } as ResourceDefinition;

/** A namespace update from `old` labels to `next`, collecting warnings. */
function nsUpdate(old: Record<string, string>, next: Record<string, string>): { attrs: AdmissionAttributes; warnings: string[] } {
  const warnings: string[] = [];
  const attrs: AdmissionAttributes = {
    operation: 'UPDATE',
    resource: nsDef,
    subresource: '',
    namespace: '',
    name: 'n',
    kind: { group: '', version: 'v1', kind: 'Namespace' },
    object: ns('n', next),
    oldObject: ns('n', old),
    options: operationOptions('UPDATE', {}),
    user: { name: 'admin', groups: [] },
    dryRun: false,
    warn: (m) => warnings.push(m),
  };
  return { attrs, warnings };
}

const deps = (pods: StoredObject[], extra: Partial<PodSecurityDeps> = {}): PodSecurityDeps => ({
  config: loadPodSecurityConfig(undefined),
  getNamespace: async (name) => ns(name),
  listPods: async () => pods,
  ...extra,
});

const privileged = { securityContext: { privileged: true } };

test('a tightened enforce level names the existing pods it would refuse: one per controller first, counted per reason', async () => {
  const pods = [pod('b', privileged), pod('a', privileged), pod('c', privileged), pod('r1', { ports: [{ containerPort: 80, hostPort: 80 }] }, 'rs'), pod('r2', {}, 'rs'), pod('ok')];
  const { attrs, warnings } = nsUpdate({}, { 'pod-security.kubernetes.io/enforce': 'baseline' });
  await createPodSecurity(deps(pods)).validate!(attrs);
  assert.deepEqual(warnings, [
    'existing pods in namespace "n" violate the new PodSecurity enforce level "baseline:latest"',
    'a (and 2 other pods): privileged',
    'r1: hostPort',
  ]);
});

test('loosening, or the same level, warns about nothing; the pod check stops at its time limit', async () => {
  const pods = [pod('a', privileged), pod('b', privileged), pod('c', privileged)];
  const looser = nsUpdate({ 'pod-security.kubernetes.io/enforce': 'restricted' }, { 'pod-security.kubernetes.io/enforce': 'baseline' });
  await createPodSecurity(deps(pods)).validate!(looser.attrs);
  assert.deepEqual(looser.warnings, []);
  // A clock that jumps past PSA's 1 s limit after the first pod.
  let t = 0;
  const slow = nsUpdate({}, { 'pod-security.kubernetes.io/enforce': 'baseline' });
  await createPodSecurity(deps(pods, { now: () => (t += 1100) })).validate!(slow.attrs);
  assert.deepEqual(slow.warnings, [
    'new PodSecurity enforce level only checked against the first 1 of 3 existing pods',
    'existing pods in namespace "n" violate the new PodSecurity enforce level "baseline:latest"',
    'a: privileged',
  ]);
});

test('the PodSecurity feature gate off: nothing is checked', async () => {
  const { attrs, warnings } = nsUpdate({}, { 'pod-security.kubernetes.io/enforce': 'nonsense' });
  await createPodSecurity(deps([pod('a', privileged)], { enabled: false })).validate!(attrs);
  assert.deepEqual(warnings, []);
  await assert.rejects(createPodSecurity(deps([])).validate!(attrs) as Promise<void>, { code: 422 });
});
