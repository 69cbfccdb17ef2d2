import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { StoredObject, UserInfo } from '@plinth/api';
import type { Attributes } from '../authorizer.js';
import { createRBACAuthorizer, type RBACHandlers, type RBACKind, type RBACSource } from './authorizer.js';

/** A source the test drives by hand. */
function fakeSource(): RBACSource & { h: Record<RBACKind, RBACHandlers>; stopped: number } {
  const s = {
    h: {} as Record<RBACKind, RBACHandlers>,
    stopped: 0,
    subscribe(kind: RBACKind, handlers: RBACHandlers) {
      s.h[kind] = handlers;
      return () => void s.stopped++;
    },
  };
  return s;
}

const obj = (name: string, namespace: string | undefined, body: Record<string, unknown>): StoredObject =>
  ({ metadata: { name, ...(namespace ? { namespace } : {}) }, ...body }) as StoredObject;
const role = (name: string, ns: string | undefined, rules: unknown[]) => obj(name, ns, { rules });
const binding = (name: string, ns: string | undefined, kind: string, roleName: string, subjects: unknown[]) =>
  obj(name, ns, { roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind, name: roleName }, subjects });

const alice: UserInfo = { name: 'alice', groups: ['devs', 'system:authenticated'] };
const get = (user: UserInfo, resource: string, namespace: string, name = ''): Attributes => ({
  user,
  verb: 'get',
  isResourceRequest: true,
  path: '',
  apiGroup: '',
  apiVersion: 'v1',
  namespace,
  resource,
  subresource: '',
  name,
});
const podReader = [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }];

function setup() {
  const src = fakeSource();
  const z = createRBACAuthorizer({ source: src });
  for (const k of ['roles', 'clusterroles', 'rolebindings', 'clusterrolebindings'] as const) src.h[k].replace([]);
  return { src, z };
}

test('synced resolves once every kind was listed; close stops every subscription', async () => {
  const src = fakeSource();
  const z = createRBACAuthorizer({ source: src });
  let synced = false;
  void z.synced.then(() => (synced = true));
  src.h.roles.replace([]);
  src.h.clusterroles.replace([]);
  src.h.rolebindings.replace([]);
  await new Promise((r) => setImmediate(r));
  assert.equal(synced, false);
  src.h.clusterrolebindings.replace([]);
  await z.synced;
  z.close!();
  assert.equal(src.stopped, 4);
});

test('a RoleBinding grants its Role or a ClusterRole in its namespace only', () => {
  const { src, z } = setup();
  src.h.roles.upsert(role('reader', 'a', podReader));
  src.h.clusterroles.upsert(role('cluster-reader', undefined, [{ verbs: ['get'], apiGroups: [''], resources: ['secrets'] }]));
  src.h.rolebindings.upsert(binding('rb', 'a', 'Role', 'reader', [{ kind: 'User', name: 'alice' }]));
  src.h.rolebindings.upsert(binding('rb2', 'a', 'ClusterRole', 'cluster-reader', [{ kind: 'Group', name: 'devs' }]));
  assert.equal(z.authorize(get(alice, 'pods', 'a')).decision, 'allow');
  assert.equal(z.authorize(get(alice, 'secrets', 'a')).decision, 'allow');
  assert.equal(z.authorize(get(alice, 'pods', 'b')).decision, 'no-opinion');
  assert.equal(z.authorize(get(alice, 'secrets', '')).decision, 'no-opinion', 'not at cluster scope');
  // A Role of another namespace with the same name is not the binding's.
  src.h.roles.upsert(role('other', 'b', podReader));
  src.h.rolebindings.upsert(binding('rb3', 'b', 'Role', 'reader', [{ kind: 'User', name: 'alice' }]));
  assert.deepEqual(z.authorize(get(alice, 'pods', 'b')), { decision: 'no-opinion', reason: 'RBAC: role.rbac.authorization.k8s.io "reader" not found' });
});

test('a ClusterRoleBinding grants everywhere; deletions and updates are seen', () => {
  const { src, z } = setup();
  src.h.clusterroles.upsert(role('reader', undefined, podReader));
  const crb = binding('crb', undefined, 'ClusterRole', 'reader', [{ kind: 'User', name: 'alice' }]);
  src.h.clusterrolebindings.upsert(crb);
  assert.equal(z.authorize(get(alice, 'pods', 'x')).decision, 'allow');
  assert.equal(z.authorize(get(alice, 'pods', '')).decision, 'allow');
  // The binding now names someone else: alice loses access.
  src.h.clusterrolebindings.upsert(binding('crb', undefined, 'ClusterRole', 'reader', [{ kind: 'User', name: 'bob' }]));
  assert.equal(z.authorize(get(alice, 'pods', 'x')).decision, 'no-opinion');
  src.h.clusterrolebindings.upsert(crb);
  src.h.clusterroles.upsert(role('reader', undefined, []));
  assert.equal(z.authorize(get(alice, 'pods', 'x')).decision, 'no-opinion', 'role rules updated');
  src.h.clusterroles.remove(role('reader', undefined, []));
  assert.deepEqual(z.authorize(get(alice, 'pods', 'x')), { decision: 'no-opinion', reason: 'RBAC: clusterrole.rbac.authorization.k8s.io "reader" not found' });
  src.h.clusterrolebindings.remove(crb);
  assert.deepEqual(z.authorize(get(alice, 'pods', 'x')), { decision: 'no-opinion' });
});

