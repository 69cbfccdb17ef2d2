/**
 * Serving a resource in two versions from one storage (kube's conversion at the storage
 * boundary), against a real etcd: a synthetic Widget whose storage version v1 has `spec.size`
 * and whose v2 calls it `spec.replicas`. Every path converts: create, get, list, update, patch,
 * apply, delete and watch events; objects in etcd stay in the storage version; managedFields
 * record the version a write was made in.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Etcd3 } from 'etcd3';
import { createAdmission } from '@plinth/admission';
import { ResourceStore } from '@plinth/apiserver';
import { Catalog, fieldErr, isPlainObject, nameIsDNSSubdomain, s, storageDefOf, storageVersionHash, type ResourceDefinition, type StoredObject } from '@plinth/api';
import { EtcdStore, createKeyFunctions } from '@plinth/storage';
import { startTestEtcd, type TestEtcd } from './harness.js';

const GROUP = 'widgets.example.com';

function widgetDef(version: string, sizeField: string): ResourceDefinition {
  return {
    group: GROUP,
    version,
    kind: 'Widget',
    listKind: 'WidgetList',
    plural: 'widgets',
    singular: 'widget',
    shortNames: [],
    categories: [],
    namespaced: true,
    verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
    storage: 'etcd',
    subresources: [],
    nameValidator: nameIsDNSSubdomain,
    allowCreateOnUpdate: false,
    returnDeletedObject: false,
    storagePath: `${GROUP}/widgets`,
    schema: s.obj({ spec: s.obj({ [sizeField]: s.int(), color: s.str() }) }),
    strategy: {
      validate: (obj) => {
        const spec = obj['spec'];
        const size = isPlainObject(spec) ? spec[sizeField] : undefined;
        return typeof size === 'number' && size < 0 ? [fieldErr.invalid(`spec.${sizeField}`, size, 'must be non-negative')] : [];
      },
    },
  };
}

/** Renames spec.<from> to spec.<to> and sets apiVersion; a new object, the input untouched. */
function rename(obj: StoredObject, apiVersion: string, from: string, to: string): StoredObject {
  const out: StoredObject = { ...obj, apiVersion, kind: 'Widget' };
  if (isPlainObject(obj['spec'])) {
    const { [from]: value, ...rest } = obj['spec'];
    out['spec'] = value === undefined ? rest : { ...rest, [to]: value };
  }
  return out;
}

const v1 = widgetDef('v1', 'size');
const v2: ResourceDefinition = {
  ...widgetDef('v2', 'replicas'),
  conversion: {
    storage: v1,
    toStorage: (o) => rename(o, `${GROUP}/v1`, 'replicas', 'size'),
    fromStorage: (o) => rename(o, `${GROUP}/v2`, 'size', 'replicas'),
  },
};

let etcd: TestEtcd;
let storage: EtcdStore;
let raw: Etcd3;
let s1: ResourceStore;
let s2: ResourceStore;
const scope = { user: { name: 'alice', groups: ['system:authenticated'] }, namespace: 'ns' };

before(async () => {
  etcd = await startTestEtcd();
  storage = new EtcdStore({ endpoints: [etcd.endpoint] });
  raw = new Etcd3({ hosts: [etcd.endpoint] });
  const keys = createKeyFunctions('/registry');
  const admission = createAdmission([], { getNamespace: async () => undefined });
  s1 = new ResourceStore(v1, { storage, keys, admission });
  s2 = new ResourceStore(v2, { storage, keys, admission });
});

after(async () => {
  raw.close();
  await storage.close();
  await etcd.stop();
});

const widget = (name: string, version: string, spec: Record<string, unknown>): StoredObject =>
  ({ apiVersion: `${GROUP}/${version}`, kind: 'Widget', metadata: { name, namespace: 'ns' }, spec }) as StoredObject;

async function stored(name: string): Promise<Record<string, unknown>> {
  return JSON.parse((await raw.get(`/registry/${GROUP}/widgets/ns/${name}`).string())!) as Record<string, unknown>;
}

test('the catalog: one storage for both versions, one storageVersionHash', () => {
  const catalog = new Catalog([v1, v2]);
  assert.deepEqual(catalog.stored(), [v1]);
  assert.equal(storageDefOf(v2), v1);
  assert.equal(storageVersionHash(v2), storageVersionHash(v1));
  assert.deepEqual(catalog.groups().get(GROUP), ['v1', 'v2']);
});

