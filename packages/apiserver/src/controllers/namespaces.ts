/**
 * Namespace controllers: the built-in namespaces exist at start; a deleting namespace is emptied of
 * every namespaced object and then finalized (its `kubernetes` finalizer removed, so it goes);
 * every active namespace has a `default` ServiceAccount.
 */
import { isAlreadyExists, isNotFound, isPlainObject, namespaceFinalizeStrategy, namespaceStatusStrategy, type StoredObject, type UserInfo } from '@plinth/api';
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

/** What one pass over a deleting namespace's content found. */
interface ContentPass {
  /** `<resource>.<group>` → how many objects are left. */
  remaining: Map<string, number>;
  /** finalizer → on how many of the objects left. */
  finalizers: Map<string, number>;
  errors: string[];
}

interface NamespaceCondition {
  type: string;
  status: 'True' | 'False';
  reason: string;
  message: string;
  lastTransitionTime?: string;
}

const byName = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * kube 1.24's five namespace deletion conditions, in its order (namespaced_resources_deleter.go):
 * discovery and group-version parsing cannot fail in-process; the others as the pass found.
 */
export function namespaceConditions(pass: ContentPass): NamespaceCondition[] {
  const remaining = [...pass.remaining].map(([r, n]) => `${r} has ${n} resource instances`).sort(byName);
  const finalizers = [...pass.finalizers].map(([f, n]) => `${f} in ${n} resource instances`).sort(byName);
  const errors = [...pass.errors].sort(byName);
  return [
    { type: 'NamespaceDeletionDiscoveryFailure', status: 'False', reason: 'ResourcesDiscovered', message: 'All resources successfully discovered' },
    { type: 'NamespaceDeletionGroupVersionParsingFailure', status: 'False', reason: 'ParsedGroupVersions', message: 'All legacy kube types successfully parsed' },
    errors.length > 0
      ? { type: 'NamespaceDeletionContentFailure', status: 'True', reason: 'ContentDeletionFailed', message: `Failed to delete all resource types, ${errors.length} remaining: ${errors.join(', ')}` }
      : { type: 'NamespaceDeletionContentFailure', status: 'False', reason: 'ContentDeleted', message: 'All content successfully deleted, may be waiting on finalization' },
    remaining.length > 0
      ? { type: 'NamespaceContentRemaining', status: 'True', reason: 'SomeResourcesRemain', message: `Some resources are remaining: ${remaining.join(', ')}` }
      : { type: 'NamespaceContentRemaining', status: 'False', reason: 'ContentRemoved', message: 'All content successfully removed' },
    finalizers.length > 0
      ? { type: 'NamespaceFinalizersRemaining', status: 'True', reason: 'SomeFinalizersRemain', message: `Some content in the namespace has finalizers remaining: ${finalizers.join(', ')}` }
      : { type: 'NamespaceFinalizersRemaining', status: 'False', reason: 'ContentHasNoFinalizers', message: 'All content-preserving finalizers finished' },
  ];
}

/** Whether the namespace already shows these conditions (kube writes status only on a change). */
function sameConditions(ns: StoredObject, wanted: NamespaceCondition[]): boolean {
  const status = ns['status'];
  const have = isPlainObject(status) && Array.isArray(status['conditions']) ? (status['conditions'] as NamespaceCondition[]) : [];
  return wanted.every((c) => have.some((h) => h.type === c.type && h.status === c.status && h.reason === c.reason && h.message === c.message));
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

  /**
   * Deletes every namespaced object in `ns` and tells what is left, as kube's namespace deleter
   * does: per resource (`configmaps.` for core), per finalizer, and the errors of the pass (objects
   * left with no finalizer to wait for; pods, which end gracefully, excepted).
   */
  const emptyNamespace = async (ns: string): Promise<ContentPass> => {
    const pass: ContentPass = { remaining: new Map(), finalizers: new Map(), errors: [] };
    for (const store of deps.namespacedStores()) {
      const nsScope = { user: CONTROLLER_USER, namespace: ns };
      const { group, version, plural } = store.def;
      try {
        // kube's namespace deleter: background propagation, whatever the resource's default policy.
        await store.deleteCollection(nsScope, {}, { propagationPolicy: 'Background' });
        const left = (await store.list(nsScope, {})).items;
        if (left.length === 0) continue;
        pass.remaining.set(`${plural}.${group}`, left.length);
        let waiting = group === '' && plural === 'pods';
        for (const item of left) {
          for (const f of item.metadata.finalizers ?? []) pass.finalizers.set(f, (pass.finalizers.get(f) ?? 0) + 1);
          if ((item.metadata.finalizers ?? []).length > 0) waiting = true;
        }
        if (!waiting) pass.errors.push(`unexpected items still remain in namespace: ${ns} for gvr: ${group ? `${group}/${version}` : version}, Resource=${plural}`);
      } catch (e) {
        pass.errors.push(e instanceof Error ? e.message : String(e));
      }
    }
    return pass;
  };

  /** kube's namespace conditions for a content pass, written through `status` when they change. */
  const writeConditions = async (name: string, pass: ContentPass): Promise<void> => {
    const wanted = namespaceConditions(pass);
    await deps.namespaces.modify(
      scope,
      name,
      (obj) => {
        const status = (isPlainObject(obj['status']) ? obj['status'] : (obj['status'] = {})) as { conditions?: NamespaceCondition[] };
        const old = status.conditions ?? [];
        const now = new Date(Math.floor(Date.now() / 1000) * 1000).toISOString().replace('.000Z', 'Z');
        const next = wanted.map((c) => {
          const prev = old.find((o) => o.type === c.type);
          const lastTransitionTime = prev && prev.status === c.status && prev.lastTransitionTime ? prev.lastTransitionTime : now;
          return { ...c, lastTransitionTime };
        });
        // Conditions of other types (another controller's) stay after kube's five.
        status.conditions = [...next, ...old.filter((o) => !wanted.some((c) => c.type === o.type))];
      },
      {},
      namespaceStatusStrategy,
    );
  };

  const finalize = async (ns: StoredObject): Promise<void> => {
    const name = ns.metadata.name!;
    if (inFlight.has(name)) return;
    inFlight.add(name);
    try {
      const pass = await emptyNamespace(name);
      if (!sameConditions(ns, namespaceConditions(pass))) await writeConditions(name, pass);
      if (pass.remaining.size > 0 || pass.errors.length > 0) {
        retryLater(ns); // objects with finalizers (or terminating pods) remain
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
