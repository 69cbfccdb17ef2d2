/**
 * What kube 1.24's pod and replication-controller strategies do to an object before validation
 * (pkg/registry/core/pod, pkg/registry/core/replicationcontroller PrepareForCreate/PrepareForUpdate),
 * as pure functions the resource modules call, in place.
 */
import { type JsonObject, asObject } from '../validation/access.js';
import { semanticEqual } from '../validation/semantic.js';
import { dropDisabledPodFields, dropDisabledTemplateFields } from './drop-disabled.js';
import { computePodQOS } from './qos.js';
import { applySeccompVersionSkew } from './seccomp-skew.js';

function metaOf(obj: JsonObject): JsonObject {
  if (!asObject(obj['metadata'])) obj['metadata'] = {};
  return obj['metadata'] as JsonObject;
}

function setOrDelete(o: JsonObject, key: string, value: unknown): void {
  if (value === undefined) delete o[key];
  else o[key] = value;
}

/** podStrategy.PrepareForCreate: status reset to Pending with the QoS class; disabled fields dropped; seccomp skew. */
export function preparePodForCreate(pod: JsonObject): void {
  pod['status'] = { phase: 'Pending', qosClass: computePodQOS(pod) };
  dropDisabledPodFields(pod);
  applySeccompVersionSkew(pod);
}

/** podStrategy.PrepareForUpdate: the status stays the old one; disabled fields dropped. */
export function preparePodForUpdate(pod: JsonObject, old: JsonObject): void {
  setOrDelete(pod, 'status', old['status']);
  dropDisabledPodFields(pod, old);
}

/**
 * podStatusStrategy.PrepareForUpdate: the spec and owner references stay the old ones, and the
 * deletion timestamp is cleared (the generic update restores the old one, so it cannot change).
 */
export function preparePodStatusUpdate(pod: JsonObject, old: JsonObject): void {
  setOrDelete(pod, 'spec', old['spec']);
  const meta = metaOf(pod);
  delete meta['deletionTimestamp'];
  setOrDelete(meta, 'ownerReferences', asObject(old['metadata'])?.['ownerReferences']);
}

/** apimachinery's ResetObjectMetaForStatus: a sub-resource update keeps the old object's metadata. */
export function resetObjectMetaForStatus(obj: JsonObject, old: JsonObject): void {
  const meta = metaOf(obj);
  const oldMeta = asObject(old['metadata']) ?? {};
  for (const k of ['deletionTimestamp', 'generation', 'selfLink', 'labels', 'annotations', 'finalizers', 'ownerReferences']) setOrDelete(meta, k, oldMeta[k]);
}

/**
 * podEphemeralContainersStrategy.PrepareForUpdate: only `spec.ephemeralContainers` of the body
 * counts; the rest of the spec, the status and the metadata above stay the old ones.
 */
export function preparePodEphemeralContainersUpdate(pod: JsonObject, old: JsonObject): void {
  const ephemeral = asObject(pod['spec'])?.['ephemeralContainers'];
  const spec: JsonObject = { ...(asObject(old['spec']) ?? {}) };
  setOrDelete(spec, 'ephemeralContainers', ephemeral);
  pod['spec'] = spec;
  setOrDelete(pod, 'status', old['status']);
  resetObjectMetaForStatus(pod, old);
  dropDisabledPodFields(pod, old);
}

/** podTemplateStrategy.PrepareForCreate/PrepareForUpdate: disabled fields of the template dropped. */
export function preparePodTemplate(podTemplate: JsonObject, old?: JsonObject): void {
  dropDisabledTemplateFields(podTemplate['template'], old?.['template']);
}

/** rcStrategy.PrepareForCreate: no status, generation 1, disabled template fields dropped. */
export function prepareReplicationControllerForCreate(rc: JsonObject): void {
  rc['status'] = { replicas: 0 };
  metaOf(rc)['generation'] = 1;
  dropDisabledTemplateFields(asObject(rc['spec'])?.['template']);
}

/** rcStrategy.PrepareForUpdate: the old status; a spec change bumps the generation. */
export function prepareReplicationControllerForUpdate(rc: JsonObject, old: JsonObject): void {
  setOrDelete(rc, 'status', old['status']);
  dropDisabledTemplateFields(asObject(rc['spec'])?.['template'], asObject(old['spec'])?.['template']);
  const oldGeneration = Number(asObject(old['metadata'])?.['generation'] ?? 0);
  metaOf(rc)['generation'] = semanticEqual(rc['spec'], old['spec']) ? oldGeneration : oldGeneration + 1;
}

/** rcStatusStrategy.PrepareForUpdate: the spec stays the old one. */
export function prepareReplicationControllerStatusUpdate(rc: JsonObject, old: JsonObject): void {
  setOrDelete(rc, 'spec', old['spec']);
}
