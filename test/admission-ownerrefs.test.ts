/**
 * OwnerReferencesPermissionEnforcement (off by default in kube 1.24, enabled here) against a real
 * plinth with RBAC users: setting an ownerReference on an update needs `delete` on the object; a
 * new `blockOwnerDeletion: true` reference needs `update` on the owner's `finalizers` (the owner
 * REST-mapped from the reference: built-in, custom, cluster-scoped), or on everything's
 * finalizers; an unknown kind is kube's 403. Messages are kube's, byte for byte.
 */
import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { eventually, tempDir, usePlinth } from './harness.js';
import { expectCode, expectStatus } from './assertions.js';

const USERS = { dev: 'dev-token-0123456789', deleter: 'deleter-token-0123456789', finalizer: 'finalizer-token-0123456789', anyfin: 'anyfin-token-0123456789' } as const;
type User = keyof typeof USERS;
const tokenFile = join(tempDir('plinth-ownerrefs-'), 'tokens.csv');
writeFileSync(tokenFile, Object.entries(USERS).map(([name, token], i) => `${token},${name},${3000 + i}\n`).join(''));
// The apiserver alone (kube's admission runs without a controller manager): the references here
// name owners that do not exist, which the garbage collector would collect under the test's feet.
const env = usePlinth([`--token-auth-file=${tokenFile}`, '--enable-admission-plugins=OwnerReferencesPermissionEnforcement', '--controllers=*,-garbagecollector']);

const NS = 'own';
const CM = `/api/v1/namespaces/${NS}/configmaps`;
const RBAC = '/apis/rbac.authorization.k8s.io/v1';
const WIDGETS = `/apis/own.example.com/v1/namespaces/${NS}/widgets`;
const CANNOT_DELETE = "cannot set an ownerRef on a resource you can't delete: , <nil>";
const CANNOT_FINALIZE = "cannot set blockOwnerDeletion if an ownerReference refers to a resource you can't set finalizers on: , <nil>";

interface Ref {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  blockOwnerDeletion?: boolean;
  controller?: boolean;
}

let owner: Ref;
let widget: Ref;
let namespaceOwner: Ref;

const cm = (name: string, refs: Ref[] = [], labels: Record<string, string> = {}): object => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels, ownerReferences: refs } });
const as = (user: User) => ({ token: USERS[user] });
const post = (user: User, path: string, body: object) => env.plinth.client.post(path, body, as(user));

async function grant(name: string, rules: object[], namespace?: string): Promise<void> {
  const c = env.plinth.client;
  const base = namespace ? `${RBAC}/namespaces/${namespace}` : RBAC;
  const [role, binding] = namespace ? ['Role', 'rolebindings'] : ['ClusterRole', 'clusterrolebindings'];
  expectCode(await c.post(`${base}/${role === 'Role' ? 'roles' : 'clusterroles'}`, { metadata: { name }, rules }), 201);
  expectCode(await c.post(`${base}/${binding}`, { metadata: { name }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: role, name }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name }] }), 201);
}

/** The namespace, CRD, owners and users: once, before the first suite (the server starts in the root hook). */
let ready: Promise<void> | undefined;
const setUp = (): Promise<void> => (ready ??= setUpOnce());

