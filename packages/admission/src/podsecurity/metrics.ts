/**
 * What PodSecurity counts (PSA 1.24's metrics.Recorder): label values computed here as PSA does,
 * counters kept by the apiserver's registry (`pod_security_evaluations_total`,
 * `pod_security_exemptions_total`, `pod_security_errors_total`).
 */
import type { AdmissionAttributes } from '../interfaces.js';
import { LATEST, versionString, type LevelVersion } from './api.js';

/** The counters, by their label values in PSA's label order. */
export interface PodSecurityMetrics {
  /** decision, policy_level, policy_version, mode, request_operation, resource, subresource */
  evaluation(labels: readonly string[]): void;
  /** request_operation, resource, subresource */
  exemption(labels: readonly string[]): void;
  /** fatal, request_operation, resource, subresource */
  error(labels: readonly string[]): void;
}

/** The minor of the Kubernetes version plinth serves: a pinned version past it counts as "future". */
const API_MINOR = 24;

const resourceLabel = (a: AdmissionAttributes): string =>
  a.resource.group === '' && a.resource.plural === 'pods' ? 'pod' : a.resource.group === '' && a.resource.plural === 'namespaces' ? 'namespace' : 'controller';

const requestLabels = (a: AdmissionAttributes): string[] => [a.operation.toLowerCase(), resourceLabel(a), a.subresource];

/** PSA's recorder over `m` (or one that records nothing). */
export function podSecurityRecorder(m: PodSecurityMetrics | undefined) {
  return {
    evaluation(decision: 'allow' | 'deny', lv: LevelVersion, mode: 'enforce' | 'audit' | 'warn', a: AdmissionAttributes): void {
      if (!m) return;
      // Privileged is the same at every version.
      const version = lv.version === LATEST || lv.level === 'privileged' ? 'latest' : lv.version <= API_MINOR ? versionString(lv.version) : 'future';
      m.evaluation([decision, lv.level, version, mode, ...requestLabels(a)]);
    },
    exemption(a: AdmissionAttributes): void {
      m?.exemption(requestLabels(a));
    },
    error(fatal: boolean, a: AdmissionAttributes): void {
      m?.error([String(fatal), ...requestLabels(a)]);
    },
  };
}
