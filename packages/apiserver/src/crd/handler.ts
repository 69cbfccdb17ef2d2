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
  OPTIMISTIC_LOCK_MESSAGE,
  PatchError,
  StatusError,
  applyJsonPatch,
  applyMergePatch,
  badRequest,
  conflict,
  groupResourceOf,
  isPlainObject,
  methodNotSupported,
  unsupportedMediaType,
  type Catalog,
  type ResourceDefinition,
  type StoredObject,
} from '@plinth/api';
import { contextOf, type Handler } from '../context.js';
import { PROTOBUF_MEDIA_TYPES, bodyEncoding, negotiate, type ResponseFormat } from '../negotiation.js';
import { addWarning, parseBody, parseJsonText, readBody, writeObject } from '../http.js';
import { decodeInto } from '../registry/codec.js';
import type { RequestScope, ResourceStore } from '../registry/store.js';
import { parseDryRun } from '../handlers/options.js';
import { customResourceInfo, scaleKind, valueAtPath } from './definitions.js';
import type { CRDScale } from './types.js';

const BODY_TYPES = ['application/json', 'application/yaml'];
const PATCH_TYPES = ['application/json-patch+json', 'application/merge-patch+json', 'application/apply-patch+yaml'];

export interface CustomResourceHandlerDeps {
  catalog: Catalog;
  stores: ReadonlyMap<ResourceDefinition, ResourceStore>;
}

const mediaTypeOf = (header: string | undefined): string => (header ?? '').split(';')[0]!.trim().toLowerCase();

/** The Accept header without its Protobuf ranges (custom resources have no Protobuf form). */
function withoutProtobuf(accept: string): string {
  return accept
    .split(',')
    .filter((part) => !PROTOBUF_MEDIA_TYPES.includes(mediaTypeOf(part)))
    .join(',');
}

/** Serves custom resources' special cases; passes every other request to `next`. */
export function withCustomResources(next: Handler, deps: CustomResourceHandlerDeps): Handler {
  return async (req, res) => {
    const { info } = contextOf(req);
    const def = info.isResourceRequest ? deps.catalog.lookup(info.apiGroup, info.apiVersion, info.resource) : undefined;
    const cr = def ? customResourceInfo(def) : undefined;
    const store = def ? deps.stores.get(def) : undefined;
    if (!def || !cr || !store) return next(req, res);

    const accept = req.headers.accept;
    if (accept) {
      // 406 when nothing but Protobuf is acceptable; the generic handlers then never pick it.
      negotiate(accept, { allowTable: true, allowProtobuf: false });
      if (PROTOBUF_MEDIA_TYPES.some((t) => accept.toLowerCase().includes(t))) req.headers.accept = withoutProtobuf(accept);
    }
    const contentType = mediaTypeOf(req.headers['content-type']);
    if (info.verb === 'patch') {
      if (!PATCH_TYPES.includes(contentType)) throw unsupportedMediaType(PATCH_TYPES);
    } else if ((info.verb === 'create' || info.verb === 'update') && PROTOBUF_MEDIA_TYPES.includes(contentType)) {
      throw unsupportedMediaType(BODY_TYPES);
    }
    if (info.verb === 'create' && !info.subresource && cr.lifecycle.terminating) {
      const e = methodNotSupported(groupResourceOf(def), info.verb);
      throw new StatusError({ code: e.code, reason: e.reason, message: 'create not allowed while custom resource definition is terminating', ...(e.details ? { details: e.details } : {}) });
    }
    if (info.subresource === 'scale' && cr.scale && info.parts.length <= 3) {
      if (def.deprecation) addWarning(res, def.deprecation.warning);
      return serveScale(req, res, def, store, cr.scale, deps.catalog, scopeOf(req, def));
    }
    return next(req, res);
  };
}

function scopeOf(req: IncomingMessage, def: ResourceDefinition): RequestScope {
  const { info, user } = contextOf(req);
  return { user: user!, namespace: def.namespaced ? info.namespace : '' };
}

