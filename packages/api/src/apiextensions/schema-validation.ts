/**
 * Validation of a CRD version's openAPIV3Schema as kube-apiserver 1.24 does it
 * (apiextensions-apiserver `apis/apiextensions/validation/validation.go`:
 * `ValidateCustomResourceDefinitionOpenAPISchema` and `specStandardValidatorV3`; the structural
 * schema rules of `pkg/apiserver/schema/validation.go` and `complete.go`; the defaults check of
 * `schema/defaulting/validation.go`). Messages and field paths are kube's.
 */
import { type FieldError, fieldErr, fieldErrorString, GoLiteral } from '../field-errors.js';
import { isPlainObject } from '../types.js';
import { stringifyJson } from '../number-codec.js';
import { compileSchemaErrors } from './compile.js';
import { goValue } from './gofmt.js';
import { GoRegExpSyntaxError, compileGoRegExp } from './go-regexp.js';
import { prune, toStructural } from './structural.js';
import { getOwn, hasOwn } from '../json.js';

type Raw = Record<string, unknown>;

const OPENAPI_V3_TYPES = ['array', 'boolean', 'integer', 'number', 'object', 'string'];
const META_FIELDS = new Set(['metadata', 'kind', 'apiVersion']);

const rec = (v: unknown): Raw | undefined => (isPlainObject(v) ? v : undefined);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const key = (path: string, k: string): string => `${path}[${k}]`;
const child = (path: string, k: string): string => `${path}.${k}`;
const sortedEntries = (o: Raw): Array<[string, unknown]> => Object.entries(o).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

/** The per-call state of kube's specStandardValidatorV3. */
interface Ssv {
  allowDefaults: boolean;
  disallowDefaultsReason: string;
  insideResourceMeta: boolean;
}

/** Whether a JSONSchemaProps (or any schema below it) satisfies `pred` (kube's SchemaHas). */
export function schemaHas(s: unknown, pred: (s: Raw) => boolean): boolean {
  const r = rec(s);
  if (!r) return false;
  if (pred(r)) return true;
  const items = r['items'];
  if (Array.isArray(items) ? items.some((i) => schemaHas(i, pred)) : schemaHas(items, pred)) return true;
  for (const k of ['allOf', 'anyOf', 'oneOf'] as const) {
    const l = r[k];
    if (Array.isArray(l) && l.some((i) => schemaHas(i, pred))) return true;
  }
  if (schemaHas(r['not'], pred)) return true;
  for (const k of ['properties', 'patternProperties', 'definitions'] as const) {
    const m = rec(r[k]);
    if (m && Object.values(m).some((i) => schemaHas(i, pred))) return true;
  }
  if (schemaHas(r['additionalProperties'], pred) || schemaHas(r['additionalItems'], pred)) return true;
  const deps = rec(r['dependencies']);
  return !!deps && Object.values(deps).some((d) => schemaHas(d, pred));
}

/** kube's specStandardValidatorV3.validate: keywords CRD schemas may not use. */
function validateStandard(s: Raw, path: string, ssv: Ssv, errs: FieldError[]): void {
  const type = str(s['type']);
  if (type && !OPENAPI_V3_TYPES.includes(type)) errs.push(fieldErr.notSupported(child(path, 'type'), type, OPENAPI_V3_TYPES));
  if (s['default'] !== undefined && s['default'] !== null && !ssv.allowDefaults) {
    errs.push(fieldErr.forbidden(child(path, 'default'), ssv.disallowDefaultsReason ? `must not be set ${ssv.disallowDefaultsReason}` : 'must not be set'));
  }
  if (str(s['id'])) errs.push(fieldErr.forbidden(child(path, 'id'), 'id is not supported'));
  if (s['additionalItems'] !== undefined && s['additionalItems'] !== null) errs.push(fieldErr.forbidden(child(path, 'additionalItems'), 'additionalItems is not supported'));
  if (rec(s['patternProperties']) && Object.keys(s['patternProperties'] as Raw).length > 0) errs.push(fieldErr.forbidden(child(path, 'patternProperties'), 'patternProperties is not supported'));
  if (rec(s['definitions']) && Object.keys(s['definitions'] as Raw).length > 0) errs.push(fieldErr.forbidden(child(path, 'definitions'), 'definitions is not supported'));
  if (s['dependencies'] !== undefined && s['dependencies'] !== null) errs.push(fieldErr.forbidden(child(path, 'dependencies'), 'dependencies is not supported'));
  if (typeof s['$ref'] === 'string') errs.push(fieldErr.forbidden(child(path, '$ref'), '$ref is not supported'));
  if (type === 'null') errs.push(fieldErr.forbidden(child(path, 'type'), 'type cannot be set to null, use nullable as an alternative'));
  if (Array.isArray(s['items']) && s['items'].length > 0) errs.push(fieldErr.forbidden(child(path, 'items'), 'items must be a schema object and not an array'));
  if (ssv.insideResourceMeta && s['x-kubernetes-embedded-resource'] === true) {
    errs.push(fieldErr.forbidden(child(path, 'x-kubernetes-embedded-resource'), 'must not be used inside of resource meta'));
  }
}

