/**
 * kube's ExtendedResourceToleration plugin (plugin/pkg/admission/extendedresourcetoleration,
 * 1.24), off by default: a pod requesting an extended resource (`example.com/gpu`) in any
 * container or init container gets the toleration `{key: <resource>, operator: Exists, effect:
 * NoSchedule}` for each, in name order, so it may land on the nodes tainted for that resource.
 */
import { isDeepStrictEqual } from 'node:util';
import { isJsonObject, isQualifiedName } from '@plinth/api';
import type { AdmissionPlugin } from './interfaces.js';
import { isMainResource } from './forbidden.js';
import { podSpecOf, type Json } from './pod-access.js';

/** kube's IsExtendedResourceName: prefixed, not in kubernetes.io, and a qualified name once quota prefixes it. */
function isExtendedResourceName(name: string): boolean {
  const native = !name.includes('/') || name.includes('kubernetes.io/');
  if (native || name.startsWith('requests.')) return false;
  return isQualifiedName(`requests.${name}`).length === 0;
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** kube's AddOrUpdateTolerationInPod: replaces the toleration matching key, operator, value and effect, else appends. */
function addOrUpdateToleration(spec: Json, toleration: Json): void {
  const current = Array.isArray(spec['tolerations']) ? (spec['tolerations'] as unknown[]) : [];
  const matches = (t: unknown): boolean =>
    isJsonObject(t) && str(t['key']) === str(toleration['key']) && str(t['operator']) === str(toleration['operator']) && str(t['value']) === str(toleration['value']) && str(t['effect']) === str(toleration['effect']);
  let replaced = false;
  const next: unknown[] = [];
  for (const t of current) {
    if (matches(t)) {
      if (isDeepStrictEqual(t, toleration)) return;
      next.push(toleration);
      replaced = true;
    } else {
      next.push(t);
    }
  }
  if (!replaced) next.push(toleration);
  spec['tolerations'] = next;
}

export function createExtendedResourceToleration(): AdmissionPlugin {
  return {
    name: 'ExtendedResourceToleration',
    handles: (op) => op === 'CREATE' || op === 'UPDATE',
    admit(attrs) {
      if (!isMainResource(attrs, '', 'pods') || !attrs.object) return;
      const spec = podSpecOf(attrs.object);
      const names = new Set<string>();
      for (const list of ['containers', 'initContainers']) {
        for (const c of Array.isArray(spec[list]) ? (spec[list] as unknown[]) : []) {
          const res = isJsonObject(c) && isJsonObject(c['resources']) ? c['resources'] : {};
          const requests = isJsonObject(res['requests']) ? res['requests'] : {};
          for (const name of Object.keys(requests)) if (isExtendedResourceName(name)) names.add(name);
        }
      }
      for (const key of [...names].sort()) addOrUpdateToleration(spec, { key, operator: 'Exists', effect: 'NoSchedule' });
    },
  };
}
