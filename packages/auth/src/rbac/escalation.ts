/**
 * RBAC escalation prevention (kube's pkg/registry/rbac/escalation_check.go and the policybased
 * storages of roles, clusterroles, rolebindings and clusterrolebindings): a user may write a role
 * only with every permission it grants, or the `escalate` verb on it; a binding only with every
 * permission of the role it references, or the `bind` verb on that role. `system:masters` always
 * may. Aggregation rules, which can gather anything, need full authority.
 */
import type { UserInfo } from '@plinth/api';
import { SYSTEM_MASTERS, type Attributes, type Authorizer, type PolicyRule } from '../authorizer.js';
import { RBAC_API_GROUP } from './bootstrap-policy.js';
import { escalationMessage } from './policy-rules.js';

export type RbacResource = 'roles' | 'clusterroles' | 'rolebindings' | 'clusterrolebindings';

/** What the check reads of a role or binding. */
export interface RbacObject {
  metadata: { name?: string; [k: string]: unknown };
  rules?: PolicyRule[] | null;
  aggregationRule?: { clusterRoleSelectors?: unknown[] } | null;
  roleRef?: { apiGroup?: string; kind?: string; name?: string };
  [k: string]: unknown;
}

export interface EscalationCheckDeps {
  authorizer: Authorizer;
  /**
   * The rules of the Role `name` in `namespace`, or of the ClusterRole `name` (namespace '').
   * Throws what a read of a missing role throws (kube answers the binding with that NotFound).
   */
  roleRules(kind: 'Role' | 'ClusterRole', namespace: string, name: string): Promise<PolicyRule[]>;
}

export interface RbacWrite {
  resource: RbacResource;
  user: UserInfo;
  /** The request's namespace ('' for the cluster-scoped kinds). */
  namespace: string;
  /**
   * The request's name (kube's RequestInfo.Name): the path's, '' for a POST to the collection.
   * The `escalate` check asks about it, as kube's RoleEscalationAuthorized does.
   */
  name: string;
  object: RbacObject;
  /** The stored object on update. */
  oldObject?: RbacObject | undefined;
}

/** The refusal: the caller answers 403 Forbidden on the object with this text. */
export class EscalationError extends Error {}

/**
 * A binding whose roleRef kind is neither Role nor ClusterRole, met before validation (kube's
 * GetRoleReferenceRules error, which kube answers with a 500 of that text; validation would have
 * refused it with a 422, but kube's policybased storage runs first).
 */
export class UnsupportedRoleRefKindError extends Error {}

/** What cluster-admin holds (kube's fullAuthority), needed to write an aggregationRule. */
const FULL_AUTHORITY: PolicyRule[] = [
  { verbs: ['*'], apiGroups: ['*'], resources: ['*'] },
  { verbs: ['*'], nonResourceURLs: ['*'] },
];

/** kube's EscalationAllowed: the privileged group may grant anything. */
const isPrivileged = (user: UserInfo): boolean => user.groups.includes(SYSTEM_MASTERS);

function resourceAttributes(user: UserInfo, verb: string, resource: string, namespace: string, name: string): Attributes {
  return { user, verb, isResourceRequest: true, path: '', apiGroup: RBAC_API_GROUP, apiVersion: '*', namespace, resource, subresource: '', name };
}

async function allowed(authorizer: Authorizer, a: Attributes): Promise<boolean> {
  try {
    return (await authorizer.authorize(a)).decision === 'allow';
  } catch {
    return false;
  }
}

/** kube's ConfirmNoEscalation: throws EscalationError naming what the user lacks. */
async function confirmNoEscalation(deps: EscalationCheckDeps, user: UserInfo, namespace: string, rules: readonly PolicyRule[]): Promise<void> {
  let owned: PolicyRule[] = [];
  let resolutionError: string | undefined;
  if (deps.authorizer.rulesFor) {
    const r = await deps.authorizer.rulesFor(user, namespace);
    owned = [...r.resourceRules, ...r.nonResourceRules];
    resolutionError = r.evaluationError;
  }
  const msg = escalationMessage(user, owned, rules, resolutionError);
  if (msg) throw new EscalationError(msg);
}

