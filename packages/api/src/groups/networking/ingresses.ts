/**
 * networking.k8s.io/v1 Ingresses as kube-apiserver 1.24 has them (pkg/registry/networking/ingress,
 * printIngress): short name `ing`, a `status` sub-resource, generation bumped by spec changes only,
 * status and spec each written only through their own endpoint. `pathType` has no default in v1.
 */
import { isDeepStrictEqual } from 'node:util';
import type { ResourceStrategy } from '../../catalog.js';
import { age, ageColumn, col, fieldAt, nameColumn, type TableDefinition } from '../../tables.js';
import { type StoredObject, isPlainObject } from '../../types.js';
import { validateLoadBalancerStatus } from '../core/validation/service.js';
import { defineResource } from '../define.js';
import { validateIngressCreate, validateIngressUpdate } from './validation.js';

export const NETWORKING_GROUP = 'networking.k8s.io';

const ingressStrategy: ResourceStrategy = {
  prepareForCreate(obj) {
    // Go's encoder writes the empty struct: kube answers `status: {loadBalancer: {}}`.
    obj['status'] = { loadBalancer: {} };
    obj.metadata.generation = 1;
  },
  prepareForUpdate(obj, old) {
    obj['status'] = old['status'];
    if (!isDeepStrictEqual(obj['spec'], old['spec'])) obj.metadata.generation = (old.metadata.generation ?? 0) + 1;
  },
  validate: validateIngressCreate,
  validateUpdate: validateIngressUpdate,
  validateOnUpdate: false,
};

/** kube's ingressStatusStrategy: the spec stays, the load balancer status is checked. */
const ingressStatusStrategy: ResourceStrategy = {
  prepareForUpdate(obj, old) {
    obj['spec'] = old['spec'];
  },
  validate: () => [],
  validateUpdate: (obj) => validateLoadBalancerStatus(fieldAt(obj, 'status', 'loadBalancer', 'ingress') as never, 'status.loadBalancer'),
  validateOnUpdate: false,
};

/** kube's formatHosts: the first three hosts, `*` when none. */
function formatHosts(rules: unknown): string {
  const list: string[] = [];
  const all = Array.isArray(rules) ? rules : [];
  let more = false;
  for (const r of all) {
    if (list.length === 3) more = true;
    const host = isPlainObject(r) && typeof r['host'] === 'string' ? r['host'] : '';
    if (!more && host) list.push(host);
  }
  if (list.length === 0) return '*';
  return more ? `${list.join(',')} + ${all.length - 3} more...` : list.join(',');
}

/** kube's loadBalancerStatusStringer: sorted unique IPs or hostnames, cut at 16 characters unless wide. */
export function loadBalancerAddresses(ingress: unknown): string {
  const set = new Set<string>();
  for (const i of Array.isArray(ingress) ? ingress : []) {
    if (!isPlainObject(i)) continue;
    if (typeof i['ip'] === 'string' && i['ip']) set.add(i['ip']);
    else if (typeof i['hostname'] === 'string' && i['hostname']) set.add(i['hostname']);
  }
  const r = [...set].sort().join(',');
  return r.length > 16 ? `${r.slice(0, 13)}...` : r;
}

/** kube's printIngress: NAME, CLASS, HOSTS, ADDRESS, PORTS, AGE. */
const ingressTable: TableDefinition = {
  columns: [
    nameColumn,
    col('Class', 'string', 'The IngressClass that handles this Ingress.'),
    col('Hosts', 'string', 'The hosts requests are matched against.'),
    col('Address', 'string', 'The load balancer addresses of this Ingress.'),
    col('Ports', 'string', 'The ports the Ingress opens (443 with TLS).'),
    ageColumn,
  ],
  cells: (obj: StoredObject, now) => [
    obj.metadata.name ?? '',
    typeof fieldAt(obj, 'spec', 'ingressClassName') === 'string' ? fieldAt(obj, 'spec', 'ingressClassName') : '<none>',
    formatHosts(fieldAt(obj, 'spec', 'rules')),
    loadBalancerAddresses(fieldAt(obj, 'status', 'loadBalancer', 'ingress')),
    Array.isArray(fieldAt(obj, 'spec', 'tls')) && (fieldAt(obj, 'spec', 'tls') as unknown[]).length > 0 ? '80, 443' : '80',
    age(obj, now),
  ],
};

export const ingresses = defineResource({
  group: NETWORKING_GROUP,
  version: 'v1',
  kind: 'Ingress',
  plural: 'ingresses',
  shortNames: ['ing'],
  namespaced: true,
  description: 'An Ingress routes outside HTTP traffic to Services by host and path.',
  strategy: ingressStrategy,
  subresources: [{ name: 'status', verbs: ['get', 'patch', 'update'], strategy: ingressStatusStrategy }],
  table: ingressTable,
});
