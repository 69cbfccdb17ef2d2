/**
 * kube's ResourceQuota admission plugin (k8s.io/apiserver/pkg/admission/plugin/resourcequota, 1.24):
 * a create or update in a namespace with quotas is charged to every quota that matches it, and the
 * quotas' `status.used` is written — with the quota's resourceVersion as precondition — before the
 * object is stored; a charge past `status.hard` is refused with 403.
 *
 * As kube's quotaEvaluator does, the requests of one namespace are handled in batches, one batch at
 * a time: every request of a batch is checked against the usage the previous ones left, then each
 * changed quota is written once. A write refused for a stale resourceVersion (another replica, or
 * the quota controller, wrote it) re-reads the quotas from etcd and checks the batch again, three
 * times at most. One batch at a time per namespace in a process, and the compare-and-swap across
 * processes, is what keeps concurrent requests from sharing the last unit.
 */
import { internalError, isStatusError, StatusError, type StoredObject } from '@plinth/api';
import type { AdmissionAttributes, AdmissionPlugin } from '../interfaces.js';
import { admissionForbidden } from '../forbidden.js';
import { createEvaluatorRegistry, isIgnoredResource, quotaFacts, quotaMatches, type Evaluator, type ScopeRequirement } from './evaluators.js';
import type { LimitedResource } from './config.js';
import { add, lessThanOrEqual, mask, negatives, prettyPrint, prettyPrintNames, removeZeros, subtractNonNegative, writeList, type ResourceList } from './resources.js';

/** How the plugin reads and writes ResourceQuotas. */
export interface QuotaAccess {
  /** The namespace's quotas: the watch cache, or etcd itself with `fresh`. */
  list(namespace: string, fresh?: boolean): Promise<StoredObject[]>;
  /**
   * Writes `quota`'s status (kube's UpdateStatus), failing with 409 Conflict when its
   * resourceVersion is no longer the stored one; resolves to the stored quota.
   */
  updateStatus(quota: StoredObject): Promise<StoredObject>;
}

export interface ResourceQuotaOptions {
  /** How long a request waits for its batch (kube: 10 s). */
  timeoutMs?: number;
  /** The configuration's limitedResources: consumable only under a covering quota. */
  limitedResources?: LimitedResource[];
}

/** A quota as the check sees it: its status read once. */
interface QuotaState {
  obj: StoredObject;
  hard: ResourceList;
  used: ResourceList;
}

/** A request's outcome: still to be decided by the quota write, admitted, or refused. */
const PENDING = Symbol('pending');
type Outcome = typeof PENDING | undefined | Error;

interface Waiter {
  attrs: AdmissionAttributes;
  evaluator: Evaluator;
  result: Outcome;
  done(result: Error | undefined): void;
}

const RETRIES = 3;
/** Quotas remembered as last written (kube keeps 100; a replica here may serve many namespaces). */
const RECENT_MAX = 1000;

const stateOf = (obj: StoredObject): QuotaState => {
  const { hard, used } = quotaFacts(obj);
  return { obj, hard, used };
};

const rvOf = (o: StoredObject): bigint => {
  try {
    return BigInt(o.metadata.resourceVersion ?? '0');
  } catch {
    return 0n;
  }
};

/**
 * kube's CheckRequest: the quotas after charging the request, or a refusal. Quotas that do not
 * match are returned as they are.
 */
