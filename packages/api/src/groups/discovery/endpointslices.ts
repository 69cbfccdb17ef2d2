/**
 * discovery.k8s.io EndpointSlices as kube-apiserver 1.24 has them (pkg/registry/discovery/
 * endpointslice, pkg/apis/discovery/{v1,v1beta1} defaults and conversion, printEndpointSlice):
 * namespaced, no short name, no status, every verb; served as v1 (the storage version) and the
 * deprecated v1beta1 (conversion.ts). A v1 write cannot set `deprecatedTopology` (kube's
 * dropTopologyOnV1); v1beta1 keeps writing it through `topology`.
 */
import { deprecationWarning, type ResourceDefinition, type ResourceStrategy } from '../../catalog.js';
import { age, ageColumn, col, nameColumn, type TableDefinition } from '../../tables.js';
import { type StoredObject, isPlainObject } from '../../types.js';
import { isDNS1123Subdomain } from '../../validation.js';
import { defineResource } from '../define.js';
import { DISCOVERY_GROUP, LABEL_HOSTNAME, endpointSliceV1beta1ToV1, endpointSliceV1ToV1beta1 } from './conversion.js';
import { validateEndpointSlice, validateEndpointSliceUpdate } from './validation.js';

/** kube's discovery.LabelServiceName. */
export const LABEL_SERVICE_NAME = 'kubernetes.io/service-name';

/**
 * kube's SetDefaults_EndpointPort (both versions): name "" and protocol TCP. An endpoint's
 * `conditions` is a Go struct, not a pointer: kube always writes it, `{}` when empty.
 */
function setDefaults(obj: StoredObject): void {
  for (const ep of Array.isArray(obj['endpoints']) ? obj['endpoints'] : []) {
    if (isPlainObject(ep) && !isPlainObject(ep['conditions'])) ep['conditions'] = {};
  }
  if (!Array.isArray(obj['ports'])) return;
  for (const p of obj['ports']) {
    if (!isPlainObject(p)) continue;
    if (p['name'] === undefined || p['name'] === null) p['name'] = '';
    if (p['protocol'] === undefined || p['protocol'] === null) p['protocol'] = 'TCP';
  }
}

/**
 * kube's Semantic.DeepEqual over decoded JSON: absent, null, empty lists and empty maps are
 * alike (nil and empty slices and maps are equal; omitted pointers are nil); scalars compare exactly.
 */
function semanticEqual(a: unknown, b: unknown): boolean {
  const empty = (v: unknown): boolean => v === undefined || v === null || (Array.isArray(v) ? v.length === 0 : isPlainObject(v) && Object.keys(v).length === 0);
  if (a === b || (empty(a) && empty(b))) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => semanticEqual(x, b[i]));
  if (isPlainObject(a) && isPlainObject(b)) return [...new Set([...Object.keys(a), ...Object.keys(b)])].every((k) => semanticEqual(a[k], b[k]));
  return false;
}

/** Everything but TypeMeta and ObjectMeta (what kube compares for the generation). */
function body(obj: StoredObject): Record<string, unknown> {
  const { apiVersion: _a, kind: _k, metadata: _m, ...rest } = obj;
  return rest;
}

/** kube's PrepareForUpdate generation rule: anything besides metadata changed, or the labels. */
function nextGeneration(obj: StoredObject, old: StoredObject, now: StoredObject, before: StoredObject): number {
  const gen = old.metadata.generation ?? 0;
  return semanticEqual(body(now), body(before)) && semanticEqual(obj.metadata.labels, old.metadata.labels) ? gen : gen + 1;
}

/** The node names the old slice's `deprecatedTopology` held (kube's getDeprecatedTopologyNodeNames). */
function deprecatedNodeNames(old: StoredObject | undefined): Set<string> {
  const names = new Set<string>();
  for (const ep of Array.isArray(old?.['endpoints']) ? old['endpoints'] : []) {
    const t = isPlainObject(ep) ? ep['deprecatedTopology'] : undefined;
    const n = isPlainObject(t) ? t[LABEL_HOSTNAME] : undefined;
    if (typeof n === 'string' && n !== '') names.add(n);
  }
  return names;
}

/**
 * kube's dropTopologyOnV1: a v1 write that changes the endpoints loses `deprecatedTopology`; a
 * host name the old slice held there becomes `nodeName` when none is set, so partial updates
 * through v1 keep the node of endpoints written through v1beta1.
 */
function dropTopologyOnV1(obj: StoredObject, old?: StoredObject): void {
  if (old && semanticEqual(old['endpoints'], obj['endpoints'])) return;
  if (!Array.isArray(obj['endpoints'])) return;
  const prev = deprecatedNodeNames(old);
  obj['endpoints'] = obj['endpoints'].map((e: unknown) => {
    if (!isPlainObject(e)) return e;
    const { deprecatedTopology, ...ep } = e;
    const host = isPlainObject(deprecatedTopology) ? deprecatedTopology[LABEL_HOSTNAME] : undefined;
    if ((ep['nodeName'] === undefined || ep['nodeName'] === null) && typeof host === 'string' && prev.has(host) && isDNS1123Subdomain(host).length === 0) ep['nodeName'] = host;
    return ep;
  });
}

