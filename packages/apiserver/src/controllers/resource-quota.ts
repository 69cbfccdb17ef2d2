/**
 * kube-controller-manager's `resourcequota` controller (pkg/controller/resourcequota, 1.24), run
 * in-process: a quota's `status.hard` is set to its `spec.hard` and its `status.used` recalculated
 * from the objects of its namespace — when the quota is created or its hard limits change, when an
 * object a quota charges is deleted (or, for pods, ends; for services and claims, changes), and
 * for every quota each resync period (kube's --resource-quota-sync-period, 5 minutes).
 */
import { isNotFound, isPlainObject, type StoredObject, type UserInfo } from '@plinth/api';
import type { WatchEventType } from '@plinth/storage';
import { createEvaluatorRegistry, isIgnoredResource, isQuotaChargedPod, mayBeUnchargedPod, quotaResources, quotaScopes, type Evaluator } from '@plinth/admission';
import type { ResourceStore } from '../registry/store.js';
import type { Logger } from '../log.js';
import { runInformer, type Informer } from './informer.js';
import { createWorkQueue } from './work-queue.js';

const { add, equals, mask, readList, writeList } = quotaResources;
type ResourceList = quotaResources.ResourceList;

const CONTROLLER_USER: UserInfo = { name: 'system:serviceaccount:kube-system:resourcequota-controller', groups: ['system:masters'] };

/** The evaluators whose own resources kube's registry has (count/<x> of anything else is parsed from the name). */
const BUILTIN = [
  ['', 'pods'],
  ['', 'services'],
  ['', 'persistentvolumeclaims'],
  ['', 'configmaps'],
  ['', 'secrets'],
  ['', 'resourcequotas'],
  ['', 'replicationcontrollers'],
] as const;

export interface ResourceQuotaControllerDeps {
  quotas: ResourceStore;
  /** The store of a namespaced resource by group and plural (its storage version), if plinth serves it. */
  storeFor(group: string, resource: string): ResourceStore | undefined;
  /** Namespaced resources whose deletions free quota (kube's quota monitors). */
  monitored(): ResourceStore[];
  log: Logger;
  /** kube's --resource-quota-sync-period (ms); default 5 minutes. */
  resyncMs?: number;
  /** How long a lower usage waits before it is written (ms); default 1 s. See `process`. */
  settleMs?: number;
}

const field = (o: unknown, k: string): unknown => (isPlainObject(o) ? o[k] : undefined);

/** The group and resource of a `count/<resource>[.<group>]` name. */
function countTarget(name: string): [group: string, resource: string] | undefined {
  if (!name.startsWith('count/')) return undefined;
  const rest = name.slice('count/'.length);
  const dot = rest.indexOf('.');
  return dot < 0 ? ['', rest] : [rest.slice(dot + 1), rest.slice(0, dot)];
}

/**
 * kube's quota.CalculateUsage: for each evaluator that charges some of the quota's hard resources,
 * the usage of the namespace's objects in the quota's scopes, masked to those resources (zero when
 * nothing is charged). Resources no evaluator can count are left out.
 */
export async function calculateUsage(
  quota: StoredObject,
  hard: ResourceList,
  evaluatorFor: (group: string, resource: string) => Evaluator,
  listObjects: (group: string, resource: string, namespace: string) => Promise<StoredObject[] | undefined>,
  now = Date.now(),
): Promise<ResourceList> {
  const names = Object.keys(hard);
  const targets = new Map<string, Evaluator>();
  for (const [g, r] of BUILTIN) targets.set(`${g}/${r}`, evaluatorFor(g, r));
  for (const n of names) {
    const t = countTarget(n);
    if (t && !isIgnoredResource(t[0], t[1])) targets.set(`${t[0]}/${t[1]}`, evaluatorFor(t[0], t[1]));
  }
  const scopes = quotaScopes(quota);
  let used: ResourceList = {};
  for (const e of targets.values()) {
    const matched = e.matchingResources(names);
    if (matched.length === 0) continue;
    const items = await listObjects(e.group, e.resource, quota.metadata.namespace!);
    if (!items) continue;
    let stats: ResourceList = Object.fromEntries(matched.map((m) => [m, quotaResources.zero()]));
    for (const item of items) {
      if (scopes.every((s) => e.matchesScope(s, item))) stats = add(stats, e.usage(item, now));
    }
    used = add(used, mask(stats, matched));
  }
  return used;
}

