/**
 * The create-only storages of authorization.k8s.io/v1 — kube's access-review REST
 * (pkg/registry/authorization/{subjectaccessreview,selfsubjectaccessreview,
 * localsubjectaccessreview,selfsubjectrulesreview}): each asks the server's own authorizer and
 * answers with the review and its status; nothing is stored.
 */
import {
  AUTHORIZATION_GROUP,
  apiVersionOf,
  badRequest,
  invalid,
  isPlainObject,
  localsubjectaccessreviews,
  selfsubjectaccessreviews,
  selfsubjectrulesreviews,
  subjectaccessreviews,
  validateLocalSubjectAccessReview,
  validateSelfSubjectAccessReview,
  validateSubjectAccessReview,
  type FieldError,
  type ResourceDefinition,
  type StoredObject,
  type UserInfo,
} from '@plinth/api';
import type { Attributes, Authorizer, PolicyRule, RulesResult } from '@plinth/auth';
import type { CreateOnlyStorage, CreateOnlyStorages } from './create-only.js';

export interface AuthorizationStorageDeps {
  authorizer: Authorizer;
}

type Spec = Record<string, unknown>;

function specOf(obj: StoredObject): Spec {
  return isPlainObject(obj['spec']) ? obj['spec'] : {};
}

function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

function strings(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}

/** kube's NewInvalid with the internal object's Kind, which decoding leaves empty: `.authorization.k8s.io "" is invalid`. */
function refuse(errs: FieldError[]): void {
  if (errs.length > 0) throw invalid({ group: AUTHORIZATION_GROUP, kind: '' }, '', errs);
}

/** The user a SubjectAccessReviewSpec asks about (kube's AuthorizationAttributesFrom). */
export function subjectOf(spec: Spec): UserInfo {
  const user: UserInfo = { name: str(spec['user']), groups: strings(spec['groups']) };
  const uid = str(spec['uid']);
  if (uid) user.uid = uid;
  if (isPlainObject(spec['extra'])) user.extra = Object.fromEntries(Object.entries(spec['extra']).map(([k, v]) => [k, strings(v)]));
  return user;
}

/**
 * The authorizer attributes of a review's spec (kube's ResourceAttributesFrom and
 * NonResourceAttributesFrom): an empty version matches every version.
 */
export function attributesOf(user: UserInfo, spec: Spec): Attributes {
  const res = isPlainObject(spec['resourceAttributes']) ? spec['resourceAttributes'] : undefined;
  if (res) {
    return {
      user,
      verb: str(res['verb']),
      isResourceRequest: true,
      path: '',
      apiGroup: str(res['group']),
      apiVersion: str(res['version']) || '*',
      namespace: str(res['namespace']),
      resource: str(res['resource']),
      subresource: str(res['subresource']),
      name: str(res['name']),
    };
  }
  const nonRes = isPlainObject(spec['nonResourceAttributes']) ? spec['nonResourceAttributes'] : {};
  return { user, verb: str(nonRes['verb']), isResourceRequest: false, path: str(nonRes['path']), apiGroup: '', apiVersion: '', namespace: '', resource: '', subresource: '', name: '' };
}

/**
 * SubjectAccessReviewStatus of a decision: allowed (always written), denied, reason and the
 * evaluation error (the decision's error, or what a throwing authorizer threw), as kube writes them.
 */
export async function decide(authorizer: Authorizer, attrs: Attributes): Promise<Record<string, unknown>> {
  const status: Record<string, unknown> = { allowed: false };
  try {
    const d = await authorizer.authorize(attrs);
    status['allowed'] = d.decision === 'allow';
    if (d.decision === 'deny') status['denied'] = true;
    if (d.reason) status['reason'] = d.reason;
    // An authorizer that failed (a webhook outage): kube's evaluationErr.
    if (d.decision !== 'allow' && d.error) status['evaluationError'] = d.error;
  } catch (e) {
    status['evaluationError'] = e instanceof Error ? e.message : String(e);
  }
  return status;
}

/** The review as sent (metadata untouched, creationTimestamp null as Go writes it) with its status. */
function answer(def: ResourceDefinition, obj: StoredObject, status: Record<string, unknown>): StoredObject {
  const { apiVersion: _v, kind: _k, metadata, status: _s, ...rest } = obj;
  return { kind: def.kind, apiVersion: apiVersionOf(def), metadata: { ...metadata, creationTimestamp: metadata.creationTimestamp ?? null }, ...rest, status };
}

