/**
 * The authorizer contract (kube's authorizer.Attributes, Decision and RuleResolver), the union,
 * and kube's forbidden message. The modes are registered in authorization-modes.ts.
 */
import type { UserInfo } from '@plinth/api';

export interface Attributes {
  user: UserInfo;
  verb: string;
  isResourceRequest: boolean;
  /** Non-resource requests: the path. */
  path: string;
  apiGroup: string;
  apiVersion: string;
  namespace: string;
  resource: string;
  subresource: string;
  name: string;
}

/**
 * kube's three decisions: the first authorizer that allows or denies decides. `error`: the
 * authorizer failed (a webhook outage); a request not allowed with an error is a 500, as kube's
 * WithAuthorization answers, not a 403.
 */
export type Decision = { decision: 'allow'; reason?: string } | { decision: 'deny'; reason: string; error?: string } | { decision: 'no-opinion'; reason?: string; error?: string };

/** One rule of a Role/ClusterRole (rbac.authorization.k8s.io/v1 PolicyRule). */
export interface PolicyRule {
  verbs: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

/** The rules a user has in a namespace ('' = cluster-wide only) — SelfSubjectRulesReview, escalation checks. */
export interface RulesResult {
  resourceRules: PolicyRule[];
  nonResourceRules: PolicyRule[];
  /** Some rules could not be resolved (a binding to a missing role): the lists may be short. */
  incomplete: boolean;
  evaluationError?: string;
}

export interface Authorizer {
  authorize(a: Attributes): Decision | Promise<Decision>;
  /** The rules this authorizer grants the user (authorizers that cannot list them: incomplete). */
  rulesFor?(user: UserInfo, namespace: string): RulesResult | Promise<RulesResult>;
  /** Resolves once the authorizer has loaded what it decides from (RBAC: its informers' first lists). */
  readonly synced?: Promise<void>;
  /** Stops background work (informers, caches). */
  close?(): void;
}

/** kube's public-info-viewer paths: `get` on these needs no identity. */
export const PUBLIC_INFO_PATHS: ReadonlySet<string> = new Set(['/healthz', '/livez', '/readyz', '/version', '/version/']);

export const ANONYMOUS_USER = 'system:anonymous';
export const UNAUTHENTICATED_GROUP = 'system:unauthenticated';
export const SYSTEM_MASTERS = 'system:masters';

/** kube's forbiddenMessage: who could not do what, where. */
export function forbiddenMessage(a: Attributes): string {
  if (!a.isResourceRequest) return `User ${JSON.stringify(a.user.name)} cannot ${a.verb} path ${JSON.stringify(a.path)}`;
  const resource = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  if (a.namespace) return `User ${JSON.stringify(a.user.name)} cannot ${a.verb} resource ${JSON.stringify(resource)} in API group ${JSON.stringify(a.apiGroup)} in the namespace ${JSON.stringify(a.namespace)}`;
  return `User ${JSON.stringify(a.user.name)} cannot ${a.verb} resource ${JSON.stringify(resource)} in API group ${JSON.stringify(a.apiGroup)} at the cluster scope`;
}

/**
 * kube's union of authorizers: each in turn; the first allow or deny decides; no opinion from all
 * is a denial. `system:masters` is always allowed (kube's privileged-group authorizer, first).
 */
export function createUnionAuthorizer(authorizers: Authorizer[]): Authorizer {
  return {
    synced: Promise.all(authorizers.map((z) => z.synced)).then(() => undefined),
    async authorize(a) {
      if (a.user.groups.includes(SYSTEM_MASTERS)) return { decision: 'allow' };
      const reasons: string[] = [];
      const errors: string[] = [];
      for (const z of authorizers) {
        const d = await z.authorize(a);
        if (d.decision !== 'no-opinion') return d;
        if (d.reason) reasons.push(d.reason);
        if (d.error) errors.push(d.error);
      }
      // kube's union joins the reasons with newlines and aggregates the errors.
      const distinct = [...new Set(errors)];
      const error = distinct.length === 0 ? undefined : distinct.length === 1 ? distinct[0]! : `[${distinct.join(', ')}]`;
      return { decision: 'no-opinion', reason: reasons.join('\n'), ...(error ? { error } : {}) };
    },
    async rulesFor(user, namespace) {
      const out: RulesResult = { resourceRules: [], nonResourceRules: [], incomplete: false };
      const errors: string[] = [];
      for (const z of authorizers) {
        if (!z.rulesFor) {
          out.incomplete = true;
          continue;
        }
        const r = await z.rulesFor(user, namespace);
        out.resourceRules.push(...r.resourceRules);
        out.nonResourceRules.push(...r.nonResourceRules);
        out.incomplete ||= r.incomplete;
        if (r.evaluationError) errors.push(r.evaluationError);
      }
      // kube's utilerrors.NewAggregate: one message alone, several (deduplicated) in brackets.
      const distinct = [...new Set(errors)];
      if (distinct.length) out.evaluationError = distinct.length === 1 ? distinct[0] : `[${distinct.join(', ')}]`;
      return out;
    },
    close() {
      for (const z of authorizers) z.close?.();
    },
  };
}
