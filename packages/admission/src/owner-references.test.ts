import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Catalog, StatusError, builtinResources, type StoredObject } from '@plinth/api';
import { createOwnerReferencesPermissionEnforcement, type AccessAttributes } from './owner-references.js';
import { operationOptions, type AdmissionAttributes, type Operation } from './interfaces.js';

const catalog = new Catalog(builtinResources());
const configmaps = catalog.lookup('', 'v1', 'configmaps')!;
const pods = catalog.lookup('', 'v1', 'pods')!;

/** The plugin over the built-in catalog with an authorizer allowing `allowed` (`verb resource/subresource ns name`). */
function plugin(allowed: string[] = []) {
  const asked: string[] = [];
  const p = createOwnerReferencesPermissionEnforcement({
    authorize: async (a: AccessAttributes) => {
      const key = `${a.verb} ${a.apiGroup ? `${a.apiGroup}/` : ''}${a.resource}/${a.subresource} ${a.namespace} ${a.name}`;
      asked.push(key);
      return { allowed: allowed.includes(key), reason: '' };
    },
    servedResources: (group, version) => catalog.all().filter((d) => d.group === group && d.version === version),
  });
  return { p, asked };
}

const cm = (refs: unknown[]): StoredObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'child', namespace: 'ns', ownerReferences: refs as never } });
const ref = (over: Record<string, unknown> = {}) => ({ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: 'u1', ...over });

function attrs(op: Operation, object: StoredObject, oldObject?: StoredObject, over: Partial<AdmissionAttributes> = {}): AdmissionAttributes {
  return {
    operation: op,
    resource: configmaps,
    subresource: '',
    namespace: 'ns',
    name: 'child',
    kind: { group: '', version: 'v1', kind: 'ConfigMap' },
    object,
    oldObject,
    options: operationOptions(op, {}),
    user: { name: 'u', groups: [] },
    dryRun: false,
    ...over,
  };
}

const forbids = async (p: void | Promise<void>, message: string): Promise<void> => {
  await assert.rejects(Promise.resolve(p), (e) => e instanceof StatusError && e.code === 403 && e.message === message);
};

test('a <Kind>List reference maps to the guessed plural of discovery\'s mapper; a lower-case kind to the resource', async () => {
  const { p, asked } = plugin(['update configmaplists/finalizers ns owner', 'update configmaps/finalizers ns owner']);
  await p.validate!(attrs('CREATE', cm([ref({ kind: 'ConfigMapList', blockOwnerDeletion: true })])));
  await p.validate!(attrs('CREATE', cm([ref({ kind: 'configmap', blockOwnerDeletion: true })])));
  assert.deepEqual(asked, ['update */*/finalizers  *', 'update configmaplists/finalizers ns owner', 'update */*/finalizers  *', 'update configmaps/finalizers ns owner']);
});

test('a cluster-scoped owner is checked without a namespace; an apiVersion with two slashes is Go\'s parse error', async () => {
  const { p, asked } = plugin(['update nodes/finalizers  n1']);
  await p.validate!(attrs('CREATE', cm([ref({ kind: 'Node', name: 'n1', blockOwnerDeletion: true })])));
  assert.equal(asked.at(-1), 'update nodes/finalizers  n1');
  await forbids(
    p.validate!(attrs('CREATE', cm([ref({ apiVersion: 'a/b/c', blockOwnerDeletion: true })]))),
    'configmaps "child" is forbidden: cannot set blockOwnerDeletion in this case because cannot find RESTMapping for APIVersion a/b/c Kind ConfigMap: unexpected GroupVersion string: a/b/c',
  );
});

test('updates: unchanged references need nothing; a reference already blocking (by uid) needs no finalizers', async () => {
  const { p, asked } = plugin(['delete configmaps/ ns child']);
  const old = cm([ref({ blockOwnerDeletion: true })]);
  await p.validate!(attrs('UPDATE', cm([ref({ blockOwnerDeletion: true })]), old));
  assert.deepEqual(asked, []);
  // controller set: a change, so delete is asked; the blocking ref is not new.
  await p.validate!(attrs('UPDATE', cm([ref({ blockOwnerDeletion: true, controller: true })]), old));
  assert.deepEqual(asked, ['delete configmaps/ ns child']);
  // unset vs false is a change too (kube compares pointers semantically).
  await p.validate!(attrs('UPDATE', cm([ref({ controller: false })]), cm([ref()])));
  assert.equal(asked.length, 2);
});

test('pods/status is exempt; other sub-resources are checked with their sub-resource', async () => {
  const { p, asked } = plugin();
  const pod = (refs: unknown[]): StoredObject => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'ns', ownerReferences: refs as never } });
  await p.validate!(attrs('UPDATE', pod([ref()]), pod([]), { resource: pods, subresource: 'status', name: 'p' }));
  assert.deepEqual(asked, []);
  await forbids(p.validate!(attrs('UPDATE', pod([ref()]), pod([]), { resource: pods, subresource: 'ephemeralcontainers', name: 'p' })), 'pods "p" is forbidden: cannot set an ownerRef on a resource you can\'t delete: , <nil>');
  assert.deepEqual(asked, ['delete pods/ephemeralcontainers ns p']);
});

test('the authorizer\'s reason and error are printed as kube prints them', async () => {
  const p = createOwnerReferencesPermissionEnforcement({
    authorize: async () => ({ allowed: false, reason: 'RBAC: role "x" not found', error: 'webhook down' }),
    servedResources: () => [],
  });
  await forbids(p.validate!(attrs('UPDATE', cm([ref()]), cm([]))), 'configmaps "child" is forbidden: cannot set an ownerRef on a resource you can\'t delete: RBAC: role "x" not found, webhook down');
});
