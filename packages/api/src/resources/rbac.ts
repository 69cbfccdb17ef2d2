/**
 * rbac.authorization.k8s.io/v1 resources: clusterroles, clusterrolebindings, roles, rolebindings —
 * schemas, defaults (pkg/apis/rbac/v1/defaults.go) and validation (pkg/apis/rbac/validation) as
 * kube-apiserver 1.24 has them.
 */
import { roleTable, roleBindingTable, clusterRoleBindingTable, type TableDefinition } from '../tables.js';
import type { ResourceDefinition, ResourceStrategy } from '../catalog.js';
import { type FieldError, fieldErr } from '../field-errors.js';
import { type Schema, s } from '../schema.js';
import { type StoredObject, isPlainObject } from '../types.js';
import { isDNS1123Subdomain, isQualifiedName, isValidLabelValue, nameIsPathSegment, validateLabels } from '../validation.js';

export const RBAC_GROUP = 'rbac.authorization.k8s.io';

/** A `$ref` that also names its Go type, so decode errors read `[]v1.Subject` as kube's do. */
function ref(name: string, goType: string, description?: string): Schema {
  return { $ref: name, 'x-go-type': goType, ...(description ? { description } : {}) };
}

const atomic = (description: string): Partial<Schema> => ({ description, 'x-kubernetes-list-type': 'atomic' });

export const rbacDefinitions: Record<string, Schema> = {
  PolicyRule: s.obj(
    {
      verbs: s.arr(s.str(), atomic("Verbs is a list of Verbs that apply to ALL the ResourceKinds contained in this rule. '*' represents all verbs.")),
      apiGroups: s.arr(
        s.str(),
        atomic('APIGroups is the name of the APIGroup that contains the resources. If multiple API groups are specified, any action requested against one of the enumerated resources in any API group will be allowed. "" represents the core API group and "*" represents all API groups.'),
      ),
      resources: s.arr(s.str(), atomic("Resources is a list of resources this rule applies to. '*' represents all resources.")),
      resourceNames: s.arr(s.str(), atomic('ResourceNames is an optional white list of names that the rule applies to. An empty set means that everything is allowed.')),
      nonResourceURLs: s.arr(
        s.str(),
        atomic('NonResourceURLs is a set of partial urls that a user should have access to. *s are allowed, but only as the full, final step in the path. Rules can either apply to API resources (such as "pods" or "secrets") or non-resource URL paths (such as "/api"), but not both.'),
      ),
    },
    {
      description: 'PolicyRule holds information that describes a policy rule, but does not contain information about who the rule applies to or which namespace the rule applies to.',
      required: ['verbs'],
      'x-go-type': 'v1.PolicyRule',
    },
  ),
  AggregationRule: s.obj(
    {
      clusterRoleSelectors: s.arr(
        ref('LabelSelector', 'v1.LabelSelector'),
        atomic("ClusterRoleSelectors holds a list of selectors which will be used to find ClusterRoles and create the rules. If any of the selectors match, then the ClusterRole's permissions will be added"),
      ),
    },
    { description: 'AggregationRule describes how to locate ClusterRoles to aggregate into the ClusterRole', 'x-go-type': 'v1.AggregationRule' },
  ),
  Subject: s.obj(
    {
      kind: s.str('Kind of object being referenced. Values defined by this API group are "User", "Group", and "ServiceAccount".'),
      apiGroup: s.str('APIGroup holds the API group of the referenced subject. Defaults to "" for ServiceAccount subjects. Defaults to "rbac.authorization.k8s.io" for User and Group subjects.'),
      name: s.str('Name of the object being referenced.'),
      namespace: s.str('Namespace of the referenced object. If the object kind is non-namespace, such as "User" or "Group", and this value is not empty the Authorizer should report an error.'),
    },
    {
      description: 'Subject contains a reference to the object or user identities a role binding applies to.',
      required: ['kind', 'name'],
      'x-kubernetes-map-type': 'atomic',
      'x-go-type': 'v1.Subject',
    },
  ),
  RoleRef: s.obj(
    {
      apiGroup: s.str('APIGroup is the group for the resource being referenced'),
      kind: s.str('Kind is the type of resource being referenced'),
      name: s.str('Name is the name of resource being referenced'),
    },
    {
      description: 'RoleRef contains information that points to the role being used',
      required: ['apiGroup', 'kind', 'name'],
      'x-kubernetes-map-type': 'atomic',
      'x-go-type': 'v1.RoleRef',
    },
  ),
};

