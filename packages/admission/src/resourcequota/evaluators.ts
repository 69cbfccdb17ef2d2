/**
 * kube 1.24's quota evaluators (pkg/quota/v1/evaluator/core and k8s.io/apiserver/pkg/quota/v1/generic):
 * what an object of a resource charges to a quota, which quota resources and scopes an evaluator
 * knows, and the pod rule that a quota on a compute resource requires every container to state it.
 * Pods, Services and PersistentVolumeClaims have their own; every other resource is counted as
 * `count/<resource>[.<group>]`, with the legacy names of configmaps, secrets, resourcequotas and
 * replicationcontrollers as aliases.
 */
import { createQuantity, isPlainObject, isQualifiedName, type Quantity, type StoredObject } from '@plinth/api';
import type { Operation } from '../interfaces.js';
import { add, max, one, readList, zero, type ResourceList } from './resources.js';

/** A quota's scope requirement (core/v1 ScopedResourceSelectorRequirement). */
export interface ScopeRequirement {
  scopeName: string;
  operator: string;
  values?: string[];
}

export interface Evaluator {
  group: string;
  resource: string;
  /** Which admission operations charge quota (kube's Evaluator.Handles). */
  handles(op: Operation): boolean;
  /** The quota resource names of `names` this evaluator charges. */
  matchingResources(names: readonly string[]): string[];
  /** Whether the object is in the scope (false for a scope the evaluator does not know). */
  matchesScope(req: ScopeRequirement, obj: StoredObject): boolean;
  /** The scopes of `reqs` the object is in (only pods have scopes). */
  matchingScopes(obj: StoredObject, reqs: readonly ScopeRequirement[]): ScopeRequirement[];
  /** A refusal reason when the object does not state what the quota's resources need, else undefined. */
  constraints(required: readonly string[], obj: StoredObject): string | undefined;
  /** What the object charges. `now` is for pods past their deletion grace period. */
  usage(obj: StoredObject, now?: number): ResourceList;
}

type Obj = Record<string, unknown>;
const field = (o: unknown, k: string): unknown => (isPlainObject(o) ? o[k] : undefined);
const list = (v: unknown): Obj[] => (Array.isArray(v) ? v.filter(isPlainObject) : []);

/** kube's ObjectCountQuotaResourceNameFor. */
export function objectCountName(group: string, resource: string): string {
  return group ? `count/${resource}.${group}` : `count/${resource}`;
}

/** The scope requirements of a quota: its `scopes` (as Exists), then its scopeSelector's expressions. */
export function quotaScopes(quota: StoredObject): ScopeRequirement[] {
  const spec = quota['spec'];
  const out: ScopeRequirement[] = [];
  for (const s of Array.isArray(field(spec, 'scopes')) ? (field(spec, 'scopes') as unknown[]) : []) {
    if (typeof s === 'string') out.push({ scopeName: s, operator: 'Exists' });
  }
  for (const e of list(field(field(spec, 'scopeSelector'), 'matchExpressions'))) {
    const values = Array.isArray(e['values']) ? e['values'].filter((v): v is string => typeof v === 'string') : undefined;
    out.push({ scopeName: String(e['scopeName'] ?? ''), operator: String(e['operator'] ?? ''), ...(values ? { values } : {}) });
  }
  return out;
}

/** What the check reads of a stored quota, decoded once per stored object (a request charges the same quota objects many times). */
interface QuotaFacts {
  hard: ResourceList;
  used: ResourceList;
  scopes: ScopeRequirement[];
}

/** Stored quotas are never changed in place (a write stores a new object): their facts can be kept beside them. */
const factsCache = new WeakMap<StoredObject, QuotaFacts>();

/** A stored quota's `status.hard`, `status.used` and scopes, decoded once per object. Callers must not change them. */
export function quotaFacts(quota: StoredObject): QuotaFacts {
  let facts = factsCache.get(quota);
  if (!facts) {
    const status = quota['status'];
    facts = { hard: readList(field(status, 'hard')), used: readList(field(status, 'used')), scopes: quotaScopes(quota) };
    factsCache.set(quota, facts);
  }
  return facts;
}

/** kube's generic.Matches: the quota's status.hard names a resource of the evaluator and the object is in every scope. */
export function quotaMatches(e: Evaluator, quota: StoredObject, obj: StoredObject): boolean {
  const { hard, scopes } = quotaFacts(quota);
  if (e.matchingResources(Object.keys(hard)).length === 0) return false;
  return scopes.every((s) => e.matchesScope(s, obj));
}

