/**
 * The restricted checks of Pod Security Standards, one function per check version, as PSA 1.24's
 * policy/check_*.go (their reasons and details are what clients see in refusals and warnings).
 */
import { ALLOWED, containers, joinQuote, list, namedContainers, num, obj, pluralize, sortedSet, str, bool, type CheckResult, type PodView } from './pod.js';
import { validSeccompType } from './checks-baseline.js';

/** allowPrivilegeEscalation 1.8: every container sets allowPrivilegeEscalation=false. */
export function allowPrivilegeEscalation_1_8(pod: PodView): CheckResult {
  const bad = containers(pod.spec)
    .filter((c) => bool(obj(c, 'securityContext'), 'allowPrivilegeEscalation') !== false)
    .map((c) => str(c, 'name'));
  if (bad.length === 0) return ALLOWED;
  return { allowed: false, reason: 'allowPrivilegeEscalation != false', detail: `${namedContainers(bad)} must set securityContext.allowPrivilegeEscalation=false` };
}

/** capabilities_restricted 1.22: every container drops ALL and adds at most NET_BIND_SERVICE. */
export function capabilitiesRestricted_1_22(pod: PodView): CheckResult {
  const missingDropAll: string[] = [];
  const addingForbidden: string[] = [];
  const forbidden: string[] = [];
  for (const c of containers(pod.spec)) {
    const caps = obj(obj(c, 'securityContext'), 'capabilities');
    if (!caps) {
      missingDropAll.push(str(c, 'name'));
      continue;
    }
    if (!list(caps, 'drop').includes('ALL')) missingDropAll.push(str(c, 'name'));
    let added = false;
    for (const cap of list(caps, 'add')) {
      if (cap !== 'NET_BIND_SERVICE') {
        added = true;
        forbidden.push(typeof cap === 'string' ? cap : '');
      }
    }
    if (added) addingForbidden.push(str(c, 'name'));
  }
  const details: string[] = [];
  if (missingDropAll.length > 0) details.push(`${namedContainers(missingDropAll)} must set securityContext.capabilities.drop=["ALL"]`);
  if (addingForbidden.length > 0) details.push(`${namedContainers(addingForbidden)} must not include ${joinQuote(sortedSet(forbidden))} in securityContext.capabilities.add`);
  return details.length === 0 ? ALLOWED : { allowed: false, reason: 'unrestricted capabilities', detail: details.join('; ') };
}

/** The volume sources the restricted profile allows. */
const ALLOWED_VOLUME_SOURCES = ['configMap', 'csi', 'downwardAPI', 'emptyDir', 'ephemeral', 'persistentVolumeClaim', 'projected', 'secret'];
/** The other sources, in the order PSA names the first one a volume has. */
const RESTRICTED_VOLUME_SOURCES = [
  'hostPath', 'gcePersistentDisk', 'awsElasticBlockStore', 'gitRepo', 'nfs', 'iscsi', 'glusterfs', 'rbd', 'flexVolume', 'cinder', 'cephfs',
  'flocker', 'fc', 'azureFile', 'vsphereVolume', 'quobyte', 'azureDisk', 'photonPersistentDisk', 'portworxVolume', 'scaleIO', 'storageos',
];

const present = (v: unknown, key: string): boolean => obj(v, key) !== undefined;

/** restrictedVolumes 1.0: only the inline volume types that carry no host or network access. */
export function restrictedVolumes_1_0(pod: PodView): CheckResult {
  const bad: string[] = [];
  const types: string[] = [];
  for (const v of list(pod.spec, 'volumes')) {
    if (ALLOWED_VOLUME_SOURCES.some((k) => present(v, k))) continue;
    bad.push(str(v, 'name'));
    types.push(RESTRICTED_VOLUME_SOURCES.find((k) => present(v, k)) ?? 'unknown');
  }
  if (bad.length === 0) return ALLOWED;
  const unique = sortedSet(types);
  return {
    allowed: false,
    reason: 'restricted volume types',
    detail: `${pluralize('volume', 'volumes', bad.length)} ${joinQuote(bad)} ${pluralize('uses', 'use', bad.length)} ${pluralize('restricted volume type', 'restricted volume types', unique.length)} ${joinQuote(unique)}`,
  };
}

/** runAsNonRoot 1.0: runAsNonRoot=true, for the pod or every container. */
export function runAsNonRoot_1_0(pod: PodView): CheckResult {
  const setters: string[] = [];
  let podNonRoot = false;
  const podValue = bool(obj(pod.spec, 'securityContext'), 'runAsNonRoot');
  if (podValue === false) setters.push('pod');
  else if (podValue === true) podNonRoot = true;
  const explicit: string[] = [];
  const implicit: string[] = [];
  for (const c of containers(pod.spec)) {
    const v = bool(obj(c, 'securityContext'), 'runAsNonRoot');
    if (v === false) explicit.push(str(c, 'name'));
    else if (v === undefined && !podNonRoot) implicit.push(str(c, 'name'));
  }
  if (explicit.length > 0) setters.push(namedContainers(explicit));
  if (setters.length > 0) return { allowed: false, reason: 'runAsNonRoot != true', detail: `${setters.join(' and ')} must not set securityContext.runAsNonRoot=false` };
  if (implicit.length > 0) return { allowed: false, reason: 'runAsNonRoot != true', detail: `pod or ${namedContainers(implicit)} must set securityContext.runAsNonRoot=true` };
  return ALLOWED;
}

/** runAsUser 1.23: no runAsUser=0, for the pod or a container. */
export function runAsUser_1_23(pod: PodView): CheckResult {
  const setters: string[] = [];
  if (num(obj(pod.spec, 'securityContext'), 'runAsUser') === 0) setters.push('pod');
  const bad = containers(pod.spec).filter((c) => num(obj(c, 'securityContext'), 'runAsUser') === 0).map((c) => str(c, 'name'));
  if (bad.length > 0) setters.push(namedContainers(bad));
  if (setters.length === 0) return ALLOWED;
  return { allowed: false, reason: 'runAsUser=0', detail: `${setters.join(' and ')} must not set runAsUser=0` };
}

/** seccompProfile_restricted 1.19: RuntimeDefault or Localhost, set for the pod or every container. */
export function seccompProfileRestricted_1_19(pod: PodView): CheckResult {
  const setters: string[] = [];
  const values: string[] = [];
  let podSet = false;
  const podProfile = obj(obj(pod.spec, 'securityContext'), 'seccompProfile');
  if (podProfile) {
    if (!validSeccompType(str(podProfile, 'type'))) {
      setters.push('pod');
      values.push(str(podProfile, 'type'));
    } else {
      podSet = true;
    }
  }
  const explicit: string[] = [];
  const implicit: string[] = [];
  for (const c of containers(pod.spec)) {
    const profile = obj(obj(c, 'securityContext'), 'seccompProfile');
    if (profile) {
      if (!validSeccompType(str(profile, 'type'))) {
        explicit.push(str(c, 'name'));
        values.push(str(profile, 'type'));
      }
    } else if (!podSet) {
      implicit.push(str(c, 'name'));
    }
  }
  if (explicit.length > 0) setters.push(namedContainers(explicit));
  if (setters.length > 0) {
    return { allowed: false, reason: 'seccompProfile', detail: `${setters.join(' and ')} must not set securityContext.seccompProfile.type to ${joinQuote(sortedSet(values))}` };
  }
  if (implicit.length > 0) {
    return { allowed: false, reason: 'seccompProfile', detail: `pod or ${namedContainers(implicit)} must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost"` };
  }
  return ALLOWED;
}
