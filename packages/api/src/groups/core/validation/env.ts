/**
 * Container environment as kube 1.24 validates it (ValidateEnv, validateEnvVarValueFrom,
 * validateObjectFieldSelector, validateContainerResourceFieldSelector, ValidateEnvFrom, the
 * key selectors), and the downward API field paths shared with downwardAPI volumes.
 */
import { type FieldError, fieldErr } from '../../../field-errors.js';
import { isQualifiedName, nameIsDNSSubdomain } from '../../../validation.js';
import { type JsonObject, asObject, objects, str } from './access.js';
import { isConfigMapKey, isEnvVarName } from './basic.js';
import type { PodValidationOptions } from './pod-options.js';
import { validateContainerResourceDivisor } from './quantities.js';

/** Field paths an env var's fieldRef may name. */
export const ENV_DOWNWARD_API_FIELD_PATHS = [
  'metadata.name',
  'metadata.namespace',
  'metadata.uid',
  'spec.nodeName',
  'spec.serviceAccountName',
  'status.hostIP',
  'status.podIP',
  'status.podIPs',
];

/** Field paths a downwardAPI volume file's fieldRef may name. */
export const VOLUME_DOWNWARD_API_FIELD_PATHS = ['metadata.name', 'metadata.namespace', 'metadata.labels', 'metadata.annotations', 'metadata.uid'];

/** Resources a resourceFieldRef may name (hugepages by prefix). */
export const CONTAINER_RESOURCE_FIELD_PATHS = ['limits.cpu', 'limits.memory', 'limits.ephemeral-storage', 'requests.cpu', 'requests.memory', 'requests.ephemeral-storage'];
const HUGEPAGES_PREFIXES = ['requests.hugepages-', 'limits.hugepages-'];

const sorted = (xs: string[]): string[] => [...xs].sort();

/** pkg/fieldpath `SplitMaybeSubscriptedPath`: `metadata.labels['key']` → path and subscript. */
export function splitMaybeSubscriptedPath(fieldPath: string): { path: string; subscript: string; ok: boolean } {
  if (!fieldPath.endsWith("']")) return { path: fieldPath, subscript: '', ok: false };
  const s = fieldPath.slice(0, -2);
  const at = s.indexOf("['");
  if (at <= 0) return { path: fieldPath, subscript: '', ok: false };
  return { path: s.slice(0, at), subscript: s.slice(at + 2), ok: true };
}

const CONVERTIBLE_POD_FIELD_LABELS = new Set([
  'metadata.annotations',
  'metadata.labels',
  'metadata.name',
  'metadata.namespace',
  'metadata.uid',
  'spec.nodeName',
  'spec.restartPolicy',
  'spec.serviceAccountName',
  'spec.schedulerName',
  'status.phase',
  'status.hostIP',
  'status.podIP',
  'status.podIPs',
]);

/** pkg/apis/core/pods `ConvertDownwardAPIFieldLabel`: the internal field path, or an error text. */
export function convertDownwardAPIFieldLabel(version: string, label: string): { label: string } | { error: string } {
  if (version !== 'v1') return { error: `unsupported pod version: ${version}` };
  const split = splitMaybeSubscriptedPath(label);
  if (split.ok) {
    return split.path === 'metadata.annotations' || split.path === 'metadata.labels' ? { label } : { error: `field label does not support subscript: ${label}` };
  }
  if (CONVERTIBLE_POD_FIELD_LABELS.has(label)) return { label };
  if (label === 'spec.host') return { label: 'spec.nodeName' };
  return { error: `field label not supported: ${label}` };
}

/** kube's `validateObjectFieldSelector`. */
export function validateObjectFieldSelector(selector: JsonObject, expressions: string[], field: string): FieldError[] {
  const apiVersion = str(selector['apiVersion']);
  if (apiVersion.length === 0) return [fieldErr.required(`${field}.apiVersion`)];
  const fieldPath = str(selector['fieldPath']);
  if (fieldPath.length === 0) return [fieldErr.required(`${field}.fieldPath`)];
  const converted = convertDownwardAPIFieldLabel(apiVersion, fieldPath);
  if ('error' in converted) return [fieldErr.invalid(`${field}.fieldPath`, fieldPath, `error converting fieldPath: ${converted.error}`)];
  const { path, subscript, ok } = splitMaybeSubscriptedPath(converted.label);
  if (ok) {
    if (path === 'metadata.annotations') return isQualifiedName(subscript.toLowerCase()).map((m) => fieldErr.invalid(field, subscript, m));
    if (path === 'metadata.labels') return isQualifiedName(subscript).map((m) => fieldErr.invalid(field, subscript, m));
    return [fieldErr.invalid(field, path, 'does not support subscript')];
  }
  return expressions.includes(path) ? [] : [fieldErr.notSupported(`${field}.fieldPath`, path, sorted(expressions))];
}

