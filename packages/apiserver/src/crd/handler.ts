/**
 * What custom resources are served with besides the generic handlers (kube's crdHandler):
 *  - JSON and YAML only: a Protobuf body is a 415, an Accept of only Protobuf a 406, and a client
 *    that prefers Protobuf but takes JSON gets JSON;
 *  - no strategic merge patch (415 naming the patch types it takes);
 *  - no create while the CRD is being deleted (405);
 *  - the scale sub-resource (an autoscaling/v1 Scale read from and written to the paths the CRD
 *    names).
 * Everything else goes to the generic handlers, which serve custom resources from the catalog
 * (the status sub-resource included: its strategy is the definition's).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  FieldManager,
  FieldSet,
  OPTIMISTIC_LOCK_MESSAGE,
  PatchError,
  StatusError,
  apiVersionOf,
  applyJsonPatch,
  applyMergePatch,
  badRequest,
  conflict,
  decodeManagedFields,
  encodeManagedFields,
  groupResourceOf,
  internalError,
  isPlainObject,
  methodNotSupported,
  pathOf,
  unsupportedMediaType,
  type Catalog,
  type Managed,
  type ManagedFieldsEntry,
  type ResourceDefinition,
  type StoredObject,
  getOwn,
  setMember,
} from '@plinth/api';
import { operationOptions, type AdmissionAttributes, type AdmissionChain } from '@plinth/admission';
import { contextOf, type Handler } from '../context.js';
import { targetOf } from '../handlers/target.js';
import { PROTOBUF_MEDIA_TYPES, bodyEncoding, negotiate, type ResponseFormat } from '../negotiation.js';
import { addWarning, parseBody, parseJsonText, readBody, writeObject } from '../http.js';
import { decodeInto, fullSchemaOf, schemaDefinitions } from '../registry/codec.js';
import { now, type RequestScope, type ResourceStore } from '../registry/store.js';
import { parseDryRun, parseFieldManager } from '../handlers/options.js';
import { parseApplyBody, patchOptions } from '../handlers/patch.js';
import { customResourceInfo, scaleKind, valueAtPath } from './definitions.js';
import type { CRDScale } from './types.js';

const BODY_TYPES = ['application/json', 'application/yaml'];
const PATCH_TYPES = ['application/json-patch+json', 'application/merge-patch+json', 'application/apply-patch+yaml'];

export interface CustomResourceHandlerDeps {
  catalog: Catalog;
  stores: ReadonlyMap<ResourceDefinition, ResourceStore>;
  /** Admits scale writes as kube does: as the `scale` sub-resource with Scale objects. */
  admission: AdmissionChain;
}

const mediaTypeOf = (header: string | undefined): string => (header ?? '').split(';')[0]!.trim().toLowerCase();

/** Whether a media range asks for meta.k8s.io PartialObjectMetadata(List), which has a Protobuf form for every resource. */
const isPartialMetadataRange = (part: string): boolean =>
  part
    .split(';')
    .slice(1)
    .some((p) => /^as=PartialObjectMetadata(List)?$/.test(p.trim()));

/**
 * The Accept header without its Protobuf ranges (custom resources have no Protobuf form), except
 * those asking for metadata only.
 */
function withoutProtobuf(accept: string): string {
  return accept
    .split(',')
    .filter((part) => !PROTOBUF_MEDIA_TYPES.includes(mediaTypeOf(part)) || isPartialMetadataRange(part))
    .join(',');
}

