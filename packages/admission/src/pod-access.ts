/**
 * Small readers of a pod's JSON shared by the pod plugins: its spec and containers as kube's
 * VisitContainersWithPath walks them (init containers, containers, ephemeral containers).
 */
import { isJsonObject, type StoredObject } from '@plinth/api';

export type Json = Record<string, unknown>;

/** The pod's spec, created when missing (a mutating plugin may write into it). */
export function podSpecOf(pod: StoredObject): Json {
  if (!isJsonObject(pod['spec'])) pod['spec'] = {};
  return pod['spec'] as Json;
}

/** Each container with its field path, in kube's VisitContainersWithPath order. */
export function containersWithPath(spec: Json): Array<{ container: Json; path: string }> {
  const out: Array<{ container: Json; path: string }> = [];
  for (const field of ['initContainers', 'containers', 'ephemeralContainers']) {
    const list = spec[field];
    if (!Array.isArray(list)) continue;
    list.forEach((c: unknown, i) => {
      if (isJsonObject(c)) out.push({ container: c, path: `spec.${field}[${i}]` });
    });
  }
  return out;
}

/** Whether a JSON member is set (kube's non-nil pointer or slice). */
export const isSet = (o: Json | undefined, key: string): boolean => o !== undefined && o[key] !== undefined && o[key] !== null;
