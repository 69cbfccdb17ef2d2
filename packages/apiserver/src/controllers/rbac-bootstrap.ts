/**
 * The `rbac/bootstrap-roles` post-start hook (kube's pkg/registry/rbac/rest/storage_rbac.go,
 * ensureRBACPolicy): the default ClusterRoles and ClusterRoleBindings are created when missing and
 * reconciled when present (missing rules, selectors and subjects added; nothing removed; objects
 * annotated autoupdate "false" left alone). Safe with several replicas at once: creates tolerate
 * AlreadyExists, updates carry the read resourceVersion and are redone on Conflict.
 */
import { isAlreadyExists, isConflict, isNotFound, type StoredObject, type UserInfo } from '@plinth/api';
import {
  bootstrapClusterRoleBindings,
  bootstrapClusterRoles,
  reconcileClusterRole,
  reconcileClusterRoleBinding,
  type ReconcilableObject,
  type ReconcileResult,
} from '@plinth/auth';
import type { ResourceStore } from '../registry/store.js';
import type { Logger } from '../log.js';

const BOOTSTRAP_USER: UserInfo = { name: 'system:apiserver', groups: ['system:masters'] };
const MAX_ATTEMPTS = 10;

type Reconcile = (existing: ReconcilableObject, expected: ReconcilableObject) => ReconcileResult<ReconcilableObject>;

/** One object: create-if-missing or reconcile, redone from a fresh read when another writer raced us. */
async function ensureObject(store: ResourceStore, expected: ReconcilableObject, reconcile: Reconcile, log: Logger): Promise<void> {
  const scope = { user: BOOTSTRAP_USER, namespace: '' };
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
        await store.create(scope, structuredClone(expected) as unknown as StoredObject);
        log.v(2, 'rbac: created default object', { kind: store.def.kind, name });
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
      log.info('rbac: reconciled default object', { kind: store.def.kind, name });
      return;
    } catch (e) {
      const raced = isAlreadyExists(e) || isConflict(e) || isNotFound(e);
      if (!raced || attempt >= MAX_ATTEMPTS) throw e;
    }
  }
}

export interface BootstrapPolicyDeps {
  clusterRoles: ResourceStore;
  clusterRoleBindings: ResourceStore;
  log: Logger;
}

export async function ensureBootstrapPolicy(deps: BootstrapPolicyDeps): Promise<void> {
  for (const role of bootstrapClusterRoles()) {
    await ensureObject(deps.clusterRoles, role as unknown as ReconcilableObject, reconcileClusterRole, deps.log);
  }
  for (const binding of bootstrapClusterRoleBindings()) {
    await ensureObject(deps.clusterRoleBindings, binding as unknown as ReconcilableObject, reconcileClusterRoleBinding, deps.log);
  }
}

/** Whether every default object exists and needs no reconciliation (reads only: the watch cache). */
export async function bootstrapPolicyCurrent(deps: BootstrapPolicyDeps): Promise<boolean> {
  const scope = { user: BOOTSTRAP_USER, namespace: '' };
  const check = async (store: ResourceStore, expected: ReconcilableObject, reconcile: Reconcile): Promise<boolean> => {
    try {
      const existing = await store.get(scope, expected.metadata.name!, '0');
      const result = reconcile(existing as unknown as ReconcilableObject, expected);
      return result.protected || result.operation === 'none';
    } catch (e) {
      if (isNotFound(e)) return false;
      throw e;
    }
  };
  for (const role of bootstrapClusterRoles()) if (!(await check(deps.clusterRoles, role as unknown as ReconcilableObject, reconcileClusterRole))) return false;
  for (const binding of bootstrapClusterRoleBindings()) if (!(await check(deps.clusterRoleBindings, binding as unknown as ReconcilableObject, reconcileClusterRoleBinding))) return false;
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
