/**
 * The create-only storages of pods: `pods/<name>/binding` and the legacy `bindings` collection
 * (kube 1.24's BindingREST and LegacyBindingREST, pkg/registry/core/pod/storage/storage.go), and
 * `pods/<name>/eviction` (EvictionREST, storage/eviction.go). Both answer 201 with a success
 * Status, as kube's create handler fills in the code of a Status a storage returns.
 */
import {
  FieldError,
  StatusError,
  badRequest,
  bindings,
  cloneJson,
  conflict,
  fieldErrorString,
  isConflict,
  isPlainObject,
  internalError,
  forbidden,
  labelSelectorFromObject,
  pdbV1,
  pods,
  type LabelSelectorObject,
  successStatus,
  validateBinding,
  type Binding,
  type ResourceDefinition,
  type ResourceStrategy,
  type StoredObject,
  type SubresourceDefinition,
} from '@plinth/api';
import type { CreateContext, CreateOnlyStorage, CreateOnlyStorages } from './create-only.js';
import type { DeleteRequestOptions, ResourceStore } from './store.js';
import type { PropagationPolicy } from './delete.js';
import { now } from './meta.js';

export interface PodStorageDeps {
  /** The pods store (core/v1). */
  pods: ResourceStore;
  /** The policy/v1 PodDisruptionBudgets store; absent: no budget is checked. */
  pdbs?: ResourceStore;
}

/**
 * The binding's write bypasses the pod strategy, as kube's setPodHostAndAnnotations writes
 * through the storage directly: no spec-immutability rule applies to it.
 */
const BINDING_WRITE: ResourceStrategy = { validate: () => [], validateOnUpdate: false };
/** No admission runs for the pod write itself: the Binding was admitted. */
const NO_ADMISSION = { validate: async (): Promise<void> => {} };

/** kube's ErrorList.ToAggregate as an error that is no Status: its ErrorToAPIStatus is a 500 with no reason. */
function aggregateError(errs: FieldError[]): StatusError {
  const texts = [...new Set(errs.map(fieldErrorString))];
  return new StatusError({ code: 500, reason: '', message: texts.length === 1 ? texts[0]! : `[${texts.join(', ')}]` });
}

function stringMap(v: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (isPlainObject(v)) for (const [k, x] of Object.entries(v)) if (typeof x === 'string') out[k] = x;
  return out;
}

const PODS = { group: '', resource: 'pods' };

/** kube's create handler gives a Success Status a storage returns the create's code. */
const created = (): StoredObject => ({ ...successStatus(), code: 201 }) as unknown as StoredObject;
const PODS_BINDING = { group: '', resource: 'pods/binding' };

/** kube's BindingREST.Create for `name` (the URL's, or the Binding's own for the legacy resource). */
async function bind(deps: PodStorageDeps, ctx: CreateContext, name: string, obj: StoredObject, validate: (o: StoredObject) => Promise<void>): Promise<StoredObject> {
  if (name !== (obj.metadata.name ?? '')) throw badRequest('name in URL does not match name in Binding object');
  const binding = obj as unknown as Binding;
  // kube returns the field errors as an aggregate, which its error writer answers as a 500.
  const errs = validateBinding(binding);
  if (errs.length > 0) throw aggregateError(errs);
  await validate(cloneJson(obj));
  const node = binding.target?.name ?? '';
  const { uid, resourceVersion } = obj.metadata;
  const annotations = stringMap(obj.metadata.annotations);
  await deps.pods.modify(
    { user: ctx.user, namespace: ctx.namespace },
    name,
    (pod) => {
      // kube's storage preconditions on the binding's uid and resourceVersion.
      if (uid && uid !== pod.metadata.uid) throw conflict(PODS, name, `Precondition failed: UID in precondition: ${uid}, UID in object meta: ${pod.metadata.uid ?? ''}`);
      if (resourceVersion && resourceVersion !== pod.metadata.resourceVersion) {
        throw conflict(PODS, name, `Precondition failed: ResourceVersion in precondition: ${resourceVersion}, ResourceVersion in object meta: ${pod.metadata.resourceVersion ?? ''}`);
      }
      if (pod.metadata.deletionTimestamp) throw conflict(PODS_BINDING, name, `pod ${name} is being deleted, cannot be assigned to a host`);
      const spec = isPlainObject(pod['spec']) ? pod['spec'] : (pod['spec'] = {});
      const assigned = typeof spec['nodeName'] === 'string' ? spec['nodeName'] : '';
      if (assigned !== '') throw conflict(PODS_BINDING, name, `pod ${name} is already assigned to node ${JSON.stringify(assigned)}`);
      spec['nodeName'] = node;
      if (Object.keys(annotations).length > 0) pod.metadata.annotations = { ...(pod.metadata.annotations ?? {}), ...annotations };
      setPodScheduled(pod);
      // The version this write starts from (not the Binding's): checked by the store.
      delete pod.metadata.resourceVersion;
    },
    { dryRun: ctx.dryRun },
    BINDING_WRITE,
    NO_ADMISSION,
  );
  return created();
}

