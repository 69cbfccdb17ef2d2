/**
 * Content negotiation: which encoding to answer in (Accept) and how to read a body (Content-Type).
 * The media types kube serves for built-in types, and their q-value ordering.
 */
import { createDict, notAcceptable, unsupportedMediaType } from '@plinth/api';

export interface MediaRange {
  type: string;
  subtype: string;
  params: Record<string, string>;
  q: number;
}

/** A request for metadata only: meta.k8s.io PartialObjectMetadata (`list`: ...List) of `version`. */
export interface PartialMetadataRequest {
  list: boolean;
  version: 'v1' | 'v1beta1';
}

/** What a response will be written as. */
export interface ResponseFormat {
  /** Table is JSON with `table` set. */
  encoding: 'json' | 'yaml' | 'protobuf';
  /** Set when the client asked for a meta.k8s.io Table of this version. */
  table?: 'v1' | 'v1beta1';
  /** Set when the client asked for PartialObjectMetadata(List) (in any of the three encodings). */
  partial?: PartialMetadataRequest;
  /** For Table: includeObject policy is read from the query separately. */
  contentType: string;
}

export const PROTOBUF_MEDIA_TYPES = ['application/vnd.kubernetes.protobuf', 'application/vnd.platform.protobuf'];
export const SERVED_MEDIA_TYPES = ['application/json', 'application/yaml', 'application/vnd.kubernetes.protobuf'];
export const BODY_MEDIA_TYPES = SERVED_MEDIA_TYPES;

/** Parses an Accept header into media ranges, highest q first (stable for equal q). */
export function parseAccept(header: string | undefined): MediaRange[] {
  if (!header) return [];
  const out: Array<MediaRange & { idx: number }> = [];
  header.split(',').forEach((part, idx) => {
    const [mt, ...ps] = part.split(';').map((x) => x.trim());
    if (!mt) return;
    const [type, subtype] = mt.toLowerCase().split('/');
    if (!type || !subtype) return;
    // Parameter names are the client's: no member is inherited, `__proto__` is a name like any other.
    const params = createDict<string>();
    let q = 1;
    for (const p of ps) {
      const eq = p.indexOf('=');
      if (eq < 0) continue;
      const k = p.slice(0, eq).trim().toLowerCase();
      const v = p.slice(eq + 1).trim().replace(/^"|"$/g, '');
      if (k === 'q') q = Number.isFinite(Number(v)) ? Number(v) : 0;
      else params[k] = v;
    }
    if (q > 0) out.push({ type, subtype, params, q, idx });
  });
  out.sort((a, b) => b.q - a.q || a.idx - b.idx);
  return out;
}

export interface NegotiateOptions {
  /** Whether this endpoint can answer with a meta.k8s.io Table. */
  allowTable: boolean;
  /** Whether this endpoint's objects have a Protobuf form (built-in kinds, Status, discovery). */
  allowProtobuf?: boolean;
  /**
   * Whether this endpoint can answer with PartialObjectMetadata(List): every resource's get, list
   * and watch. Its Protobuf form is meta.k8s.io's, so custom resources have it too.
   */
  allowPartial?: boolean;
}

const PARTIAL_KINDS: ReadonlySet<string> = new Set(['PartialObjectMetadata', 'PartialObjectMetadataList']);

/** The encoding a media range names for a meta.k8s.io conversion (kube's metainternal codecs). */
function metaEncoding(r: MediaRange): { encoding: ResponseFormat['encoding']; contentType: string } | undefined {
  if (r.type === '*' && r.subtype === '*') return { encoding: 'json', contentType: 'application/json' };
  if (r.type !== 'application') return undefined;
  if (r.subtype === '*' || r.subtype === 'json') return { encoding: 'json', contentType: 'application/json' };
  if (r.subtype === 'yaml') return { encoding: 'yaml', contentType: 'application/yaml' };
  if (PROTOBUF_MEDIA_TYPES.includes(`${r.type}/${r.subtype}`)) return { encoding: 'protobuf', contentType: `${r.type}/${r.subtype}` };
  return undefined;
}

/**
 * Picks the response format. No Accept (or only wildcards) means JSON. Throws 406 when nothing
 * offered is served. Media types with an `as=` conversion we do not serve are skipped, so a
 * client's JSON fallback (e.g. after an aggregated-discovery preference) is honoured.
 */
export function negotiate(accept: string | undefined, opts: NegotiateOptions): ResponseFormat {
  const ranges = parseAccept(accept);
  if (ranges.length === 0) return { encoding: 'json', contentType: 'application/json' };
  for (const r of ranges) {
    const as = r.params['as'];
    const g = r.params['g'];
    const v = r.params['v'];
    // Any of as/g/v asks for a conversion (kube's MediaTypeOptions.Convert): served only for
    // meta.k8s.io v1/v1beta1 kinds this endpoint has; anything else skips the range.
    if (as !== undefined || g !== undefined || v !== undefined) {
      if (g !== 'meta.k8s.io' || (v !== 'v1' && v !== 'v1beta1')) continue;
      if (as === 'Table' && opts.allowTable) {
        if (r.type === 'application' && r.subtype === 'json') {
          return { encoding: 'json', table: v, contentType: `application/json;as=Table;v=${v};g=meta.k8s.io` };
        }
      } else if (as !== undefined && PARTIAL_KINDS.has(as) && opts.allowPartial) {
        // kube writes the plain media type of the encoding (its serializer's), without parameters.
        const enc = metaEncoding(r);
        if (enc) return { ...enc, partial: { list: as === 'PartialObjectMetadataList', version: v } };
      }
      continue;
    }
    if (r.type === '*' && r.subtype === '*') return { encoding: 'json', contentType: 'application/json' };
    if (r.type !== 'application') continue;
    if (r.subtype === '*' || r.subtype === 'json') return { encoding: 'json', contentType: 'application/json' };
    if (r.subtype === 'yaml') return { encoding: 'yaml', contentType: 'application/yaml' };
    if (opts.allowProtobuf && PROTOBUF_MEDIA_TYPES.includes(`${r.type}/${r.subtype}`)) {
      return { encoding: 'protobuf', contentType: `${r.type}/${r.subtype}` };
    }
  }
  throw notAcceptable(opts.allowProtobuf ? SERVED_MEDIA_TYPES : SERVED_MEDIA_TYPES.slice(0, 2));
}

/** The body encoding of a Content-Type for create/update; throws 415 for anything else. */
export function bodyEncoding(contentType: string | undefined): 'json' | 'yaml' | 'protobuf' {
  const mt = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (mt === '' || mt === 'application/json') return 'json';
  if (mt === 'application/yaml') return 'yaml';
  if (PROTOBUF_MEDIA_TYPES.includes(mt)) return 'protobuf';
  throw unsupportedMediaType(BODY_MEDIA_TYPES);
}
