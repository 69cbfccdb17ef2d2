/**
 * One CRD version's `openAPIV3Schema` compiled for serving: an ajv validator (built once per CRD
 * change) whose errors are translated into the causes kube-apiserver 1.24 reports (kube-openapi's
 * validator messages through apiextensions' `ValidateCustomResource`), plus kube's structural
 * pruning, defaulting, embedded-resource and list-type checks, and the schema in plinth's own
 * `Schema` form for server-side apply and OpenAPI.
 */
import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv';
import type { RegExpEngine } from 'ajv/dist/types/index.js';
import type { FieldError } from '../field-errors.js';
import { fieldErr } from '../field-errors.js';
import type { Schema } from '../schema.js';
import { isPlainObject } from '../types.js';
import { getOwn, setMember } from '../json.js';
import { formatCheck } from './formats.js';
import { type GoRegExp, GoRegExpSyntaxError, compileGoRegExp } from './go-regexp.js';
import { goFloat, goValue } from './gofmt.js';
import { EXACT_ENUM, ajvEnum, exactAjvSchema, exactJsonType, exactKeyword } from './exact-numbers.js';
import { hasExactNumbers, isJsonInteger, stringifyJson } from '../number-codec.js';
import {
  type StructuralNode,
  coerceEmbedded,
  compileDefaulter,
  compileListTypeValidator,
  prune,
  pruneNonNullableNulls,
  someNode,
  toStructural,
  validateEmbedded,
} from './structural.js';

/** The compiled form of one version's openAPIV3Schema, built once per CRD change. */
export interface CompiledVersionSchema {
  /**
   * 422 causes for an object of this version as kube's apiextensions validator reports them
   * (field paths from the object root, e.g. `spec.size`). apiVersion/kind/metadata are not
   * validated here.
   */
  validate(obj: Record<string, unknown>): FieldError[];
  /** Applies `default`s in place (kube's structural defaulting, incl. defaults inside arrays/maps items). */
  applyDefaults(obj: Record<string, unknown>): void;
  /**
   * Drops fields the schema does not declare, in place (kube's pruning: honours
   * x-kubernetes-preserve-unknown-fields and x-kubernetes-embedded-resource (keeps
   * apiVersion/kind/metadata there)); apiVersion/kind/metadata at the root are kept. As kube's
   * decoder does next, nulls the schema does not allow and has no default for are dropped too,
   * and an embedded resource's metadata keeps only ObjectMeta fields.
   */
  prune(obj: Record<string, unknown>): void;
  /**
   * The schema in plinth's own `Schema` form: for server-side apply (list types, map types) and
   * for OpenAPI publishing. Root properties only, without apiVersion/kind/metadata.
   */
  schema: Schema;
}

type Raw = Record<string, unknown>;

/** Marks on the ajv form of a schema node, read back when translating errors. */
const TYPE_NAME = 'x-plinth-type';
const FORMAT_NAME = 'x-plinth-format';

/** JSON type names as kube-openapi infers them from decoded JSON (int64 → integer, float64 → number). */
function jsonType(v: unknown): string {
  return exactJsonType(v);
}

/**
 * What toAjv gathers for one ajv instance: the formats it checks and the CRD's patterns, compiled
 * once per CRD version as Go's regexps (linear-time matching; see go-regexp.ts).
 */
interface AjvContext {
  formats: Map<string, (s: string) => boolean>;
  patterns: Map<string, GoRegExp>;
}

/** ajv's regExp engine over the patterns toAjv compiled (ajv passes its own flags: Go has none). */
function regExpEngine(patterns: ReadonlyMap<string, GoRegExp>): RegExpEngine {
  return Object.assign((pattern: string) => patterns.get(pattern) ?? compileGoRegExp(pattern), { code: 'compileGoRegExp' });
}

const PASSTHROUGH_NUMBERS = ['maxLength', 'minLength', 'maxItems', 'minItems', 'maxProperties', 'minProperties'] as const;

/**
 * The ajv form of a JSONSchemaProps: types with nullability, value validations, supported formats,
 * and the nested schemas; the rest (defaults, descriptions, extensions) dropped.
 */
