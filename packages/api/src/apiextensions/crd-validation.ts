/**
 * CustomResourceDefinition validation as kube-apiserver 1.24 has it
 * (apiextensions-apiserver `pkg/apis/apiextensions/validation/validation.go`). kube validates the
 * internal version, into which v1 converts by moving schemas, subresources and printer columns
 * that are identical in every version to the top level: errors then read `spec.validation...`,
 * `spec.subresources...`, `spec.additionalPrinterColumns[i]...`, as kube's do.
 */
import { type FieldError, fieldErr, GoLiteral, goStringSlice } from '../field-errors.js';
import { isPlainObject, type StoredObject } from '../types.js';
import { isDNS1123Subdomain } from '../validation.js';
import { isDNS1035Label, validateWebhookService, validateWebhookURL } from '../groups/admissionregistration/webhooks.js';
import { goValue } from './gofmt.js';
import { hasOwn } from '../json.js';
import { schemaHas, validateDefaults, validateOpenAPISchema, validateStructural } from './schema-validation.js';

type Raw = Record<string, unknown>;
const rec = (v: unknown): Raw | undefined => (isPlainObject(v) ? v : undefined);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const strings = (v: unknown): string[] => list(v).map(str);

const PRINTER_COLUMN_TYPES = ['boolean', 'date', 'integer', 'number', 'string'];
const PRINTER_COLUMN_FORMATS = ['byte', 'date', 'date-time', 'double', 'float', 'int32', 'int64', 'password'];
const ALLOWED_AT_ROOT_WITH_STATUS = ['Description', 'Type', 'Format', 'Title', 'Maximum', 'ExclusiveMaximum', 'Minimum', 'ExclusiveMinimum', 'MaxLength', 'MinLength', 'Pattern', 'MaxItems', 'MinItems', 'UniqueItems', 'MultipleOf', 'Required', 'Items', 'Properties', 'ExternalDocs', 'Example', 'XPreserveUnknownFields', 'XValidations'];
/** JSONSchemaProps' JSON fields in Go struct order, with their Go names. */
const GO_FIELDS: Array<[string, string]> = [
  ['id', 'ID'], ['$schema', 'Schema'], ['$ref', 'Ref'], ['description', 'Description'], ['type', 'Type'], ['format', 'Format'], ['title', 'Title'],
  ['default', 'Default'], ['maximum', 'Maximum'], ['exclusiveMaximum', 'ExclusiveMaximum'], ['minimum', 'Minimum'], ['exclusiveMinimum', 'ExclusiveMinimum'],
  ['maxLength', 'MaxLength'], ['minLength', 'MinLength'], ['pattern', 'Pattern'], ['maxItems', 'MaxItems'], ['minItems', 'MinItems'], ['uniqueItems', 'UniqueItems'],
  ['multipleOf', 'MultipleOf'], ['enum', 'Enum'], ['maxProperties', 'MaxProperties'], ['minProperties', 'MinProperties'], ['required', 'Required'], ['items', 'Items'],
  ['allOf', 'AllOf'], ['oneOf', 'OneOf'], ['anyOf', 'AnyOf'], ['not', 'Not'], ['properties', 'Properties'], ['additionalProperties', 'AdditionalProperties'],
  ['patternProperties', 'PatternProperties'], ['dependencies', 'Dependencies'], ['additionalItems', 'AdditionalItems'], ['definitions', 'Definitions'],
  ['externalDocs', 'ExternalDocs'], ['example', 'Example'], ['nullable', 'Nullable'], ['x-kubernetes-preserve-unknown-fields', 'XPreserveUnknownFields'],
  ['x-kubernetes-embedded-resource', 'XEmbeddedResource'], ['x-kubernetes-int-or-string', 'XIntOrString'], ['x-kubernetes-list-map-keys', 'XListMapKeys'],
  ['x-kubernetes-list-type', 'XListType'], ['x-kubernetes-map-type', 'XMapType'], ['x-kubernetes-validations', 'XValidations'],
];

/** Go's zero value test for a decoded JSON field. */
const isZero = (v: unknown): boolean =>
  v === undefined || v === null || v === false || v === '' || (Array.isArray(v) && v.length === 0) || (isPlainObject(v) && Object.keys(v).length === 0);

