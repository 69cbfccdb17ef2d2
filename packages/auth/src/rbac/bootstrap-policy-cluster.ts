/**
 * kube 1.24's default ClusterRoles and ClusterRoleBindings for users, nodes and the control plane
 * (plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go `ClusterRoles`,
 * `ClusterRoleBindings`, `NodeRules`), rule for rule and in kube's order. Resources plinth does
 * not serve yet are named as kube names them.
 */
import type { PolicyRule } from '../authorizer.js';
import {
  AGGREGATE_TO_ADMIN,
  AGGREGATE_TO_EDIT,
  AGGREGATE_TO_VIEW,
  Read,
  ReadUpdate,
  ReadWrite,
  Write,
  apps,
  authentication,
  authorization,
  autoscaling,
  batch,
  certificates,
  clusterBinding,
  clusterRole,
  coordination,
  discovery,
  eventsRule,
  extensions,
  gateOf,
  groups,
  legacy,
  networking,
  policy,
  rbac,
  rule,
  serviceAccount,
  storage,
  urls,
  users,
  type BootstrapPolicyOptions,
  type ClusterRoleBindingObject,
  type ClusterRoleObject,
} from './bootstrap-policy-builders.js';

/** certificates.k8s.io's well-known signers. */
const LEGACY_UNKNOWN_SIGNER = 'kubernetes.io/legacy-unknown';
const KUBE_APISERVER_CLIENT_SIGNER = 'kubernetes.io/kube-apiserver-client';
const KUBE_APISERVER_CLIENT_KUBELET_SIGNER = 'kubernetes.io/kube-apiserver-client-kubelet';
const KUBELET_SERVING_SIGNER = 'kubernetes.io/kubelet-serving';
export const SIGNERS = { LEGACY_UNKNOWN_SIGNER, KUBE_APISERVER_CLIENT_SIGNER, KUBE_APISERVER_CLIENT_KUBELET_SIGNER, KUBELET_SERVING_SIGNER };

/** kube's NodeRules: what the `system:node` role grants a kubelet. */
export function nodeRules(opts: BootstrapPolicyOptions = {}): PolicyRule[] {
  const gate = gateOf(opts);
  const out = [
    rule(['create'], [authentication], ['tokenreviews']),
    rule(['create'], [authorization], ['subjectaccessreviews', 'localsubjectaccessreviews']),
    rule(Read, [legacy], ['services']),
    rule(['create', 'get', 'list', 'watch'], [legacy], ['nodes']),
    rule(['update', 'patch'], [legacy], ['nodes/status']),
    rule(['update', 'patch'], [legacy], ['nodes']),
    rule(['create', 'update', 'patch'], [legacy], ['events']),
    rule(Read, [legacy], ['pods']),
    rule(['create', 'delete'], [legacy], ['pods']),
    rule(['update', 'patch'], [legacy], ['pods/status']),
    rule(['create'], [legacy], ['pods/eviction']),
    rule(['get', 'list', 'watch'], [legacy], ['secrets', 'configmaps']),
    rule(['get'], [legacy], ['persistentvolumeclaims', 'persistentvolumes']),
    rule(['get'], [legacy], ['endpoints']),
    rule(['create', 'get', 'list', 'watch'], [certificates], ['certificatesigningrequests']),
    rule(['get', 'create', 'update', 'patch', 'delete'], [coordination], ['leases']),
    rule(['get'], [storage], ['volumeattachments']),
    rule(['create'], [legacy], ['serviceaccounts/token']),
  ];
  if (gate('ExpandPersistentVolumes')) out.push(rule(['get', 'update', 'patch'], [legacy], ['persistentvolumeclaims/status']));
  out.push(
    rule(['get', 'watch', 'list'], [storage], ['csidrivers']),
    rule(['get', 'create', 'update', 'patch', 'delete'], [storage], ['csinodes']),
    rule(['get', 'list', 'watch'], ['node.k8s.io'], ['runtimeclasses']),
  );
  return out;
}

