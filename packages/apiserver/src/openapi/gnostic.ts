/**
 * The Swagger 2.0 JSON document as gnostic's `openapi.v2.Document` protobuf
 * (proto/openapi/v2/OpenAPIv2.proto), which kube-apiserver serves for
 * `Accept: application/com.github.proto-openapi.spec.v2@v1.0+protobuf`. The mapping follows
 * gnostic's generated `openapiv2/OpenAPIv2.go` (NewDocument and friends): JSON keys become the
 * snake_case fields, `$ref` → `_ref`, `x-*` keys → `vendor_extension` NamedAny entries holding the
 * value as YAML, maps → repeated Named* pairs in document order, and the oneofs (parameters,
 * schema items, additionalProperties, responses) pick their branch as gnostic does.
 */
import { stringify as yamlStringify } from 'yaml';
import { requireMessage } from '../protobuf/loader.js';
import type { JSONObject, JSONValue } from './names.js';

/** A protobufjs plain object (field name → value). */
type PB = { [k: string]: PBValue };
type PBValue = string | number | boolean | PB | PBValue[];

export const PROTOBUF_V2_MEDIA_TYPE = 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf';

function isObj(v: JSONValue | undefined): v is JSONObject {
  return v !== null && v !== undefined && typeof v === 'object' && !Array.isArray(v);
}

function strs(v: JSONValue | undefined): string[] | undefined {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : undefined;
}

/** gnostic's `Any`: the value as YAML (compiler.Marshal, 2-space indent). */
function yamlAny(v: JSONValue): PB {
  return { yaml: yamlStringify(v, { indent: 2 }) };
}

function vendorExtensions(o: JSONObject): PB[] {
  return Object.keys(o)
    .filter((k) => k.startsWith('x-'))
    .map((k) => ({ name: k, value: yamlAny(o[k]!) }));
}

/** Copies JSON fields to proto fields: [jsonKey, protoField, kind]. */
type Kind = 'str' | 'bool' | 'num' | 'strs' | 'any' | 'anys';
function copy(o: JSONObject, out: PB, fields: Array<[string, string, Kind]>): PB {
  for (const [j, p, kind] of fields) {
    const v = o[j];
    if (v === undefined || v === null) continue;
    if (kind === 'str' && typeof v === 'string') out[p] = v;
    else if (kind === 'bool' && typeof v === 'boolean') out[p] = v;
    else if (kind === 'num' && typeof v === 'number') out[p] = v;
    else if (kind === 'strs') out[p] = strs(v) ?? (typeof v === 'string' ? [v] : []);
    else if (kind === 'any') out[p] = yamlAny(v);
    else if (kind === 'anys' && Array.isArray(v)) out[p] = v.map(yamlAny);
  }
  const ext = vendorExtensions(o);
  if (ext.length) out['vendor_extension'] = ext;
  return out;
}

const VALIDATIONS: Array<[string, string, Kind]> = [
  ['maximum', 'maximum', 'num'],
  ['exclusiveMaximum', 'exclusive_maximum', 'bool'],
  ['minimum', 'minimum', 'num'],
  ['exclusiveMinimum', 'exclusive_minimum', 'bool'],
  ['maxLength', 'max_length', 'num'],
  ['minLength', 'min_length', 'num'],
  ['pattern', 'pattern', 'str'],
  ['maxItems', 'max_items', 'num'],
  ['minItems', 'min_items', 'num'],
  ['uniqueItems', 'unique_items', 'bool'],
  ['enum', 'enum', 'anys'],
  ['multipleOf', 'multiple_of', 'num'],
];