const rulesSchema = (owner: string): Schema =>
  s.arr(ref('PolicyRule', 'v1.PolicyRule'), atomic(`Rules holds all the PolicyRules for this ${owner}`));

const clusterRoleSchema: Schema = s.obj(
  {
    rules: rulesSchema('ClusterRole'),
    // *AggregationRule: absent unless set, so a ClusterRole created by apply has none.
    aggregationRule: {
      ...ref(
        'AggregationRule',
        'v1.AggregationRule',
        'AggregationRule is an optional field that describes how to build the Rules for this ClusterRole. If AggregationRule is set, then the Rules are controller managed and direct changes to Rules will be stomped by the controller.',
      ),
      'x-go-pointer': true,
    },
  },
  { description: 'ClusterRole is a cluster level, logical grouping of PolicyRules that can be referenced as a unit by a RoleBinding or ClusterRoleBinding.', 'x-go-type': 'v1.ClusterRole' },
);

const roleSchema: Schema = s.obj(
  { rules: rulesSchema('Role') },
  { description: 'Role is a namespaced, logical grouping of PolicyRules that can be referenced as a unit by a RoleBinding.', 'x-go-type': 'v1.Role' },
);

const bindingSchema = (kind: 'ClusterRoleBinding' | 'RoleBinding'): Schema =>
  s.obj(
    {
      subjects: s.arr(ref('Subject', 'v1.Subject'), atomic('Subjects holds references to the objects the role applies to.')),
      roleRef: ref(
        'RoleRef',
        'v1.RoleRef',
        kind === 'ClusterRoleBinding'
          ? 'RoleRef can only reference a ClusterRole in the global namespace. If the RoleRef cannot be resolved, the Authorizer must return an error.'
          : 'RoleRef can reference a Role in the current namespace or a ClusterRole in the global namespace. If the RoleRef cannot be resolved, the Authorizer must return an error.',
      ),
    },
    {
      description:
        kind === 'ClusterRoleBinding'
          ? 'ClusterRoleBinding references a ClusterRole, but not contain it. It can reference a ClusterRole in the global namespace, and adds who information via Subject.'
          : 'RoleBinding references a role, but does not contain it. It can reference a Role in the same namespace or a ClusterRole in the global namespace. It adds who information via Subjects and namespace information by which namespace it exists in. RoleBindings in a given namespace only have effect in that namespace.',
      required: ['roleRef'],
      'x-go-type': `v1.${kind}`,
    },
  );

// ---------------------------------------------------------------------------------------------
// Helpers for reading decoded JSON defensively
// ---------------------------------------------------------------------------------------------

function rec(v: unknown): Record<string, unknown> {
  return isPlainObject(v) ? v : {};
}

function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

