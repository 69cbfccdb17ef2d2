/**
 * Serving the OpenAPI documents as kube-apiserver 1.24 does (kube-openapi pkg/handler and
 * pkg/handler3):
 *  - `/openapi/v2`: JSON or gnostic protobuf by Accept (406 otherwise), ETag (quoted SHA-512),
 *    Last-Modified, 304 on If-None-Match / If-Modified-Since, gzip when accepted, `Vary: Accept`,
 *    and the Content-Type Go's http.ServeContent sniffs (`text/plain; charset=utf-8` for JSON,
 *    `application/octet-stream` for protobuf) since kube-openapi sets none.
 *  - `/openapi/v3`: the discovery document, with an ETag.
 *  - `/openapi/v3/<gv>`: the group-version document (JSON) with an ETag; with `?hash=` equal to
 *    the ETag it adds `Cache-Control: public, immutable` and a one-year `Expires`, with another
 *    hash it redirects (301) to the current URL.
 * Documents are built on first use, and again on first use after the catalog changed.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { gzipSync } from 'node:zlib';
import { methodNotSupported, pathNotFound, stringifyJson, type Catalog } from '@plinth/api';
import { parseAccept } from '../negotiation.js';
import { encodeGnostic } from './gnostic.js';
import { buildSwagger, type OpenAPIOptions } from './v2.js';
import { buildV3, computeETag, discoveryDocument, serverRelativeURL } from './v3.js';
import { sendBody } from '../http.js';

interface Served {
  body: Buffer;
  etag: string;
  contentType: string;
  lastModified: Date;
  gzipped?: Buffer;
}

interface Built {
  v2json: Served;
  v2pb: Served;
  v3discovery: Served;
  v3: Map<string, Served>;
}

export type OpenAPIHandler = (req: IncomingMessage, res: ServerResponse, path: string, query: URLSearchParams) => Promise<boolean>;

function served(body: Buffer, contentType: string, etag: string, lastModified: Date): Served {
  return { body, contentType, etag, lastModified };
}

function build(catalog: Catalog, opts: OpenAPIOptions): Built {
  // HTTP dates have second precision; keep Last-Modified comparable with If-Modified-Since.
  const now = new Date(Math.floor(Date.now() / 1000) * 1000);
  const swagger = buildSwagger(catalog, opts);
  // A CRD schema's enum, default or example may hold an int64 above 2^53.
  const json = Buffer.from(stringifyJson(swagger));
  const pb = encodeGnostic(swagger);
  const v3 = new Map<string, Served>();
  const etags = new Map<string, string>();
  for (const [gv, doc] of buildV3(catalog, opts).groupVersions) {
    const body = Buffer.from(stringifyJson(doc));
    const etag = computeETag(body);
    etags.set(gv, etag);
    v3.set(gv, served(body, 'application/json', etag, now));
  }
  const disco = Buffer.from(JSON.stringify(discoveryDocument(etags)));
  return {
    // kube's v2 handler sets no Content-Type: http.ServeContent sniffs one (and client-go cannot
    // parse the protobuf media type, whose `@` is no token character).
    v2json: served(json, 'text/plain; charset=utf-8', `"${computeETag(json)}"`, now),
    v2pb: served(pb, 'application/octet-stream', `"${computeETag(pb)}"`, now),
    v3discovery: served(disco, 'application/json', `"${computeETag(disco)}"`, now),
    v3,
  };
}

/** The first served media type the Accept header allows (goautoneg order: q, then position). */
function pick<T>(accept: string | undefined, offers: Array<[string, string, T]>): T | undefined {
  const ranges = parseAccept(accept && accept.trim() ? accept : '*/*');
  for (const r of ranges) {
    for (const [type, subtype, v] of offers) {
      if ((r.type === type || r.type === '*') && (r.subtype === subtype || r.subtype === '*')) return v;
    }
  }
  return undefined;
}

function acceptsGzip(req: IncomingMessage): boolean {
  const ae = req.headers['accept-encoding'];
  return typeof ae === 'string' && ae.split(',').some((p) => p.split(';')[0]!.trim().toLowerCase() === 'gzip');
}

