/**
 * The rules of kube's LimitRanger (plugin/pkg/admission/limitranger/admission.go, 1.24) as pure
 * functions over JSON objects: a namespace's LimitRange items default a pod's containers, and
 * bound containers, pods and claims by min, max and maxLimitRequestRatio. Each check returns
 * kube's message for every violation, in the LimitRange's order.
 */
import { createMilliQuantity, createQuantity, decodeQuantity, isJsonObject, MAX_MILLI_VALUE, type Quantity, type StoredObject } from '@plinth/api';

/** A ResourceList as JSON: resource name → quantity text. */
type ResourceList = Record<string, unknown>;

/** kube's annotation on a pod whose resources the plugin defaulted. */
export const LIMIT_RANGER_ANNOTATION = 'kubernetes.io/limit-ranger';

const ZERO = createQuantity(0, 'DecimalSI');

function listOf(v: unknown): ResourceList {
  return isJsonObject(v) ? v : {};
}

/** The items of a LimitRange's spec.limits. */
function itemsOf(limitRange: StoredObject): Array<Record<string, unknown>> {
  const spec = limitRange['spec'];
  const limits = isJsonObject(spec) ? spec['limits'] : undefined;
  return Array.isArray(limits) ? limits.filter(isJsonObject) : [];
}

function quantityOf(list: ResourceList, name: string): Quantity | undefined {
  if (!Object.hasOwn(list, name)) return undefined;
  try {
    return decodeQuantity(list[name]);
  } catch {
    // Validation refuses a bad quantity later; here it counts as zero, as an unset Go Quantity would.
    return ZERO;
  }
}

/** kube's requestLimitEnforcedValues: whole units, or milli-units when none of the three overflows them. */
function compared(req: Quantity | undefined, lim: Quantity | undefined, enforced: Quantity): [bigint, bigint, bigint] {
  const r = req ?? ZERO;
  const l = lim ?? ZERO;
  if (r.value() <= MAX_MILLI_VALUE && l.value() <= MAX_MILLI_VALUE && enforced.value() <= MAX_MILLI_VALUE) {
    return [r.milliValue(), l.milliValue(), enforced.milliValue()];
  }
  return [r.value(), l.value(), enforced.value()];
}

function minConstraint(type: string, name: string, enforced: Quantity, requests: ResourceList, limits: ResourceList): string | undefined {
  const req = quantityOf(requests, name);
  const lim = quantityOf(limits, name);
  const [r, l, e] = compared(req, lim, enforced);
  if (!req) return `minimum ${name} usage per ${type} is ${enforced}.  No request is specified`;
  if (r < e) return `minimum ${name} usage per ${type} is ${enforced}, but request is ${req}`;
  if (lim && l < e) return `minimum ${name} usage per ${type} is ${enforced}, but limit is ${lim}`;
  return undefined;
}

function maxConstraint(type: string, name: string, enforced: Quantity, requests: ResourceList, limits: ResourceList): string | undefined {
  const req = quantityOf(requests, name);
  const lim = quantityOf(limits, name);
  const [r, l, e] = compared(req, lim, enforced);
  if (!lim) return `maximum ${name} usage per ${type} is ${enforced}.  No limit is specified`;
  if (l > e) return `maximum ${name} usage per ${type} is ${enforced}, but limit is ${lim}`;
  if (req && r > e) return `maximum ${name} usage per ${type} is ${enforced}, but request is ${req}`;
  return undefined;
}

/** kube's maxRequestConstraint: a claim's max bounds its request (claims have no limits). */
function maxRequestConstraint(type: string, name: string, enforced: Quantity, requests: ResourceList): string | undefined {
  const req = quantityOf(requests, name);
  const [r, , e] = compared(req, undefined, enforced);
  if (!req) return `maximum ${name} usage per ${type} is ${enforced}.  No request is specified`;
  if (r > e) return `maximum ${name} usage per ${type} is ${enforced}, but request is ${req}`;
  return undefined;
}