/** kube's ValidateCustomResourceDefinitionOpenAPISchema (with the v1 options: everything required). */
export function validateOpenAPISchema(raw: unknown, path: string, ssv: Ssv, isRoot: boolean, errs: FieldError[]): void {
  const s = rec(raw);
  if (!s) return;
  validateStandard(s, path, ssv, errs);
  if (s['uniqueItems'] === true) errs.push(fieldErr.forbidden(child(path, 'uniqueItems'), 'uniqueItems cannot be set to true since the runtime complexity becomes quadratic'));
  const properties = rec(s['properties']) ?? {};
  const hasProps = Object.keys(properties).length > 0;
  const ap = s['additionalProperties'];
  if (ap !== undefined && ap !== null) {
    if (hasProps && (ap === false || rec(ap))) errs.push(fieldErr.forbidden(child(path, 'additionalProperties'), 'additionalProperties and properties are mutual exclusive'));
    const sub = ssv.insideResourceMeta ? { ...ssv, allowDefaults: false, disallowDefaultsReason: 'inside additionalProperties applying to object metadata' } : ssv;
    validateOpenAPISchema(ap, child(path, 'additionalProperties'), sub, false, errs);
  }
  for (const [k, v] of sortedEntries(properties)) {
    let sub = ssv;
    if ((isRoot || s['x-kubernetes-embedded-resource'] === true) && META_FIELDS.has(k)) {
      sub = { ...sub, insideResourceMeta: true };
      if (isRoot) sub = { ...sub, allowDefaults: false, disallowDefaultsReason: `in top-level ${k}` };
    }
    validateOpenAPISchema(v, key(child(path, 'properties'), k), sub, false, errs);
  }
  validateOpenAPISchema(s['not'], child(path, 'not'), ssv, false, errs);
  for (const j of ['allOf', 'oneOf', 'anyOf'] as const) {
    const list = s[j];
    if (Array.isArray(list)) list.forEach((x, i) => validateOpenAPISchema(x, `${child(path, j)}[${i}]`, ssv, false, errs));
  }
  const items = s['items'];
  if (rec(items)) validateOpenAPISchema(items, child(path, 'items'), ssv, false, errs);
  else if (Array.isArray(items)) items.forEach((x, i) => validateOpenAPISchema(x, `${child(path, 'items')}[${i}]`, ssv, false, errs));

  if (s['x-kubernetes-preserve-unknown-fields'] === false) {
    errs.push(fieldErr.invalid(child(path, 'x-kubernetes-preserve-unknown-fields'), false, 'must be true or undefined'));
  }
  const type = str(s['type']);
  const mapType = s['x-kubernetes-map-type'];
  if (mapType !== undefined && mapType !== null && type !== 'object') {
    if (!type) errs.push(fieldErr.required(child(path, 'type'), 'must be object if x-kubernetes-map-type is specified'));
    else errs.push(fieldErr.invalid(child(path, 'type'), type, 'must be object if x-kubernetes-map-type is specified'));
  }
  if (mapType !== undefined && mapType !== null && mapType !== 'atomic' && mapType !== 'granular') {
    errs.push(fieldErr.notSupported(child(path, 'x-kubernetes-map-type'), goValue(mapType), ['atomic', 'granular']));
  }
  const listType = s['x-kubernetes-list-type'];
  const hasListType = listType !== undefined && listType !== null;
  const itemSchema = rec(items);
  if (hasListType && type !== 'array') {
    if (!type) errs.push(fieldErr.required(child(path, 'type'), 'must be array if x-kubernetes-list-type is specified'));
    else errs.push(fieldErr.invalid(child(path, 'type'), type, 'must be array if x-kubernetes-list-type is specified'));
  } else if (listType === 'set' && itemSchema) {
    const itemListType = itemSchema['x-kubernetes-list-type'];
    if (itemSchema['type'] === 'array' && itemListType !== undefined && itemListType !== 'atomic') {
      errs.push(fieldErr.invalid(child(path, 'items.x-kubernetes-list-type'), goValue(itemListType), 'must be atomic as item of a list with x-kubernetes-list-type=set'));
    } else if (itemSchema['type'] === 'object' && itemSchema['x-kubernetes-map-type'] !== 'atomic') {
      errs.push(fieldErr.invalid(child(path, 'items.x-kubernetes-map-type'), goValue(itemListType), 'must be atomic as item of a list with x-kubernetes-list-type=set'));
    }
  }
  if (hasListType && listType !== 'atomic' && listType !== 'set' && listType !== 'map') {
    errs.push(fieldErr.notSupported(child(path, 'x-kubernetes-list-type'), goValue(listType), ['atomic', 'set', 'map']));
  }
  const mapKeys = Array.isArray(s['x-kubernetes-list-map-keys']) ? (s['x-kubernetes-list-map-keys'] as unknown[]).map(str) : [];
  const keysValue = new GoLiteral(`[]string{${mapKeys.map((k) => JSON.stringify(k)).join(', ')}}`);
  if (mapKeys.length > 0) {
    if (!hasListType) errs.push(fieldErr.required(child(path, 'x-kubernetes-list-type'), 'must be map if x-kubernetes-list-map-keys is non-empty'));
    else if (listType !== 'map') errs.push(fieldErr.invalid(child(path, 'x-kubernetes-list-type'), goValue(listType), 'must be map if x-kubernetes-list-map-keys is non-empty'));
  }
  if (listType === 'map') {
    if (mapKeys.length === 0) errs.push(fieldErr.required(child(path, 'x-kubernetes-list-map-keys'), 'must not be empty if x-kubernetes-list-type is map'));
    if (items === undefined || items === null) errs.push(fieldErr.required(child(path, 'items'), 'must have a schema if x-kubernetes-list-type is map'));
    if (Array.isArray(items)) errs.push(fieldErr.invalid(child(path, 'items'), goValue(items), 'must only have a single schema if x-kubernetes-list-type is map'));
    if (itemSchema && itemSchema['type'] !== 'object') {
      errs.push(fieldErr.invalid(child(path, 'items.type'), str(itemSchema['type']), "must be object if parent array's x-kubernetes-list-type is map"));
    }
    if (itemSchema && itemSchema['type'] === 'object') {
      const itemProps = rec(itemSchema['properties']) ?? {};
      const seen = new Set<string>();
      for (const k of mapKeys) {
        const ks = rec(getOwn(itemProps, k));
        if (ks) {
          if (ks['type'] === 'array' || ks['type'] === 'object') {
            errs.push(fieldErr.invalid(child(key(child(child(path, 'items'), 'properties'), k), 'type'), 'object', "must be a scalar type if parent array's x-kubernetes-list-type is map"));
          }
        } else {
          errs.push(fieldErr.invalid(child(path, 'x-kubernetes-list-map-keys'), keysValue, 'entries must all be names of item properties'));
        }
        if (seen.has(k)) errs.push(fieldErr.invalid(child(path, 'x-kubernetes-list-map-keys'), keysValue, 'must not contain duplicate entries'));
        seen.add(k);
      }
    }
  }
  validateMapListKeysMapSet(s, path, errs);
}

