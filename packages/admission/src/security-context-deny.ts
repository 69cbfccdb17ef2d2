/**
 * kube's SecurityContextDeny plugin (plugin/pkg/admission/securitycontext/scdeny, 1.24), off by
 * default: a pod may not set the pod-level supplementalGroups, seLinuxOptions, runAsUser or
 * fsGroup, nor a container's (init containers first) seLinuxOptions or runAsUser. The first such
 * field refuses the create or update with 403 and kube's message.
 */
import { forbidden, groupResourceOf, isJsonObject } from '@plinth/api';
import type { AdmissionPlugin } from './interfaces.js';
import { isMainResource } from './forbidden.js';
import { isSet, podSpecOf, type Json } from './pod-access.js';

const POD_FIELDS = [
  ['supplementalGroups', 'SupplementalGroups'],
  ['seLinuxOptions', 'SELinuxOptions'],
  ['runAsUser', 'RunAsUser'],
  ['fsGroup', 'FSGroup'],
] as const;
const CONTAINER_FIELDS = [
  ['seLinuxOptions', 'SELinuxOptions'],
  ['runAsUser', 'RunAsUser'],
] as const;

/** kube's message for the first forbidden field, or undefined. */
function deniedField(spec: Json): string | undefined {
  const podContext = isJsonObject(spec['securityContext']) ? spec['securityContext'] : undefined;
  for (const [field, goName] of POD_FIELDS) if (isSet(podContext, field)) return `pod.Spec.SecurityContext.${goName} is forbidden`;
  for (const list of ['initContainers', 'containers']) {
    const containers = Array.isArray(spec[list]) ? (spec[list] as unknown[]) : [];
    for (const c of containers) {
      const sc = isJsonObject(c) && isJsonObject(c['securityContext']) ? c['securityContext'] : undefined;
      for (const [field, goName] of CONTAINER_FIELDS) if (isSet(sc, field)) return `SecurityContext.${goName} is forbidden`;
    }
  }
  return undefined;
}

export function createSecurityContextDeny(): AdmissionPlugin {
  return {
    name: 'SecurityContextDeny',
    handles: (op) => op === 'CREATE' || op === 'UPDATE',
    validate(attrs) {
      if (!isMainResource(attrs, '', 'pods') || !attrs.object) return;
      const why = deniedField(podSpecOf(attrs.object));
      // kube names the pod by its metadata.name here (empty for a generateName create).
      if (why) throw forbidden(groupResourceOf(attrs.resource), attrs.object.metadata.name ?? '', why);
    },
  };
}