function ratioConstraint(type: string, name: string, enforced: Quantity, requests: ResourceList, limits: ResourceList): string | undefined {
  const req = quantityOf(requests, name);
  const lim = quantityOf(limits, name);
  const [r, l] = compared(req, lim, enforced);
  if (!req || r === 0n) return `${name} max limit to request ratio per ${type} is ${enforced}, but no request is specified or request is 0`;
  if (!lim || l === 0n) return `${name} max limit to request ratio per ${type} is ${enforced}, but no limit is specified or limit is 0`;
  const display = Number(l) / Number(r);
  let observed = display;
  let max = Number(enforced.value());
  if (enforced.value() <= MAX_MILLI_VALUE) {
    observed = display * 1000;
    max = Number(enforced.milliValue());
  }
  // Go's %f: six decimals.
  if (observed > max) return `${name} max limit to request ratio per ${type} is ${enforced}, but provided ratio is ${display.toFixed(6)}`;
  return undefined;
}

type Check = (type: string, name: string, enforced: Quantity, requests: ResourceList, limits: ResourceList) => string | undefined;

/** Runs `check` for every entry of the item's list `field`, collecting messages into `errs`. */
function runChecks(errs: string[], item: Record<string, unknown>, field: string, check: Check, requests: ResourceList, limits: ResourceList): void {
  const type = String(item['type']);
  for (const [name, value] of Object.entries(listOf(item[field]))) {
    let enforced: Quantity;
    try {
      enforced = decodeQuantity(value);
    } catch {
      continue;
    }
    const msg = check(type, name, enforced, requests, limits);
    if (msg) errs.push(msg);
  }
}

function resourcesOf(container: Record<string, unknown>): { requests: ResourceList; limits: ResourceList } {
  const res = listOf(container['resources']);
  return { requests: listOf(res['requests']), limits: listOf(res['limits']) };
}

function containersOf(pod: StoredObject, field: 'containers' | 'initContainers'): Array<Record<string, unknown>> {
  const spec = pod['spec'];
  const list = isJsonObject(spec) ? spec[field] : undefined;
  return Array.isArray(list) ? list.filter(isJsonObject) : [];
}

/**
 * kube's PodMutateLimitFunc: the `default` limits and `defaultRequest` requests of the LimitRange's
 * Container item fill what a container (then an init container) does not state, and the pod gets
 * kube's annotation naming what was set (replacing one an earlier LimitRange wrote).
 */
export function applyContainerDefaults(limitRange: StoredObject, pod: StoredObject): void {
  const defaults: ResourceList = {};
  const defaultRequests: ResourceList = {};
  for (const item of itemsOf(limitRange)) {
    if (item['type'] !== 'Container') continue;
    Object.assign(defaultRequests, listOf(item['defaultRequest']));
    Object.assign(defaults, listOf(item['default']));
  }
  const notes: string[] = [];
  const merge = (container: Record<string, unknown>, what: string): void => {
    const setLimits = fill(container, 'limits', defaults);
    const setRequests = fill(container, 'requests', defaultRequests);
    const name = String(container['name'] ?? '');
    if (setRequests.length > 0) notes.push(`${setRequests.sort().join(', ')} request for ${what} ${name}`);
    if (setLimits.length > 0) notes.push(`${setLimits.sort().join(', ')} limit for ${what} ${name}`);
  };
  for (const c of containersOf(pod, 'containers')) merge(c, 'container');
  for (const c of containersOf(pod, 'initContainers')) merge(c, 'init container');
  if (notes.length === 0) return;
  const meta = pod.metadata as { annotations?: Record<string, string> };
  meta.annotations = { ...(meta.annotations ?? {}), [LIMIT_RANGER_ANNOTATION]: `LimitRanger plugin set: ${notes.join('; ')}` };
}

