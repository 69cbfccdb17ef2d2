/**
 * The `rbac/bootstrap-roles` post-start hook (kube's pkg/registry/rbac/rest/storage_rbac.go,
 * ensureRBACPolicy): kube 1.24's default ClusterRoles, ClusterRoleBindings, and kube-system /
 * kube-public Roles and RoleBindings are created when missing and reconciled when present
 * (missing rules, selectors and subjects added; nothing removed; objects annotated autoupdate
 * "false" left alone). Safe with several replicas at once: creates tolerate AlreadyExists, updates
 * carry the read resourceVersion and are redone on Conflict.
 */
import { isAlreadyExists, isConflict, isNotFound, type StoredObject, type UserInfo } from '@plinth/api';
import {
  bootstrapClusterRoleBindings,
  bootstrapClusterRoles,
  bootstrapRoleBindings,
  bootstrapRoles,
  reconcileClusterRole,
  reconcileClusterRoleBinding,
  type BootstrapPolicyOptions,
  type ReconcilableObject,
  type ReconcileResult,
} from '@plinth/auth';
import type { ResourceStore } from '../registry/store.js';
import type { Logger } from '../log.js';

const BOOTSTRAP_USER: UserInfo = { name: 'system:apiserver', groups: ['system:masters'] };
const MAX_ATTEMPTS = 10;

type Reconcile = (existing: ReconcilableObject, expected: ReconcilableObject) => ReconcileResult<ReconcilableObject>;

export interface BootstrapPolicyDeps {
  clusterRoles: ResourceStore;
  clusterRoleBindings: ResourceStore;
  roles: ResourceStore;
  roleBindings: ResourceStore;
  /** Where a Role's namespace is created when missing (kube's tryEnsureNamespace). */
  namespaces: ResourceStore;
  /** The feature gates the policy reads (kube's policy has gated rules). */
  policy?: BootstrapPolicyOptions;
  log: Logger;
}

/** One kind of default object, its store and its reconciliation (Roles reconcile as ClusterRoles do). */
interface PolicyKind {
  store: ResourceStore;
  objects: ReconcilableObject[];
  reconcile: Reconcile;
}

function policyKinds(deps: BootstrapPolicyDeps): PolicyKind[] {
  const opts = deps.policy ?? {};
  const asReconcilable = (xs: object[]): ReconcilableObject[] => xs as unknown as ReconcilableObject[];
  return [
    { store: deps.clusterRoles, objects: asReconcilable(bootstrapClusterRoles(opts)), reconcile: reconcileClusterRole },
    { store: deps.clusterRoleBindings, objects: asReconcilable(bootstrapClusterRoleBindings(opts)), reconcile: reconcileClusterRoleBinding },
    { store: deps.roles, objects: asReconcilable(bootstrapRoles()), reconcile: reconcileClusterRole },
    { store: deps.roleBindings, objects: asReconcilable(bootstrapRoleBindings()), reconcile: reconcileClusterRoleBinding },
  ];
}

/** kube's tryEnsureNamespace: the namespace of a default Role, created when missing. */
async function ensureNamespace(namespaces: ResourceStore, name: string): Promise<void> {
  const scope = { user: BOOTSTRAP_USER, namespace: '' };
  try {
    await namespaces.get(scope, name);
  } catch (e) {
    if (!isNotFound(e)) throw e;
    try {
      await namespaces.create(scope, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
    }
  }
}

/** One object: create-if-missing or reconcile, redone from a fresh read when another writer raced us. */
async function ensureObject(kind: PolicyKind, expected: ReconcilableObject, deps: BootstrapPolicyDeps): Promise<void> {
  const { store, reconcile } = kind;
  const namespace = typeof expected.metadata['namespace'] === 'string' ? expected.metadata['namespace'] : '';
  const scope = { user: BOOTSTRAP_USER, namespace };
  const name = expected.metadata.name!;
  for (let attempt = 1; ; attempt++) {
    try {
      let existing: StoredObject | undefined;
      try {
        existing = await store.get(scope, name);
      } catch (e) {
        if (!isNotFound(e)) throw e;
      }
      if (!existing) {
        if (namespace) await ensureNamespace(deps.namespaces, namespace);
        await store.create(scope, structuredClone(expected) as unknown as StoredObject);
        deps.log.v(2, 'rbac: created default object', { kind: store.def.kind, namespace, name });
        return;
      }
      const result = reconcile(existing as unknown as ReconcilableObject, expected);
      if (result.protected || result.operation === 'none') return;
      if (result.operation === 'recreate') {
        await store.delete(scope, name, { preconditions: { uid: existing.metadata.uid!, resourceVersion: existing.metadata.resourceVersion! } });
        continue; // created on the next pass
      }
      // The object as read, with its resourceVersion: a concurrent write makes this a Conflict.
      await store.update(scope, name, result.object as unknown as StoredObject);
      deps.log.info('rbac: reconciled default object', { kind: store.def.kind, namespace, name });
      return;
    } catch (e) {
      const raced = isAlreadyExists(e) || isConflict(e) || isNotFound(e);
      if (!raced || attempt >= MAX_ATTEMPTS) throw e;
    }
  }
}

export async function ensureBootstrapPolicy(deps: BootstrapPolicyDeps): Promise<void> {
  for (const kind of policyKinds(deps)) {
    for (const expected of kind.objects) await ensureObject(kind, expected, deps);
  }
}

/** Whether every default object exists and needs no reconciliation (reads only: the watch cache). */
export async function bootstrapPolicyCurrent(deps: BootstrapPolicyDeps): Promise<boolean> {
  for (const { store, objects, reconcile } of policyKinds(deps)) {
    for (const expected of objects) {
      const namespace = typeof expected.metadata['namespace'] === 'string' ? expected.metadata['namespace'] : '';
      try {
        const existing = await store.get({ user: BOOTSTRAP_USER, namespace }, expected.metadata.name!, '0');
        const result = reconcile(existing as unknown as ReconcilableObject, expected);
        if (!result.protected && result.operation !== 'none') return false;
      } catch (e) {
        if (isNotFound(e)) return false;
        throw e;
      }
    }
  }
  return true;
}

/**
 * The `rbac/bootstrap-roles` hook with leader election: the leader reconciles; the others wait
 * until the policy is current (nothing to write) — unless no leader has done it within
 * `fallbackMs` (e.g. the leader runs an older policy during a rolling upgrade), then they
 * reconcile themselves, which is safe (conflicts are redone) and what kube does on every replica.
 */
export async function ensureBootstrapPolicyElected(deps: BootstrapPolicyDeps & { isLeader(): boolean; fallbackMs: number; pollMs?: number }): Promise<void> {
  const deadline = Date.now() + deps.fallbackMs;
  for (;;) {
    if (await bootstrapPolicyCurrent(deps)) return;
    if (deps.isLeader() || Date.now() >= deadline) return ensureBootstrapPolicy(deps);
    await new Promise((r) => setTimeout(r, deps.pollMs ?? 500));
  }
}