const intersect = (names: readonly string[], known: ReadonlySet<string>): string[] => names.filter((n) => known.has(n));
const noScopes = { matchesScope: () => false, matchingScopes: () => [], constraints: () => undefined };

/** kube's objectCountEvaluator: one of each created object. */
export function createObjectCountEvaluator(group: string, resource: string, alias?: string): Evaluator {
  const names = [objectCountName(group, resource), ...(alias ? [alias] : [])];
  const known = new Set(names);
  return {
    group,
    resource,
    ...noScopes,
    handles: (op) => op === 'CREATE',
    matchingResources: (input) => intersect(input, known),
    usage: () => Object.fromEntries(names.map((n) => [n, one()])),
  };
}

// --- services ---------------------------------------------------------------------------------

const SERVICE_RESOURCES = new Set([objectCountName('', 'services'), 'services', 'services.nodeports', 'services.loadbalancers']);

const serviceEvaluator: Evaluator = {
  group: '',
  resource: 'services',
  ...noScopes,
  handles: (op) => op === 'CREATE' || op === 'UPDATE',
  matchingResources: (input) => intersect(input, SERVICE_RESOURCES),
  usage(svc) {
    const spec = svc['spec'];
    const ports = list(field(spec, 'ports'));
    const out: ResourceList = {
      [objectCountName('', 'services')]: one(),
      services: one(),
      'services.loadbalancers': zero(),
      'services.nodeports': zero(),
    };
    const type = field(spec, 'type');
    if (type === 'NodePort') out['services.nodeports'] = count(ports.length);
    if (type === 'LoadBalancer') {
      // With allocateLoadBalancerNodePorts false only the ports given a node port count.
      out['services.nodeports'] = count(field(spec, 'allocateLoadBalancerNodePorts') === false ? ports.filter((p) => p['nodePort'] != null && p['nodePort'] !== 0).length : ports.length);
      out['services.loadbalancers'] = one();
    }
    return out;
  },
};

const count = (n: number): Quantity => createQuantity(n, 'DecimalSI');

// --- persistentvolumeclaims ---------------------------------------------------------------------

const STORAGE_CLASS_SUFFIX = '.storageclass.storage.k8s.io/';
const PVC_COUNT = objectCountName('', 'persistentvolumeclaims');
const PVC_RESOURCES = ['persistentvolumeclaims', 'requests.storage'];

/** kube's storage helper GetPersistentVolumeClaimClass: the beta annotation wins over the field. */
function claimClass(pvc: StoredObject): string {
  const ann = pvc.metadata.annotations?.['volume.beta.kubernetes.io/storage-class'];
  if (ann !== undefined) return ann;
  const cls = field(pvc['spec'], 'storageClassName');
  return typeof cls === 'string' ? cls : '';
}

const pvcEvaluator: Evaluator = {
  group: '',
  resource: 'persistentvolumeclaims',
  ...noScopes,
  handles: (op) => op === 'CREATE' || op === 'UPDATE',
  matchingResources: (input) =>
    input.filter((n) => n === PVC_COUNT || PVC_RESOURCES.includes(n) || PVC_RESOURCES.some((r) => n.endsWith(STORAGE_CLASS_SUFFIX + r))),
  usage(pvc) {
    const out: ResourceList = { persistentvolumeclaims: one(), [PVC_COUNT]: one() };
    const cls = claimClass(pvc);
    if (cls) out[`${cls}${STORAGE_CLASS_SUFFIX}persistentvolumeclaims`] = one();
    const requested = readList(field(field(pvc['spec'], 'resources'), 'requests'))['storage'];
    if (requested) {
      // Whole bytes, rounded up (kube's RoundUp(0)).
      const storage = requested.roundUp(0);
      out['requests.storage'] = storage;
      if (cls) out[`${cls}${STORAGE_CLASS_SUFFIX}requests.storage`] = storage;
    }
    return out;
  },
};

// --- pods ---------------------------------------------------------------------------------------

const POD_COUNT = objectCountName('', 'pods');
const POD_RESOURCES = new Set([
  POD_COUNT,
  'cpu',
  'memory',
  'ephemeral-storage',
  'requests.cpu',
  'requests.memory',
  'requests.ephemeral-storage',
  'limits.cpu',
  'limits.memory',
  'limits.ephemeral-storage',
  'pods',
]);
const POD_RESOURCE_PREFIXES = ['hugepages-', 'requests.hugepages-'];
/** The compute resources a quota can only track if every container states them. */
const VALIDATION_SET = new Set(['cpu', 'memory', 'requests.cpu', 'requests.memory', 'limits.cpu', 'limits.memory']);

