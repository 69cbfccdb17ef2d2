/**
 * The shapes and builders of kube's default RBAC objects (kube's pkg/apis/rbac/v1 helpers
 * `NewRule(...).Groups().Resources().Names().URLs()`, `NewClusterBinding`, `NewRoleBinding`, and
 * bootstrappolicy's addDefaultMetadata): every object carries the bootstrapping label and the
 * autoupdate annotation, so start-up reconciliation keeps it current unless an administrator
 * sets the annotation to "false".
 */
import type { Subject } from './rules.js';
import type { PolicyRule } from '../authorizer.js';

export const RBAC_API_GROUP = 'rbac.authorization.k8s.io';
/** rbacv1.AutoUpdateAnnotationKey. */
export const AUTOUPDATE_ANNOTATION = 'rbac.authorization.kubernetes.io/autoupdate';
export const BOOTSTRAP_LABELS: Readonly<Record<string, string>> = { 'kubernetes.io/bootstrapping': 'rbac-defaults' };
export const AGGREGATE_TO_ADMIN = 'rbac.authorization.k8s.io/aggregate-to-admin';
export const AGGREGATE_TO_EDIT = 'rbac.authorization.k8s.io/aggregate-to-edit';
export const AGGREGATE_TO_VIEW = 'rbac.authorization.k8s.io/aggregate-to-view';

export interface LabelSelectorObject {
  matchLabels?: Record<string, string>;
  matchExpressions?: Array<{ key: string; operator: string; values?: string[] }>;
}

interface DefaultMetadata {
  name: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

export interface ClusterRoleObject {
  apiVersion: 'rbac.authorization.k8s.io/v1';
  kind: 'ClusterRole';
  metadata: DefaultMetadata;
  rules?: PolicyRule[];
  aggregationRule?: { clusterRoleSelectors: LabelSelectorObject[] };
}

export interface ClusterRoleBindingObject {
  apiVersion: 'rbac.authorization.k8s.io/v1';
  kind: 'ClusterRoleBinding';
  metadata: DefaultMetadata;
  roleRef: { apiGroup: string; kind: string; name: string };
  /** Absent for kube's subject-less `system:node` binding. */
  subjects?: Subject[];
}

export interface RoleObject {
  apiVersion: 'rbac.authorization.k8s.io/v1';
  kind: 'Role';
  metadata: DefaultMetadata & { namespace: string };
  rules: PolicyRule[];
}

export interface RoleBindingObject {
  apiVersion: 'rbac.authorization.k8s.io/v1';
  kind: 'RoleBinding';
  metadata: DefaultMetadata & { namespace: string };
  roleRef: { apiGroup: string; kind: string; name: string };
  subjects: Subject[];
}

/**
 * Which feature gates are on (the policy has rules only some gates add, as kube's does). Absent:
 * kube 1.24's defaults.
 */
export interface BootstrapPolicyOptions {
  featureEnabled?(name: string): boolean;
}

/** kube 1.24's defaults of the gates the policy reads. */
const DEFAULT_GATES: Readonly<Record<string, boolean>> = {
  CSIMigration: true,
  ExpandPersistentVolumes: true,
  CSIStorageCapacity: true,
  StatefulSetAutoDeletePVC: false,
  StorageVersionAPI: false,
  APIServerIdentity: false,
  APISelfSubjectReview: false,
};

export function gateOf(opts: BootstrapPolicyOptions): (name: string) => boolean {
  return opts.featureEnabled ?? ((name) => DEFAULT_GATES[name] === true);
}

export const Read = ['get', 'list', 'watch'];
export const Write = ['create', 'update', 'patch', 'delete', 'deletecollection'];
export const ReadWrite = [...Read, ...Write];
export const ReadUpdate = ['get', 'list', 'watch', 'update', 'patch'];

export const legacy = '';
export const apps = 'apps';
export const authentication = 'authentication.k8s.io';
export const authorization = 'authorization.k8s.io';
export const autoscaling = 'autoscaling';
export const batch = 'batch';
export const certificates = 'certificates.k8s.io';
export const coordination = 'coordination.k8s.io';
export const discovery = 'discovery.k8s.io';
export const extensions = 'extensions';
export const policy = 'policy';
export const rbac = RBAC_API_GROUP;
export const storage = 'storage.k8s.io';
export const resMetrics = 'metrics.k8s.io';
export const customMetrics = 'custom.metrics.k8s.io';
export const networking = 'networking.k8s.io';
export const events = 'events.k8s.io';
export const internalAPIServer = 'internal.apiserver.k8s.io';

/** A sorted copy (kube's rule builder sorts every list of a rule, so its objects hold them sorted). */
const sorted = (xs: readonly string[]): string[] => [...xs].sort();

/** rbacv1helpers.NewRule(verbs...).Groups(groups...).Resources(resources...)[.Names(names...)].RuleOrDie(). */
export function rule(verbs: string[], groups: string[], resources: string[], names?: string[]): PolicyRule {
  const r: PolicyRule = { verbs: sorted(verbs), apiGroups: sorted(groups), resources: sorted(resources) };
  if (names) r.resourceNames = sorted(names);
  return r;
}

/** rbacv1helpers.NewRule(verbs...).URLs(urls...).RuleOrDie(). */
export function urls(verbs: string[], ...nonResourceURLs: string[]): PolicyRule {
  return { verbs: sorted(verbs), nonResourceURLs: sorted(nonResourceURLs) };
}

/** bootstrappolicy's eventsRule: controllers write events in both groups. */
export function eventsRule(): PolicyRule {
  return rule(['create', 'update', 'patch'], [legacy, events], ['events']);
}

function defaultMetadata(name: string, labels?: Record<string, string>): DefaultMetadata {
  // Go writes map keys sorted: the bootstrapping label sorts first.
  return { name, labels: { ...BOOTSTRAP_LABELS, ...labels }, annotations: { [AUTOUPDATE_ANNOTATION]: 'true' } };
}

/** A ClusterRole with rules, or aggregated from the roles labelled `aggregateFrom`. */
export function clusterRole(name: string, spec: { labels?: Record<string, string>; rules?: PolicyRule[]; aggregateFrom?: string }): ClusterRoleObject {
  const role: ClusterRoleObject = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: defaultMetadata(name, spec.labels) };
  if (spec.aggregateFrom) role.aggregationRule = { clusterRoleSelectors: [{ matchLabels: { [spec.aggregateFrom]: 'true' } }] };
  else role.rules = spec.rules ?? [];
  return role;
}