/** kube's validateMapListKeysMapSet: set and map items not nullable, map keys required or defaulted. */
function validateMapListKeysMapSet(s: Raw, path: string, errs: FieldError[]): void {
  const items = rec(s['items']);
  const listType = s['x-kubernetes-list-type'];
  if (!items || (listType !== 'set' && listType !== 'map')) return;
  if (items['nullable'] === true) errs.push(fieldErr.forbidden(child(path, 'items.nullable'), `cannot be nullable when x-kubernetes-list-type is ${listType}`));
  if (listType !== 'map') return;
  const required = new Set(Array.isArray(items['required']) ? (items['required'] as unknown[]).map(str) : []);
  const props = rec(items['properties']) ?? {};
  const keys = Array.isArray(s['x-kubernetes-list-map-keys']) ? (s['x-kubernetes-list-map-keys'] as unknown[]).map(str) : [];
  for (const k of keys) {
    const p = rec(getOwn(props, k));
    if (!p) continue;
    const base = key(child(child(path, 'items'), 'properties'), k);
    if (!required.has(k) && (p['default'] === undefined || p['default'] === null)) {
      errs.push(fieldErr.required(child(base, 'default'), 'this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property'));
    }
    if (p['nullable'] === true) errs.push(fieldErr.forbidden(child(base, 'nullable'), 'this property is in x-kubernetes-list-map-keys, so it cannot be nullable'));
  }
}

