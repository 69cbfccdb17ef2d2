/**
 * PATCH: JSON patch (RFC 6902), merge patch (RFC 7386), strategic merge patch, and server-side
 * apply (`application/apply-patch+yaml`), each through the same defaulting, validation,
 * admission and optimistic-concurrency path as PUT (kube's handlers/patch.go).
 */
import { servesProtobuf } from '../protobuf/codec.js';
import {
  PatchError,
  StatusError,
  applyJsonPatch,
  applyMergePatch,
  applyStrategicMergePatch,
  apiVersionOf,
  badRequest,
  fieldErr,
  invalid,
  isPlainObject,
  unsupportedMediaType,
  type FieldError,
  type ResourceStrategy,
  type StoredObject,
  NestingTooDeepError,
  exceedsNestingDepth,
  isNestingTooDeep,
  numberOverflowIn,
  JsonNumberRangeError,
} from '@plinth/api';
import { negotiate } from '../negotiation.js';
import { parseJsonText, readBody, writeObject } from '../http.js';
import { parseYamlOffLoop } from '../yaml-off-loop.js';
import { checkPatchedNumbers, decodeInto, fullSchemaOf, schemaDefinitions } from '../registry/codec.js';
import type { PatchOperation } from '../registry/store.js';
import { parseDryRun, parseFieldManager } from './options.js';
import { checkName } from './update.js';
import { fieldValidationOf, reportUnknownFields, type FieldValidation } from './body.js';
import type { ResourceRequest } from './scope.js';
import { auditRequestPatch } from '../audit/filter.js';

type PatchType = 'json' | 'merge' | 'strategic' | 'apply';

/** By media type (a Map: a Content-Type such as `constructor` is no patch type). */
const PATCH_TYPES: ReadonlyMap<string, PatchType> = new Map([
  ['application/json-patch+json', 'json'],
  ['application/merge-patch+json', 'merge'],
  ['application/strategic-merge-patch+json', 'strategic'],
  ['application/apply-patch+yaml', 'apply'],
]);
const ALL_PATCH_TYPES = [...PATCH_TYPES.keys()];
/** kube offers the apply patch type only with ServerSideApply on. */
const PATCH_TYPES_WITHOUT_APPLY = ALL_PATCH_TYPES.filter((t) => PATCH_TYPES.get(t) !== 'apply');

/** kube's error for a patch that cannot be applied (NewGenericServerResponse with the code). */
function patchFailed(e: PatchError): StatusError {
  if (e.code === 400) return badRequest(e.message);
  if (e.code === 422) {
    return new StatusError({
      code: 422,
      reason: 'Invalid',
      message: 'the server rejected our request due to an error in our request',
      details: { causes: [{ reason: 'UnexpectedServerResponse', message: e.message }] },
    });
  }
  if (e.code === 413) return new StatusError({ code: 413, reason: 'RequestEntityTooLarge', message: e.message });
  return new StatusError({ code: e.code, reason: '', message: e.message });
}

function parseJson(body: Buffer): unknown {
  try {
    // Numbers beyond float64 stay in place: kube keeps patch literals raw (checkPatchedNumbers).
    return parseJsonText(body.toString('utf8'), 'the patch', { marks: true });
  } catch (e) {
    if (isNestingTooDeep(e)) throw e;
    throw badRequest(`error decoding patch: ${(e as Error).message}`);
  }
}

/** kube's ValidatePatchOptions, and the force and field manager a PATCH asks for. */
export function patchOptions(query: URLSearchParams, apply: boolean, userAgent: string | undefined): { force: boolean; manager: string } {
  const errs: FieldError[] = [];
  const forceParam = query.get('force');
  if (forceParam !== null && !apply) errs.push(fieldErr.forbidden('force', 'may not be specified for non-apply patch'));
  if (apply && !query.get('fieldManager')) errs.push(fieldErr.required('fieldManager', 'is required for apply patch'));
  if (errs.length > 0) throw invalid({ group: 'meta.k8s.io', kind: 'PatchOptions' }, '', errs);
  if (forceParam !== null && !['', 'true', 'false', '1', '0'].includes(forceParam)) throw badRequest(`invalid value for force: ${forceParam}`);
  const force = forceParam === 'true' || forceParam === '1' || forceParam === '';
  return { force, manager: parseFieldManager(query, userAgent, 'PatchOptions') };
}

/**
 * The body of an apply patch: a YAML (or JSON) object with apiVersion and kind. kube decodes it
 * with sigs.k8s.io/yaml, for which JSON is YAML that decodes to the same value (a duplicate key
 * keeps its last value in both), so a JSON body is read by JSON.parse, ~50 times faster than the
 * YAML parser. `duplicateKeys` (a strict decode, fieldValidation Strict or Warn) takes the YAML
 * path for any body, which reports duplicates as yaml.v2's strict decode does.
 */
