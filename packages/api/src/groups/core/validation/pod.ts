/**
 * A pod on create as kube 1.24 validates it (validatePodMetadataAndSpec, ValidatePodCreate,
 * validateSeccompAnnotationsAndFields, validatePodIPs). Like every plinth resource validator, these
 * leave out the generic object-metadata checks (ValidateObjectMeta/ValidateObjectMetaUpdate), which
 * the store runs first, where kube's errors also come first.
 */
import { type FieldError, GoLiteral, fieldErr } from '../../../field-errors.js';
import { type JsonObject, asObject, isSet, list, objects, str, visitContainersWithPath } from './access.js';
import { isDualStackIPStrings, isValidIP } from './net.js';
import { validateContainersOnlyForPod } from './containers.js';
import { annotationsOf, validatePodSpecificAnnotations } from './pod-annotations.js';
import type { PodValidationOptions } from './pod-options.js';
import { specServiceAccountName, validatePodSpec } from './pod-spec.js';
import { SECCOMP_CONTAINER_ANNOTATION_PREFIX, SECCOMP_DOCKER_DEFAULT, SECCOMP_LOCALHOST_PREFIX, SECCOMP_POD_ANNOTATION, SECCOMP_RUNTIME_DEFAULT, SECCOMP_UNCONFINED } from './security.js';

/**
 * kube's `validatePodMetadataAndSpec` minus ValidateObjectMeta: the pod-specific annotations, the
 * spec, and the rules kube applies to pods but not to templates.
 */
export function validatePodMetadataAndSpec(pod: JsonObject, opts: PodValidationOptions): FieldError[] {
  const spec = asObject(pod['spec']) ?? {};
  const name = str(asObject(pod['metadata'])?.['name']);
  const errs = validatePodSpecificAnnotations(annotationsOf(pod), spec, 'metadata.annotations', opts);
  errs.push(...validatePodSpec(spec, name, 'spec', opts));
  if (specServiceAccountName(spec) === '') {
    objects(spec['volumes']).forEach((vol, vi) => {
      const projected = asObject(vol['projected']);
      if (!projected) return;
      objects(projected['sources']).forEach((src, si) => {
        if (isSet(src['serviceAccountToken'])) {
          errs.push(fieldErr.forbidden(`spec.volumes[${vi}].projected.sources[${si}].serviceAccountToken`, 'must not be specified when serviceAccountName is not set'));
        }
      });
    });
  }
  errs.push(...validateContainersOnlyForPod(spec['containers'], 'spec.containers'));
  errs.push(...validateContainersOnlyForPod(spec['initContainers'], 'spec.initContainers'));
  return errs;
}

/** kube's `validateSeccompAnnotationsAndFieldsMatch`. */
function seccompMismatch(annotation: string, profile: JsonObject, field: string): FieldError | undefined {
  switch (str(profile['type'])) {
    case 'Unconfined':
      return annotation === SECCOMP_UNCONFINED ? undefined : fieldErr.forbidden(`${field}.type`, 'seccomp type in annotation and field must match');
    case 'RuntimeDefault':
      return annotation === SECCOMP_RUNTIME_DEFAULT || annotation === SECCOMP_DOCKER_DEFAULT ? undefined : fieldErr.forbidden(`${field}.type`, 'seccomp type in annotation and field must match');
    case 'Localhost':
      if (!annotation.startsWith(SECCOMP_LOCALHOST_PREFIX)) return fieldErr.forbidden(`${field}.type`, 'seccomp type in annotation and field must match');
      if (!isSet(profile['localhostProfile']) || annotation.slice(SECCOMP_LOCALHOST_PREFIX.length) !== str(profile['localhostProfile'])) {
        return fieldErr.forbidden(`${field}.localhostProfile`, 'seccomp profile in annotation and field must match');
      }
      return undefined;
    default:
      return undefined;
  }
}

/** kube's `validateSeccompAnnotationsAndFields`: where both a seccomp annotation and field are set, they agree. */
export function validateSeccompAnnotationsAndFields(meta: unknown, specValue: unknown, specPath: string): FieldError[] {
  const annotations = annotationsOf({ metadata: meta });
  const spec = asObject(specValue) ?? {};
  const errs: FieldError[] = [];
  const podProfile = asObject(asObject(spec['securityContext'])?.['seccompProfile']);
  if (podProfile && Object.hasOwn(annotations, SECCOMP_POD_ANNOTATION)) {
    const e = seccompMismatch(annotations[SECCOMP_POD_ANNOTATION]!, podProfile, `${specPath}.securityContext.seccompProfile`);
    if (e) errs.push(e);
  }
  visitContainersWithPath(spec, specPath, (c, path) => {
    const profile = asObject(asObject(c['securityContext'])?.['seccompProfile']);
    const key = `${SECCOMP_CONTAINER_ANNOTATION_PREFIX}${str(c['name'])}`;
    if (!profile || !Object.hasOwn(annotations, key)) return;
    const e = seccompMismatch(annotations[key]!, profile, `${path}.securityContext.seccompProfile`);
    if (e) errs.push(e);
  });
  return errs;
}

/** kube's `ValidatePodCreate` minus ValidateObjectMeta. */
export function validatePod(pod: JsonObject, opts: PodValidationOptions): FieldError[] {
  const errs = validatePodMetadataAndSpec(pod, opts);
  const spec = asObject(pod['spec']) ?? {};
  if (list(spec['ephemeralContainers']).length > 0) errs.push(fieldErr.forbidden('spec.ephemeralContainers', 'cannot be set on create'));
  errs.push(...validateSeccompAnnotationsAndFields(pod['metadata'], spec, 'spec'));
  return errs;
}

/**
 * The pod IPs of a v1 status as kube's internal status holds them: `podIP` wins when it disagrees
 * with `podIPs[0]`, and alone it stands for the list (Convert_v1_PodStatus_To_core_PodStatus).
 */
export function internalPodIPs(status: JsonObject): string[] {
  const podIP = str(status['podIP']);
  const podIPs = objects(status['podIPs']).map((p) => str(p['ip']));
  if (podIP.length > 0 && (podIPs.length === 0 || podIP !== podIPs[0])) return [podIP];
  return podIPs;
}

const goPodIP = (ip: string): string => `core.PodIP{IP:${JSON.stringify(ip)}}`;

/** kube's `validatePodIPs`: valid IPs, at most one per family, no repeats. */
export function validatePodIPs(pod: JsonObject): FieldError[] {
  const ips = internalPodIPs(asObject(pod['status']) ?? {});
  const field = 'status.podIPs';
  const errs: FieldError[] = [];
  ips.forEach((ip, i) => {
    for (const m of isValidIP(ip)) errs.push(fieldErr.invalid(`${field}[${i}]`, ip, m));
  });
  if (ips.length > 1) {
    const dualStack = isDualStackIPStrings(ips);
    if (dualStack === undefined) {
      errs.push({ type: 'InternalError', field, hasValue: false, detail: 'failed to check for dual stack with error:ip <nil> is invalid' });
    }
    if (dualStack !== true || ips.length > 2) {
      errs.push(fieldErr.invalid(field, new GoLiteral(`[]core.PodIP{${ips.map(goPodIP).join(', ')}}`), 'may specify no more than one IP for each IP family'));
    }
    const seen = new Set<string>();
    ips.forEach((ip, i) => {
      if (seen.has(ip)) errs.push(fieldErr.duplicate(`${field}[${i}]`, new GoLiteral(goPodIP(ip))));
      seen.add(ip);
    });
  }
  return errs;
}