// ---------------------------------------------------------------------------------------------
// Structural schemas (pkg/apiserver/schema/validation.go, complete.go)
// ---------------------------------------------------------------------------------------------

type Level = 'root' | 'item' | 'field';

/** Keywords of the structural part: a schema in allOf/anyOf/oneOf/not may not set them. */
const VALUE_VALIDATION_KEYS = [
  'format', 'maximum', 'exclusiveMaximum', 'minimum', 'exclusiveMinimum', 'maxLength', 'minLength', 'pattern', 'maxItems', 'minItems',
  'uniqueItems', 'multipleOf', 'enum', 'maxProperties', 'minProperties', 'required', 'allOf', 'anyOf', 'oneOf', 'not',
];

function isIntOrStringAnyOf(anyOf: unknown): boolean {
  if (!Array.isArray(anyOf) || anyOf.length !== 2) return false;
  const [a, b] = anyOf.map(rec);
  return !!a && !!b && Object.keys(a).length === 1 && a['type'] === 'integer' && Object.keys(b).length === 1 && b['type'] === 'string';
}

function validateStructuralNode(s: Raw | undefined, lvl: Level, path: string, errs: FieldError[]): void {
  if (!s) return;
  const type = str(s['type']);
  const items = rec(s['items']);
  if (type === 'array' && !items) errs.push(fieldErr.required(child(path, 'items'), 'must be specified'));
  validateStructuralNode(items, 'item', child(path, 'items'), errs);
  const props = rec(s['properties']) ?? {};
  for (const [k, v] of Object.entries(props)) validateStructuralNode(rec(v), 'field', key(child(path, 'properties'), k), errs);
  const ap = s['additionalProperties'];
  const hasAP = ap !== undefined && ap !== null;
  if (hasAP) {
    if (lvl === 'root') errs.push(fieldErr.forbidden(child(path, 'additionalProperties'), 'must not be used at the root'));
    validateStructuralNode(rec(ap), 'field', child(path, 'additionalProperties'), errs);
  }
  const intOrString = s['x-kubernetes-int-or-string'] === true;
  const preserve = s['x-kubernetes-preserve-unknown-fields'] === true;
  const embedded = s['x-kubernetes-embedded-resource'] === true;
  if (intOrString && preserve) errs.push(fieldErr.invalid(child(path, 'x-kubernetes-preserve-unknown-fields'), true, 'must be false if x-kubernetes-int-or-string is true'));
  if (intOrString && embedded) errs.push(fieldErr.invalid(child(path, 'x-kubernetes-embedded-resource'), true, 'must be false if x-kubernetes-int-or-string is true'));

  const skipAnyOf = isIntOrStringAnyOf(s['anyOf']);
  const allOf = s['allOf'];
  const skipFirstAllOfAnyOf = Array.isArray(allOf) && allOf.length >= 1 && isIntOrStringAnyOf(rec(allOf[0])?.['anyOf']);
  validateValueValidation(s, skipAnyOf, skipFirstAllOfAnyOf, path, errs);

  const checkMetadata = lvl === 'root' || embedded;
  if (embedded && type !== 'object') {
    if (!type) errs.push(fieldErr.required(child(path, 'type'), 'must be object if x-kubernetes-embedded-resource is true'));
    else errs.push(fieldErr.invalid(child(path, 'type'), type, 'must be object if x-kubernetes-embedded-resource is true'));
  } else if (!type && !intOrString && !preserve) {
    const detail = lvl === 'root' ? 'must not be empty at the root' : lvl === 'item' ? 'must not be empty for specified array items' : 'must not be empty for specified object fields';
    errs.push(fieldErr.required(child(path, 'type'), detail));
  }
  if (embedded && hasAP) errs.push(fieldErr.forbidden(child(path, 'additionalProperties'), 'must not be used if x-kubernetes-embedded-resource is set'));
  if (lvl === 'root' && type && type !== 'object') errs.push(fieldErr.invalid(child(path, 'type'), type, 'must be object at the root'));
  for (const f of ['kind', 'apiVersion']) {
    const p = rec(getOwn(props, f));
    if (p && checkMetadata && p['type'] !== 'string') errs.push(fieldErr.invalid(child(key(child(path, 'properties'), f), 'type'), str(p['type']), 'must be string'));
  }
  const metadata = rec(getOwn(props, 'metadata'));
  if (metadata) {
    const mpath = key(child(path, 'properties'), 'metadata');
    if (checkMetadata && metadata['type'] !== 'object') errs.push(fieldErr.invalid(child(mpath, 'type'), str(metadata['type']), 'must be object'));
    if (lvl === 'root' && !isRestrictedRootMetadata(metadata)) {
      errs.push(fieldErr.forbidden(mpath, 'must not specify anything other than name and generateName, but metadata is implicitly specified'));
    }
  }
  if (embedded && !preserve && Object.keys(props).length === 0) {
    errs.push(fieldErr.required(child(path, 'properties'), 'must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields'));
  }
}

