/**
 * The ClusterRole aggregation controller (kube's pkg/controller/clusterroleaggregation): the rules
 * of every ClusterRole with an `aggregationRule` are the union of the rules of the ClusterRoles
 * any of its selectors match (itself excluded), in name order, without duplicates; written only
 * when they differ. Any ClusterRole change re-evaluates every aggregated role, as kube does.
 */
import { isDeepStrictEqual } from 'node:util';
import { isNotFound, labelSelectorFromObject, type LabelSelectorObject, type StoredObject, type UserInfo } from '@plinth/api';
import type { PolicyRule } from '@plinth/auth';
import type { ResourceStore } from '../registry/store.js';
import type { Logger } from '../log.js';
import { runInformer } from './informer.js';

const CONTROLLER_USER: UserInfo = { name: 'system:serviceaccount:kube-system:clusterrole-aggregation-controller', groups: ['system:masters'] };

interface ClusterRoleLike {
  metadata: StoredObject['metadata'];
  rules?: PolicyRule[] | null;
  aggregationRule?: { clusterRoleSelectors?: LabelSelectorObject[] | null } | null;
}

/** A rule without empty lists, so `[]` and an absent list compare equal (kube's Semantic equality). */
function normalizeRule(r: PolicyRule): PolicyRule {
  const out: PolicyRule = { verbs: r.verbs ?? [] };
  if (r.apiGroups?.length) out.apiGroups = r.apiGroups;
  if (r.resources?.length) out.resources = r.resources;
  if (r.resourceNames?.length) out.resourceNames = r.resourceNames;
  if (r.nonResourceURLs?.length) out.nonResourceURLs = r.nonResourceURLs;
  return out;
}

/**
 * The rules `role` aggregates from `all` (every ClusterRole); undefined when it has no
 * aggregationRule or a selector is invalid (kube leaves such a role as it is).
 */
export function aggregatedRules(role: ClusterRoleLike, all: readonly ClusterRoleLike[]): PolicyRule[] | undefined {
  if (!role.aggregationRule) return undefined;
  const out: PolicyRule[] = [];
  const sorted = [...all].sort((a, b) => (a.metadata.name! < b.metadata.name! ? -1 : a.metadata.name! > b.metadata.name! ? 1 : 0));
  for (const sel of role.aggregationRule.clusterRoleSelectors ?? []) {
    let selector;
    try {
      selector = labelSelectorFromObject(sel);
    } catch {
      return undefined;
    }
    for (const other of sorted) {
      if (other.metadata.name === role.metadata.name || !selector.matches(other.metadata.labels)) continue;
      for (const r of other.rules ?? []) {
        const rule = normalizeRule(r);
        if (!out.some((x) => isDeepStrictEqual(x, rule))) out.push(rule);
      }
    }
  }
  return out;
}

const sameRules = (a: readonly PolicyRule[], b: readonly PolicyRule[]): boolean => isDeepStrictEqual(a.map(normalizeRule), b.map(normalizeRule));

export interface ClusterRoleAggregationDeps {
  clusterRoles: ResourceStore;
  log: Logger;
}

/** Starts the controller; returns a stop function. */
export function startClusterRoleAggregation(deps: ClusterRoleAggregationDeps): () => void {
  const scope = { user: CONTROLLER_USER, namespace: '' };
  let timer: NodeJS.Timeout | undefined;
  let running = false;
  let dirty = false;
  let stopped = false;

  const syncAll = async (): Promise<void> => {
    // The watch cache as it is: every ClusterRole, without an etcd round trip.
    const all = (await deps.clusterRoles.list(scope, { resourceVersion: '0' })).items as unknown as ClusterRoleLike[];
    for (const role of all) {
      const rules = aggregatedRules(role, all);
      if (!rules || sameRules(rules, role.rules ?? [])) continue;
      try {
        await deps.clusterRoles.modify(scope, role.metadata.name!, (obj) => {
          (obj as unknown as ClusterRoleLike).rules = rules;
        });
        deps.log.v(2, 'clusterrole-aggregation: rules updated', { name: role.metadata.name });
      } catch (e) {
        if (!isNotFound(e)) throw e;
      }
    }
  };

  const run = async (): Promise<void> => {
    if (running) return;
    running = true;
    try {
      while (dirty && !stopped) {
        dirty = false;
        try {
          await syncAll();
        } catch (e) {
          deps.log.v(2, 'clusterrole-aggregation: sync failed', { error: String(e) });
          dirty = true;
          await new Promise((r) => setTimeout(r, 1000).unref());
        }
      }
    } finally {
      running = false;
    }
  };

  // Coalesces a relist's burst of events (handled within one turn) into one pass.
  const kick = (): void => {
    dirty = true;
    if (timer || stopped) return;
    timer = setTimeout(() => {
      timer = undefined;
      void run();
    }, 0);
  };

  const informer = runInformer({ store: deps.clusterRoles, scope, log: deps.log, resyncMs: 60_000, onObject: kick });
  return () => {
    stopped = true;
    if (timer) clearTimeout(timer);
    informer.stop();
  };
}