/** kube's `validateContainerResourceFieldSelector`; `volume` requires a containerName. */
export function validateContainerResourceFieldSelector(selector: JsonObject, field: string, volume: boolean, opts: PodValidationOptions): FieldError[] {
  const errs: FieldError[] = [];
  const resource = str(selector['resource']);
  if (volume && str(selector['containerName']).length === 0) errs.push(fieldErr.required(`${field}.containerName`));
  else if (resource.length === 0) errs.push(fieldErr.required(`${field}.resource`));
  else if (!CONTAINER_RESOURCE_FIELD_PATHS.includes(resource)) {
    const prefixes = opts.allowDownwardAPIHugePages ? HUGEPAGES_PREFIXES : [];
    if (!prefixes.some((p) => resource.startsWith(p))) errs.push(fieldErr.notSupported(`${field}.resource`, resource, sorted(CONTAINER_RESOURCE_FIELD_PATHS)));
  }
  errs.push(...validateContainerResourceDivisor(resource, selector['divisor'], field));
  return errs;
}

/** kube's `validateConfigMapKeySelector` / `validateSecretKeySelector` (both name checks are DNS subdomains). */
function validateKeySelector(selector: JsonObject, field: string): FieldError[] {
  const name = str(selector['name']);
  const errs = nameIsDNSSubdomain(name, false).map((m) => fieldErr.invalid(`${field}.name`, name, m));
  const key = str(selector['key']);
  if (key.length === 0) errs.push(fieldErr.required(`${field}.key`));
  else errs.push(...isConfigMapKey(key).map((m) => fieldErr.invalid(`${field}.key`, key, m)));
  return errs;
}

function validateEnvVarValueFrom(ev: JsonObject, field: string, opts: PodValidationOptions): FieldError[] {
  const from = asObject(ev['valueFrom']);
  if (!from) return [];
  const errs: FieldError[] = [];
  let sources = 0;
  const fieldRef = asObject(from['fieldRef']);
  if (fieldRef) {
    sources++;
    errs.push(...validateObjectFieldSelector(fieldRef, ENV_DOWNWARD_API_FIELD_PATHS, `${field}.fieldRef`));
  }
  const resourceFieldRef = asObject(from['resourceFieldRef']);
  if (resourceFieldRef) {
    sources++;
    errs.push(...validateContainerResourceFieldSelector(resourceFieldRef, `${field}.resourceFieldRef`, false, opts));
  }
  const configMapKeyRef = asObject(from['configMapKeyRef']);
  if (configMapKeyRef) {
    sources++;
    errs.push(...validateKeySelector(configMapKeyRef, `${field}.configMapKeyRef`));
  }
  const secretKeyRef = asObject(from['secretKeyRef']);
  if (secretKeyRef) {
    sources++;
    errs.push(...validateKeySelector(secretKeyRef, `${field}.secretKeyRef`));
  }
  if (sources === 0) errs.push(fieldErr.invalid(field, '', 'must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`'));
  else if (str(ev['value']).length !== 0) errs.push(fieldErr.invalid(field, '', 'may not be specified when `value` is not empty'));
  else if (sources > 1) errs.push(fieldErr.invalid(field, '', 'may not have more than one field specified at a time'));
  return errs;
}

/** kube's `ValidateEnv`. */
export function validateEnv(vars: unknown, field: string, opts: PodValidationOptions): FieldError[] {
  const errs: FieldError[] = [];
  objects(vars).forEach((ev, i) => {
    const p = `${field}[${i}]`;
    const name = str(ev['name']);
    if (name.length === 0) errs.push(fieldErr.required(`${p}.name`));
    else errs.push(...isEnvVarName(name).map((m) => fieldErr.invalid(`${p}.name`, name, m)));
    errs.push(...validateEnvVarValueFrom(ev, `${p}.valueFrom`, opts));
  });
  return errs;
}

function validateEnvSourceName(ref: JsonObject, field: string): FieldError[] {
  const name = str(ref['name']);
  if (name.length === 0) return [fieldErr.required(`${field}.name`)];
  // kube checks these names as prefixes (a trailing dash is tolerated).
  return nameIsDNSSubdomain(name, true).map((m) => fieldErr.invalid(`${field}.name`, name, m));
}

/** kube's `ValidateEnvFrom` (the one-source errors name the list, not the item). */
export function validateEnvFrom(sources: unknown, field: string): FieldError[] {
  const errs: FieldError[] = [];
  objects(sources).forEach((ev, i) => {
    const p = `${field}[${i}]`;
    const prefix = str(ev['prefix']);
    if (prefix.length > 0) errs.push(...isEnvVarName(prefix).map((m) => fieldErr.invalid(`${p}.prefix`, prefix, m)));
    let n = 0;
    const cm = asObject(ev['configMapRef']);
    if (cm) {
      n++;
      errs.push(...validateEnvSourceName(cm, `${p}.configMapRef`));
    }
    const secret = asObject(ev['secretRef']);
    if (secret) {
      n++;
      errs.push(...validateEnvSourceName(secret, `${p}.secretRef`));
    }
    if (n === 0) errs.push(fieldErr.invalid(field, '', 'must specify one of: `configMapRef` or `secretRef`'));
    else if (n > 1) errs.push(fieldErr.invalid(field, '', 'may not have more than one field specified at a time'));
  });
  return errs;
}
