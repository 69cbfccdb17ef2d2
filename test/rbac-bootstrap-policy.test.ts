/**
 * kube 1.24's default RBAC policy on a fresh start, compared with a committed list derived from
 * kube 1.24.0's bootstrappolicy sources (test/fixtures/rbac-bootstrap-1.24.json): every
 * ClusterRole with its rules (the aggregated admin/edit/view filled by the aggregation
 * controller), every ClusterRoleBinding, the kube-system and kube-public Roles and RoleBindings;
 * and `kubectl auth can-i --list --as=system:kube-scheduler` lists what those give the scheduler.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT, eventually, kubectlPath, usePlinth } from './harness.js';
import { expectCode } from './assertions.js';

interface Rule {
  verbs: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}
interface Subject {
  kind: string;
  apiGroup?: string;
  name: string;
  namespace?: string;
}
interface Expected {
  clusterRoles: Array<{ name: string; labels: Record<string, string>; rules?: Rule[]; aggregateFrom?: string[] }>;
  clusterRoleBindings: Array<{ name: string; roleRef: string; subjects: Subject[] }>;
  roles: Array<{ namespace: string; name: string; rules: Rule[] }>;
  roleBindings: Array<{ namespace: string; name: string; roleRef: string; subjects: Subject[] }>;
}

const expected = JSON.parse(readFileSync(join(REPO_ROOT, 'test/fixtures/rbac-bootstrap-1.24.json'), 'utf8')) as Expected;
const RBAC = '/apis/rbac.authorization.k8s.io/v1';
const DEFAULTS = 'labelSelector=kubernetes.io%2Fbootstrapping%3Drbac-defaults';
/**
 * The APISelfSubjectReview gate is off by default, so the policy is exactly kube 1.24's (the gate's
 * extra system:basic-user rule is checked in authz-policy.test.ts, which turns it on).
 */

const env = usePlinth();
const client = () => env.plinth.client;

async function listItems(path: string): Promise<any[]> {
  const res = await client().get(path);
  expectCode(res, 200, path);
  return res.body.items;
}

const DEFAULT_META = { labels: { 'kubernetes.io/bootstrapping': 'rbac-defaults' }, annotations: { 'rbac.authorization.kubernetes.io/autoupdate': 'true' } };