/** Serves custom resources' special cases; passes every other request to `next`. */
export function withCustomResources(next: Handler, deps: CustomResourceHandlerDeps): Handler {
  return async (req, res) => {
    const { info, user } = contextOf(req);
    const target = targetOf(req);
    const { def } = target;
    const cr = customResourceInfo(def);
    const store = cr ? deps.stores.get(def) : undefined;
    if (!cr || !store) return next(req, res);

    const accept = req.headers.accept;
    if (accept) {
      // 406 when nothing but Protobuf is acceptable; the generic handlers then never pick it.
      negotiate(accept, { allowTable: true, allowProtobuf: false, allowPartial: info.verb === 'get' || info.verb === 'list' || info.verb === 'watch' });
      if (PROTOBUF_MEDIA_TYPES.some((t) => accept.toLowerCase().includes(t))) req.headers.accept = withoutProtobuf(accept);
    }
    const contentType = mediaTypeOf(req.headers['content-type']);
    if (info.verb === 'patch') {
      if (!PATCH_TYPES.includes(contentType)) throw unsupportedMediaType(PATCH_TYPES);
    } else if ((info.verb === 'create' || info.verb === 'update') && PROTOBUF_MEDIA_TYPES.includes(contentType)) {
      throw unsupportedMediaType(BODY_TYPES);
    }
    if (info.verb === 'create' && !target.subresource && cr.lifecycle.terminating) {
      const e = methodNotSupported(groupResourceOf(def), info.verb);
      throw new StatusError({ code: e.code, reason: e.reason, message: 'create not allowed while custom resource definition is terminating', ...(e.details ? { details: e.details } : {}) });
    }
    if (target.subresource?.name === 'scale' && cr.scale) {
      return serveScale(req, res, {
        def,
        store,
        scale: cr.scale,
        catalog: deps.catalog,
        admission: deps.admission,
        name: target.name,
        scope: { user: user!, namespace: target.namespace, warn: (m) => addWarning(res, m) },
      });
    }
    return next(req, res);
  };
}

const jsonFormat = (req: IncomingMessage): ResponseFormat => negotiate(req.headers.accept, { allowTable: false, allowProtobuf: false });

/** A JSON or merge patch over `current`, as the patch handler words its failures. */
function jsonOrMergePatch(type: string, body: Buffer): (current: StoredObject) => unknown {
  let patch: unknown;
  try {
    patch = parseJsonText(body.toString('utf8'), 'the patch', { marks: true });
  } catch (e) {
    if (e instanceof StatusError) throw e;
    throw badRequest(`error decoding patch: ${(e as Error).message}`);
  }
  return (current) => {
    try {
      return type === 'application/json-patch+json' ? applyJsonPatch(current, patch) : applyMergePatch(current, patch);
    } catch (e) {
      if (e instanceof PatchError) throw new StatusError({ code: e.code, reason: e.code === 422 ? 'Invalid' : e.code === 400 ? 'BadRequest' : '', message: e.message });
      throw e;
    }
  };
}

const SCALE_API_VERSION = 'autoscaling/v1';
/** kube's placeholder for a custom resource without spec replicas: a write must set them. */
const INVALID_SPEC_REPLICAS = -2147483648;
const REPLICAS_IN_SCALE = pathOf('spec', 'replicas');

/** The Scale's field manager (kube's scale FieldManager: sub-resource `scale`, no reset fields). */
let scaleFieldManager: FieldManager | undefined;
function scaleFields(): FieldManager {
  return (scaleFieldManager ??= new FieldManager({ schema: fullSchemaOf(scaleKind), defs: schemaDefinitions() }));
}

const pathOfJSONPath = (p: string) => pathOf(...p.replace(/^\./, '').split('.'));

function decodeOrEmpty(entries: unknown): Managed {
  try {
    return decodeManagedFields(entries);
  } catch {
    return decodeManagedFields(undefined);
  }
}

/**
 * kube's ScaleHandler.ToSubresource: the parent's managedFields entries that own the replicas
 * path, as Scale entries owning spec.replicas.
 */
function toScaleEntries(parent: ManagedFieldsEntry[] | undefined, replicasPath: string): ManagedFieldsEntry[] {
  const managed = decodeOrEmpty(parent);
  const path = pathOfJSONPath(replicasPath);
  const out: Managed = { sets: new Map(), times: new Map() };
  for (const [id, vs] of managed.sets) {
    if (!vs.set.has(path)) continue;
    out.sets.set(id, { set: FieldSet.fromPaths([REPLICAS_IN_SCALE]), apiVersion: SCALE_API_VERSION, applied: vs.applied });
    const t = managed.times.get(id);
    if (t) out.times.set(id, t);
  }
  return encodeManagedFields(out);
}

/**
 * kube's ScaleHandler.ToParent: the Scale's entries merged back into the parent's. A parent entry
 * owning the replicas path that the Scale's entries no longer have loses it (dropped when
 * nothing is left); every other Scale entry becomes an entry owning the replicas path in the
 * parent's version (with the parent's time of that manager, as kube does).
 */
