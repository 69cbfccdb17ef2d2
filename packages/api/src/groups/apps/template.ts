/**
 * kube 1.24's pod template rules of the apps/v1 kinds (ValidatePodTemplateSpecForReplicaSet, the
 * StatefulSet and DaemonSet variants): the selector must match the template's labels, the
 * template is a valid pod template with restartPolicy Always and no activeDeadlineSeconds.
 */
import { type FieldError, fieldErr } from '../../field-errors.js';
import { validateAnnotations, validateLabels } from '../../validation.js';
import { validatePodSpecificAnnotations } from '../core/validation/pod-annotations.js';
import { validatePodTemplateSpec } from '../core/validation/pod-template.js';
import { validateReadOnlyPersistentDisks } from '../core/validation/replication-controller.js';
import { type JsonObject, type PodValidationOptions, asObject, selectorMatchesTemplate, templateLabelsValue } from './shared.js';
import { isSet, str, stringMap } from '../core/validation/access.js';

/** restartPolicy Always and no activeDeadlineSeconds (ReplicaSet, Deployment, StatefulSet, DaemonSet). */
export function validateAlwaysRestart(template: unknown, path: string, kind: string): FieldError[] {
  const spec = asObject(asObject(template)?.['spec']) ?? {};
  const errs: FieldError[] = [];
  const restartPolicy = str(spec['restartPolicy']);
  if (restartPolicy !== 'Always') errs.push(fieldErr.notSupported(`${path}.spec.restartPolicy`, restartPolicy, ['Always']));
  if (isSet(spec['activeDeadlineSeconds'])) errs.push(fieldErr.forbidden(`${path}.spec.activeDeadlineSeconds`, `activeDeadlineSeconds in ${kind} is not Supported`));
  return errs;
}

/** The selector-matches-labels check when the selector parses and is not empty. */
export function validateSelectorMatches(selector: unknown, template: unknown, path: string): FieldError[] {
  const m = selectorMatchesTemplate(selector, template);
  if (!m.parsed || m.empty || m.matches) return [];
  return [fieldErr.invalid(`${path}.metadata.labels`, templateLabelsValue(template), '`selector` does not match template `labels`')];
}

/** kube's ValidatePodTemplateSpecForReplicaSet (Deployments and ReplicaSets). */
export function validatePodTemplateSpecForReplicaSet(template: unknown, selector: unknown, replicas: number, path: string, opts: PodValidationOptions): FieldError[] {
  const errs = [...validateSelectorMatches(selector, template, path), ...validatePodTemplateSpec(template, path, opts)];
  if (replicas > 1) errs.push(...validateReadOnlyPersistentDisks(asObject(asObject(template)?.['spec'])?.['volumes'], `${path}.spec.volumes`));
  errs.push(...validateAlwaysRestart(template, path, 'ReplicaSet'));
  return errs;
}

/** kube 1.24's ValidatePodTemplateSpecForStatefulSet: labels and annotations only (not the pod spec). */
export function validatePodTemplateSpecForStatefulSet(template: unknown, selector: unknown, path: string, opts: PodValidationOptions): FieldError[] {
  const t: JsonObject = asObject(template) ?? {};
  const meta = asObject(t['metadata']) ?? {};
  return [
    ...validateSelectorMatches(selector, template, path),
    ...validateLabels(meta['labels'], `${path}.labels`),
    ...validateAnnotations(meta['annotations'], `${path}.annotations`),
    ...validatePodSpecificAnnotations(stringMap(meta['annotations']), asObject(t['spec']) ?? {}, `${path}.annotations`, opts),
  ];
}
