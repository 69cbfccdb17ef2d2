/**
 * ReplicationControllers as kube 1.24 validates them (ValidateReplicationController[Update],
 * ValidateReplicationControllerSpec, ValidatePodTemplateSpecForRC, ValidateReadOnlyPersistentDisks,
 * ValidateReplicationControllerStatus[Update]). Object metadata checks are the store's.
 */
import { type FieldError, fieldErr } from '../../../field-errors.js';
import { type JsonObject, asObject, isSet, num, objects, str, stringMap } from './access.js';
import { goStringMap, validateNonnegativeField } from './basic.js';
import type { PodValidationOptions } from './pod-options.js';
import { validatePodTemplateSpec } from './pod-template.js';

/** kube's `ValidateReadOnlyPersistentDisks`: a GCE PD shared by several replicas must be read-only. */
export function validateReadOnlyPersistentDisks(volumes: unknown, field: string): FieldError[] {
  const errs: FieldError[] = [];
  objects(volumes).forEach((vol, i) => {
    const pd = asObject(vol['gcePersistentDisk']);
    if (pd && pd['readOnly'] !== true) {
      errs.push(fieldErr.invalid(`${field}[${i}].gcePersistentDisk.readOnly`, false, 'must be true for replicated pods > 1; GCE PD can only be mounted on multiple machines if it is read-only'));
    }
  });
  return errs;
}

/** kube's `ValidatePodTemplateSpecForRC`: present, matching the selector, restartPolicy Always, no deadline. */
export function validatePodTemplateSpecForRC(template: unknown, selector: Record<string, string>, replicas: number, field: string, opts: PodValidationOptions): FieldError[] {
  const t = asObject(template);
  if (!t) return [fieldErr.required(field)];
  const errs: FieldError[] = [];
  const meta = asObject(t['metadata']) ?? {};
  const labels = stringMap(meta['labels']);
  const entries = Object.entries(selector);
  if (entries.length > 0 && !entries.every(([k, v]) => Object.hasOwn(labels, k) && labels[k] === v)) {
    errs.push(fieldErr.invalid(`${field}.metadata.labels`, goStringMap(asObject(meta['labels'])), '`selector` does not match template `labels`'));
  }
  errs.push(...validatePodTemplateSpec(t, field, opts));
  const spec = asObject(t['spec']) ?? {};
  if (replicas > 1) errs.push(...validateReadOnlyPersistentDisks(spec['volumes'], `${field}.spec.volumes`));
  const restartPolicy = str(spec['restartPolicy']);
  if (restartPolicy !== 'Always') errs.push(fieldErr.notSupported(`${field}.spec.restartPolicy`, restartPolicy, ['Always']));
  if (isSet(spec['activeDeadlineSeconds'])) errs.push(fieldErr.forbidden(`${field}.spec.activeDeadlineSeconds`, 'activeDeadlineSeconds in ReplicationController is not Supported'));
  return errs;
}

/** kube's `ValidateReplicationControllerSpec`. */
export function validateReplicationControllerSpec(specValue: unknown, field: string, opts: PodValidationOptions): FieldError[] {
  const spec = asObject(specValue) ?? {};
  const selector = stringMap(spec['selector']);
  const errs = validateNonnegativeField(spec['minReadySeconds'] ?? 0, `${field}.minReadySeconds`);
  if (Object.keys(selector).length === 0) errs.push(fieldErr.required(`${field}.selector`));
  errs.push(...validateNonnegativeField(spec['replicas'] ?? 0, `${field}.replicas`));
  errs.push(...validatePodTemplateSpecForRC(spec['template'], selector, num(spec['replicas']), `${field}.template`, opts));
  return errs;
}

/** kube's `ValidateReplicationController` minus ValidateObjectMeta. */
export function validateReplicationController(rc: JsonObject, opts: PodValidationOptions): FieldError[] {
  return validateReplicationControllerSpec(rc['spec'], 'spec', opts);
}

/** kube's `ValidateReplicationControllerUpdate` minus ValidateObjectMetaUpdate: the spec is validated again. */
export function validateReplicationControllerUpdate(rc: JsonObject, _old: JsonObject, opts: PodValidationOptions): FieldError[] {
  return validateReplicationControllerSpec(rc['spec'], 'spec', opts);
}

/** kube's `ValidateReplicationControllerStatus`: counts not negative, none above `replicas`. */
export function validateReplicationControllerStatus(statusValue: unknown, field: string): FieldError[] {
  const status = asObject(statusValue) ?? {};
  const errs: FieldError[] = [];
  for (const k of ['replicas', 'fullyLabeledReplicas', 'readyReplicas', 'availableReplicas', 'observedGeneration']) {
    errs.push(...validateNonnegativeField(status[k] ?? 0, `${field}.${k}`));
  }
  const n = (k: string): number => num(status[k]);
  const msg = 'cannot be greater than status.replicas';
  if (n('fullyLabeledReplicas') > n('replicas')) errs.push(fieldErr.invalid(`${field}.fullyLabeledReplicas`, status['fullyLabeledReplicas'], msg));
  if (n('readyReplicas') > n('replicas')) errs.push(fieldErr.invalid(`${field}.readyReplicas`, status['readyReplicas'], msg));
  if (n('availableReplicas') > n('replicas')) errs.push(fieldErr.invalid(`${field}.availableReplicas`, status['availableReplicas'], msg));
  if (n('availableReplicas') > n('readyReplicas')) errs.push(fieldErr.invalid(`${field}.availableReplicas`, status['availableReplicas'], 'cannot be greater than readyReplicas'));
  return errs;
}

/** kube's `ValidateReplicationControllerStatusUpdate` minus ValidateObjectMetaUpdate. */
export function validateReplicationControllerStatusUpdate(rc: JsonObject, _old: JsonObject): FieldError[] {
  return validateReplicationControllerStatus(rc['status'], 'status');
}
