/**
 * kube's default RBAC policy against a real plinth and etcd: the default roles and bindings after
 * start, the ClusterRole aggregation controller, start-up reconciliation (autoupdate "false"
 * respected across a restart on the same etcd) and escalation prevention with kube's messages.
 * The escalation checks need RBAC as the authorizer (an authorizer that allows everyone
 * everything also allows `escalate`).
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { covers, type PolicyRule } from '@plinth/auth';
import { startTestEtcd, startInProcess, eventually, tempDir, type TestEtcd, type InProcessPlinth, type TestClient } from './harness.js';
import { expectCode, expectStatus } from './assertions.js';

const RBAC = '/apis/rbac.authorization.k8s.io/v1';
const G = 'rbac.authorization.k8s.io';
const clusterRole = (name = ''): string => `${RBAC}/clusterroles${name ? `/${encodeURIComponent(name)}` : ''}`;
const clusterBinding = (name = ''): string => `${RBAC}/clusterrolebindings${name ? `/${encodeURIComponent(name)}` : ''}`;
const roles = (ns: string, name = ''): string => `${RBAC}/namespaces/${ns}/roles${name ? `/${name}` : ''}`;
const bindings = (ns: string, name = ''): string => `${RBAC}/namespaces/${ns}/rolebindings${name ? `/${name}` : ''}`;
const BOB_TOKEN = 'bob-token-0123456789';

let etcd: TestEtcd;
let plinth: InProcessPlinth;
let c: TestClient;
let args: string[];

async function get(path: string): Promise<any> {
  const res = await c.get(path);
  expectCode(res, 200, `GET ${path}`);
  return res.body;
}

const allows = (rules: PolicyRule[] | undefined, want: PolicyRule): boolean => covers(rules ?? [], [want]).covered;

before(async () => {
  const dir = tempDir('plinth-authz-policy-');
  writeFileSync(join(dir, 'tokens.csv'), `${BOB_TOKEN},bob,1001\n`);
  args = [`--token-auth-file=${join(dir, 'tokens.csv')}`, '--feature-gates=APISelfSubjectReview=true'];
  etcd = await startTestEtcd();
  plinth = await startInProcess({ etcd, args });
  c = plinth.client;
});

after(async () => {
  await plinth?.stop();
  await etcd?.stop();
});

describe('default policy after start', () => {
  it("the default ClusterRoles carry kube's labels, annotation and rules", async () => {
    for (const name of ['cluster-admin', 'admin', 'edit', 'view', 'system:discovery', 'system:basic-user', 'system:public-info-viewer', 'system:monitoring', 'system:auth-delegator', 'system:service-account-issuer-discovery', 'system:aggregate-to-view']) {
      const r = await get(clusterRole(name));
      assert.equal(r.metadata.labels['kubernetes.io/bootstrapping'], 'rbac-defaults', name);
      assert.equal(r.metadata.annotations['rbac.authorization.kubernetes.io/autoupdate'], 'true', name);
    }
    assert.deepEqual((await get(clusterRole('view'))).aggregationRule, { clusterRoleSelectors: [{ matchLabels: { 'rbac.authorization.k8s.io/aggregate-to-view': 'true' } }] });
    // Every list of a rule sorted, as kube's rule builder stores them.
    assert.deepEqual((await get(clusterRole('system:public-info-viewer'))).rules, [{ verbs: ['get'], nonResourceURLs: ['/healthz', '/livez', '/readyz', '/version', '/version/'] }]);
    const basic = (await get(clusterRole('system:basic-user'))).rules;
    assert.ok(allows(basic, { verbs: ['create'], apiGroups: ['authentication.k8s.io'], resources: ['selfsubjectreviews'] }), 'kubectl auth whoami for everyone');
  });

  it('view, edit and admin are filled by aggregation: view cannot get secrets, edit can, admin manages rolebindings', async () => {
    const [view, edit, admin] = await eventually(async () => {
      const rs = await Promise.all(['view', 'edit', 'admin'].map((n) => get(clusterRole(n))));
      return rs.every((r) => (r.rules ?? []).length > 0) && allows(rs[2].rules, { verbs: ['get'], apiGroups: [''], resources: ['pods'] }) ? rs.map((r) => r.rules) : undefined;
    }, 10_000, 'aggregated rules');
    const secrets = { verbs: ['get'], apiGroups: [''], resources: ['secrets'] };
    assert.ok(allows(view, { verbs: ['list'], apiGroups: [''], resources: ['pods'] }));
    assert.ok(!allows(view, secrets), 'view cannot read secrets');
    assert.ok(allows(edit, secrets) && allows(edit, { verbs: ['create'], apiGroups: ['apps'], resources: ['deployments'] }));
    assert.ok(!allows(edit, { verbs: ['create'], apiGroups: [G], resources: ['rolebindings'] }));
    assert.ok(allows(admin, { verbs: ['create'], apiGroups: [G], resources: ['rolebindings'] }));
    assert.ok(allows(admin, secrets), 'admin includes edit');
  });

  it('the default ClusterRoleBindings bind the right groups', async () => {
    const subjects = async (name: string): Promise<string[]> => {
      const b = await get(clusterBinding(name));
      assert.deepEqual(b.roleRef, { apiGroup: G, kind: 'ClusterRole', name });
      return b.subjects.map((s: { kind: string; name: string }) => `${s.kind}:${s.name}`);
    };
    assert.deepEqual(await subjects('cluster-admin'), ['Group:system:masters']);
    assert.deepEqual(await subjects('system:discovery'), ['Group:system:authenticated']);
    assert.deepEqual(await subjects('system:basic-user'), ['Group:system:authenticated']);
    assert.deepEqual(await subjects('system:public-info-viewer'), ['Group:system:authenticated', 'Group:system:unauthenticated']);
    assert.deepEqual(await subjects('system:service-account-issuer-discovery'), ['Group:system:serviceaccounts']);
    assert.deepEqual(await subjects('system:monitoring'), ['Group:system:monitoring']);
  });
});

describe('ClusterRole aggregation', () => {
  const widgets = { verbs: ['get', 'list'], apiGroups: ['example.com'], resources: ['widgets'] };

  it('a user role labelled aggregate-to-view is folded into view (and so edit and admin), and leaves when deleted', async () => {
    const res = await c.post(clusterRole(), {
      apiVersion: `${G}/v1`,
      kind: 'ClusterRole',
      metadata: { name: 'widget-viewer', labels: { 'rbac.authorization.k8s.io/aggregate-to-view': 'true' } },
      rules: [widgets],
    });
    expectCode(res, 201);
    await eventually(async () => {
      const rs = await Promise.all(['view', 'edit', 'admin'].map((n) => get(clusterRole(n))));
      return rs.every((r) => allows(r.rules, widgets));
    }, 10_000, 'widgets in view, edit and admin');
    expectCode(await c.delete(clusterRole('widget-viewer')), 200);
    await eventually(async () => !allows((await get(clusterRole('view'))).rules, widgets), 10_000, 'widgets gone from view');
  });

  it('works for user-defined aggregated roles', async () => {
    expectCode(
      await c.post(clusterRole(), { apiVersion: `${G}/v1`, kind: 'ClusterRole', metadata: { name: 'monitoring-all' }, aggregationRule: { clusterRoleSelectors: [{ matchLabels: { 'example.com/monitoring': 'true' } }] } }),
      201,
    );
    expectCode(await c.post(clusterRole(), { apiVersion: `${G}/v1`, kind: 'ClusterRole', metadata: { name: 'monitoring-widgets', labels: { 'example.com/monitoring': 'true' } }, rules: [widgets] }), 201);
    const agg = await eventually(async () => {
      const r = await get(clusterRole('monitoring-all'));
      return r.rules?.length ? r : undefined;
    }, 10_000, 'monitoring-all aggregated');
    assert.deepEqual(agg.rules, [widgets]);
  });
});

describe('escalation prevention (RBAC authorizer)', () => {
  const bob = { token: BOB_TOKEN };
  const ns = 'escalation';
  const pods = { apiGroups: [''], resources: ['pods'], verbs: ['get'] };
  const secrets = { apiGroups: [''], resources: ['secrets'], verbs: ['get'] };
  const role = (name: string, rules: object[]) => ({ apiVersion: `${G}/v1`, kind: 'Role', metadata: { name }, rules });
  const binding = (name: string, kind: string, roleName: string) => ({
    apiVersion: `${G}/v1`,
    kind: 'RoleBinding',
    metadata: { name },
    roleRef: { apiGroup: G, kind, name: roleName },
    subjects: [{ kind: 'User', apiGroup: G, name: 'bob' }],
  });

  before(async () => {
    expectCode(await c.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }), 201);
    // bob may manage roles and bindings in the namespace and read pods; nothing else.
    expectCode(await c.post(roles(ns), role('rbac-manager', [pods, { apiGroups: [G], resources: ['roles', 'rolebindings'], verbs: ['create', 'update', 'get'] }])), 201);
    expectCode(await c.post(bindings(ns), binding('bob-manager', 'Role', 'rbac-manager')), 201);
    // The authorizer learns of the binding from its watch: until then bob is refused everything.
    await eventually(async () => (await c.get(roles(ns, 'not-there'), bob)).status === 404, 10_000, "bob's binding seen by the authorizer");
  });

  it('a role within what the user holds is allowed', async () => {
    expectCode(await c.post(roles(ns), role('pod-reader', [pods]), bob), 201);
  });

  it("a role granting more is refused with kube's message", async () => {
    const res = await c.post(roles(ns), role('secret-reader', [secrets]), bob);
    expectStatus(
      res,
      403,
      'Forbidden',
      'roles.rbac.authorization.k8s.io "secret-reader" is forbidden: user "bob" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}',
    );
    // An update adding the rule is refused the same way.
    const current = await get(roles(ns, 'pod-reader'));
    expectStatus(await c.put(roles(ns, 'pod-reader'), { ...current, rules: [pods, secrets] }, bob), 403, 'Forbidden', /is attempting to grant RBAC permissions not currently held:\n\{APIGroups:\[""\], Resources:\["secrets"\], Verbs:\["get"\]\}$/);
  });

  it('a binding to a role with more permissions is refused; `bind` on that role allows it', async () => {
    const res = await c.post(bindings(ns), binding('bob-view', 'ClusterRole', 'view'), bob);
    expectStatus(res, 403, 'Forbidden', /^rolebindings\.rbac\.authorization\.k8s\.io "bob-view" is forbidden: user "bob" \(groups=\["system:authenticated"\]\) is attempting to grant RBAC permissions not currently held:\n/);
    expectCode(await c.post(roles(ns), role('view-binder', [{ apiGroups: [G], resources: ['clusterroles'], verbs: ['bind'], resourceNames: ['view'] }])), 201);
    expectCode(await c.post(bindings(ns), binding('bob-view-binder', 'Role', 'view-binder')), 201);
    expectCode(await eventually(async () => {
      const r = await c.post(bindings(ns), binding('bob-view', 'ClusterRole', 'view'), bob);
      return r.status === 201 ? r : undefined;
    }, 5000, 'bind allowed'), 201);
  });

  it('`escalate` on roles allows granting what the user lacks', async () => {
    expectCode(await c.post(roles(ns), role('escalator', [{ apiGroups: [G], resources: ['roles'], verbs: ['escalate'] }])), 201);
    expectCode(await c.post(bindings(ns), binding('bob-escalator', 'Role', 'escalator')), 201);
    expectCode(await eventually(async () => {
      const r = await c.post(roles(ns), role('secret-reader', [secrets]), bob);
      return r.status === 201 ? r : undefined;
    }, 5000, 'escalate allowed'), 201);
  });

  it('system:masters may grant anything', async () => {
    expectCode(await c.post(roles(ns), role('everything', [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }])), 201);
  });
});

describe('reconciliation across a restart', () => {
  it('restores missing rules and subjects, keeps additions, and leaves autoupdate=false objects alone', async () => {
    // An administrator trims one role (autoupdate stays true) and takes over another.
    const delegator = await get(clusterRole('system:auth-delegator'));
    delegator.rules = [delegator.rules[0], { verbs: ['get'], apiGroups: [''], resources: ['configmaps'] }];
    expectCode(await c.put(clusterRole('system:auth-delegator'), delegator), 200);
    const basic = await get(clusterRole('system:basic-user'));
    basic.metadata.annotations['rbac.authorization.kubernetes.io/autoupdate'] = 'false';
    basic.rules = [{ verbs: ['create'], apiGroups: ['authorization.k8s.io'], resources: ['selfsubjectaccessreviews'] }];
    expectCode(await c.put(clusterRole('system:basic-user'), basic), 200);
    const discovery = await get(clusterBinding('system:discovery'));
    discovery.subjects = [{ kind: 'User', apiGroup: G, name: 'carol' }];
    expectCode(await c.put(clusterBinding('system:discovery'), discovery), 200);
    expectCode(await c.delete(clusterRole('system:monitoring')), 200);

    await plinth.stop();
    plinth = await startInProcess({ etcd, args });
    c = plinth.client;

    const d = (await get(clusterRole('system:auth-delegator'))).rules;
    assert.ok(allows(d, { verbs: ['create'], apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'] }), 'missing rule restored');
    assert.ok(allows(d, { verbs: ['get'], apiGroups: [''], resources: ['configmaps'] }), 'added rule kept');
    const b = await get(clusterRole('system:basic-user'));
    assert.equal(b.metadata.annotations['rbac.authorization.kubernetes.io/autoupdate'], 'false');
    assert.deepEqual(b.rules, basic.rules, 'autoupdate=false: untouched');
    const subjects = (await get(clusterBinding('system:discovery'))).subjects.map((s: { name: string }) => s.name);
    assert.deepEqual(subjects, ['carol', 'system:authenticated']);
    assert.ok((await get(clusterRole('system:monitoring'))).rules.length > 0, 'deleted default recreated');
  });
});

describe('replicas starting together', () => {
  it('two servers reconciling one fresh etcd at once both start, without duplicated rules or subjects', async () => {
    const fresh = await startTestEtcd();
    const servers: InProcessPlinth[] = [];
    try {
      servers.push(...(await Promise.all([startInProcess({ etcd: fresh }), startInProcess({ etcd: fresh })])));
      const client = servers[0]!.client;
      const bindingRes = await client.get(clusterBinding('system:public-info-viewer'));
      expectCode(bindingRes, 200);
      assert.deepEqual(bindingRes.body.subjects.map((s: { name: string }) => s.name), ['system:authenticated', 'system:unauthenticated']);
      const delegator = await client.get(clusterRole('system:auth-delegator'));
      assert.equal(delegator.body.rules.length, 2);
    } finally {
      await Promise.all(servers.map((s) => s.stop()));
      await fresh.stop();
    }
  });
});