function toAjv(raw: unknown, ctx: AjvContext): Raw {
  const s = isPlainObject(raw) ? raw : {};
  const out: Raw = {};
  let types: string[] = [];
  if (s['x-kubernetes-int-or-string'] === true) types = ['integer', 'string'];
  else if (typeof s['type'] === 'string' && s['type'] !== '') types = [s['type']];
  if (types.length > 0) {
    out[TYPE_NAME] = types.join(',');
    const ajvTypes = s['nullable'] === true ? [...types, 'null'] : types;
    out['type'] = ajvTypes.length === 1 ? ajvTypes[0] : ajvTypes;
  }
  const format = typeof s['format'] === 'string' ? s['format'] : undefined;
  const check = formatCheck(format, typeof s['type'] === 'string' ? s['type'] : undefined);
  if (check && format) {
    const name = format.replace(/-/g, '');
    ctx.formats.set(name, check);
    out['format'] = name;
    out[FORMAT_NAME] = format;
  }
  if (Array.isArray(s['enum'])) Object.assign(out, ajvEnum(s['enum']));
  // int64 in the CRD (a BigInt above 2^53): no string or list is that long either way.
  for (const k of PASSTHROUGH_NUMBERS) if (typeof s[k] === 'number' || typeof s[k] === 'bigint') out[k] = Number(s[k]);
  // maximum, minimum and multipleOf are float64s in a CRD: a BigInt there (2^53 and above) is rounded, as Go does.
  const bound = (k: string): number | undefined => (typeof s[k] === 'number' || typeof s[k] === 'bigint' ? Number(s[k]) : undefined);
  const maximum = bound('maximum');
  const minimum = bound('minimum');
  const multipleOf = bound('multipleOf');
  if (maximum !== undefined) out[s['exclusiveMaximum'] === true ? 'exclusiveMaximum' : 'maximum'] = maximum;
  if (minimum !== undefined) out[s['exclusiveMinimum'] === true ? 'exclusiveMinimum' : 'minimum'] = minimum;
  if (multipleOf !== undefined && multipleOf > 0) out['multipleOf'] = multipleOf;
  if (s['uniqueItems'] === true) out['uniqueItems'] = true;
  // A pattern Go refuses never passed CRD validation; one stored before is ignored, not fatal.
  const pattern = s['pattern'];
  if (typeof pattern === 'string' && !ctx.patterns.has(pattern)) {
    try {
      ctx.patterns.set(pattern, compileGoRegExp(pattern));
    } catch (e) {
      if (!(e instanceof GoRegExpSyntaxError)) throw e;
    }
  }
  if (typeof pattern === 'string' && ctx.patterns.has(pattern)) out['pattern'] = pattern;
  if (Array.isArray(s['required'])) out['required'] = s['required'].filter((r) => typeof r === 'string');
  if (isPlainObject(s['properties'])) {
    const props: Raw = {};
    for (const [k, v] of Object.entries(s['properties'])) {
      // ajv skips a property named `__proto__` (its allSchemaProperties): the same schema as an
      // exact pattern still validates that member, and ajv then counts it as declared.
      if (k === '__proto__') out['patternProperties'] = { '^__proto__$': toAjv(v, ctx) };
      else props[k] = toAjv(v, ctx);
    }
    out['properties'] = props;
  }
  const ap = s['additionalProperties'];
  if (typeof ap === 'boolean') out['additionalProperties'] = ap;
  else if (isPlainObject(ap)) out['additionalProperties'] = toAjv(ap, ctx);
  if (isPlainObject(s['items'])) out['items'] = toAjv(s['items'], ctx);
  for (const k of ['allOf', 'anyOf', 'oneOf'] as const) {
    const list = s[k];
    if (Array.isArray(list) && list.length > 0) out[k] = list.map((x) => toAjv(x, ctx));
  }
  if (isPlainObject(s['not'])) out['not'] = toAjv(s['not'], ctx);
  return out;
}

/**
 * The schema in plinth's `Schema` form (type, description, properties, items, maps, enum and the
 * x-kubernetes extensions server-side apply reads).
 */
