/**
 * Where PodSecurity finds a pod spec (PSA's DefaultPodSpecExtractor) and which pod updates it
 * looks at again (isSignificantPodUpdate), for JSON objects.
 */
import type { StoredObject } from '@plinth/api';
import { isObj, list, obj, str, type Json } from './pod.js';

/** The path to the pod template of each workload resource PSA checks, by `group/plural`. */
const TEMPLATE_PATHS: ReadonlyMap<string, readonly string[]> = new Map([
  ['/replicationcontrollers', ['spec', 'template']],
  ['/podtemplates', ['template']],
  ['apps/replicasets', ['spec', 'template']],
  ['apps/deployments', ['spec', 'template']],
  ['apps/statefulsets', ['spec', 'template']],
  ['apps/daemonsets', ['spec', 'template']],
  ['batch/jobs', ['spec', 'template']],
  ['batch/cronjobs', ['spec', 'jobTemplate', 'spec', 'template']],
]);

/** Whether PSA checks the pod template of this resource (warn and audit only). */
export const hasPodTemplate = (group: string, plural: string): boolean => TEMPLATE_PATHS.has(`${group}/${plural}`);

/**
 * The pod template (metadata and spec) of a workload, or undefined when it has none (a
 * ReplicationController may omit it). Templates kube's types hold by value are never absent:
 * a missing one reads as empty.
 */
export function podTemplateOf(group: string, plural: string, object: StoredObject): Json | undefined {
  const path = TEMPLATE_PATHS.get(`${group}/${plural}`);
  if (!path) return undefined;
  let cur: unknown = object;
  for (const key of path) cur = obj(cur, key);
  if (cur) return cur as Json;
  return plural === 'replicationcontrollers' ? undefined : {};
}

const annotationsOf = (o: StoredObject): Record<string, string> => o.metadata.annotations ?? {};

const SECCOMP_POD_ANNOTATION = 'seccomp.security.alpha.kubernetes.io/pod';
const SECCOMP_CONTAINER_PREFIX = 'container.seccomp.security.alpha.kubernetes.io/';

function significantContainerUpdate(c: Json, old: Json, annotations: Record<string, string>, oldAnnotations: Record<string, string>): boolean {
  if (str(c, 'image') !== str(old, 'image')) return true;
  const key = SECCOMP_CONTAINER_PREFIX + str(c, 'name');
  return annotations[key] !== oldAnnotations[key];
}

const containerList = (spec: unknown, key: string): Json[] => list(spec, key).filter(isObj);

/**
 * PSA's isSignificantPodUpdate: a pod update changes what the checks read only by changing the
 * seccomp annotations, the number of (init) containers, an image, or the ephemeral containers
 * (other pod fields cannot change on update).
 */
export function isSignificantPodUpdate(pod: StoredObject, old: StoredObject): boolean {
  const a = annotationsOf(pod);
  const oa = annotationsOf(old);
  if (a[SECCOMP_POD_ANNOTATION] !== oa[SECCOMP_POD_ANNOTATION]) return true;
  const spec = pod['spec'];
  const oldSpec = old['spec'];
  for (const key of ['containers', 'initContainers']) {
    const cs = containerList(spec, key);
    const ocs = containerList(oldSpec, key);
    if (cs.length !== ocs.length) return true;
    for (let i = 0; i < cs.length; i++) if (significantContainerUpdate(cs[i]!, ocs[i]!, a, oa)) return true;
  }
  const oldEphemeral = containerList(oldSpec, 'ephemeralContainers');
  for (const c of containerList(spec, 'ephemeralContainers')) {
    const o = oldEphemeral.find((x) => str(x, 'name') === str(c, 'name'));
    if (!o || significantContainerUpdate(c, o, a, oa)) return true;
  }
  return false;
}
