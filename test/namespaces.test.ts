/**
 * Namespaces over real HTTPS against a real etcd: the built-in namespaces, the `default`
 * ServiceAccount in each, namespace deletion (Terminating, emptied, removed) and its guards.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestEtcd, startInProcess, eventually, type TestEtcd, type InProcessPlinth, type TestClient, type Response } from './harness.js';
import { expectCode, expectStatus } from './assertions.js';

const NAMESPACES = '/api/v1/namespaces';
const RBAC = '/apis/rbac.authorization.k8s.io/v1';
/** The namespace controller resyncs every 10 s; leave room for a couple of rounds. */
const SLOW = 40_000;

let etcd: TestEtcd;
let plinth: InProcessPlinth;
let c: TestClient;

const saPath = (ns: string, name = ''): string => `/api/v1/namespaces/${ns}/serviceaccounts${name ? `/${name}` : ''}`;
const secretPath = (ns: string, name = ''): string => `/api/v1/namespaces/${ns}/secrets${name ? `/${name}` : ''}`;
const rolePath = (ns: string, name = ''): string => `${RBAC}/namespaces/${ns}/roles${name ? `/${name}` : ''}`;
const rbPath = (ns: string, name = ''): string => `${RBAC}/namespaces/${ns}/rolebindings${name ? `/${name}` : ''}`;

async function createNamespace(name: string): Promise<any> {
  const res = await c.post(NAMESPACES, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  expectCode(res, 201, `create namespace ${name}`);
  return res.body;
}

async function post(path: string, body: unknown): Promise<any> {
  const res = await c.post(path, body);
  expectCode(res, 201, `POST ${path}`);
  return res.body;
}

/** One of each namespaced kind in `ns`; returns the paths of the objects. */
async function populate(ns: string, saExtra: Record<string, unknown> = {}): Promise<string[]> {
  await post(saPath(ns), { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'app', ...saExtra } });
  await post(secretPath(ns), { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'creds' }, stringData: { k: 'v' } });
  await post(rolePath(ns), {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata: { name: 'reader' },
    rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }],
  });
  await post(rbPath(ns), {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name: 'read' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'reader' },
    subjects: [{ kind: 'ServiceAccount', name: 'app', namespace: ns }],
  });
  return [saPath(ns, 'app'), secretPath(ns, 'creds'), rolePath(ns, 'reader'), rbPath(ns, 'read')];
}

async function waitForDefaultSA(ns: string): Promise<any> {
  return eventually(
    async () => {
      const res = await c.get(saPath(ns, 'default'));
      return res.status === 200 ? res.body : undefined;
    },
    SLOW,
    `default serviceaccount in ${ns}`,
  );
}

before(async () => {
  etcd = await startTestEtcd();
  plinth = await startInProcess({ etcd });
  c = plinth.client;
});

after(async () => {
  await plinth?.stop();
  await etcd?.stop();
});

describe('built-in namespaces', () => {
  it('default, kube-system, kube-public and kube-node-lease exist and are Active', async () => {
    const list = await c.get(NAMESPACES);
    expectCode(list, 200);
    assert.equal(list.body.kind, 'NamespaceList');
    const names = (list.body.items as any[]).map((n) => n.metadata.name);
    for (const name of ['default', 'kube-system', 'kube-public', 'kube-node-lease']) {
      assert.ok(names.includes(name), `${name} missing from ${names}`);
      const ns = await c.get(`${NAMESPACES}/${name}`);
      expectCode(ns, 200, name);
      assert.equal(ns.body.kind, 'Namespace');
      assert.equal(ns.body.status?.phase, 'Active');
    }
  });

  it('deleting default or kube-system is 403 Forbidden and leaves them Active', async () => {
    for (const name of ['default', 'kube-system']) {
      const res = await c.delete(`${NAMESPACES}/${name}`);
      expectStatus(res, 403, 'Forbidden');
      assert.equal(res.body.message, `namespaces "${name}" is forbidden: this namespace may not be deleted`);
      const ns = await c.get(`${NAMESPACES}/${name}`);
      expectCode(ns, 200);
      assert.equal(ns.body.metadata.deletionTimestamp, undefined);
      assert.equal(ns.body.status?.phase, 'Active');
    }
  });
});

describe('default serviceaccount', () => {
  it('every namespace gets one, built-in and new', async () => {
    for (const name of ['default', 'kube-system', 'kube-public', 'kube-node-lease']) await waitForDefaultSA(name);
    await createNamespace('ns-sa');
    const sa = await waitForDefaultSA('ns-sa');
    assert.equal(sa.metadata.namespace, 'ns-sa');
  });

  it('comes back after it is deleted', async () => {
    await createNamespace('ns-sa-back');
    const first = await waitForDefaultSA('ns-sa-back');
    expectCode(await c.delete(saPath('ns-sa-back', 'default')), 200);
    const again = await eventually(
      async () => {
        const res = await c.get(saPath('ns-sa-back', 'default'));
        return res.status === 200 && res.body.metadata.uid !== first.metadata.uid ? res.body : undefined;
      },
      SLOW,
      'default serviceaccount to be re-created',
    );
    assert.notEqual(again.metadata.uid, first.metadata.uid);
  });
});