/** The root metadata schema may only set its type, a default, and constraints on name/generateName. */
function isRestrictedRootMetadata(m: Raw): boolean {
  for (const [k, v] of Object.entries(m)) {
    if (k === 'type' || k === 'default') continue;
    if (k === 'properties') {
      const names = Object.keys(rec(v) ?? {});
      const ok = names.every((n) => n === 'name' || n === 'generateName');
      if (!ok) return false;
      continue;
    }
    if (v === undefined || v === null || v === false || v === '') continue;
    return false;
  }
  return true;
}

function validateValueValidation(v: Raw, skipAnyOf: boolean, skipFirstAllOfAnyOf: boolean, path: string, errs: FieldError[]): void {
  const anyOf = v['anyOf'];
  if (!skipAnyOf && Array.isArray(anyOf)) anyOf.forEach((x, i) => validateNested(rec(x), false, `${child(path, 'anyOf')}[${i}]`, errs));
  const allOf = v['allOf'];
  if (Array.isArray(allOf)) allOf.forEach((x, i) => validateNested(rec(x), skipFirstAllOfAnyOf && i === 0, `${child(path, 'allOf')}[${i}]`, errs));
  const oneOf = v['oneOf'];
  if (Array.isArray(oneOf)) oneOf.forEach((x, i) => validateNested(rec(x), false, `${child(path, 'oneOf')}[${i}]`, errs));
  validateNested(rec(v['not']), false, child(path, 'not'), errs);
  const pattern = v['pattern'];
  if (typeof pattern === 'string' && pattern) {
    // kube compiles it with Go's regexp.Compile and quotes Go's error.
    try {
      compileGoRegExp(pattern);
    } catch (e) {
      if (!(e instanceof GoRegExpSyntaxError)) throw e;
      errs.push(fieldErr.invalid(child(path, 'pattern'), pattern, `must be a valid regular expression, but isn't: ${e.message}`));
    }
  }
}

function validateNested(v: Raw | undefined, skipAnyOf: boolean, path: string, errs: FieldError[]): void {
  if (!v) return;
  validateValueValidation(v, skipAnyOf, false, path, errs);
  validateNested(rec(v['items']), false, child(path, 'items'), errs);
  const props = rec(v['properties']) ?? {};
  for (const [k, p] of Object.entries(props)) validateNested(rec(p), false, key(child(path, 'properties'), k), errs);
  const forbid = (k: string, detail: string): void => {
    errs.push(fieldErr.forbidden(child(path, k), detail));
  };
  if (str(v['type'])) forbid('type', 'must be empty to be structural');
  if (v['additionalProperties'] !== undefined && v['additionalProperties'] !== null) forbid('additionalProperties', 'must be undefined to be structural');
  if (v['default'] !== undefined && v['default'] !== null) forbid('default', 'must be undefined to be structural');
  if (str(v['title'])) forbid('title', 'must be empty to be structural');
  if (str(v['description'])) forbid('description', 'must be empty to be structural');
  if (v['nullable'] === true) forbid('nullable', 'must be false to be structural');
  if (v['x-kubernetes-preserve-unknown-fields'] === true) forbid('x-kubernetes-preserve-unknown-fields', 'must be false to be structural');
  if (v['x-kubernetes-embedded-resource'] === true) forbid('x-kubernetes-embedded-resource', 'must be false to be structural');
  if (v['x-kubernetes-int-or-string'] === true) forbid('x-kubernetes-int-or-string', 'must be false to be structural');
  if (Array.isArray(v['x-kubernetes-list-map-keys']) && v['x-kubernetes-list-map-keys'].length > 0) forbid('x-kubernetes-list-map-keys', 'must be empty to be structural');
  if (typeof v['x-kubernetes-list-type'] === 'string') forbid('x-kubernetes-list-type', 'must be undefined to be structural');
  if (typeof v['x-kubernetes-map-type'] === 'string') forbid('x-kubernetes-map-type', 'must be undefined to be structural');
  if (Array.isArray(v['x-kubernetes-validations']) && v['x-kubernetes-validations'].length > 0) forbid('x-kubernetes-validations', 'must be empty to be structural');
  if (hasOwn(props, 'metadata')) errs.push(fieldErr.forbidden(key(child(path, 'properties'), 'metadata'), 'must not be specified in a nested context'));
}

