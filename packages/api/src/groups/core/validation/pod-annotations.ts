/**
 * The annotations kube 1.24 gives meaning on pods (ValidatePodSpecificAnnotations,
 * ValidateTolerationsInPodAnnotations, ValidateSeccompPodAnnotations, ValidateAppArmorPodAnnotations,
 * ValidatePodSpecificAnnotationUpdates, helper.GetDeletionCostFromPodAnnotations).
 */
import { type FieldError, fieldErr } from '../../../field-errors.js';
import { type JsonObject, asObject, str, visitContainersWithPath } from './access.js';
import type { PodValidationOptions } from './pod-options.js';
import { SECCOMP_CONTAINER_ANNOTATION_PREFIX, SECCOMP_POD_ANNOTATION, validateSeccompProfile } from './security.js';
import { goJSONSyntaxError } from './go-json.js';
import { validateTolerations } from './tolerations.js';

export const MIRROR_POD_ANNOTATION = 'kubernetes.io/config.mirror';
export const TOLERATIONS_ANNOTATION = 'scheduler.alpha.kubernetes.io/tolerations';
export const POD_DELETION_COST_ANNOTATION = 'controller.kubernetes.io/pod-deletion-cost';
export const APPARMOR_CONTAINER_ANNOTATION_PREFIX = 'container.apparmor.security.beta.kubernetes.io/';

/** Why a pod-deletion-cost annotation is not an int32 (kube's GetDeletionCostFromPodAnnotations), or undefined. */
export function deletionCostError(annotations: Record<string, string>): string | undefined {
  if (!Object.hasOwn(annotations, POD_DELETION_COST_ANNOTATION)) return undefined;
  const value = annotations[POD_DELETION_COST_ANNOTATION]!;
  // No sign but '-', no leading zeros.
  const first = value[0];
  const validFirst = first === '-' || value === '0' || (first !== undefined && first >= '1' && first <= '9');
  if (!validFirst) return `invalid value ${JSON.stringify(value)}`;
  if (!/^-?[0-9]+$/.test(value)) return `strconv.ParseInt: parsing ${JSON.stringify(value)}: invalid syntax`;
  const n = BigInt(value);
  if (n < -(2n ** 31n) || n > 2n ** 31n - 1n) return `strconv.ParseInt: parsing ${JSON.stringify(value)}: value out of range`;
  return undefined;
}

const TOLERATION_FIELDS: Record<string, [name: string, goType: string]> = {
  key: ['key', 'string'],
  operator: ['operator', 'core.TolerationOperator'],
  value: ['value', 'string'],
  effect: ['effect', 'core.TaintEffect'],
  tolerationseconds: ['tolerationSeconds', 'int64'],
};

function jsonKind(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  if (v === null) return 'null';
  if (typeof v === 'object') return 'object';
  if (typeof v === 'boolean') return 'bool';
  return typeof v;
}

/**
 * Go's `json.Unmarshal` of the tolerations annotation into `[]core.Toleration`: the tolerations
 * (members matched case-insensitively, unknown ones ignored) or Go's error text.
 */
export function decodeTolerationsAnnotation(text: string): { tolerations: JsonObject[] } | { error: string } {
  const syntax = goJSONSyntaxError(text);
  if (syntax !== undefined) return { error: syntax };
  const parsed: unknown = JSON.parse(text);
  if (parsed === null) return { tolerations: [] };
  if (!Array.isArray(parsed)) return { error: `json: cannot unmarshal ${jsonKind(parsed)} into Go value of type []core.Toleration` };
  const out: JsonObject[] = [];
  for (const item of parsed) {
    if (item === null) {
      out.push({});
      continue;
    }
    if (typeof item !== 'object' || Array.isArray(item)) return { error: `json: cannot unmarshal ${jsonKind(item)} into Go value of type core.Toleration` };
    const t: JsonObject = {};
    for (const [k, v] of Object.entries(item as JsonObject)) {
      const f = TOLERATION_FIELDS[k.toLowerCase()];
      if (!f || v === null) continue;
      const [name, goType] = f;
      const ok = goType === 'int64' ? typeof v === 'number' && Number.isInteger(v) : typeof v === 'string';
      if (!ok) {
        const kind = typeof v === 'number' ? `number ${String(v)}` : jsonKind(v);
        return { error: `json: cannot unmarshal ${kind} into Go struct field Toleration.${name} of type ${goType}` };
      }
      t[name] = v;
    }
    out.push(t);
  }
  return { tolerations: out };
}

/** kube's `ValidateTolerationsInPodAnnotations`. */
function validateTolerationsInPodAnnotations(annotations: Record<string, string>, field: string): FieldError[] {
  const decoded = decodeTolerationsAnnotation(annotations[TOLERATIONS_ANNOTATION] ?? '');
  if ('error' in decoded) return [fieldErr.invalid(field, TOLERATIONS_ANNOTATION, decoded.error)];
  return decoded.tolerations.length > 0 ? validateTolerations(decoded.tolerations, `${field}.${TOLERATIONS_ANNOTATION}`) : [];
}

