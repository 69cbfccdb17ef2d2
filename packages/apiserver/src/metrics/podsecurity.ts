/**
 * The PodSecurity admission plugin's counters (k8s.io/pod-security-admission/metrics, 1.24),
 * in the apiserver's registry; the plugin computes their label values.
 */
import type { PodSecurityMetrics } from '@plinth/admission';
import type { KubeRegistry } from './registry.js';

export function createPodSecurityMetrics(registry: KubeRegistry): PodSecurityMetrics {
  const evaluations = registry.counter({
    name: 'pod_security_evaluations_total',
    help: 'Number of policy evaluations that occurred, not counting ignored or exempt requests.',
    labelNames: ['decision', 'policy_level', 'policy_version', 'mode', 'request_operation', 'resource', 'subresource'],
    stability: 'ALPHA',
  });
  const exemptions = registry.counter({
    name: 'pod_security_exemptions_total',
    help: 'Number of exempt requests, not counting ignored or out of scope requests.',
    labelNames: ['request_operation', 'resource', 'subresource'],
    stability: 'ALPHA',
  });
  const errors = registry.counter({
    name: 'pod_security_errors_total',
    help: 'Number of errors preventing normal evaluation. Non-fatal errors may result in the latest restricted profile being used for evaluation.',
    labelNames: ['fatal', 'request_operation', 'resource', 'subresource'],
    stability: 'ALPHA',
  });
  return {
    evaluation: (labels) => evaluations.labels(...labels).inc(),
    exemption: (labels) => exemptions.labels(...labels).inc(),
    error: (labels) => errors.labels(...labels).inc(),
  };
}
