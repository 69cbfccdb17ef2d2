/**
 * discovery.k8s.io EndpointSlices between v1beta1 and v1 (the storage version), as kube 1.24's
 * pkg/apis/discovery/v1beta1 conversion does it through the internal type (whose fields are v1's):
 *
 * - v1beta1 → v1: `topology` becomes `deprecatedTopology`; its zone key moves to `zone`; its host
 *   name key is dropped only when it equals `nodeName` (v1beta1 may hold two different values);
 *   an empty remainder is no `deprecatedTopology`.
 * - v1 → v1beta1: `topology` is `deprecatedTopology` plus the zone key from `zone` and the host
 *   name key from `nodeName` when not already set; none when all three are absent.
 *
 * Both directions return new objects (endpoints included) and never change their input.
 */
import type { StoredObject } from '../../types.js';
import { isPlainObject } from '../../types.js';

export const DISCOVERY_GROUP = 'discovery.k8s.io';
/** kube's corev1.LabelHostname. */
export const LABEL_HOSTNAME = 'kubernetes.io/hostname';
/** kube's corev1.LabelTopologyZone. */
export const LABEL_TOPOLOGY_ZONE = 'topology.kubernetes.io/zone';

type Json = Record<string, unknown>;

const isSet = (v: unknown): boolean => v !== undefined && v !== null;

function endpointToV1(ep: unknown): unknown {
  if (!isPlainObject(ep)) return ep;
  const { topology, ...out } = ep;
  if (!isPlainObject(topology)) return out;
  const rest: Json = { ...topology };
  if (LABEL_TOPOLOGY_ZONE in topology) {
    out['zone'] = topology[LABEL_TOPOLOGY_ZONE];
    delete rest[LABEL_TOPOLOGY_ZONE];
  }
  if (LABEL_HOSTNAME in topology && typeof out['nodeName'] === 'string' && topology[LABEL_HOSTNAME] === out['nodeName']) delete rest[LABEL_HOSTNAME];
  if (Object.keys(rest).length > 0) out['deprecatedTopology'] = rest;
  return out;
}

function endpointToV1beta1(ep: unknown): unknown {
  if (!isPlainObject(ep)) return ep;
  const { deprecatedTopology, zone, ...out } = ep;
  if (!isSet(deprecatedTopology) && !isSet(zone) && !isSet(out['nodeName'])) return out;
  const topology: Json = isPlainObject(deprecatedTopology) ? { ...deprecatedTopology } : {};
  if (isSet(zone)) topology[LABEL_TOPOLOGY_ZONE] = zone;
  // Go reads a missing key as "": an empty host name is replaced too.
  if (isSet(out['nodeName']) && !topology[LABEL_HOSTNAME]) topology[LABEL_HOSTNAME] = out['nodeName'];
  out['topology'] = topology;
  return out;
}

function convert(obj: StoredObject, version: string, endpoint: (ep: unknown) => unknown): StoredObject {
  const out: StoredObject = { ...obj, apiVersion: `${DISCOVERY_GROUP}/${version}`, kind: 'EndpointSlice' };
  if (Array.isArray(obj['endpoints'])) out['endpoints'] = obj['endpoints'].map(endpoint);
  return out;
}

/** A v1beta1 EndpointSlice as v1 (kube's v1beta1 → internal conversion). */
export function endpointSliceV1beta1ToV1(obj: StoredObject): StoredObject {
  return convert(obj, 'v1', endpointToV1);
}

/** A v1 EndpointSlice as v1beta1 (kube's internal → v1beta1 conversion). */
export function endpointSliceV1ToV1beta1(obj: StoredObject): StoredObject {
  return convert(obj, 'v1beta1', endpointToV1beta1);
}