/** JSON equality with object keys in any order (apiequality.Semantic.DeepEqual for JSON data). */
function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  if (isPlainObject(a) && isPlainObject(b)) {
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => hasOwn(b, k) && deepEqual(a[k], b[k]));
  }
  return false;
}

/** The parts of a v1 spec kube's internal version lifts to the top level when every version agrees. */
interface InternalSpec {
  validation?: Raw;
  subresources?: Raw;
  columns?: unknown[];
  versions: Array<{ raw: Raw; schema?: Raw; subresources?: Raw; columns: unknown[] }>;
}

function toInternal(spec: Raw): InternalSpec {
  const versions = list(spec['versions']).map((v) => {
    const raw = rec(v) ?? {};
    const columns = list(raw['additionalPrinterColumns']);
    return { raw, schema: rec(raw['schema']), subresources: rec(raw['subresources']), columns };
  });
  const out: InternalSpec = { versions };
  if (versions.length === 0) return out;
  const first = versions[0]!;
  if (versions.every((v) => deepEqual(v.schema, first.schema))) {
    out.validation = first.schema;
    for (const v of versions) delete v.schema;
  }
  if (versions.every((v) => deepEqual(v.subresources, first.subresources))) {
    out.subresources = first.subresources;
    for (const v of versions) delete v.subresources;
  }
  if (versions.every((v) => deepEqual(v.columns, first.columns))) {
    out.columns = first.columns;
    for (const v of versions) v.columns = [];
  }
  return out;
}

function validateNames(names: Raw, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const dns1035 = (field: string, value: string, mixed: boolean): void => {
    const m = isDNS1035Label(mixed ? value.toLowerCase() : value);
    if (value && m.length > 0) errs.push(fieldErr.invalid(`${path}.${field}`, value, mixed ? `may have mixed case, but should otherwise match: ${m.join(',')}` : m.join(',')));
  };
  dns1035('plural', str(names['plural']), false);
  dns1035('singular', str(names['singular']), false);
  dns1035('kind', str(names['kind']), true);
  dns1035('listKind', str(names['listKind']), true);
  strings(names['shortNames']).forEach((s, i) => {
    const m = isDNS1035Label(s);
    if (m.length > 0) errs.push(fieldErr.invalid(`${path}.shortNames[${i}]`, s, m.join(',')));
  });
  const kind = str(names['kind']);
  if (kind && kind === str(names['listKind'])) errs.push(fieldErr.invalid(`${path}.listKind`, kind, 'kind and listKind may not be the same'));
  strings(names['categories']).forEach((c, i) => {
    const m = isDNS1035Label(c);
    if (m.length > 0) errs.push(fieldErr.invalid(`${path}.categories[${i}]`, c, m.join(',')));
  });
  return errs;
}

function validateSimpleJSONPath(s: string, path: string): FieldError[] {
  if (s.length === 0) return [fieldErr.invalid(path, s, 'must not be empty')];
  if (s[0] !== '.') return [fieldErr.invalid(path, s, 'must be a simple json path starting with .')];
  return [];
}

function validateColumn(col: Raw, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (!str(col['name'])) errs.push(fieldErr.required(`${path}.name`));
  const type = str(col['type']);
  const typeMsg = `must be one of ${PRINTER_COLUMN_TYPES.join(',')}`;
  if (!type) errs.push(fieldErr.required(`${path}.type`, typeMsg));
  else if (!PRINTER_COLUMN_TYPES.includes(type)) errs.push(fieldErr.invalid(`${path}.type`, type, typeMsg));
  const format = str(col['format']);
  if (format && !PRINTER_COLUMN_FORMATS.includes(format)) errs.push(fieldErr.invalid(`${path}.format`, format, `must be one of ${PRINTER_COLUMN_FORMATS.join(',')}`));
  const jsonPath = str(col['jsonPath']);
  if (!jsonPath) errs.push(fieldErr.required(`${path}.JSONPath`));
  else errs.push(...validateSimpleJSONPath(jsonPath, `${path}.JSONPath`));
  return errs;
}