/** Subjects of kube's binding builders: `.Groups()`, `.Users()`, `.SAs(namespace, name)`. */
export const groups = (...names: string[]): Subject[] => names.map((name) => ({ kind: 'Group', apiGroup: RBAC_API_GROUP, name }));
export const users = (...names: string[]): Subject[] => names.map((name) => ({ kind: 'User', apiGroup: RBAC_API_GROUP, name }));
export const serviceAccount = (namespace: string, name: string): Subject => ({ kind: 'ServiceAccount', name, namespace });

/** rbacv1helpers.NewClusterBinding(role): named as the ClusterRole it binds. */
export function clusterBinding(role: string, subjects: Subject[]): ClusterRoleBindingObject {
  const b: ClusterRoleBindingObject = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: defaultMetadata(role),
    roleRef: { apiGroup: RBAC_API_GROUP, kind: 'ClusterRole', name: role },
  };
  if (subjects.length > 0) b.subjects = subjects;
  return b;
}

export function namespacedRole(namespace: string, name: string, rules: PolicyRule[]): RoleObject {
  return { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { ...defaultMetadata(name), namespace }, rules };
}

/** rbacv1helpers.NewRoleBinding(role, namespace), named `name` (kube renames one). */
export function roleBinding(namespace: string, role: string, subjects: Subject[], name = role): RoleBindingObject {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { ...defaultMetadata(name), namespace },
    roleRef: { apiGroup: RBAC_API_GROUP, kind: 'Role', name: role },
    subjects,
  };
}