describe('namespace deletion', () => {
  it('answers Terminating, then empties the namespace and removes it', async () => {
    await createNamespace('ns-del');
    await waitForDefaultSA('ns-del');
    const paths = await populate('ns-del');
    const del = await c.delete(`${NAMESPACES}/ns-del`);
    expectCode(del, 200);
    assert.equal(del.body.kind, 'Namespace');
    assert.equal(del.body.status?.phase, 'Terminating');
    assert.ok(del.body.metadata.deletionTimestamp, 'deletionTimestamp set');
    for (const p of [...paths, saPath('ns-del', 'default')]) {
      await eventually(async () => (await c.get(p)).status === 404, SLOW, `${p} to go`);
    }
    await eventually(async () => (await c.get(`${NAMESPACES}/ns-del`)).status === 404, SLOW, 'namespace ns-del to go');
    expectStatus(await c.get(`${NAMESPACES}/ns-del`), 404, 'NotFound');
    for (const list of [saPath('ns-del'), secretPath('ns-del'), rolePath('ns-del'), rbPath('ns-del')]) {
      const res = await c.get(list);
      expectCode(res, 200, list);
      assert.deepEqual(res.body.items, [], list);
    }
  });

  it('refuses new content while terminating (403), and finishes once the last finalizer goes', async () => {
    const ns = 'ns-hold';
    await createNamespace(ns);
    await populate(ns, { finalizers: ['example.com/hold'] });
    const del = await c.delete(`${NAMESPACES}/${ns}`);
    expectCode(del, 200);
    assert.equal(del.body.status?.phase, 'Terminating');

    // The held ServiceAccount keeps the namespace Terminating; the rest goes.
    for (const p of [secretPath(ns, 'creds'), rolePath(ns, 'reader'), rbPath(ns, 'read')]) {
      await eventually(async () => (await c.get(p)).status === 404, SLOW, `${p} to go`);
    }
    const held = await eventually(
      async () => {
        const res = await c.get(saPath(ns, 'app'));
        return res.status === 200 && res.body.metadata.deletionTimestamp ? res.body : undefined;
      },
      SLOW,
      'held serviceaccount to be marked for deletion',
    );
    const still = await c.get(`${NAMESPACES}/${ns}`);
    expectCode(still, 200);
    assert.equal(still.body.status?.phase, 'Terminating');

    const refused = await c.post(saPath(ns), { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'late' } });
    expectStatus(refused, 403, 'Forbidden');
    assert.equal(refused.body.message, `serviceaccounts "late" is forbidden: unable to create new content in namespace ${ns} because it is being terminated`);
    const refusedSecret = await c.post(secretPath(ns), { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'late' } });
    expectStatus(refusedSecret, 403, 'Forbidden');
    expectCode(await c.get(saPath(ns, 'late')), 404);
    expectCode(await c.get(secretPath(ns, 'late')), 404);

    // kube's deletion conditions, as kubectl describe shows them.
    const conditions = await eventually(
      async () => {
        const cs = (await c.get(`${NAMESPACES}/${ns}`)).body.status?.conditions as Array<{ type: string; status: string; reason: string; message: string }> | undefined;
        return cs?.some((x) => x.type === 'NamespaceFinalizersRemaining' && x.status === 'True') ? cs : undefined;
      },
      SLOW,
      'deletion conditions',
    );
    assert.deepEqual(
      conditions.map((x) => [x.type, x.status, x.reason, x.message]),
      [
        ['NamespaceDeletionDiscoveryFailure', 'False', 'ResourcesDiscovered', 'All resources successfully discovered'],
        ['NamespaceDeletionGroupVersionParsingFailure', 'False', 'ParsedGroupVersions', 'All legacy kube types successfully parsed'],
        ['NamespaceDeletionContentFailure', 'False', 'ContentDeleted', 'All content successfully deleted, may be waiting on finalization'],
        ['NamespaceContentRemaining', 'True', 'SomeResourcesRemain', 'Some resources are remaining: serviceaccounts. has 1 resource instances'],
        ['NamespaceFinalizersRemaining', 'True', 'SomeFinalizersRemain', 'Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances'],
      ],
    );

    const released = await c.put(saPath(ns, 'app'), { ...held, metadata: { ...held.metadata, finalizers: [] } });
    expectCode(released, 200);
    await eventually(async () => (await c.get(saPath(ns, 'app'))).status === 404, SLOW, 'held serviceaccount to go');
    await eventually(async () => (await c.get(`${NAMESPACES}/${ns}`)).status === 404, SLOW, `namespace ${ns} to go`);
  });

  it('a deleted namespace name can be used again', async () => {
    await createNamespace('ns-again');
    expectCode(await c.delete(`${NAMESPACES}/ns-again`), 200);
    await eventually(async () => (await c.get(`${NAMESPACES}/ns-again`)).status === 404, SLOW, 'namespace ns-again to go');
    const again = await createNamespace('ns-again');
    assert.equal(again.status?.phase, 'Active');
    await waitForDefaultSA('ns-again');
  });
});