async function setUpOnce(): Promise<void> {
  const c = env.plinth.client;
  expectCode(await c.post('/api/v1/namespaces', { metadata: { name: NS } }), 201);
  const crd = {
    metadata: { name: 'widgets.own.example.com' },
    spec: {
      group: 'own.example.com',
      scope: 'Namespaced',
      names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
    },
  };
  expectCode(await c.post('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd), 201);
  await eventually(async () => (await c.get(WIDGETS)).status === 200, 15_000, 'widgets served');
  const configMapRules = (verbs: string[]) => [{ apiGroups: [''], resources: ['configmaps'], verbs }];
  await grant('dev', configMapRules(['get', 'create', 'update', 'patch']), NS);
  await grant('deleter', configMapRules(['get', 'create', 'update', 'patch', 'delete']), NS);
  await grant('finalizer', [...configMapRules(['get', 'create', 'update', 'patch', 'delete']), { apiGroups: [''], resources: ['configmaps/finalizers'], verbs: ['update'] }, { apiGroups: ['own.example.com'], resources: ['widgets/finalizers'], verbs: ['update'] }], NS);
  await grant('finalizer', [{ apiGroups: [''], resources: ['namespaces/finalizers'], verbs: ['update'] }]);
  await grant('anyfin', [{ apiGroups: [''], resources: ['configmaps'], verbs: ['create'], }, { apiGroups: ['*'], resources: ['*/finalizers'], verbs: ['update'] }]);
  const o = (await c.post(CM, cm('owner'))).body;
  owner = { apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: o.metadata.uid };
  const w = await c.post(WIDGETS, { apiVersion: 'own.example.com/v1', kind: 'Widget', metadata: { name: 'w' } });
  expectCode(w, 201);
  widget = { apiVersion: 'own.example.com/v1', kind: 'Widget', name: 'w', uid: w.body.metadata.uid };
  const n = (await c.get(`/api/v1/namespaces/${NS}`)).body;
  namespaceOwner = { apiVersion: 'v1', kind: 'Namespace', name: NS, uid: n.metadata.uid };
  // Every user's bindings are in the authorizer's cache.
  await eventually(async () => (await post('anyfin', CM, cm('probe-anyfin'))).status === 201, 10_000, 'RBAC for anyfin');
  await eventually(async () => (await post('dev', CM, cm('probe-dev'))).status === 201, 10_000, 'RBAC for dev');
  await eventually(async () => (await post('deleter', CM, cm('probe-deleter'))).status === 201, 10_000, 'RBAC for deleter');
  await eventually(async () => (await post('finalizer', CM, cm('probe-finalizer', [{ ...namespaceOwner, blockOwnerDeletion: true }]))).status === 201, 10_000, 'RBAC for finalizer');
}

describe('OwnerReferencesPermissionEnforcement: create', () => {
  before(setUp);

  it('a creator may set non-blocking references without any other permission', async () => {
    expectCode(await post('dev', CM, cm('c-plain', [owner, { ...owner, name: 'other', uid: 'u-other', blockOwnerDeletion: false }])), 201);
  });

  it('a new blockOwnerDeletion reference needs update on the owner\'s finalizers', async () => {
    const blocking = { ...owner, blockOwnerDeletion: true };
    expectStatus(await post('dev', CM, cm('c-block', [blocking])), 403, 'Forbidden', `configmaps "c-block" is forbidden: ${CANNOT_FINALIZE}`);
    expectStatus(await post('deleter', CM, cm('c-block', [blocking])), 403, 'Forbidden', `configmaps "c-block" is forbidden: ${CANNOT_FINALIZE}`);
    assert.equal((await env.plinth.client.get(`${CM}/c-block`)).status, 404);
    const r = await post('finalizer', CM, cm('c-block', [blocking]));
    expectCode(r, 201);
    assert.deepEqual(r.body.metadata.ownerReferences, [blocking]);
  });

  it('the 403 names the object by generateName before it has a name, and the details are kube\'s', async () => {
    const r = await post('dev', CM, { metadata: { generateName: 'gen-', ownerReferences: [{ ...owner, blockOwnerDeletion: true }] } });
    expectStatus(r, 403, 'Forbidden');
    assert.match(r.body.message, /^configmaps "gen-[a-z0-9]{5}" is forbidden: /);
    assert.deepEqual(r.body.details, { name: r.body.message.match(/"(gen-[a-z0-9]+)"/)[1], kind: 'configmaps' });
  });

  it('maps custom resource owners (the CRD\'s group and plural) and cluster-scoped owners (no namespace)', async () => {
    expectStatus(await post('dev', CM, cm('c-widget', [{ ...widget, blockOwnerDeletion: true }])), 403, 'Forbidden', `configmaps "c-widget" is forbidden: ${CANNOT_FINALIZE}`);
    expectCode(await post('finalizer', CM, cm('c-widget', [{ ...widget, blockOwnerDeletion: true }])), 201);
    expectStatus(await post('deleter', CM, cm('c-ns', [{ ...namespaceOwner, blockOwnerDeletion: true }])), 403, 'Forbidden', `configmaps "c-ns" is forbidden: ${CANNOT_FINALIZE}`);
    expectCode(await post('finalizer', CM, cm('c-ns', [{ ...namespaceOwner, blockOwnerDeletion: true }])), 201);
    // The kind as discovery lists it or lower-cased, as kube's discovery REST mapper has it.
    expectCode(await post('finalizer', CM, cm('c-lower', [{ ...owner, kind: 'configmap', blockOwnerDeletion: true }])), 201);
  });

  it('an owner kind that maps to no served resource is kube\'s 403', async () => {
    const thing = { apiVersion: 'nope.example.com/v1', kind: 'Thing', name: 't', uid: 'u-thing', blockOwnerDeletion: true };
    expectStatus(
      await post('finalizer', CM, cm('c-thing', [thing])),
      403,
      'Forbidden',
      'configmaps "c-thing" is forbidden: cannot set blockOwnerDeletion in this case because cannot find RESTMapping for APIVersion nope.example.com/v1 Kind Thing: no matches for kind "Thing" in version "nope.example.com/v1"',
    );
    expectStatus(
      await post('finalizer', CM, cm('c-thing', [{ ...owner, apiVersion: 'v2', blockOwnerDeletion: true }])),
      403,
      'Forbidden',
      'configmaps "c-thing" is forbidden: cannot set blockOwnerDeletion in this case because cannot find RESTMapping for APIVersion v2 Kind ConfigMap: no matches for kind "ConfigMap" in version "v2"',
    );
  });

  it('update on every resource\'s finalizers cluster-wide allows any blocking reference, mapped or not', async () => {
    const thing = { apiVersion: 'nope.example.com/v1', kind: 'Thing', name: 't', uid: 'u-thing', blockOwnerDeletion: true };
    expectCode(await post('anyfin', CM, cm('c-any', [thing, { ...owner, blockOwnerDeletion: true }])), 201);
  });
});

describe('OwnerReferencesPermissionEnforcement: update', () => {
  before(setUp);

  const put = async (user: User, name: string, change: (o: { metadata: Record<string, unknown> }) => void) => {
    const current = (await env.plinth.client.get(`${CM}/${name}`)).body;
    change(current);
    return env.plinth.client.put(`${CM}/${name}`, current, as(user));
  };

  it('changing references needs delete on the object; other changes do not', async () => {
    expectCode(await env.plinth.client.post(CM, cm('u-1', [{ ...owner, blockOwnerDeletion: true }])), 201);
    // A label change keeps the references: allowed without delete or finalizers.
    expectCode(await put('dev', 'u-1', (o) => { o.metadata['labels'] = { a: 'b' }; }), 200);
    expectStatus(await put('dev', 'u-1', (o) => { o.metadata['ownerReferences'] = []; }), 403, 'Forbidden', `configmaps "u-1" is forbidden: ${CANNOT_DELETE}`);
    // Reordering is a change too (kube compares element by element).
    expectCode(await env.plinth.client.post(CM, cm('u-2', [owner, { ...owner, name: 'second', uid: 'u-second' }])), 201);
    expectStatus(await put('dev', 'u-2', (o) => { (o.metadata['ownerReferences'] as Ref[]).reverse(); }), 403, 'Forbidden', `configmaps "u-2" is forbidden: ${CANNOT_DELETE}`);
    expectCode(await put('deleter', 'u-2', (o) => { (o.metadata['ownerReferences'] as Ref[]).reverse(); }), 200);
    // Dropping a blocking reference needs only delete.
    expectCode(await put('deleter', 'u-1', (o) => { o.metadata['ownerReferences'] = []; }), 200);
  });

  it('a reference turned blocking (false or unset before) needs the owner\'s finalizers; one already blocking does not', async () => {
    expectCode(await env.plinth.client.post(CM, cm('u-3', [{ ...owner, blockOwnerDeletion: false }, { ...widget, blockOwnerDeletion: true }])), 201);
    const turnOn = (o: { metadata: Record<string, unknown> }) => { (o.metadata['ownerReferences'] as Ref[])[0]!.blockOwnerDeletion = true; };
    expectStatus(await put('deleter', 'u-3', turnOn), 403, 'Forbidden', `configmaps "u-3" is forbidden: ${CANNOT_FINALIZE}`);
    // The widget reference stays blocking and the owner's changes: only the owner's finalizers count.
    expectCode(await put('finalizer', 'u-3', turnOn), 200);
    // Adding a non-blocking reference next to the blocking ones needs delete only.
    expectCode(await put('deleter', 'u-3', (o) => { (o.metadata['ownerReferences'] as Ref[]).push({ ...owner, name: 'third', uid: 'u-third' }); }), 200);
  });

  it('a merge patch goes through the same checks', async () => {
    expectCode(await env.plinth.client.post(CM, cm('u-4')), 201);
    const patch = (user: User, refs: Ref[]) => env.plinth.client.request('PATCH', `${CM}/u-4`, { ...as(user), rawBody: JSON.stringify({ metadata: { ownerReferences: refs } }), headers: { 'content-type': 'application/merge-patch+json' } });
    expectStatus(await patch('dev', [owner]), 403, 'Forbidden', `configmaps "u-4" is forbidden: ${CANNOT_DELETE}`);
    expectStatus(await patch('deleter', [{ ...owner, blockOwnerDeletion: true }]), 403, 'Forbidden', `configmaps "u-4" is forbidden: ${CANNOT_FINALIZE}`);
    expectCode(await patch('finalizer', [{ ...owner, blockOwnerDeletion: true }]), 200);
  });
});
