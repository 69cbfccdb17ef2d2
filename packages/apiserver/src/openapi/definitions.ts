/**
 * The schema definitions of the OpenAPI documents: every served kind and the list of every stored
 * one, with `x-kubernetes-group-version-kind`, and every definition they reach. Built-in types come
 * from the schema source as kube-openapi writes them (kube-definitions.ts); custom resources' from
 * their CRD's schemas, as kube's CRD OpenAPI builder writes them. Refs are written in Swagger 2.0
 * form (`#/definitions/<name>`); v3.ts rewrites them.
 */
import { OBJECT_META, META_V1_PREFIX, setMember, type Catalog, type KindDefinition, type ResourceDefinition, type Schema } from '@plinth/api';
import { kubeDefinition, refsIn, V2_REF_PREFIX } from './kube-definitions.js';
import { kindName, listKindName, type JSONObject, type JSONValue } from './names.js';

export { refsIn, V2_REF_PREFIX } from './kube-definitions.js';

export interface GVK {
  group: string;
  version: string;
  kind: string;
}

export const STATUS = `${META_V1_PREFIX}Status`;
export const DELETE_OPTIONS = `${META_V1_PREFIX}DeleteOptions`;
export const WATCH_EVENT = `${META_V1_PREFIX}WatchEvent`;
export const PATCH = `${META_V1_PREFIX}Patch`;

const LIST_EXTENSIONS = ['x-kubernetes-list-type', 'x-kubernetes-list-map-keys', 'x-kubernetes-map-type', 'x-kubernetes-patch-strategy', 'x-kubernetes-patch-merge-key'] as const;

function copyExtensions(sch: Schema, out: JSONObject): void {
  for (const k of LIST_EXTENSIONS) {
    const v = sch[k];
    if (v !== undefined) out[k] = Array.isArray(v) ? [...v] : v;
  }
}

/** Custom resources' schemas as kube's CRD OpenAPI builder publishes them. */
class CustomConverter {
  constructor(
    /** The Swagger 2.0 document's flavour (see `custom`). */
    readonly v2: boolean,
  ) {}

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
          apiVersion: { type: 'string' },
          kind: { type: 'string' },
          metadata: { $ref: V2_REF_PREFIX + OBJECT_META },
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

/** A custom resource kind's definition (apiVersion, kind and metadata added, as kube's builder does). */
function customKindDefinition(def: KindDefinition, conv: CustomConverter): JSONObject {
  // kube's buildKubeNative: Swagger 2.0 publishes a custom resource whose root preserves unknown
  // fields as a bare object (kubectl would refuse every field not listed).
  if (conv.v2 && def.schema['x-kubernetes-preserve-unknown-fields']) return { type: 'object' };
  const out = conv.custom(def.schema);
  out['type'] = 'object';
  const props = (out['properties'] ??= {}) as JSONObject;
  props['apiVersion'] = { type: 'string' };
  props['kind'] = { type: 'string' };
  props['metadata'] = { $ref: V2_REF_PREFIX + OBJECT_META };
  return out;
}

/** A custom resource's list kind (kube's CRD builder writes one per version). */
function customListDefinition(def: ResourceDefinition): JSONObject {
  return {
    description: `A list of ${def.kind} objects.`,
    properties: {
      apiVersion: { type: 'string' },
      items: { items: { $ref: V2_REF_PREFIX + kindName(def) }, type: 'array' },
      kind: { type: 'string' },
      metadata: { $ref: `${V2_REF_PREFIX}${META_V1_PREFIX}ListMeta` },
    },
    required: ['items'],
    type: 'object',
  };
}

const gvkList = (gvks: GVK[]): JSONValue => gvks.map((g) => ({ group: g.group, kind: g.kind, version: g.version }));

/**
 * Every definition, by qualified name (sorted). `v2`: for the Swagger 2.0 document (no defaults;
 * custom resource schemas filtered for kubectl, see CustomConverter.custom).
 */
export function buildDefinitions(catalog: Catalog, opts: { v2: boolean }): Map<string, JSONObject> {
  const conv = new CustomConverter(opts.v2);
  const defs = new Map<string, JSONObject>();
  /** The kinds each definition is served as (kube's x-kubernetes-group-version-kind). */
  const kinds = new Map<string, GVK[]>();
  const description = new Map<string, string>();
  const served = (name: string, gvk: GVK): void => {
    const list = kinds.get(name) ?? [];
    if (!list.some((g) => g.group === gvk.group && g.version === gvk.version && g.kind === gvk.kind)) list.push(gvk);
    kinds.set(name, list);
  };
  const builtin: string[] = [STATUS, DELETE_OPTIONS, WATCH_EVENT, PATCH];
  const gvs: Array<{ group: string; version: string }> = [];
  for (const def of catalog.all()) {
    if (!gvs.some((g) => g.group === def.group && g.version === def.version)) gvs.push({ group: def.group, version: def.version });
    // What is not stored is never listed (kube has no TokenReviewList), except what is computed
    // on read (ComponentStatusList).
    if (!def.listKind) continue;
    if (def.unstructured) defs.set(listKindName(def), customListDefinition(def));
    else {
      builtin.push(listKindName(def));
      description.set(listKindName(def), `A list of ${def.kind} objects.`);
    }
    served(listKindName(def), { group: def.group, version: def.version, kind: def.listKind });
  }
  for (const kind of catalog.kinds()) {
    const name = kindName(kind);
    served(name, { group: kind.group, version: kind.version, kind: kind.kind });
    if (kind.unstructured) defs.set(name, customKindDefinition(kind, conv));
    else builtin.push(name);
    if (kind.description) description.set(name, kind.description);
  }
  // meta/v1: Status is unversioned; DeleteOptions and WatchEvent are registered in every group-version.
  served(STATUS, { group: '', version: 'v1', kind: 'Status' });
  for (const name of [DELETE_OPTIONS, WATCH_EVENT]) for (const gv of gvs) served(name, { ...gv, kind: name.slice(META_V1_PREFIX.length) });
  // Built-in definitions and everything they (and custom resources) reach.
  const queue = [...builtin];
  for (const d of defs.values()) queue.push(...refsIn(d, V2_REF_PREFIX));
  while (queue.length > 0) {
    const name = queue.pop()!;
    if (defs.has(name)) continue;
    const d = kubeDefinition(name, opts.v2);
    defs.set(name, d);
    queue.push(...refsIn(d, V2_REF_PREFIX));
  }
  for (const [name, gvks] of kinds) {
    const d = defs.get(name);
    if (d) d['x-kubernetes-group-version-kind'] = gvkList(gvks);
  }
  for (const [name, text] of description) {
    const d = defs.get(name);
    if (d && !d['description']) d['description'] = text;
  }
  return new Map([...defs.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
