/**
 * kube's LimitRanger plugin (plugin/pkg/admission/limitranger, 1.24), on by default. It handles
 * CREATE and UPDATE of pods and PersistentVolumeClaims (no sub-resource; a pod UPDATE is skipped,
 * its containers being immutable; an object already being deleted is skipped):
 * - mutating: a pod's containers get their namespace's LimitRange defaults (limitranger-checks.ts);
 * - validating: min, max and maxLimitRequestRatio of Container and Pod items, storage min/max of
 *   PersistentVolumeClaim items; the first LimitRange with violations refuses the write with 403
 *   and kube's aggregated message.
 *
 * LimitRanges come from the watch cache (kube's lister). When it has none for the namespace, a
 * live read answers, remembered per namespace for 30 s (kube's liveLookupCache, LRU of 10000), so a
 * LimitRange created a moment ago applies while namespaces without any cost one read per 30 s.
 */
import type { StoredObject } from '@plinth/api';
import type { AdmissionAttributes, AdmissionPlugin } from './interfaces.js';
import { admissionForbidden } from './forbidden.js';
import { aggregateMessage, applyContainerDefaults, claimViolations, podViolations } from './limitranger-checks.js';

/** The LimitRanges of a namespace: the watch cache's, or etcd's now (`fresh`). */
export type LimitRangeLister = (namespace: string, fresh?: boolean) => Promise<StoredObject[]>;

export interface LimitRangerOptions {
  list: LimitRangeLister;
  /** How long a live lookup is reused (kube: 30 s). */
  liveTtlMs?: number;
  /** Clock, for tests. */
  now?: () => number;
}

const LIVE_CACHE_SIZE = 10_000;

function isPodOrClaim(attrs: AdmissionAttributes): 'pods' | 'persistentvolumeclaims' | undefined {
  if (attrs.subresource !== '' || attrs.kind.group !== '') return undefined;
  // Containers cannot change on a pod update, so kube does not look at pod updates.
  if (attrs.kind.kind === 'Pod') return attrs.operation === 'UPDATE' ? undefined : 'pods';
  if (attrs.kind.kind === 'PersistentVolumeClaim') return 'persistentvolumeclaims';
  return undefined;
}

export function createLimitRanger(opts: LimitRangerOptions): AdmissionPlugin {
  const ttl = opts.liveTtlMs ?? 30_000;
  const now = opts.now ?? Date.now;
  /** namespace → live lookup; Map order is insertion order, so the first key is the oldest. */
  const live = new Map<string, { expiry: number; items: StoredObject[] }>();

  const limitRangesOf = async (namespace: string): Promise<StoredObject[]> => {
    const cached = await opts.list(namespace);
    if (cached.length > 0) return cached;
    const hit = live.get(namespace);
    if (hit && hit.expiry >= now()) return hit.items;
    const items = await opts.list(namespace, true);
    live.delete(namespace);
    live.set(namespace, { expiry: now() + ttl, items });
    if (live.size > LIVE_CACHE_SIZE) live.delete(live.keys().next().value!);
    return items;
  };

  /** The namespace's LimitRanges when the plugin applies to this write, else undefined. */
  const applicable = async (attrs: AdmissionAttributes): Promise<{ kind: 'pods' | 'persistentvolumeclaims'; items: StoredObject[] } | undefined> => {
    const kind = isPodOrClaim(attrs);
    if (!kind || !attrs.object) return undefined;
    if (attrs.oldObject?.metadata.deletionTimestamp) return undefined;
    return { kind, items: await limitRangesOf(attrs.namespace) };
  };

  return {
    name: 'LimitRanger',
    handles: (op) => op === 'CREATE' || op === 'UPDATE',
    async admit(attrs) {
      const a = await applicable(attrs);
      if (a?.kind !== 'pods') return;
      for (const lr of a.items) applyContainerDefaults(lr, attrs.object!);
    },
    async validate(attrs) {
      const a = await applicable(attrs);
      if (!a) return;
      for (const lr of a.items) {
        const errs = a.kind === 'pods' ? podViolations(lr, attrs.object!) : claimViolations(lr, attrs.object!);
        if (errs.length > 0) throw admissionForbidden(attrs, aggregateMessage(errs));
      }
    },
  };
}
