/**
 * The pod sub-resources' validation in kube 1.24: status updates (ValidatePodStatusUpdate,
 * validatePodConditions, ValidateContainerStateTransition), ephemeral containers
 * (ValidatePodEphemeralContainersUpdate); bindings are binding.ts's. Object metadata checks are
 * the store's (see pod.ts).
 */
import { type FieldError, fieldErr } from '../../../field-errors.js';
import { isQualifiedName, nameIsDNSSubdomain } from '../../../validation.js';
import { type JsonObject, asObject, objects, str } from './access.js';
import { goDiff } from './go-diff.js';
import { validatePodIPs, validatePodMetadataAndSpec } from './pod.js';
import { validatePodSpecificAnnotationUpdates } from './pod-annotations.js';
import type { PodValidationOptions } from './pod-options.js';
import { semanticEqual } from './pod-equality.js';

const SYSTEM_CONDITIONS = new Set(['PodScheduled', 'Ready', 'Initialized']);

/** kube's `validatePodConditions`: custom condition types are qualified names (kube's path reads `metadata.conditions`). */
export function validatePodConditions(conditions: unknown, field: string): FieldError[] {
  const errs: FieldError[] = [];
  objects(conditions).forEach((c, i) => {
    const type = str(c['type']);
    if (SYSTEM_CONDITIONS.has(type)) return;
    for (const m of isQualifiedName(type)) errs.push(fieldErr.invalid(`${field}[${i}].Type`, type, m));
  });
  return errs;
}

/** kube's `ValidateContainerStateTransition`: a container that should not restart stays terminated. */
export function validateContainerStateTransition(next: unknown, old: unknown, field: string, restartPolicy: string): FieldError[] {
  if (restartPolicy === 'Always') return [];
  const errs: FieldError[] = [];
  const news = objects(next);
  objects(old).forEach((o, i) => {
    const terminated = asObject(asObject(o['state'])?.['terminated']);
    if (!terminated) return;
    if (Number(terminated['exitCode'] ?? 0) !== 0 && restartPolicy === 'OnFailure') return;
    for (const n of news) {
      if (str(n['name']) === str(o['name']) && !asObject(asObject(n['state'])?.['terminated'])) {
        errs.push(fieldErr.forbidden(`${field}[${i}].state`, 'may not be transitioned to non-terminated state'));
      }
    }
  });
  return errs;
}

/** kube's `ValidatePodStatusUpdate` minus ValidateObjectMetaUpdate. */
export function validatePodStatusUpdate(pod: JsonObject, old: JsonObject, opts: PodValidationOptions): FieldError[] {
  const status = asObject(pod['status']) ?? {};
  const oldStatus = asObject(old['status']) ?? {};
  const errs = validatePodSpecificAnnotationUpdates(pod, old, 'metadata.annotations', opts);
  errs.push(...validatePodConditions(status['conditions'], 'metadata.conditions'));
  if (str(asObject(pod['spec'])?.['nodeName']) !== str(asObject(old['spec'])?.['nodeName'])) {
    errs.push(fieldErr.forbidden('status.nodeName', 'may not be changed directly'));
  }
  const nominated = str(status['nominatedNodeName']);
  if (nominated !== str(oldStatus['nominatedNodeName']) && nominated.length > 0) {
    errs.push(...nameIsDNSSubdomain(nominated, false).map((m) => fieldErr.invalid('status.nominatedNodeName', nominated, m)));
  }
  const restartPolicy = str(asObject(old['spec'])?.['restartPolicy']);
  errs.push(...validateContainerStateTransition(status['containerStatuses'], oldStatus['containerStatuses'], 'status.containerStatuses', restartPolicy));
  errs.push(...validateContainerStateTransition(status['initContainerStatuses'], oldStatus['initContainerStatuses'], 'status.initContainerStatuses', restartPolicy));
  // The kubelet never restarts ephemeral containers: as with restartPolicy Never.
  errs.push(...validateContainerStateTransition(status['ephemeralContainerStatuses'], oldStatus['ephemeralContainerStatuses'], 'status.ephemeralContainerStatuses', 'Never'));
  errs.push(...validatePodIPs(pod));
  return errs;
}

/** kube's `ValidatePodEphemeralContainersUpdate` minus the object-metadata checks: existing ones stay as they are. */
export function validatePodEphemeralContainersUpdate(pod: JsonObject, old: JsonObject, opts: PodValidationOptions): FieldError[] {
  const errs = validatePodMetadataAndSpec(pod, opts);
  errs.push(...validatePodSpecificAnnotationUpdates(pod, old, 'metadata.annotations', opts));
  const byName = new Map(objects(asObject(pod['spec'])?.['ephemeralContainers']).map((c) => [str(c['name']), c]));
  const field = 'spec.ephemeralContainers';
  for (const o of objects(asObject(old['spec'])?.['ephemeralContainers'])) {
    const name = str(o['name']);
    const n = byName.get(name);
    if (!n) errs.push(fieldErr.forbidden(field, `existing ephemeral containers ${JSON.stringify(name)} may not be removed\n`));
    else if (!semanticEqual(o, n)) errs.push(fieldErr.forbidden(field, `existing ephemeral containers ${JSON.stringify(name)} may not be changed\n${goDiff(o, n, 'core.EphemeralContainer')}`));
  }
  return errs;
}