/** Sets each of `defaults` the container's `resources[field]` lacks; returns the names set. */
function fill(container: Record<string, unknown>, field: 'limits' | 'requests', defaults: ResourceList): string[] {
  const names = Object.keys(defaults);
  if (names.length === 0) return [];
  if (!isJsonObject(container['resources'])) container['resources'] = {};
  const res = container['resources'] as Record<string, unknown>;
  const list = isJsonObject(res[field]) ? res[field] : {};
  const set: string[] = [];
  for (const name of names) {
    if (Object.hasOwn(list, name)) continue;
    list[name] = defaults[name];
    set.push(name);
  }
  if (set.length > 0) res[field] = list;
  return set;
}

/** kube's sum: each resource in every list, totalled (cpu in milli-units, others in whole units); a resource missing from one list is left out. */
function sum(lists: ResourceList[]): Map<string, Quantity> {
  const out = new Map<string, Quantity>();
  const keys = new Set(lists.flatMap((l) => Object.keys(l)));
  for (const key of keys) {
    let total = 0n;
    let everywhere = true;
    for (const l of lists) {
      const q = quantityOf(l, key);
      if (!q) {
        everywhere = false;
        continue;
      }
      total = BigInt.asIntN(64, total + (key === 'cpu' ? q.milliValue() : q.value()));
    }
    if (everywhere) out.set(key, key === 'cpu' ? createMilliQuantity(total, 'DecimalSI') : createQuantity(total, 'DecimalSI'));
  }
  return out;
}

/** The larger of the sum of the containers and every init container (kube's pod-level requests or limits). */
function podTotal(pod: StoredObject, field: 'requests' | 'limits'): ResourceList {
  const totals = sum(containersOf(pod, 'containers').map((c) => resourcesOf(c)[field]));
  for (const c of containersOf(pod, 'initContainers')) {
    const list = resourcesOf(c)[field];
    for (const name of Object.keys(list)) {
      const q = quantityOf(list, name)!;
      const have = totals.get(name);
      if (!have || q.cmp(have) > 0) totals.set(name, q);
    }
  }
  const out: ResourceList = {};
  for (const [k, v] of totals) out[k] = v.toString();
  return out;
}

/** kube's PodValidateLimitFunc: every violation of the LimitRange's Container and Pod items. */
export function podViolations(limitRange: StoredObject, pod: StoredObject): string[] {
  const errs: string[] = [];
  for (const item of itemsOf(limitRange)) {
    if (item['type'] === 'Container') {
      for (const c of [...containersOf(pod, 'containers'), ...containersOf(pod, 'initContainers')]) {
        const { requests, limits } = resourcesOf(c);
        runChecks(errs, item, 'min', minConstraint, requests, limits);
        runChecks(errs, item, 'max', maxConstraint, requests, limits);
        runChecks(errs, item, 'maxLimitRequestRatio', ratioConstraint, requests, limits);
      }
    } else if (item['type'] === 'Pod') {
      const requests = podTotal(pod, 'requests');
      const limits = podTotal(pod, 'limits');
      runChecks(errs, item, 'min', minConstraint, requests, limits);
      runChecks(errs, item, 'max', maxConstraint, requests, limits);
      runChecks(errs, item, 'maxLimitRequestRatio', ratioConstraint, requests, limits);
    }
  }
  return errs;
}

/** kube's PersistentVolumeClaimValidateLimitFunc: a claim's storage request against min and max. */
export function claimViolations(limitRange: StoredObject, claim: StoredObject): string[] {
  const errs: string[] = [];
  const spec = listOf(claim['spec']);
  const requests = listOf(listOf(spec['resources'])['requests']);
  for (const item of itemsOf(limitRange)) {
    if (item['type'] !== 'PersistentVolumeClaim') continue;
    runChecks(errs, item, 'min', minConstraint, requests, {});
    runChecks(errs, item, 'max', (t, n, e, r) => maxRequestConstraint(t, n, e, r), requests, {});
  }
  return errs;
}

/** kube's utilerrors aggregate message: one error as is, several (duplicates dropped) in brackets. */
export function aggregateMessage(errs: readonly string[]): string {
  if (errs.length === 1) return errs[0]!;
  const unique = [...new Set(errs)];
  return unique.length === 1 ? unique[0]! : `[${unique.join(', ')}]`;
}