function validateSubresources(sub: Raw | undefined, path: string): FieldError[] {
  const scale = rec(sub?.['scale']);
  if (!scale) return [];
  const errs: FieldError[] = [];
  const check = (field: string, prefixes: string[], detail: string, required: boolean): void => {
    const p = `${path}.scale.${field}`;
    const v = str(scale[field]);
    if (!v) {
      if (required) errs.push(fieldErr.required(p));
      return;
    }
    const e = validateSimpleJSONPath(v, p);
    if (e.length > 0) errs.push(...e);
    else if (!prefixes.some((x) => v.startsWith(x))) errs.push(fieldErr.invalid(p, v, detail));
  };
  check('specReplicasPath', ['.spec.'], 'should be a json path under .spec', true);
  check('statusReplicasPath', ['.status.'], 'should be a json path under .status', true);
  check('labelSelectorPath', ['.spec.', '.status.'], 'should be a json path under either .spec or .status', false);
  return errs;
}

/** kube's validateCustomResourceDefinitionValidation for one schema (per version or top level). */
function validateValidation(validation: Raw | undefined, statusEnabled: boolean, path: string): FieldError[] {
  const schema = rec(validation?.['openAPIV3Schema']);
  if (!schema) return [];
  const errs: FieldError[] = [];
  const sp = `${path}.openAPIV3Schema`;
  if (statusEnabled) {
    for (const [json, goName] of GO_FIELDS) {
      if (isZero(schema[json])) continue;
      if (goName === 'Type') {
        if (schema['type'] !== 'object') {
          errs.push(fieldErr.invalid(`${sp}.type`, goValue(schema['type']), 'only "object" is allowed as the type at the root of the schema if the status subresource is enabled'));
          break;
        }
        continue;
      }
      if (!ALLOWED_AT_ROOT_WITH_STATUS.includes(goName)) {
        errs.push(fieldErr.invalid(sp, goValue(schema), `only [${ALLOWED_AT_ROOT_WITH_STATUS.join(' ')}] fields are allowed at the root of the schema if the status subresource is enabled`));
        break;
      }
    }
  }
  if (schema['nullable'] === true) errs.push(fieldErr.forbidden(`${sp}.nullable`, 'nullable cannot be true at the root'));
  validateOpenAPISchema(schema, sp, { allowDefaults: true, disallowDefaultsReason: '', insideResourceMeta: false }, true, errs);
  const structural = validateStructural(schema, sp);
  if (structural.length > 0) errs.push(...structural);
  else errs.push(...validateDefaults(schema, sp));
  return errs;
}

function validateDeprecationWarning(v: Raw, path: string): FieldError[] {
  const warning = v['deprecationWarning'];
  if (typeof warning !== 'string') return [];
  const p = `${path}.deprecationWarning`;
  if (v['deprecated'] !== true) return [fieldErr.invalid(p, warning, 'can only be set for deprecated versions')];
  const errs: FieldError[] = [];
  if (Buffer.byteLength(warning) > 256) errs.push(fieldErr.invalid(p, warning, 'must be <= 256 characters long'));
  if (warning.length === 0) errs.push(fieldErr.invalid(p, warning, 'must not be an empty string'));
  let byteIndex = 0;
  for (const ch of warning) {
    if (/\p{Cc}/u.test(ch)) {
      errs.push(fieldErr.invalid(p, warning, `must only contain printable UTF-8 characters; control character found at index ${byteIndex}`));
      break;
    }
    if (!/[\p{L}\p{M}\p{N}\p{P}\p{S} ]/u.test(ch)) {
      errs.push(fieldErr.invalid(p, warning, `must only contain printable UTF-8 characters; non-printable character found at index ${byteIndex}`));
      break;
    }
    byteIndex += Buffer.byteLength(ch);
  }
  return errs;
}

function validateEnum(path: string, value: string, accepted: string[]): FieldError[] {
  if (!value) return [fieldErr.required(path)];
  return accepted.includes(value) ? [] : [fieldErr.notSupported(path, value, accepted)];
}

