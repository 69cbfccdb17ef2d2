/**
 * The `scale` sub-resource of every scalable resource (kube's ScaleREST of ReplicationControllers,
 * Deployments, ReplicaSets, StatefulSets, and custom resources'): GET, PUT and PATCH (JSON, merge,
 * strategic merge, server-side apply) of an autoscaling/v1 Scale mapped onto the parent object as
 * its module's ScaleDescription says. A write is an update of the parent through its store and
 * strategy (so its validation runs and its generation moves), with:
 *  - admission as kube does it: the `scale` sub-resource with Scale objects (mutating on the new
 *    Scale, validating on the Scale of the object about to be stored), never the parent's kind;
 *  - kube's ValidateScale where the description has it (422 on Scale.autoscaling);
 *  - the Scale's resourceVersion as a precondition (409);
 *  - managedFields as kube's ScaleHandler keeps them: the Scale's entries are the parent's entries
 *    that own the replicas path, the write is recorded under sub-resource `scale`, and merged back.
 */
import {
  FieldManager,
  FieldSet,
  OPTIMISTIC_LOCK_MESSAGE,
  PatchError,
  StatusError,
  apiVersionOf,
  applyJsonPatch,
  applyMergePatch,
  applyStrategicMergePatch,
  badRequest,
  conflict,
  decodeManagedFields,
  encodeManagedFields,
  getOwn,
  groupResourceOf,
  internalError,
  invalid,
  isPlainObject,
  methodNotSupported,
  notFound,
  pathOf,
  scaleKind,
  scaleTable,
  setMember,
  unsupportedMediaType,
  type Managed,
  type ManagedFieldsEntry,
  type ScaleDescription,
  type StoredObject,
} from '@plinth/api';
import { operationOptions, type AdmissionAttributes, type AdmissionChain } from '@plinth/admission';
import { servesProtobuf } from '../protobuf/codec.js';
import { negotiate } from '../negotiation.js';
import { parseJsonText, readBody, writeObject } from '../http.js';
import { decodeInto, fullSchemaOf, schemaDefinitions } from '../registry/codec.js';
import { now } from '../registry/store.js';
import { readKind } from './body.js';
import { parseIncludeObject, tableOfObject } from '../table.js';
import { parseDryRun, parseFieldManager, resourceVersionParam } from './options.js';
import { parseApplyBody, patchOptions } from './patch.js';
import type { ResourceRequest } from './scope.js';

const SCALE_API_VERSION = 'autoscaling/v1';
/** kube's placeholder for a custom resource without spec replicas: a write must set them. */
const INVALID_SPEC_REPLICAS = -2147483648;
const REPLICAS_IN_SCALE = pathOf('spec', 'replicas');
const PATCH_TYPES = ['application/json-patch+json', 'application/merge-patch+json', 'application/strategic-merge-patch+json', 'application/apply-patch+yaml'];

const mediaTypeOf = (header: string | undefined): string => (header ?? '').split(';')[0]!.trim().toLowerCase();
const dotted = (path: readonly string[]): string => `.${path.join('.')}`;