export function schema(o: JSONObject): PB {
  const out = copy(o, {}, [
    ['$ref', '_ref', 'str'],
    ['format', 'format', 'str'],
    ['title', 'title', 'str'],
    ['description', 'description', 'str'],
    ['default', 'default', 'any'],
    ...VALIDATIONS,
    ['maxProperties', 'max_properties', 'num'],
    ['minProperties', 'min_properties', 'num'],
    ['required', 'required', 'strs'],
    ['discriminator', 'discriminator', 'str'],
    ['readOnly', 'read_only', 'bool'],
    ['example', 'example', 'any'],
  ]);
  const ap = o['additionalProperties'];
  if (typeof ap === 'boolean') out['additional_properties'] = { boolean: ap };
  else if (isObj(ap)) out['additional_properties'] = { schema: schema(ap) };
  const t = o['type'];
  if (t !== undefined) out['type'] = { value: strs(t) ?? (typeof t === 'string' ? [t] : []) };
  const items = o['items'];
  if (isObj(items)) out['items'] = { schema: [schema(items)] };
  else if (Array.isArray(items)) out['items'] = { schema: items.filter(isObj).map(schema) };
  const allOf = o['allOf'];
  if (Array.isArray(allOf)) out['all_of'] = allOf.filter(isObj).map(schema);
  const props = o['properties'];
  if (isObj(props)) out['properties'] = { additional_properties: Object.entries(props).filter(([, v]) => isObj(v)).map(([name, v]) => ({ name, value: schema(v as JSONObject) })) };
  return out;
}

function parametersItem(o: JSONObject): PB {
  if (typeof o['$ref'] === 'string') return { json_reference: copy(o, {}, [['$ref', '_ref', 'str'], ['description', 'description', 'str']]) };
  return { parameter: parameter(o) };
}

function parameter(o: JSONObject): PB {
  if (o['in'] === 'body') {
    const out = copy(o, {}, [['description', 'description', 'str'], ['name', 'name', 'str'], ['in', 'in', 'str'], ['required', 'required', 'bool']]);
    if (isObj(o['schema'])) out['schema'] = schema(o['schema']);
    return { body_parameter: out };
  }
  const base: Array<[string, string, Kind]> = [
    ['required', 'required', 'bool'],
    ['in', 'in', 'str'],
    ['description', 'description', 'str'],
    ['name', 'name', 'str'],
  ];
  const rest: Array<[string, string, Kind]> = [['type', 'type', 'str'], ['format', 'format', 'str'], ['collectionFormat', 'collection_format', 'str'], ['default', 'default', 'any'], ...VALIDATIONS];
  const withEmpty: Array<[string, string, Kind]> = [...base, ['allowEmptyValue', 'allow_empty_value', 'bool'], ...rest];
  const sub: Record<string, [string, Array<[string, string, Kind]>]> = {
    header: ['header_parameter_sub_schema', [...base, ...rest]],
    formData: ['form_data_parameter_sub_schema', withEmpty],
    query: ['query_parameter_sub_schema', withEmpty],
    path: ['path_parameter_sub_schema', [...base, ...rest]],
  };
  const [field, fields] = sub[typeof o['in'] === 'string' ? o['in'] : 'query'] ?? sub['query']!;
  const out = copy(o, {}, fields);
  if (isObj(o['items'])) out['items'] = primitivesItems(o['items']);
  return { non_body_parameter: { [field]: out } };
}

function primitivesItems(o: JSONObject): PB {
  const out = copy(o, {}, [['type', 'type', 'str'], ['format', 'format', 'str'], ['collectionFormat', 'collection_format', 'str'], ['default', 'default', 'any'], ...VALIDATIONS]);
  if (isObj(o['items'])) out['items'] = primitivesItems(o['items']);
  return out;
}

function operation(o: JSONObject): PB {
  const out = copy(o, {}, [
    ['tags', 'tags', 'strs'],
    ['summary', 'summary', 'str'],
    ['description', 'description', 'str'],
    ['operationId', 'operation_id', 'str'],
    ['produces', 'produces', 'strs'],
    ['consumes', 'consumes', 'strs'],
    ['schemes', 'schemes', 'strs'],
    ['deprecated', 'deprecated', 'bool'],
  ]);
  const params = o['parameters'];
  if (Array.isArray(params)) out['parameters'] = params.filter(isObj).map(parametersItem);
  const responses = o['responses'];
  if (isObj(responses)) {
    const codes = Object.keys(responses).filter((k) => !k.startsWith('x-'));
    out['responses'] = copy(responses, { response_code: codes.filter((c) => isObj(responses[c])).map((c) => ({ name: c, value: responseValue(responses[c] as JSONObject) })) }, []);
  }
  return out;
}

