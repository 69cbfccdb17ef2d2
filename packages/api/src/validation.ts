/**
 * Name, label, annotation and object-metadata validation, as kube's apimachinery validation
 * packages do it. Messages are kube's own, since clients and humans read them.
 */
import { type FieldError, fieldErr } from './field-errors.js';
import type { ObjectMeta } from './types.js';

const DNS1123_LABEL_FMT = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const DNS1123_SUBDOMAIN_FMT = `${DNS1123_LABEL_FMT}(\\.${DNS1123_LABEL_FMT})*`;
const dns1123LabelRe = new RegExp(`^${DNS1123_LABEL_FMT}$`);
const dns1123SubdomainRe = new RegExp(`^${DNS1123_SUBDOMAIN_FMT}$`);
export const DNS1123_LABEL_MAX = 63;
export const DNS1123_SUBDOMAIN_MAX = 253;

const QUALIFIED_NAME_FMT = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const QUALIFIED_NAME_ERR = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const QUALIFIED_NAME_MAX = 63;
const qualifiedNameRe = new RegExp(`^${QUALIFIED_NAME_FMT}$`);

const LABEL_VALUE_FMT = `(${QUALIFIED_NAME_FMT})?`;
const LABEL_VALUE_ERR =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
export const LABEL_VALUE_MAX = 63;
const labelValueRe = new RegExp(`^${LABEL_VALUE_FMT}$`);

/** A name validator returns messages; `prefix` is true when validating a generateName. */
export type NameValidator = (name: string, prefix: boolean) => string[];

export function maxLenMsg(n: number): string {
  return `must be no more than ${n} characters`;
}

/** kube's `RegexError`, including its "'MyName',  or" spacing (clients and humans match on it). */
export function regexError(msg: string, fmt: string, ...examples: string[]): string {
  if (examples.length === 0) return `${msg} (regex used for validation is '${fmt}')`;
  return `${msg} (e.g. ${examples.map((e) => `'${e}', `).join(' or ')}regex used for validation is '${fmt}')`;
}

export function isDNS1123Label(value: string): string[] {
  const errs: string[] = [];
  if (value.length > DNS1123_LABEL_MAX) errs.push(maxLenMsg(DNS1123_LABEL_MAX));
  if (!dns1123LabelRe.test(value)) {
    errs.push(regexError("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character", DNS1123_LABEL_FMT, 'my-name', '123-abc'));
  }
  return errs;
}

export function isDNS1123Subdomain(value: string): string[] {
  const errs: string[] = [];
  if (value.length > DNS1123_SUBDOMAIN_MAX) errs.push(maxLenMsg(DNS1123_SUBDOMAIN_MAX));
  if (!dns1123SubdomainRe.test(value)) {
    errs.push(regexError("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character", DNS1123_SUBDOMAIN_FMT, 'example.com'));
  }
  return errs;
}

/** generateName prefixes are validated without their trailing dash (kube's `maskTrailingDash`). */
function maskTrailingDash(name: string): string {
  return name.length > 1 && name.endsWith('-') ? `${name.slice(0, -2)}a` : name;
}

export const nameIsDNSSubdomain: NameValidator = (name, prefix) => isDNS1123Subdomain(prefix ? maskTrailingDash(name) : name);
export const nameIsDNSLabel: NameValidator = (name, prefix) => isDNS1123Label(prefix ? maskTrailingDash(name) : name);

/**
 * kube's `path.IsValidPathSegmentName` (RBAC names). kube sets no length limit here; plinth caps it
 * at 253 like every other name, so no over-long key reaches etcd.
 */
export const nameIsPathSegment: NameValidator = (name, prefix) => {
  const errs: string[] = [];
  if (!prefix && (name === '.' || name === '..')) errs.push(`may not be '${name}'`);
  for (const bad of ['/', '%']) if (name.includes(bad)) errs.push(`may not contain '${bad}'`);
  if (name.length > DNS1123_SUBDOMAIN_MAX) errs.push(maxLenMsg(DNS1123_SUBDOMAIN_MAX));
  return errs;
};

