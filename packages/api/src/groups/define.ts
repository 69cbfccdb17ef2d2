/**
 * One call per resource: `defineResource({...})` turns what a resource module declares (discovery
 * facts, strategy, Table columns, field selectors, sub-resources, versions) into the catalog's
 * ResourceDefinition, with the kind's schema looked up by group/version/kind in the pinned schema
 * source. Nothing about a type is written anywhere else: decoding, OpenAPI, Protobuf, server-side
 * apply and patches read the schema source, handlers read the definition.
 */
import { deprecationWarning, type Deprecation, type KindDefinition, ResourceDefinition, ResourceStorage, ResourceStrategy, SubresourceDefinition, Verb, VersionConversion } from '../catalog.js';
import { kindSchema } from '../kube-schema/definitions.js';
import type { Schema } from '../schema.js';
import { fieldLabels, type FieldSetSource, type WatchIndex } from '../selectors/fields.js';
import type { TableDefinition } from '../tables.js';
import type { StoredObject } from '../types.js';
import { nameIsDNSSubdomain, type NameValidator } from '../validation.js';

/** Every verb of a stored resource, in kube's discovery order. */
export const ALL_VERBS: readonly Verb[] = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

/** A kind that is not a resource of its own (a sub-resource's body: TokenRequest). */
export interface KindSpec {
  group: string;
  version: string;
  kind: string;
  /** plinth's own one-line text about the kind (OpenAPI). */
  description: string;
  strategy: ResourceStrategy;
  /** Other versions of the kind a body may come in (see KindDefinition.alternateVersions). */
  alternateVersions?: readonly KindDefinition[];
}

/** What a resource module declares. Defaults are kube's most common values. */
export interface ResourceSpec extends KindSpec {
  /** The URL segment (lower-case plural). */
  plural: string;
  /** Default: the kind in lower case. */
  singular?: string;
  shortNames?: string[];
  categories?: string[];
  namespaced: boolean;
  /** Default: every verb (a stored resource) or `create` (one that is not stored). */
  verbs?: Verb[];
  /** Default `etcd`. */
  storage?: ResourceStorage;
  /** Default: names are DNS subdomains (kube's NameIsDNSSubdomain). */
  nameValidator?: NameValidator;
  /** kube's AllowCreateOnUpdate; default false. */
  allowCreateOnUpdate?: boolean;
  /** Whether an immediate DELETE answers with the object; default false (a success Status). */
  returnDeletedObject?: boolean;
  /** In discovery order. */
  subresources?: SubresourceDefinition[];
  /** kube's printer; default Name, Created At. */
  table?: TableDefinition;
  /**
   * Field selectors: the labels this version accepts (a list, or a map to the storage version's
   * names), and the resource's own selectable fields. Absent: metadata.name and
   * metadata.namespace, kube's default.
   */
  fieldSelector?: {
    labels?: readonly string[] | Readonly<Record<string, string>>;
    fields?: (obj: FieldSetSource, out: Record<string, string>) => void;
    /** See FieldSelectorDefinition.index. */
    index?: WatchIndex;
  };
  /** A served version that is not the storage version (see VersionConversion). */
  conversion?: VersionConversion;
  deprecation?: Deprecation;
  /** Served only with this feature gate on (ResourceDefinition.featureGate). */
  featureGate?: string;
  readDefaults?: (obj: StoredObject) => StoredObject;
  storagePath?: string;
}

/** A kind's schema, looked up in the schema source on first use (and kept). */
function lazySchema(spec: Pick<KindSpec, 'group' | 'version' | 'kind'>): () => Schema {
  let schema: Schema | undefined;
  return () => (schema ??= kindSchema({ group: spec.group, version: spec.version, kind: spec.kind }));
}

/** A kind with no resource of its own: its schema comes from the schema source. */
export function defineKind(spec: KindSpec): KindDefinition {
  const schema = lazySchema(spec);
  return {
    group: spec.group,
    version: spec.version,
    kind: spec.kind,
    description: spec.description,
    strategy: spec.strategy,
    ...(spec.alternateVersions ? { alternateVersions: spec.alternateVersions } : {}),
    get schema() {
      return schema();
    },
  };
}

/** A built-in resource: its catalog entry, with its schema from the schema source. */
export function defineResource(spec: ResourceSpec): ResourceDefinition {
  const storage = spec.storage ?? 'etcd';
  const schema = lazySchema(spec);
  const def: ResourceDefinition = {
    group: spec.group,
    version: spec.version,
    kind: spec.kind,
    description: spec.description,
    listKind: storage === 'none' ? '' : `${spec.kind}List`,
    plural: spec.plural,
    singular: spec.singular ?? spec.kind.toLowerCase(),
    shortNames: spec.shortNames ?? [],
    categories: spec.categories ?? [],
    namespaced: spec.namespaced,
    verbs: spec.verbs ?? (storage === 'etcd' ? [...ALL_VERBS] : storage === 'computed' ? ['get', 'list'] : ['create']),
    storage,
    subresources: spec.subresources ?? [],
    nameValidator: spec.nameValidator ?? nameIsDNSSubdomain,
    allowCreateOnUpdate: spec.allowCreateOnUpdate ?? false,
    returnDeletedObject: spec.returnDeletedObject ?? false,
    strategy: spec.strategy,
    get schema() {
      return schema();
    },
  };
  if (spec.table) def.table = spec.table;
  if (spec.fieldSelector) {
    const { labels, fields, index } = spec.fieldSelector;
    def.fieldSelector = { ...(labels ? { labels: fieldLabels(labels) } : {}), ...(fields ? { fields } : {}), ...(index ? { index } : {}) };
  }
  if (spec.conversion) def.conversion = spec.conversion;
  if (spec.deprecation) def.deprecation = spec.deprecation;
  if (spec.featureGate) def.featureGate = spec.featureGate;
  if (spec.readDefaults) def.readDefaults = spec.readDefaults;
  if (spec.storagePath) def.storagePath = spec.storagePath;
  return def;
}

/** A served version of a group, and its deprecation (kube's Warning header, metric and audit annotation). */
export interface GroupVersionSpec {
  version: string;
  /** Deprecated in this release (`1.22`), removed in that one (`1.25`, or '' when not planned). */
  deprecated?: { in: string; removedIn: string };
}

/** An API group as its index.ts declares it. */
export interface GroupSpec {
  /** '' for the core group. */
  group: string;
  /** Served versions, the preferred first (discovery's order). */
  versions: GroupVersionSpec[];
  /** Every resource of every version, in discovery order. */
  resources: ResourceDefinition[];
}

/**
 * The resources of an API group, checked against its versions and given their version's
 * deprecation: the group's `index.ts` is the one place its versions and their order live.
 */
export function defineGroup(spec: GroupSpec): ResourceDefinition[] {
  const versions = new Map(spec.versions.map((v) => [v.version, v]));
  // Discovery lists a group's versions in the order of their first resources: the preferred first.
  const first = spec.resources.map((d) => d.version).filter((v, i, all) => all.indexOf(v) === i);
  if (first.join() !== spec.versions.map((v) => v.version).join()) throw new Error(`group "${spec.group}": resources not in the order of its versions`);
  return spec.resources.map((def) => {
    const v = versions.get(def.version);
    if (def.group !== spec.group || !v) throw new Error(`${def.plural}: ${def.group}/${def.version} is not a version of group "${spec.group}"`);
    if (v.deprecated && !def.deprecation) def.deprecation = deprecationWarning(def, v.deprecated.in, v.deprecated.removedIn);
    return def;
  });
}
