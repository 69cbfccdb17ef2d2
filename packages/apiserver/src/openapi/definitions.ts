/**
 * The schema definitions of the OpenAPI documents, built from the catalog: every served kind and
 * the list of every stored one (with `x-kubernetes-group-version-kind`), the shared definitions their schemas reference
 * under kube's qualified names, nested struct types hoisted to their own definitions
 * (`io.k8s.api.core.v1.NamespaceSpec`), and the meta/v1 types every API uses (ListMeta, Time,
 * Status, DeleteOptions, WatchEvent, Patch …). Refs are written in Swagger 2.0 form
 * (`#/definitions/<name>`); v3.ts rewrites them.
 */
import { isStored, type Catalog, type KindDefinition, type ResourceDefinition, type Schema, setMember } from '@plinth/api';
import { fullSchemaOf } from '../registry/codec.js';
import { DefinitionNames, META_PKG, goTypeName, kindName, listKindName, packageOf, type JSONObject, type JSONValue } from './names.js';

export const V2_REF_PREFIX = '#/definitions/';

export interface GVK {
  group: string;
  version: string;
  kind: string;
}

const TIME = `${META_PKG}.Time`;
const MICRO_TIME = `${META_PKG}.MicroTime`;
const FIELDS_V1 = `${META_PKG}.FieldsV1`;
const LIST_META = `${META_PKG}.ListMeta`;
export const STATUS = `${META_PKG}.Status`;
export const DELETE_OPTIONS = `${META_PKG}.DeleteOptions`;
export const WATCH_EVENT = `${META_PKG}.WatchEvent`;
export const PATCH = `${META_PKG}.Patch`;

const ref = (name: string, description?: string): JSONObject => ({ $ref: V2_REF_PREFIX + name, ...(description ? { description } : {}) });
const str = (description: string): JSONObject => ({ description, type: 'string' });
const int = (description: string, format: 'int32' | 'int64'): JSONObject => ({ description, format, type: 'integer' });
const gvkList = (gvks: GVK[]): JSONValue => gvks.map((g) => ({ group: g.group, kind: g.kind, version: g.version }));

const API_VERSION_DESC =
  'APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources';
const KIND_DESC =
  'Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds';

const LIST_EXTENSIONS = ['x-kubernetes-list-type', 'x-kubernetes-list-map-keys', 'x-kubernetes-map-type', 'x-kubernetes-patch-strategy', 'x-kubernetes-patch-merge-key'] as const;

function copyExtensions(sch: Schema, out: JSONObject): void {
  for (const k of LIST_EXTENSIONS) {
    const v = sch[k];
    if (v !== undefined) out[k] = Array.isArray(v) ? [...v] : v;
  }
}

/** Converts catalog schemas to OpenAPI schemas, hoisting named nested structs into `defs`. */
class Converter {
  constructor(
    readonly names: DefinitionNames,
    readonly defs: Map<string, JSONObject>,
    /** The Swagger 2.0 document's flavour of custom resource schemas (see `custom`). */
    readonly v2: boolean,
  ) {}

  convert(sch: Schema, pkg: string, field: string, top = false): JSONObject {
    const description = sch.description;
    if (sch.$ref) return ref(this.names.qualify(sch.$ref), description);
    if (sch.type === 'string' && sch['x-go-type'] === 'v1.MicroTime') return ref(MICRO_TIME, description);
    if (sch.type === 'string' && sch.format === 'date-time') return ref(TIME, description);
    if (sch['x-kubernetes-preserve-unknown-fields'] && !sch.properties) {
      if (field === 'fieldsV1') return ref(FIELDS_V1, description);
      // Without a type it holds any JSON value: kube's `JSON` and `JSONSchemaPropsOr*` have none,
      // so a validating client takes a string or a number there (a CRD's enum, default, example).
      return { ...(description ? { description } : {}), ...(sch.type ? { type: sch.type } : {}) };
    }
    if (sch['x-kubernetes-int-or-string']) return { ...(description ? { description } : {}), format: 'int-or-string', type: 'string' };
    const typeName = goTypeName(sch);
    if (!top && sch.properties && typeName) {
      const name = `${pkg}.${typeName}`;
      // The catalog describes the field on the nested struct; the hoisted type keeps no copy of it
      // (explain would print it twice).
      if (!this.defs.has(name)) this.defs.set(name, this.convert({ ...sch, description: undefined }, pkg, field, true));
      return ref(name, description);
    }
    const out: JSONObject = {};
    if (description) out['description'] = description;
    if (sch.type) out['type'] = sch.type;
    if (sch.format) out['format'] = sch.format;
    if (sch.enum) out['enum'] = [...sch.enum];
    if (sch.items) out['items'] = this.convert(sch.items, pkg, field);
    if (sch.additionalProperties) out['additionalProperties'] = this.convert(sch.additionalProperties, pkg, field);
    if (sch.properties) {
      const props: JSONObject = {};
      for (const [k, v] of Object.entries(sch.properties)) setMember(props, k, this.convert(v, pkg, k));
      out['properties'] = props;
      out['type'] = 'object';
    }
    if (sch.required?.length) out['required'] = [...sch.required];
    copyExtensions(sch, out);
    return out;
  }