/**
 * Names isQualifiedName found valid: the same few keys (label and annotation keys, resource
 * names, toleration keys) come in every object, and the check splits and runs two regexps. Bounded
 * (cleared when full); only valid names are kept, so an answer never depends on it.
 */
const VALID_QUALIFIED_NAMES = new Set<string>();
const VALID_QUALIFIED_NAMES_MAX = 4096;

/** kube's `IsQualifiedName`: `[prefix/]name` as label and annotation keys use (a new array each call). */
export function isQualifiedName(value: string): string[] {
  if (VALID_QUALIFIED_NAMES.has(value)) return [];
  const errs = qualifiedNameErrors(value);
  if (errs.length === 0) {
    if (VALID_QUALIFIED_NAMES.size >= VALID_QUALIFIED_NAMES_MAX) VALID_QUALIFIED_NAMES.clear();
    VALID_QUALIFIED_NAMES.add(value);
  }
  return errs;
}

function qualifiedNameErrors(value: string): string[] {
  const errs: string[] = [];
  const parts = value.split('/');
  let name: string;
  if (parts.length === 1) {
    name = parts[0]!;
  } else if (parts.length === 2) {
    const [prefix, n] = parts as [string, string];
    name = n;
    if (prefix.length === 0) errs.push('prefix part must be non-empty');
    else for (const m of isDNS1123Subdomain(prefix)) errs.push(`prefix part ${m}`);
  } else {
    return [`a qualified name ${regexError(QUALIFIED_NAME_ERR, QUALIFIED_NAME_FMT, 'MyName', 'my.name', '123-abc')} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`];
  }
  if (name.length === 0) errs.push('name part must be non-empty');
  else if (name.length > QUALIFIED_NAME_MAX) errs.push(`name part ${maxLenMsg(QUALIFIED_NAME_MAX)}`);
  if (!qualifiedNameRe.test(name)) errs.push(`name part ${regexError(QUALIFIED_NAME_ERR, QUALIFIED_NAME_FMT, 'MyName', 'my.name', '123-abc')}`);
  return errs;
}

export function isValidLabelValue(value: string): string[] {
  const errs: string[] = [];
  if (value.length > LABEL_VALUE_MAX) errs.push(maxLenMsg(LABEL_VALUE_MAX));
  if (!labelValueRe.test(value)) errs.push(regexError(LABEL_VALUE_ERR, LABEL_VALUE_FMT, 'MyValue', 'my_value', '12345'));
  return errs;
}

export function validateLabels(labels: unknown, field: string): FieldError[] {
  if (labels === undefined || labels === null) return [];
  const errs: FieldError[] = [];
  for (const [k, v] of Object.entries(labels as Record<string, unknown>)) {
    for (const m of isQualifiedName(k)) errs.push(fieldErr.invalid(field, k, m));
    if (typeof v !== 'string') errs.push(fieldErr.invalid(`${field}`, v, 'label values must be strings'));
    else for (const m of isValidLabelValue(v)) errs.push(fieldErr.invalid(field, v, m));
  }
  return errs;
}

export const TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024;

export function validateAnnotations(annotations: unknown, field: string): FieldError[] {
  if (annotations === undefined || annotations === null) return [];
  const errs: FieldError[] = [];
  let total = 0;
  for (const [k, v] of Object.entries(annotations as Record<string, unknown>)) {
    for (const m of isQualifiedName(k.toLowerCase())) errs.push(fieldErr.invalid(field, k, m));
    total += k.length + (typeof v === 'string' ? v.length : 0);
  }
  if (total > TOTAL_ANNOTATION_SIZE_LIMIT) errs.push(fieldErr.tooLong(field, '', TOTAL_ANNOTATION_SIZE_LIMIT));
  return errs;
}

/**
 * kube's `ValidateObjectMeta`: name or generateName, namespace presence by scope, labels,
 * annotations, finalizers, owner references.
 */
