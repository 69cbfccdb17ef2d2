/**
 * What admissionregistration.k8s.io/v1's two webhook configurations share: defaults
 * (pkg/apis/admissionregistration/v1/defaults.go), validation
 * (pkg/apis/admissionregistration/validation, k8s.io/apiserver/pkg/util/webhook/validation.go)
 * and the printer, as kube-apiserver 1.24 has them.
 */
import { isDeepStrictEqual } from 'node:util';
import { type FieldError, fieldErr, goStringSlice } from '../../field-errors.js';
import { age, ageColumn, col, countOf, nameColumn, type TableDefinition } from '../../tables.js';
import { type StoredObject, isPlainObject } from '../../types.js';
import { isDNS1123Subdomain } from '../../validation.js';
import { validateLabelSelector } from '../rbac/shared.js';

export const ADMISSIONREGISTRATION_GROUP = 'admissionregistration.k8s.io';

/** The AdmissionReview versions this server can send (kube's AcceptedAdmissionReviewVersions). */
export const ACCEPTED_ADMISSION_REVIEW_VERSIONS: readonly string[] = ['v1', 'v1beta1'];

// ---------------------------------------------------------------------------------------------
// Helpers for reading decoded JSON defensively
// ---------------------------------------------------------------------------------------------

function rec(v: unknown): Record<string, unknown> {
  return isPlainObject(v) ? v : {};
}

function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

function strings(v: unknown): string[] {
  return Array.isArray(v) ? v.map((x) => str(x)) : [];
}

