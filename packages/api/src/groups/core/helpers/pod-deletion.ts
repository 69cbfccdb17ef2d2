/**
 * How long a pod's graceful deletion lasts, as kube 1.24's pod strategy decides it
 * (pkg/registry/core/pod podStrategy.CheckGracefulDelete).
 */
import { type JsonObject, asObject, isSet, num, str } from '../validation/access.js';

/** The grace the DeleteOptions asked for (`gracePeriodSeconds`), if any. */
export interface DeleteGraceOptions {
  gracePeriodSeconds?: number | bigint | null;
}

/**
 * The grace period kube writes back into the DeleteOptions before deleting a pod: the requested
 * one, else the pod's `terminationGracePeriodSeconds` (0 when unset); 0 for a pod not scheduled to
 * a node or already Succeeded/Failed; a negative period becomes 1 (kube 1.22+).
 */
export function podGracePeriod(pod: JsonObject, options: DeleteGraceOptions): number {
  const spec = asObject(pod['spec']) ?? {};
  let period = 0;
  if (isSet(options.gracePeriodSeconds)) period = num(options.gracePeriodSeconds);
  else if (isSet(spec['terminationGracePeriodSeconds'])) period = num(spec['terminationGracePeriodSeconds']);
  if (str(spec['nodeName']).length === 0) period = 0;
  const phase = str(asObject(pod['status'])?.['phase']);
  if (phase === 'Failed' || phase === 'Succeeded') period = 0;
  if (period < 0) period = 1;
  return period;
}