function toPlinthSchema(raw: unknown): Schema {
  const s = isPlainObject(raw) ? raw : {};
  const out: Schema = {};
  const type = s['type'];
  if (type === 'object' || type === 'array' || type === 'string' || type === 'integer' || type === 'number' || type === 'boolean') out.type = type;
  if (typeof s['format'] === 'string' && s['format']) out.format = s['format'];
  if (typeof s['description'] === 'string' && s['description']) out.description = s['description'];
  if (isPlainObject(s['properties'])) {
    const props: Record<string, Schema> = {};
    for (const [k, v] of Object.entries(s['properties'])) setMember(props, k, toPlinthSchema(v));
    out.properties = props;
  }
  if (isPlainObject(s['additionalProperties'])) out.additionalProperties = toPlinthSchema(s['additionalProperties']);
  if (isPlainObject(s['items'])) out.items = toPlinthSchema(s['items']);
  if (Array.isArray(s['required']) && s['required'].length > 0) out.required = s['required'].filter((r): r is string => typeof r === 'string');
  if (Array.isArray(s['enum']) && s['enum'].length > 0) out.enum = s['enum'] as string[];
  if (s['x-kubernetes-preserve-unknown-fields'] === true) out['x-kubernetes-preserve-unknown-fields'] = true;
  if (s['x-kubernetes-int-or-string'] === true) out['x-kubernetes-int-or-string'] = true;
  if (s['x-kubernetes-embedded-resource'] === true) out['x-kubernetes-embedded-resource'] = true;
  if (s['nullable'] === true) out.nullable = true;
  const lt = s['x-kubernetes-list-type'];
  if (lt === 'atomic' || lt === 'set' || lt === 'map') out['x-kubernetes-list-type'] = lt;
  if (Array.isArray(s['x-kubernetes-list-map-keys'])) out['x-kubernetes-list-map-keys'] = s['x-kubernetes-list-map-keys'].filter((k): k is string => typeof k === 'string');
  const mt = s['x-kubernetes-map-type'];
  if (mt === 'atomic' || mt === 'granular') out['x-kubernetes-map-type'] = mt;
  return out;
}