/** http.ServeContent's conditional checks: If-None-Match, then If-Modified-Since. */
function notModified(req: IncomingMessage, s: Served, etag: string): boolean {
  const inm = req.headers['if-none-match'];
  if (typeof inm === 'string' && inm.trim() !== '') {
    return inm.split(',').some((t) => {
      const tag = t.trim().replace(/^W\//, '');
      return tag === '*' || tag === etag;
    });
  }
  const ims = req.headers['if-modified-since'];
  if (typeof ims === 'string') {
    const since = Date.parse(ims);
    if (!Number.isNaN(since) && s.lastModified.getTime() <= since) return true;
  }
  return false;
}

function send(req: IncomingMessage, res: ServerResponse, s: Served, headers: Record<string, string>, gzip = false): void {
  // kube quotes the ETag it sends; the v3 group-version ETags are stored unquoted for the hash.
  const etag = s.etag.startsWith('"') ? s.etag : JSON.stringify(s.etag);
  for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
  res.setHeader('ETag', etag);
  res.setHeader('Last-Modified', s.lastModified.toUTCString());
  if (notModified(req, s, etag)) {
    res.statusCode = 304;
    res.end();
    return;
  }
  let body = s.body;
  if (gzip && acceptsGzip(req)) {
    s.gzipped ??= gzipSync(s.body);
    body = s.gzipped;
    res.setHeader('Content-Encoding', 'gzip');
  }
  res.statusCode = 200;
  res.setHeader('Content-Type', s.contentType);
  // Megabytes: written as the socket takes them (a client that does not read holds no copy).
  sendBody(req, res, body);
}

function notAcceptable(res: ServerResponse): void {
  res.statusCode = 406;
  res.end();
}

/**
 * Serves `/openapi/v2`, `/openapi/v3` and `/openapi/v3/<gv>`; resolves false for other paths.
 * Unknown group-versions throw a 404 StatusError (the caller writes it).
 */
export function createOpenAPIHandler(catalog: Catalog, opts: OpenAPIOptions = {}): OpenAPIHandler {
  let built: Built | undefined;
  let generation = catalog.generation;
  // Rebuilt on the first request after the catalog changed (a custom resource came or went).
  const docs = (): Built => {
    if (generation !== catalog.generation) {
      generation = catalog.generation;
      built = undefined;
    }
    return (built ??= build(catalog, opts));
  };
  return async (req, res, path, query) => {
    if (path !== '/openapi/v2' && path !== '/openapi/v3' && !path.startsWith('/openapi/v3/')) return false;
    if (req.method !== 'GET' && req.method !== 'HEAD') throw methodNotSupported(undefined, req.method ?? '');
    const d = docs();
    const accept = req.headers.accept;
    if (path === '/openapi/v2') {
      res.setHeader('Vary', 'Accept');
      const s = pick(accept, [
        ['application', 'json', d.v2json],
        ['application', 'com.github.proto-openapi.spec.v2@v1.0+protobuf', d.v2pb],
      ]);
      if (!s) notAcceptable(res);
      else send(req, res, s, {}, true);
      return true;
    }
    if (path === '/openapi/v3') {
      send(req, res, d.v3discovery, {});
      return true;
    }
    const gv = path.slice('/openapi/v3/'.length);
    const s = d.v3.get(gv);
    if (!s) throw pathNotFound();
    res.setHeader('Vary', 'Accept');
    if (!pick(accept, [['application', 'json', true]])) {
      notAcceptable(res);
      return true;
    }
    const hash = query.get('hash');
    if (hash) {
      if (hash !== s.etag) {
        res.statusCode = 301;
        res.setHeader('Location', serverRelativeURL(gv, s.etag));
        res.end();
        return true;
      }
      const expires = new Date(Date.now() + 365 * 24 * 3600 * 1000);
      send(req, res, s, { 'Cache-Control': 'public, immutable', Expires: expires.toUTCString() });
      return true;
    }
    send(req, res, s, {});
    return true;
  };
}
