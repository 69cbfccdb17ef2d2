import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Catalog, StatusError, builtinResources, type StoredObject } from '@plinth/api';
import { ALL_ORDERED_PLUGINS, DEFAULT_ON_PLUGINS, createAdmission, enabledAdmissionPlugins, validateAdmissionPlugins } from './plugins.js';
import { operationOptions, type AdmissionAttributes, type AdmissionPlugin, type Operation } from './interfaces.js';

const catalog = new Catalog(builtinResources());
const secrets = catalog.lookup('', 'v1', 'secrets')!;
const namespaces = catalog.lookup('', 'v1', 'namespaces')!;

function attrs(op: Operation, over: Partial<AdmissionAttributes> = {}): AdmissionAttributes {
  const object: StoredObject = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: 'ns' } };
  return {
    operation: op,
    resource: secrets,
    subresource: '',
    namespace: 'ns',
    name: 's',
    kind: { group: '', version: 'v1', kind: 'Secret' },
    object: op === 'DELETE' ? undefined : object,
    oldObject: op === 'CREATE' ? undefined : object,
    options: operationOptions(op, {}),
    user: { name: 'u', groups: [] },
    dryRun: false,
    ...over,
  };
}

const existing = (names: string[]) => async (name: string): Promise<StoredObject | undefined> =>
  names.includes(name) ? { apiVersion: 'v1', kind: 'Namespace', metadata: { name }, status: { phase: 'Active' } } : undefined;

const rejects = async (p: Promise<unknown>, code: number, message: RegExp): Promise<void> => {
  await assert.rejects(p, (e) => e instanceof StatusError && e.code === code && message.test(e.message));
};

test('the default set is kube 1.24\'s default-on plugins that plinth implements, in kube\'s order', () => {
  // kube 1.24's DefaultOnAdmissionPlugins, every one implemented.
  assert.deepEqual(DEFAULT_ON_PLUGINS, [
    'NamespaceLifecycle', 'LimitRanger', 'ServiceAccount', 'TaintNodesByCondition', 'PodSecurity', 'Priority', 'DefaultTolerationSeconds', 'DefaultStorageClass', 'StorageObjectInUseProtection',
    'PersistentVolumeClaimResize', 'RuntimeClass', 'CertificateApproval', 'CertificateSigning', 'CertificateSubjectRestriction', 'DefaultIngressClass', 'MutatingAdmissionWebhook', 'ValidatingAdmissionWebhook', 'ResourceQuota',
  ]);
  assert.deepEqual(enabledAdmissionPlugins({ enable: [], disable: [] }), DEFAULT_ON_PLUGINS);
  assert.equal(ALL_ORDERED_PLUGINS[0], 'AlwaysAdmit');
  assert.deepEqual(ALL_ORDERED_PLUGINS.slice(-4), ['MutatingAdmissionWebhook', 'ValidatingAdmissionWebhook', 'ResourceQuota', 'AlwaysDeny']);
});

test('enabled plugins run in kube\'s recommended order whatever the flag order; disabled ones are gone', () => {
  const sel = { enable: ['AlwaysDeny', 'NamespaceExists', 'AlwaysAdmit'], disable: ['MutatingAdmissionWebhook'] };
  assert.deepEqual(validateAdmissionPlugins(sel), []);
  assert.deepEqual(enabledAdmissionPlugins(sel), [
    'AlwaysAdmit', 'NamespaceLifecycle', 'NamespaceExists', 'LimitRanger', 'ServiceAccount', 'TaintNodesByCondition', 'PodSecurity', 'Priority', 'DefaultTolerationSeconds',
    'DefaultStorageClass', 'StorageObjectInUseProtection', 'PersistentVolumeClaimResize', 'RuntimeClass', 'CertificateApproval', 'CertificateSigning', 'CertificateSubjectRestriction', 'DefaultIngressClass', 'ValidatingAdmissionWebhook',
    'ResourceQuota', 'AlwaysDeny',
  ]);
  // Disabling kube defaults is honoured.
  const off = { enable: [], disable: ['NamespaceLifecycle', 'LimitRanger'] };
  assert.deepEqual(validateAdmissionPlugins(off), []);
  assert.deepEqual(enabledAdmissionPlugins(off), [
    'ServiceAccount', 'TaintNodesByCondition', 'PodSecurity', 'Priority', 'DefaultTolerationSeconds', 'DefaultStorageClass', 'StorageObjectInUseProtection', 'PersistentVolumeClaimResize', 'RuntimeClass',
    'CertificateApproval', 'CertificateSigning', 'CertificateSubjectRestriction', 'DefaultIngressClass', 'MutatingAdmissionWebhook', 'ValidatingAdmissionWebhook', 'ResourceQuota',
  ]);
});

