/**
 * core/v1 Pods as kube-apiserver 1.24 serves them (pkg/registry/core/pod: strategy.go, storage/):
 * short name `po`, category `all`, every verb; the strategy's defaults, status reset at create
 * (phase Pending, QoS class), spec immutability on update, status and ephemeral containers as
 * sub-resources of their own strategies, graceful deletion (CheckGracefulDelete), kube's field
 * label conversion and printer. `binding` and `eviction` are creates of their own kinds, answered
 * by the apiserver's storages (registry/pod-binding.ts, pod-eviction.ts); `log`, `exec`,
 * `attach`, `portforward` and `proxy` by its connecters (registry/pod-connect.ts). The legacy
 * `bindings` resource takes the same Binding.
 */
import type { GracefulDeleteOptions, KindDefinition, ResourceStrategy, SubresourceDefinition } from '../../../catalog.js';
import { capabilities } from '../../../capabilities.js';
import type { StoredObject } from '../../../types.js';
import { defineKind, defineResource } from '../../define.js';
import { setDefaultsPod } from '../defaults/pod.js';
import { normalizePod } from '../helpers/pod-conversion.js';
import { podGracePeriod } from '../helpers/pod-deletion.js';
import { preparePodEphemeralContainersUpdate, preparePodForCreate, preparePodForUpdate, preparePodStatusUpdate } from '../helpers/pod-strategy.js';
import { asObject, objects, str } from '../validation/access.js';
import { validatePod } from '../validation/pod.js';
import { podValidationOptions } from '../validation/pod-options.js';
import { validatePodUpdate } from '../validation/pod-update.js';
import { validatePodEphemeralContainersUpdate, validatePodStatusUpdate } from '../validation/pod-status.js';
import { podTable } from './table.js';

/** GetValidationOptionsFromPodSpecAndMeta of a write, with the server's --allow-privileged. */
function optionsOf(pod: StoredObject, old?: StoredObject): ReturnType<typeof podValidationOptions> {
  return podValidationOptions({
    spec: pod['spec'],
    meta: pod.metadata,
    ...(old ? { oldSpec: old['spec'], oldMeta: old.metadata } : {}),
    allowPrivileged: capabilities().allowPrivileged,
  });
}

/** v1 defaults (SetDefaults_Pod and the tree under it), then what kube's v1 → internal conversion does. */
function defaultPod(pod: StoredObject): void {
  setDefaultsPod(pod);
  normalizePod(pod);
}

const podStrategy: ResourceStrategy = {
  defaults: defaultPod,
  prepareForCreate: (pod) => preparePodForCreate(pod),
  prepareForUpdate: (pod, old) => preparePodForUpdate(pod, old),
  validate: (pod) => validatePod(pod, optionsOf(pod)),
  // kube's ValidatePodUpdate validates the whole pod itself.
  validateOnUpdate: false,
  validateUpdate: (pod, old) => validatePodUpdate(pod, old, optionsOf(pod, old)),
  /**
   * kube's podStrategy.CheckGracefulDelete: always graceful, with the requested grace period,
   * else spec.terminationGracePeriodSeconds; 0 (deleted at once) for a pod on no node or in a
   * terminal phase.
   */
  checkGracefulDelete(pod: StoredObject, options: GracefulDeleteOptions): boolean {
    options.gracePeriodSeconds = podGracePeriod(pod, options);
    return true;
  },
};

/** pods/status: the spec and owner references stay; the deletion timestamp cannot change. */
const podStatusStrategy: ResourceStrategy = {
  prepareForUpdate(pod, old) {
    preparePodStatusUpdate(pod, old);
    // kube clears it here and BeforeUpdate puts the old one back afterwards.
    if (old.metadata.deletionTimestamp) pod.metadata.deletionTimestamp = old.metadata.deletionTimestamp;
  },
  validate: () => [],
  validateOnUpdate: false,
  validateUpdate: (pod, old) => validatePodStatusUpdate(pod, old, optionsOf(pod, old)),
};

/** pods/ephemeralcontainers: only spec.ephemeralContainers of the body counts, and only additions. */
const podEphemeralContainersStrategy: ResourceStrategy = {
  prepareForUpdate: (pod, old) => preparePodEphemeralContainersUpdate(pod, old),
  validate: () => [],
  validateOnUpdate: false,
  validateUpdate: (pod, old) => validatePodEphemeralContainersUpdate(pod, old, optionsOf(pod, old)),
};

/** Kinds answered by storages that validate them themselves (kube's BindingREST, EvictionREST). */
const NO_VALIDATION: ResourceStrategy = { validate: () => [] };

