/**
 * Pod and container security contexts as kube 1.24 validates them (pkg/apis/core/validation
 * ValidatePodSecurityContext, ValidateSecurityContext, validateSysctls, validateSeccompProfileField,
 * ValidateSeccompProfile, ValidateProcMountType, validateHostNetwork).
 */
import { type FieldError, fieldErr } from '../../../field-errors.js';
import { type JsonObject, asObject, bool, isSet, list, num, objects, str, strings } from './access.js';
import { isValidID } from './basic.js';
import { validateLocalDescendingPath } from './volume-paths.js';
import type { PodValidationOptions } from './pod-options.js';
import { validateWindowsSecurityContextOptions } from './windows.js';

/** Annotation values of the deprecated seccomp annotations (v1.SeccompProfile*). */
export const SECCOMP_RUNTIME_DEFAULT = 'runtime/default';
export const SECCOMP_DOCKER_DEFAULT = 'docker/default';
export const SECCOMP_UNCONFINED = 'unconfined';
export const SECCOMP_LOCALHOST_PREFIX = 'localhost/';
export const SECCOMP_POD_ANNOTATION = 'seccomp.security.alpha.kubernetes.io/pod';
export const SECCOMP_CONTAINER_ANNOTATION_PREFIX = 'container.seccomp.security.alpha.kubernetes.io/';

const SYSCTL_SEGMENT_FMT = '[a-z0-9]([-_a-z0-9]*[a-z0-9])?';
const SYSCTL_FMT = `(${SYSCTL_SEGMENT_FMT}\\.)*${SYSCTL_SEGMENT_FMT}`;
const SYSCTL_CONTAIN_SLASH_FMT = `(${SYSCTL_SEGMENT_FMT}[\\./])*${SYSCTL_SEGMENT_FMT}`;
const SYSCTL_MAX_LENGTH = 253;
const sysctlRe = new RegExp(`^${SYSCTL_FMT}$`);
const sysctlSlashRe = new RegExp(`^${SYSCTL_CONTAIN_SLASH_FMT}$`);

/** kube's `IsValidSysctlName`. */
export function isValidSysctlName(name: string, canContainSlash: boolean): boolean {
  if (name.length > SYSCTL_MAX_LENGTH) return false;
  return (canContainSlash ? sysctlSlashRe : sysctlRe).test(name);
}

/** kube's `validateSysctls`: named, well-formed, unique. */
export function validateSysctls(sysctls: unknown, field: string, allowSlash: boolean): FieldError[] {
  const errs: FieldError[] = [];
  const names = new Set<string>();
  objects(sysctls).forEach((s, i) => {
    const name = str(s['name']);
    const p = `${field}[${i}].name`;
    if (name.length === 0) errs.push(fieldErr.required(p));
    else if (!isValidSysctlName(name, allowSlash)) {
      errs.push(fieldErr.invalid(p, name, `must have at most ${SYSCTL_MAX_LENGTH} characters and match regex ${allowSlash ? SYSCTL_CONTAIN_SLASH_FMT : SYSCTL_FMT}`));
    } else if (names.has(name)) errs.push(fieldErr.duplicate(p, name));
    names.add(name);
  });
  return errs;
}

const SECCOMP_TYPES = ['Localhost', 'RuntimeDefault', 'Unconfined'];

/** kube's `validateSeccompProfileField`. */
export function validateSeccompProfileField(profile: unknown, field: string): FieldError[] {
  const sp = asObject(profile);
  if (!sp) return [];
  const errs: FieldError[] = [];
  const type = str(sp['type']);
  if (type === '') errs.push(fieldErr.required(`${field}.type`, 'type is required when seccompProfile is set'));
  else if (!SECCOMP_TYPES.includes(type)) errs.push(fieldErr.notSupported(`${field}.type`, type, SECCOMP_TYPES));
  if (type === 'Localhost') {
    if (!isSet(sp['localhostProfile'])) errs.push(fieldErr.required(`${field}.localhostProfile`, 'must be set when seccomp type is Localhost'));
    else errs.push(...validateLocalDescendingPath(str(sp['localhostProfile']), `${field}.localhostProfile`));
  } else if (isSet(sp['localhostProfile'])) {
    errs.push(fieldErr.invalid(`${field}.localhostProfile`, sp, 'can only be set when seccomp type is Localhost'));
  }
  return errs;
}

/** kube's `ValidateSeccompProfile`: an annotation's profile value. */
export function validateSeccompProfile(p: string, field: string): FieldError[] {
  if (p === SECCOMP_RUNTIME_DEFAULT || p === SECCOMP_DOCKER_DEFAULT || p === SECCOMP_UNCONFINED) return [];
  if (p.startsWith(SECCOMP_LOCALHOST_PREFIX)) return validateLocalDescendingPath(p.slice(SECCOMP_LOCALHOST_PREFIX.length), field);
  return [fieldErr.invalid(field, p, 'must be a valid seccomp profile')];
}