/** kube's endpointSliceStrategy for requests through v1. */
const v1Strategy: ResourceStrategy = {
  defaults: setDefaults,
  prepareForCreate(obj) {
    obj.metadata.generation = 1;
    dropTopologyOnV1(obj);
  },
  prepareForUpdate(obj, old) {
    obj.metadata.generation = nextGeneration(obj, old, obj, old);
    dropTopologyOnV1(obj, old);
  },
  validate: validateEndpointSlice,
  validateUpdate: validateEndpointSliceUpdate,
};

/** The same strategy for v1beta1 requests: kube's rules over the converted (internal) object, topology kept. */
const v1beta1Strategy: ResourceStrategy = {
  defaults: setDefaults,
  prepareForCreate(obj) {
    obj.metadata.generation = 1;
  },
  prepareForUpdate(obj, old) {
    obj.metadata.generation = nextGeneration(obj, old, endpointSliceV1beta1ToV1(obj), endpointSliceV1beta1ToV1(old));
  },
  validate: (obj) => validateEndpointSlice(endpointSliceV1beta1ToV1(obj)),
  validateUpdate: (obj, old) => validateEndpointSliceUpdate(obj, old),
};

/** At most this many ports or addresses are shown, then ` + N more...` (kube's listWithMoreString). */
const MAX_SHOWN = 3;

function listWithMore(items: string[], count: number): string {
  if (count > MAX_SHOWN) return `${items.join(',')} + ${count - MAX_SHOWN} more...`;
  return items.length === 0 ? '<unset>' : items.join(',');
}

/** kube's formatDiscoveryPorts: the port number, else its name, else `*`. */
export function formatDiscoveryPorts(ports: unknown): string {
  const all = Array.isArray(ports) ? ports : [];
  const shown = all.slice(0, MAX_SHOWN).map((p: unknown) => {
    const port = isPlainObject(p) ? p : {};
    if (typeof port['port'] === 'number' || typeof port['port'] === 'bigint') return String(port['port']);
    return typeof port['name'] === 'string' ? port['name'] : '*';
  });
  return listWithMore(shown, all.length);
}

/** kube's formatDiscoveryEndpoints: the addresses of every endpoint in order. */
export function formatDiscoveryEndpoints(endpoints: unknown): string {
  const addresses: string[] = [];
  for (const ep of Array.isArray(endpoints) ? endpoints : []) {
    const a = isPlainObject(ep) ? ep['addresses'] : undefined;
    if (Array.isArray(a)) for (const x of a) addresses.push(String(x));
  }
  return listWithMore(addresses.slice(0, MAX_SHOWN), addresses.length);
}

/** kube's printEndpointSlice: NAME, ADDRESSTYPE, PORTS, ENDPOINTS, AGE. */
const endpointSliceTable: TableDefinition = {
  columns: [
    nameColumn,
    col('AddressType', 'string', 'The type of address the endpoints of this slice carry.'),
    col('Ports', 'string', 'The network ports the endpoints of this slice expose.'),
    col('Endpoints', 'string', 'The addresses of the endpoints of this slice.'),
    ageColumn,
  ],
  cells: (obj, now) => [obj.metadata.name ?? '', typeof obj['addressType'] === 'string' ? obj['addressType'] : '', formatDiscoveryPorts(obj['ports']), formatDiscoveryEndpoints(obj['endpoints']), age(obj, now)],
};

function endpointSlicesVersion(version: 'v1' | 'v1beta1', storage?: ResourceDefinition): ResourceDefinition {
  return defineResource({
    group: DISCOVERY_GROUP,
    version,
    kind: 'EndpointSlice',
    plural: 'endpointslices',
    namespaced: true,
    description: 'An EndpointSlice lists some of the network endpoints of a service, all of one address type.',
    strategy: version === 'v1' ? v1Strategy : v1beta1Strategy,
    table: endpointSliceTable,
    ...(storage ? { conversion: { storage, toStorage: endpointSliceV1beta1ToV1, fromStorage: endpointSliceV1ToV1beta1 } } : {}),
    // kube names discovery.k8s.io/v1 as the replacement (the type's prerelease-lifecycle tags).
    ...(version === 'v1beta1' ? { deprecation: deprecationWarning({ group: DISCOVERY_GROUP, version, kind: 'EndpointSlice' }, '1.21', '1.25', { group: DISCOVERY_GROUP, version: 'v1', kind: 'EndpointSlice' }) } : {}),
  });
}

/** discovery.k8s.io/v1 endpointslices (the storage version). */
export const endpointslicesV1 = endpointSlicesVersion('v1');
/** discovery.k8s.io/v1beta1 endpointslices (deprecated in 1.21, removed in 1.25). */
export const endpointslicesV1beta1 = endpointSlicesVersion('v1beta1', endpointslicesV1);