/** The legacy `bindings` resource: POST a Binding to the namespace's collection (kube's LegacyBindingREST). */
export const bindings = defineResource({
  group: '',
  version: 'v1',
  kind: 'Binding',
  plural: 'bindings',
  namespaced: true,
  storage: 'none',
  description: 'A Binding assigns a pod to a node.',
  strategy: NO_VALIDATION,
});

const evictionV1beta1: KindDefinition = defineKind({
  group: 'policy',
  version: 'v1beta1',
  kind: 'Eviction',
  description: 'An Eviction asks for the deletion of a pod within its disruption budgets.',
  strategy: NO_VALIDATION,
});

/** policy/v1 Eviction, the body of pods/eviction (policy/v1beta1 accepted too, as kube 1.24 does). */
export const evictionKind: KindDefinition = defineKind({
  group: 'policy',
  version: 'v1',
  kind: 'Eviction',
  description: 'An Eviction asks for the deletion of a pod within its disruption budgets.',
  strategy: NO_VALIDATION,
  alternateVersions: [evictionV1beta1],
});

const GET_CREATE = ['create', 'get'] as const;
const PROXY_VERBS = ['create', 'delete', 'get', 'patch', 'update'] as const;

/** Sub-resources in kube's discovery order (alphabetical). */
const subresources: SubresourceDefinition[] = [
  { name: 'attach', verbs: [...GET_CREATE], connect: { kind: 'PodAttachOptions' } },
  { name: 'binding', verbs: ['create'], kind: bindings },
  { name: 'ephemeralcontainers', verbs: ['get', 'patch', 'update'], strategy: podEphemeralContainersStrategy },
  { name: 'eviction', verbs: ['create'], kind: evictionKind },
  { name: 'exec', verbs: [...GET_CREATE], connect: { kind: 'PodExecOptions' } },
  { name: 'log', verbs: ['get'], connect: {} },
  { name: 'portforward', verbs: [...GET_CREATE], connect: { kind: 'PodPortForwardOptions' } },
  { name: 'proxy', verbs: [...PROXY_VERBS], connect: { path: true, kind: 'PodProxyOptions' } },
  { name: 'status', verbs: ['get', 'patch', 'update'], strategy: podStatusStrategy },
];

/** The pod field labels of core/v1 (pkg/apis/core/v1/conversion.go): `spec.host` is the old name of spec.nodeName. */
const POD_FIELD_LABELS: Record<string, string> = {
  'metadata.name': 'metadata.name',
  'metadata.namespace': 'metadata.namespace',
  'spec.nodeName': 'spec.nodeName',
  'spec.restartPolicy': 'spec.restartPolicy',
  'spec.schedulerName': 'spec.schedulerName',
  'spec.serviceAccountName': 'spec.serviceAccountName',
  'status.phase': 'status.phase',
  'status.podIP': 'status.podIP',
  // Accepted by the conversion but not selectable (ToSelectableFields has no such field): matches as "".
  'status.podIPs': 'status.podIPs',
  'status.nominatedNodeName': 'status.nominatedNodeName',
  'spec.host': 'spec.nodeName',
};

export const pods = defineResource({
  group: '',
  version: 'v1',
  kind: 'Pod',
  plural: 'pods',
  shortNames: ['po'],
  categories: ['all'],
  namespaced: true,
  // kube's pod store answers a DELETE with the pod, deleted or terminating.
  returnDeletedObject: true,
  description: 'A Pod is a group of containers scheduled together on one node.',
  strategy: podStrategy,
  table: podTable,
  subresources,
  fieldSelector: {
    labels: POD_FIELD_LABELS,
    // kube's pod ToSelectableFields.
    fields(obj, out) {
      const spec = asObject(obj['spec']) ?? {};
      const status = asObject(obj['status']) ?? {};
      out['spec.nodeName'] = str(spec['nodeName']);
      out['spec.restartPolicy'] = str(spec['restartPolicy']);
      out['spec.schedulerName'] = str(spec['schedulerName']);
      out['spec.serviceAccountName'] = str(spec['serviceAccountName']);
      out['status.phase'] = str(status['phase']);
      out['status.podIP'] = str(objects(status['podIPs'])[0]?.['ip']) || str(status['podIP']);
      out['status.nominatedNodeName'] = str(status['nominatedNodeName']);
    },
    // kube's pod.NodeNameTriggerFunc: each kubelet watches the pods bound to it.
    index: { field: 'spec.nodeName', value: (obj) => str(asObject(obj['spec'])?.['nodeName']) },
  },
});

export { podStatusStrategy, podEphemeralContainersStrategy };
