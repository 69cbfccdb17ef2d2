/**
 * kube's RBAC rule matching and subject matching (plugin/pkg/auth/authorizer/rbac/rbac.go
 * RuleAllows, pkg/apis/rbac/v1/evaluation_helpers.go, pkg/registry/rbac/validation/rule.go
 * appliesToUser). Pure functions over the request attributes; no allocation on the common path.
 */
import type { Attributes, PolicyRule } from '../authorizer.js';
import { serviceAccountUsername } from '../serviceaccount/claims.js';

/** rbacv1.Subject. `namespace` only for ServiceAccount. */
export interface Subject {
  kind: string;
  apiGroup?: string;
  name: string;
  namespace?: string;
}

/** rbacv1.RoleRef. */
export interface RoleRef {
  apiGroup: string;
  kind: string;
  name: string;
}

const ALL = '*';

export function verbMatches(rule: PolicyRule, verb: string): boolean {
  for (const v of rule.verbs) if (v === ALL || v === verb) return true;
  return false;
}

export function apiGroupMatches(rule: PolicyRule, group: string): boolean {
  for (const g of rule.apiGroups ?? []) if (g === ALL || g === group) return true;
  return false;
}

/**
 * `*` matches everything, `resource/subresource` exactly, and `*` + `/subresource` any resource's
 * subresource (only when the request names a subresource).
 */
export function resourceMatches(rule: PolicyRule, combined: string, subresource: string): boolean {
  for (const r of rule.resources ?? []) {
    if (r === ALL || r === combined) return true;
    if (subresource.length > 0 && r.length === subresource.length + 2 && r.startsWith('*/') && r.endsWith(subresource)) return true;
  }
  return false;
}

/**
 * No resourceNames: any name. Otherwise the request's name must be listed — so a rule with names
 * never matches a request without one (list, create, deletecollection, watch without a name).
 */
export function resourceNameMatches(rule: PolicyRule, name: string): boolean {
  const names = rule.resourceNames;
  if (!names || names.length === 0) return true;
  for (const n of names) if (n === name) return true;
  return false;
}

/** `*`, an exact path, or a prefix ending in `*` (kube trims every trailing `*`). */
export function nonResourceURLMatches(rule: PolicyRule, path: string): boolean {
  for (const u of rule.nonResourceURLs ?? []) {
    if (u === ALL || u === path) return true;
    if (u.endsWith(ALL)) {
      let end = u.length;
      while (end > 0 && u.charCodeAt(end - 1) === 42 /* '*' */) end--;
      if (path.startsWith(end === u.length ? u : u.slice(0, end))) return true;
    }
  }
  return false;
}

/** kube's RuleAllows. */
export function ruleAllows(a: Attributes, rule: PolicyRule): boolean {
  if (!verbMatches(rule, a.verb)) return false;
  if (!a.isResourceRequest) return nonResourceURLMatches(rule, a.path);
  const combined = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  return apiGroupMatches(rule, a.apiGroup) && resourceMatches(rule, combined, a.subresource) && resourceNameMatches(rule, a.name);
}

/**
 * kube's appliesToUser: User by name, Group by membership, ServiceAccount by its user name, the
 * subject's namespace defaulting to the binding's (`bindingNamespace`, '' for a ClusterRoleBinding,
 * where a service account without a namespace matches no one). Other kinds match no one. The
 * subject's apiGroup is not consulted (nor is it by kube).
 */
export function subjectAppliesTo(user: { name: string; groups: readonly string[] }, s: Subject, bindingNamespace: string): boolean {
  switch (s.kind) {
    case 'User':
      return user.name === s.name;
    case 'Group':
      return user.groups.includes(s.name);
    case 'ServiceAccount': {
      const ns = s.namespace || bindingNamespace;
      return ns !== '' && user.name === serviceAccountUsername(ns, s.name);
    }
    default:
      return false;
  }
}
