/**
 * The Swagger 2.0 document kube-apiserver serves at `/openapi/v2`, built from the catalog.
 */
import type { Catalog, Verb } from '@plinth/api';
import { VERSION } from '../discovery.js';
import { buildDefinitions, V2_REF_PREFIX } from './definitions.js';
import { sortKeys, type JSONObject } from './names.js';
import { buildPaths, type Operation, type Param, type PathEntry } from './paths.js';

export interface OpenAPIOptions {
  /** Only these verbs are published (default: every verb of each catalog entry). */
  verbs?: ReadonlySet<Verb>;
  /** The ServerSideFieldValidation gate: create, update and patch advertise `fieldValidation`. */
  fieldValidation?: boolean;
  /** The ServerSideApply gate (default true): PATCH consumes `application/apply-patch+yaml`. */
  serverSideApply?: boolean;
}

export function v2Param(p: Param): JSONObject {
  if (p.in === 'body') {
    return { in: 'body', name: p.name, ...(p.required ? { required: true } : {}), schema: { $ref: V2_REF_PREFIX + p.schema! } };
  }
  return {
    description: p.description,
    in: p.in,
    name: p.name,
    ...(p.required ? { required: true } : {}),
    type: p.type ?? 'string',
    uniqueItems: true,
  };
}

function v2Operation(op: Operation): JSONObject {
  const responses: JSONObject = {};
  for (const [code, description, ref] of op.responses) {
    responses[code] = { description, ...(ref ? { schema: { $ref: V2_REF_PREFIX + ref } } : {}) };
  }
  return {
    consumes: op.consumes,
    description: op.description,
    operationId: op.operationId,
    ...(op.params.length ? { parameters: op.params.map(v2Param) } : {}),
    produces: op.produces,
    responses,
    schemes: ['https'],
    tags: [op.tag],
    'x-kubernetes-action': op.action,
    'x-kubernetes-group-version-kind': { group: op.gvk.group, kind: op.gvk.kind, version: op.gvk.version },
  };
}

export function v2PathItem(entry: PathEntry): JSONObject {
  const item: JSONObject = {};
  for (const op of entry.ops) item[op.method] = v2Operation(op);
  if (entry.params.length) item['parameters'] = entry.params.map(v2Param);
  return item;
}

/** The whole Swagger 2.0 document (keys sorted as kube's encoder writes them). */
export function buildSwagger(catalog: Catalog, opts: OpenAPIOptions = {}): JSONObject {
  const definitions: JSONObject = {};
  for (const [name, schema] of buildDefinitions(catalog, { v2: true })) definitions[name] = schema;
  const paths: JSONObject = {};
  for (const entry of buildPaths(catalog, opts.verbs, opts)) paths[entry.path] = v2PathItem(entry);
  return sortKeys({
    definitions,
    info: { title: 'Kubernetes', version: VERSION.gitVersion.split('-')[0]! },
    paths,
    security: [{ BearerToken: [] }],
    securityDefinitions: {
      BearerToken: { description: 'Bearer Token authentication', in: 'header', name: 'authorization', type: 'apiKey' },
    },
    swagger: '2.0',
  }) as JSONObject;
}