/** kube's helper.IsNativeResource: unprefixed, or under kubernetes.io/. */
const isNativeResource = (n: string): boolean => !n.includes('/') || n.includes('kubernetes.io/');
/** kube's helper.IsExtendedResourceName. */
function isExtendedResourceName(n: string): boolean {
  if (isNativeResource(n) || n.startsWith('requests.')) return false;
  return isQualifiedName(`requests.${n}`).length === 0;
}
const isExtendedResourceNameForQuota = (n: string): boolean => !isNativeResource(n) && n.startsWith('requests.');

/** kube's podComputeUsageHelper: the quota names of a pod's (or container's) requests and limits. */
function computeUsage(requests: ResourceList, limits: ResourceList): ResourceList {
  const out: ResourceList = { pods: one() };
  for (const r of ['cpu', 'memory', 'ephemeral-storage']) {
    if (requests[r]) {
      out[r] = requests[r];
      out[`requests.${r}`] = requests[r];
    }
    if (limits[r]) out[`limits.${r}`] = limits[r];
  }
  for (const [r, q] of Object.entries(requests)) {
    if (r.startsWith('hugepages-')) {
      out[r] = q;
      out[`requests.${r}`] = q;
    }
    if (isExtendedResourceName(r)) out[`requests.${r}`] = q;
  }
  return out;
}

const resourcesOf = (c: Obj): { requests: ResourceList; limits: ResourceList } => ({
  requests: readList(field(c['resources'], 'requests')),
  limits: readList(field(c['resources'], 'limits')),
});

const containersOf = (pod: StoredObject): Obj[] => list(field(pod['spec'], 'containers'));
const initContainersOf = (pod: StoredObject): Obj[] => list(field(pod['spec'], 'initContainers'));

/** kube's QuotaV1Pod: a pod that ended, or is past its deletion grace period, charges only its count. */
export function isQuotaChargedPod(pod: StoredObject, now = Date.now()): boolean {
  const phase = field(pod['status'], 'phase');
  if (phase === 'Failed' || phase === 'Succeeded') return false;
  const del = pod.metadata.deletionTimestamp;
  const grace = pod.metadata.deletionGracePeriodSeconds;
  if (del && typeof grace === 'number' && now > Date.parse(del) + grace * 1000) return false;
  return true;
}

/**
 * A cheap test of a pod's stored JSON before it is decoded: false only when isQuotaChargedPod
 * cannot refuse the pod (no deletionTimestamp, no Failed or Succeeded anywhere). True for every
 * pod it refuses, and for some it does not (e.g. a label of that value).
 */
export function mayBeUnchargedPod(json: string): boolean {
  return json.includes('"deletionTimestamp"') || json.includes('"Failed"') || json.includes('"Succeeded"');
}

/** kube's qos.GetPodQOS == BestEffort: no container or init container requests or limits any cpu or memory. */
function isBestEffort(pod: StoredObject): boolean {
  for (const c of [...containersOf(pod), ...initContainersOf(pod)]) {
    const { requests, limits } = resourcesOf(c);
    for (const r of ['cpu', 'memory']) {
      if ((requests[r] && !requests[r].isZero()) || (limits[r] && !limits[r].isZero())) return false;
    }
  }
  return true;
}

function isTerminating(pod: StoredObject): boolean {
  const ads = field(pod['spec'], 'activeDeadlineSeconds');
  return typeof ads === 'number' && ads >= 0;
}

/** kube's ScopedResourceSelectorRequirementsAsSelector matched against `{PriorityClass: <class>}`. */
function matchesPriorityClass(pod: StoredObject, req: ScopeRequirement): boolean {
  const cls = field(pod['spec'], 'priorityClassName');
  const value = typeof cls === 'string' && cls !== '' ? cls : undefined;
  const values = req.values ?? [];
  switch (req.operator) {
    case 'In':
      return value !== undefined && values.includes(value);
    case 'NotIn':
      return value === undefined || !values.includes(value);
    case 'Exists':
      return value !== undefined;
    case 'DoesNotExist':
      return value === undefined;
    default:
      return false;
  }
}

const crossNamespaceTerm = (t: unknown): boolean => {
  const ns = field(t, 'namespaces');
  return (Array.isArray(ns) && ns.length > 0) || field(t, 'namespaceSelector') != null;
};

/** kube's usesCrossNamespacePodAffinity: a pod (anti-)affinity term naming namespaces or a namespace selector. */
function usesCrossNamespacePodAffinity(pod: StoredObject): boolean {
  const affinity = field(pod['spec'], 'affinity');
  for (const kind of ['podAffinity', 'podAntiAffinity']) {
    const a = field(affinity, kind);
    if (list(field(a, 'requiredDuringSchedulingIgnoredDuringExecution')).some(crossNamespaceTerm)) return true;
    if (list(field(a, 'preferredDuringSchedulingIgnoredDuringExecution')).some((w) => crossNamespaceTerm(w['podAffinityTerm']))) return true;
  }
  return false;
}