/** kube's `validateHostNetwork`: with hostNetwork, every containerPort equals its hostPort. */
export function validateHostNetwork(hostNetwork: boolean, containers: unknown, field: string): FieldError[] {
  if (!hostNetwork) return [];
  const errs: FieldError[] = [];
  objects(containers).forEach((c, i) => {
    objects(c['ports']).forEach((port, j) => {
      if (num(port['hostPort']) !== num(port['containerPort'])) {
        errs.push(fieldErr.invalid(`${field}[${i}].ports[${j}].containerPort`, port['containerPort'] ?? 0, 'must match `hostPort` when `hostNetwork` is true'));
      }
    });
  });
  return errs;
}

const FS_GROUP_CHANGE_POLICIES = ['Always', 'OnRootMismatch'];

/**
 * kube's `ValidatePodSecurityContext`. The v1 spec-level hostNetwork/hostPID/shareProcessNamespace
 * are part of the internal pod security context, which conversion always creates, so these
 * checks run even when `securityContext` is absent.
 */
export function validatePodSecurityContext(spec: JsonObject, specPath: string, opts: PodValidationOptions): FieldError[] {
  const field = `${specPath}.securityContext`;
  const sc = asObject(spec['securityContext']) ?? {};
  const errs = validateHostNetwork(bool(spec['hostNetwork']), spec['containers'], `${specPath}.containers`);
  for (const k of ['fsGroup', 'runAsUser', 'runAsGroup'] as const) {
    if (isSet(sc[k])) for (const m of isValidID(num(sc[k]))) errs.push(fieldErr.invalid(`${field}.${k}`, sc[k], m));
  }
  list(sc['supplementalGroups']).forEach((g, i) => {
    for (const m of isValidID(num(g))) errs.push(fieldErr.invalid(`${field}.supplementalGroups[${i}]`, g, m));
  });
  if (spec['shareProcessNamespace'] === true && bool(spec['hostPID'])) {
    errs.push(fieldErr.invalid(`${field}.shareProcessNamespace`, true, 'ShareProcessNamespace and HostPID cannot both be enabled'));
  }
  if (Array.isArray(sc['sysctls']) && sc['sysctls'].length > 0) errs.push(...validateSysctls(sc['sysctls'], `${field}.sysctls`, opts.allowSysctlRegexContainSlash));
  if (isSet(sc['fsGroupChangePolicy'])) {
    const policy = str(sc['fsGroupChangePolicy']);
    if (!FS_GROUP_CHANGE_POLICIES.includes(policy)) errs.push(fieldErr.notSupported(`${field}.fsGroupChangePolicy`, policy, FS_GROUP_CHANGE_POLICIES));
  }
  errs.push(...validateSeccompProfileField(sc['seccompProfile'], `${field}.seccompProfile`));
  errs.push(...validateWindowsSecurityContextOptions(sc['windowsOptions'], `${field}.windowsOptions`));
  return errs;
}

const PROC_MOUNT_TYPES = ['Default', 'Unmasked'];

/** kube's `ValidateSecurityContext` (a container's). */
export function validateSecurityContext(securityContext: unknown, field: string, opts: PodValidationOptions): FieldError[] {
  const sc = asObject(securityContext);
  if (!sc) return [];
  const errs: FieldError[] = [];
  if (sc['privileged'] === true && !opts.allowPrivileged) errs.push(fieldErr.forbidden(`${field}.privileged`, 'disallowed by cluster policy'));
  for (const k of ['runAsUser', 'runAsGroup'] as const) {
    if (isSet(sc[k])) for (const m of isValidID(num(sc[k]))) errs.push(fieldErr.invalid(`${field}.${k}`, sc[k], m));
  }
  if (isSet(sc['procMount'])) {
    const pm = str(sc['procMount']);
    if (!PROC_MOUNT_TYPES.includes(pm)) errs.push(fieldErr.notSupported(`${field}.procMount`, pm, PROC_MOUNT_TYPES));
  }
  errs.push(...validateSeccompProfileField(sc['seccompProfile'], `${field}.seccompProfile`));
  if (sc['allowPrivilegeEscalation'] === false) {
    // kube prints the whole security context (a Go struct of pointers) as the value.
    if (sc['privileged'] === true) errs.push(fieldErr.invalid(field, sc, 'cannot set `allowPrivilegeEscalation` to false and `privileged` to true'));
    for (const cap of strings(asObject(sc['capabilities'])?.['add'])) {
      if (cap === 'CAP_SYS_ADMIN') errs.push(fieldErr.invalid(field, sc, 'cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN'));
    }
  }
  errs.push(...validateWindowsSecurityContextOptions(sc['windowsOptions'], `${field}.windowsOptions`));
  return errs;
}
