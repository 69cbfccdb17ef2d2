/**
 * The OpenAPI 3.0 documents kube-apiserver serves per group-version at `/openapi/v3/<gv>`, and the
 * discovery document at `/openapi/v3` (kube-openapi pkg/handler3): `{"paths": {"api/v1":
 * {"serverRelativeURL": "/openapi/v3/api/v1?hash=<SHA512 hex>"}}}`.
 * Schemas are the v2 definitions under `#/components/schemas/`, with every `$ref` that has sibling
 * keys wrapped in `allOf` (kube-openapi builder3 `wrapRefs`); each document carries only the
 * schemas its paths reach.
 */
import { setMember } from '@plinth/api';
import { createHash } from 'node:crypto';
import type { Catalog } from '@plinth/api';
import { VERSION } from '../discovery.js';
import { buildDefinitions, refsIn, V2_REF_PREFIX } from './definitions.js';
import { sortKeys, type JSONObject, type JSONValue } from './names.js';
import { buildPaths, type Operation, type Param, type PathEntry } from './paths.js';
import type { OpenAPIOptions } from './v2.js';

export const V3_REF_PREFIX = '#/components/schemas/';

export interface V3Documents {
  /** Group-version path (`api/v1`) → its document. */
  groupVersions: Map<string, JSONObject>;
}

/** v2-form schema → v3-form: refs re-pointed, refs with siblings wrapped in allOf. */
export function toV3Schema(v: JSONValue): JSONValue {
  if (Array.isArray(v)) return v.map(toV3Schema);
  if (v === null || typeof v !== 'object') return v;
  const out: JSONObject = {};
  for (const [k, x] of Object.entries(v)) {
    setMember(out, k, k === '$ref' && typeof x === 'string' ? x.replace(V2_REF_PREFIX, V3_REF_PREFIX) : toV3Schema(x));
  }
  const r = out['$ref'];
  if (typeof r === 'string' && Object.keys(out).length > 1) {
    delete out['$ref'];
    out['allOf'] = [{ $ref: r }];
  }
  return out;
}

function v3Param(p: Param): JSONObject {
  return {
    description: p.description,
    in: p.in,
    name: p.name,
    ...(p.required ? { required: true } : {}),
    schema: { type: p.type ?? 'string', uniqueItems: true },
  };
}

function v3Operation(op: Operation): JSONObject {
  const responses: JSONObject = {};
  for (const [code, description, ref] of op.responses) {
    const content: JSONObject = {};
    if (ref) for (const mt of op.produces) content[mt] = { schema: { $ref: V3_REF_PREFIX + ref } };
    responses[code] = { ...(ref ? { content } : {}), description };
  }
  const bodyParam = op.params.find((p) => p.in === 'body');
  const others = op.params.filter((p) => p.in !== 'body');
  const out: JSONObject = {
    description: op.description,
    operationId: op.operationId,
    ...(others.length ? { parameters: others.map(v3Param) } : {}),
    responses,
    tags: [op.tag],
    'x-kubernetes-action': op.action,
    'x-kubernetes-group-version-kind': { group: op.gvk.group, kind: op.gvk.kind, version: op.gvk.version },
  };
  if (bodyParam) {
    const content: JSONObject = {};
    const types = op.method === 'patch' ? op.consumes : ['*/*'];
    for (const mt of types) content[mt] = { schema: { $ref: V3_REF_PREFIX + bodyParam.schema! } };
    out['requestBody'] = { content, ...(bodyParam.required ? { required: true } : {}) };
  }
  return out;
}

function v3PathItem(entry: PathEntry): JSONObject {
  const item: JSONObject = {};
  for (const op of entry.ops) item[op.method] = v3Operation(op);
  if (entry.params.length) item['parameters'] = entry.params.map(v3Param);
  return item;
}

/** Every served group-version's document, in catalog order. */
export function buildV3(catalog: Catalog, opts: OpenAPIOptions = {}): V3Documents {
  const defs = buildDefinitions(catalog, { v2: false });
  const byGV = new Map<string, PathEntry[]>();
  for (const entry of buildPaths(catalog, opts.verbs, opts)) {
    const list = byGV.get(entry.gvPath) ?? [];
    list.push(entry);
    byGV.set(entry.gvPath, list);
  }
  const groupVersions = new Map<string, JSONObject>();
  for (const [gvPath, entries] of byGV) {
    const paths: JSONObject = {};
    for (const e of entries) paths[e.path] = v3PathItem(e);
    // The schemas reachable from the paths, and the kinds of this group-version themselves.
    const wanted = refsIn(paths, V3_REF_PREFIX);
    const queue = [...wanted];
    while (queue.length) {
      const name = queue.pop()!;
      const d = defs.get(name);
      if (!d) throw new Error(`openapi: dangling reference to ${name}`);
      for (const r of refsIn(d, V2_REF_PREFIX)) {
        if (!wanted.has(r)) {
          wanted.add(r);
          queue.push(r);
        }
      }
    }
    const schemas: JSONObject = {};
    for (const name of [...wanted].sort()) schemas[name] = toV3Schema(defs.get(name)!);
    groupVersions.set(
      gvPath,
      sortKeys({
        components: { schemas, securitySchemes: { BearerToken: { description: 'Bearer Token authentication', in: 'header', name: 'authorization', type: 'apiKey' } } },
        info: { title: 'Kubernetes', version: VERSION.gitVersion.split('-')[0]! },
        openapi: '3.0.0',
        paths,
        security: [{ BearerToken: [] }],
      }) as JSONObject,
    );
  }
  return { groupVersions };
}

/** kube-openapi's `computeETag`: upper-case hex SHA-512 of the served bytes. */
export function computeETag(data: Buffer | string): string {
  return createHash('sha512').update(data).digest('hex').toUpperCase();
}

/** `/openapi/v3/<gv>?hash=<etag>`, as kube-openapi's constructServerRelativeURL writes it. */
export function serverRelativeURL(gvPath: string, etag: string): string {
  return `/openapi/v3/${gvPath}?hash=${encodeURIComponent(etag)}`;
}

/** The `/openapi/v3` discovery document, given each group-version's ETag. */
export function discoveryDocument(etags: ReadonlyMap<string, string>): JSONObject {
  const paths: JSONObject = {};
  for (const gv of [...etags.keys()].sort()) paths[gv] = { serverRelativeURL: serverRelativeURL(gv, etags.get(gv)!) };
  return { paths };
}