function createSubjectAccessReviewStorage(deps: AuthorizationStorageDeps): CreateOnlyStorage {
  return {
    async create(_ctx, obj, validate) {
      refuse(validateSubjectAccessReview(obj));
      await validate(obj);
      const spec = specOf(obj);
      return answer(subjectaccessreviews, obj, await decide(deps.authorizer, attributesOf(subjectOf(spec), spec)));
    },
  };
}

function createSelfSubjectAccessReviewStorage(deps: AuthorizationStorageDeps): CreateOnlyStorage {
  return {
    async create(ctx, obj, validate) {
      refuse(validateSelfSubjectAccessReview(obj));
      await validate(obj);
      return answer(selfsubjectaccessreviews, obj, await decide(deps.authorizer, attributesOf(ctx.user, specOf(obj))));
    },
  };
}

function createLocalSubjectAccessReviewStorage(deps: AuthorizationStorageDeps): CreateOnlyStorage {
  return {
    async create(ctx, obj, validate) {
      refuse(validateLocalSubjectAccessReview(obj));
      if (!ctx.namespace) throw badRequest('namespace is required on this type: ');
      if (ctx.namespace !== obj.metadata.namespace) throw badRequest(`spec.resourceAttributes.namespace must match namespace: ${ctx.namespace}`);
      await validate(obj);
      const spec = specOf(obj);
      return answer(localsubjectaccessreviews, obj, await decide(deps.authorizer, attributesOf(subjectOf(spec), spec)));
    },
  };
}

/** v1 ResourceRule / NonResourceRule: verbs always, the other lists only when set (omitempty). */
function resourceRule(r: PolicyRule): Record<string, unknown> {
  const out: Record<string, unknown> = { verbs: [...r.verbs] };
  if (r.apiGroups?.length) out['apiGroups'] = [...r.apiGroups];
  if (r.resources?.length) out['resources'] = [...r.resources];
  if (r.resourceNames?.length) out['resourceNames'] = [...r.resourceNames];
  return out;
}

function nonResourceRule(r: PolicyRule): Record<string, unknown> {
  const out: Record<string, unknown> = { verbs: [...r.verbs] };
  if (r.nonResourceURLs?.length) out['nonResourceURLs'] = [...r.nonResourceURLs];
  return out;
}

function createSelfSubjectRulesReviewStorage(deps: AuthorizationStorageDeps): CreateOnlyStorage {
  return {
    async create(ctx, obj, validate) {
      const namespace = str(specOf(obj)['namespace']);
      if (!namespace) throw badRequest('no namespace on request');
      await validate(obj);
      let rules: RulesResult;
      try {
        rules = deps.authorizer.rulesFor ? await deps.authorizer.rulesFor(ctx.user, namespace) : { resourceRules: [], nonResourceRules: [], incomplete: true };
      } catch (e) {
        rules = { resourceRules: [], nonResourceRules: [], incomplete: true, evaluationError: e instanceof Error ? e.message : String(e) };
      }
      const status: Record<string, unknown> = {
        resourceRules: rules.resourceRules.map(resourceRule),
        nonResourceRules: rules.nonResourceRules.map(nonResourceRule),
        incomplete: rules.incomplete,
      };
      if (rules.evaluationError) status['evaluationError'] = rules.evaluationError;
      // kube answers a fresh review holding only the status: the spec is not echoed.
      return { kind: selfsubjectrulesreviews.kind, apiVersion: apiVersionOf(selfsubjectrulesreviews), metadata: { creationTimestamp: null }, spec: {}, status };
    },
  };
}

export function createAuthorizationStorages(deps: AuthorizationStorageDeps): CreateOnlyStorages {
  return new Map<ResourceDefinition, CreateOnlyStorage>([
    [subjectaccessreviews, createSubjectAccessReviewStorage(deps)],
    [selfsubjectaccessreviews, createSelfSubjectAccessReviewStorage(deps)],
    [localsubjectaccessreviews, createLocalSubjectAccessReviewStorage(deps)],
    [selfsubjectrulesreviews, createSelfSubjectRulesReviewStorage(deps)],
  ]);
}
