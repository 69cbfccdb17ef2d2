/**
 * kube 1.24's seccomp version skew on pod create (pkg/registry/core/pod applySeccompVersionSkew,
 * pkg/api/pod SeccompAnnotationForField/SeccompFieldForAnnotation): a seccomp field without its
 * annotation gains the annotation, and an annotation without its field gains the field, for the
 * pod and for each container, so kubelets of either age enforce the same profile.
 */
import { type JsonObject, asObject, isSet, str, visitContainersWithPath } from '../validation/access.js';
import {
  SECCOMP_CONTAINER_ANNOTATION_PREFIX,
  SECCOMP_DOCKER_DEFAULT,
  SECCOMP_LOCALHOST_PREFIX,
  SECCOMP_POD_ANNOTATION,
  SECCOMP_RUNTIME_DEFAULT,
  SECCOMP_UNCONFINED,
} from '../validation/security.js';

/** The annotation value for a seccomp profile field, or '' (Localhost without a profile, an unknown type). */
export function seccompAnnotationForField(profile: JsonObject): string {
  switch (str(profile['type'])) {
    case 'Unconfined':
      return SECCOMP_UNCONFINED;
    case 'RuntimeDefault':
      return SECCOMP_RUNTIME_DEFAULT;
    case 'Localhost':
      return isSet(profile['localhostProfile']) ? `${SECCOMP_LOCALHOST_PREFIX}${str(profile['localhostProfile'])}` : '';
    default:
      return '';
  }
}

/** The seccomp profile field for an annotation value, or undefined when it names none. */
export function seccompFieldForAnnotation(annotation: string): JsonObject | undefined {
  if (annotation === SECCOMP_UNCONFINED) return { type: 'Unconfined' };
  if (annotation === SECCOMP_RUNTIME_DEFAULT || annotation === SECCOMP_DOCKER_DEFAULT) return { type: 'RuntimeDefault' };
  if (annotation.startsWith(SECCOMP_LOCALHOST_PREFIX)) {
    const localhostProfile = annotation.slice(SECCOMP_LOCALHOST_PREFIX.length);
    if (localhostProfile !== '') return { type: 'Localhost', localhostProfile };
  }
  return undefined;
}

function sync(pod: JsonObject, holder: JsonObject, annotationKey: string): void {
  const meta = asObject(pod['metadata']) ?? {};
  const annotations = asObject(meta['annotations']);
  const hasAnnotation = annotations !== undefined && Object.hasOwn(annotations, annotationKey);
  const sc = asObject(holder['securityContext']);
  const field = asObject(sc?.['seccompProfile']);
  if (field && !hasAnnotation) {
    const value = seccompAnnotationForField(field);
    if (value === '') return;
    pod['metadata'] = meta;
    // The pod is the request's own decoded object (create only): its annotations are changed in place.
    if (annotations) annotations[annotationKey] = value;
    else meta['annotations'] = { [annotationKey]: value };
  } else if (hasAnnotation && !field) {
    const profile = seccompFieldForAnnotation(str(annotations[annotationKey]));
    if (!profile) return;
    holder['securityContext'] = { ...(sc ?? {}), seccompProfile: profile };
  }
}

/** kube's `applySeccompVersionSkew`, in place. */
export function applySeccompVersionSkew(pod: JsonObject): void {
  const spec = asObject(pod['spec']);
  if (!spec) return;
  sync(pod, spec, SECCOMP_POD_ANNOTATION);
  visitContainersWithPath(spec, 'spec', (c) => sync(pod, c, `${SECCOMP_CONTAINER_ANNOTATION_PREFIX}${str(c['name'])}`));
}