export function checkRequest(quotas: readonly QuotaState[], attrs: AdmissionAttributes, evaluator: Evaluator, limited: readonly LimitedResource[] = []): QuotaState[] {
  const obj = attrs.object!;
  const limitedScopes = limited.flatMap((l) => evaluator.matchingScopes(obj, l.matchScopes));
  const limitedNames = limitedByDefault(evaluator, obj, limited.filter((l) => l.apiGroup === attrs.resource.group && l.resource === attrs.resource.plural));
  const interesting: number[] = [];
  const covered = new Set<string>();
  const coveredScopes: ScopeRequirement[] = [];
  quotas.forEach((q, i) => {
    coveredScopes.push(...evaluator.matchingScopes(obj, quotaFacts(q.obj).scopes));
    if (!quotaMatches(evaluator, q.obj, obj)) return;
    const restricted = evaluator.matchingResources(Object.keys(q.hard));
    const why = evaluator.constraints(restricted, obj);
    if (why) throw admissionForbidden(attrs, `failed quota: ${q.obj.metadata.name}: ${why}`);
    if (restricted.some((r) => r in q.hard && !(r in q.used))) {
      throw admissionForbidden(attrs, `status unknown for quota: ${q.obj.metadata.name}, resources: ${prettyPrintNames(restricted)}`);
    }
    interesting.push(i);
    for (const r of restricted) covered.add(r);
  });

  let delta = evaluator.usage(obj);
  const negative = negatives(delta);
  if (negative.length > 0) throw admissionForbidden(attrs, `quota usage is negative for resource(s): ${prettyPrintNames(negative)}`);
  if (attrs.operation === 'UPDATE') {
    const prev = attrs.oldObject;
    if (!prev) throw admissionForbidden(attrs, 'unable to get previous usage since prior version of object was not found');
    if (prev.metadata.resourceVersion) delta = subtractNonNegative(delta, evaluator.usage(prev));
  }
  delta = removeZeros(delta);
  if (Object.keys(delta).length === 0) return [...quotas];

  const uncovered = [...new Set(limitedNames)].filter((n) => !covered.has(n));
  if (uncovered.length > 0) throw admissionForbidden(attrs, `insufficient quota to consume: ${prettyPrintNames(uncovered)}`);
  const uncoveredScopes = limitedScopes.filter((l) => !coveredScopes.some((c) => c.scopeName === l.scopeName));
  if (uncoveredScopes.length > 0) {
    // kube returns this one as a plain error, which its API answers as a 500 of unknown reason, printed as Go's %v.
    const printed = uncoveredScopes.map((x) => `{${x.scopeName} ${x.operator} [${(x.values ?? []).join(' ')}]}`).join(' ');
    throw new StatusError({ code: 500, reason: '', message: `insufficient quota to match these scopes: [${printed}]` });
  }
  if (interesting.length === 0) return [...quotas];

  const out = [...quotas];
  for (const i of interesting) {
    const q = out[i]!;
    const requested = mask(delta, Object.keys(q.hard));
    const newUsage = add(q.used, requested);
    const { allowed, exceeded } = lessThanOrEqual(mask(newUsage, Object.keys(requested)), q.hard);
    if (!allowed) {
      throw admissionForbidden(
        attrs,
        `exceeded quota: ${q.obj.metadata.name}, requested: ${prettyPrint(mask(requested, exceeded))}, used: ${prettyPrint(mask(q.used, exceeded))}, limited: ${prettyPrint(mask(q.hard, exceeded))}`,
      );
    }
    out[i] = { ...q, used: newUsage };
  }
  return out;
}

/** kube's limitedByDefault: the usage names (with a positive amount) that contain a limited resource's matchContains. */
function limitedByDefault(evaluator: Evaluator, obj: StoredObject, limited: readonly LimitedResource[]): string[] {
  if (limited.length === 0) return [];
  const usage = evaluator.usage(obj);
  const out: string[] = [];
  for (const l of limited) {
    for (const [name, q] of Object.entries(usage)) if (q.sign() > 0 && l.matchContains.some((m) => name.includes(m))) out.push(name);
  }
  return out;
}

const sameUsage = (a: ResourceList, b: ResourceList): boolean => JSON.stringify(writeList(a)) === JSON.stringify(writeList(b));

