/**
 * PodTemplates and pod template specs as kube 1.24 validates them (ValidatePodTemplate,
 * ValidatePodTemplateUpdate, ValidatePodTemplateSpec). Object metadata checks of the PodTemplate
 * itself are the store's.
 */
import type { FieldError } from '../../../field-errors.js';
import { fieldErr } from '../../../field-errors.js';
import { validateAnnotations, validateLabels } from '../../../validation.js';
import { type JsonObject, asObject, list, stringMap } from './access.js';
import { validateSeccompAnnotationsAndFields } from './pod.js';
import { validatePodSpecificAnnotations } from './pod-annotations.js';
import type { PodValidationOptions } from './pod-options.js';
import { validatePodSpec } from './pod-spec.js';

/**
 * kube's `ValidatePodTemplateSpec`. kube passes the template's path for labels and annotations
 * without `.metadata` (`template.labels`), and no pod name for the spec.
 */
export function validatePodTemplateSpec(template: unknown, field: string, opts: PodValidationOptions): FieldError[] {
  const t = asObject(template) ?? {};
  const meta = asObject(t['metadata']) ?? {};
  const spec = asObject(t['spec']) ?? {};
  const errs: FieldError[] = [
    ...validateLabels(meta['labels'], `${field}.labels`),
    ...validateAnnotations(meta['annotations'], `${field}.annotations`),
    ...validatePodSpecificAnnotations(stringMap(meta['annotations']), spec, `${field}.annotations`, opts),
    ...validatePodSpec(spec, '', `${field}.spec`, opts),
    ...validateSeccompAnnotationsAndFields(meta, spec, `${field}.spec`),
  ];
  if (list(spec['ephemeralContainers']).length > 0) errs.push(fieldErr.forbidden(`${field}.spec.ephemeralContainers`, 'ephemeral containers not allowed in pod template'));
  return errs;
}

/** kube's `ValidatePodTemplate` minus ValidateObjectMeta. */
export function validatePodTemplate(podTemplate: JsonObject, opts: PodValidationOptions): FieldError[] {
  return validatePodTemplateSpec(podTemplate['template'], 'template', opts);
}

/** kube's `ValidatePodTemplateUpdate` minus ValidateObjectMetaUpdate: the template is validated again, nothing is immutable. */
export function validatePodTemplateUpdate(podTemplate: JsonObject, _old: JsonObject, opts: PodValidationOptions): FieldError[] {
  return validatePodTemplateSpec(podTemplate['template'], 'template', opts);
}
