/**
 * authorization.k8s.io/v1: the access reviews SubjectAccessReview, SelfSubjectAccessReview,
 * LocalSubjectAccessReview and SelfSubjectRulesReview — asked and answered, never stored.
 * Schemas as kube 1.24's k8s.io/api/authorization/v1 types; validation as
 * pkg/apis/authorization/validation (called by the review storages, as kube's REST does).
 */
import { reviewResource } from './authentication.js';
import { type FieldError, fieldErr } from '../field-errors.js';
import { type Schema, s } from '../schema.js';
import { isPlainObject, type StoredObject } from '../types.js';

export const AUTHORIZATION_GROUP = 'authorization.k8s.io';

const resourceAttributes = s.obj(
  {
    namespace: s.str(
      'Namespace is the namespace of the action being requested.  Currently, there is no distinction between no namespace and all namespaces "" (empty) is defaulted for LocalSubjectAccessReviews "" (empty) is empty for cluster-scoped resources "" (empty) means "all" for namespace scoped resources from a SubjectAccessReview or SelfSubjectAccessReview',
    ),
    verb: s.str('Verb is a kubernetes resource API verb, like: get, list, watch, create, update, delete, proxy.  "*" means all.'),
    group: s.str('Group is the API Group of the Resource.  "*" means all.'),
    version: s.str('Version is the API Version of the Resource.  "*" means all.'),
    resource: s.str('Resource is one of the existing resource types.  "*" means all.'),
    subresource: s.str('Subresource is one of the existing resource types.  "" means none.'),
    name: s.str('Name is the name of the resource being requested for a "get" or deleted for a "delete". "" (empty) means all.'),
  },
  { description: 'ResourceAttributes includes the authorization attributes available for resource requests to the Authorizer interface', 'x-go-type': 'v1.ResourceAttributes' },
);

const nonResourceAttributes = s.obj(
  { path: s.str('Path is the URL path of the request'), verb: s.str('Verb is the standard HTTP verb') },
  { description: 'NonResourceAttributes includes the authorization attributes available for non-resource requests to the Authorizer interface', 'x-go-type': 'v1.NonResourceAttributes' },
);

const RESOURCE_ATTRIBUTES_DESC = 'ResourceAuthorizationAttributes describes information for a resource access request';
const NON_RESOURCE_ATTRIBUTES_DESC = 'NonResourceAttributes describes information for a non-resource access request';

export const authorizationDefinitions: Record<string, Schema> = {
  ResourceAttributes: resourceAttributes,
  NonResourceAttributes: nonResourceAttributes,
  SubjectAccessReviewSpec: s.obj(
    {
      resourceAttributes: s.ref('ResourceAttributes', RESOURCE_ATTRIBUTES_DESC),
      nonResourceAttributes: s.ref('NonResourceAttributes', NON_RESOURCE_ATTRIBUTES_DESC),
      user: s.str('User is the user you\'re testing for. If you specify "User" but not "Groups", then is it interpreted as "What if User were not a member of any groups'),
      groups: s.arr(s.str(), { description: "Groups is the groups you're testing for." }),
      extra: s.map(s.arr(s.str()), { description: 'Extra corresponds to the user.Info.GetExtra() method from the authenticator.  Since that is input to the authorizer it needs a reflection here.' }),
      uid: s.str('UID information about the requesting user.'),
    },
    { description: 'SubjectAccessReviewSpec is a description of the access request.  Exactly one of ResourceAuthorizationAttributes and NonResourceAuthorizationAttributes must be set', 'x-go-type': 'v1.SubjectAccessReviewSpec' },
  ),
  SubjectAccessReviewStatus: s.obj(
    {
      allowed: s.bool('Allowed is required. True if the action would be allowed, false otherwise.'),
      denied: s.bool('Denied is optional. True if the action would be denied, otherwise false. If both allowed is false and denied is false, then the authorizer has no opinion on whether to authorize the action. Denied may not be true if Allowed is true.'),
      reason: s.str('Reason is optional.  It indicates why a request was allowed or denied.'),
      evaluationError: s.str(
        'EvaluationError is an indication that some error occurred during the authorization check. It is entirely possible to get an error and be able to continue determine authorization status in spite of it. For instance, RBAC can be missing a role, but enough roles are still present and bound to reason about the request.',
      ),
    },
    { description: 'SubjectAccessReviewStatus', required: ['allowed'], 'x-go-type': 'v1.SubjectAccessReviewStatus' },
  ),
  ResourceRule: s.obj(
    {
      verbs: s.arr(s.str(), { description: 'Verb is a list of kubernetes resource API verbs, like: get, list, watch, create, update, delete, proxy.  "*" means all.' }),
      apiGroups: s.arr(s.str(), {
        description:
          'APIGroups is the name of the APIGroup that contains the resources.  If multiple API groups are specified, any action requested against one of the enumerated resources in any API group will be allowed.  "*" means all.',
      }),
      resources: s.arr(s.str(), { description: 'Resources is a list of resources this rule applies to.  "*" means all in the specified apiGroups.\n "*/foo" represents the subresource \'foo\' for all resources in the specified apiGroups.' }),
      resourceNames: s.arr(s.str(), { description: 'ResourceNames is an optional white list of names that the rule applies to.  An empty set means that everything is allowed.  "*" means all.' }),
    },
    {
      description: "ResourceRule is the list of actions the subject is allowed to perform on resources. The list ordering isn't significant, may contain duplicates, and possibly be incomplete.",
      required: ['verbs'],
      'x-go-type': 'v1.ResourceRule',
    },
  ),
  NonResourceRule: s.obj(
    {
      verbs: s.arr(s.str(), { description: 'Verb is a list of kubernetes non-resource API verbs, like: get, post, put, delete, patch, head, options.  "*" means all.' }),
      nonResourceURLs: s.arr(s.str(), { description: 'NonResourceURLs is a set of partial urls that a user should have access to.  *s are allowed, but only as the full, final step in the path.  "*" means all.' }),
    },
    { description: 'NonResourceRule holds information that describes a rule for the non-resource', required: ['verbs'], 'x-go-type': 'v1.NonResourceRule' },
  ),
};