function responseValue(o: JSONObject): PB {
  if (typeof o['$ref'] === 'string') return { json_reference: copy(o, {}, [['$ref', '_ref', 'str'], ['description', 'description', 'str']]) };
  const out = copy(o, {}, [['description', 'description', 'str']]);
  const s = o['schema'];
  if (isObj(s)) out['schema'] = s['type'] === 'file' ? { file_schema: copy(s, {}, [['format', 'format', 'str'], ['description', 'description', 'str'], ['type', 'type', 'str']]) } : { schema: schema(s) };
  return { response: out };
}

function pathItem(o: JSONObject): PB {
  const out = copy(o, {}, [['$ref', '_ref', 'str']]);
  for (const m of ['get', 'put', 'post', 'delete', 'options', 'head', 'patch']) {
    const op = o[m];
    if (isObj(op)) out[m] = operation(op);
  }
  const params = o['parameters'];
  if (Array.isArray(params)) out['parameters'] = params.filter(isObj).map(parametersItem);
  return out;
}

function securityRequirements(v: JSONValue | undefined): PB[] | undefined {
  if (!Array.isArray(v)) return undefined;
  return v.filter(isObj).map((req) => ({ additional_properties: Object.entries(req).map(([name, scopes]) => ({ name, value: { value: strs(scopes) ?? [] } })) }));
}

/** gnostic's NewDocument, for the document shapes buildSwagger produces. */
export function toGnosticDocument(doc: JSONObject): PB {
  const out = copy(doc, {}, [
    ['swagger', 'swagger', 'str'],
    ['host', 'host', 'str'],
    ['basePath', 'base_path', 'str'],
    ['schemes', 'schemes', 'strs'],
    ['consumes', 'consumes', 'strs'],
    ['produces', 'produces', 'strs'],
  ]);
  const info = doc['info'];
  if (isObj(info)) out['info'] = copy(info, {}, [['title', 'title', 'str'], ['version', 'version', 'str'], ['description', 'description', 'str'], ['termsOfService', 'terms_of_service', 'str']]);
  const paths = doc['paths'];
  if (isObj(paths)) {
    const entries = Object.entries(paths).filter(([k, v]) => k.startsWith('/') && isObj(v));
    out['paths'] = copy(paths, { path: entries.map(([name, v]) => ({ name, value: pathItem(v as JSONObject) })) }, []);
  }
  const defs = doc['definitions'];
  if (isObj(defs)) out['definitions'] = { additional_properties: Object.entries(defs).filter(([, v]) => isObj(v)).map(([name, v]) => ({ name, value: schema(v as JSONObject) })) };
  const params = doc['parameters'];
  if (isObj(params)) out['parameters'] = { additional_properties: Object.entries(params).filter(([, v]) => isObj(v)).map(([name, v]) => ({ name, value: parameter(v as JSONObject) })) };
  const security = securityRequirements(doc['security']);
  if (security) out['security'] = security;
  const sd = doc['securityDefinitions'];
  if (isObj(sd)) {
    out['security_definitions'] = {
      additional_properties: Object.entries(sd)
        .filter(([, v]) => isObj(v) && (v as JSONObject)['type'] === 'apiKey')
        .map(([name, v]) => ({ name, value: { api_key_security: copy(v as JSONObject, {}, [['type', 'type', 'str'], ['name', 'name', 'str'], ['in', 'in', 'str'], ['description', 'description', 'str']]) } })),
    };
  }
  return out;
}

/** The protobuf bytes of the document. */
export function encodeGnostic(doc: JSONObject): Buffer {
  const type = requireMessage('openapi.v2.Document');
  return Buffer.from(type.encode(type.fromObject(toGnosticDocument(doc))).finish());
}
