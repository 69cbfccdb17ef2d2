/**
 * Namespace controllers: the built-in namespaces exist at start; a deleting namespace is emptied of
 * every namespaced object and then finalized (its `kubernetes` finalizer removed, so it goes);
 * every active namespace has a `default` ServiceAccount.
 */
import { isAlreadyExists, isNotFound, namespaceFinalizeStrategy, type StoredObject, type UserInfo } from '@plinth/api';
import type { ResourceStore } from '../registry/store.js';
import type { Logger } from '../log.js';
import { runInformer, type Informer } from './informer.js';

export const SYSTEM_NAMESPACES = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];

const CONTROLLER_USER: UserInfo = { name: 'system:apiserver', groups: ['system:masters'] };

export async function ensureSystemNamespaces(namespaces: ResourceStore): Promise<void> {
  const exists = async (name: string): Promise<boolean> => {
    try {
      await namespaces.get({ user: CONTROLLER_USER, namespace: '' }, name);
      return true;
    } catch (e) {
      if (isNotFound(e)) return false;
      throw e;
    }
  };
  for (const name of SYSTEM_NAMESPACES) {
    // As kube's createNamespaceIfNeeded: an existing namespace is no write (and meets no admission).
    if (await exists(name)) continue;
    try {
      await namespaces.create({ user: CONTROLLER_USER, namespace: '' }, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    } catch (e) {
      if (!isAlreadyExists(e)) throw e;
    }
  }
}

export interface NamespaceControllerDeps {
  namespaces: ResourceStore;
  serviceAccounts: ResourceStore;
  /** The store of every namespaced resource, asked at each cleanup (custom resources come and go). */
  namespacedStores: () => ResourceStore[];
  log: Logger;
  /** Which halves run (`--controllers`): kube's namespace controller, its serviceaccount controller. Default both. */
  namespace?: boolean;
  serviceAccount?: boolean;
}

function isTerminating(ns: StoredObject): boolean {
  return !!ns.metadata.deletionTimestamp;
}

/** Starts both controllers; returns a stop function. */
export function startNamespaceControllers(deps: NamespaceControllerDeps): () => void {
  const scope = { user: CONTROLLER_USER, namespace: '' };
  const runNamespace = deps.namespace ?? true;
  const runServiceAccount = deps.serviceAccount ?? true;
  const inFlight = new Set<string>();
  /** Namespaces waiting on objects with finalizers: retried with backoff (1 s doubling to 10 s). */
  const attempts = new Map<string, number>();
  const timers = new Map<string, NodeJS.Timeout>();
  let stopped = false;
  const retryLater = (ns: StoredObject): void => {
    const name = ns.metadata.name!;
    if (stopped || timers.has(name)) return;
    const attempt = (attempts.get(name) ?? 0) + 1;
    attempts.set(name, attempt);
    const timer = setTimeout(() => {
      timers.delete(name);
      finalize(ns).catch((e: unknown) => deps.log.v(2, 'namespace finalize failed', { namespace: name, error: String(e) }));
    }, Math.min(1000 * 2 ** (attempt - 1), 10_000));
    timer.unref();
    timers.set(name, timer);
  };

  const ensureDefaultServiceAccount = async (ns: string): Promise<void> => {
    // Resyncs see every namespace again: a cache read first keeps them from costing etcd writes.
    try {
      await deps.serviceAccounts.get({ user: CONTROLLER_USER, namespace: ns }, 'default', '0');
      return;
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
    try {
      await deps.serviceAccounts.create({ user: CONTROLLER_USER, namespace: ns }, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default', namespace: ns } });
    } catch (e) {
      // Exists already, or the namespace is going away: nothing to do.
      if (!isAlreadyExists(e) && (e as { code?: number }).code !== 403 && !isNotFound(e)) throw e;
    }
  };

  /** Deletes every namespaced object in `ns`; true once none is left. */
  const emptyNamespace = async (ns: string): Promise<boolean> => {
    let remaining = 0;
    for (const store of deps.namespacedStores()) {
      const nsScope = { user: CONTROLLER_USER, namespace: ns };
      // kube's namespace deleter: background propagation, whatever the resource's default policy.
      await store.deleteCollection(nsScope, {}, { propagationPolicy: 'Background' });
      remaining += (await store.list(nsScope, { limit: 1 })).items.length;
    }
    return remaining === 0;
  };

  const finalize = async (ns: StoredObject): Promise<void> => {
    const name = ns.metadata.name!;
    if (inFlight.has(name)) return;
    inFlight.add(name);
    try {
      if (!(await emptyNamespace(name))) {
        retryLater(ns); // objects with finalizers remain
        return;
      }
      attempts.delete(name);
      await deps.namespaces.modify(
        scope,
        name,
        (obj) => {
          const spec = (obj['spec'] ??= {}) as { finalizers?: string[] };
          spec.finalizers = (spec.finalizers ?? []).filter((f) => f !== 'kubernetes');
        },
        {},
        namespaceFinalizeStrategy,
      );
      deps.log.v(1, 'namespace finalized', { namespace: name });
    } catch (e) {
      if (!isNotFound(e)) throw e;
    } finally {
      inFlight.delete(name);
    }
  };

  const informers: Informer[] = [
    runInformer({
      store: deps.namespaces,
      scope,
      log: deps.log,
      resyncMs: 10_000,
      onObject: async (type, ns) => {
        if (type === 'DELETED') return;
        if (isTerminating(ns)) {
          if (runNamespace) await finalize(ns);
        } else if (runServiceAccount) await ensureDefaultServiceAccount(ns.metadata.name!);
      },
    }),
    ...(runServiceAccount ? [runInformer({
      store: deps.serviceAccounts,
      scope,
      log: deps.log,
      resyncMs: 60_000,
      // Only deletions of `default` accounts matter here: no list of every account (there may be
      // very many), and only deletions decoded (a selector would decode every event's object).
      changesOnly: true,
      types: ['DELETED'],
      onObject: async (type, sa) => {
        // A deleted `default` ServiceAccount comes back, as kube's serviceaccounts controller does.
        if (type === 'DELETED' && sa.metadata.name === 'default' && sa.metadata.namespace) {
          await ensureDefaultServiceAccount(sa.metadata.namespace);
        }
      },
    })] : []),
  ];
  return () => {
    stopped = true;
    for (const t of timers.values()) clearTimeout(t);
    informers.forEach((i) => i.stop());
  };
}
