/**
 * A pod's QoS class as kube 1.24 computes it at create (pkg/apis/core/helper/qos GetPodQOS, over
 * containers and init containers; ephemeral containers have no resources): BestEffort without cpu
 * or memory requests and limits, Guaranteed when every container limits both and requests equal
 * limits, Burstable otherwise.
 */
import type { Quantity } from '../../../quantity.js';
import { type JsonObject, asObject, objects } from '../validation/access.js';
import { resourceListEntries } from '../validation/resources.js';

export type PodQOSClass = 'Guaranteed' | 'Burstable' | 'BestEffort';

const QOS_RESOURCES = new Set(['cpu', 'memory']);

/** Adds the positive cpu/memory quantities of `list` into `sums`; the names it saw. */
function accumulate(sums: Map<string, Quantity>, list: unknown): Set<string> {
  const seen = new Set<string>();
  for (const [name, q] of resourceListEntries(list)) {
    if (!QOS_RESOURCES.has(name) || q.sign() <= 0) continue;
    seen.add(name);
    const prev = sums.get(name);
    sums.set(name, prev ? prev.add(q) : q);
  }
  return seen;
}

/** kube's `GetPodQOS`. */
export function computePodQOS(pod: JsonObject): PodQOSClass {
  const spec = asObject(pod['spec']) ?? {};
  const requests = new Map<string, Quantity>();
  const limits = new Map<string, Quantity>();
  let guaranteed = true;
  for (const c of [...objects(spec['containers']), ...objects(spec['initContainers'])]) {
    const resources = asObject(c['resources']) ?? {};
    accumulate(requests, resources['requests']);
    const found = accumulate(limits, resources['limits']);
    if (!found.has('cpu') || !found.has('memory')) guaranteed = false;
  }
  if (requests.size === 0 && limits.size === 0) return 'BestEffort';
  if (guaranteed) {
    for (const [name, req] of requests) {
      const lim = limits.get(name);
      if (!lim || lim.cmp(req) !== 0) {
        guaranteed = false;
        break;
      }
    }
  }
  return guaranteed && requests.size === limits.size ? 'Guaranteed' : 'Burstable';
}
