/**
 * API Priority and Fairness configuration, as kube 1.24's apiserver keeps it:
 * - the config producer (pkg/registry/flowcontrol/ensurer, post-start hook
 *   `priority-and-fairness-config-producer`): the suggested objects are created when missing and
 *   the mandatory ones always; a stored object's spec is put back to the bootstrap's when it is
 *   mandatory or annotated `apf.kubernetes.io/autoupdate-spec: "true"`, and the annotation is set
 *   to what the producer decided. It runs at start, then every minute (kube's period) and, here,
 *   also soon after a bootstrap object changes or goes away.
 * - the config consumer (kube's APF config controller, on every replica): informers on both
 *   resources reconfigure the filter, and each FlowSchema's `Dangling` condition is written through
 *   `/status` when it differs from what it should be (every replica computes the same condition,
 *   so their writes agree; a lost race is retried on the next event).
 */
import { isDeepStrictEqual } from 'node:util';
import {
  AUTO_UPDATE_ANNOTATION,
  MANDATORY_FLOW_SCHEMAS,
  MANDATORY_PRIORITY_LEVELS,
  SUGGESTED_FLOW_SCHEMAS,
  SUGGESTED_PRIORITY_LEVELS,
  canonicalSpec,
  isAlreadyExists,
  isConflict,
  isNotFound,
  type StoredObject,
  type UserInfo,
} from '@plinth/api';
import type { ResourceStore } from '../registry/store.js';
import type { Logger } from '../log.js';
import { compileFlowSchema, compilePriorityLevel, type PriorityAndFairness } from '../filters/priority-and-fairness.js';
import { runInformer } from './informer.js';

const CONTROLLER_USER: UserInfo = { name: 'system:apiserver', groups: ['system:masters'] };
const scope = { user: CONTROLLER_USER, namespace: '' };
/** kube's field manager of the consumer's status writes. */
const STATUS_MANAGER = 'api-priority-and-fairness-config-consumer-v1';
/** kube's producer period. */
const ENSURE_PERIOD_MS = 60_000;

export interface FlowcontrolStores {
  flowSchemas: ResourceStore;
  priorityLevels: ResourceStore;
  log: Logger;
}

/** kube's shouldUpdateSpec: the annotation parsed as Go's strconv.ParseBool, false otherwise. */
function annotationSaysUpdate(o: StoredObject): boolean {
  const v = o.metadata.annotations?.[AUTO_UPDATE_ANNOTATION];
  return v === 'true' || v === '1' || v === 't' || v === 'T' || v === 'TRUE' || v === 'True';
}