/** kube's UpdatePodCondition with PodScheduled=True: a new transition time only when the status changes. */
function setPodScheduled(pod: StoredObject): void {
  const status = isPlainObject(pod['status']) ? pod['status'] : (pod['status'] = {});
  const conditions = Array.isArray(status['conditions']) ? (status['conditions'] as unknown[]) : (status['conditions'] = []);
  const i = conditions.findIndex((c) => isPlainObject(c) && c['type'] === 'PodScheduled');
  const old = i >= 0 ? (conditions[i] as Record<string, unknown>) : undefined;
  const next: Record<string, unknown> = { type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: now() };
  if (old && old['status'] === 'True') next['lastTransitionTime'] = old['lastTransitionTime'];
  if (old) conditions[i] = next;
  else conditions.push(next);
}

function deleteOptionsOf(eviction: StoredObject, dryRun: boolean): DeleteRequestOptions {
  const d = isPlainObject(eviction['deleteOptions']) ? eviction['deleteOptions'] : {};
  const opts: DeleteRequestOptions = {};
  if (typeof d['gracePeriodSeconds'] === 'number') opts.gracePeriodSeconds = d['gracePeriodSeconds'];
  if (typeof d['propagationPolicy'] === 'string') opts.propagationPolicy = d['propagationPolicy'] as PropagationPolicy;
  if (typeof d['orphanDependents'] === 'boolean') opts.orphanDependents = d['orphanDependents'];
  const pre = isPlainObject(d['preconditions']) ? d['preconditions'] : undefined;
  if (pre) {
    opts.preconditions = {
      ...(typeof pre['uid'] === 'string' ? { uid: pre['uid'] } : {}),
      ...(typeof pre['resourceVersion'] === 'string' ? { resourceVersion: pre['resourceVersion'] } : {}),
    };
  }
  // kube's propagateDryRun: the request's dryRun and the eviction's deleteOptions.dryRun are one.
  if (dryRun || (Array.isArray(d['dryRun']) && d['dryRun'].includes('All'))) opts.dryRun = true;
  return opts;
}

/** What the disruption budgets say about evicting a pod. */
export type DisruptionVerdict = { allowed: true } | { allowed: false; error: StatusError };

const BUDGET_MESSAGE = "Cannot evict pod as it would violate the pod's disruption budget.";
const budgetRefusal = (message: string): StatusError =>
  new StatusError({ code: 429, reason: 'TooManyRequests', message: BUDGET_MESSAGE, details: { causes: [{ reason: 'DisruptionBudget', message }] } });
const num = (v: unknown): number => (typeof v === 'number' ? v : 0);

/**
 * kube's getPodDisruptionBudgets and checkAndDecrement (EvictionREST, 1.24): the budgets of the
 * pod's namespace whose selector matches it (an empty selector matches nothing here, as kube's
 * eviction treats it); more than one is a 500; the one budget is checked and, when it allows a
 * disruption, decremented with the pod recorded in status.disruptedPods in one optimistic write
 * of its status (re-checked on a lost race).
 */
export async function checkDisruptionBudgets(deps: PodStorageDeps, scope: { user: CreateContext['user']; namespace: string }, pod: StoredObject, dryRun: boolean): Promise<DisruptionVerdict> {
  if (!deps.pdbs) return { allowed: true };
  const list = await deps.pdbs.list(scope, {});
  const labels = stringMap(pod.metadata.labels);
  const matching = list.items.filter((pdb) => {
    const sel = isPlainObject(pdb['spec']) ? pdb['spec']['selector'] : undefined;
    try {
      const selector = labelSelectorFromObject(sel as LabelSelectorObject | undefined);
      return !selector.empty() && selector.matches(labels);
    } catch {
      return false;
    }
  });
  if (matching.length === 0) return { allowed: true };
  if (matching.length > 1) return { allowed: false, error: internalError('This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.') };
  const name = matching[0]!.metadata.name!;
  const status = pdbV1.subresources.find((x) => x.name === 'status')!.strategy!;
  await deps.pdbs.modify(
    scope,
    name,
    (pdb) => {
      const st = isPlainObject(pdb['status']) ? pdb['status'] : (pdb['status'] = {});
      if (num(st['observedGeneration']) < num(pdb.metadata.generation)) throw budgetRefusal(`The disruption budget ${name} is still being processed by the server.`);
      const allowed = num(st['disruptionsAllowed']);
      if (allowed < 0) throw forbidden({ group: 'policy', resource: 'poddisruptionbudget' }, name, 'pdb disruptions allowed is negative');
      const disrupted = isPlainObject(st['disruptedPods']) ? st['disruptedPods'] : {};
      if (Object.keys(disrupted).length > MAX_DISRUPTED_PODS) throw forbidden({ group: 'policy', resource: 'poddisruptionbudget' }, name, 'DisruptedPods map too big - too many evictions not confirmed by PDB controller');
      if (allowed === 0) throw budgetRefusal(`The disruption budget ${name} needs ${num(st['desiredHealthy'])} healthy pods and has ${num(st['currentHealthy'])} currently`);
      st['disruptionsAllowed'] = allowed - 1;
      st['disruptedPods'] = { ...disrupted, [pod.metadata.name ?? '']: now() };
      delete pdb.metadata.resourceVersion;
    },
    { dryRun },
    status,
    NO_ADMISSION,
  );
  return { allowed: true };
}