const SAR_STATUS_DESC = 'Status is filled in by the server and indicates whether the request is allowed or not';

function accessReviewSchema(goType: string, description: string, spec: Schema): Schema {
  return s.obj({ spec, status: s.ref('SubjectAccessReviewStatus', SAR_STATUS_DESC) }, { description, required: ['spec'], 'x-go-type': goType });
}

const subjectAccessReviewSchema = accessReviewSchema(
  'v1.SubjectAccessReview',
  'SubjectAccessReview checks whether or not a user or group can perform an action.',
  s.ref('SubjectAccessReviewSpec', 'Spec holds information about the request being evaluated'),
);

const localSubjectAccessReviewSchema = accessReviewSchema(
  'v1.LocalSubjectAccessReview',
  'LocalSubjectAccessReview checks whether or not a user or group can perform an action in a given namespace. Having a namespace scoped resource makes it much easier to grant namespace scoped policy that includes permissions checking.',
  s.ref('SubjectAccessReviewSpec', 'Spec holds information about the request being evaluated.  spec.namespace must be equal to the namespace you made the request against.  If empty, it is defaulted.'),
);

const selfSubjectAccessReviewSchema = accessReviewSchema(
  'v1.SelfSubjectAccessReview',
  'SelfSubjectAccessReview checks whether or the current user can perform an action.  Not filling in a spec.namespace means "in all namespaces".  Self is a special case, because users should always be able to check whether they can perform an action',
  s.obj(
    { resourceAttributes: s.ref('ResourceAttributes', RESOURCE_ATTRIBUTES_DESC), nonResourceAttributes: s.ref('NonResourceAttributes', NON_RESOURCE_ATTRIBUTES_DESC) },
    {
      description: 'Spec holds information about the request being evaluated.  user and groups must be empty',
      'x-go-type': 'v1.SelfSubjectAccessReviewSpec',
    },
  ),
);

const selfSubjectRulesReviewSchema: Schema = s.obj(
  {
    spec: s.obj({ namespace: s.str('Namespace to evaluate rules for. Required.') }, { description: 'Spec holds information about the request being evaluated.', 'x-go-type': 'v1.SelfSubjectRulesReviewSpec' }),
    status: s.obj(
      {
        resourceRules: s.arr(s.ref('ResourceRule'), {
          description: "ResourceRules is the list of actions the subject is allowed to perform on resources. The list ordering isn't significant, may contain duplicates, and possibly be incomplete.",
        }),
        nonResourceRules: s.arr(s.ref('NonResourceRule'), {
          description: "NonResourceRules is the list of actions the subject is allowed to perform on non-resources. The list ordering isn't significant, may contain duplicates, and possibly be incomplete.",
        }),
        incomplete: s.bool(
          "Incomplete is true when the rules returned by this call are incomplete. This is most commonly encountered when an authorizer, such as an external authorizer, doesn't support rules evaluation.",
        ),
        evaluationError: s.str(
          "EvaluationError can appear in combination with Rules. It indicates an error occurred during rule evaluation, such as an authorizer that doesn't support rule evaluation, and that ResourceRules and/or NonResourceRules may be incomplete.",
        ),
      },
      {
        description: 'Status is filled in by the server and indicates the set of actions a user can perform.',
        required: ['resourceRules', 'nonResourceRules', 'incomplete'],
        'x-go-type': 'v1.SubjectRulesReviewStatus',
      },
    ),
  },
  {
    description:
      "SelfSubjectRulesReview enumerates the set of actions the current user can perform within a namespace. The returned list of actions may be incomplete depending on the server's authorization mode, and any errors experienced during the evaluation. SelfSubjectRulesReview should be used by UIs to show/hide actions, or to quickly let an end user reason about their permissions. It should NOT Be used by external systems to drive authorization decisions as this raises confused deputy, cache lifetime/revocation, and correctness concerns. SubjectAccessReview, and LocalAccessReview are the correct way to defer authorization decisions to the API server.",
    required: ['spec'],
    'x-go-type': 'v1.SelfSubjectRulesReview',
  },
);


