/**
 * kube-apiserver 1.24's default ClusterRoles and ClusterRoleBindings (plugin/pkg/auth/authorizer/
 * rbac/bootstrappolicy/policy.go), the subset a server without nodes and controllers needs: the
 * user-facing roles, discovery, public information, monitoring, delegation and issuer discovery.
 * Every object carries kube's bootstrapping label and the autoupdate annotation, so start-up
 * reconciliation keeps it current unless an administrator sets the annotation to "false".
 */
import type { Subject } from './rules.js';
import type { PolicyRule } from '../authorizer.js';

export const RBAC_API_GROUP = 'rbac.authorization.k8s.io';
/** rbacv1.AutoUpdateAnnotationKey. */
export const AUTOUPDATE_ANNOTATION = 'rbac.authorization.kubernetes.io/autoupdate';
export const BOOTSTRAP_LABELS: Readonly<Record<string, string>> = { 'kubernetes.io/bootstrapping': 'rbac-defaults' };

export interface LabelSelectorObject {
  matchLabels?: Record<string, string>;
  matchExpressions?: Array<{ key: string; operator: string; values?: string[] }>;
}

export interface ClusterRoleObject {
  apiVersion: 'rbac.authorization.k8s.io/v1';
  kind: 'ClusterRole';
  metadata: { name: string; labels: Record<string, string>; annotations: Record<string, string> };
  rules?: PolicyRule[];
  aggregationRule?: { clusterRoleSelectors: LabelSelectorObject[] };
}

export interface ClusterRoleBindingObject {
  apiVersion: 'rbac.authorization.k8s.io/v1';
  kind: 'ClusterRoleBinding';
  metadata: { name: string; labels: Record<string, string>; annotations: Record<string, string> };
  roleRef: { apiGroup: string; kind: string; name: string };
  subjects: Subject[];
}

const Read = ['get', 'list', 'watch'];
const Write = ['create', 'update', 'patch', 'delete', 'deletecollection'];
const ReadWrite = [...Read, ...Write];

const core = '';
const apps = 'apps';
const authentication = 'authentication.k8s.io';
const authorization = 'authorization.k8s.io';
const autoscaling = 'autoscaling';
const batch = 'batch';
const extensions = 'extensions';
const policy = 'policy';
const networking = 'networking.k8s.io';
const coordination = 'coordination.k8s.io';

/** rbacv1helpers.NewRule(verbs...).Groups(groups...).Resources(resources...). */
const rule = (verbs: string[], groups: string[], resources: string[]): PolicyRule => ({ verbs: [...verbs], apiGroups: [...groups], resources: [...resources] });
/** rbacv1helpers.NewRule(verbs...).URLs(urls...). */
const urls = (verbs: string[], ...nonResourceURLs: string[]): PolicyRule => ({ verbs: [...verbs], nonResourceURLs });

function clusterRole(name: string, spec: { labels?: Record<string, string>; rules?: PolicyRule[]; aggregateFrom?: string }): ClusterRoleObject {
  const role: ClusterRoleObject = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name, labels: { ...spec.labels, ...BOOTSTRAP_LABELS }, annotations: { [AUTOUPDATE_ANNOTATION]: 'true' } },
  };
  if (spec.aggregateFrom) role.aggregationRule = { clusterRoleSelectors: [{ matchLabels: { [spec.aggregateFrom]: 'true' } }] };
  else role.rules = spec.rules ?? [];
  return role;
}

const AGGREGATE_TO_ADMIN = 'rbac.authorization.k8s.io/aggregate-to-admin';
const AGGREGATE_TO_EDIT = 'rbac.authorization.k8s.io/aggregate-to-edit';
const AGGREGATE_TO_VIEW = 'rbac.authorization.k8s.io/aggregate-to-view';

