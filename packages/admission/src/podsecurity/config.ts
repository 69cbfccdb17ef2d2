/**
 * The PodSecurity plugin's configuration (PSA 1.24's admission/api: PodSecurityConfiguration of
 * pod-security.admission.config.k8s.io/v1alpha1 or v1beta1): default levels and versions for
 * namespaces without labels, and the exempt usernames, namespaces and runtime classes. No
 * configuration means privileged:latest everywhere and no exemptions (the defaulted v1beta1).
 * A bad configuration throws: kube refuses to start with it.
 */
import { fieldErrorString, fieldErr, isDNS1123Label, isDNS1123Subdomain, type FieldError } from '@plinth/api';
import { parseLevel, parseVersion, type Policy } from './api.js';

export const PSA_CONFIG_API_VERSIONS: readonly string[] = ['pod-security.admission.config.k8s.io/v1alpha1', 'pod-security.admission.config.k8s.io/v1beta1'];

export interface PodSecurityConfig {
  defaults: Policy;
  exemptions: { usernames: ReadonlySet<string>; namespaces: ReadonlySet<string>; runtimeClasses: ReadonlySet<string> };
}

/** kube's InitPlugin wraps what ValidateInitialization finds so. */
const INIT_FAILED = 'failed to initialize admission plugin "PodSecurity": ';

/** kube's utilerrors Aggregate text: one error bare, several in brackets, repeats dropped. */
export function aggregate(texts: readonly string[]): string {
  const unique = [...new Set(texts)];
  return unique.length === 1 ? unique[0]! : `[${unique.join(', ')}]`;
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function stringField(o: Record<string, unknown>, key: string, path: string): string {
  const v = o[key];
  if (v === undefined || v === null) return '';
  if (typeof v !== 'string') throw new Error(`${path}.${key}: expected a string`);
  return v;
}

function stringList(o: Record<string, unknown>, key: string, path: string): string[] {
  const v = o[key];
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || v.some((s) => typeof s !== 'string')) throw new Error(`${path}.${key}: expected a list of strings`);
  return v as string[];
}

/** Exemption entries: each valid (as `check` says) and given once. */
function validateList(items: string[], path: string, check: (s: string) => string[]): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  items.forEach((item, i) => {
    const problems = check(item);
    if (problems.length > 0) errs.push(fieldErr.invalid(`${path}[${i}]`, item, problems.join(', ')));
    else if (seen.has(item)) errs.push(fieldErr.duplicate(`${path}[${i}]`, item));
    else seen.add(item);
  });
  return errs;
}

/** Reads, defaults and validates a configuration (undefined: none given). */
export function loadPodSecurityConfig(raw: Record<string, unknown> | undefined): PodSecurityConfig {
  const cfg = raw ?? { apiVersion: PSA_CONFIG_API_VERSIONS[1], kind: 'PodSecurityConfiguration' };
  if (cfg['kind'] !== 'PodSecurityConfiguration' || !PSA_CONFIG_API_VERSIONS.includes(String(cfg['apiVersion']))) {
    throw new Error(
      `couldn't init admission plugin "PodSecurity": expected kind PodSecurityConfiguration of apiVersion ${PSA_CONFIG_API_VERSIONS.join(' or ')}, got ${JSON.stringify(cfg['kind'])} of ${JSON.stringify(cfg['apiVersion'])}`,
    );
  }
  const d = isObj(cfg['defaults']) ? cfg['defaults'] : {};
  const e = isObj(cfg['exemptions']) ? cfg['exemptions'] : {};
  // Both versions default an unset level to privileged and an unset version to latest.
  const level = (key: string): string => stringField(d, key, 'defaults') || 'privileged';
  const version = (key: string): string => stringField(d, key, 'defaults') || 'latest';
  const given = {
    enforce: level('enforce'),
    'enforce-version': version('enforce-version'),
    audit: level('audit'),
    'audit-version': version('audit-version'),
    warn: level('warn'),
    'warn-version': version('warn-version'),
  };
  const usernames = stringList(e, 'usernames', 'exemptions');
  const namespaces = stringList(e, 'namespaces', 'exemptions');
  const runtimeClasses = stringList(e, 'runtimeClasses', 'exemptions');

  // PSA's CompleteConfiguration (ToPolicy) reads the defaults first; ValidateConfiguration then
  // checks the exemptions (its level/version errors cannot be reached after ToPolicy's).
  const policyErrs: string[] = [];
  for (const mode of ['enforce', 'audit', 'warn'] as const) {
    const l = parseLevel(given[mode]);
    if (l.error) policyErrs.push(`${mode}: ${l.error}`);
    const v = parseVersion(given[`${mode}-version`]);
    if (v.error) policyErrs.push(`${mode}-version: ${v.error}`);
  }
  if (policyErrs.length > 0) throw new Error(`${INIT_FAILED}PodSecurity configuration error: ${aggregate(policyErrs)}`);
  const errs: FieldError[] = [
    ...validateList(namespaces, 'exemptions.namespaces', isDNS1123Label),
    ...validateList(runtimeClasses, 'exemptions.runtimeClasses', isDNS1123Subdomain),
    ...validateList(usernames, 'exemptions.usernames', (u) => (u === '' ? ['username must not be empty'] : [])),
  ];
  if (errs.length > 0) throw new Error(`${INIT_FAILED}PodSecurity invalid: ${aggregate(errs.map(fieldErrorString))}`);
  const lv = (mode: 'enforce' | 'audit' | 'warn') => ({ level: parseLevel(given[mode]).level, version: parseVersion(given[`${mode}-version`]).version });
  return {
    defaults: { enforce: lv('enforce'), audit: lv('audit'), warn: lv('warn') },
    exemptions: { usernames: new Set(usernames), namespaces: new Set(namespaces), runtimeClasses: new Set(runtimeClasses) },
  };
}
