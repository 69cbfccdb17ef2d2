/**
 * The `scale` sub-resource of built-in resources (kube's ScaleREST per scalable kind): its kind
 * (autoscaling/v1 Scale), kube's ValidateScale, and `scaleSubresource`, the one declaration a
 * resource module makes to be scalable (ReplicationControllers now; apps/v1 Deployments,
 * ReplicaSets and StatefulSets next). The apiserver's registry/scale.ts serves it.
 */
import type { ScaleDescription, SubresourceDefinition } from '../catalog.js';
import { type FieldError, fieldErr } from '../field-errors.js';
import type { StoredObject } from '../types.js';
import { nameIsDNSSubdomain, validateObjectMeta } from '../validation.js';
import { defineKind } from './define.js';

/** autoscaling/v1 Scale: the body and answer of every `scale` sub-resource. */
export const scaleKind = defineKind({
  group: 'autoscaling',
  version: 'v1',
  kind: 'Scale',
  description: 'A Scale reads or sets the number of replicas of a scalable resource.',
  strategy: { validate: () => [] },
});

/** kube's autoscaling ValidateScale: the Scale's metadata (namespaced) and non-negative spec.replicas. */
export function validateScale(scale: StoredObject): FieldError[] {
  const errs = validateObjectMeta(scale.metadata, true, nameIsDNSSubdomain);
  const replicas = (scale['spec'] as { replicas?: unknown } | undefined)?.replicas;
  if (typeof replicas === 'number' && replicas < 0) errs.push(fieldErr.invalid('spec.replicas', replicas, 'must be greater than or equal to 0'));
  return errs;
}

const intAt = (obj: unknown, path: readonly string[]): number | undefined => {
  let cur = obj;
  for (const k of path) {
    if (!cur || typeof cur !== 'object' || Array.isArray(cur) || !Object.hasOwn(cur, k)) return undefined;
    cur = (cur as Record<string, unknown>)[k];
  }
  return typeof cur === 'number' ? cur : undefined;
};

/** How a built-in resource's Scale reads its object: replicas at spec.replicas and status.replicas, and its selector. */
export interface BuiltinScaleSpec {
  /** The parent's plural, for kube's `<plural>/scale.autoscaling "x" not found` on a GET. */
  plural: string;
  /** The selector as a string (kube: labels.SelectorFromSet(...).String() or LabelSelectorAsSelector(...).String()). */
  selector(obj: StoredObject): string | undefined;
}

/**
 * The `scale` sub-resource of a built-in resource whose desired replicas are `spec.replicas` and
 * observed replicas `status.replicas` (every scalable kind of kube 1.24): get, patch, update.
 */
export function scaleSubresource(spec: BuiltinScaleSpec): SubresourceDefinition {
  const SPEC_REPLICAS = ['spec', 'replicas'] as const;
  const STATUS_REPLICAS = ['status', 'replicas'] as const;
  const scale: ScaleDescription = {
    specReplicasPath: SPEC_REPLICAS,
    specReplicas: (obj) => intAt(obj, SPEC_REPLICAS) ?? 0,
    statusReplicas: (obj) => intAt(obj, STATUS_REPLICAS) ?? 0,
    selector: spec.selector,
    validateScale,
    notFoundResource: { group: 'autoscaling', resource: `${spec.plural}/scale` },
  };
  return { name: 'scale', verbs: ['get', 'patch', 'update'], kind: scaleKind, scale };
}
