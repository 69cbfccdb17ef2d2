/**
 * kube 1.24's `system:controller:<name>` ClusterRoles and their bindings to the kube-system
 * service account `<name>` each controller of kube-controller-manager runs as
 * (plugin/pkg/auth/authorizer/rbac/bootstrappolicy/controller_policy.go `buildControllerRoles`),
 * rule for rule, in kube's order, with its feature-gated rules.
 */
import type { PolicyRule } from '../authorizer.js';
import {
  apps,
  authorization,
  autoscaling,
  batch,
  certificates,
  clusterBinding,
  clusterRole,
  coordination,
  customMetrics,
  discovery,
  eventsRule,
  extensions,
  gateOf,
  internalAPIServer,
  legacy,
  policy,
  rbac,
  resMetrics,
  rule,
  serviceAccount,
  storage,
  type BootstrapPolicyOptions,
  type ClusterRoleBindingObject,
  type ClusterRoleObject,
} from './bootstrap-policy-builders.js';
import { SIGNERS } from './bootstrap-policy-cluster.js';

export const CONTROLLER_ROLE_PREFIX = 'system:controller:';

/** Each controller's name (its service account in kube-system) and rules. */
function controllers(opts: BootstrapPolicyOptions): Array<[string, PolicyRule[]]> {
  const gate = gateOf(opts);
  const out: Array<[string, PolicyRule[]]> = [];
  const add = (name: string, rules: PolicyRule[]): void => {
    out.push([name, rules]);
  };
  add('attachdetach-controller', [
    rule(['list', 'watch'], [legacy], ['persistentvolumes', 'persistentvolumeclaims']),
    rule(['get', 'list', 'watch'], [legacy], ['nodes']),
    rule(['patch', 'update'], [legacy], ['nodes/status']),
    rule(['list', 'watch'], [legacy], ['pods']),
    eventsRule(),
    rule(['get', 'create', 'delete', 'list', 'watch'], [storage], ['volumeattachments']),
    rule(['get', 'watch', 'list'], [storage], ['csidrivers']),
    ...(gate('CSIMigration') ? [rule(['get', 'watch', 'list'], [storage], ['csinodes'])] : []),
  ]);
  add('clusterrole-aggregation-controller', [rule(['escalate', 'get', 'list', 'watch', 'update', 'patch'], [rbac], ['clusterroles'])]);
  add('cronjob-controller', [
    rule(['get', 'list', 'watch', 'update'], [batch], ['cronjobs']),
    rule(['get', 'list', 'watch', 'create', 'update', 'delete', 'patch'], [batch], ['jobs']),
    rule(['update'], [batch], ['cronjobs/status']),
    rule(['update'], [batch], ['cronjobs/finalizers']),
    rule(['list', 'delete'], [legacy], ['pods']),
    eventsRule(),
  ]);
  add('daemon-set-controller', [
    rule(['get', 'list', 'watch'], [extensions, apps], ['daemonsets']),
    rule(['update'], [extensions, apps], ['daemonsets/status']),
    rule(['update'], [extensions, apps], ['daemonsets/finalizers']),
    rule(['list', 'watch'], [legacy], ['nodes']),
    rule(['list', 'watch', 'create', 'delete', 'patch'], [legacy], ['pods']),
    rule(['create'], [legacy], ['pods/binding']),
    rule(['get', 'list', 'watch', 'create', 'delete', 'update', 'patch'], [apps], ['controllerrevisions']),
    eventsRule(),
  ]);
  add('deployment-controller', [
    rule(['get', 'list', 'watch', 'update'], [extensions, apps], ['deployments']),
    rule(['update'], [extensions, apps], ['deployments/status']),
    rule(['update'], [extensions, apps], ['deployments/finalizers']),
    rule(['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'], [apps, extensions], ['replicasets']),
    rule(['get', 'list', 'watch', 'update'], [legacy], ['pods']),
    eventsRule(),
  ]);
  add('disruption-controller', [
    rule(['get', 'list', 'watch'], [extensions, apps], ['deployments']),
    rule(['get', 'list', 'watch'], [apps, extensions], ['replicasets']),
    rule(['get', 'list', 'watch'], [legacy], ['replicationcontrollers']),
    rule(['get', 'list', 'watch'], [policy], ['poddisruptionbudgets']),
    rule(['get', 'list', 'watch'], [apps], ['statefulsets']),
    rule(['update'], [policy], ['poddisruptionbudgets/status']),
    rule(['get'], ['*'], ['*/scale']),
    eventsRule(),
  ]);
  add('endpoint-controller', [
    rule(['get', 'list', 'watch'], [legacy], ['services', 'pods']),
    rule(['get', 'list', 'create', 'update', 'delete'], [legacy], ['endpoints']),
    rule(['create'], [legacy], ['endpoints/restricted']),
    eventsRule(),
  ]);
  add('endpointslice-controller', [
    rule(['get', 'list', 'watch'], [legacy], ['services', 'pods', 'nodes']),
    // Owner references with blockOwnerDeletion need update on the owner's finalizers.
    rule(['update'], [legacy], ['services/finalizers']),
    rule(['get', 'list', 'create', 'update', 'delete'], [discovery], ['endpointslices']),
    eventsRule(),
  ]);
  add('endpointslicemirroring-controller', [
    rule(['get', 'list', 'watch'], [legacy], ['services', 'endpoints']),
    rule(['update'], [legacy], ['services/finalizers']),
    rule(['update'], [legacy], ['endpoints/finalizers']),
    rule(['get', 'list', 'create', 'update', 'delete'], [discovery], ['endpointslices']),
    eventsRule(),
  ]);
  if (gate('ExpandPersistentVolumes')) {
    add('expand-controller', [
      rule(['get', 'list', 'watch', 'update', 'patch'], [legacy], ['persistentvolumes']),
      rule(['update', 'patch'], [legacy], ['persistentvolumeclaims/status']),
      rule(['get', 'list', 'watch'], [legacy], ['persistentvolumeclaims']),
      rule(['get', 'list', 'watch'], [storage], ['storageclasses']),
      rule(['get'], [legacy], ['services', 'endpoints']),
      rule(['get'], [legacy], ['secrets']),
      eventsRule(),
    ]);
  }
  add('ephemeral-volume-controller', [
    rule(['get', 'list', 'watch'], [legacy], ['pods']),
    rule(['update'], [legacy], ['pods/finalizers']),
    rule(['get', 'list', 'watch', 'create'], [legacy], ['persistentvolumeclaims']),
    eventsRule(),
  ]);
  add('generic-garbage-collector', [rule(['get', 'list', 'watch', 'patch', 'update', 'delete'], ['*'], ['*']), eventsRule()]);
  add('horizontal-pod-autoscaler', [
    rule(['get', 'list', 'watch'], [autoscaling], ['horizontalpodautoscalers']),
    rule(['update'], [autoscaling], ['horizontalpodautoscalers/status']),
    rule(['get', 'update'], ['*'], ['*/scale']),
    rule(['list'], [legacy], ['pods']),
    rule(['get'], [legacy], ['services/proxy'], ['https:heapster:', 'http:heapster:']),
    rule(['list'], [resMetrics], ['pods']),
    rule(['get', 'list'], [customMetrics], ['*']),
    eventsRule(),
  ]);
  add('job-controller', [
    rule(['get', 'list', 'watch', 'update', 'patch'], [batch], ['jobs']),
    rule(['update'], [batch], ['jobs/status']),
    rule(['update'], [batch], ['jobs/finalizers']),
    rule(['list', 'watch', 'create', 'delete', 'patch'], [legacy], ['pods']),
    eventsRule(),
  ]);
  add('namespace-controller', [
    rule(['get', 'list', 'watch', 'delete'], [legacy], ['namespaces']),
    rule(['update'], [legacy], ['namespaces/finalize', 'namespaces/status']),
    rule(['get', 'list', 'delete', 'deletecollection'], ['*'], ['*']),
  ]);
  add('node-controller', [
    rule(['get', 'list', 'update', 'delete', 'patch'], [legacy], ['nodes']),
    rule(['patch', 'update'], [legacy], ['nodes/status']),
    rule(['update'], [legacy], ['pods/status']),
    rule(['list', 'delete'], [legacy], ['pods']),
    eventsRule(),
  ]);
  add('persistent-volume-binder', [
    rule(['get', 'list', 'watch', 'update', 'create', 'delete'], [legacy], ['persistentvolumes']),
    rule(['update'], [legacy], ['persistentvolumes/status']),
    rule(['get', 'list', 'watch', 'update'], [legacy], ['persistentvolumeclaims']),
    rule(['update'], [legacy], ['persistentvolumeclaims/status']),
    rule(['list', 'watch', 'get', 'create', 'delete'], [legacy], ['pods']),
    // glusterfs
    rule(['get', 'list', 'watch'], [storage], ['storageclasses']),
    rule(['get', 'create', 'update', 'delete'], [legacy], ['endpoints']),
    rule(['get', 'create', 'delete'], [legacy], ['services']),
    rule(['get'], [legacy], ['secrets']),
    // openstack
    rule(['get', 'list'], [legacy], ['nodes']),
    // the recycler watches its pod's events
    rule(['watch'], [legacy], ['events']),
    eventsRule(),
  ]);
  add('pod-garbage-collector', [rule(['list', 'watch', 'delete'], [legacy], ['pods']), rule(['get', 'list'], [legacy], ['nodes'])]);
  add('replicaset-controller', [
    rule(['get', 'list', 'watch', 'update'], [apps, extensions], ['replicasets']),
    rule(['update'], [apps, extensions], ['replicasets/status']),
    rule(['update'], [apps, extensions], ['replicasets/finalizers']),
    rule(['list', 'watch', 'patch', 'create', 'delete'], [legacy], ['pods']),
    eventsRule(),
  ]);
  add('replication-controller', [
    rule(['get', 'list', 'watch', 'update'], [legacy], ['replicationcontrollers']),
    rule(['update'], [legacy], ['replicationcontrollers/status']),
    rule(['update'], [legacy], ['replicationcontrollers/finalizers']),
    rule(['list', 'watch', 'patch', 'create', 'delete'], [legacy], ['pods']),
    eventsRule(),
  ]);
  add('resourcequota-controller', [rule(['list', 'watch'], ['*'], ['*']), rule(['update'], [legacy], ['resourcequotas/status']), eventsRule()]);
  add('route-controller', [rule(['list', 'watch'], [legacy], ['nodes']), rule(['patch'], [legacy], ['nodes/status']), eventsRule()]);
  add('service-account-controller', [rule(['create'], [legacy], ['serviceaccounts']), eventsRule()]);
  add('service-controller', [
    rule(['get', 'list', 'watch'], [legacy], ['services']),
    rule(['patch', 'update'], [legacy], ['services/status']),
    rule(['list', 'watch'], [legacy], ['nodes']),
    eventsRule(),
  ]);
  add('statefulset-controller', [
    rule(['list', 'watch'], [legacy], ['pods']),
    rule(['get', 'list', 'watch'], [apps], ['statefulsets']),
    rule(['update'], [apps], ['statefulsets/status']),
    rule(['update'], [apps], ['statefulsets/finalizers']),
    rule(['get', 'create', 'delete', 'update', 'patch'], [legacy], ['pods']),
    rule(['get', 'create', 'delete', 'update', 'patch', 'list', 'watch'], [apps], ['controllerrevisions']),
    rule(['get', 'create'], [legacy], ['persistentvolumeclaims']),
    eventsRule(),
    ...(gate('StatefulSetAutoDeletePVC') ? [rule(['update'], [legacy], ['persistentvolumeclaims'])] : []),
  ]);
  add('ttl-controller', [rule(['update', 'patch', 'list', 'watch'], [legacy], ['nodes']), eventsRule()]);
  add('certificate-controller', [
    rule(['get', 'list', 'watch', 'delete'], [certificates], ['certificatesigningrequests']),
    rule(['update'], [certificates], ['certificatesigningrequests/status', 'certificatesigningrequests/approval']),
    rule(['approve'], [certificates], ['signers'], [SIGNERS.KUBE_APISERVER_CLIENT_KUBELET_SIGNER]),
    rule(['sign'], [certificates], ['signers'], [SIGNERS.LEGACY_UNKNOWN_SIGNER, SIGNERS.KUBE_APISERVER_CLIENT_SIGNER, SIGNERS.KUBE_APISERVER_CLIENT_KUBELET_SIGNER, SIGNERS.KUBELET_SERVING_SIGNER]),
    rule(['create'], [authorization], ['subjectaccessreviews']),
    eventsRule(),
  ]);
  add('pvc-protection-controller', [
    rule(['get', 'list', 'watch', 'update'], [legacy], ['persistentvolumeclaims']),
    rule(['list', 'watch', 'get'], [legacy], ['pods']),
    eventsRule(),
  ]);
  add('pv-protection-controller', [rule(['get', 'list', 'watch', 'update'], [legacy], ['persistentvolumes']), eventsRule()]);
  add('ttl-after-finished-controller', [rule(['get', 'list', 'watch', 'delete'], [batch], ['jobs']), eventsRule()]);
  add('root-ca-cert-publisher', [rule(['create', 'update'], [legacy], ['configmaps']), eventsRule()]);
  if (gate('StorageVersionAPI') && gate('APIServerIdentity')) {
    add('storage-version-garbage-collector', [
      rule(['get', 'list', 'watch'], [coordination], ['leases']),
      rule(['get', 'list', 'watch', 'patch', 'update', 'delete'], [internalAPIServer], ['storageversions']),
      rule(['get', 'patch', 'update'], [internalAPIServer], ['storageversions/status']),
    ]);
  }
  return out;
}

/** kube's ControllerRoles() and ControllerRoleBindings(), in its order. */
export function controllerPolicy(opts: BootstrapPolicyOptions = {}): { roles: ClusterRoleObject[]; bindings: ClusterRoleBindingObject[] } {
  const all = controllers(opts);
  return {
    roles: all.map(([name, rules]) => clusterRole(CONTROLLER_ROLE_PREFIX + name, { rules })),
    bindings: all.map(([name]) => clusterBinding(CONTROLLER_ROLE_PREFIX + name, [serviceAccount('kube-system', name)])),
  };
}