/** kube's validateStructuralCompleteness: what a value validation names must exist in the structure. */
function validateCompleteness(v: Raw, s: Raw | undefined, sPath: string, vPath: string, errs: FieldError[]): void {
  const junctions = (x: Raw, xPath: string): void => {
    const not = rec(x['not']);
    if (not) validateNestedCompleteness(not, s, sPath, child(xPath, 'not'), errs);
    for (const j of ['allOf', 'anyOf', 'oneOf'] as const) {
      const list = x[j];
      if (Array.isArray(list)) list.forEach((n, i) => rec(n) && validateNestedCompleteness(rec(n)!, s, sPath, `${child(xPath, j)}[${i}]`, errs));
    }
  };
  if (!s) {
    if (VALUE_VALIDATION_KEYS.some((k) => v[k] !== undefined)) errs.push(fieldErr.required(sPath, `because it is defined in ${vPath}`));
    return;
  }
  junctions(v, vPath);
}

function validateNestedCompleteness(v: Raw, s: Raw | undefined, sPath: string, vPath: string, errs: FieldError[]): void {
  if (!s) {
    errs.push(fieldErr.required(sPath, `because it is defined in ${vPath}`));
    return;
  }
  validateCompleteness(v, s, sPath, vPath, errs);
  const vItems = rec(v['items']);
  if (vItems) validateNestedCompleteness(vItems, rec(s['items']), child(sPath, 'items'), child(vPath, 'items'), errs);
  const sProps = rec(s['properties']) ?? {};
  for (const [k, p] of Object.entries(rec(v['properties']) ?? {})) {
    const sp = rec(getOwn(sProps, k));
    if (!sp) errs.push(fieldErr.required(key(child(sPath, 'properties'), k), `because it is defined in ${key(child(vPath, 'properties'), k)}`));
    else if (rec(p)) validateNestedCompleteness(rec(p)!, sp, key(child(sPath, 'properties'), k), key(child(vPath, 'properties'), k), errs);
  }
}

/** kube's ValidateStructural: the invariants and completeness, errors sorted by their text. */
export function validateStructural(schema: Raw, path: string): FieldError[] {
  const errs: FieldError[] = [];
  validateStructuralNode(schema, 'root', path, errs);
  validateCompleteness(schema, schema, path, path, errs);
  const text = errs.map((e) => [fieldErrorString(e), e] as const);
  return text.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, e]) => e);
}

// ---------------------------------------------------------------------------------------------
// Defaults (pkg/apiserver/schema/defaulting/validation.go)
// ---------------------------------------------------------------------------------------------

/** kube's ValidateDefaults: every default is pruned and valid against its own schema. */
export function validateDefaults(schema: Raw, path: string): FieldError[] {
  const errs: FieldError[] = [];
  walkDefaults(schema, path, true, false, errs);
  return errs;
}

function walkDefaults(s: Raw, path: string, isResourceRoot: boolean, insideMeta: boolean, errs: FieldError[]): void {
  const embedded = isResourceRoot || s['x-kubernetes-embedded-resource'] === true;
  const meta = embedded ? false : insideMeta;
  const dflt = s['default'];
  if (dflt !== undefined && dflt !== null && !meta) {
    const pruned = structuredClone(dflt);
    prune(pruned, toStructural(s), embedded);
    if (stringifyJson(pruned) !== stringifyJson(dflt)) {
      errs.push(fieldErr.invalid(child(path, 'default'), goValue(dflt), 'must not have unknown fields'));
    } else {
      errs.push(...compileSchemaErrors(s, dflt, child(path, 'default')));
    }
  }
  const items = rec(s['items']);
  if (items) walkDefaults(items, child(path, 'items'), false, meta, errs);
  for (const [k, p] of sortedEntries(rec(s['properties']) ?? {})) {
    const r = rec(p);
    if (r) walkDefaults(r, key(child(path, 'properties'), k), false, meta || (embedded && META_FIELDS.has(k)), errs);
  }
}
