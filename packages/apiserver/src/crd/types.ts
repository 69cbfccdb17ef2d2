/**
 * The parts of an apiextensions.k8s.io/v1 CustomResourceDefinition that serving reads. The kind
 * itself (schema, validation, defaults) is `customresourcedefinitions` in @plinth/api.
 */
import type { PrinterColumn, StoredObject } from '@plinth/api';

export const CLEANUP_FINALIZER = 'customresourcecleanup.apiextensions.k8s.io';

export interface CRDNames {
  plural: string;
  singular?: string;
  kind: string;
  listKind?: string;
  shortNames?: string[];
  categories?: string[];
}

export interface CRDScale {
  specReplicasPath: string;
  statusReplicasPath: string;
  labelSelectorPath?: string;
}

export interface CRDVersion {
  name: string;
  served: boolean;
  storage: boolean;
  deprecated?: boolean;
  deprecationWarning?: string;
  schema?: { openAPIV3Schema?: unknown };
  subresources?: { status?: Record<string, never>; scale?: CRDScale };
  additionalPrinterColumns?: PrinterColumn[];
}

export interface CRDCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export interface CRD extends StoredObject {
  spec: {
    group: string;
    names: CRDNames;
    scope: 'Namespaced' | 'Cluster';
    versions: CRDVersion[];
    conversion?: {
      strategy: string;
      webhook?: {
        clientConfig?: { url?: string; service?: { namespace: string; name: string; path?: string; port?: number }; caBundle?: string };
        conversionReviewVersions?: string[];
      };
    };
  };
  status?: {
    conditions?: CRDCondition[];
    acceptedNames?: CRDNames;
    storedVersions?: string[];
  };
}

export function conditionOf(crd: CRD, type: string): CRDCondition | undefined {
  return crd.status?.conditions?.find((c) => c.type === type);
}

export function isConditionTrue(crd: CRD, type: string): boolean {
  return conditionOf(crd, type)?.status === 'True';
}

/** kube's SetCRDCondition: replaces the condition of that type; the transition time moves only when the status changes. */
export function setCondition(crd: CRD, cond: CRDCondition, now: string): void {
  const status = (crd.status ??= {});
  const conditions = (status.conditions ??= []);
  const i = conditions.findIndex((c) => c.type === cond.type);
  const old = i >= 0 ? conditions[i] : undefined;
  const next: CRDCondition = { ...cond, lastTransitionTime: old && old.status === cond.status && old.lastTransitionTime ? old.lastTransitionTime : now };
  if (i >= 0) conditions[i] = next;
  else conditions.push(next);
}

/** kube's IsCRDConditionEquivalent: same type, status, reason and message. */
export function sameCondition(a: CRDCondition | undefined, b: CRDCondition | undefined): boolean {
  if (!a || !b) return a === b;
  return a.type === b.type && a.status === b.status && (a.reason ?? '') === (b.reason ?? '') && (a.message ?? '') === (b.message ?? '');
}

/** The version objects are stored in (exactly one has `storage: true`, validation makes sure). */
export function storageVersionOf(crd: CRD): string {
  return crd.spec.versions.find((v) => v.storage)?.name ?? crd.spec.versions[0]?.name ?? '';
}