/** kube's pkg/registry/authorization/subjectaccessreview. */
export const subjectaccessreviews = reviewResource(AUTHORIZATION_GROUP, 'SubjectAccessReview', 'subjectaccessreviews', false, subjectAccessReviewSchema);
/** kube's pkg/registry/authorization/selfsubjectaccessreview. */
export const selfsubjectaccessreviews = reviewResource(AUTHORIZATION_GROUP, 'SelfSubjectAccessReview', 'selfsubjectaccessreviews', false, selfSubjectAccessReviewSchema);
/** kube's pkg/registry/authorization/localsubjectaccessreview. */
export const localsubjectaccessreviews = reviewResource(AUTHORIZATION_GROUP, 'LocalSubjectAccessReview', 'localsubjectaccessreviews', true, localSubjectAccessReviewSchema);
/** kube's pkg/registry/authorization/selfsubjectrulesreview. */
export const selfsubjectrulesreviews = reviewResource(AUTHORIZATION_GROUP, 'SelfSubjectRulesReview', 'selfsubjectrulesreviews', false, selfSubjectRulesReviewSchema);

// ---------------------------------------------------------------------------------------------
// Validation (pkg/apis/authorization/validation)
// ---------------------------------------------------------------------------------------------

function record(v: unknown): Record<string, unknown> | undefined {
  return isPlainObject(v) ? v : undefined;
}

function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

/**
 * A field error whose value reads as Go's `%v`/`%#v` of kube's internal type prints it: a nil
 * pointer is `"null"`, a NonResourceAttributes is `authorization.NonResourceAttributes{...}`.
 */
function invalidGo(field: string, goValue: string, detail: string): FieldError {
  return { type: 'FieldValueInvalid', field, hasValue: false, detail: `${goValue}: ${detail}` };
}

function goNonResourceAttributes(v: Record<string, unknown> | undefined): string {
  if (!v) return '"null"';
  return `authorization.NonResourceAttributes{Path:${JSON.stringify(str(v['path']))}, Verb:${JSON.stringify(str(v['verb']))}}`;
}

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

/**
 * Go's `%#v` of a metav1.Time: the zero time (UTC) when unset; otherwise kube's decoder converts
 * to the server's local zone, printed as time.Local (the hours are UTC's on a UTC server).
 */
function goTime(v: unknown): string {
  const d = typeof v === 'string' ? new Date(v) : undefined;
  if (!d || Number.isNaN(d.getTime())) return 'time.Date(1, time.January, 1, 0, 0, 0, 0, time.UTC)';
  return `time.Date(${d.getUTCFullYear()}, time.${MONTHS[d.getUTCMonth()]}, ${d.getUTCDate()}, ${d.getUTCHours()}, ${d.getUTCMinutes()}, ${d.getUTCSeconds()}, 0, time.Local)`;
}