/** kube's ClusterRoles(), in its order. */
export function policyClusterRoles(opts: BootstrapPolicyOptions = {}): ClusterRoleObject[] {
  const gate = gateOf(opts);
  const scheduler = [
    eventsRule(),
    rule(['create'], [coordination], ['leases']),
    rule(['get', 'update'], [coordination], ['leases'], ['kube-scheduler']),
    rule(['create'], [legacy], ['endpoints']),
    rule(['get', 'update'], [legacy], ['endpoints'], ['kube-scheduler']),
    rule(Read, [legacy], ['nodes']),
    rule(['get', 'list', 'watch', 'delete'], [legacy], ['pods']),
    rule(['create'], [legacy], ['pods/binding', 'bindings']),
    rule(['patch', 'update'], [legacy], ['pods/status']),
    rule(Read, [legacy], ['services', 'replicationcontrollers']),
    rule(Read, [apps, extensions], ['replicasets']),
    rule(Read, [apps], ['statefulsets']),
    rule(Read, [policy], ['poddisruptionbudgets']),
    rule(Read, [legacy], ['persistentvolumeclaims', 'persistentvolumes']),
    rule(['create'], [authentication], ['tokenreviews']),
    rule(['create'], [authorization], ['subjectaccessreviews']),
    rule(Read, [storage], ['csinodes']),
    rule(Read, [legacy], ['namespaces']),
  ];
  if (gate('CSIStorageCapacity')) scheduler.push(rule(Read, [storage], ['csidrivers']), rule(Read, [storage], ['csistoragecapacities']));
  return [
    clusterRole('cluster-admin', { rules: [rule(['*'], ['*'], ['*']), urls(['*'], '*')] }),
    clusterRole('system:discovery', {
      rules: [urls(['get'], '/livez', '/readyz', '/healthz', '/version', '/version/', '/openapi', '/openapi/*', '/api', '/api/*', '/apis', '/apis/*')],
    }),
    clusterRole('system:monitoring', { rules: [urls(['get'], '/metrics', '/livez', '/readyz', '/healthz', '/livez/*', '/readyz/*', '/healthz/*')] }),
    clusterRole('system:basic-user', {
      rules: [
        rule(['create'], [authorization], ['selfsubjectaccessreviews', 'selfsubjectrulesreviews']),
        // Not in 1.24: with the APISelfSubjectReview gate on, plinth serves kube 1.28's
        // SelfSubjectReview and grants it to every user as kube's policy.go does under that gate.
        ...(gate('APISelfSubjectReview') ? [rule(['create'], [authentication], ['selfsubjectreviews'])] : []),
      ],
    }),
    clusterRole('system:public-info-viewer', { rules: [urls(['get'], '/livez', '/readyz', '/healthz', '/version', '/version/')] }),
    clusterRole('admin', { aggregateFrom: AGGREGATE_TO_ADMIN }),
    clusterRole('edit', { labels: { [AGGREGATE_TO_ADMIN]: 'true' }, aggregateFrom: AGGREGATE_TO_EDIT }),
    clusterRole('view', { labels: { [AGGREGATE_TO_EDIT]: 'true' }, aggregateFrom: AGGREGATE_TO_VIEW }),
    clusterRole('system:aggregate-to-admin', {
      labels: { [AGGREGATE_TO_ADMIN]: 'true' },
      rules: [rule(['create'], [authorization], ['localsubjectaccessreviews']), rule(ReadWrite, [rbac], ['roles', 'rolebindings'])],
    }),
    clusterRole('system:aggregate-to-edit', {
      labels: { [AGGREGATE_TO_EDIT]: 'true' },
      rules: [
        // Read on the escalating resources.
        rule(Read, [legacy], ['pods/attach', 'pods/proxy', 'pods/exec', 'pods/portforward', 'secrets', 'services/proxy']),
        rule(['impersonate'], [legacy], ['serviceaccounts']),
        rule(Write, [legacy], ['pods', 'pods/attach', 'pods/proxy', 'pods/exec', 'pods/portforward']),
        rule(Write, [legacy], ['replicationcontrollers', 'replicationcontrollers/scale', 'serviceaccounts', 'services', 'services/proxy', 'persistentvolumeclaims', 'configmaps', 'secrets', 'events']),
        rule(Write, [apps], ['statefulsets', 'statefulsets/scale', 'daemonsets', 'deployments', 'deployments/scale', 'deployments/rollback', 'replicasets', 'replicasets/scale']),
        rule(Write, [autoscaling], ['horizontalpodautoscalers']),
        rule(Write, [batch], ['jobs', 'cronjobs']),
        rule(Write, [extensions], ['daemonsets', 'deployments', 'deployments/scale', 'deployments/rollback', 'ingresses', 'replicasets', 'replicasets/scale', 'replicationcontrollers/scale', 'networkpolicies']),
        rule(Write, [policy], ['poddisruptionbudgets']),
        rule(Write, [networking], ['networkpolicies', 'ingresses']),
      ],
    }),
    clusterRole('system:aggregate-to-view', {
      labels: { [AGGREGATE_TO_VIEW]: 'true' },
      rules: [
        rule(Read, [legacy], ['pods', 'replicationcontrollers', 'replicationcontrollers/scale', 'serviceaccounts', 'services', 'services/status', 'endpoints', 'persistentvolumeclaims', 'persistentvolumeclaims/status', 'configmaps']),
        rule(Read, [legacy], ['limitranges', 'resourcequotas', 'bindings', 'events', 'pods/status', 'resourcequotas/status', 'namespaces/status', 'replicationcontrollers/status', 'pods/log']),
        // Reading namespaces at namespace scope is reading this namespace.
        rule(Read, [legacy], ['namespaces']),
        rule(Read, [discovery], ['endpointslices']),
        rule(Read, [apps], ['controllerrevisions', 'statefulsets', 'statefulsets/status', 'statefulsets/scale', 'daemonsets', 'daemonsets/status', 'deployments', 'deployments/status', 'deployments/scale', 'replicasets', 'replicasets/status', 'replicasets/scale']),
        rule(Read, [autoscaling], ['horizontalpodautoscalers', 'horizontalpodautoscalers/status']),
        rule(Read, [batch], ['jobs', 'cronjobs', 'cronjobs/status', 'jobs/status']),
        rule(Read, [extensions], ['daemonsets', 'daemonsets/status', 'deployments', 'deployments/scale', 'deployments/status', 'ingresses', 'ingresses/status', 'replicasets', 'replicasets/scale', 'replicasets/status', 'replicationcontrollers/scale', 'networkpolicies']),
        rule(Read, [policy], ['poddisruptionbudgets', 'poddisruptionbudgets/status']),
        rule(Read, [networking], ['networkpolicies', 'ingresses', 'ingresses/status']),
      ],
    }),
    clusterRole('system:heapster', { rules: [rule(Read, [legacy], ['events', 'pods', 'nodes', 'namespaces']), rule(Read, [extensions], ['deployments'])] }),
    clusterRole('system:node', { rules: nodeRules(opts) }),
    clusterRole('system:node-problem-detector', { rules: [rule(['get'], [legacy], ['nodes']), rule(['patch'], [legacy], ['nodes/status']), eventsRule()] }),
    clusterRole('system:kubelet-api-admin', {
      rules: [
        rule(['get', 'list', 'watch'], [legacy], ['nodes']),
        rule(['proxy'], [legacy], ['nodes']),
        rule(['*'], [legacy], ['nodes/proxy', 'nodes/metrics', 'nodes/spec', 'nodes/stats', 'nodes/log']),
      ],
    }),
    clusterRole('system:node-bootstrapper', { rules: [rule(['create', 'get', 'list', 'watch'], [certificates], ['certificatesigningrequests'])] }),
    clusterRole('system:auth-delegator', { rules: [rule(['create'], [authentication], ['tokenreviews']), rule(['create'], [authorization], ['subjectaccessreviews'])] }),
    clusterRole('system:kube-aggregator', { rules: [rule(Read, [legacy], ['services', 'endpoints'])] }),
    clusterRole('system:kube-controller-manager', {
      rules: [
        eventsRule(),
        // Leader election.
        rule(['create'], [coordination], ['leases']),
        rule(['get', 'update'], [coordination], ['leases'], ['kube-controller-manager']),
        rule(['create'], [legacy], ['endpoints']),
        rule(['get', 'update'], [legacy], ['endpoints'], ['kube-controller-manager']),
        rule(['create'], [legacy], ['secrets', 'serviceaccounts']),
        rule(['delete'], [legacy], ['secrets']),
        rule(['get'], [legacy], ['namespaces', 'secrets', 'serviceaccounts', 'configmaps']),
        rule(['update'], [legacy], ['secrets', 'serviceaccounts']),
        rule(['create'], [authentication], ['tokenreviews']),
        rule(['create'], [authorization], ['subjectaccessreviews']),
        // Every shared informer.
        rule(['list', 'watch'], ['*'], ['*']),
        rule(['create'], [legacy], ['serviceaccounts/token']),
      ],
    }),
    clusterRole('system:kube-dns', { rules: [rule(['list', 'watch'], [legacy], ['endpoints', 'services'])] }),
    clusterRole('system:persistent-volume-provisioner', {
      rules: [
        rule(['get', 'list', 'watch', 'create', 'delete'], [legacy], ['persistentvolumes']),
        rule(['get', 'list', 'watch', 'update'], [legacy], ['persistentvolumeclaims']),
        rule(Read, [storage], ['storageclasses']),
        rule(['watch'], [legacy], ['events']),
        eventsRule(),
      ],
    }),
    clusterRole('system:certificates.k8s.io:certificatesigningrequests:nodeclient', { rules: [rule(['create'], [certificates], ['certificatesigningrequests/nodeclient'])] }),
    clusterRole('system:certificates.k8s.io:certificatesigningrequests:selfnodeclient', { rules: [rule(['create'], [certificates], ['certificatesigningrequests/selfnodeclient'])] }),
    clusterRole('system:volume-scheduler', {
      rules: [rule(ReadUpdate, [legacy], ['persistentvolumes']), rule(Read, [storage], ['storageclasses']), rule(ReadUpdate, [legacy], ['persistentvolumeclaims'])],
    }),
    clusterRole('system:certificates.k8s.io:legacy-unknown-approver', { rules: [rule(['approve'], [certificates], ['signers'], [LEGACY_UNKNOWN_SIGNER])] }),
    clusterRole('system:certificates.k8s.io:kubelet-serving-approver', { rules: [rule(['approve'], [certificates], ['signers'], [KUBELET_SERVING_SIGNER])] }),
    clusterRole('system:certificates.k8s.io:kube-apiserver-client-approver', { rules: [rule(['approve'], [certificates], ['signers'], [KUBE_APISERVER_CLIENT_SIGNER])] }),
    clusterRole('system:certificates.k8s.io:kube-apiserver-client-kubelet-approver', {
      rules: [rule(['approve'], [certificates], ['signers'], [KUBE_APISERVER_CLIENT_KUBELET_SIGNER])],
    }),
    clusterRole('system:service-account-issuer-discovery', { rules: [urls(['get'], '/.well-known/openid-configuration', '/openid/v1/jwks')] }),
    clusterRole('system:node-proxier', {
      rules: [
        rule(['list', 'watch'], [legacy], ['services', 'endpoints']),
        rule(['get', 'list', 'watch'], [legacy], ['nodes']),
        eventsRule(),
        rule(['list', 'watch'], [discovery], ['endpointslices']),
      ],
    }),
    clusterRole('system:kube-scheduler', { rules: scheduler }),
  ];
}

/** kube's ClusterRoleBindings(), in its order. */
export function policyClusterRoleBindings(): ClusterRoleBindingObject[] {
  return [
    clusterBinding('cluster-admin', groups('system:masters')),
    clusterBinding('system:monitoring', groups('system:monitoring')),
    clusterBinding('system:discovery', groups('system:authenticated')),
    clusterBinding('system:basic-user', groups('system:authenticated')),
    clusterBinding('system:public-info-viewer', groups('system:authenticated', 'system:unauthenticated')),
    clusterBinding('system:node-proxier', users('system:kube-proxy')),
    clusterBinding('system:kube-controller-manager', users('system:kube-controller-manager')),
    clusterBinding('system:kube-dns', [serviceAccount('kube-system', 'kube-dns')]),
    clusterBinding('system:kube-scheduler', users('system:kube-scheduler')),
    clusterBinding('system:volume-scheduler', users('system:kube-scheduler')),
    // Kept without subjects since the Node authorizer (1.7), so reconciliation can tighten it.
    clusterBinding('system:node', []),
    clusterBinding('system:service-account-issuer-discovery', groups('system:serviceaccounts')),
  ];
}