/** kube's clusterRoles() (the subset above), in kube's order. A fresh copy on each call. */
export function bootstrapClusterRoles(): ClusterRoleObject[] {
  return [
    clusterRole('cluster-admin', { rules: [rule(['*'], ['*'], ['*']), urls(['*'], '*')] }),
    clusterRole('system:discovery', {
      rules: [urls(['get'], '/livez', '/readyz', '/healthz', '/version', '/version/', '/openapi', '/openapi/*', '/api', '/api/*', '/apis', '/apis/*')],
    }),
    clusterRole('system:monitoring', {
      rules: [urls(['get'], '/metrics', '/livez', '/readyz', '/healthz', '/livez/*', '/readyz/*', '/healthz/*')],
    }),
    clusterRole('system:basic-user', {
      rules: [
        rule(['create'], [authorization], ['selfsubjectaccessreviews', 'selfsubjectrulesreviews']),
        // kube 1.27+ (APISelfSubjectReview): `kubectl auth whoami` works for everyone.
        rule(['create'], [authentication], ['selfsubjectreviews']),
      ],
    }),
    clusterRole('system:public-info-viewer', { rules: [urls(['get'], '/livez', '/readyz', '/healthz', '/version', '/version/')] }),
    clusterRole('admin', { aggregateFrom: AGGREGATE_TO_ADMIN }),
    clusterRole('edit', { labels: { [AGGREGATE_TO_ADMIN]: 'true' }, aggregateFrom: AGGREGATE_TO_EDIT }),
    clusterRole('view', { labels: { [AGGREGATE_TO_EDIT]: 'true' }, aggregateFrom: AGGREGATE_TO_VIEW }),
    clusterRole('system:aggregate-to-admin', {
      labels: { [AGGREGATE_TO_ADMIN]: 'true' },
      rules: [rule(['create'], [authorization], ['localsubjectaccessreviews']), rule(ReadWrite, [RBAC_API_GROUP], ['roles', 'rolebindings'])],
    }),
    clusterRole('system:aggregate-to-edit', {
      labels: { [AGGREGATE_TO_EDIT]: 'true' },
      rules: [
        // read on escalating resources
        rule(Read, [core], ['pods/attach', 'pods/proxy', 'pods/exec', 'pods/portforward', 'secrets', 'services/proxy']),
        rule(['impersonate'], [core], ['serviceaccounts']),
        rule(Write, [core], ['pods', 'pods/attach', 'pods/proxy', 'pods/exec', 'pods/portforward']),
        rule(['create'], [core], ['pods/eviction']),
        rule(Write, [core], ['replicationcontrollers', 'replicationcontrollers/scale', 'serviceaccounts', 'services', 'services/proxy', 'persistentvolumeclaims', 'configmaps', 'secrets', 'events']),
        rule(['create'], [core], ['serviceaccounts/token']),
        rule(Write, [apps], ['statefulsets', 'statefulsets/scale', 'daemonsets', 'deployments', 'deployments/scale', 'deployments/rollback', 'replicasets', 'replicasets/scale']),
        rule(Write, [autoscaling], ['horizontalpodautoscalers']),
        rule(Write, [batch], ['jobs', 'cronjobs']),
        rule(Write, [extensions], ['daemonsets', 'deployments', 'deployments/scale', 'deployments/rollback', 'ingresses', 'replicasets', 'replicasets/scale', 'replicationcontrollers/scale', 'networkpolicies']),
        rule(Write, [policy], ['poddisruptionbudgets']),
        rule(Write, [networking], ['networkpolicies', 'ingresses']),
        // Leader election with leases (kube #111472, in 1.24 since 1.24.4): namespace editors and
        // admins may use leases instead of configmaps as their lock.
        rule(ReadWrite, [coordination], ['leases']),
      ],
    }),
    clusterRole('system:aggregate-to-view', {
      labels: { [AGGREGATE_TO_VIEW]: 'true' },
      rules: [
        rule(Read, [core], ['pods', 'replicationcontrollers', 'replicationcontrollers/scale', 'serviceaccounts', 'services', 'services/status', 'endpoints', 'persistentvolumeclaims', 'persistentvolumeclaims/status', 'configmaps']),
        rule(Read, [core], ['limitranges', 'resourcequotas', 'bindings', 'events', 'pods/status', 'resourcequotas/status', 'namespaces/status', 'replicationcontrollers/status', 'pods/log']),
        // read access to namespaces at the namespace scope means you can read *this* namespace
        rule(Read, [core], ['namespaces']),
        rule(Read, [apps], ['controllerrevisions', 'statefulsets', 'statefulsets/status', 'statefulsets/scale', 'daemonsets', 'daemonsets/status', 'deployments', 'deployments/status', 'deployments/scale', 'replicasets', 'replicasets/status', 'replicasets/scale']),
        rule(Read, [autoscaling], ['horizontalpodautoscalers', 'horizontalpodautoscalers/status']),
        rule(Read, [batch], ['jobs', 'cronjobs', 'cronjobs/status', 'jobs/status']),
        rule(Read, [extensions], ['daemonsets', 'daemonsets/status', 'deployments', 'deployments/scale', 'deployments/status', 'ingresses', 'ingresses/status', 'replicasets', 'replicasets/scale', 'replicasets/status', 'replicationcontrollers/scale', 'networkpolicies']),
        rule(Read, [policy], ['poddisruptionbudgets', 'poddisruptionbudgets/status']),
        rule(Read, [networking], ['networkpolicies', 'ingresses', 'ingresses/status']),
      ],
    }),
    clusterRole('system:auth-delegator', {
      rules: [rule(['create'], [authentication], ['tokenreviews']), rule(['create'], [authorization], ['subjectaccessreviews'])],
    }),
    clusterRole('system:service-account-issuer-discovery', { rules: [urls(['get'], '/.well-known/openid-configuration', '/openid/v1/jwks')] }),
  ];
}

function clusterBinding(role: string, groups: string[]): ClusterRoleBindingObject {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: role, labels: { ...BOOTSTRAP_LABELS }, annotations: { [AUTOUPDATE_ANNOTATION]: 'true' } },
    roleRef: { apiGroup: RBAC_API_GROUP, kind: 'ClusterRole', name: role },
    subjects: groups.map((name) => ({ kind: 'Group', apiGroup: RBAC_API_GROUP, name })),
  };
}

/** kube's clusterRoleBindings() (the subset above). A fresh copy on each call. */
export function bootstrapClusterRoleBindings(): ClusterRoleBindingObject[] {
  return [
    clusterBinding('cluster-admin', ['system:masters']),
    clusterBinding('system:monitoring', ['system:monitoring']),
    clusterBinding('system:discovery', ['system:authenticated']),
    clusterBinding('system:basic-user', ['system:authenticated']),
    clusterBinding('system:public-info-viewer', ['system:authenticated', 'system:unauthenticated']),
    clusterBinding('system:service-account-issuer-discovery', ['system:serviceaccounts']),
  ];
}
