/**
 * kube's LimitPodHardAntiAffinityTopology plugin (plugin/pkg/admission/antiaffinity, 1.24), off by
 * default: a pod's required pod anti-affinity terms may only use the `kubernetes.io/hostname`
 * topology key; another key refuses the create or update with 403 and kube's message.
 */
import { forbidden, groupResourceOf, isJsonObject } from '@plinth/api';
import type { AdmissionPlugin } from './interfaces.js';
import { isMainResource } from './forbidden.js';
import { podSpecOf } from './pod-access.js';

const HOSTNAME_LABEL = 'kubernetes.io/hostname';

export function createLimitPodHardAntiAffinityTopology(): AdmissionPlugin {
  return {
    name: 'LimitPodHardAntiAffinityTopology',
    handles: (op) => op === 'CREATE' || op === 'UPDATE',
    validate(attrs) {
      if (!isMainResource(attrs, '', 'pods') || !attrs.object) return;
      const affinity = podSpecOf(attrs.object)['affinity'];
      const anti = isJsonObject(affinity) ? affinity['podAntiAffinity'] : undefined;
      const terms = isJsonObject(anti) ? anti['requiredDuringSchedulingIgnoredDuringExecution'] : undefined;
      if (!Array.isArray(terms)) return;
      for (const term of terms) {
        const key = isJsonObject(term) && typeof term['topologyKey'] === 'string' ? term['topologyKey'] : '';
        if (key !== HOSTNAME_LABEL) {
          throw forbidden(groupResourceOf(attrs.resource), attrs.object.metadata.name ?? '', `affinity.PodAntiAffinity.RequiredDuringScheduling has TopologyKey ${key} but only key ${HOSTNAME_LABEL} is allowed`);
        }
      }
    },
  };
}
