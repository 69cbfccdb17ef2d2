/**
 * What kube's v1↔internal pod conversion does to a stored v1 pod (pkg/apis/core/v1/conversion.go),
 * which plinth, storing v1 JSON, applies directly: the deprecated `serviceAccount` mirrors
 * `serviceAccountName` (the latter wins), the pre-1.8 init-container annotations are dropped, and
 * `podIP` and `podIPs` agree (`podIP` wins).
 */
import { type JsonObject, asObject, objects, str } from '../validation/access.js';

const INIT_CONTAINER_ANNOTATIONS = [
  'pod.beta.kubernetes.io/init-containers',
  'pod.alpha.kubernetes.io/init-containers',
  'pod.beta.kubernetes.io/init-container-statuses',
  'pod.alpha.kubernetes.io/init-container-statuses',
];

/** The serviceAccount alias, both ways, in place (Convert_v1_PodSpec_To_core_PodSpec and back). */
export function normalizeServiceAccount(spec: JsonObject): void {
  const name = str(spec['serviceAccountName']) || str(spec['serviceAccount']);
  if (name === '') {
    delete spec['serviceAccountName'];
    delete spec['serviceAccount'];
    return;
  }
  spec['serviceAccountName'] = name;
  spec['serviceAccount'] = name;
}

/** Drops the init-container annotations of pods and pod templates, in place (dropInitContainerAnnotations). */
export function dropInitContainerAnnotations(meta: unknown): void {
  const annotations = asObject(asObject(meta)?.['annotations']);
  if (!annotations) return;
  for (const k of INIT_CONTAINER_ANNOTATIONS) delete annotations[k];
}

/** Makes `podIP` and `podIPs` agree as a round trip through the internal status does, in place. */
export function normalizePodIPs(status: JsonObject): void {
  const podIP = str(status['podIP']);
  const podIPs = objects(status['podIPs']);
  if (podIP !== '' && (podIPs.length === 0 || str(podIPs[0]!['ip']) !== podIP)) status['podIPs'] = [{ ip: podIP }];
  const first = objects(status['podIPs'])[0];
  if (first) status['podIP'] = str(first['ip']);
}

/** Every conversion effect on a v1 pod, in place. */
export function normalizePod(pod: JsonObject): void {
  dropInitContainerAnnotations(pod['metadata']);
  const spec = asObject(pod['spec']);
  if (spec) normalizeServiceAccount(spec);
  const status = asObject(pod['status']);
  if (status) normalizePodIPs(status);
}

/** Every conversion effect on a v1 pod template spec (PodTemplate's template, an RC's template), in place. */
export function normalizePodTemplateSpec(template: unknown): void {
  const t = asObject(template);
  if (!t) return;
  dropInitContainerAnnotations(t['metadata']);
  const spec = asObject(t['spec']);
  if (spec) normalizeServiceAccount(spec);
}
