/**
 * What custom resources are served with besides the generic handlers (kube's crdHandler):
 *  - JSON and YAML only: a Protobuf body is a 415, an Accept of only Protobuf a 406, and a client
 *    that prefers Protobuf but takes JSON gets JSON;
 *  - no strategic merge patch (415 naming the patch types it takes);
 *  - no create while the CRD is being deleted (405).
 * Everything else goes to the generic handlers, which serve custom resources from the catalog
 * (the status sub-resource included: its strategy is the definition's; the scale sub-resource,
 * handlers/scale.ts, with the paths the CRD names).
 */
import {
  StatusError,
  groupResourceOf,
  methodNotSupported,
  unsupportedMediaType,
  type Catalog,
  type ResourceDefinition,
} from '@plinth/api';
import { contextOf, type Handler } from '../context.js';
import { targetOf } from '../handlers/target.js';
import { PROTOBUF_MEDIA_TYPES, negotiate } from '../negotiation.js';
import type { ResourceStore } from '../registry/store.js';
import { customResourceInfo } from './definitions.js';

const BODY_TYPES = ['application/json', 'application/yaml'];
const PATCH_TYPES = ['application/json-patch+json', 'application/merge-patch+json', 'application/apply-patch+yaml'];

export interface CustomResourceHandlerDeps {
  catalog: Catalog;
  stores: ReadonlyMap<ResourceDefinition, ResourceStore>;
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
    const { info } = contextOf(req);
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
    return next(req, res);
  };
}