export async function parseApplyBody(body: Buffer, duplicateKeys?: string[]): Promise<Record<string, unknown>> {
  const text = body.toString('utf8');
  let raw: unknown;
  let parsed = false;
  if (!duplicateKeys && /^\s*\{/.test(text)) {
    try {
      raw = parseJsonText(text, 'the YAML document');
      parsed = true;
    } catch (e) {
      if (isNestingTooDeep(e)) throw e;
      // Not JSON (a YAML flow mapping such as `{a: 1}`): the YAML parser decides.
    }
  }
  if (!parsed) {
    try {
      raw = await parseYamlOffLoop(text, duplicateKeys ? { duplicateKeys } : {});
    } catch (e) {
      if (isNestingTooDeep(e)) throw e;
      throw badRequest(`error decoding YAML: ${(e as Error).message}`);
    }
  }
  if (!isPlainObject(raw)) throw badRequest('the object provided is unrecognized: an apply patch must be an object');
  for (const field of ['apiVersion', 'kind'] as const) {
    if (typeof raw[field] !== 'string' || !raw[field]) throw badRequest(`Object '${field === 'kind' ? 'Kind' : field}' is missing in '${JSON.stringify(raw)}'`);
  }
  return raw;
}

/**
 * kube's strict YAML check of an apply body (fieldValidation Strict or Warn, applyPatcher in
 * 1.24's handlers/patch.go): Strict is a 400 naming every duplicate key, Warn a warning each.
 */
function reportApplyDuplicates(r: ResourceRequest, validation: FieldValidation, duplicates: readonly string[]): void {
  if (duplicates.length === 0) return;
  if (validation === 'Strict') {
    throw badRequest(`error strict decoding YAML: error converting YAML to JSON: yaml: unmarshal errors:\n  ${duplicates.join('\n  ')}`);
  }
  for (const d of duplicates) r.scope.warn?.(d);
}

/** `strategy`: a sub-resource's (status), whose patch never creates and is tracked under its name. */
export async function handlePatch(r: ResourceRequest, strategy: ResourceStrategy = r.def.strategy): Promise<void> {
  const format = negotiate(r.req.headers.accept, { allowTable: false, allowProtobuf: servesProtobuf(r.def) });
  const mediaType = (r.req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  const type = PATCH_TYPES.get(mediaType);
  const ssa = r.features.enabled('ServerSideApply');
  if (!type || (type === 'apply' && !ssa)) throw unsupportedMediaType(ssa ? ALL_PATCH_TYPES : PATCH_TYPES_WITHOUT_APPLY);
  const dryRun = parseDryRun(r.query, 'PatchOptions');

  const { force, manager } = patchOptions(r.query, type === 'apply', r.req.headers['user-agent']);
  const validation = fieldValidationOf(r, 'PatchOptions');
  const unknown: string[] | undefined = validation === 'Ignore' ? undefined : [];

  const body = await readBody(r.req);
  let op: PatchOperation;
  if (type === 'apply') {
    const duplicates: string[] | undefined = validation === 'Ignore' ? undefined : [];
    const raw = await parseApplyBody(body, duplicates);
    if (duplicates) reportApplyDuplicates(r, validation, duplicates);
    auditRequestPatch(r.req, raw);
    // kube reads an apply body without a typed decode: the field manager's version check answers.
    const expected = apiVersionOf(r.def);
    if (raw['apiVersion'] !== expected) {
      throw badRequest(`Incorrect version specified in apply patch. Specified patch version: ${String(raw['apiVersion'])}, expected: ${expected}`);
    }
    const applied = decodeInto(r.def, r.catalog, raw, false, unknown);
    if (unknown) reportUnknownFields(r, validation, r.def, unknown);
    checkName(r, applied.metadata.name, applied.metadata.namespace);
    op = { kind: 'apply', applied, force };
  } else {
    const patch = parseJson(body);
    auditRequestPatch(r.req, patch);
    // kube decodes a strategic merge patch (and any patch under Strict/Warn field validation) into
    // Go values first: a number beyond float64 is a 400 there (patch.go strategicPatchObject).
    const overflow = numberOverflowIn(patch);
    if (overflow !== undefined && (type === 'strategic' || validation !== 'Ignore')) {
      const why = new JsonNumberRangeError(overflow).message;
      throw badRequest(type === 'strategic' ? why : `error decoding patch: ${why}`);
    }
    const schema = fullSchemaOf(r.def);
    const defs = schemaDefinitions();
    op = {
      kind: 'patch',
      apply: (current: StoredObject): StoredObject => {
        let patched: unknown;
        try {
          if (type === 'json') patched = applyJsonPatch(current, patch);
          else if (type === 'merge') patched = applyMergePatch(current, patch);
          else patched = applyStrategicMergePatch(current, patch, schema, defs);
        } catch (e) {
          if (e instanceof PatchError) throw patchFailed(e);
          throw e;
        }
        // A JSON patch can nest the object deeper than its own text does (copy into itself).
        if (exceedsNestingDepth(patched)) throw new NestingTooDeepError('the patched object');
        if (numberOverflowIn(patch) !== undefined) checkPatchedNumbers(r.def, patched);
        // Unknown fields of the patched object (a retry starts over: each is reported once).
        if (unknown) unknown.length = 0;
        const decoded = decodeInto(r.def, r.catalog, patched, true, unknown);
        if (unknown) reportUnknownFields(r, validation, r.def, unknown);
        checkName(r, decoded.metadata.name, decoded.metadata.namespace);
        return decoded;
      },
    };
  }
  // ServerSideApply off: kube builds no field manager, so managedFields are not tracked.
  const { object, created } = await r.store.patch(r.scope, r.target.name, op, { dryRun, manager: ssa ? manager : undefined, fieldManager: r.query.get('fieldManager') || undefined }, strategy);
  writeObject(r.req, r.res, r.query, created ? 201 : 200, object, format);
}