function goStringMap(v: unknown): string {
  if (!isPlainObject(v) || Object.keys(v).length === 0) return 'map[string]string(nil)';
  return `map[string]string{${Object.keys(v)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${JSON.stringify(str(v[k]))}`)
    .join(', ')}}`;
}

function goPointer(type: string, v: unknown): string {
  return v === undefined || v === null ? `(*${type})(nil)` : `(*${type})(0xc000000000)`;
}

/**
 * Go's `%#v` of the v1.ObjectMeta kube reports as the invalid value of a review's metadata
 * (managedFields cleared, as kube's shallow copy does). Pointers print as Go does, with a
 * placeholder address.
 */
function goObjectMeta(meta: StoredObject['metadata']): string {
  const s = (k: string): string => JSON.stringify(str(meta[k]));
  const owners = Array.isArray(meta.ownerReferences) && meta.ownerReferences.length > 0
    ? `[]v1.OwnerReference{${meta.ownerReferences
        .map((o) => `v1.OwnerReference{APIVersion:${JSON.stringify(o.apiVersion ?? '')}, Kind:${JSON.stringify(o.kind ?? '')}, Name:${JSON.stringify(o.name ?? '')}, UID:${JSON.stringify(o.uid ?? '')}, Controller:${goPointer('bool', o.controller)}, BlockOwnerDeletion:${goPointer('bool', o.blockOwnerDeletion)}}`)
        .join(', ')}}`
    : '[]v1.OwnerReference(nil)';
  const finalizers = Array.isArray(meta.finalizers) && meta.finalizers.length > 0 ? `[]string{${meta.finalizers.map((f) => JSON.stringify(f)).join(', ')}}` : '[]string(nil)';
  return (
    `v1.ObjectMeta{Name:${s('name')}, GenerateName:${s('generateName')}, Namespace:${s('namespace')}, SelfLink:${s('selfLink')}, UID:${s('uid')}, ` +
    `ResourceVersion:${s('resourceVersion')}, Generation:${typeof meta.generation === 'number' ? meta.generation : 0}, CreationTimestamp:${goTime(meta.creationTimestamp)}, ` +
    `DeletionTimestamp:${meta.deletionTimestamp ? goTime(meta.deletionTimestamp) : '<nil>'}, DeletionGracePeriodSeconds:${goPointer('int64', meta.deletionGracePeriodSeconds)}, ` +
    `Labels:${goStringMap(meta.labels)}, Annotations:${goStringMap(meta.annotations)}, OwnerReferences:${owners}, Finalizers:${finalizers}, ` +
    `ZZZ_DeprecatedClusterName:${JSON.stringify(str(meta['clusterName']))}, ManagedFields:[]v1.ManagedFieldsEntry(nil)}`
  );
}

/** The object metadata kube requires empty: anything set but managedFields (and, for LSAR, namespace). */
function metadataIsEmpty(meta: Record<string, unknown>, ignore: readonly string[]): boolean {
  return Object.entries(meta).every(([k, v]) => {
    if (k === 'managedFields' || ignore.includes(k)) return true;
    if (v === null || v === undefined || v === '' || v === 0) return true;
    if (Array.isArray(v)) return v.length === 0;
    return isPlainObject(v) && Object.keys(v).length === 0;
  });
}

function attributesOf(spec: Record<string, unknown>): { res: Record<string, unknown> | undefined; nonRes: Record<string, unknown> | undefined } {
  return { res: record(spec['resourceAttributes']), nonRes: record(spec['nonResourceAttributes']) };
}

function validateAttributes(spec: Record<string, unknown>): FieldError[] {
  const { res, nonRes } = attributesOf(spec);
  const errs: FieldError[] = [];
  if (res && nonRes) errs.push(invalidGo('spec.nonResourceAttributes', goNonResourceAttributes(nonRes), 'cannot be specified in combination with resourceAttributes'));
  if (!res && !nonRes) errs.push(invalidGo('spec.resourceAttributes', goNonResourceAttributes(nonRes), 'exactly one of nonResourceAttributes or resourceAttributes must be specified'));
  return errs;
}

/** ValidateSubjectAccessReviewSpec: one kind of attributes, and someone to ask about. */
function validateSubjectAccessReviewSpec(spec: Record<string, unknown>): FieldError[] {
  const errs = validateAttributes(spec);
  const groups = Array.isArray(spec['groups']) ? spec['groups'] : [];
  if (str(spec['user']) === '' && groups.length === 0) errs.push(fieldErr.invalid('spec.user', str(spec['user']), 'at least one of user or group must be specified'));
  return errs;
}

function specOf(obj: StoredObject): Record<string, unknown> {
  return record(obj['spec']) ?? {};
}

export function validateSubjectAccessReview(obj: StoredObject): FieldError[] {
  const errs = validateSubjectAccessReviewSpec(specOf(obj));
  if (!metadataIsEmpty(obj.metadata, [])) errs.push(invalidGo('metadata', goObjectMeta(obj.metadata), 'must be empty'));
  return errs;
}

export function validateSelfSubjectAccessReview(obj: StoredObject): FieldError[] {
  const errs = validateAttributes(specOf(obj));
  if (!metadataIsEmpty(obj.metadata, [])) errs.push(invalidGo('metadata', goObjectMeta(obj.metadata), 'must be empty'));
  return errs;
}

export function validateLocalSubjectAccessReview(obj: StoredObject): FieldError[] {
  const spec = specOf(obj);
  const errs = validateSubjectAccessReviewSpec(spec);
  // kube blanks the namespace before comparing, and reports the metadata as sent.
  if (!metadataIsEmpty(obj.metadata, ['namespace'])) errs.push(invalidGo('metadata', goObjectMeta(obj.metadata), 'must be empty except for namespace'));
  const { res, nonRes } = attributesOf(spec);
  const namespace = str(obj.metadata.namespace);
  if (res && str(res['namespace']) !== namespace) errs.push(fieldErr.invalid('spec.resourceAttributes.namespace', str(res['namespace']), 'must match metadata.namespace'));
  if (nonRes) errs.push(invalidGo('spec.nonResourceAttributes', goNonResourceAttributes(nonRes), 'disallowed on this kind of request'));
  return errs;
}
