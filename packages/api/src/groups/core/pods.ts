/**
 * Pods, PodTemplates and ReplicationControllers of core/v1: kube 1.24's validation, defaulting and
 * the pod strategy's helpers, as pure functions over decoded v1 JSON. Object metadata checks are
 * the store's; the rest is here.
 */
export * from './validation/pod-options.js';
export * from './validation/pod.js';
export * from './validation/pod-spec.js';
export * from './validation/pod-update.js';
export * from './validation/pod-status.js';
export * from './validation/pod-template.js';
export * from './validation/pod-annotations.js';
export * from './validation/replication-controller.js';
export * from './defaults/pod.js';
export * from './helpers/qos.js';
export * from './helpers/pod-deletion.js';
export * from './helpers/drop-disabled.js';
export * from './helpers/seccomp-skew.js';
export * from './helpers/pod-conversion.js';
export * from './helpers/pod-strategy.js';
export * from './validation/pod-log-options.js';
export { validateTolerations } from './validation/tolerations.js';