function toParentEntries(parent: ManagedFieldsEntry[] | undefined, scaleEntries: unknown, replicasPath: string, parentApiVersion: string): ManagedFieldsEntry[] {
  const parentManaged = decodeOrEmpty(parent);
  const scaleManaged = decodeOrEmpty(scaleEntries);
  const path = pathOfJSONPath(replicasPath);
  const only = FieldSet.fromPaths([path]);
  const out: Managed = { sets: new Map(), times: new Map() };
  const keep = (id: string, vs: Managed['sets'] extends Map<string, infer V> ? V : never): void => {
    out.sets.set(id, vs);
    const t = parentManaged.times.get(id);
    if (t) out.times.set(id, t);
  };
  const scaleSets = new Map(scaleManaged.sets);
  for (const [id, vs] of parentManaged.sets) {
    if (!vs.set.has(path)) keep(id, vs);
    else if (!scaleSets.has(id)) {
      const rest = vs.set.difference(only);
      if (!rest.isEmpty()) keep(id, { ...vs, set: rest });
    } else {
      keep(id, vs);
      scaleSets.delete(id);
    }
  }
  for (const [id, vs] of scaleSets) keep(id, { set: only, apiVersion: parentApiVersion, applied: vs.applied });
  return encodeManagedFields(out);
}

/** kube's scaleFromCustomResource: an autoscaling/v1 Scale of the object. */
function scaleOf(obj: StoredObject, scale: CRDScale, forWrite = false): StoredObject {
  const int = (path: string): number | undefined => {
    const v = valueAtPath(obj, path).value;
    return typeof v === 'number' ? v : undefined;
  };
  const status: Record<string, unknown> = { replicas: int(scale.statusReplicasPath) ?? 0 };
  if (scale.labelSelectorPath) {
    const sel = valueAtPath(obj, scale.labelSelectorPath).value;
    if (typeof sel === 'string' && sel) status['selector'] = sel;
  }
  const m = obj.metadata;
  const metadata: StoredObject['metadata'] = { name: m.name!, uid: m.uid!, resourceVersion: m.resourceVersion!, creationTimestamp: m.creationTimestamp! };
  if (m.namespace) metadata.namespace = m.namespace;
  const specReplicas = int(scale.specReplicasPath) ?? (forWrite ? INVALID_SPEC_REPLICAS : 0);
  return { apiVersion: SCALE_API_VERSION, kind: 'Scale', metadata, spec: { replicas: specReplicas }, status };
}

function setAtPath(obj: Record<string, unknown>, path: string, value: unknown): void {
  const keys = path.replace(/^\./, '').split('.');
  let cur = obj;
  for (const k of keys.slice(0, -1)) {
    if (!isPlainObject(getOwn(cur, k))) setMember(cur, k, {});
    cur = cur[k] as Record<string, unknown>;
  }
  setMember(cur, keys[keys.length - 1]!, value);
}

/** A scale request: the custom resource's target (namespace from `scope`, `name`), its store and scale paths. */
interface ScaleRequest {
  def: ResourceDefinition;
  store: ResourceStore;
  scale: CRDScale;
  catalog: Catalog;
  admission: AdmissionChain;
  scope: RequestScope;
  name: string;
}

type ScaleWrite = { kind: 'apply'; applied: Record<string, unknown>; force: boolean } | { kind: 'update'; next(current: StoredObject): unknown };

/**
 * The scale sub-resource: GET, PUT and PATCH (JSON, merge, server-side apply) of an
 * autoscaling/v1 Scale mapped onto the custom resource's paths. Writes are tracked as kube's
 * ScaleHandler does: the Scale's managedFields are derived from the parent's entries that own
 * the replicas path, the write is recorded under sub-resource `scale`, and the result is merged
 * back into the parent's managedFields.
 */