const jsonFormat = (req: IncomingMessage): ResponseFormat => negotiate(req.headers.accept, { allowTable: false, allowProtobuf: false });

/** A JSON or merge patch over `current`, as the patch handler words its failures. */
async function readPatch(req: IncomingMessage): Promise<(current: StoredObject) => unknown> {
  const type = mediaTypeOf(req.headers['content-type']);
  if (type === 'application/apply-patch+yaml') {
    // Server-side apply of a sub-resource is not served yet.
    throw unsupportedMediaType(PATCH_TYPES.slice(0, 2));
  }
  let patch: unknown;
  try {
    patch = parseJsonText((await readBody(req)).toString('utf8'), 'the patch');
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

/** kube's scaleFromCustomResource: an autoscaling/v1 Scale of the object. */
function scaleOf(obj: StoredObject, scale: CRDScale): StoredObject {
  const int = (path: string): number => {
    const v = valueAtPath(obj, path).value;
    return typeof v === 'number' ? v : 0;
  };
  const status: Record<string, unknown> = { replicas: int(scale.statusReplicasPath) };
  if (scale.labelSelectorPath) {
    const sel = valueAtPath(obj, scale.labelSelectorPath).value;
    if (typeof sel === 'string' && sel) status['selector'] = sel;
  }
  const m = obj.metadata;
  const metadata: StoredObject['metadata'] = { name: m.name!, uid: m.uid!, resourceVersion: m.resourceVersion!, creationTimestamp: m.creationTimestamp! };
  if (m.namespace) metadata.namespace = m.namespace;
  return { apiVersion: 'autoscaling/v1', kind: 'Scale', metadata, spec: { replicas: int(scale.specReplicasPath) }, status };
}

function setAtPath(obj: Record<string, unknown>, path: string, value: unknown): void {
  const keys = path.replace(/^\./, '').split('.');
  let cur = obj;
  for (const k of keys.slice(0, -1)) {
    if (!isPlainObject(cur[k])) cur[k] = {};
    cur = cur[k] as Record<string, unknown>;
  }
  cur[keys[keys.length - 1]!] = value;
}

async function serveScale(req: IncomingMessage, res: ServerResponse, def: ResourceDefinition, store: ResourceStore, scale: CRDScale, catalog: Catalog, scope: RequestScope): Promise<void> {
  const { info, query } = contextOf(req);
  const format = jsonFormat(req);
  if (info.verb === 'get') {
    writeObject(req, res, query, 200, scaleOf(await store.get(scope, info.name), scale), format);
    return;
  }
  if (info.verb !== 'update' && info.verb !== 'patch') throw methodNotSupported(groupResourceOf(def), info.verb);
  const dryRun = parseDryRun(query, info.verb === 'patch' ? 'PatchOptions' : 'UpdateOptions');
  let next: (current: StoredObject) => unknown;
  if (info.verb === 'patch') {
    const apply = await readPatch(req);
    next = (current) => apply(scaleOf(current, scale));
  } else {
    const body = parseBody(await readBody(req), bodyEncoding(req.headers['content-type']));
    next = () => body;
  }
  const out = await store.modify(scope, info.name, (obj) => {
    const wanted = decodeInto(scaleKind, catalog, next(obj));
    if (wanted.metadata.name && wanted.metadata.name !== info.name) throw badRequest(`the name of the object (${wanted.metadata.name}) does not match the name on the URL (${info.name})`);
    const rv = wanted.metadata.resourceVersion;
    if (rv && rv !== obj.metadata.resourceVersion) throw conflict(groupResourceOf(def), info.name, OPTIMISTIC_LOCK_MESSAGE);
    const replicas = (wanted['spec'] as { replicas?: number } | undefined)?.replicas ?? 0;
    setAtPath(obj, scale.specReplicasPath, replicas);
  }, { dryRun });
  writeObject(req, res, query, 200, scaleOf(out, scale), format);
}