test('unknown, overlapping and unimplemented names are start-up errors with kube\'s messages', () => {
  assert.deepEqual(validateAdmissionPlugins({ enable: ['NamespaceLifecycl'], disable: ['Bogus'] }), [
    'enable-admission-plugins plugin "NamespaceLifecycl" is unknown',
    'disable-admission-plugins plugin "Bogus" is unknown',
  ]);
  assert.deepEqual(validateAdmissionPlugins({ enable: ['AlwaysDeny', 'AlwaysAdmit'], disable: ['AlwaysDeny', 'AlwaysAdmit'] }), [
    '[AlwaysAdmit AlwaysDeny] in enable-admission-plugins and disable-admission-plugins overlapped',
  ]);
  assert.deepEqual(validateAdmissionPlugins({ enable: ['PersistentVolumeLabel'], disable: [] }), [
    'enable-admission-plugins plugin "PersistentVolumeLabel" is not implemented by plinth (it admits resources plinth does not serve)',
  ]);
  assert.throws(() => createAdmission(['PersistentVolumeLabel'], { getNamespace: existing([]) }), /not implemented/);
});

test('every mutating plugin runs, in order, before any validating one; a refusal stops the phase', async () => {
  const seen: string[] = [];
  const recorder = (name: string): AdmissionPlugin => ({
    name,
    handles: (op) => op !== 'CONNECT',
    admit: () => void seen.push(`${name}.admit`),
    validate: () => void seen.push(`${name}.validate`),
  });
  const chain = createAdmission(enabledAdmissionPlugins({ enable: ['AlwaysDeny'], disable: [] }), {
    getNamespace: async (name) => {
      seen.push(`lifecycle.validate:${name}`);
      return existing(['ns'])(name);
    },
    mutatingWebhook: () => recorder('mutating'),
    validatingWebhook: () => recorder('validating'),
  });
  const a = attrs('CREATE');
  await rejects(chain.admit(a), 403, /^secrets "s" is forbidden: admission control is denying all modifications$/);
  assert.deepEqual(seen, ['mutating.admit', 'validating.admit']);
  seen.length = 0;
  await rejects(chain.validate(a), 403, /denying all modifications/);
  assert.deepEqual(seen, ['lifecycle.validate:ns', 'mutating.validate', 'validating.validate']);
});

test('plugins see only the operations they handle; the default set works with empty webhook slots', async () => {
  const calls: Operation[] = [];
  const chain = createAdmission(DEFAULT_ON_PLUGINS, {
    getNamespace: existing(['ns']),
    validatingWebhook: () => ({ name: 'v', handles: (op) => op === 'DELETE', validate: (a) => void calls.push(a.operation) }),
  });
  for (const op of ['CREATE', 'UPDATE', 'DELETE'] as const) {
    await chain.admit(attrs(op));
    await chain.validate(attrs(op));
  }
  assert.deepEqual(calls, ['DELETE']);
});