async function serveScale(req: IncomingMessage, res: ServerResponse, s: ScaleRequest): Promise<void> {
  const { def, store, scale, catalog, admission, scope, name } = s;
  const { info, query } = contextOf(req);
  const format = jsonFormat(req);
  if (info.verb === 'get') {
    const current = scaleOf(await store.get(scope, name), scale, true);
    // kube's ScaleREST.Get: an object without spec replicas has no Scale (an internal error there).
    if ((current['spec'] as { replicas: number }).replicas === INVALID_SPEC_REPLICAS) throw internalError(`the spec replicas field ${JSON.stringify(scale.specReplicasPath)} does not exist`);
    writeObject(req, res, query, 200, current, format);
    return;
  }
  if (info.verb !== 'update' && info.verb !== 'patch') throw methodNotSupported(groupResourceOf(def), info.verb);
  const dryRun = parseDryRun(query, info.verb === 'patch' ? 'PatchOptions' : 'UpdateOptions');
  const userAgent = req.headers['user-agent'];
  let write: ScaleWrite;
  let manager: string;
  if (info.verb === 'patch') {
    const type = mediaTypeOf(req.headers['content-type']);
    const apply = type === 'application/apply-patch+yaml';
    const opts = patchOptions(query, apply, userAgent);
    manager = opts.manager;
    const body = await readBody(req);
    if (apply) {
      const applied = await parseApplyBody(body);
      const bodyName = isPlainObject(applied['metadata']) ? applied['metadata']['name'] : undefined;
      if (bodyName !== undefined && bodyName !== name) throw badRequest(`the name of the object (${String(bodyName)}) does not match the name on the URL (${name})`);
      write = { kind: 'apply', applied, force: opts.force };
    } else {
      write = { kind: 'update', next: jsonOrMergePatch(type, body) };
    }
  } else {
    manager = parseFieldManager(query, userAgent, 'UpdateOptions');
    const body = await parseBody(await readBody(req), bodyEncoding(req.headers['content-type']));
    write = { kind: 'update', next: () => body };
  }
  const parentApiVersion = apiVersionOf(def);
  // kube admits a scale write as the `scale` sub-resource with autoscaling/v1 Scale objects
  // (never as a write of the custom resource): mutating admission on the new Scale before its
  // replicas are copied, validating admission on the Scale of the object about to be stored.
  const scaleAttrs = (object: StoredObject, oldObject: StoredObject): AdmissionAttributes => ({
    operation: 'UPDATE',
    resource: def,
    subresource: 'scale',
    namespace: scope.namespace,
    name,
    kind: { group: 'autoscaling', version: 'v1', kind: 'Scale' },
    object,
    oldObject,
    options: operationOptions('UPDATE', { dryRun, fieldManager: query.get('fieldManager') || undefined }),
    user: scope.user,
    dryRun,
    ...(scope.warn ? { warn: scope.warn } : {}),
  });
  const validate = (next: StoredObject, existing: StoredObject): Promise<void> => admission.validate(scaleAttrs(scaleOf(next, scale), scaleOf(existing, scale)));
  const out = await store.modify(scope, name, async (obj) => {
    const parentEntries = obj.metadata.managedFields;
    const old = scaleOf(obj, scale, true);
    const oldEntries = toScaleEntries(parentEntries, scale.specReplicasPath);
    if (oldEntries.length > 0) old.metadata.managedFields = oldEntries;
    const time = now();
    let wanted: StoredObject;
    if (write.kind === 'apply') {
      const merged = scaleFields().apply(old, write.applied, { manager, apiVersion: SCALE_API_VERSION, time, force: write.force, subresource: 'scale' });
      wanted = decodeInto(scaleKind, catalog, merged);
    } else {
      wanted = decodeInto(scaleKind, catalog, write.next(old));
      if (wanted.metadata.name && wanted.metadata.name !== name) throw badRequest(`the name of the object (${wanted.metadata.name}) does not match the name on the URL (${name})`);
      wanted = scaleFields().update(old, wanted, { manager, apiVersion: SCALE_API_VERSION, time, subresource: 'scale' }) as StoredObject;
    }
    await admission.admit(scaleAttrs(wanted, old));
    const rv = wanted.metadata.resourceVersion;
    if (rv && rv !== obj.metadata.resourceVersion) throw conflict(groupResourceOf(def), name, OPTIMISTIC_LOCK_MESSAGE);
    const replicas = (wanted['spec'] as { replicas?: number } | undefined)?.replicas ?? 0;
    if (replicas === INVALID_SPEC_REPLICAS) throw badRequest(`the spec replicas field ${JSON.stringify(scale.specReplicasPath)} cannot be empty`);
    setAtPath(obj, scale.specReplicasPath, replicas);
    const entries = toParentEntries(parentEntries, wanted.metadata.managedFields, scale.specReplicasPath, parentApiVersion);
    if (entries.length > 0) obj.metadata.managedFields = entries;
    else delete obj.metadata.managedFields;
  }, { dryRun }, def.strategy, { validate });
  writeObject(req, res, query, 200, scaleOf(out, scale), format);
}
