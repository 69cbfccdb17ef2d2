/**
 * Pod updates as kube 1.24 validates them (ValidatePodUpdate, ValidateContainerUpdates): besides
 * metadata, only container images, activeDeadlineSeconds (set, or lowered), added tolerations and
 * a negative terminationGracePeriodSeconds turned into 1 may change. Object metadata checks are
 * the store's (see pod.ts).
 */
import { type FieldError, GoLiteral, fieldErr } from '../../../field-errors.js';
import { type JsonObject, asObject, isSet, num, objects, str } from './access.js';
import { INT32_MAX, inclusiveRangeError } from './basic.js';
import { goDiff } from './go-diff.js';
import { validatePodMetadataAndSpec } from './pod.js';
import { validatePodSpecificAnnotationUpdates } from './pod-annotations.js';
import type { PodValidationOptions } from './pod-options.js';
import { semanticEqual } from './pod-equality.js';
import { validateOnlyAddedTolerations } from './tolerations.js';

/** The fixed text of kube's spec-immutability error; the diff follows it on the next line. */
export const POD_UPDATE_FORBIDDEN_MSG =
  'pod updates may not change fields other than `spec.containers[*].image`, `spec.initContainers[*].image`, `spec.activeDeadlineSeconds`, `spec.tolerations` (only additions to existing tolerations) or `spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)';

/** kube's `ValidateContainerUpdates`: same count, images set and without surrounding whitespace. */
function validateContainerUpdates(next: JsonObject[], old: JsonObject[], field: string): { errors: FieldError[]; stop: boolean } {
  if (next.length !== old.length) return { errors: [fieldErr.forbidden(field, 'pod updates may not add or remove containers')], stop: true };
  const errors: FieldError[] = [];
  next.forEach((c, i) => {
    const image = str(c['image']);
    if (image.length === 0) errors.push(fieldErr.required(`${field}[${i}].image`));
    if (image.trim().length !== image.length) errors.push(fieldErr.invalid(`${field}[${i}].image`, image, 'must not have leading or trailing whitespace'));
  });
  return { errors, stop: false };
}

/** The new spec with what may change taken from the old one (kube's munged spec). */
function mungedSpec(spec: JsonObject, old: JsonObject): JsonObject {
  const m: JsonObject = { ...spec };
  for (const k of ['containers', 'initContainers'] as const) {
    const olds = objects(old[k]);
    if (Array.isArray(spec[k])) m[k] = objects(spec[k]).map((c, i) => ({ ...c, image: olds[i]?.['image'] }));
  }
  if (isSet(old['activeDeadlineSeconds'])) m['activeDeadlineSeconds'] = old['activeDeadlineSeconds'];
  else delete m['activeDeadlineSeconds'];
  if (isSet(old['tolerations'])) m['tolerations'] = old['tolerations'];
  else delete m['tolerations'];
  if (isSet(old['terminationGracePeriodSeconds']) && num(old['terminationGracePeriodSeconds']) < 0 && isSet(m['terminationGracePeriodSeconds']) && num(m['terminationGracePeriodSeconds']) === 1) {
    m['terminationGracePeriodSeconds'] = old['terminationGracePeriodSeconds'];
  }
  return m;
}

/**
 * The v1 spec in the shape of kube's internal PodSpec, which kube compares and diffs: the
 * deprecated `serviceAccount` alias folds into `serviceAccountName`, and the host namespace flags
 * live in the security context (Convert_v1_PodSpec_To_core_PodSpec).
 */
export function internalPodSpec(spec: JsonObject): JsonObject {
  const c: JsonObject = { ...spec, serviceAccountName: str(spec['serviceAccountName']) || str(spec['serviceAccount']) };
  const sc: JsonObject = { ...(asObject(spec['securityContext']) ?? {}) };
  for (const k of ['hostNetwork', 'hostPID', 'hostIPC', 'shareProcessNamespace']) {
    if (k in c) sc[k] = c[k];
    delete c[k];
  }
  delete c['serviceAccount'];
  c['securityContext'] = sc;
  return c;
}

/** kube's `ValidatePodUpdate` minus ValidateObjectMetaUpdate/ValidateObjectMeta. */
export function validatePodUpdate(pod: JsonObject, old: JsonObject, opts: PodValidationOptions): FieldError[] {
  const errs = validatePodMetadataAndSpec(pod, opts);
  errs.push(...validatePodSpecificAnnotationUpdates(pod, old, 'metadata.annotations', opts));
  const spec = internalPodSpec(asObject(pod['spec']) ?? {});
  const oldSpec = internalPodSpec(asObject(old['spec']) ?? {});
  for (const k of ['containers', 'initContainers'] as const) {
    const r = validateContainerUpdates(objects(spec[k]), objects(oldSpec[k]), `spec.${k}`);
    errs.push(...r.errors);
    if (r.stop) return errs;
  }
  const ads = spec['activeDeadlineSeconds'];
  const oldAds = oldSpec['activeDeadlineSeconds'];
  if (isSet(ads)) {
    // Allowed: from none to a value, or lowered; never back to none.
    if (num(ads) < 0 || num(ads) > INT32_MAX) {
      errs.push(fieldErr.invalid('spec.activeDeadlineSeconds', ads, inclusiveRangeError(0, INT32_MAX)));
      return errs;
    }
    if (isSet(oldAds) && num(oldAds) < num(ads)) {
      errs.push(fieldErr.invalid('spec.activeDeadlineSeconds', ads, 'must be less than or equal to previous value'));
      return errs;
    }
  } else if (isSet(oldAds)) {
    // kube prints a nil pointer as null.
    errs.push(fieldErr.invalid('spec.activeDeadlineSeconds', new GoLiteral('null'), 'must not update from a positive integer to nil value'));
  }
  errs.push(...validateOnlyAddedTolerations(spec['tolerations'], oldSpec['tolerations'], 'spec.tolerations'));
  if (semanticEqual(spec, oldSpec)) return errs;
  const munged = mungedSpec(spec, oldSpec);
  if (!semanticEqual(munged, oldSpec)) errs.push(fieldErr.forbidden('spec', `${POD_UPDATE_FORBIDDEN_MSG}\n${goDiff(oldSpec, munged, 'core.PodSpec')}`));
  return errs;
}