/** Starts the controller; returns a stop function. */
export function startResourceQuotaController(deps: ResourceQuotaControllerDeps): () => void {
  const evaluatorFor = createEvaluatorRegistry();
  const statusStrategy = deps.quotas.def.subresources.find((s) => s.name === 'status')!.strategy!;
  const settleMs = deps.settleMs ?? 1_000;
  /**
   * The namespace's objects from the watch cache once it has caught up with `atLeast` (the quota's
   * revision: everything stored before the quota was read is counted), or a consistent read.
   */
  const listObjects = (atLeast: string | undefined) => async (group: string, resource: string, namespace: string): Promise<StoredObject[] | undefined> => {
    const store = deps.storeFor(group, resource);
    if (!store) return undefined;
    const opts = atLeast === undefined ? {} : ({ resourceVersion: atLeast, resourceVersionMatch: 'NotOlderThan' } as const);
    return (await store.list({ user: CONTROLLER_USER, namespace }, opts)).items;
  };
  /** Quotas whose usage would go down: the revision read and when it may be written. */
  const settling = new Map<string, { rv: string; at: number }>();

  const queue = createWorkQueue({
    name: 'resourcequota',
    log: deps.log,
    async process(key) {
      const slash = key.indexOf('/');
      const scope = { user: CONTROLLER_USER, namespace: key.slice(0, slash) };
      const name = key.slice(slash + 1);
      let quota: StoredObject;
      try {
        // A quorum read: the status written next carries this resourceVersion as precondition.
        quota = await deps.quotas.get(scope, name);
      } catch (e) {
        if (isNotFound(e)) return;
        throw e;
      }
      const rv = quota.metadata.resourceVersion ?? '0';
      const specHard = readList(field(quota['spec'], 'hard'));
      const statusHard = readList(field(quota['status'], 'hard'));
      const oldUsed = readList(field(quota['status'], 'used'));
      const pending = settling.get(key);
      const settled = pending !== undefined && pending.rv === rv && Date.now() >= pending.at;
      const computed = await calculateUsage(quota, specHard, evaluatorFor, listObjects(settled ? undefined : rv));
      let used = mask({ ...oldUsed, ...computed }, Object.keys(specHard));
      // A request admission charged just before the quota was read may not be stored yet, so a
      // count lower than the charged usage may be missing it: lowering `used` then would let the
      // next request over the limit. So usage is raised at once but lowered only when the quota
      // has not been charged for `settleMs` (its resourceVersion is the one read then), from a
      // consistent read, written with that resourceVersion as precondition.
      const lower = Object.keys(used).some((k) => k in oldUsed && used[k]!.cmp(oldUsed[k]!) < 0);
      if (lower && !settled) {
        const at = pending?.rv === rv ? pending.at : Date.now() + settleMs;
        settling.set(key, { rv, at });
        // Come back when it is due (a timer that fired a little early comes back again).
        setTimeout(() => queue.add(key), Math.max(1, at - Date.now())).unref();
        used = Object.fromEntries(Object.entries(used).map(([k, q]) => [k, k in oldUsed && q.cmp(oldUsed[k]!) < 0 ? oldUsed[k]! : q]));
      } else {
        settling.delete(key);
      }
      if (equals(specHard, statusHard) && equals(used, oldUsed)) return;
      const next = structuredClone(quota);
      next['status'] = { hard: writeList(specHard), used: writeList(used) };
      // A conflict (admission charged the quota meanwhile) throws, and the queue retries with fresh state.
      await deps.quotas.update(scope, name, next, {}, statusStrategy);
      deps.log.v(3, 'resourcequota: status updated', { namespace: scope.namespace, name });
    },
  });

  const keyOf = (q: StoredObject): string => `${q.metadata.namespace}/${q.metadata.name}`;
  /** The quotas of `namespace` that charge the resource (kube's replenishQuota). */
  const replenish = async (group: string, resource: string, namespace: string | undefined): Promise<void> => {
    if (!namespace) return;
    const e = evaluatorFor(group, resource);
    const quotas = (await deps.quotas.list({ user: CONTROLLER_USER, namespace }, { resourceVersion: '0' })).items;
    for (const q of quotas) {
      if (e.matchingResources(Object.keys(readList(field(q['status'], 'hard')))).length > 0) queue.add(keyOf(q));
    }
  };

  const informers: Informer[] = [
    runInformer({
      store: deps.quotas,
      scope: { user: CONTROLLER_USER, namespace: '' },
      log: deps.log,
      resyncMs: deps.resyncMs ?? 300_000,
      types: ['ADDED', 'MODIFIED'],
      onObject: (type, q) => {
        // Every quota on each (re)list (kube's full resync); on a change, one whose hard limits
        // moved or whose usage lacks a hard resource.
        if (type === 'ADDED') return queue.add(keyOf(q));
        const hard = readList(field(q['spec'], 'hard'));
        const status = field(q, 'status');
        const used = readList(field(status, 'used'));
        if (!equals(hard, readList(field(status, 'hard'))) || Object.keys(hard).some((k) => !(k in used))) queue.add(keyOf(q));
      },
    }),
    ...deps.monitored().map((store) => {
      const { group, plural } = store.def;
      // Updates free quota only when a pod ends or a service changes type (kube's replenishment
      // filters; a claim's update never does while RecoverVolumeExpansionFailure is off).
      const watchesChanges = group === '' && (plural === 'pods' || plural === 'services');
      return runInformer({
        store,
        scope: { user: CONTROLLER_USER, namespace: '' },
        log: deps.log,
        resyncMs: 3_600_000,
        changesOnly: true,
        types: watchesChanges ? ['DELETED', 'MODIFIED'] : ['DELETED'],
        // A pod's update matters only once it ends or is deleting (isQuotaChargedPod): the others,
        // most of them (every status update), are skipped without being decoded.
        ...(plural === 'pods' && group === '' ? { textFilter: (json: string, type: WatchEventType) => type !== 'MODIFIED' || mayBeUnchargedPod(json) } : {}),
        onObject: (type, obj) => {
          if (type === 'MODIFIED' && plural === 'pods' && isQuotaChargedPod(obj)) return;
          return replenish(group, plural, obj.metadata.namespace);
        },
      });
    }),
  ];
  return () => {
    informers.forEach((i) => i.stop());
    queue.stop();
  };
}