const ACCEPTED_CONVERSION_REVIEW_VERSIONS = ['v1', 'v1beta1'];

function validateConversion(conversion: Raw | undefined, preserveUnknownFields: boolean, path: string): FieldError[] {
  if (!conversion) return [];
  const errs: FieldError[] = [];
  const strategy = str(conversion['strategy']);
  if (strategy && strategy !== 'None' && preserveUnknownFields) {
    errs.push(fieldErr.invalid(`${path}.strategy`, strategy, 'must be None if spec.preserveUnknownFields is true'));
  }
  errs.push(...validateEnum(`${path}.strategy`, strategy, ['None', 'Webhook']));
  const webhook = rec(conversion['webhook']);
  const clientConfig = rec(webhook?.['clientConfig']);
  const reviewVersions = strings(webhook?.['conversionReviewVersions']);
  if (strategy === 'Webhook') {
    if (!clientConfig) {
      errs.push(fieldErr.required(`${path}.webhookClientConfig`, 'required when strategy is set to Webhook'));
    } else {
      const url = clientConfig['url'];
      const service = rec(clientConfig['service']);
      if ((typeof url === 'string') === !!service) errs.push(fieldErr.required(`${path}.webhookClientConfig`, 'exactly one of url or service is required'));
      else if (typeof url === 'string') errs.push(...validateWebhookURL(url, `${path}.webhookClientConfig.url`));
      else if (service) errs.push(...validateWebhookService(service, `${path}.webhookClientConfig.service`));
    }
    const rp = `${path}.conversionReviewVersions`;
    if (reviewVersions.length === 0) errs.push(fieldErr.required(rp));
    else {
      const seen = new Set<string>();
      let accepted = false;
      reviewVersions.forEach((v, i) => {
        if (seen.has(v)) {
          errs.push(fieldErr.invalid(`${rp}[${i}]`, v, 'duplicate version'));
          return;
        }
        seen.add(v);
        for (const m of isDNS1035Label(v)) errs.push(fieldErr.invalid(`${rp}[${i}]`, v, m));
        if (ACCEPTED_CONVERSION_REVIEW_VERSIONS.includes(v)) accepted = true;
      });
      if (!accepted) errs.push(fieldErr.invalid(rp, goStringSlice(reviewVersions), `must include at least one of ${ACCEPTED_CONVERSION_REVIEW_VERSIONS.join(', ')}`));
    }
  } else {
    if (clientConfig) errs.push(fieldErr.forbidden(`${path}.webhookClientConfig`, 'should not be set when strategy is not set to Webhook'));
    if (reviewVersions.length > 0) errs.push(fieldErr.forbidden(`${path}.conversionReviewVersions`, 'should not be set when strategy is not set to Webhook'));
  }
  return errs;
}