/** kube's MaxDisruptedPodSize. */
const MAX_DISRUPTED_PODS = 2000;

/** kube's canIgnorePDB: a terminal or pending pod, or one being deleted, is deleted without budgets. */
function canIgnoreBudgets(pod: StoredObject): boolean {
  const phase = isPlainObject(pod['status']) ? pod['status']['phase'] : undefined;
  return phase === 'Succeeded' || phase === 'Failed' || phase === 'Pending' || !!pod.metadata.deletionTimestamp;
}

/** kube's shouldEnforceResourceVersion: a running pod is deleted only at the version the budgets were checked at. */
function enforcesResourceVersion(pod: StoredObject): boolean {
  const phase = isPlainObject(pod['status']) ? pod['status']['phase'] : undefined;
  return !(phase === 'Succeeded' || phase === 'Failed' || !!pod.metadata.deletionTimestamp);
}

/** kube's EvictionsRetry: a few attempts on conflicts when no resourceVersion precondition was given. */
const EVICTION_ATTEMPTS = 5;

/** kube's EvictionREST.Create. */
async function evict(deps: PodStorageDeps, ctx: CreateContext, obj: StoredObject, validate: (o: StoredObject) => Promise<void>): Promise<StoredObject> {
  const name = ctx.name;
  if (name !== (obj.metadata.name ?? '')) throw badRequest('name in URL does not match name in Eviction object');
  const options = deleteOptionsOf(obj, ctx.dryRun);
  await validate(cloneJson(obj));
  const scope = { user: ctx.user, namespace: ctx.namespace };
  const retry = !options.preconditions?.resourceVersion;
  for (let attempt = 1; ; attempt++) {
    try {
      const pod = await deps.pods.get(scope, name);
      const ignore = canIgnoreBudgets(pod);
      if (!ignore) {
        const verdict = await checkDisruptionBudgets(deps, scope, pod, !!options.dryRun);
        if (!verdict.allowed) throw verdict.error;
      }
      const opts: DeleteRequestOptions = { ...options };
      // Budgets were read against this version of the pod: delete only that version.
      if (enforcesResourceVersion(pod) && !options.preconditions?.resourceVersion) {
        opts.preconditions = { ...(options.preconditions ?? {}), resourceVersion: pod.metadata.resourceVersion! };
      }
      await deps.pods.delete(scope, name, opts);
      return created();
    } catch (e) {
      if (!retry || !isConflict(e) || attempt >= EVICTION_ATTEMPTS) throw e;
    }
  }
}

/** The storages of pods/binding, the bindings resource and pods/eviction, keyed by what they serve. */
export function createPodStorages(deps: PodStorageDeps): CreateOnlyStorages {
  const sub = (name: string): SubresourceDefinition => {
    const s = pods.subresources.find((x) => x.name === name);
    if (!s) throw new Error(`pods has no ${name} sub-resource`);
    return s;
  };
  const binding: CreateOnlyStorage = { create: (ctx, obj, validate) => bind(deps, ctx, ctx.name, obj, validate) };
  // LegacyBindingREST: a plain create, named by the Binding itself.
  const legacy: CreateOnlyStorage = { create: (ctx, obj, validate) => bind(deps, ctx, obj.metadata.name ?? '', obj, validate) };
  const eviction: CreateOnlyStorage = { create: (ctx, obj, validate) => evict(deps, ctx, obj, validate) };
  return new Map<ResourceDefinition | SubresourceDefinition, CreateOnlyStorage>([
    [sub('binding'), binding],
    [bindings, legacy],
    [sub('eviction'), eviction],
  ]);
}