/** kube's `ValidateSeccompPodAnnotations` (their paths use `.key`, not `[key]`). */
export function validateSeccompPodAnnotations(annotations: Record<string, string>, field: string): FieldError[] {
  const errs: FieldError[] = [];
  if (Object.hasOwn(annotations, SECCOMP_POD_ANNOTATION)) errs.push(...validateSeccompProfile(annotations[SECCOMP_POD_ANNOTATION]!, `${field}.${SECCOMP_POD_ANNOTATION}`));
  for (const [k, p] of Object.entries(annotations)) {
    if (k.startsWith(SECCOMP_CONTAINER_ANNOTATION_PREFIX)) errs.push(...validateSeccompProfile(p, `${field}.${k}`));
  }
  return errs;
}

/** kube's `ValidateAppArmorProfileFormat`: the error text, or undefined. */
export function appArmorProfileError(profile: string): string | undefined {
  if (profile === '' || profile === 'runtime/default' || profile === 'unconfined' || profile.startsWith('localhost/')) return undefined;
  return `invalid AppArmor profile name: ${JSON.stringify(profile)}`;
}

function specHasContainer(spec: JsonObject, name: string): boolean {
  let found = false;
  visitContainersWithPath(spec, 'spec', (c) => {
    if (str(c['name']) === name) found = true;
  });
  return found;
}

/** kube's `ValidateAppArmorPodAnnotations`: a known container and a well-formed profile. */
export function validateAppArmorPodAnnotations(annotations: Record<string, string>, spec: JsonObject, field: string): FieldError[] {
  const errs: FieldError[] = [];
  for (const [k, p] of Object.entries(annotations)) {
    if (!k.startsWith(APPARMOR_CONTAINER_ANNOTATION_PREFIX)) continue;
    const container = k.slice(APPARMOR_CONTAINER_ANNOTATION_PREFIX.length);
    if (!specHasContainer(spec, container)) errs.push(fieldErr.invalid(`${field}[${k}]`, container, 'container not found'));
    const bad = appArmorProfileError(p);
    if (bad) errs.push(fieldErr.invalid(`${field}[${k}]`, p, bad));
  }
  return errs;
}

/** kube's `ValidatePodSpecificAnnotations`. */
export function validatePodSpecificAnnotations(annotations: Record<string, string>, spec: JsonObject, field: string, opts: PodValidationOptions): FieldError[] {
  const errs: FieldError[] = [];
  if (Object.hasOwn(annotations, MIRROR_POD_ANNOTATION) && str(spec['nodeName']).length === 0) {
    errs.push(fieldErr.invalid(`${field}[${MIRROR_POD_ANNOTATION}]`, annotations[MIRROR_POD_ANNOTATION], 'must set spec.nodeName if mirror pod annotation is set'));
  }
  if ((annotations[TOLERATIONS_ANNOTATION] ?? '') !== '') errs.push(...validateTolerationsInPodAnnotations(annotations, field));
  if (!opts.allowInvalidPodDeletionCost && deletionCostError(annotations) !== undefined) {
    errs.push(fieldErr.invalid(`${field}[${POD_DELETION_COST_ANNOTATION}]`, annotations[POD_DELETION_COST_ANNOTATION], 'must be a 32bit integer'));
  }
  errs.push(...validateSeccompPodAnnotations(annotations, field));
  errs.push(...validateAppArmorPodAnnotations(annotations, spec, field));
  return errs;
}

/** kube's `ValidatePodSpecificAnnotationUpdates`: AppArmor and mirror-pod annotations are fixed at create. */
export function validatePodSpecificAnnotationUpdates(pod: JsonObject, old: JsonObject, field: string, opts: PodValidationOptions): FieldError[] {
  const next = annotationsOf(pod);
  const before = annotationsOf(old);
  const errs: FieldError[] = [];
  for (const [k, v] of Object.entries(before)) {
    if (Object.hasOwn(next, k) && next[k] === v) continue;
    if (k.startsWith(APPARMOR_CONTAINER_ANNOTATION_PREFIX)) errs.push(fieldErr.forbidden(`${field}[${k}]`, 'may not remove or update AppArmor annotations'));
    if (k === MIRROR_POD_ANNOTATION) errs.push(fieldErr.forbidden(`${field}[${k}]`, 'may not remove or update mirror pod annotation'));
  }
  for (const k of Object.keys(next)) {
    if (Object.hasOwn(before, k)) continue;
    if (k.startsWith(APPARMOR_CONTAINER_ANNOTATION_PREFIX)) errs.push(fieldErr.forbidden(`${field}[${k}]`, 'may not add AppArmor annotations'));
    if (k === MIRROR_POD_ANNOTATION) errs.push(fieldErr.forbidden(`${field}[${k}]`, 'may not add mirror pod annotation'));
  }
  errs.push(...validatePodSpecificAnnotations(next, asObject(pod['spec']) ?? {}, field, opts));
  return errs;
}

/** The annotations of an object's metadata as a string map. */
export function annotationsOf(obj: JsonObject): Record<string, string> {
  const a = asObject(asObject(obj['metadata'])?.['annotations']);
  const out: Record<string, string> = {};
  if (a) for (const [k, v] of Object.entries(a)) out[k] = str(v);
  return out;
}
