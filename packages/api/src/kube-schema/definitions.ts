/**
 * plinth's `Schema` of every kube type, derived once from the schema source: what decoding
 * (unknown-field pruning, JSON types, Go's pointer rule), strategic merge patch (patch strategies
 * and merge keys) and server-side apply (list, map and struct types) read. Definitions are keyed by
 * kube's OpenAPI names (`io.k8s.api.core.v1.ConfigMap`) and refer to each other by `$ref`; inlined
 * Go structs (`json:",inline"`: TypeMeta, Volume's VolumeSource) are flattened into their parent.
 */
import type { Schema } from '../schema.js';
import { setMember } from '../json.js';
import type { DefinitionFacts, FieldFacts, GroupVersionKind, SchemaNode } from './format.js';
import { definitionFacts, definitionNameOfKind, kubeSchema } from './source.js';

/**
 * The JSON form of kube's types that decode JSON themselves (a Go UnmarshalJSON), as plinth's
 * decoder takes them. Any other such type keeps whatever JSON it is given.
 */
const CUSTOM_JSON: Readonly<Record<string, Schema>> = {
  'io.k8s.apimachinery.pkg.apis.meta.v1.Time': { type: 'string', format: 'date-time', goType: 'v1.Time' },
  'io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime': { type: 'string', format: 'date-time', goType: 'v1.MicroTime' },
  'io.k8s.apimachinery.pkg.apis.meta.v1.Duration': { type: 'string', goType: 'v1.Duration' },
  'io.k8s.apimachinery.pkg.api.resource.Quantity': { type: 'string', goType: 'resource.Quantity' },
  'io.k8s.apimachinery.pkg.util.intstr.IntOrString': { 'x-kubernetes-int-or-string': true, goType: 'intstr.IntOrString' },
  // Any JSON object kept as it is.
  'io.k8s.apimachinery.pkg.runtime.RawExtension': { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, goType: 'runtime.RawExtension' },
  'io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1': { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, goType: 'v1.FieldsV1' },
};

/** Any JSON value kept as it is (apiextensions' JSON and JSONSchemaPropsOr*: checked by validation). */
const ANY_JSON = (goType: string): Schema => ({ 'x-kubernetes-preserve-unknown-fields': true, goType });

function nodeSchema(node: SchemaNode): Schema {
  const out: Schema = {};
  if (node.$ref) out.$ref = node.$ref;
  if (node.type) out.type = node.type;
  if (node.format) out.format = node.format;
  if (node.items) out.items = nodeSchema(node.items);
  if (node.additionalProperties) out.additionalProperties = nodeSchema(node.additionalProperties);
  if (node.go) out.goType = node.go;
  return out;
}

function fieldSchema(f: FieldFacts): Schema {
  const out = nodeSchema(f.schema);
  if (f.pointer) out.goPointer = true;
  else if (!f.omitempty && out.type === 'string' && out.format !== 'byte') out.goKeepsEmpty = true;
  if (f.schema.default !== undefined) out.v3Default = f.schema.default;
  if (f.listType) out['x-kubernetes-list-type'] = f.listType;
  if (f.listMapKeys) out['x-kubernetes-list-map-keys'] = [...f.listMapKeys];
  if (f.mapType) out['x-kubernetes-map-type'] = f.mapType;
  if (f.patchStrategy) out['x-kubernetes-patch-strategy'] = f.patchStrategy;
  if (f.patchMergeKey) out['x-kubernetes-patch-merge-key'] = f.patchMergeKey;
  return out;
}

/** The zero value Go's encoder writes for a scalar field it never omits (see Schema.goZeros), if one. */
function goZero(f: FieldFacts): number | boolean | string | undefined {
  if (f.omitempty || f.pointer || f.schema.$ref) return undefined;
  switch (f.schema.type) {
    case 'integer':
      return 0;
    case 'boolean':
      return false;
    case 'string':
      // A nil []byte is written as null, not "".
      return f.schema.format === 'byte' ? undefined : '';
    default:
      return undefined;
  }
}

/** A struct's properties in Go order, inlined structs flattened in place (kube-openapi's rule). */
function addFields(facts: DefinitionFacts, props: Record<string, Schema>, required: string[], zeros: Array<[string, number | boolean | string]>): void {
  for (const f of facts.fields ?? []) {
    if (f.inline) {
      addFields(definitionFacts(f.schema.$ref!), props, required, zeros);
      continue;
    }
    setMember(props, f.name, fieldSchema(f));
    if (f.required) required.push(f.name);
    const z = goZero(f);
    if (z !== undefined) zeros.push([f.name, z]);
  }
}

function definitionSchema(name: string, facts: DefinitionFacts): Schema {
  if (facts.customJSON) return CUSTOM_JSON[name] ?? ANY_JSON(facts.go);
  const properties: Record<string, Schema> = {};
  const required: string[] = [];
  const zeros: Array<[string, number | boolean | string]> = [];
  addFields(facts, properties, required, zeros);
  const out: Schema = { type: 'object', properties, goType: facts.go };
  if (required.length > 0) out.required = required;
  if (zeros.length > 0) out.goZeros = zeros;
  if (facts.mapType) out['x-kubernetes-map-type'] = facts.mapType;
  return out;
}

let definitions: Map<string, Schema> | undefined;

/**
 * Every kube type's schema by definition name (built once, on first use). Read-only: shared by
 * every decode, patch and apply.
 */
export function builtinDefinitions(): ReadonlyMap<string, Schema> {
  if (!definitions) {
    definitions = new Map();
    for (const [name, facts] of Object.entries(kubeSchema().definitions)) definitions.set(name, definitionSchema(name, facts));
  }
  return definitions;
}

/**
 * A Go struct's zero value as Go's encoder writes it: its goZeros (a DaemonSetStatus is
 * `{currentNumberScheduled: 0, numberMisscheduled: 0, ...}`, a DeploymentStatus `{}`). A new object.
 */
export function goZeroStruct(definition: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, z] of builtinDefinitions().get(definition)?.goZeros ?? []) setMember(out, k, z);
  return out;
}

/** The definition name of a kind kube 1.24 registers; throws when there is none. */
export function requireKindDefinition(gvk: GroupVersionKind): string {
  const name = definitionNameOfKind(gvk);
  if (!name) throw new Error(`kube schema: no kind ${gvk.group ? `${gvk.group}/` : ''}${gvk.version} ${gvk.kind}`);
  return name;
}

/** The schema of a registered kind (apiVersion, kind and metadata included). */
export function kindSchema(gvk: GroupVersionKind): Schema {
  return builtinDefinitions().get(requireKindDefinition(gvk))!;
}
