/** kube's PodSecurity admission plugin (Pod Security Admission 1.24), built from the plugin deps. */
export * from './api.js';
export * from './config.js';
export * from './evaluator.js';
export * from './admission.js';
export { hasPodTemplate, isSignificantPodUpdate, podTemplateOf } from './workloads.js';
export * from './metrics.js';
