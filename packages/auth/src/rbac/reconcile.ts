/**
 * Start-up reconciliation of the default policy (kube's pkg/registry/rbac/reconciliation,
 * computeReconciledRole / computeReconciledRoleBinding, run without removing extras): missing
 * labels, annotations, rules, aggregation selectors and subjects are added; nothing an
 * administrator added is removed; objects annotated autoupdate "false" are left alone.
 */
import { isDeepStrictEqual } from 'node:util';
import type { PolicyRule } from '../authorizer.js';
import { covers } from './policy-rules.js';
import { AUTOUPDATE_ANNOTATION, type LabelSelectorObject } from './bootstrap-policy.js';
import type { Subject } from './rules.js';

/** The parts of a ClusterRole or ClusterRoleBinding reconciliation reads and writes. */
export interface ReconcilableObject {
  metadata: { name?: string; labels?: Record<string, string>; annotations?: Record<string, string>; [k: string]: unknown };
  rules?: PolicyRule[];
  aggregationRule?: { clusterRoleSelectors?: LabelSelectorObject[] } | null;
  roleRef?: { apiGroup: string; kind: string; name: string };
  subjects?: Subject[];
  [k: string]: unknown;
}

export type ReconcileOperation = 'none' | 'update' | 'recreate';

export interface ReconcileResult<T extends ReconcilableObject> {
  operation: ReconcileOperation;
  /** Annotated autoupdate "false": the caller writes nothing. */
  protected: boolean;
  /** The object to write (existing plus what was missing; the expected object for recreate). */
  object: T;
}

const isProtected = (o: ReconcilableObject): boolean => o.metadata.annotations?.[AUTOUPDATE_ANNOTATION] === 'false';

/** Expected labels/annotations added; the existing values win where both set one. */
function mergeMetadata(out: ReconcilableObject, existing: ReconcilableObject, expected: ReconcilableObject): boolean {
  let changed = false;
  for (const field of ['annotations', 'labels'] as const) {
    const merged = { ...expected.metadata[field], ...existing.metadata[field] };
    const before = existing.metadata[field] ?? {};
    if (!isDeepStrictEqual(merged, before)) {
      out.metadata[field] = merged;
      changed = true;
    }
  }
  return changed;
}

/** kube's computeReconciledRole with removeExtraPermissions=false. */
export function reconcileClusterRole<T extends ReconcilableObject>(existing: T, expected: ReconcilableObject): ReconcileResult<T> {
  const out = structuredClone(existing);
  let changed = mergeMetadata(out, existing, expected);
  const { missing } = covers(existing.rules ?? [], expected.rules ?? []);
  if (missing.length > 0) {
    out.rules = [...(existing.rules ?? []), ...missing];
    changed = true;
  }
  const have = existing.aggregationRule?.clusterRoleSelectors ?? [];
  const want = expected.aggregationRule?.clusterRoleSelectors ?? [];
  if (!expected.aggregationRule && existing.aggregationRule) {
    // Not an aggregated role in the expected policy: kube drops the aggregation.
    delete out.aggregationRule;
    changed = true;
  } else {
    const missingSelectors = want.filter((w) => !have.some((h) => isDeepStrictEqual(h, w)));
    if (missingSelectors.length > 0) {
      out.aggregationRule = { ...(existing.aggregationRule ?? {}), clusterRoleSelectors: [...have, ...missingSelectors] };
      changed = true;
    }
  }
  return { operation: changed ? 'update' : 'none', protected: isProtected(existing), object: out };
}

const sameSubject = (a: Subject, b: Subject): boolean =>
  a.kind === b.kind && (a.apiGroup ?? '') === (b.apiGroup ?? '') && a.name === b.name && (a.namespace ?? '') === (b.namespace ?? '');

/** kube's computeReconciledRoleBinding with removeExtraSubjects=false. */
export function reconcileClusterRoleBinding<T extends ReconcilableObject>(existing: T, expected: T): ReconcileResult<T> {
  const prot = isProtected(existing);
  // A binding's roleRef cannot change: a different one means delete and create anew.
  if (!isDeepStrictEqual(existing.roleRef, expected.roleRef)) return { operation: 'recreate', protected: prot, object: structuredClone(expected) };
  const out = structuredClone(existing);
  let changed = mergeMetadata(out, existing, expected);
  const have = existing.subjects ?? [];
  const missing = (expected.subjects ?? []).filter((w) => !have.some((h) => sameSubject(h, w)));
  if (missing.length > 0) {
    out.subjects = [...have, ...missing];
    changed = true;
  }
  return { operation: changed ? 'update' : 'none', protected: prot, object: out };
}
