/**
 * Naming as kube-apiserver's OpenAPI has it: qualified definition names
 * (`io.k8s.api.core.v1.ServiceAccount`, `io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta`),
 * operation ids (`listCoreV1NamespacedServiceAccount`) and tags (`core_v1`).
 */
import { metaDefinitions, resourceDefinitions, type Catalog, type ResourceDefinition, type Schema, setMember } from '@plinth/api';

export const META_PKG = 'io.k8s.apimachinery.pkg.apis.meta.v1';

/**
 * The prefix of a group-version's definition names. Built-in types are named after their Go
 * package: `io.k8s.api.<first label of the group, or core>.<version>`, except the apiextensions
 * types, which live in `io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.<version>`. A custom
 * resource's kinds are named as kube's CRD OpenAPI builder names them (ToRESTFriendlyName of
 * `<group>/<version>/<kind>`): the group's labels reversed, then the version
 * (`com.example.stable.v1` for stable.example.com/v1).
 */
export function packageOf(group: string, version: string, custom = false): string {
  if (custom) return `${group.split('.').reverse().join('.')}.${version}`;
  if (group === 'apiextensions.k8s.io') return `io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.${version}`;
  return `io.k8s.api.${group === '' ? 'core' : group.split('.')[0]!}.${version}`;
}

/** `unstructured` marks a custom resource's kind (see packageOf). */
type Named = Pick<ResourceDefinition, 'group' | 'version'> & { unstructured?: boolean | undefined };

export function kindName(def: Named & { kind: string }): string {
  return `${packageOf(def.group, def.version, !!def.unstructured)}.${def.kind}`;
}

export function listKindName(def: Named & { listKind: string }): string {
  return `${packageOf(def.group, def.version, !!def.unstructured)}.${def.listKind}`;
}

/** The meta/v1 types of metaDefinitions; the others there (ObjectReference, …) are core/v1 types. */
const APIMACHINERY_TYPES = new Set(['ObjectMeta', 'OwnerReference', 'ManagedFieldsEntry', 'LabelSelector', 'LabelSelectorRequirement']);

/** `CoreV1`, `RbacAuthorizationV1`, `AppsV1`: the group-version part of kube's operation ids. */
export function gvCamel(group: string, version: string): string {
  const parts = group === '' ? ['core'] : group.replace(/\.k8s\.io$/, '').split('.');
  return parts.map(upperFirst).join('') + upperFirst(version);
}

/** kube's operation tag: `core_v1`, `rbacAuthorization_v1`. */
export function tagOf(group: string, version: string): string {
  const c = gvCamel(group, version);
  return `${c.slice(0, c.length - version.length).replace(/^./, (x) => x.toLowerCase())}_${version}`;
}

function upperFirst(s: string): string {
  return s ? s[0]!.toUpperCase() + s.slice(1) : s;
}

/** The URL prefix of a group-version: `/api/v1`, `/apis/rbac.authorization.k8s.io/v1`. */
export function gvPrefix(group: string, version: string): string {
  return group === '' ? `/api/${version}` : `/apis/${group}/${version}`;
}

/** The Go type name a catalog object schema stands for (`v1.NamespaceSpec` → `NamespaceSpec`). */
export function goTypeName(schema: Schema): string | undefined {
  const t = schema['x-go-type'];
  if (!t || t.includes('[') || t.startsWith('map')) return undefined;
  return t.slice(t.lastIndexOf('.') + 1);
}

/**
 * Maps the catalog's shared `$ref` names (`ObjectMeta`, `Subject`, `NamespaceCondition`) to kube's
 * qualified definition names. meta/v1 types are known; every other shared definition belongs to
 * the package of the first kind (in catalog order) whose schema reaches it.
 */
export class DefinitionNames {
  readonly #qualified = new Map<string, string>();
  readonly shared: ReadonlyMap<string, Schema>;

  constructor(catalog: Catalog) {
    const shared = new Map<string, Schema>(Object.entries({ ...metaDefinitions, ...resourceDefinitions }));
    this.shared = shared;
    for (const name of shared.keys()) if (APIMACHINERY_TYPES.has(name)) this.#qualified.set(name, `${META_PKG}.${name}`);
    const visit = (sch: Schema | undefined, pkg: string, seen: Set<Schema>): void => {
      if (!sch || seen.has(sch)) return;
      seen.add(sch);
      if (sch.$ref) {
        if (!this.#qualified.has(sch.$ref)) this.#qualified.set(sch.$ref, `${pkg}.${sch.$ref}`);
        visit(shared.get(sch.$ref), pkg, seen);
      }
      for (const p of Object.values(sch.properties ?? {})) visit(p, pkg, seen);
      visit(sch.items, pkg, seen);
      visit(sch.additionalProperties, pkg, seen);
    };
    for (const kind of catalog.kinds()) visit(kind.schema, packageOf(kind.group, kind.version, !!kind.unstructured), new Set());
    // Shared definitions no resource reaches: meta/v1 when listed there, else core/v1.
    for (const name of shared.keys()) {
      if (!this.#qualified.has(name)) this.#qualified.set(name, `${name in metaDefinitions ? META_PKG : packageOf('', 'v1')}.${name}`);
    }
  }

  /** The qualified name of a catalog `$ref`. */
  qualify(ref: string): string {
    const q = this.#qualified.get(ref);
    if (!q) throw new Error(`openapi: no definition for $ref ${ref}`);
    return q;
  }

  /** Every catalog `$ref` name with its qualified name. */
  entries(): IterableIterator<[string, string]> {
    return this.#qualified.entries();
  }
}

export type JSONValue = string | number | boolean | null | JSONValue[] | { [k: string]: JSONValue };
export type JSONObject = { [k: string]: JSONValue };

/** Recursively sorts object keys, as Go's encoding/json does for maps. */
export function sortKeys(v: JSONValue): JSONValue {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v === null || typeof v !== 'object') return v;
  const out: JSONObject = {};
  for (const k of Object.keys(v).sort()) setMember(out, k, sortKeys(v[k]!));
  return out;
}
