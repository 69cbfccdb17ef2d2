/**
 * RBAC authorization cost: a GET of one object by a user bound through RBAC (a RoleBinding to a
 * ClusterRole) while 5,000 RoleBindings and 1,000 ClusterRoles exist, against the same GET by
 * system:masters (which the union allows before any mode runs) — on a plinth of its own with a
 * token file for the RBAC user. The "raw" column of this row is the system:masters figure.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BenchContext } from '../lib/context.js';
import { phase } from '../lib/context.js';
import { KubeClient } from '../lib/http.js';
import { ensureNamespace, startPlinth } from '../lib/plinth.js';
import { runLoad } from '../lib/stats.js';

const RBAC = '/apis/rbac.authorization.k8s.io/v1';
const NAMESPACES = 50;
const USER_TOKEN = 'bench-rbac-user-token';

const body = (o: unknown): Buffer => Buffer.from(JSON.stringify(o));
const roleRef = (name: string) => ({ apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name });

export async function authzScenario(ctx: BenchContext): Promise<void> {
  const R = ctx.size(5000);
  const C = ctx.size(1000);
  const G = ctx.size(10000);
  const W = ctx.size(1000);
  const dir = mkdtempSync(join(tmpdir(), 'plinth-bench-authz-'));
  const tokens = join(dir, 'tokens.csv');
  // The bench user belongs to a few groups other bindings name, as users in a real cluster do.
  writeFileSync(tokens, `${USER_TOKEN},bench-user,bench-uid,"team-0,team-1,team-2"\n`);
  const plinth = await startPlinth({ etcdEndpoint: ctx.etcd.endpoint, prefix: '/bench-authz', maxSockets: 64, extraArgs: [`--token-auth-file=${tokens}`] });
  try {
    const admin = plinth.client;
    const user = new KubeClient({ ...admin.info, token: USER_TOKEN }, 64);
    const nsName = (i: number): string => `authz-${i % NAMESPACES}`;
    for (let i = 0; i < NAMESPACES; i++) await ensureNamespace(admin, nsName(i));
    ctx.log(`  creating ${C} ClusterRoles and ${R} RoleBindings`);
    const created = await runLoad(C, 32, async (i) => {
      await admin.json('POST', `${RBAC}/clusterroles`, body({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: `role-${i}` }, rules: [{ verbs: ['get', 'list'], apiGroups: [''], resources: [`things-${i}`, 'configmaps'] }] }), 201);
    });
    if (created.errors > 0) throw new Error(`creating ClusterRoles: ${created.firstError ?? ''}`);
    const bound = await runLoad(R, 32, async (i) => {
      // Other users' bindings; every 100th names one of the bench user's groups (to a role that does not grant the GET).
      const subjects = [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: `user-${i}` }, ...(i % 100 === 0 ? [{ kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: `team-${i % 3}` }] : [])];
      await admin.json('POST', `${RBAC}/namespaces/${nsName(i)}/rolebindings`, body({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: `rb-${i}` }, roleRef: roleRef(`role-${i % C}`), subjects }), 201);
    });
    if (bound.errors > 0) throw new Error(`creating RoleBindings: ${bound.firstError ?? ''}`);
    // The grant under test: read service accounts in authz-0.
    await admin.json('POST', `${RBAC}/clusterroles`, body({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'sa-reader' }, rules: [{ verbs: ['get'], apiGroups: [''], resources: ['serviceaccounts'] }] }), 201);
    await admin.json('POST', `${RBAC}/namespaces/authz-0/rolebindings`, body({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'bench-user-reads' }, roleRef: roleRef('sa-reader'), subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'bench-user' }] }), 201);
    await admin.json('POST', '/api/v1/namespaces/authz-0/serviceaccounts', body({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'target' } }), 201);
    const path = '/api/v1/namespaces/authz-0/serviceaccounts/target';
    // The binding reaches the authorizer through its informer.
    const deadline = Date.now() + 30_000;
    while ((await user.request('GET', path)).status !== 200) {
      if (Date.now() > deadline) throw new Error('the bench user was never allowed');
      await new Promise((r) => setTimeout(r, 100));
    }
    const get = (c: KubeClient) => async (): Promise<void> => {
      await c.json('GET', path, undefined, 200);
    };
    const own = { ...ctx, plinth };
    const masters = await phase(own, { name: 'authorized get c=32 (system:masters)', side: 'plinth', total: G, concurrency: 32, warmup: { total: W, op: get(admin) }, op: get(admin) });
    const rbac = await phase(own, { name: 'authorized get c=32 (RBAC user)', side: 'plinth', total: G, concurrency: 32, warmup: { total: W, op: get(user) }, op: get(user) });
    user.close();
    ctx.details['authz'] = { roleBindings: R, clusterRoles: C, masters, rbac };
    ctx.rows.push({
      scenario: `get by RBAC user (${R.toLocaleString('en-US')} RoleBindings) c=32`,
      unit: 'ops/s',
      plinth: rbac.opsPerSec,
      raw: masters.opsPerSec,
      target: { kind: 'ratioAtLeast', value: 0.8 },
      note: 'the raw etcd column is the same GET by system:masters',
    });
  } finally {
    await plinth.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