describe("kube 1.24's default RBAC policy on a fresh start", () => {
  it('every ClusterRole, with its labels, annotation and rules (table of names and rule counts)', async () => {
    const got = new Map((await listItems(`${RBAC}/clusterroles?${DEFAULTS}`)).map((r) => [r.metadata.name, r]));
    assert.deepEqual([...got.keys()].sort(), expected.clusterRoles.map((r) => r.name).sort());
    assert.equal(got.size, 62);
    const counts = (m: Array<[string, number]>) => Object.fromEntries(m);
    assert.deepEqual(
      counts(expected.clusterRoles.filter((r) => r.rules).map((r) => [r.name, got.get(r.name).rules.length])),
      counts(expected.clusterRoles.filter((r) => r.rules).map((r) => [r.name, r.rules!.length])),
    );
    for (const want of expected.clusterRoles) {
      const role = got.get(want.name);
      assert.deepEqual(role.metadata.labels, { ...DEFAULT_META.labels, ...want.labels }, want.name);
      assert.deepEqual(role.metadata.annotations, DEFAULT_META.annotations, want.name);
      if (want.aggregateFrom) {
        assert.deepEqual(role.aggregationRule, { clusterRoleSelectors: want.aggregateFrom.map((l) => ({ matchLabels: { [l]: 'true' } })) }, want.name);
      } else {
        assert.deepEqual(role.rules, want.rules!, want.name);
        assert.equal(role.aggregationRule, undefined);
      }
    }
  });

  it('full rule sets of system:node, system:kube-scheduler and system:controller:replicaset-controller', async () => {
    const role = async (name: string) => (await client().get(`${RBAC}/clusterroles/${name}`)).body;
    const scheduler = await role('system:kube-scheduler');
    assert.deepEqual(scheduler.rules.slice(0, 3), [
      { verbs: ['create', 'patch', 'update'], apiGroups: ['', 'events.k8s.io'], resources: ['events'] },
      { verbs: ['create'], apiGroups: ['coordination.k8s.io'], resources: ['leases'] },
      { verbs: ['get', 'update'], apiGroups: ['coordination.k8s.io'], resources: ['leases'], resourceNames: ['kube-scheduler'] },
    ]);
    assert.deepEqual(scheduler.rules.at(-1), { verbs: ['get', 'list', 'watch'], apiGroups: ['storage.k8s.io'], resources: ['csistoragecapacities'] });
    const node = await role('system:node');
    assert.equal(node.rules.length, 22);
    assert.deepEqual(node.rules.find((r: Rule) => r.resources?.includes('pods/eviction')), { verbs: ['create'], apiGroups: [''], resources: ['pods/eviction'] });
    assert.deepEqual((await role('system:controller:replicaset-controller')).rules, [
      { verbs: ['get', 'list', 'update', 'watch'], apiGroups: ['apps', 'extensions'], resources: ['replicasets'] },
      { verbs: ['update'], apiGroups: ['apps', 'extensions'], resources: ['replicasets/status'] },
      { verbs: ['update'], apiGroups: ['apps', 'extensions'], resources: ['replicasets/finalizers'] },
      { verbs: ['create', 'delete', 'list', 'patch', 'watch'], apiGroups: [''], resources: ['pods'] },
      { verbs: ['create', 'patch', 'update'], apiGroups: ['', 'events.k8s.io'], resources: ['events'] },
    ]);
  });

  it('admin, edit and view aggregate the rules of the roles labelled for them', async () => {
    const rules = async (name: string): Promise<Rule[]> => (await client().get(`${RBAC}/clusterroles/${name}`)).body.rules ?? [];
    const has = (all: Rule[], some: Rule[]) => some.every((r) => all.some((x) => JSON.stringify(x) === JSON.stringify(r)));
    const byName = new Map(expected.clusterRoles.map((r) => [r.name, r.rules ?? []]));
    const view = byName.get('system:aggregate-to-view')!;
    const edit = byName.get('system:aggregate-to-edit')!;
    const admin = byName.get('system:aggregate-to-admin')!;
    await eventually(async () => has(await rules('view'), view) && has(await rules('edit'), [...edit, ...view]) && has(await rules('admin'), [...admin, ...edit, ...view]), 20_000, 'aggregated rules');
  });

  it('every ClusterRoleBinding, with its role and subjects', async () => {
    const got = new Map((await listItems(`${RBAC}/clusterrolebindings?${DEFAULTS}`)).map((b) => [b.metadata.name, b]));
    assert.deepEqual([...got.keys()].sort(), expected.clusterRoleBindings.map((b) => b.name).sort());
    for (const want of expected.clusterRoleBindings) {
      const b = got.get(want.name);
      assert.deepEqual(b.roleRef, { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: want.roleRef }, want.name);
      assert.deepEqual(b.subjects ?? [], want.subjects, want.name);
      assert.deepEqual(b.metadata.annotations, DEFAULT_META.annotations, want.name);
    }
  });

  it('the Roles and RoleBindings of kube-system and kube-public', async () => {
    const roles = [...(await listItems(`${RBAC}/namespaces/kube-system/roles?${DEFAULTS}`)), ...(await listItems(`${RBAC}/namespaces/kube-public/roles?${DEFAULTS}`))];
    assert.deepEqual(
      roles.map((r) => ({ namespace: r.metadata.namespace, name: r.metadata.name, rules: r.rules })).sort((a, b) => `${a.namespace}/${a.name}`.localeCompare(`${b.namespace}/${b.name}`)),
      [...expected.roles].sort((a, b) => `${a.namespace}/${a.name}`.localeCompare(`${b.namespace}/${b.name}`)),
    );
    const bindings = [...(await listItems(`${RBAC}/namespaces/kube-system/rolebindings?${DEFAULTS}`)), ...(await listItems(`${RBAC}/namespaces/kube-public/rolebindings?${DEFAULTS}`))];
    assert.deepEqual(
      bindings
        .map((b) => ({ namespace: b.metadata.namespace, name: b.metadata.name, roleRef: b.roleRef.name, subjects: b.subjects, kind: b.roleRef.kind }))
        .sort((a, b) => `${a.namespace}/${a.name}`.localeCompare(`${b.namespace}/${b.name}`)),
      [...expected.roleBindings].map((b) => ({ ...b, kind: 'Role' })).sort((a, b) => `${a.namespace}/${a.name}`.localeCompare(`${b.namespace}/${b.name}`)),
    );
  });
});