function annotationIs(o: StoredObject, want: boolean): boolean {
  const v = o.metadata.annotations?.[AUTO_UPDATE_ANNOTATION];
  const parsed = ['1', 't', 'T', 'TRUE', 'true', 'True'].includes(v ?? '') ? true : ['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(v ?? '') ? false : undefined;
  return parsed === want;
}

async function ensureOne(store: ResourceStore, want: StoredObject, mandatory: boolean): Promise<void> {
  const name = want.metadata.name!;
  let have: StoredObject | undefined;
  try {
    have = await store.get(scope, name);
  } catch (e) {
    if (!isNotFound(e)) throw e;
  }
  if (!have) {
    const obj = structuredClone(want);
    obj.metadata.annotations = { [AUTO_UPDATE_ANNOTATION]: 'true' };
    try {
      await store.create(scope, obj);
    } catch (e) {
      if (!isAlreadyExists(e)) throw e;
    }
    return;
  }
  if (have.metadata.deletionTimestamp) return;
  const autoUpdate = mandatory || annotationSaysUpdate(have);
  const specChanged = autoUpdate && !isDeepStrictEqual(canonicalSpec(have['spec']), canonicalSpec(want['spec']));
  if (annotationIs(have, autoUpdate) && !specChanged) return;
  try {
    await store.modify(scope, name, (o) => {
      o.metadata.annotations = { ...(o.metadata.annotations ?? {}), [AUTO_UPDATE_ANNOTATION]: String(autoUpdate) };
      if (specChanged) o['spec'] = structuredClone(want['spec']);
    });
  } catch (e) {
    if (!isConflict(e) && !isNotFound(e)) throw e;
  }
}

/** One round of kube's ensurer: the suggested configuration, then the mandatory one. */
export async function ensureFlowcontrolBootstrap(stores: FlowcontrolStores): Promise<void> {
  for (const pl of SUGGESTED_PRIORITY_LEVELS) await ensureOne(stores.priorityLevels, pl, false);
  for (const fs of SUGGESTED_FLOW_SCHEMAS) await ensureOne(stores.flowSchemas, fs, false);
  for (const pl of MANDATORY_PRIORITY_LEVELS) await ensureOne(stores.priorityLevels, pl, true);
  for (const fs of MANDATORY_FLOW_SCHEMAS) await ensureOne(stores.flowSchemas, fs, true);
}

const BOOTSTRAP_NAMES = new Set([...SUGGESTED_FLOW_SCHEMAS, ...MANDATORY_FLOW_SCHEMAS, ...SUGGESTED_PRIORITY_LEVELS, ...MANDATORY_PRIORITY_LEVELS].map((o) => o.metadata.name!));

/** The Dangling condition kube's config controller wants on a FlowSchema (without its time). */
function danglingCondition(fs: StoredObject, levels: ReadonlyMap<string, StoredObject>): { status: string; reason: string; message: string } {
  const pl = String((fs['spec'] as { priorityLevelConfiguration?: { name?: string } } | undefined)?.priorityLevelConfiguration?.name ?? '');
  return levels.has(pl)
    ? { status: 'False', reason: 'Found', message: `This FlowSchema references the PriorityLevelConfiguration object named "${pl}" and it exists` }
    : { status: 'True', reason: 'NotFound', message: `This FlowSchema references the PriorityLevelConfiguration object named "${pl}" but there is no such object` };
}

/** Starts the consumer (and the producer's periodic rounds); returns its stop function. */
export function startFlowcontrolConfig(opts: FlowcontrolStores & { apf: PriorityAndFairness }): () => void {
  const { log, apf } = opts;
  const schemas = new Map<string, StoredObject>();
  const levels = new Map<string, StoredObject>();
  let scheduled: NodeJS.Timeout | undefined;
  let ensureSoon: NodeJS.Timeout | undefined;
  let stopped = false;

  const writeConditions = async (): Promise<void> => {
    for (const fs of schemas.values()) {
      const want = danglingCondition(fs, levels);
      const conditions = ((fs['status'] as { conditions?: Array<Record<string, unknown>> } | undefined)?.conditions ?? []);
      const have = conditions.find((c) => c['type'] === 'Dangling');
      if (have && have['status'] === want.status && have['reason'] === want.reason && have['message'] === want.message) continue;
      try {
        await opts.flowSchemas.modify(
          scope,
          fs.metadata.name!,
          (o) => {
            if (o.metadata.uid !== fs.metadata.uid) return;
            const status = (o['status'] ?? {}) as { conditions?: Array<Record<string, unknown>> };
            // Another replica may have written the same condition meanwhile: then nothing changes
            // (an unchanged object is not written).
            const current = (status.conditions ?? []).find((c) => c['type'] === 'Dangling');
            if (current && current['status'] === want.status && current['reason'] === want.reason && current['message'] === want.message) return;
            const rest = (status.conditions ?? []).filter((c) => c['type'] !== 'Dangling');
            o['status'] = { ...status, conditions: [...rest, { type: 'Dangling', ...want, lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z') }] };
          },
          { manager: STATUS_MANAGER },
          opts.flowSchemas.def.subresources.find((s) => s.name === 'status')?.strategy,
        );
      } catch (e) {
        if (!isConflict(e) && !isNotFound(e)) log.v(2, 'flowcontrol: writing a FlowSchema status failed', { name: fs.metadata.name, error: String(e) });
      }
    }
  };

  // As kube's controller waits for both informers' caches: half a configuration (schemas without
  // their levels) would put every request in catch-all for a moment.
  const listed = new Set<Map<string, StoredObject>>();
  const digest = (): void => {
    scheduled = undefined;
    if (stopped || listed.size < 2) return;
    apf.configure([...levels.values()].map(compilePriorityLevel), [...schemas.values()].map(compileFlowSchema));
    void writeConditions();
  };
  const schedule = (): void => {
    scheduled ??= setTimeout(digest, 10);
  };
  const ensure = (): void => {
    ensureSoon = undefined;
    if (!stopped) void ensureFlowcontrolBootstrap(opts).catch((e: unknown) => log.v(2, 'flowcontrol: ensuring the bootstrap configuration failed', { error: String(e) }));
  };
  const onChange = (type: string, obj: StoredObject): void => {
    if (type !== 'ADDED' && BOOTSTRAP_NAMES.has(obj.metadata.name ?? '')) ensureSoon ??= setTimeout(ensure, 200);
  };
  const informer = (store: ResourceStore, cache: Map<string, StoredObject>) =>
    runInformer({
      store,
      scope,
      log,
      resyncMs: 5 * 60_000,
      onList(items) {
        cache.clear();
        for (const o of items) cache.set(o.metadata.name!, o);
        listed.add(cache);
        schedule();
      },
      onObject(type, obj) {
        if (type === 'DELETED') cache.delete(obj.metadata.name!);
        else cache.set(obj.metadata.name!, obj);
        onChange(type, obj);
        schedule();
      },
    });
  const informers = [informer(opts.flowSchemas, schemas), informer(opts.priorityLevels, levels)];
  const periodic = setInterval(ensure, ENSURE_PERIOD_MS);
  periodic.unref();
  return () => {
    stopped = true;
    clearInterval(periodic);
    clearTimeout(scheduled);
    clearTimeout(ensureSoon);
    for (const i of informers) i.stop();
  };
}