/** kube's validateCustomResourceDefinitionSpec with the options of a v1 create. */
export function validateCRDSpec(spec: Raw): FieldError[] {
  const errs: FieldError[] = [];
  const group = str(spec['group']);
  if (!group) errs.push(fieldErr.required('spec.group'));
  else {
    const m = isDNS1123Subdomain(group);
    if (m.length > 0) errs.push(fieldErr.invalid('spec.group', group, m.join(',')));
    else if (group.split('.').length < 2) errs.push(fieldErr.invalid('spec.group', group, 'should be a domain with at least one dot'));
  }
  errs.push(...validateEnum('spec.scope', str(spec['scope']), ['Cluster', 'Namespaced']));
  const preserveUnknownFields = spec['preserveUnknownFields'] === true;
  const internal = toInternal(spec);
  if (!rec(internal.validation?.['openAPIV3Schema'])) {
    internal.versions.forEach((v, i) => {
      if (!rec(v.schema?.['openAPIV3Schema'])) errs.push(fieldErr.required(`spec.versions[${i}].schema.openAPIV3Schema`, 'schemas are required'));
    });
  }
  const schemas = [internal.validation, ...internal.versions.map((v) => v.schema)].map((v) => v?.['openAPIV3Schema']);
  if (preserveUnknownFields && schemas.some((s) => schemaHas(s, (x) => x['default'] !== undefined && x['default'] !== null))) {
    errs.push(fieldErr.invalid('spec.preserveUnknownFields', true, 'must be false in order to use defaults in the schema'));
  }
  let storageCount = 0;
  const seen = new Set<string>();
  let unique = true;
  const anyStatus = !!rec(internal.subresources?.['status']) || internal.versions.some((v) => !!rec(v.subresources?.['status']));
  internal.versions.forEach((v, i) => {
    const p = `spec.versions[${i}]`;
    if (v.raw['storage'] === true) storageCount++;
    const name = str(v.raw['name']);
    if (seen.has(name)) unique = false;
    seen.add(name);
    const m = isDNS1035Label(name);
    if (m.length > 0) errs.push(fieldErr.invalid(`${p}.name`, name, m.join(',')));
    const subresources = internal.versions.some((x) => x.subresources) ? v.subresources : internal.subresources;
    errs.push(...validateDeprecationWarning(v.raw, p));
    errs.push(...validateValidation(v.schema, !!rec(subresources?.['status']), `${p}.schema`));
    errs.push(...validateSubresources(v.subresources, `${p}.subresources`));
    v.columns.forEach((c, j) => errs.push(...validateColumn(rec(c) ?? {}, `${p}.additionalPrinterColumns[${j}]`)));
  });
  const versionsValue = goValue(spec['versions'] ?? []);
  if (!unique) errs.push(fieldErr.invalid('spec.versions', versionsValue, 'must contain unique version names'));
  if (storageCount !== 1) errs.push(fieldErr.invalid('spec.versions', versionsValue, 'must have exactly one version marked as storage version'));
  const names = rec(spec['names']) ?? {};
  for (const f of ['plural', 'singular', 'kind', 'listKind']) if (!str(names[f])) errs.push(fieldErr.required(`spec.names.${f}`));
  errs.push(...validateNames(names, 'spec.names'));
  errs.push(...validateValidation(internal.validation, anyStatus, 'spec.validation'));
  errs.push(...validateSubresources(internal.subresources, 'spec.subresources'));
  (internal.columns ?? []).forEach((c, i) => errs.push(...validateColumn(rec(c) ?? {}, `spec.additionalPrinterColumns[${i}]`)));
  errs.push(...validateConversion(rec(spec['conversion']), preserveUnknownFields, 'spec.conversion'));
  return errs;
}

/** kube's ValidateCustomResourceDefinitionStoredVersions. */
export function validateStoredVersions(status: Raw, spec: Raw): FieldError[] {
  const path = 'status.storedVersions';
  const stored = strings(status['storedVersions']);
  if (stored.length === 0) return [fieldErr.invalid(path, new GoLiteral('[]string(nil)'), 'must have at least one stored version')];
  const errs: FieldError[] = [];
  const remaining = new Map<string, number>();
  stored.forEach((v, i) => remaining.set(v, i));
  for (const v of list(spec['versions'])) {
    const r = rec(v) ?? {};
    const name = str(r['name']);
    if (r['storage'] === true && !remaining.has(name)) errs.push(fieldErr.invalid(path, goValue(r), `must have the storage version ${name}`));
    remaining.delete(name);
  }
  for (const [v, i] of [...remaining].sort((a, b) => a[1] - b[1])) errs.push(fieldErr.invalid(`${path}[${i}]`, v, 'must appear in spec.versions'));
  return errs;
}

/** The annotation kube requires on CRDs in protected groups (*.k8s.io, *.kubernetes.io). */
export const KUBE_API_APPROVED_ANNOTATION = 'api-approved.kubernetes.io';

function isProtectedCommunityGroup(group: string): boolean {
  return group === 'k8s.io' || group.endsWith('.k8s.io') || group === 'kubernetes.io' || group.endsWith('.kubernetes.io');
}

type Approval = 'approved' | 'bypassed' | 'missing' | 'invalid';