export function createResourceQuota(access: QuotaAccess, opts: ResourceQuotaOptions = {}): AdmissionPlugin {
  const evaluatorFor = createEvaluatorRegistry();
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const limited = opts.limitedResources ?? [];
  /** Quotas this process wrote last, newer than the watch cache may be yet (kube's updatedQuotas). */
  const recent = new Map<string, StoredObject>();
  const pending = new Map<string, Waiter[]>();
  const running = new Set<string>();

  const getQuotas = async (ns: string, fresh = false): Promise<QuotaState[]> => {
    const items = await access.list(ns, fresh);
    return items.map((q) => {
      const key = `${ns}/${q.metadata.name}`;
      const mine = recent.get(key);
      if (!mine) return stateOf(q);
      if (rvOf(q) >= rvOf(mine)) {
        recent.delete(key);
        return stateOf(q);
      }
      return stateOf(mine);
    });
  };

  const checkQuotas = async (quotas: QuotaState[], waiters: Waiter[], retries: number): Promise<void> => {
    const original = quotas;
    let changed = false;
    for (const w of waiters) {
      let next: QuotaState[];
      try {
        next = checkRequest(quotas, w.attrs, w.evaluator, limited);
      } catch (e) {
        w.result = e instanceof Error ? e : new Error(String(e));
        continue;
      }
      if (w.attrs.dryRun) {
        w.result = undefined;
        continue;
      }
      const mine = next.some((q, i) => q !== quotas[i]);
      w.result = mine ? PENDING : undefined;
      changed ||= mine;
      quotas = next;
    }
    if (!changed) return;

    const failed: QuotaState[] = [];
    let lastErr: Error | undefined;
    for (let i = 0; i < quotas.length; i++) {
      const q = quotas[i]!;
      if (q === original[i] || sameUsage(q.used, original[i]!.used)) continue;
      // The store's update works on its own copy of what it is given: a new status over the stored quota is enough.
      const next: StoredObject = { ...q.obj, status: { ...(q.obj['status'] as Record<string, unknown>), used: writeList(q.used) } };
      try {
        const stored = await access.updateStatus(next);
        const key = `${stored.metadata.namespace}/${stored.metadata.name}`;
        recent.delete(key);
        recent.set(key, stored);
        // Bounded as kube's LRU of updated quotas: the oldest entry goes first.
        if (recent.size > RECENT_MAX) recent.delete(recent.keys().next().value as string);
      } catch (e) {
        failed.push(q);
        lastErr = e instanceof Error ? e : new Error(String(e));
      }
    }
    if (failed.length === 0) {
      for (const w of waiters) if (w.result === PENDING) w.result = undefined;
      return;
    }
    if (retries <= 0) {
      for (const w of waiters) if (w.result === PENDING) w.result = lastErr;
      return;
    }
    let fresh: QuotaState[];
    try {
      fresh = await getQuotas(waiters[0]!.attrs.namespace, true);
    } catch {
      for (const w of waiters) if (w.result === PENDING) w.result = lastErr;
      return;
    }
    const names = new Set(failed.map((q) => q.obj.metadata.name));
    await checkQuotas(
      fresh.filter((q) => names.has(q.obj.metadata.name)),
      waiters,
      retries - 1,
    );
  };

  const checkBatch = async (ns: string, waiters: Waiter[]): Promise<void> => {
    const quotas = await getQuotas(ns);
    if (quotas.length === 0 && limited.length === 0) {
      for (const w of waiters) w.result = undefined;
      return;
    }
    await checkQuotas(quotas, waiters, RETRIES);
  };

  const drain = async (ns: string): Promise<void> => {
    running.add(ns);
    try {
      for (let batch = pending.get(ns); batch && batch.length > 0; batch = pending.get(ns)) {
        pending.delete(ns);
        try {
          await checkBatch(ns, batch);
        } catch (e) {
          for (const w of batch) w.result = e instanceof Error ? e : new Error(String(e));
        }
        for (const w of batch) w.done(w.result === PENDING ? new Error('resource quota evaluation left a request undecided') : w.result);
      }
    } finally {
      running.delete(ns);
    }
  };

  const evaluate = (attrs: AdmissionAttributes, evaluator: Evaluator): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      let settled = false;
      const timer = setTimeout(() => {
        settled = true;
        reject(internalError(new Error('resource quota evaluation timed out')));
      }, timeoutMs);
      const waiter: Waiter = {
        attrs,
        evaluator,
        result: PENDING,
        done(result) {
          clearTimeout(timer);
          if (settled) return;
          settled = true;
          // An error that is not a Status is answered as kube's API answers one: 500, no reason.
          if (result) reject(isStatusError(result) ? result : new StatusError({ code: 500, reason: '', message: result.message }));
          else resolve();
        },
      };
      const ns = attrs.namespace;
      const queue = pending.get(ns);
      if (queue) queue.push(waiter);
      else pending.set(ns, [waiter]);
      if (!running.has(ns)) void drain(ns);
    });

  return {
    name: 'ResourceQuota',
    handles: (op) => op === 'CREATE' || op === 'UPDATE',
    async validate(attrs) {
      if (attrs.subresource !== '' || attrs.namespace === '' || !attrs.object) return;
      const { group, plural } = attrs.resource;
      if (isIgnoredResource(group, plural)) return;
      const evaluator = evaluatorFor(group, plural);
      if (!evaluator.handles(attrs.operation)) return;
      // No quota in the namespace (as the cache has it, as kube's lister): nothing to charge, no batch to join.
      if (limited.length === 0 && (await access.list(attrs.namespace)).length === 0) return;
      await evaluate(attrs, evaluator);
    },
  };
}