/** The Scale's field manager (kube's scale FieldManager: sub-resource `scale`, no reset fields). */
let scaleFieldManager: FieldManager | undefined;
function scaleFields(): FieldManager {
  return (scaleFieldManager ??= new FieldManager({ schema: fullSchemaOf(scaleKind), defs: schemaDefinitions() }));
}

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
function toScaleEntries(parent: ManagedFieldsEntry[] | undefined, replicasPath: readonly string[]): ManagedFieldsEntry[] {
  const managed = decodeOrEmpty(parent);
  const path = pathOf(...replicasPath);
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
function toParentEntries(parent: ManagedFieldsEntry[] | undefined, scaleEntries: unknown, replicasPath: readonly string[], parentApiVersion: string): ManagedFieldsEntry[] {
  const parentManaged = decodeOrEmpty(parent);
  const scaleManaged = decodeOrEmpty(scaleEntries);
  const path = pathOf(...replicasPath);
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

/** kube's scaleFrom<Kind>: an autoscaling/v1 Scale of the object (`forWrite`: missing spec replicas marked). */
function scaleOf(obj: StoredObject, scale: ScaleDescription, forWrite = false): StoredObject {
  const status: Record<string, unknown> = { replicas: scale.statusReplicas(obj) };
  const selector = scale.selector(obj);
  if (selector) status['selector'] = selector;
  const m = obj.metadata;
  const metadata: StoredObject['metadata'] = { name: m.name!, uid: m.uid!, resourceVersion: m.resourceVersion!, creationTimestamp: m.creationTimestamp! };
  if (m.namespace) metadata.namespace = m.namespace;
  const specReplicas = scale.specReplicas(obj) ?? (forWrite ? INVALID_SPEC_REPLICAS : 0);
  return { apiVersion: SCALE_API_VERSION, kind: 'Scale', metadata, spec: { replicas: specReplicas }, status };
}

function setAtPath(obj: Record<string, unknown>, path: readonly string[], value: unknown): void {
  let cur = obj;
  for (const k of path.slice(0, -1)) {
    if (!isPlainObject(getOwn(cur, k))) setMember(cur, k, {});
    cur = cur[k] as Record<string, unknown>;
  }
  setMember(cur, path[path.length - 1]!, value);
}

/** A patch of the Scale (JSON, merge or strategic merge), failures worded as the patch handler words them. */
function scalePatch(type: string, body: Buffer): (current: StoredObject) => unknown {
  let patch: unknown;
  try {
    patch = parseJsonText(body.toString('utf8'), 'the patch', { marks: true });
  } catch (e) {
    if (e instanceof StatusError) throw e;
    throw badRequest(`error decoding patch: ${(e as Error).message}`);
  }
  return (current) => {
    try {
      if (type === 'application/json-patch+json') return applyJsonPatch(current, patch);
      if (type === 'application/merge-patch+json') return applyMergePatch(current, patch);
      return applyStrategicMergePatch(current, patch, fullSchemaOf(scaleKind), schemaDefinitions());
    } catch (e) {
      if (e instanceof PatchError) throw new StatusError({ code: e.code, reason: e.code === 422 ? 'Invalid' : e.code === 400 ? 'BadRequest' : '', message: e.message });
      throw e;
    }
  };
}

type ScaleWrite = { kind: 'apply'; applied: Record<string, unknown>; force: boolean } | { kind: 'update'; next(current: StoredObject): unknown };

/** Serves GET, PUT and PATCH of `<parent>/<name>/scale`. */
export async function serveScale(r: ResourceRequest, scale: ScaleDescription, admission: AdmissionChain): Promise<void> {
  const { req, res, def, store, scope, query, info } = r;
  const name = r.target.name;
  // kube 1.24 serves GET of a scale subresource as a Table too (its printScale columns).
  const format = negotiate(req.headers.accept, { allowTable: info.verb === 'get', allowProtobuf: servesProtobuf(def) && servesProtobuf(scaleKind) });
  if (info.verb === 'get') {
    let obj: StoredObject;
    try {
      obj = await store.get(scope, name, resourceVersionParam(query));
    } catch (e) {
      // kube's built-in ScaleRESTs answer a missing object as the scale resource of autoscaling.
      if (e instanceof StatusError && e.code === 404 && scale.notFoundResource) throw notFound(scale.notFoundResource, name);
      throw e;
    }
    const current = scaleOf(obj, scale, true);
    // kube's custom resource ScaleREST.Get: an object without spec replicas has no Scale (an internal error there).
    if ((current['spec'] as { replicas: number }).replicas === INVALID_SPEC_REPLICAS) throw internalError(`the spec replicas field ${JSON.stringify(dotted(scale.specReplicasPath))} does not exist`);
    writeObject(req, res, query, 200, format.table ? tableOfObject({ table: scaleTable }, current, parseIncludeObject(query), format.table) : current, format);
    return;
  }
  if (info.verb !== 'update' && info.verb !== 'patch') throw methodNotSupported(groupResourceOf(def), info.verb);
  const dryRun = parseDryRun(query, info.verb === 'patch' ? 'PatchOptions' : 'UpdateOptions');
  const userAgent = req.headers['user-agent'];
  let write: ScaleWrite;
  let manager: string;
  if (info.verb === 'patch') {
    const type = mediaTypeOf(req.headers['content-type']);
    const ssa = r.features.enabled('ServerSideApply');
    if (!PATCH_TYPES.includes(type) || (type === 'application/apply-patch+yaml' && !ssa)) throw unsupportedMediaType(ssa ? PATCH_TYPES : PATCH_TYPES.slice(0, 3));
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
      write = { kind: 'update', next: scalePatch(type, body) };
    }
  } else {
    manager = parseFieldManager(query, userAgent, 'UpdateOptions');
    const body = await readKind(req, scaleKind, r.catalog);
    write = { kind: 'update', next: () => body };
  }
  const parentApiVersion = apiVersionOf(def);
  // kube admits a scale write as the `scale` sub-resource with autoscaling/v1 Scale objects
  // (never as a write of the parent): mutating admission on the new Scale before its replicas
  // are copied, validating admission on the Scale of the object about to be stored.
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
  const out = await store.modify(
    scope,
    name,
    async (obj) => {
      const parentEntries = obj.metadata.managedFields;
      const old = scaleOf(obj, scale, true);
      const oldEntries = toScaleEntries(parentEntries, scale.specReplicasPath);
      if (oldEntries.length > 0) old.metadata.managedFields = oldEntries;
      const time = now();
      let wanted: StoredObject;
      if (write.kind === 'apply') {
        const merged = scaleFields().apply(old, write.applied, { manager, apiVersion: SCALE_API_VERSION, time, force: write.force, subresource: 'scale' });
        wanted = decodeInto(scaleKind, r.catalog, merged);
      } else {
        wanted = decodeInto(scaleKind, r.catalog, write.next(old));
        if (wanted.metadata.name && wanted.metadata.name !== name) throw badRequest(`the name of the object (${wanted.metadata.name}) does not match the name on the URL (${name})`);
        wanted = scaleFields().update(old, wanted, { manager, apiVersion: SCALE_API_VERSION, time, subresource: 'scale' }) as StoredObject;
      }
      await admission.admit(scaleAttrs(wanted, old));
      if (scale.validateScale) {
        // The Scale as written names the object (kube validates it with the parent's namespace).
        const checked: StoredObject = { ...wanted, metadata: { ...wanted.metadata, name: wanted.metadata.name || name, ...(scope.namespace ? { namespace: wanted.metadata.namespace || scope.namespace } : {}) } };
        const errs = scale.validateScale(checked);
        if (errs.length > 0) throw invalid({ group: 'autoscaling', kind: 'Scale' }, name, errs);
      }
      const rv = wanted.metadata.resourceVersion;
      if (rv && rv !== obj.metadata.resourceVersion) throw conflict(groupResourceOf(def), name, OPTIMISTIC_LOCK_MESSAGE);
      const replicas = (wanted['spec'] as { replicas?: number } | undefined)?.replicas ?? 0;
      if (replicas === INVALID_SPEC_REPLICAS) throw badRequest(`the spec replicas field ${JSON.stringify(dotted(scale.specReplicasPath))} cannot be empty`);
      setAtPath(obj, scale.specReplicasPath, replicas);
      const entries = toParentEntries(parentEntries, wanted.metadata.managedFields, scale.specReplicasPath, parentApiVersion);
      if (entries.length > 0) obj.metadata.managedFields = entries;
      else delete obj.metadata.managedFields;
    },
    { dryRun },
    def.strategy,
    { validate },
  );
  writeObject(req, res, query, 200, scaleOf(out, scale), format);
}
