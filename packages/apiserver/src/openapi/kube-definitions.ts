/**
 * The OpenAPI form of kube's own types, written from the schema source as kube-openapi writes it
 * (pkg/generators/openapi.go at the version kube 1.24 pins): struct fields as properties (inlined
 * structs flattened), `required`, the `x-kubernetes-*` markers and unions, and a type's custom form
 * (Time, Quantity, IntOrString ...). The v3 flavour adds the defaults kube-openapi declares and the
 * `oneOf` of IntOrString and Quantity; v2 has neither, as kube's /openapi/v2. No descriptions but
 * plinth's own one line per kind: kube's prose is not copied.
 */
import { definitionFacts, setMember, type DefinitionFacts, type FieldFacts, type SchemaNode } from '@plinth/api';
import type { JSONObject, JSONValue } from './names.js';

export const V2_REF_PREFIX = '#/definitions/';

function node(n: SchemaNode, v2: boolean): JSONObject {
  if (n.$ref) {
    const out: JSONObject = { $ref: V2_REF_PREFIX + n.$ref };
    if (!v2 && n.default !== undefined) out['default'] = n.default as JSONValue;
    return out;
  }
  const out: JSONObject = {};
  if (!v2 && n.default !== undefined) out['default'] = n.default as JSONValue;
  if (n.type) out['type'] = n.type;
  if (n.format) out['format'] = n.format;
  if (n.items) out['items'] = node(n.items, v2);
  if (n.additionalProperties) out['additionalProperties'] = node(n.additionalProperties, v2);
  return out;
}

function property(f: FieldFacts, v2: boolean): JSONObject {
  const out = node(f.schema, v2);
  if (f.listType) out['x-kubernetes-list-type'] = f.listType;
  if (f.listMapKeys) out['x-kubernetes-list-map-keys'] = [...f.listMapKeys];
  if (f.mapType) out['x-kubernetes-map-type'] = f.mapType;
  if (f.patchStrategy) out['x-kubernetes-patch-strategy'] = f.patchStrategy;
  if (f.patchMergeKey) out['x-kubernetes-patch-merge-key'] = f.patchMergeKey;
  return out;
}

function addProperties(facts: DefinitionFacts, props: JSONObject, required: string[], v2: boolean): void {
  for (const f of facts.fields ?? []) {
    if (f.inline) {
      addProperties(definitionFacts(f.schema.$ref!), props, required, v2);
      continue;
    }
    setMember(props, f.name, property(f, v2));
    if (f.required) required.push(f.name);
  }
}

/** One definition of the schema source in OpenAPI form (refs as `#/definitions/<name>`). */
export function kubeDefinition(name: string, v2: boolean): JSONObject {
  const facts = definitionFacts(name);
  if (facts.openapi) {
    const out: JSONObject = {};
    if (!v2 && facts.v3OneOf) out['oneOf'] = facts.v3OneOf.map((type) => ({ type }));
    else if (facts.openapi.type) out['type'] = facts.openapi.type;
    if (facts.openapi.format) out['format'] = facts.openapi.format;
    return out;
  }
  const props: JSONObject = {};
  const required: string[] = [];
  addProperties(facts, props, required, v2);
  const out: JSONObject = { type: 'object' };
  if (Object.keys(props).length > 0) out['properties'] = props;
  if (required.length > 0) out['required'] = required;
  if (facts.mapType) out['x-kubernetes-map-type'] = facts.mapType;
  if (facts.unions) out['x-kubernetes-unions'] = structuredClone(facts.unions) as JSONValue;
  return out;
}

/** The definition names a JSON value refers to (`#/definitions/<name>`). */
export function refsIn(v: JSONValue, prefix: string, out = new Set<string>()): Set<string> {
  if (Array.isArray(v)) for (const x of v) refsIn(x, prefix, out);
  else if (v !== null && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) {
      if (k === '$ref' && typeof x === 'string' && x.startsWith(prefix)) out.add(x.slice(prefix.length));
      else refsIn(x, prefix, out);
    }
  }
  return out;
}