/**
 * kube's IsOnlyMutatingGCFields: the object equals the stored one once its ownerReferences,
 * finalizers and selfLink are taken from it, so the write grants nothing new. Everything else
 * counts, resourceVersion and managedFields included (kube compares the object as the mutating
 * transformers left it); apiVersion and kind do not (kube compares internal objects).
 */
export function isOnlyMutatingGCFields(obj: RbacObject, old: RbacObject): boolean {
  const gc = { ownerReferences: old.metadata['ownerReferences'], finalizers: old.metadata['finalizers'], selfLink: old.metadata['selfLink'] };
  const copied = { ...obj, apiVersion: undefined, kind: undefined, metadata: { ...obj.metadata, ...gc } };
  return semanticEqual(copied, { ...old, apiVersion: undefined, kind: undefined });
}

/** Absent, null, [] and {} are all Go's zero value here (nil and empty slices and maps are equal). */
function isEmpty(v: unknown): boolean {
  if (v === undefined || v === null) return true;
  if (Array.isArray(v)) return v.length === 0;
  return typeof v === 'object' && Object.keys(v).length === 0;
}

/** apimachinery's Equalities.DeepEqual over JSON values: nil and empty slices and maps are equal. */
function semanticEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (isEmpty(a) && isEmpty(b)) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bs = b as unknown[];
    return a.length === bs.length && a.every((x, i) => semanticEqual(x, bs[i]));
  }
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  for (const k of Object.keys(ao)) if (!semanticEqual(ao[k], bo[k])) return false;
  for (const k of Object.keys(bo)) if (!Object.hasOwn(ao, k) && !isEmpty(bo[k])) return false;
  return true;
}

/** kube's hasAggregationRule: an aggregationRule with at least one selector. */
const hasAggregationRule = (o: RbacObject | undefined): boolean => (o?.aggregationRule?.clusterRoleSelectors?.length ?? 0) > 0;

/**
 * Checks one create or update of an RBAC object, as kube's policybased storages do once mutating
 * admission has run (the caller's job: the object checked is the admitted one); throws
 * EscalationError when it would grant the user more than it holds. Errors reading a referenced
 * role propagate unchanged.
 */
export async function checkRbacWrite(deps: EscalationCheckDeps, w: RbacWrite): Promise<void> {
  if (isPrivileged(w.user)) return;
  if (w.resource === 'roles' || w.resource === 'clusterroles') {
    // kube's RoleEscalationAuthorized: `escalate` on the role the request names allows anything.
    if (await allowed(deps.authorizer, resourceAttributes(w.user, 'escalate', w.resource, w.namespace, w.name))) return;
    if (w.oldObject && isOnlyMutatingGCFields(w.object, w.oldObject)) return;
    await confirmNoEscalation(deps, w.user, w.namespace, w.object.rules ?? []);
    // An aggregationRule can gather anything (and, removed, stop a role from tightening): it needs full authority.
    if (w.resource === 'clusterroles' && (hasAggregationRule(w.object) || hasAggregationRule(w.oldObject))) {
      try {
        await confirmNoEscalation(deps, w.user, w.namespace, FULL_AUTHORITY);
      } catch {
        throw new EscalationError('must have cluster-admin privileges to use the aggregationRule');
      }
    }
    return;
  }
  if (w.oldObject && isOnlyMutatingGCFields(w.object, w.oldObject)) return;
  // Bindings: kube's BindingAuthorized — `bind` on the referenced role, checked in the binding's
  // namespace ('' for a ClusterRoleBinding), allows binding it without holding its permissions.
  const ref = w.object.roleRef ?? {};
  const kind = ref.kind;
  if (kind !== 'Role' && kind !== 'ClusterRole') throw new UnsupportedRoleRefKindError(`unsupported role reference kind: ${JSON.stringify(kind ?? '')}`);
  const attrs = resourceAttributes(w.user, 'bind', kind === 'Role' ? 'roles' : 'clusterroles', w.namespace, ref.name ?? '');
  attrs.apiGroup = ref.apiGroup ?? '';
  if (await allowed(deps.authorizer, attrs)) return;
  const rules = await deps.roleRules(kind, w.namespace, ref.name ?? '');
  await confirmNoEscalation(deps, w.user, w.namespace, rules);
}