function list(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

// ---------------------------------------------------------------------------------------------
// Defaults
// ---------------------------------------------------------------------------------------------

/** kube's `SetDefaults_Subject`. An empty ServiceAccount apiGroup is dropped (Go's omitempty). */
export function defaultSubject(subject: Record<string, unknown>): void {
  if (str(subject['apiGroup']) !== '') return;
  switch (subject['kind']) {
    case 'User':
    case 'Group':
      subject['apiGroup'] = RBAC_GROUP;
      break;
    default:
      delete subject['apiGroup'];
  }
}

/** kube's `SetDefaults_{Cluster,}RoleBinding` plus `SetDefaults_Subject` on every subject. */
function defaultBinding(obj: StoredObject): void {
  // RoleRef is a struct (not a pointer) in Go: it is always there to default.
  if (!isPlainObject(obj['roleRef'])) obj['roleRef'] = {};
  const roleRef = obj['roleRef'] as Record<string, unknown>;
  if (str(roleRef['apiGroup']) === '') roleRef['apiGroup'] = RBAC_GROUP;
  for (const sub of list(obj['subjects'])) if (isPlainObject(sub)) defaultSubject(sub);
}

// ---------------------------------------------------------------------------------------------
// Validation
// ---------------------------------------------------------------------------------------------

/** kube's `ValidatePolicyRule`. */
export function validatePolicyRule(rule: Record<string, unknown>, isNamespaced: boolean, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (list(rule['verbs']).length === 0) errs.push(fieldErr.required(`${path}.verbs`, 'verbs must contain at least one value'));

  const nonResourceURLs = list(rule['nonResourceURLs']);
  if (nonResourceURLs.length > 0) {
    if (isNamespaced) {
      errs.push(fieldErr.invalid(`${path}.nonResourceURLs`, nonResourceURLs, 'namespaced rules cannot apply to non-resource URLs'));
    }
    if (list(rule['apiGroups']).length > 0 || list(rule['resources']).length > 0 || list(rule['resourceNames']).length > 0) {
      errs.push(fieldErr.invalid(`${path}.nonResourceURLs`, nonResourceURLs, 'rules cannot apply to both regular resources and non-resource URLs'));
    }
    return errs;
  }

  if (list(rule['apiGroups']).length === 0) errs.push(fieldErr.required(`${path}.apiGroups`, 'resource rules must supply at least one api group'));
  if (list(rule['resources']).length === 0) errs.push(fieldErr.required(`${path}.resources`, 'resource rules must supply at least one resource'));
  return errs;
}

function validateRules(obj: StoredObject, isNamespaced: boolean): FieldError[] {
  const errs: FieldError[] = [];
  list(obj['rules']).forEach((r, i) => errs.push(...validatePolicyRule(rec(r), isNamespaced, `rules[${i}]`)));
  return errs;
}

/** apimachinery's `ValidateLabelSelector`. */
export function validateLabelSelector(selector: Record<string, unknown>, path: string): FieldError[] {
  const errs: FieldError[] = [];
  errs.push(...validateLabels(selector['matchLabels'], `${path}.matchLabels`));
  list(selector['matchExpressions']).forEach((e, i) => {
    const expr = rec(e);
    const p = `${path}.matchExpressions[${i}]`;
    const op = str(expr['operator']);
    const values = list(expr['values']);
    switch (op) {
      case 'In':
      case 'NotIn':
        if (values.length === 0) errs.push(fieldErr.required(`${p}.values`, "must be specified when `operator` is 'In' or 'NotIn'"));
        break;
      case 'Exists':
      case 'DoesNotExist':
        if (values.length > 0) errs.push(fieldErr.forbidden(`${p}.values`, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
        break;
      default:
        errs.push(fieldErr.invalid(`${p}.operator`, op, 'not a valid selector operator'));
    }
    const key = str(expr['key']);
    for (const m of isQualifiedName(key)) errs.push(fieldErr.invalid(`${p}.key`, key, m));
  });
  return errs;
}

/** Whether `metav1.LabelSelectorAsSelector` would reject the selector (it also checks values). */
function selectorConversionFails(selector: Record<string, unknown>, path: string): boolean {
  if (validateLabelSelector(selector, path).length > 0) return true;
  return list(selector['matchExpressions']).some((e) => {
    const expr = rec(e);
    const op = str(expr['operator']);
    return (op === 'In' || op === 'NotIn') && list(expr['values']).some((v) => isValidLabelValue(str(v)).length > 0);
  });
}

/** The aggregationRule half of kube's `ValidateClusterRole`. */
function validateAggregationRule(obj: StoredObject): FieldError[] {
  if (!isPlainObject(obj['aggregationRule'])) return [];
  const errs: FieldError[] = [];
  const selectors = list(obj['aggregationRule']['clusterRoleSelectors']);
  if (selectors.length === 0) {
    errs.push(fieldErr.required('aggregationRule.clusterRoleSelectors', 'at least one clusterRoleSelector required if aggregationRule is non-nil'));
  }
  selectors.forEach((sel, i) => {
    const p = `aggregationRule.clusterRoleSelectors[${i}]`;
    errs.push(...validateLabelSelector(rec(sel), p));
    // kube reports the (nil) converted selector as the value, which prints as "null".
    if (selectorConversionFails(rec(sel), p)) errs.push(fieldErr.invalid(p, 'null', 'invalid label selector.'));
  });
  return errs;
}

/** kube's `ValidateRoleBindingSubject`. */
export function validateRoleBindingSubject(subject: Record<string, unknown>, isNamespaced: boolean, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const name = str(subject['name']);
  const apiGroup = str(subject['apiGroup']);
  const kind = str(subject['kind']);
  if (name === '') errs.push(fieldErr.required(`${path}.name`));
  switch (kind) {
    case 'ServiceAccount':
      if (name !== '') for (const m of isDNS1123Subdomain(name)) errs.push(fieldErr.invalid(`${path}.name`, name, m));
      if (apiGroup !== '') errs.push(fieldErr.notSupported(`${path}.apiGroup`, apiGroup, ['']));
      if (!isNamespaced && str(subject['namespace']) === '') errs.push(fieldErr.required(`${path}.namespace`));
      break;
    case 'User':
    case 'Group':
      if (apiGroup !== RBAC_GROUP) errs.push(fieldErr.notSupported(`${path}.apiGroup`, apiGroup, [RBAC_GROUP]));
      break;
    default:
      errs.push(fieldErr.notSupported(`${path}.kind`, kind, ['ServiceAccount', 'User', 'Group']));
  }
  return errs;
}

/** The type-specific part of kube's `Validate{Cluster,}RoleBinding`. */
function validateBinding(obj: StoredObject, isNamespaced: boolean): FieldError[] {
  const errs: FieldError[] = [];
  const roleRef = rec(obj['roleRef']);
  const apiGroup = str(roleRef['apiGroup']);
  if (apiGroup !== RBAC_GROUP) errs.push(fieldErr.notSupported('roleRef.apiGroup', apiGroup, [RBAC_GROUP]));
  const kind = str(roleRef['kind']);
  const kinds = isNamespaced ? ['Role', 'ClusterRole'] : ['ClusterRole'];
  if (!kinds.includes(kind)) errs.push(fieldErr.notSupported('roleRef.kind', kind, kinds));
  const name = str(roleRef['name']);
  if (name === '') errs.push(fieldErr.required('roleRef.name'));
  else for (const m of nameIsPathSegment(name, false)) errs.push(fieldErr.invalid('roleRef.name', name, m));
  list(obj['subjects']).forEach((sub, i) => errs.push(...validateRoleBindingSubject(rec(sub), isNamespaced, `subjects[${i}]`)));
  return errs;
}

/** kube's roleRef immutability check in `Validate{Cluster,}RoleBindingUpdate`. */
function validateRoleRefUnchanged(obj: StoredObject, old: StoredObject): FieldError[] {
  const a = rec(obj['roleRef']);
  const b = rec(old['roleRef']);
  const same = (['apiGroup', 'kind', 'name'] as const).every((k) => str(a[k]) === str(b[k]));
  return same ? [] : [fieldErr.invalid('roleRef', obj['roleRef'] ?? {}, 'cannot change roleRef')];
}

// ---------------------------------------------------------------------------------------------
// Strategies and definitions
// ---------------------------------------------------------------------------------------------

export const clusterRoleStrategy: ResourceStrategy = {
  validate: (obj) => [...validateRules(obj, false), ...validateAggregationRule(obj)],
};

export const roleStrategy: ResourceStrategy = {
  validate: (obj) => validateRules(obj, true),
};

export const clusterRoleBindingStrategy: ResourceStrategy = {
  defaults: defaultBinding,
  validate: (obj) => validateBinding(obj, false),
  validateUpdate: validateRoleRefUnchanged,
};

export const roleBindingStrategy: ResourceStrategy = {
  defaults: defaultBinding,
  validate: (obj) => validateBinding(obj, true),
  validateUpdate: validateRoleRefUnchanged,
};

const ALL_VERBS: ResourceDefinition['verbs'] = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

function rbacResource(kind: string, plural: string, namespaced: boolean, schema: Schema, strategy: ResourceStrategy, table: TableDefinition): ResourceDefinition {
  return {
    group: RBAC_GROUP,
    version: 'v1',
    kind,
    listKind: `${kind}List`,
    plural,
    singular: kind.toLowerCase(),
    shortNames: [],
    categories: [],
    namespaced,
    verbs: [...ALL_VERBS],
    storage: 'etcd',
    subresources: [],
    nameValidator: nameIsPathSegment,
    allowCreateOnUpdate: true,
    returnDeletedObject: false,
    schema,
    strategy,
    table,
  };
}

export const clusterroles = rbacResource('ClusterRole', 'clusterroles', false, clusterRoleSchema, clusterRoleStrategy, roleTable);
export const clusterrolebindings = rbacResource('ClusterRoleBinding', 'clusterrolebindings', false, bindingSchema('ClusterRoleBinding'), clusterRoleBindingStrategy, clusterRoleBindingTable);
export const roles = rbacResource('Role', 'roles', true, roleSchema, roleStrategy, roleTable);
export const rolebindings = rbacResource('RoleBinding', 'rolebindings', true, bindingSchema('RoleBinding'), roleBindingStrategy, roleBindingTable);
