/** A pod spec as kube 1.24 validates it (ValidatePodSpec and the small rules it runs). */
import { type FieldError, fieldErr } from '../../../field-errors.js';
import { isQualifiedName, nameIsDNSSubdomain, validateLabels } from '../../../validation.js';
import { type JsonObject, asObject, isSet, list, num, objects, str } from './access.js';
import { INT32_MAX, inclusiveRangeError, validateDNS1123Label } from './basic.js';
import { validateAffinity } from './affinity.js';
import { validateContainers, validateEphemeralContainers, validateInitContainers } from './containers.js';
import { validateDNSPolicy, validateHostAliases, validatePodDNSConfig } from './dns.js';
import type { PodValidationOptions } from './pod-options.js';
import { validateOverhead } from './quantities.js';
import { validatePodSecurityContext } from './security.js';
import { validateTolerations } from './tolerations.js';
import { validateTopologySpreadConstraints } from './topology.js';
import { validateVolumes } from './volumes.js';
import { validateLinux, validateOS, validateWindows, validateWindowsHostProcessPod } from './windows.js';

const RESTART_POLICIES = ['Always', 'OnFailure', 'Never'];
const PREEMPTION_POLICIES = ['PreemptLowerPriority', 'Never'];

function validateRestartPolicy(policy: string, field: string): FieldError[] {
  if (RESTART_POLICIES.includes(policy)) return [];
  return policy === '' ? [fieldErr.required(field)] : [fieldErr.notSupported(field, policy, RESTART_POLICIES)];
}

function validatePreemptionPolicy(policy: string, field: string): FieldError[] {
  if (PREEMPTION_POLICIES.includes(policy)) return [];
  return policy === '' ? [fieldErr.required(field)] : [fieldErr.notSupported(field, policy, PREEMPTION_POLICIES)];
}

/** kube's `validateImagePullSecrets`: a reference carries its name only. */
function validateImagePullSecrets(secrets: unknown, field: string): FieldError[] {
  const errs: FieldError[] = [];
  objects(secrets).forEach((ref, i) => {
    if (Object.keys(ref).some((k) => k !== 'name')) errs.push(fieldErr.invalid(`${field}[${i}]`, ref, 'only name may be set'));
  });
  return errs;
}

function validateReadinessGates(gates: unknown, field: string): FieldError[] {
  const errs: FieldError[] = [];
  objects(gates).forEach((g, i) => {
    const type = str(g['conditionType']);
    for (const m of isQualifiedName(type)) errs.push(fieldErr.invalid(`${field}[${i}].conditionType`, type, m));
  });
  return errs;
}

function nameErrors(value: string, field: string): FieldError[] {
  return nameIsDNSSubdomain(value, false).map((m) => fieldErr.invalid(field, value, m));
}

/**
 * The service account a v1 spec names: `serviceAccountName`, or the deprecated `serviceAccount`
 * when that is empty (kube's v1→internal conversion).
 */
export function specServiceAccountName(spec: JsonObject): string {
  return str(spec['serviceAccountName']) || str(spec['serviceAccount']);
}

/**
 * kube's `ValidatePodSpec`. `podName` is the pod's name for ephemeral-volume checks ('' for
 * templates, which kube validates without pod metadata).
 */
export function validatePodSpec(specValue: unknown, podName: string, field: string, opts: PodValidationOptions): FieldError[] {
  const spec = asObject(specValue) ?? {};
  const { volumes, errors: errs } = validateVolumes(spec['volumes'], podName, `${field}.volumes`, opts);
  errs.push(...validateContainers(spec['containers'], false, volumes, `${field}.containers`, opts));
  errs.push(...validateInitContainers(spec['initContainers'], spec['containers'], volumes, `${field}.initContainers`, opts));
  errs.push(...validateEphemeralContainers(spec['ephemeralContainers'], spec['containers'], spec['initContainers'], volumes, `${field}.ephemeralContainers`, opts));
  errs.push(...validateRestartPolicy(str(spec['restartPolicy']), `${field}.restartPolicy`));
  const dnsPolicy = str(spec['dnsPolicy']);
  errs.push(...validateDNSPolicy(dnsPolicy, `${field}.dnsPolicy`));
  errs.push(...validateLabels(spec['nodeSelector'], `${field}.nodeSelector`));
  errs.push(...validatePodSecurityContext(spec, field, opts));
  errs.push(...validateImagePullSecrets(spec['imagePullSecrets'], `${field}.imagePullSecrets`));
  errs.push(...validateAffinity(spec['affinity'], `${field}.affinity`));
  errs.push(...validatePodDNSConfig(spec['dnsConfig'], dnsPolicy, `${field}.dnsConfig`, opts));
  errs.push(...validateReadinessGates(spec['readinessGates'], `${field}.readinessGates`));
  errs.push(...validateTopologySpreadConstraints(spec['topologySpreadConstraints'], `${field}.topologySpreadConstraints`));
  errs.push(...validateWindowsHostProcessPod(spec, field, opts));
  const serviceAccountName = specServiceAccountName(spec);
  if (serviceAccountName.length > 0) errs.push(...nameErrors(serviceAccountName, `${field}.serviceAccountName`));
  const nodeName = str(spec['nodeName']);
  if (nodeName.length > 0) errs.push(...nameErrors(nodeName, `${field}.nodeName`));
  if (isSet(spec['activeDeadlineSeconds'])) {
    const v = num(spec['activeDeadlineSeconds']);
    if (v < 1 || v > INT32_MAX) errs.push(fieldErr.invalid(`${field}.activeDeadlineSeconds`, spec['activeDeadlineSeconds'], inclusiveRangeError(1, INT32_MAX)));
  }
  for (const k of ['hostname', 'subdomain'] as const) {
    const v = str(spec[k]);
    if (v.length > 0) errs.push(...validateDNS1123Label(v, `${field}.${k}`));
  }
  if (list(spec['tolerations']).length > 0) errs.push(...validateTolerations(spec['tolerations'], `${field}.tolerations`));
  if (list(spec['hostAliases']).length > 0) errs.push(...validateHostAliases(spec['hostAliases'], `${field}.hostAliases`));
  const priorityClassName = str(spec['priorityClassName']);
  if (priorityClassName.length > 0) errs.push(...nameErrors(priorityClassName, `${field}.priorityClassName`));
  if (isSet(spec['runtimeClassName'])) errs.push(...nameErrors(str(spec['runtimeClassName']), `${field}.runtimeClassName`));
  if (isSet(spec['preemptionPolicy'])) errs.push(...validatePreemptionPolicy(str(spec['preemptionPolicy']), `${field}.preemptionPolicy`));
  if (isSet(spec['overhead'])) errs.push(...validateOverhead(spec['overhead'], `${field}.overhead`, opts));
  if (isSet(spec['os'])) {
    const osErrs = validateOS(spec, `${field}.os`, opts);
    const os = str(asObject(spec['os'])?.['name']);
    if (osErrs.length > 0) errs.push(...osErrs);
    else if (os === 'linux') errs.push(...validateLinux(spec, field));
    else if (os === 'windows') errs.push(...validateWindows(spec, field));
  }
  return errs;
}