  /**
   * A custom resource's schema as kube's CRD OpenAPI builder publishes it (structural
   * ToKubeOpenAPI after Unfold: a `date-time` string stays inline, int-or-string gets its anyOf).
   * For Swagger 2.0 it first goes through kube's ToStructuralOpenAPIV2, which leaves untyped what
   * kubectl's client-side validation would wrongly refuse: nullable values (their items and
   * properties dropped too, and their names dropped from `required`), values that preserve
   * unknown fields (items and properties dropped; an object's type too) and arrays left without
   * items; anyOf goes.
   */
  custom(sch: Schema): JSONObject {
    const preserve = !!sch['x-kubernetes-preserve-unknown-fields'];
    let type = sch.type;
    let properties = sch.properties;
    let items = sch.items;
    let required = sch.required;
    if (this.v2) {
      if (sch.nullable) {
        type = undefined;
        properties = undefined;
        items = undefined;
      }
      if (preserve) {
        properties = undefined;
        items = undefined;
      }
      if (!items && type === 'array') type = undefined;
      if (preserve && type === 'object') type = undefined;
      if (required && properties) {
        const props = properties;
        required = required.filter((f) => !props[f]?.nullable);
      }
      if (sch.additionalProperties?.nullable) required = undefined;
    }
    const out: JSONObject = {};
    if (sch.description) out['description'] = sch.description;
    if (type) out['type'] = type;
    if (sch.format) out['format'] = sch.format;
    if (sch.enum) out['enum'] = [...sch.enum];
    if (!this.v2 && sch.nullable) out['nullable'] = true;
    if (items) out['items'] = this.custom(items);
    if (sch.additionalProperties) out['additionalProperties'] = this.custom(sch.additionalProperties);
    let props: JSONObject | undefined;
    if (properties) {
      props = {};
      for (const [k, v] of Object.entries(properties)) setMember(props, k, this.custom(v));
    }
    if (sch['x-kubernetes-int-or-string']) {
      out['x-kubernetes-int-or-string'] = true;
      if (!this.v2) out['anyOf'] = [{ type: 'integer' }, { type: 'string' }];
    }
    if (preserve) out['x-kubernetes-preserve-unknown-fields'] = true;
    let req = required ? [...required] : undefined;
    if (sch['x-kubernetes-embedded-resource']) {
      out['x-kubernetes-embedded-resource'] = true;
      // kube's addEmbeddedProperties (not in Swagger 2.0 for an object preserving unknown fields).
      if (!(this.v2 && preserve)) {
        props = {
          ...props,
          apiVersion: str('apiVersion defines the versioned schema of this representation of an object.'),
          kind: str('kind is a string value representing the type of this object.'),
          metadata: ref(this.names.qualify('ObjectMeta'), "Standard object's metadata."),
        };
        req = [...(req ?? [])];
        for (const f of ['kind', 'apiVersion']) if (!req.includes(f)) req.push(f);
      }
    }
    if (props) out['properties'] = props;
    if (req?.length) out['required'] = req;
    copyExtensions(sch, out);
    return out;
  }
}