test('a relist replaces what was known (deletions missed while not watching)', () => {
  const { src, z } = setup();
  src.h.clusterroles.upsert(role('reader', undefined, podReader));
  src.h.clusterrolebindings.upsert(binding('crb', undefined, 'ClusterRole', 'reader', [{ kind: 'Group', name: 'devs' }]));
  assert.equal(z.authorize(get(alice, 'pods', 'x')).decision, 'allow');
  src.h.clusterrolebindings.replace([]);
  assert.equal(z.authorize(get(alice, 'pods', 'x')).decision, 'no-opinion');
});

test('service-account subjects: namespace defaults to the RoleBinding\'s', () => {
  const { src, z } = setup();
  const sa: UserInfo = { name: 'system:serviceaccount:a:builder', groups: ['system:serviceaccounts', 'system:serviceaccounts:a'] };
  src.h.clusterroles.upsert(role('reader', undefined, podReader));
  src.h.rolebindings.upsert(binding('rb', 'a', 'ClusterRole', 'reader', [{ kind: 'ServiceAccount', name: 'builder' }]));
  assert.equal(z.authorize(get(sa, 'pods', 'a')).decision, 'allow');
  // At cluster scope a service account subject needs a namespace.
  src.h.clusterrolebindings.upsert(binding('crb', undefined, 'ClusterRole', 'reader', [{ kind: 'ServiceAccount', name: 'builder' }]));
  assert.equal(z.authorize(get(sa, 'pods', 'b')).decision, 'no-opinion');
  src.h.clusterrolebindings.upsert(binding('crb', undefined, 'ClusterRole', 'reader', [{ kind: 'ServiceAccount', name: 'builder', namespace: 'a' }]));
  assert.equal(z.authorize(get(sa, 'pods', 'b')).decision, 'allow');
});

test('several missing roles are one aggregated reason; rulesFor lists the rules and what is missing', () => {
  const { src, z } = setup();
  src.h.clusterroles.upsert(
    role('mixed', undefined, [
      { verbs: ['get'], apiGroups: [''], resources: ['pods'], resourceNames: ['p'] },
      { verbs: ['get'], nonResourceURLs: ['/healthz'] },
    ]),
  );
  src.h.clusterrolebindings.upsert(binding('c1', undefined, 'ClusterRole', 'gone', [{ kind: 'User', name: 'alice' }]));
  src.h.clusterrolebindings.upsert(binding('c2', undefined, 'ClusterRole', 'mixed', [{ kind: 'User', name: 'alice' }, { kind: 'Group', name: 'devs' }]));
  src.h.rolebindings.upsert(binding('r1', 'a', 'Role', 'absent', [{ kind: 'Group', name: 'devs' }]));
  assert.deepEqual(z.authorize(get(alice, 'secrets', 'a')), {
    decision: 'no-opinion',
    reason: 'RBAC: [clusterrole.rbac.authorization.k8s.io "gone" not found, role.rbac.authorization.k8s.io "absent" not found]',
  });
  const r = z.rulesFor(alice, 'a');
  assert.deepEqual(r.resourceRules, [{ verbs: ['get'], apiGroups: [''], resources: ['pods'], resourceNames: ['p'] }]);
  assert.deepEqual(r.nonResourceRules, [{ verbs: ['get'], nonResourceURLs: ['/healthz'] }]);
  assert.equal(r.incomplete, true);
  assert.equal(r.evaluationError, '[clusterrole.rbac.authorization.k8s.io "gone" not found, role.rbac.authorization.k8s.io "absent" not found]');
  assert.deepEqual(z.rulesFor({ name: 'nobody', groups: [] }, 'a'), { resourceRules: [], nonResourceRules: [], incomplete: false });
});

test("an allow names the binding, role and subject, as kube's RBAC reason does", () => {
  const { src, z } = setup();
  src.h.roles.upsert(role('reader', 'a', podReader));
  src.h.rolebindings.upsert(binding('alice-reads', 'a', 'Role', 'reader', [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'alice' }]));
  src.h.clusterroles.upsert(role('secret-reader', undefined, [{ verbs: ['get'], apiGroups: [''], resources: ['secrets'] }]));
  src.h.clusterrolebindings.upsert(binding('devs-secrets', undefined, 'ClusterRole', 'secret-reader', [{ kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: 'devs' }]));
  src.h.clusterrolebindings.upsert(binding('robot-secrets', undefined, 'ClusterRole', 'secret-reader', [{ kind: 'ServiceAccount', name: 'robot', namespace: 'ci' }]));
  assert.deepEqual(z.authorize(get(alice, 'pods', 'a')), { decision: 'allow', reason: 'RBAC: allowed by RoleBinding "alice-reads/a" of Role "reader" to User "alice"' });
  assert.deepEqual(z.authorize(get(alice, 'secrets', 'b')), { decision: 'allow', reason: 'RBAC: allowed by ClusterRoleBinding "devs-secrets" of ClusterRole "secret-reader" to Group "devs"' });
  const robot: UserInfo = { name: 'system:serviceaccount:ci:robot', groups: ['system:serviceaccounts', 'system:serviceaccounts:ci', 'system:authenticated'] };
  assert.deepEqual(z.authorize(get(robot, 'secrets', 'x')), { decision: 'allow', reason: 'RBAC: allowed by ClusterRoleBinding "robot-secrets" of ClusterRole "secret-reader" to ServiceAccount "robot/ci"' });
});