function podMatchesScope(req: ScopeRequirement, pod: StoredObject): boolean {
  switch (req.scopeName) {
    case 'Terminating':
      return isTerminating(pod);
    case 'NotTerminating':
      return !isTerminating(pod);
    case 'BestEffort':
      return isBestEffort(pod);
    case 'NotBestEffort':
      return !isBestEffort(pod);
    case 'PriorityClass':
      return matchesPriorityClass(pod, req);
    case 'CrossNamespacePodAffinity':
      return usesCrossNamespacePodAffinity(pod);
    default:
      return false;
  }
}

const podEvaluator: Evaluator = {
  group: '',
  resource: 'pods',
  // Pod resources cannot change after creation in 1.24: only a create is charged.
  handles: (op) => op === 'CREATE',
  matchingResources: (input) => input.filter((n) => POD_RESOURCES.has(n) || POD_RESOURCE_PREFIXES.some((p) => n.startsWith(p)) || isExtendedResourceNameForQuota(n)),
  matchesScope: podMatchesScope,
  matchingScopes: (pod, reqs) => reqs.filter((r) => podMatchesScope(r, pod)),
  constraints(required, pod) {
    const needed = required.filter((r) => VALIDATION_SET.has(r));
    if (needed.length === 0) return undefined;
    const missing = new Map<string, Set<string>>();
    for (const c of [...containersOf(pod), ...initContainersOf(pod)]) {
      const { requests, limits } = resourcesOf(c);
      const has = computeUsage(requests, limits);
      for (const r of needed) {
        if (r in has) continue;
        if (!missing.has(r)) missing.set(r, new Set());
        missing.get(r)!.add(String(c['name'] ?? ''));
      }
    }
    if (missing.size === 0) return undefined;
    const parts = [...missing.keys()].sort().map((r) => `${r} for: ${[...missing.get(r)!].sort().join(',')}`);
    return `must specify ${parts.join('; ')}`;
  },
  usage(pod, now) {
    const out: ResourceList = { [POD_COUNT]: one() };
    if (!isQuotaChargedPod(pod, now)) return out;
    let requests: ResourceList = {};
    let limits: ResourceList = {};
    for (const c of containersOf(pod)) {
      const r = resourcesOf(c);
      requests = add(requests, r.requests);
      limits = add(limits, r.limits);
    }
    for (const c of initContainersOf(pod)) {
      const r = resourcesOf(c);
      requests = max(requests, r.requests);
      limits = max(limits, r.limits);
    }
    const overhead = readList(field(pod['spec'], 'overhead'));
    requests = add(requests, overhead);
    limits = add(limits, overhead);
    return add(out, computeUsage(requests, limits));
  },
};

/** kube's legacyObjectCountAliases. */
const LEGACY_ALIASES: Record<string, string> = {
  configmaps: 'configmaps',
  resourcequotas: 'resourcequotas',
  replicationcontrollers: 'replicationcontrollers',
  secrets: 'secrets',
};

/**
 * Resources quota never charges (kube's quota install ignoredResources): not stored, or too
 * frequent to charge (events).
 */
const IGNORED = new Set([
  '/bindings',
  '/componentstatuses',
  '/events',
  'authentication.k8s.io/tokenreviews',
  'authorization.k8s.io/subjectaccessreviews',
  'authorization.k8s.io/selfsubjectaccessreviews',
  'authorization.k8s.io/localsubjectaccessreviews',
  'authorization.k8s.io/selfsubjectrulesreviews',
]);

export function isIgnoredResource(group: string, resource: string): boolean {
  return IGNORED.has(`${group}/${resource}`);
}

/** The evaluator of a group/resource (kube's registry, with an object counter added on first use). */
export function createEvaluatorRegistry(): (group: string, resource: string) => Evaluator {
  const byKey = new Map<string, Evaluator>();
  for (const e of [podEvaluator, serviceEvaluator, pvcEvaluator]) byKey.set(`${e.group}/${e.resource}`, e);
  for (const [r, alias] of Object.entries(LEGACY_ALIASES)) byKey.set(`/${r}`, createObjectCountEvaluator('', r, alias));
  return (group, resource) => {
    const key = `${group}/${resource}`;
    let e = byKey.get(key);
    if (!e) byKey.set(key, (e = createObjectCountEvaluator(group, resource)));
    return e;
  };
}
