/**
 * RBAC escalation prevention (kube's pkg/registry/rbac/escalation_check.go and the policybased
 * storages of roles, clusterroles, rolebindings and clusterrolebindings): a user may write a role
 * only with every permission it grants, or the `escalate` verb on it; a binding only with every
 * permission of the role it references, or the `bind` verb on that role. `system:masters` always
 * may. Aggregation rules, which can gather anything, need full authority.
 */
import { isDeepStrictEqual } from 'node:util';
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
  object: RbacObject;
  /** The stored object on update. */
  oldObject?: RbacObject | undefined;
}

/** The refusal: the caller answers 403 Forbidden on the object with this text. */
export class EscalationError extends Error {}

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
 * kube's IsOnlyMutatingGCFields: an update that changes only owner references and finalizers
 * (and what the server maintains) grants nothing new.
 */
function isOnlyMutatingGCFields(obj: RbacObject, old: RbacObject): boolean {
  const strip = (o: RbacObject): RbacObject => {
    const c = structuredClone(o);
    for (const f of ['ownerReferences', 'finalizers', 'resourceVersion', 'managedFields', 'generation']) delete c.metadata[f];
    delete c['apiVersion'];
    delete c['kind'];
    return c;
  };
  return isDeepStrictEqual(strip(obj), strip(old));
}

const hasAggregationRule = (o: RbacObject | undefined): boolean => !!o?.aggregationRule;

/**
 * Checks one create or update of an RBAC object; throws EscalationError when it would grant the
 * user more than it holds. Errors reading a referenced role propagate unchanged.
 */
export async function checkRbacWrite(deps: EscalationCheckDeps, w: RbacWrite): Promise<void> {
  if (isPrivileged(w.user)) return;
  if (w.oldObject && isOnlyMutatingGCFields(w.object, w.oldObject)) return;
  const name = w.object.metadata.name ?? '';
  if (w.resource === 'roles' || w.resource === 'clusterroles') {
    // kube's RoleEscalationAuthorized: `escalate` on this role allows anything.
    if (await allowed(deps.authorizer, resourceAttributes(w.user, 'escalate', w.resource, w.namespace, name))) return;
    await confirmNoEscalation(deps, w.user, w.namespace, w.object.rules ?? []);
    if (w.resource === 'clusterroles' && (hasAggregationRule(w.object) || hasAggregationRule(w.oldObject))) {
      try {
        await confirmNoEscalation(deps, w.user, w.namespace, FULL_AUTHORITY);
      } catch {
        throw new EscalationError('must have cluster-admin privileges to use the aggregationRule');
      }
    }
    return;
  }
  // Bindings: kube's BindingAuthorized — `bind` on the referenced role, checked in the binding's
  // namespace ('' for a ClusterRoleBinding), allows binding it without holding its permissions.
  const ref = w.object.roleRef ?? {};
  const kind = ref.kind;
  if (kind === 'Role' || kind === 'ClusterRole') {
    const resource = kind === 'Role' ? 'roles' : 'clusterroles';
    const attrs = resourceAttributes(w.user, 'bind', resource, w.namespace, ref.name ?? '');
    attrs.apiGroup = ref.apiGroup ?? '';
    if (await allowed(deps.authorizer, attrs)) return;
  }
  // Any other kind is invalid; validation refuses it with a field error.
  if (kind !== 'Role' && kind !== 'ClusterRole') return;
  const rules = await deps.roleRules(kind, w.namespace, ref.name ?? '');
  await confirmNoEscalation(deps, w.user, w.namespace, rules);
}