/** kubectl's `auth can-i --list` rows as (resource, non-resource URL, names) → verbs. */
function parseList(out: string): Map<string, Set<string>> {
  const rows = new Map<string, Set<string>>();
  for (const line of out.split('\n').slice(1)) {
    const m = /^(\S*)\s+\[([^\]]*)\]\s+\[([^\]]*)\]\s+\[([^\]]*)\]\s*$/.exec(line.trim() === '' ? '' : line.replace(/^\s+(?=\[)/, ' '));
    if (!m) continue;
    const key = `${m[1]}|${m[2]}|${m[3]}`;
    const verbs = rows.get(key) ?? new Set<string>();
    for (const v of m[4]!.split(' ').filter(Boolean)) verbs.add(v);
    rows.set(key, verbs);
  }
  return rows;
}

/** The same rows from rules, as kubectl breaks them down (a row per resource or URL, names kept). */
function rowsOf(rules: Rule[]): Map<string, Set<string>> {
  const rows = new Map<string, Set<string>>();
  const add = (key: string, verbs: string[]) => {
    const s = rows.get(key) ?? new Set<string>();
    for (const v of verbs) s.add(v);
    rows.set(key, s);
  };
  for (const r of rules) {
    if (r.nonResourceURLs) for (const u of r.nonResourceURLs) add(`|${u}|`, r.verbs);
    for (const g of r.apiGroups ?? []) {
      for (const res of r.resources ?? []) add(`${g ? `${res}.${g}` : res}||${(r.resourceNames ?? []).join(' ')}`, r.verbs);
    }
  }
  return rows;
}

describe('kubectl auth can-i --list --as=system:kube-scheduler', () => {
  const kubectl = (args: string[]): Promise<{ code: number; stdout: string; stderr: string }> =>
    new Promise((resolve) => {
      execFile(kubectlPath(), ['--kubeconfig', env.plinth.server.kubeconfigPath, ...args], { timeout: 60_000 }, (err, stdout, stderr) => resolve({ code: err ? 1 : 0, stdout, stderr }));
    });
  /** What the scheduler's user and its group system:authenticated are bound to, in `namespace`. */
  const rulesFor = (namespace: string): Rule[] => {
    const mine = (s: Subject[]) => s.some((x) => (x.kind === 'User' && x.name === 'system:kube-scheduler') || (x.kind === 'Group' && x.name === 'system:authenticated'));
    const byName = new Map(expected.clusterRoles.map((r) => [r.name, r.rules ?? []]));
    const cluster = expected.clusterRoleBindings.filter((b) => mine(b.subjects)).flatMap((b) => byName.get(b.roleRef)!);
    const local = expected.roleBindings.filter((b) => b.namespace === namespace && mine(b.subjects)).flatMap((b) => expected.roles.find((r) => r.namespace === namespace && r.name === b.roleRef)!.rules);
    return [...cluster, ...local];
  };

  for (const ns of ['default', 'kube-system']) {
    it(`in ${ns}: the rules of its bindings, row for row`, async () => {
      const r = await kubectl(['auth', 'can-i', '--list', '--as=system:kube-scheduler', '-n', ns]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout.split('\n')[0]!, /^Resources\s+Non-Resource URLs\s+Resource Names\s+Verbs/);
      const got = parseList(r.stdout);
      const want = rowsOf(rulesFor(ns));
      assert.ok(want.size > 30 && got.size === want.size, `${got.size} rows`);
      if (ns === 'kube-system') assert.ok(got.has('configmaps||extension-apiserver-authentication'), 'the namespace Role is listed');
      const show = (m: Map<string, Set<string>>) => [...m].map(([k, v]) => `${k} ${[...v].sort().join(',')}`).sort();
      assert.deepEqual(show(got), show(want), r.stdout);
    });
  }
});