export function validateObjectMeta(meta: ObjectMeta, namespaced: boolean, nameFn: NameValidator, path = 'metadata'): FieldError[] {
  const errs: FieldError[] = [];
  if (meta.generateName) {
    for (const m of nameFn(meta.generateName, true)) errs.push(fieldErr.invalid(`${path}.generateName`, meta.generateName, m));
  }
  if (!meta.name) {
    errs.push(fieldErr.required(`${path}.name`, 'name or generateName is required'));
  } else {
    for (const m of nameFn(meta.name, false)) errs.push(fieldErr.invalid(`${path}.name`, meta.name, m));
  }
  if (namespaced) {
    if (!meta.namespace) errs.push(fieldErr.required(`${path}.namespace`));
    else for (const m of isDNS1123Label(meta.namespace)) errs.push(fieldErr.invalid(`${path}.namespace`, meta.namespace, m));
  } else if (meta.namespace) {
    errs.push(fieldErr.forbidden(`${path}.namespace`, 'not allowed on this type'));
  }
  errs.push(...validateLabels(meta.labels, `${path}.labels`));
  errs.push(...validateAnnotations(meta.annotations, `${path}.annotations`));
  errs.push(...validateFinalizers(meta.finalizers, `${path}.finalizers`));
  if (meta.ownerReferences) {
    meta.ownerReferences.forEach((ref, i) => {
      const p = `${path}.ownerReferences[${i}]`;
      if (!ref.apiVersion) errs.push(fieldErr.invalid(`${p}.apiVersion`, ref.apiVersion ?? '', 'version must not be empty'));
      if (!ref.kind) errs.push(fieldErr.invalid(`${p}.kind`, ref.kind ?? '', 'kind must not be empty'));
      if (!ref.name) errs.push(fieldErr.invalid(`${p}.name`, ref.name ?? '', 'name must not be empty'));
      if (!ref.uid) errs.push(fieldErr.invalid(`${p}.uid`, ref.uid ?? '', 'uid must not be empty'));
    });
  }
  return errs;
}

export function validateFinalizers(finalizers: unknown, field: string): FieldError[] {
  if (!Array.isArray(finalizers)) return [];
  const errs: FieldError[] = [];
  for (const f of finalizers) {
    if (typeof f !== 'string') {
      errs.push(fieldErr.invalid(field, f, 'finalizers must be strings'));
      continue;
    }
    for (const m of isQualifiedName(f)) errs.push(fieldErr.invalid(field, f, m));
    // kube: a finalizer without a domain prefix is a warning, not an error, except standard ones.
  }
  return errs;
}

/** kube's `ValidateObjectMetaUpdate`: immutable identity fields. */
export function validateObjectMetaUpdate(next: ObjectMeta, old: ObjectMeta, path = 'metadata'): FieldError[] {
  const errs: FieldError[] = [];
  const immutable = (field: keyof ObjectMeta, label: string): void => {
    if ((next[field] ?? '') !== (old[field] ?? '')) errs.push(fieldErr.invalid(`${path}.${label}`, next[field] ?? '', 'field is immutable'));
  };
  immutable('name', 'name');
  immutable('namespace', 'namespace');
  immutable('uid', 'uid');
  immutable('creationTimestamp', 'creationTimestamp');
  if (old.deletionTimestamp && next.deletionTimestamp !== old.deletionTimestamp) {
    errs.push(fieldErr.invalid(`${path}.deletionTimestamp`, next.deletionTimestamp ?? '', 'field is immutable; may only be changed via deletion'));
  }
  if (old.deletionTimestamp && Array.isArray(next.finalizers)) {
    const before = new Set(old.finalizers ?? []);
    for (const f of next.finalizers) {
      if (!before.has(f)) errs.push(fieldErr.forbidden(`${path}.finalizers`, `no new finalizers can be added if the object is being deleted, found new finalizers []string{${JSON.stringify(f)}}`));
    }
  }
  return errs;
}
