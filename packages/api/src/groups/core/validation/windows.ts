/**
 * Windows security options and the OS-specific pod rules of kube 1.24 (pkg/apis/core/validation
 * validateWindowsSecurityContextOptions, validateWindowsHostProcessPod, validateOS, validateLinux,
 * validateWindows).
 */
import { type FieldError, fieldErr } from '../../../field-errors.js';
import { type JsonObject, asObject, bool, isSet, list, str, visitContainersWithPath } from './access.js';
import { isDNS1123Subdomain } from '../../../validation.js';
import type { PodValidationOptions } from './pod-options.js';

const MAX_GMSA_CREDENTIAL_SPEC_KIB = 64;
const MAX_RUN_AS_USER_NAME_DOMAIN = 256;
const MAX_RUN_AS_USER_NAME_USER = 104;

// eslint-disable-next-line no-control-regex
const ctrlRe = /[\x00-\x1f\x7f]/;
const netBiosRe = /^[^\\/:*?"<>|.][^\\/:*?"<>|]{0,14}$/;
const dnsLabel = '[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?';
const windowsDomainDNSRe = new RegExp(`^${dnsLabel}(?:\\.${dnsLabel})*$`);
const invalidUserNameCharsRe = /["/\\:;|=,+*?<>@[\]]/;
const invalidUserNameDotsSpacesRe = /^[. ]+$/;

/** kube's `validateWindowsSecurityContextOptions`. */
export function validateWindowsSecurityContextOptions(options: unknown, field: string): FieldError[] {
  const wo = asObject(options);
  if (!wo) return [];
  const errs: FieldError[] = [];
  if (isSet(wo['gmsaCredentialSpecName'])) {
    const name = str(wo['gmsaCredentialSpecName']);
    for (const m of isDNS1123Subdomain(name)) errs.push(fieldErr.invalid(`${field}.gmsaCredentialSpecName`, name, m));
  }
  if (isSet(wo['gmsaCredentialSpec'])) {
    const spec = str(wo['gmsaCredentialSpec']);
    const len = Buffer.byteLength(spec);
    if (len === 0) errs.push(fieldErr.invalid(`${field}.gmsaCredentialSpec`, spec, 'gmsaCredentialSpec cannot be an empty string'));
    else if (len > MAX_GMSA_CREDENTIAL_SPEC_KIB * 1024) {
      errs.push(fieldErr.invalid(`${field}.gmsaCredentialSpec`, spec, `gmsaCredentialSpec size must be under ${MAX_GMSA_CREDENTIAL_SPEC_KIB} KiB`));
    }
  }
  if (isSet(wo['runAsUserName'])) errs.push(...validateRunAsUserName(str(wo['runAsUserName']), `${field}.runAsUserName`));
  return errs;
}

function validateRunAsUserName(name: string, field: string): FieldError[] {
  const bad = (m: string): FieldError => fieldErr.invalid(field, name, m);
  if (name.length === 0) return [bad('runAsUserName cannot be an empty string')];
  if (ctrlRe.test(name)) return [bad('runAsUserName cannot contain control characters')];
  const parts = name.split('\\');
  if (parts.length > 2) return [bad('runAsUserName cannot contain more than one backslash')];
  const errs: FieldError[] = [];
  const hasDomain = parts.length === 2;
  const domain = hasDomain ? parts[0]! : '';
  const user = hasDomain ? parts[1]! : parts[0]!;
  if (Buffer.byteLength(domain) >= MAX_RUN_AS_USER_NAME_DOMAIN) errs.push(bad(`runAsUserName's Domain length must be under ${MAX_RUN_AS_USER_NAME_DOMAIN} characters`));
  if (hasDomain && !(netBiosRe.test(domain) || windowsDomainDNSRe.test(domain))) errs.push(bad("runAsUserName's Domain doesn't match the NetBios nor the DNS format"));
  const userLen = Buffer.byteLength(user);
  if (userLen === 0) errs.push(bad("runAsUserName's User cannot be empty"));
  else if (userLen > MAX_RUN_AS_USER_NAME_USER) errs.push(bad(`runAsUserName's User length must not be longer than ${MAX_RUN_AS_USER_NAME_USER} characters`));
  if (invalidUserNameDotsSpacesRe.test(user)) errs.push(bad("runAsUserName's User cannot contain only periods or spaces"));
  if (invalidUserNameCharsRe.test(user)) errs.push(bad('runAsUserName\'s User cannot contain the following characters: "/\\:;|=,+*?<>@[]'));
  return errs;
}

function hostProcess(sc: unknown): boolean | undefined {
  const v = asObject(asObject(sc)?.['windowsOptions'])?.['hostProcess'];
  return typeof v === 'boolean' ? v : undefined;
}

/** kube's `validateWindowsHostProcessPod`: all-or-none hostProcess containers, with hostNetwork. */
export function validateWindowsHostProcessPod(spec: JsonObject, specPath: string, opts: PodValidationOptions): FieldError[] {
  const gateMsg = "not allowed when feature gate 'WindowsHostProcessContainers' is not enabled";
  const podHostProcess = hostProcess(spec['securityContext']);
  if (!opts.allowWindowsHostProcessField && podHostProcess !== undefined) {
    return [fieldErr.forbidden(`${specPath}.securityContext.windowsOptions.hostProcess`, gateMsg)];
  }
  const errs: FieldError[] = [];
  let containerCount = 0;
  let hostProcessCount = 0;
  visitContainersWithPath(spec, specPath, (c, path) => {
    containerCount++;
    const own = hostProcess(c['securityContext']);
    const p = `${path}.securityContext.windowsOptions.hostProcess`;
    if (!opts.allowWindowsHostProcessField && own !== undefined) errs.push(fieldErr.forbidden(p, gateMsg));
    if (podHostProcess !== undefined && own !== undefined && podHostProcess !== own) {
      errs.push(fieldErr.invalid(p, own, `pod hostProcess value must be identical if both are specified, was ${podHostProcess}`));
    }
    if (own === true || (own === undefined && podHostProcess === true)) hostProcessCount++;
  });
  if (hostProcessCount > 0) {
    if (!opts.allowWindowsHostProcessField) {
      errs.push(fieldErr.forbidden(specPath, "pod must not contain Windows hostProcess containers when feature gate 'WindowsHostProcessContainers' is not enabled"));
      return errs;
    }
    if (hostProcessCount !== containerCount) errs.push(fieldErr.invalid(specPath, '', 'If pod contains any hostProcess containers then all containers must be HostProcess containers'));
    if (!bool(spec['hostNetwork'])) errs.push(fieldErr.invalid(`${specPath}.hostNetwork`, false, 'hostNetwork must be true if pod contains any hostProcess containers'));
    if (!opts.allowPrivileged) errs.push(fieldErr.forbidden(specPath, 'hostProcess containers are disallowed by cluster policy'));
  }
  return errs;
}

const VALID_OS = ['linux', 'windows'];

/** kube's `validateOS`. */
export function validateOS(spec: JsonObject, field: string, opts: PodValidationOptions): FieldError[] {
  const os = asObject(spec['os']);
  if (!os) return [];
  if (!opts.allowOSField) return [fieldErr.forbidden(field, 'cannot be set when IdentifyPodOS feature is not enabled')];
  const name = str(os['name']);
  if (name.length === 0) return [fieldErr.required(`${field}.name`, 'cannot be empty')];
  return VALID_OS.includes(name) ? [] : [fieldErr.notSupported(field, name, VALID_OS)];
}

/** kube's `validateLinux`: no Windows options anywhere. */
export function validateLinux(spec: JsonObject, specPath: string): FieldError[] {
  const errs: FieldError[] = [];
  const msg = 'windows options cannot be set for a linux pod';
  if (isSet(asObject(spec['securityContext'])?.['windowsOptions'])) errs.push(fieldErr.forbidden(`${specPath}.securityContext.windowsOptions`, msg));
  visitContainersWithPath(spec, specPath, (c, path) => {
    if (isSet(asObject(c['securityContext'])?.['windowsOptions'])) errs.push(fieldErr.forbidden(`${path}.securityContext.windowsOptions`, msg));
  });
  return errs;
}

/** kube's `validateWindows`: none of the Linux-only security settings. */
export function validateWindows(spec: JsonObject, specPath: string): FieldError[] {
  const errs: FieldError[] = [];
  const msg = 'cannot be set for a windows pod';
  const sc = asObject(spec['securityContext']) ?? {};
  const scPath = `${specPath}.securityContext`;
  if (isSet(sc['seLinuxOptions'])) errs.push(fieldErr.forbidden(`${scPath}.seLinuxOptions`, msg));
  if (bool(spec['hostPID'])) errs.push(fieldErr.forbidden(`${specPath}.hostPID`, msg));
  if (bool(spec['hostIPC'])) errs.push(fieldErr.forbidden(`${specPath}.hostIPC`, msg));
  if (isSet(sc['seccompProfile'])) errs.push(fieldErr.forbidden(`${scPath}.seccompProfile`, msg));
  if (isSet(sc['fsGroup'])) errs.push(fieldErr.forbidden(`${scPath}.fsGroup`, msg));
  if (isSet(sc['fsGroupChangePolicy'])) errs.push(fieldErr.forbidden(`${scPath}.fsGroupChangePolicy`, msg));
  if (list(sc['sysctls']).length > 0) errs.push(fieldErr.forbidden(`${scPath}.sysctls`, msg));
  if (isSet(spec['shareProcessNamespace'])) errs.push(fieldErr.forbidden(`${specPath}.shareProcessNamespace`, msg));
  if (isSet(sc['runAsUser'])) errs.push(fieldErr.forbidden(`${scPath}.runAsUser`, msg));
  if (isSet(sc['runAsGroup'])) errs.push(fieldErr.forbidden(`${scPath}.runAsGroup`, msg));
  if (isSet(sc['supplementalGroups'])) errs.push(fieldErr.forbidden(`${scPath}.supplementalGroups`, msg));
  visitContainersWithPath(spec, specPath, (c, path) => {
    const csc = asObject(c['securityContext']);
    if (!csc) return;
    const p = `${path}.securityContext`;
    for (const k of ['seLinuxOptions', 'seccompProfile', 'capabilities', 'readOnlyRootFilesystem', 'privileged', 'allowPrivilegeEscalation', 'procMount', 'runAsUser', 'runAsGroup']) {
      if (isSet(csc[k])) errs.push(fieldErr.forbidden(`${p}.${k}`, msg));
    }
  });
  return errs;
}