test('NamespaceLifecycle: missing namespaces, terminating ones, immortal ones, access reviews (kube 1.24)', async () => {
  const terminating = async (name: string): Promise<StoredObject | undefined> =>
    ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name }, status: { phase: 'Terminating' } });
  const lifecycle = createAdmission(['NamespaceLifecycle'], { getNamespace: existing([]) });
  await rejects(lifecycle.validate(attrs('CREATE')), 404, /^namespaces "ns" not found$/);
  await rejects(lifecycle.validate(attrs('UPDATE')), 404, /^namespaces "ns" not found$/);
  await lifecycle.validate(attrs('DELETE')); // deletion of content is always allowed
  const ns = { resource: namespaces, namespace: '', name: 'kube-system', kind: { group: '', version: 'v1', kind: 'Namespace' } };
  await rejects(lifecycle.validate(attrs('DELETE', ns)), 403, /^namespaces "kube-system" is forbidden: this namespace may not be deleted$/);
  await lifecycle.validate(attrs('DELETE', { ...ns, name: 'other' }));
  const lsar = { ...catalog.lookup('', 'v1', 'secrets')!, group: 'authorization.k8s.io', plural: 'localsubjectaccessreviews' };
  await lifecycle.validate(attrs('CREATE', { resource: lsar }));

  const ending = createAdmission(['NamespaceLifecycle'], { getNamespace: terminating });
  await rejects(ending.validate(attrs('CREATE')), 403, /unable to create new content in namespace ns because it is being terminated/);
  await ending.validate(attrs('UPDATE'));
});

test('NamespaceExists refuses content of a missing namespace for every write', async () => {
  const exists = createAdmission(['NamespaceExists'], { getNamespace: existing(['ns']) });
  await exists.validate(attrs('UPDATE'));
  const none = createAdmission(['NamespaceExists'], { getNamespace: existing([]) });
  for (const op of ['CREATE', 'UPDATE', 'DELETE'] as const) await rejects(none.validate(attrs(op)), 404, /^namespaces "ns" not found$/);
});

test('operation options are typed as kube passes them in AdmissionReview', () => {
  assert.deepEqual(operationOptions('CREATE', { dryRun: true, fieldManager: 'kubectl' }), { apiVersion: 'meta.k8s.io/v1', kind: 'CreateOptions', dryRun: ['All'], fieldManager: 'kubectl' });
  assert.deepEqual(operationOptions('UPDATE', {}), { apiVersion: 'meta.k8s.io/v1', kind: 'UpdateOptions' });
  assert.deepEqual(operationOptions('DELETE', { propagationPolicy: 'Foreground', preconditions: { uid: 'u' }, fieldManager: 'x' }), {
    apiVersion: 'meta.k8s.io/v1',
    kind: 'DeleteOptions',
    preconditions: { uid: 'u' },
    propagationPolicy: 'Foreground',
  });
});

test('NamespaceLifecycle reads a namespace this server deleted live for 30 s (kube\'s forceLiveLookupCache)', async () => {
  const reads: Array<{ name: string; live: boolean }> = [];
  const lifecycle = createAdmission(['NamespaceLifecycle'], {
    getNamespace: async (name, opts) => {
      reads.push({ name, live: !!opts?.live });
      // The cache still has the namespace as it was; etcd has it terminating.
      return { apiVersion: 'v1', kind: 'Namespace', metadata: { name }, ...(opts?.live ? { status: { phase: 'Terminating' } } : {}) };
    },
  });
  await lifecycle.validate(attrs('CREATE'));
  assert.deepEqual(reads.pop(), { name: 'ns', live: false });
  const nsDelete = { resource: namespaces, namespace: '', name: 'ns', kind: { group: '', version: 'v1', kind: 'Namespace' } };
  await lifecycle.validate(attrs('DELETE', nsDelete));
  await rejects(lifecycle.validate(attrs('CREATE')), 403, /because it is being terminated/);
  assert.deepEqual(reads.pop(), { name: 'ns', live: true });
});