function list(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

// ---------------------------------------------------------------------------------------------
// Defaults (SetDefaults_{Mutating,Validating}Webhook, SetDefaults_Rule, SetDefaults_ServiceReference)
// ---------------------------------------------------------------------------------------------

function defaultWebhook(hook: Record<string, unknown>, mutating: boolean): void {
  if (hook['failurePolicy'] === undefined || hook['failurePolicy'] === null) hook['failurePolicy'] = 'Fail';
  if (hook['matchPolicy'] === undefined || hook['matchPolicy'] === null) hook['matchPolicy'] = 'Equivalent';
  if (!isPlainObject(hook['namespaceSelector'])) hook['namespaceSelector'] = {};
  if (!isPlainObject(hook['objectSelector'])) hook['objectSelector'] = {};
  if (hook['timeoutSeconds'] === undefined || hook['timeoutSeconds'] === null) hook['timeoutSeconds'] = 10;
  if (mutating && (hook['reinvocationPolicy'] === undefined || hook['reinvocationPolicy'] === null)) hook['reinvocationPolicy'] = 'Never';
  for (const rule of list(hook['rules'])) {
    if (isPlainObject(rule) && (rule['scope'] === undefined || rule['scope'] === null)) rule['scope'] = '*';
  }
  const service = rec(rec(hook['clientConfig'])['service']);
  if (isPlainObject(rec(hook['clientConfig'])['service']) && (service['port'] === undefined || service['port'] === null)) service['port'] = 443;
}

export function defaultConfiguration(obj: StoredObject, mutating: boolean): void {
  for (const hook of list(obj['webhooks'])) if (isPlainObject(hook)) defaultWebhook(hook, mutating);
}

// ---------------------------------------------------------------------------------------------
// Validation
// ---------------------------------------------------------------------------------------------

const DNS1035_LABEL_FMT = '[a-z]([-a-z0-9]*[a-z0-9])?';
const dns1035LabelRe = new RegExp(`^${DNS1035_LABEL_FMT}$`);

/** apimachinery's `IsDNS1035Label`. */
export function isDNS1035Label(value: string): string[] {
  const errs: string[] = [];
  if (value.length > 63) errs.push('must be no more than 63 characters');
  if (!dns1035LabelRe.test(value)) {
    errs.push(
      `a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '${DNS1035_LABEL_FMT}')`,
    );
  }
  return errs;
}

/** apimachinery's `IsFullyQualifiedName`. */
function validateFullyQualifiedName(name: string, path: string): FieldError[] {
  if (name === '') return [fieldErr.required(path)];
  const errs = isDNS1123Subdomain(name);
  if (errs.length > 0) return [fieldErr.invalid(path, name, errs.join(','))];
  if (name.split('.').length < 3) return [fieldErr.invalid(path, name, 'should be a domain with at least three segments separated by dots')];
  return [];
}

const hasWildcard = (items: string[]): boolean => items.includes('*');

/** kube's `validateResources` (rules allow sub-resources). */
function validateResources(resources: string[], path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (resources.length === 0) errs.push(fieldErr.required(path));
  const resWithWildcardSub = new Set<string>();
  const subWithWildcardRes = new Set<string>();
  let hasDoubleWildcard = false;
  let hasSingleWildcard = false;
  let hasResourceWithoutSubresource = false;
  resources.forEach((resSub, i) => {
    if (resSub === '') {
      errs.push(fieldErr.required(`${path}[${i}]`));
      return;
    }
    if (resSub === '*/*') hasDoubleWildcard = true;
    if (resSub === '*') hasSingleWildcard = true;
    const slash = resSub.indexOf('/');
    if (slash < 0) {
      // kube assigns (not ORs) here: only the last plain entry decides.
      hasResourceWithoutSubresource = resSub !== '*';
      return;
    }
    const res = resSub.slice(0, slash);
    const sub = resSub.slice(slash + 1);
    if (resWithWildcardSub.has(res)) errs.push(fieldErr.invalid(`${path}[${i}]`, resSub, `if '${res}/*' is present, must not specify ${resSub}`));
    if (subWithWildcardRes.has(sub)) errs.push(fieldErr.invalid(`${path}[${i}]`, resSub, `if '*/${sub}' is present, must not specify ${resSub}`));
    if (sub === '*') resWithWildcardSub.add(res);
    if (res === '*') subWithWildcardRes.add(sub);
  });
  if (resources.length > 1 && hasDoubleWildcard) errs.push(fieldErr.invalid(path, goStringSlice(resources), "if '*/*' is present, must not specify other resources"));
  if (hasSingleWildcard && hasResourceWithoutSubresource) errs.push(fieldErr.invalid(path, goStringSlice(resources), "if '*' is present, must not specify other resources without subresources"));
  return errs;
}

const SCOPES = ['*', 'Cluster', 'Namespaced'];
const OPERATIONS = ['*', 'CONNECT', 'CREATE', 'DELETE', 'UPDATE'];

/** kube's `validateRuleWithOperations` + `validateRule`. */
function validateRule(rule: Record<string, unknown>, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const operations = strings(rule['operations']);
  if (operations.length === 0) errs.push(fieldErr.required(`${path}.operations`));
  if (operations.length > 1 && hasWildcard(operations)) errs.push(fieldErr.invalid(`${path}.operations`, goStringSlice(operations, 'admissionregistration.OperationType'), "if '*' is present, must not specify other operations"));
  operations.forEach((op, i) => {
    if (!OPERATIONS.includes(op)) errs.push(fieldErr.notSupported(`${path}.operations[${i}]`, op, OPERATIONS));
  });
  const groups = strings(rule['apiGroups']);
  if (groups.length === 0) errs.push(fieldErr.required(`${path}.apiGroups`));
  if (groups.length > 1 && hasWildcard(groups)) errs.push(fieldErr.invalid(`${path}.apiGroups`, goStringSlice(groups), "if '*' is present, must not specify other API groups"));
  const versions = strings(rule['apiVersions']);
  if (versions.length === 0) errs.push(fieldErr.required(`${path}.apiVersions`));
  if (versions.length > 1 && hasWildcard(versions)) errs.push(fieldErr.invalid(`${path}.apiVersions`, goStringSlice(versions), "if '*' is present, must not specify other API versions"));
  versions.forEach((v, i) => {
    if (v === '') errs.push(fieldErr.required(`${path}.apiVersions[${i}]`));
  });
  errs.push(...validateResources(strings(rule['resources']), `${path}.resources`));
  const scope = rule['scope'];
  if (scope !== undefined && scope !== null && !SCOPES.includes(str(scope))) errs.push(fieldErr.notSupported(`${path}.scope`, scope, SCOPES));
  return errs;
}

/** The parts of a URL kube's `ValidateWebhookURL` looks at, split as Go's url.Parse splits them. */
export function splitURL(url: string): { scheme: string; user: string | undefined; host: string; query: string; fragment: string } {
  let rest = url;
  let fragment = '';
  const hash = rest.indexOf('#');
  if (hash >= 0) {
    fragment = rest.slice(hash + 1);
    rest = rest.slice(0, hash);
  }
  let scheme = '';
  const m = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(rest);
  if (m) {
    scheme = m[1]!.toLowerCase();
    rest = rest.slice(m[0].length);
  }
  let query = '';
  const q = rest.indexOf('?');
  if (q >= 0) {
    query = rest.slice(q + 1);
    rest = rest.slice(0, q);
  }
  let host = '';
  let user: string | undefined;
  if (rest.startsWith('//')) {
    const authority = rest.slice(2).split('/')[0]!;
    const at = authority.lastIndexOf('@');
    if (at >= 0) {
      user = authority.slice(0, at);
      host = authority.slice(at + 1);
    } else {
      host = authority;
    }
  }
  return { scheme, user, host, query, fragment };
}

/** kube's `ValidateWebhookURL(path, url, forceHttps=true)`. */
export function validateWebhookURL(url: string, path: string): FieldError[] {
  const form = '; desired format: https://host[/path]';
  const errs: FieldError[] = [];
  const u = splitURL(url);
  if (u.scheme !== 'https') errs.push(fieldErr.invalid(path, u.scheme, `'https' is the only allowed URL scheme${form}`));
  if (u.host === '') errs.push(fieldErr.invalid(path, u.host, `host must be provided${form}`));
  if (u.user !== undefined) {
    // Go prints user:password; the password never reaches a message here (url.Redacted's form).
    const colon = u.user.indexOf(':');
    errs.push(fieldErr.invalid(path, colon >= 0 ? `${u.user.slice(0, colon)}:xxxxx` : u.user, 'user information is not permitted in the URL'));
  }
  if (u.fragment !== '') errs.push(fieldErr.invalid(path, u.fragment, 'fragments are not permitted in the URL'));
  if (u.query !== '') errs.push(fieldErr.invalid(path, u.query, 'query parameters are not permitted in the URL'));
  return errs;
}

/**
 * kube's `ValidateWebhookService`. kube calls it with name and namespace swapped
 * (`ValidateWebhookService(path, cc.Service.Name, cc.Service.Namespace, ...)` against a
 * `(namespace, name)` signature), so a missing name is reported as the namespace and vice versa;
 * kept, since clients see these messages.
 */
export function validateWebhookService(service: Record<string, unknown>, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (str(service['namespace']) === '') errs.push(fieldErr.required(`${path}.name`, 'service name is required'));
  if (str(service['name']) === '') errs.push(fieldErr.required(`${path}.namespace`, 'service namespace is required'));
  const port = typeof service['port'] === 'number' ? service['port'] : 443;
  if (!(Number.isInteger(port) && port >= 1 && port <= 65535)) {
    errs.push(fieldErr.invalid(`${path}.port`, port, 'port is not valid: must be between 1 and 65535, inclusive'));
  }
  if (typeof service['path'] !== 'string') return errs;
  const urlPath = service['path'];
  if (urlPath === '/' || urlPath === '') return errs;
  if (urlPath === '//') return [...errs, fieldErr.invalid(`${path}.path`, urlPath, 'segment[0] may not be empty')];
  if (!urlPath.startsWith('/')) errs.push(fieldErr.invalid(`${path}.path`, urlPath, "must start with a '/'"));
  let toCheck = urlPath.slice(1);
  if (toCheck.endsWith('/')) toCheck = toCheck.slice(0, -1);
  toCheck.split('/').forEach((step, i) => {
    if (step === '') {
      errs.push(fieldErr.invalid(`${path}.path`, urlPath, `segment[${i}] may not be empty`));
      return;
    }
    for (const f of isDNS1123Subdomain(step)) errs.push(fieldErr.invalid(`${path}.path`, urlPath, `segment[${i}]: ${f}`));
  });
  return errs;
}

/** kube's `validateAdmissionReviewVersions` (a recognized version required). */
function validateAdmissionReviewVersions(versions: string[], path: string): FieldError[] {
  const accepted = ACCEPTED_ADMISSION_REVIEW_VERSIONS.join(', ');
  if (versions.length < 1) return [fieldErr.required(path, `must specify one of ${accepted}`)];
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  let hasAccepted = false;
  versions.forEach((v, i) => {
    if (seen.has(v)) {
      errs.push(fieldErr.invalid(`${path}[${i}]`, v, 'duplicate version'));
      return;
    }
    seen.add(v);
    for (const m of isDNS1035Label(v)) errs.push(fieldErr.invalid(`${path}[${i}]`, v, m));
    if (ACCEPTED_ADMISSION_REVIEW_VERSIONS.includes(v)) hasAccepted = true;
  });
  if (!hasAccepted) errs.push(fieldErr.invalid(path, goStringSlice(versions), `must include at least one of ${accepted}`));
  return errs;
}

const FAILURE_POLICIES = ['Fail', 'Ignore'];
const MATCH_POLICIES = ['Equivalent', 'Exact'];
const NO_SIDE_EFFECTS = ['None', 'NoneOnDryRun'];
const REINVOCATION_POLICIES = ['IfNeeded', 'Never'];

/** kube's `validate{Mutating,Validating}Webhook`. */
function validateWebhook(hook: Record<string, unknown>, mutating: boolean, path: string): FieldError[] {
  const errs: FieldError[] = [...validateFullyQualifiedName(str(hook['name']), `${path}.name`)];
  list(hook['rules']).forEach((r, i) => errs.push(...validateRule(rec(r), `${path}.rules[${i}]`)));
  const present = (k: string): boolean => hook[k] !== undefined && hook[k] !== null;
  if (present('failurePolicy') && !FAILURE_POLICIES.includes(str(hook['failurePolicy']))) {
    errs.push(fieldErr.notSupported(`${path}.failurePolicy`, hook['failurePolicy'], FAILURE_POLICIES));
  }
  if (present('matchPolicy') && !MATCH_POLICIES.includes(str(hook['matchPolicy']))) {
    errs.push(fieldErr.notSupported(`${path}.matchPolicy`, hook['matchPolicy'], MATCH_POLICIES));
  }
  if (!present('sideEffects')) errs.push(fieldErr.required(`${path}.sideEffects`, `must specify one of ${NO_SIDE_EFFECTS.join(', ')}`));
  else if (!NO_SIDE_EFFECTS.includes(str(hook['sideEffects']))) errs.push(fieldErr.notSupported(`${path}.sideEffects`, hook['sideEffects'], NO_SIDE_EFFECTS));
  const timeout = hook['timeoutSeconds'];
  if (typeof timeout === 'number' && (timeout > 30 || timeout < 1)) {
    errs.push(fieldErr.invalid(`${path}.timeoutSeconds`, timeout, 'the timeout value must be between 1 and 30 seconds'));
  }
  if (isPlainObject(hook['namespaceSelector'])) errs.push(...validateLabelSelector(hook['namespaceSelector'], `${path}.namespaceSelector`));
  if (isPlainObject(hook['objectSelector'])) errs.push(...validateLabelSelector(hook['objectSelector'], `${path}.objectSelector`));
  if (mutating && present('reinvocationPolicy') && !REINVOCATION_POLICIES.includes(str(hook['reinvocationPolicy']))) {
    errs.push(fieldErr.notSupported(`${path}.reinvocationPolicy`, hook['reinvocationPolicy'], REINVOCATION_POLICIES));
  }
  const cc = rec(hook['clientConfig']);
  const hasURL = typeof cc['url'] === 'string';
  const hasService = isPlainObject(cc['service']);
  if (hasURL === hasService) errs.push(fieldErr.required(`${path}.clientConfig`, 'exactly one of url or service is required'));
  else if (hasURL) errs.push(...validateWebhookURL(str(cc['url']), `${path}.clientConfig.url`));
  else errs.push(...validateWebhookService(rec(cc['service']), `${path}.clientConfig.service`));
  return errs;
}

/** kube's `Validate{Mutating,Validating}WebhookConfiguration` past the object metadata. */
export function validateConfiguration(obj: StoredObject, mutating: boolean): FieldError[] {
  const errs: FieldError[] = [];
  const names = new Set<string>();
  list(obj['webhooks']).forEach((h, i) => {
    const hook = rec(h);
    const path = `webhooks[${i}]`;
    errs.push(...validateWebhook(hook, mutating, path));
    errs.push(...validateAdmissionReviewVersions(strings(hook['admissionReviewVersions']), `${path}.admissionReviewVersions`));
    const name = str(hook['name']);
    if (name !== '') {
      if (names.has(name)) errs.push(fieldErr.duplicate(`${path}.name`, name));
      else names.add(name);
    }
  });
  return errs;
}

/** kube's printers for Mutating/ValidatingWebhookConfiguration: NAME, WEBHOOKS (how many), AGE. */
/**
 * kube's webhook configuration strategies count generations: 1 on create, +1 on an update that
 * changes `webhooks` (reflect.DeepEqual on the defaulted lists).
 */
export const webhookConfigurationGeneration = {
  prepareForCreate(obj: StoredObject): void {
    obj.metadata.generation = 1;
  },
  prepareForUpdate(obj: StoredObject, old: StoredObject): void {
    if (!isDeepStrictEqual(obj['webhooks'], old['webhooks'])) obj.metadata.generation = (old.metadata.generation ?? 0) + 1;
  },
};

export const webhookConfigurationTable: TableDefinition = {
  columns: [nameColumn, col('Webhooks', 'integer', 'The number of webhooks in the configuration.'), ageColumn],
  cells: (obj, now) => [obj.metadata.name ?? '', countOf(obj['webhooks']), age(obj, now)],
};