/** meta/v1 definitions besides the catalog's own (whose names the catalog does not reference). */
function metaExtras(gvs: Array<{ group: string; version: string }>): Record<string, JSONObject> {
  const everyGV = (kind: string): JSONValue => gvkList(gvs.map((gv) => ({ ...gv, kind })));
  return {
    [TIME]: {
      description: 'Time is a wrapper around time.Time which supports correct marshaling to YAML and JSON.  Wrappers are provided for many of the factory methods that the time package offers.',
      format: 'date-time',
      type: 'string',
    },
    [MICRO_TIME]: {
      description: 'MicroTime is version of Time with microsecond level precision.',
      format: 'date-time',
      type: 'string',
    },
    [FIELDS_V1]: {
      description: "FieldsV1 stores a set of fields in a data structure like a Trie, in JSON format.\n\nEach key is either a '.' representing the field itself, and will always map to an empty set, or a string representing a sub-field or item. The string will follow one of these four formats: 'f:<name>', where <name> is the name of a field in a struct, or key in a map 'v:<value>', where <value> is the exact json formatted value of a list item 'i:<index>', where <index> is position of a item in a list 'k:<keys>', where <keys> is a map of  a list item's key fields to their unique values If a key maps to an empty Fields value, the field that key represents is part of the set.\n\nThe exact format is defined in sigs.k8s.io/structured-merge-diff",
      type: 'object',
    },
    [LIST_META]: {
      description: 'ListMeta describes metadata that synthetic resources must have, including lists and various status objects. A resource may have only one of {ObjectMeta, ListMeta}.',
      properties: {
        continue: str('continue may be set if the user set a limit on the number of items returned, and indicates that the server has more data available.'),
        remainingItemCount: int('remainingItemCount is the number of subsequent items in the list which are not included in this list response.', 'int64'),
        resourceVersion: str("String that identifies the server's internal version of this object that can be used by clients to determine when objects have changed."),
        selfLink: str('Deprecated: selfLink is a legacy read-only field that is no longer populated by the system.'),
      },
      type: 'object',
    },
    [`${META_PKG}.StatusCause`]: {
      description: 'StatusCause provides more information about an api.Status failure, including cases when multiple errors are encountered.',
      properties: {
        field: str('The field of the resource that has caused this error, as named by its JSON serialization.'),
        message: str('A human-readable description of the cause of the error.'),
        reason: str('A machine-readable description of the cause of the error. If this value is empty there is no information available.'),
      },
      type: 'object',
    },
    [`${META_PKG}.StatusDetails`]: {
      description: 'StatusDetails is a set of additional properties that MAY be set by the server to provide additional information about a response.',
      properties: {
        causes: { description: 'The Causes array includes more details associated with the StatusReason failure.', items: ref(`${META_PKG}.StatusCause`), type: 'array' },
        group: str('The group attribute of the resource associated with the status StatusReason.'),
        kind: str('The kind attribute of the resource associated with the status StatusReason.'),
        name: str('The name attribute of the resource associated with the status StatusReason (when there is a single name which can be described).'),
        retryAfterSeconds: int('If specified, the time in seconds before the operation should be retried.', 'int32'),
        uid: str('UID of the resource. (when there is a single resource which can be described).'),
      },
      type: 'object',
    },
    [STATUS]: {
      description: 'Status is a return value for calls that don\'t return other objects.',
      properties: {
        apiVersion: str(API_VERSION_DESC),
        code: int('Suggested HTTP return code for this status, 0 if not set.', 'int32'),
        details: ref(`${META_PKG}.StatusDetails`, 'Extended data associated with the reason.  Each reason may define its own extended details.'),
        kind: str(KIND_DESC),
        message: str('A human-readable description of the status of this operation.'),
        metadata: ref(LIST_META, 'Standard list metadata.'),
        reason: str('A machine-readable description of why this operation is in the "Failure" status.'),
        status: str('Status of the operation. One of: "Success" or "Failure".'),
      },
      type: 'object',
      'x-kubernetes-group-version-kind': gvkList([{ group: '', version: 'v1', kind: 'Status' }]),
    },
    [`${META_PKG}.Preconditions`]: {
      description: 'Preconditions must be fulfilled before an operation (update, delete, etc.) is carried out.',
      properties: { resourceVersion: str('Specifies the target ResourceVersion'), uid: str('Specifies the target UID.') },
      type: 'object',
    },
    [DELETE_OPTIONS]: {
      description: 'DeleteOptions may be provided when deleting an API object.',
      properties: {
        apiVersion: str(API_VERSION_DESC),
        dryRun: { description: 'When present, indicates that modifications should not be persisted.', items: { type: 'string' }, type: 'array' },
        gracePeriodSeconds: int('The duration in seconds before the object should be deleted.', 'int64'),
        kind: str(KIND_DESC),
        orphanDependents: { description: 'Deprecated: please use the PropagationPolicy, this field will be deprecated in 1.7.', type: 'boolean' },
        preconditions: ref(`${META_PKG}.Preconditions`, 'Must be fulfilled before a deletion is carried out.'),
        propagationPolicy: str("Whether and how garbage collection will be performed. Acceptable values are: 'Orphan', 'Background' and 'Foreground'."),
      },
      type: 'object',
      'x-kubernetes-group-version-kind': everyGV('DeleteOptions'),
    },
    [WATCH_EVENT]: {
      description: 'Event represents a single event to a watched resource.',
      properties: {
        object: ref('io.k8s.apimachinery.pkg.runtime.RawExtension', 'Object is:\n * If Type is Added or Modified: the new state of the object.\n * If Type is Deleted: the state of the object immediately before deletion.\n * If Type is Error: *Status is recommended; other types may make sense\n   depending on context.'),
        type: str(''),
      },
      required: ['type', 'object'],
      type: 'object',
      'x-kubernetes-group-version-kind': everyGV('WatchEvent'),
    },
    ['io.k8s.apimachinery.pkg.runtime.RawExtension']: {
      description: 'RawExtension is used to hold extensions in external versions.',
      type: 'object',
    },
    [PATCH]: {
      description: 'Patch is provided to give a concrete name and type to the Kubernetes PATCH request body.',
      type: 'object',
    },
  };
}