/** kube's apihelpers.GetAPIApprovalState. */
function approvalState(annotations: Record<string, string> | undefined): { state: Approval; reason: string } {
  const value = annotations?.[KUBE_API_APPROVED_ANNOTATION];
  if (value === undefined) return { state: 'missing', reason: `protected groups must have approval annotation "${KUBE_API_APPROVED_ANNOTATION}", see https://github.com/kubernetes/enhancements/pull/1111` };
  if (value.startsWith('unapproved')) return { state: 'bypassed', reason: `not approved: "${value}"` };
  try {
    const u = new URL(value);
    if (u.protocol === 'http:' || u.protocol === 'https:') return { state: 'approved', reason: `approved in ${value}` };
  } catch {
    // not a URL
  }
  return { state: 'invalid', reason: `protected groups must have approval annotation "${KUBE_API_APPROVED_ANNOTATION}" with either a URL or a reason starting with "unapproved", see https://github.com/kubernetes/enhancements/pull/1111` };
}

function validateAPIApproval(obj: StoredObject, old: StoredObject | undefined): FieldError[] {
  const group = str(rec(obj['spec'])?.['group']);
  if (!isProtectedCommunityGroup(group)) return [];
  const next = approvalState(obj.metadata.annotations);
  if (old && approvalState(old.metadata.annotations).state === next.state) return [];
  const path = `metadata.annotations[${KUBE_API_APPROVED_ANNOTATION}]`;
  if (next.state === 'missing') return [fieldErr.required(path, next.reason)];
  if (next.state === 'invalid') return [fieldErr.invalid(path, obj.metadata.annotations?.[KUBE_API_APPROVED_ANNOTATION] ?? '', next.reason)];
  return [];
}

/** kube's ValidateCustomResourceDefinition, less the object metadata the generic store checks. */
export function validateCRD(obj: StoredObject): FieldError[] {
  const spec = rec(obj['spec']) ?? {};
  const status = rec(obj['status']) ?? {};
  const errs: FieldError[] = [];
  const name = obj.metadata.name ?? '';
  const names = rec(spec['names']) ?? {};
  if (name && name !== `${str(names['plural'])}.${str(spec['group'])}`) errs.push(fieldErr.invalid('metadata.name', name, 'must be spec.names.plural+"."+spec.group'));
  errs.push(...validateCRDSpec(spec));
  errs.push(...validateNames(rec(status['acceptedNames']) ?? {}, 'status.acceptedNames'));
  errs.push(...validateStoredVersions(status, spec));
  errs.push(...validateAPIApproval(obj, undefined));
  if (spec['preserveUnknownFields'] === true) {
    errs.push(fieldErr.invalid('spec.preserveUnknownFields', true, 'cannot set to true, set x-preserve-unknown-fields to true in spec.versions[*].schema instead'));
  }
  return errs;
}

const isEstablished = (obj: StoredObject): boolean =>
  list(rec(obj['status'])?.['conditions']).some((c) => rec(c)?.['type'] === 'Established' && rec(c)?.['status'] === 'True');

/**
 * What kube's ValidateCustomResourceDefinitionUpdate checks beyond `validateCRD` (which the store
 * also runs on update): group and plural never change; scope and kind not once established.
 */
export function validateCRDUpdate(obj: StoredObject, old: StoredObject): FieldError[] {
  const spec = rec(obj['spec']) ?? {};
  const oldSpec = rec(old['spec']) ?? {};
  const errs: FieldError[] = [];
  const immutable = (path: string, next: string, prev: string): void => {
    if (next !== prev) errs.push(fieldErr.invalid(path, next, 'field is immutable'));
  };
  if (isEstablished(old)) {
    immutable('spec.scope', str(spec['scope']), str(oldSpec['scope']));
    immutable('spec.names.kind', str(rec(spec['names'])?.['kind']), str(rec(oldSpec['names'])?.['kind']));
  }
  immutable('spec.group', str(spec['group']), str(oldSpec['group']));
  immutable('spec.names.plural', str(rec(spec['names'])?.['plural']), str(rec(oldSpec['names'])?.['plural']));
  return errs;
}

/** kube's ValidateUpdateCustomResourceDefinitionStatus (object metadata aside). */
export function validateCRDStatus(obj: StoredObject): FieldError[] {
  return validateNames(rec(rec(obj['status'])?.['acceptedNames']) ?? {}, 'status.acceptedNames');
}
