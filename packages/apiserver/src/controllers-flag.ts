/**
 * `--controllers`, kube-controller-manager's flag for the controllers plinth runs in-process: names
 * from kube 1.24's list, `*` for plinth's default set, `-name` to turn one off, the first entry
 * that names a controller deciding (kube's IsControllerEnabled), so plinth can run beside a real
 * kube-controller-manager without two controllers doing the same job.
 */

/** kube-controller-manager 1.24's KnownControllers(). */
export const KUBE_CONTROLLERS: readonly string[] = [
  'attachdetach', 'bootstrapsigner', 'cloud-node-lifecycle', 'clusterrole-aggregation', 'cronjob', 'csrapproving', 'csrcleaner', 'csrsigning',
  'daemonset', 'deployment', 'disruption', 'endpoint', 'endpointslice', 'endpointslicemirroring', 'ephemeral-volume', 'garbagecollector',
  'horizontalpodautoscaling', 'job', 'namespace', 'nodeipam', 'nodelifecycle', 'persistentvolume-binder', 'persistentvolume-expander', 'podgc',
  'pv-protection', 'pvc-protection', 'replicaset', 'replicationcontroller', 'resourcequota', 'root-ca-cert-publisher', 'route', 'service',
  'serviceaccount', 'serviceaccount-token', 'statefulset', 'tokencleaner', 'ttl', 'ttl-after-finished',
];

/**
 * The ones plinth runs, all in `*` (tokencleaner, off by default in kube, runs with bootstrap
 * token authentication; csrsigning with a signing CA). The others are kube's to run.
 */
export const PLINTH_CONTROLLERS: readonly string[] = [
  'clusterrole-aggregation', 'csrapproving', 'csrsigning', 'garbagecollector', 'namespace', 'pv-protection', 'pvc-protection', 'resourcequota',
  'root-ca-cert-publisher', 'serviceaccount', 'serviceaccount-token', 'tokencleaner',
];

/** Start-up errors: kube's for an unknown name; plinth's for enabling one it does not run. */
export function validateControllers(list: readonly string[]): string[] {
  const errs: string[] = [];
  for (const entry of list) {
    if (entry === '*') continue;
    const name = entry.startsWith('-') ? entry.slice(1) : entry;
    if (!KUBE_CONTROLLERS.includes(name)) errs.push(`${JSON.stringify(name)} is not in the list of known controllers`);
    else if (!entry.startsWith('-') && !PLINTH_CONTROLLERS.includes(name)) errs.push(`controller ${JSON.stringify(name)} is not run by plinth (run kube-controller-manager for it)`);
  }
  return errs;
}

/** kube's IsControllerEnabled over plinth's default set. */
export function isControllerEnabled(list: readonly string[], name: string): boolean {
  for (const entry of list) {
    if (entry === name) return true;
    if (entry === `-${name}`) return false;
  }
  return list.includes('*') && PLINTH_CONTROLLERS.includes(name);
}
