/**
 * Naming as kube-apiserver's OpenAPI has it: qualified definition names (a built-in type's from the
 * schema source: `io.k8s.api.core.v1.ServiceAccount`; a custom resource's as kube's CRD builder
 * names it), operation ids (`listCoreV1NamespacedServiceAccount`) and tags (`core_v1`).
 */
import { requireKindDefinition, type ResourceDefinition, setMember } from '@plinth/api';

export const META_PKG = 'io.k8s.apimachinery.pkg.apis.meta.v1';

/**
 * The prefix of a custom resource's definition names, as kube's CRD OpenAPI builder names them
 * (ToRESTFriendlyName of `<group>/<version>/<kind>`): the group's labels reversed, then the version
 * (`com.example.stable.v1` for stable.example.com/v1).
 */
export function packageOf(group: string, version: string): string {
  return `${group.split('.').reverse().join('.')}.${version}`;
}

/** `unstructured` marks a custom resource's kind (see packageOf). */
type Named = Pick<ResourceDefinition, 'group' | 'version'> & { unstructured?: boolean | undefined };

/** A kind's definition name: a built-in kind's as the schema source names it. */
export function kindName(def: Named & { kind: string }): string {
  if (!def.unstructured) return requireKindDefinition({ group: def.group, version: def.version, kind: def.kind });
  return `${packageOf(def.group, def.version)}.${def.kind}`;
}

export function listKindName(def: Named & { listKind: string }): string {
  if (!def.unstructured) return requireKindDefinition({ group: def.group, version: def.version, kind: def.listKind });
  return `${packageOf(def.group, def.version)}.${def.listKind}`;
}

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