function kindDefinition(def: KindDefinition, conv: Converter): JSONObject {
  const custom = !!def.unstructured;
  // kube's buildKubeNative: Swagger 2.0 publishes a custom resource whose root preserves unknown
  // fields as a bare object (kubectl would refuse every field not listed).
  if (custom && conv.v2 && def.schema['x-kubernetes-preserve-unknown-fields']) {
    return { type: 'object', 'x-kubernetes-group-version-kind': gvkList([{ group: def.group, version: def.version, kind: def.kind }]) };
  }
  const out = custom ? conv.custom(def.schema) : conv.convert(fullSchemaOf(def), packageOf(def.group, def.version), '', true);
  out['type'] = 'object';
  const props = (out['properties'] ??= {}) as JSONObject;
  props['apiVersion'] = str(API_VERSION_DESC);
  props['kind'] = str(KIND_DESC);
  props['metadata'] = ref(conv.names.qualify('ObjectMeta'), "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata");
  out['x-kubernetes-group-version-kind'] = gvkList([{ group: def.group, version: def.version, kind: def.kind }]);
  return out;
}

function listDefinition(def: ResourceDefinition): JSONObject {
  return {
    description: `${def.listKind} is a list of ${def.kind} objects.`,
    properties: {
      apiVersion: str(API_VERSION_DESC),
      items: { description: `Items is a list of ${def.kind} objects.`, items: ref(kindName(def)), type: 'array' },
      kind: str(KIND_DESC),
      metadata: ref(LIST_META, 'Standard list metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds'),
    },
    required: ['items'],
    type: 'object',
    'x-kubernetes-group-version-kind': gvkList([{ group: def.group, version: def.version, kind: def.listKind }]),
  };
}

/**
 * Every definition, by qualified name (sorted). `v2`: for the Swagger 2.0 document, whose custom
 * resource schemas kube filters for kubectl (see Converter.custom).
 */
export function buildDefinitions(catalog: Catalog, opts: { v2: boolean }): Map<string, JSONObject> {
  const names = new DefinitionNames(catalog);
  const defs = new Map<string, JSONObject>();
  const conv = new Converter(names, defs, opts.v2);
  for (const [short, qualified] of names.entries()) {
    const sch = names.shared.get(short);
    if (sch) defs.set(qualified, conv.convert(sch, qualified.slice(0, qualified.lastIndexOf('.')), '', true));
  }
  const gvs: Array<{ group: string; version: string }> = [];
  for (const def of catalog.all()) {
    if (!gvs.some((g) => g.group === def.group && g.version === def.version)) gvs.push({ group: def.group, version: def.version });
    // What is not stored is never listed: kube has no TokenReviewList.
    if (isStored(def)) defs.set(listKindName(def), listDefinition(def));
  }
  for (const kind of catalog.kinds()) defs.set(kindName(kind), kindDefinition(kind, conv));
  for (const [k, v] of Object.entries(metaExtras(gvs))) defs.set(k, v);
  return new Map([...defs.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** The `$ref` targets (qualified names) a JSON value mentions, with the given prefix. */
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
