import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { reconcileClusterRole, reconcileClusterRoleBinding, type ReconcilableObject } from './reconcile.js';
import { AUTOUPDATE_ANNOTATION, bootstrapClusterRoleBindings, bootstrapClusterRoles } from './bootstrap-policy.js';

const expectedRole = (name: string): ReconcilableObject => bootstrapClusterRoles().find((x) => x.metadata.name === name)! as unknown as ReconcilableObject;
const expectedBinding = (name: string): ReconcilableObject => bootstrapClusterRoleBindings().find((x) => x.metadata.name === name)! as unknown as ReconcilableObject;

describe('reconcileClusterRole', () => {
  it('an up-to-date role needs nothing', () => {
    const want = expectedRole('system:auth-delegator');
    const r = reconcileClusterRole(structuredClone(want), want);
    assert.equal(r.operation, 'none');
    assert.equal(r.protected, false);
  });

  it('adds missing rules, labels and annotations; keeps user additions', () => {
    const want = expectedRole('system:auth-delegator');
    const existing: ReconcilableObject = {
      metadata: { name: 'system:auth-delegator', labels: { mine: 'x' }, annotations: {}, resourceVersion: '7' },
      rules: [{ verbs: ['create'], apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'] }, { verbs: ['get'], apiGroups: [''], resources: ['pods'] }],
    };
    const r = reconcileClusterRole(existing, want);
    assert.equal(r.operation, 'update');
    assert.deepEqual(r.object.rules, [
      { verbs: ['create'], apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'] },
      { verbs: ['get'], apiGroups: [''], resources: ['pods'] },
      { verbs: ['create'], apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'] },
    ]);
    assert.deepEqual(r.object.metadata.labels, { mine: 'x', 'kubernetes.io/bootstrapping': 'rbac-defaults' });
    assert.equal(r.object.metadata.annotations?.[AUTOUPDATE_ANNOTATION], 'true');
    assert.equal(r.object.metadata['resourceVersion'], '7', 'the update is conditional on what was read');
    assert.equal(existing.rules!.length, 2, 'the input is not changed');
  });

  it('autoupdate "false" is reported protected and keeps its value', () => {
    const want = expectedRole('view');
    const existing: ReconcilableObject = { metadata: { name: 'view', annotations: { [AUTOUPDATE_ANNOTATION]: 'false' } }, rules: [] };
    const r = reconcileClusterRole(existing, want);
    assert.equal(r.protected, true);
    assert.equal(r.object.metadata.annotations?.[AUTOUPDATE_ANNOTATION], 'false');
  });

  it('aggregated roles: aggregated rules are not extras; missing selectors are added', () => {
    const want = expectedRole('view');
    const existing: ReconcilableObject = {
      ...structuredClone(want),
      rules: [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }],
      aggregationRule: { clusterRoleSelectors: [{ matchLabels: { custom: 'true' } }] },
    };
    const r = reconcileClusterRole(existing, want);
    assert.equal(r.operation, 'update');
    assert.deepEqual(r.object.aggregationRule?.clusterRoleSelectors, [{ matchLabels: { custom: 'true' } }, { matchLabels: { 'rbac.authorization.k8s.io/aggregate-to-view': 'true' } }]);
    assert.deepEqual(r.object.rules, [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }]);
  });
});

describe('reconcileClusterRoleBinding', () => {
  it('adds missing subjects and keeps others', () => {
    const want = expectedBinding('system:public-info-viewer');
    const existing = structuredClone(want);
    existing.subjects = [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'carol' }, want.subjects![0]!];
    const r = reconcileClusterRoleBinding(existing, want);
    assert.equal(r.operation, 'update');
    assert.deepEqual(r.object.subjects!.map((s) => s.name), ['carol', 'system:authenticated', 'system:unauthenticated']);
    assert.equal(reconcileClusterRoleBinding(r.object, want).operation, 'none');
  });

  it('a different roleRef is recreated as expected', () => {
    const want = expectedBinding('system:discovery');
    const existing = { ...structuredClone(want), roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' } };
    const r = reconcileClusterRoleBinding(existing, want);
    assert.equal(r.operation, 'recreate');
    assert.deepEqual(r.object.roleRef, want.roleRef);
  });
});

describe('bootstrap policy data', () => {
  it("kube's labels and annotation on every object; view/edit/admin aggregate", () => {
    for (const o of [...bootstrapClusterRoles(), ...bootstrapClusterRoleBindings()]) {
      assert.equal(o.metadata.labels['kubernetes.io/bootstrapping'], 'rbac-defaults', o.metadata.name);
      assert.equal(o.metadata.annotations[AUTOUPDATE_ANNOTATION], 'true', o.metadata.name);
    }
    const roles = new Map(bootstrapClusterRoles().map((x) => [x.metadata.name, x]));
    for (const n of ['admin', 'edit', 'view']) {
      assert.deepEqual(roles.get(n)!.aggregationRule, { clusterRoleSelectors: [{ matchLabels: { [`rbac.authorization.k8s.io/aggregate-to-${n}`]: 'true' } }] });
      assert.equal(roles.get(n)!.rules, undefined);
    }
    // Sorted, as kube's rule builder stores every list.
    assert.deepEqual(roles.get('system:public-info-viewer')!.rules, [{ verbs: ['get'], nonResourceURLs: ['/healthz', '/livez', '/readyz', '/version', '/version/'] }]);
  });

  it("kube 1.24's rules for configmaps, events and leases in the aggregated roles", () => {
    const roles = new Map(bootstrapClusterRoles().map((x) => [x.metadata.name, x]));
    const rulesFor = (role: string, group: string, resource: string): string[][] =>
      roles.get(role)!.rules!.filter((r) => r.apiGroups?.includes(group) && r.resources?.includes(resource)).map((r) => r.verbs);
    const Write = ['create', 'delete', 'deletecollection', 'patch', 'update'];
    const Read = ['get', 'list', 'watch'];
    assert.deepEqual(rulesFor('system:aggregate-to-edit', '', 'configmaps'), [Write]);
    assert.deepEqual(rulesFor('system:aggregate-to-edit', '', 'events'), [Write]);
    assert.deepEqual(rulesFor('system:aggregate-to-view', '', 'configmaps'), [Read]);
    assert.deepEqual(rulesFor('system:aggregate-to-view', '', 'events'), [Read]);
    // Later kube added these to edit (pods/eviction, serviceaccounts/token, leases); 1.24 has none.
    for (const [group, resource] of [['', 'pods/eviction'], ['', 'serviceaccounts/token'], ['coordination.k8s.io', 'leases'], ['events.k8s.io', 'events']]) {
      for (const role of ['system:aggregate-to-view', 'system:aggregate-to-edit', 'system:aggregate-to-admin']) assert.deepEqual(rulesFor(role, group!, resource!), [], `${role} ${resource}`);
    }
  });
});