/** A JSON pointer's segments (`/spec/a~1b/0` → spec, a/b, 0). */
function pointerSegments(pointer: string): string[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** A JSON pointer into `data` as kube-openapi names the place: `spec.items[0].name`. */
function kubePath(data: unknown, pointer: string): string {
  let path = '';
  let cur: unknown = data;
  for (const seg of pointerSegments(pointer)) {
    if (Array.isArray(cur)) {
      path += `[${seg}]`;
      cur = cur[Number(seg)];
    } else {
      path = path ? `${path}.${seg}` : seg;
      cur = isPlainObject(cur) ? getOwn(cur, seg) : undefined;
    }
  }
  return path;
}

/** A limit in a message: `%d` when the value is an integer (kube-openapi's *Int checks), else `%v`. */
function limitText(limit: number, value: unknown): string {
  return isJsonInteger(value) ? String(Math.trunc(limit)) : goFloat(limit);
}

/** kube-openapi's composite errors have no field: apiextensions reports them at `<nil>` with value "". */
const compositeError = (detail: string): FieldError => fieldErr.invalid('<nil>', '', detail);

/** One ajv error as kube's cause (kube-openapi message, apiextensions' FieldError mapping). */
function translate(e: ErrorObject, root: unknown): FieldError | undefined {
  const name = kubePath(root, e.instancePath);
  const data = e.data;
  const p = e.params as Record<string, unknown>;
  const invalid = (detail: string, value: unknown = data): FieldError => fieldErr.invalid(name, goValue(value), `${name} in body ${detail}`);
  switch (e.keyword) {
    case 'type': {
      const declared = String(e.parentSchema?.[TYPE_NAME] ?? p['type']);
      const actual = jsonType(data);
      return fieldErr.invalid(name, actual, `${name} in body must be of type ${declared}: ${JSON.stringify(actual)}`);
    }
    case 'required': {
      const missing = String(p['missingProperty']);
      return fieldErr.required(name ? `${name}.${missing}` : missing);
    }
    case 'enum': {
      const allowed = ((e.parentSchema?.[EXACT_ENUM] ?? p['allowedValues']) as unknown[]) ?? [];
      return fieldErr.notSupported(name, goValue(data), allowed.map((v) => (typeof v === 'string' ? v : stringifyJson(v))));
    }
    case 'maxLength':
      return invalid(`should be at most ${String(p['limit'])} chars long`);
    case 'minLength':
      return invalid(`should be at least ${String(p['limit'])} chars long`);
    case 'pattern':
      return invalid(`should match '${String(p['pattern'])}'`);
    case 'format': {
      const format = String(e.parentSchema?.[FORMAT_NAME] ?? p['format']);
      return invalid(`must be of type ${format}: ${JSON.stringify(data)}`);
    }
    case 'maximum':
      return invalid(`should be less than or equal to ${limitText(Number(p['limit']), data)}`);
    case 'exclusiveMaximum':
      return invalid(`should be less than ${limitText(Number(p['limit']), data)}`);
    case 'minimum':
      return invalid(`should be greater than or equal to ${limitText(Number(p['limit']), data)}`);
    case 'exclusiveMinimum':
      return invalid(`should be greater than ${limitText(Number(p['limit']), data)}`);
    case 'multipleOf':
      return invalid(`should be a multiple of ${limitText(Number(p['multipleOf']), data)}`);
    case 'maxItems':
      return invalid(`should have at most ${String(p['limit'])} items`, Array.isArray(data) ? data.length : data);
    case 'minItems':
      return invalid(`should have at least ${String(p['limit'])} items`, Array.isArray(data) ? data.length : data);
    case 'uniqueItems':
      return invalid(`shouldn't contain duplicates`, '');
    case 'maxProperties':
      return invalid(`should have at most ${String(p['limit'])} properties`, p['limit']);
    case 'minProperties':
      return invalid(`should have at least ${String(p['limit'])} properties`, p['limit']);
    case 'additionalProperties': {
      const key = String(p['additionalProperty']);
      return fieldErr.invalid(name, key, `${name}.${key} in body is a forbidden property`);
    }
    case 'anyOf':
      return compositeError(`${JSON.stringify(name)} must validate at least one schema (anyOf)`);
    case 'oneOf': {
      const passing = p['passingSchemas'];
      const found = Array.isArray(passing) ? `Found ${passing.length} valid alternatives` : 'Found none valid';
      return compositeError(`${JSON.stringify(name)} must validate one and only one schema (oneOf). ${found}`);
    }
    case 'not':
      return compositeError(`${JSON.stringify(name)} must not validate the schema (not)`);
    default:
      return undefined;
  }
}

/**
 * ajv reports every failing branch of an anyOf/oneOf; kube-openapi keeps the errors of one (the
 * first of the best) besides the composite error. Keep the first branch's.
 */
function dropOtherBranches(errors: readonly ErrorObject[]): ErrorObject[] {
  const junctions = errors.filter((e) => e.keyword === 'anyOf' || e.keyword === 'oneOf').map((e) => e.schemaPath);
  if (junctions.length === 0) return [...errors];
  return errors.filter((e) => !junctions.some((j) => e.schemaPath.startsWith(`${j}/`) && !e.schemaPath.startsWith(`${j}/0/`)));
}

class Compiled implements CompiledVersionSchema {
  readonly schema: Schema;
  readonly #structural: StructuralNode;
  readonly #validate: ValidateFunction;
  readonly #listTypes: ((x: unknown, errs: FieldError[]) => void) | undefined;
  readonly #hasEmbedded: boolean;
  readonly #defaults: ((x: unknown) => void) | undefined;
  /** For the exact validator (exact-numbers.ts), compiled on first need. */
  readonly #ajvSchema: Raw;
  readonly #ajvOptions: Options;
  #exact: ValidateFunction | undefined;

  constructor(raw: unknown, full = true) {
    const ctx: AjvContext = { formats: new Map(), patterns: new Map() };
    const ajvSchema = toAjv(raw, ctx);
    this.#ajvSchema = ajvSchema;
    const ajv = new Ajv((this.#ajvOptions = {
      allErrors: true,
      verbose: true,
      strict: false,
      validateSchema: false,
      addUsedSchema: false,
      // Members are the object's own: `constructor` or `toString` in a custom resource is a field
      // like any other, present only when sent.
      ownProperties: true,
      code: { regExp: regExpEngine(ctx.patterns) },
      formats: Object.fromEntries(ctx.formats),
    }));
    this.#validate = ajv.compile(ajvSchema);
    if (!full) {
      this.#structural = { type: '', nullable: false, default: undefined, preserveUnknownFields: true, embeddedResource: false, intOrString: false };
      this.#hasEmbedded = false;
      this.#listTypes = this.#defaults = undefined;
      this.schema = {};
      return;
    }
    this.#structural = toStructural(raw);
    // Walks compiled here visit only the parts of an object where they have work.
    this.#listTypes = compileListTypeValidator(this.#structural);
    this.#hasEmbedded = someNode(this.#structural, (n) => n.embeddedResource);
    this.#defaults = compileDefaulter(this.#structural);
    const root = toPlinthSchema(raw);
    if (root.properties) {
      const { apiVersion: _a, kind: _k, metadata: _m, ...rest } = root.properties;
      root.properties = rest;
      if (root.required) root.required = root.required.filter((r) => r !== 'apiVersion' && r !== 'kind' && r !== 'metadata');
    }
    this.schema = root;
  }

  /** The kube-openapi part of validation: the schema's keywords. */
  schemaErrors(value: unknown, isObject = false): FieldError[] {
    // Numbers a float64 cannot hold exactly take the exact validator; the usual object costs a walk
    // (of what the client wrote: the server writes an object's metadata numbers).
    const validate = hasExactNumbers(value, isObject ? 'metadata' : undefined) ? this.#exactValidator() : this.#validate;
    if (validate(value)) return [];
    const errs: FieldError[] = [];
    for (const e of dropOtherBranches(validate.errors ?? [])) {
      const fe = translate(e, value);
      if (fe) errs.push(fe);
    }
    return errs;
  }

  #exactValidator(): ValidateFunction {
    this.#exact ??= new Ajv({ ...this.#ajvOptions, keywords: [exactKeyword] }).compile(exactAjvSchema(this.#ajvSchema));
    return this.#exact;
  }

  validate(obj: Record<string, unknown>): FieldError[] {
    const errs = this.schemaErrors(obj, true);
    if (this.#hasEmbedded) validateEmbedded(obj, this.#structural, '', errs);
    this.#listTypes?.(obj, errs);
    return errs;
  }

  applyDefaults(obj: Record<string, unknown>): void {
    this.#defaults?.(obj);
  }

  prune(obj: Record<string, unknown>): void {
    prune(obj, this.#structural, true);
    pruneNonNullableNulls(obj, this.#structural);
    if (this.#hasEmbedded) {
      for (const [k, v] of Object.entries(obj)) {
        const prop = this.#structural.properties?.get(k);
        if (prop && k !== 'metadata') coerceEmbedded(v, prop);
      }
    }
  }
}

/**
 * The schema errors (kube-openapi's part only) of `value` against `raw`, their fields under
 * `prefix` (kube's ValidateCustomResource with a field path, as the defaults check uses it).
 */
export function compileSchemaErrors(raw: unknown, value: unknown, prefix: string): FieldError[] {
  const c = new Compiled(raw, false);
  return c.schemaErrors(value).map((e) => ({ ...e, field: e.field === '<nil>' ? prefix : e.field ? `${prefix}.${e.field}` : prefix }));
}

/**
 * Compiles one version's `openAPIV3Schema` (a validated, structural JSONSchemaProps). Compile once
 * per CRD change; every method is then cheap per request.
 */
export function compileVersionSchema(openAPIV3Schema: unknown): CompiledVersionSchema {
  return new Compiled(openAPIV3Schema);
}
