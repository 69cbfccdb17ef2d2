/**
 * kube's RuntimeClass plugin (plugin/pkg/admission/runtimeclass, 1.24, PodOverhead GA): a created
 * pod naming a RuntimeClass gets the class's overhead (refused if it states another) and its
 * scheduling nodeSelector (refused on a conflicting key) and tolerations (merged as kube's
 * MergeTolerations); validation refuses an overhead the class does not define. A class that does
 * not exist refuses the pod.
 */
import { isDeepStrictEqual } from 'node:util';
import type { StoredObject } from '@plinth/api';
import type { AdmissionAttributes, AdmissionPlugin } from './interfaces.js';
import { admissionForbidden, isMainResource } from './forbidden.js';

/** The RuntimeClasses as the informer has them, or as etcd has them now (`fresh`). */
export type RuntimeClassLister = (fresh?: boolean) => Promise<StoredObject[]>;

type Toleration = Record<string, unknown>;

/** kube's isSuperset (pkg/util/tolerations): whether `ss` tolerates everything `t` does. */
export function isSuperset(ss: Toleration, t: Toleration): boolean {
  if (isDeepStrictEqual(t, ss)) return true;
  const key = (x: Toleration): string => (x['key'] as string | undefined) ?? '';
  const effect = (x: Toleration): string => (x['effect'] as string | undefined) ?? '';
  const op = (x: Toleration): string => (x['operator'] as string | undefined) ?? '';
  if (key(t) !== key(ss) && (key(ss) !== '' || op(ss) !== 'Exists')) return false;
  if (effect(t) !== effect(ss) && effect(ss) !== '') return false;
  if (effect(ss) === 'NoExecute' && typeof ss['tolerationSeconds'] === 'number') {
    if (typeof t['tolerationSeconds'] !== 'number' || t['tolerationSeconds'] > ss['tolerationSeconds']) return false;
  }
  switch (op(ss)) {
    case 'Equal':
    case '':
      return op(t) === 'Equal' && ((t['value'] as string | undefined) ?? '') === ((ss['value'] as string | undefined) ?? '');
    case 'Exists':
      return true;
    default:
      return false;
  }
}

/** kube's MergeTolerations: both lists, less the tolerations another one covers. */
export function mergeTolerations(first: Toleration[], second: Toleration[]): Toleration[] {
  const all = [...first, ...second];
  const merged: Toleration[] = [];
  next: for (let i = 0; i < all.length; i++) {
    const t = all[i]!;
    for (const m of merged) if (isSuperset(m, t)) continue next;
    for (const later of all.slice(i + 1)) if (!isDeepStrictEqual(t, later) && isSuperset(later, t)) continue next;
    merged.push(t);
  }
  return merged;
}

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

export function createRuntimeClass(list: RuntimeClassLister): AdmissionPlugin {
  /** kube's prepareObjects: the pod's spec and its class (undefined when it names none). */
  const prepare = async (attrs: AdmissionAttributes): Promise<{ spec: Record<string, unknown>; rc: StoredObject | undefined }> => {
    const pod = attrs.object!;
    if (!isObject(pod['spec'])) pod['spec'] = {};
    const spec = pod['spec'] as Record<string, unknown>;
    const name = spec['runtimeClassName'];
    if (typeof name !== 'string') return { spec, rc: undefined };
    // A class the cache does not have yet is looked up in etcd before the pod is refused.
    const named = (c: StoredObject): boolean => c.metadata.name === name;
    const rc = (await list()).find(named) ?? (await list(true)).find(named);
    if (!rc) throw admissionForbidden(attrs, `pod rejected: RuntimeClass ${JSON.stringify(name)} not found`);
    return { spec, rc };
  };
  const podFixedOf = (rc: StoredObject | undefined): unknown => (isObject(rc?.['overhead']) ? (rc!['overhead'] as Record<string, unknown>)['podFixed'] : undefined);
  const hasOverhead = (rc: StoredObject | undefined): boolean => isObject(rc?.['overhead']);

  return {
    name: 'RuntimeClass',
    handles: (op) => op === 'CREATE',
    async admit(attrs) {
      if (!isMainResource(attrs, '', 'pods') || !attrs.object) return;
      const { spec, rc } = await prepare(attrs);
      if (!rc) return;
      if (hasOverhead(rc)) {
        const fixed = podFixedOf(rc);
        if (spec['overhead'] != null && !isDeepStrictEqual(fixed ?? null, spec['overhead'])) {
          throw admissionForbidden(attrs, "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead");
        }
        if (fixed === undefined) delete spec['overhead'];
        else spec['overhead'] = structuredClone(fixed);
      }
      const scheduling = rc['scheduling'];
      if (!isObject(scheduling)) return;
      const classSelector = isObject(scheduling['nodeSelector']) ? (scheduling['nodeSelector'] as Record<string, string>) : undefined;
      if (!isObject(spec['nodeSelector'])) {
        if (classSelector) spec['nodeSelector'] = { ...classSelector };
      } else {
        const podSelector = spec['nodeSelector'] as Record<string, string>;
        for (const [key, value] of Object.entries(classSelector ?? {})) {
          if (key in podSelector && podSelector[key] !== value) {
            throw admissionForbidden(attrs, `conflict: runtimeClass.scheduling.nodeSelector[${key}] = ${value}; pod.spec.nodeSelector[${key}] = ${podSelector[key]}`);
          }
          podSelector[key] = value;
        }
      }
      const podTolerations = Array.isArray(spec['tolerations']) ? (spec['tolerations'] as Toleration[]) : [];
      const classTolerations = Array.isArray(scheduling['tolerations']) ? (scheduling['tolerations'] as Toleration[]) : [];
      const merged = mergeTolerations(podTolerations, structuredClone(classTolerations));
      if (merged.length > 0) spec['tolerations'] = merged;
      else delete spec['tolerations'];
    },
    async validate(attrs) {
      if (!isMainResource(attrs, '', 'pods') || !attrs.object) return;
      const { spec, rc } = await prepare(attrs);
      if (hasOverhead(rc)) {
        if (!isDeepStrictEqual(podFixedOf(rc) ?? null, spec['overhead'] ?? null)) {
          throw admissionForbidden(attrs, "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead");
        }
      } else if (spec['overhead'] != null) {
        throw admissionForbidden(attrs, 'pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead');
      }
    },
  };
}