test('a write through v2 is stored in v1 and read back through both versions', async () => {
  const created = await s2.create(scope, widget('a', 'v2', { replicas: 3, color: 'red' }), { manager: 'ctl' });
  assert.equal(created.apiVersion, `${GROUP}/v2`);
  assert.deepEqual(created['spec'], { replicas: 3, color: 'red' });
  assert.equal(created.metadata.managedFields?.[0]?.apiVersion, `${GROUP}/v2`);
  const inEtcd = await stored('a');
  assert.equal(inEtcd['apiVersion'], `${GROUP}/v1`);
  assert.deepEqual(inEtcd['spec'], { size: 3, color: 'red' });
  const viaV1 = await s1.get(scope, 'a');
  assert.deepEqual(viaV1['spec'], { size: 3, color: 'red' });
  assert.equal(viaV1.metadata.uid, created.metadata.uid);
  const viaV2 = await s2.get(scope, 'a');
  assert.deepEqual(viaV2['spec'], { replicas: 3, color: 'red' });
  assert.equal(viaV2.metadata.resourceVersion, viaV1.metadata.resourceVersion);
});

test('validation runs in the requested version, with its field names', async () => {
  await assert.rejects(s2.create(scope, widget('neg', 'v2', { replicas: -1 })), (e: Error) => {
    assert.match(e.message, /spec\.replicas: Invalid value: -1: must be non-negative/);
    return true;
  });
  await assert.rejects(s1.create(scope, widget('neg', 'v1', { size: -1 })));
});

test('list, update, patch and apply through v2 convert both ways', async () => {
  await s1.create(scope, widget('b', 'v1', { size: 1 }));
  const list = await s2.list(scope, {});
  assert.deepEqual(list.items.map((i) => [i.metadata.name, i['spec']]), [['a', { replicas: 3, color: 'red' }], ['b', { replicas: 1 }]]);
  assert.equal(list.apiVersion, `${GROUP}/v2`);
  const current = await s2.get(scope, 'b');
  const { object: updated } = await s2.update(scope, 'b', { ...current, spec: { replicas: 2 } });
  assert.deepEqual(updated['spec'], { replicas: 2 });
  assert.deepEqual((await stored('b'))['spec'], { size: 2 });
  const { object: patched } = await s2.patch(scope, 'b', { kind: 'patch', apply: (cur) => ({ ...cur, spec: { ...(cur['spec'] as object), color: 'blue' } }) });
  assert.deepEqual(patched['spec'], { replicas: 2, color: 'blue' });
  assert.deepEqual((await stored('b'))['spec'], { size: 2, color: 'blue' });
  const { object: applied } = await s2.patch(scope, 'b', { kind: 'apply', applied: widget('b', 'v2', { replicas: 5 }), force: true }, { manager: 'applier' });
  assert.deepEqual(applied['spec'], { replicas: 5, color: 'blue' });
  assert.deepEqual((await stored('b'))['spec'], { size: 5, color: 'blue' });
  const entry = applied.metadata.managedFields?.find((m) => m.manager === 'applier');
  assert.equal(entry?.apiVersion, `${GROUP}/v2`);
  assert.equal(entry?.operation, 'Apply');
});

test('a watch through v2 sees v1 writes converted and initial state in v2; a delete through v2 removes the stored object', async () => {
  const start = (await s1.get(scope, 'b')).metadata.resourceVersion!;
  const w = await s2.watch(scope, { resourceVersion: start });
  try {
    const cur = await s1.get(scope, 'b');
    await s1.update(scope, 'b', { ...cur, spec: { size: 7 } });
    const e = await w.next();
    assert.ok(e && e.type === 'MODIFIED');
    assert.equal(e.object.apiVersion, `${GROUP}/v2`);
    assert.deepEqual(e.object['spec'], { replicas: 7 });
  } finally {
    w.stop();
  }
  const initial = await s2.watch(scope, { resourceVersion: '0' });
  try {
    const e = await initial.next();
    assert.ok(e && e.type === 'ADDED');
    assert.equal(e.object.apiVersion, `${GROUP}/v2`);
    assert.ok('replicas' in (e.object['spec'] as object));
  } finally {
    initial.stop();
  }
  const { result } = await s2.delete(scope, 'b');
  assert.equal((result as { status?: string }).status, 'Success');
  await assert.rejects(s1.get(scope, 'b'));
});
