/**
 * core/v1 Services as kube-apiserver 1.24 serves them (pkg/registry/core/service): short name
 * `svc`, category `all`, every verb, create on update, the deleted object answered on DELETE
 * (kube's ReturnDeletedObject); `status` (the load balancer's, spec kept) and `proxy` (a connect
 * sub-resource, answered by the apiserver's service proxy). Field selectors: kube's defaults
 * (1.24 registers no Service field label conversion). Table: kube's printService.
 *
 * Cluster IPs and node ports are allocated by the apiserver's Service REST hooks
 * (apiserver/src/services), which run between mutating admission and this strategy, as kube's
 * BeginCreate/BeginUpdate/AfterDelete do.
 *
 * This module also re-exports the ported Service/Endpoints/Binding rules.
 */
import type { ResourceStrategy } from '../../catalog.js';
import { age, ageColumn, col, formatLabels, nameColumn, type TableDefinition } from '../../tables.js';
import type { StoredObject } from '../../types.js';
import { defineResource } from '../define.js';
import { defaultService } from './defaults/service.js';
import { prepareServiceForCreate, prepareServiceForUpdate, prepareServiceStatusForUpdate } from './service-strategy.js';
import { type Service, type ServicePort, ServiceType } from './service-types.js';
import { nameIsDNS1035Label, validateServiceCreate, validateServiceStatusUpdate, validateServiceUpdate } from './validation/service.js';

export * from './service-types.js';
export * from './service-strategy.js';
export * from './defaults/service.js';
export * from './validation/net.js';
export * from './validation/service.js';
export * from './validation/endpoints.js';
export * from './validation/binding.js';

const asService = (obj: StoredObject): Service => obj as Service;

/** kube's svcStrategy (defaults: SetDefaults_Service on every decoded body). */
export const serviceStrategy: ResourceStrategy = {
  defaults: (obj) => defaultService(asService(obj)),
  prepareForCreate: (obj) => prepareServiceForCreate(asService(obj)),
  prepareForUpdate: (obj, old) => prepareServiceForUpdate(asService(obj), asService(old)),
  validate: (obj) => validateServiceCreate(asService(obj)),
  // kube's ValidateServiceUpdate runs the update-only rules, then ValidateService itself.
  validateOnUpdate: false,
  validateUpdate: (obj, old) => validateServiceUpdate(asService(obj), asService(old)),
};

/** kube's serviceStatusStrategy: the spec stays as stored; only the load balancer status is checked. */
export const serviceStatusStrategy: ResourceStrategy = {
  prepareForUpdate: (obj, old) => prepareServiceStatusForUpdate(asService(obj), asService(old)),
  validate: () => [],
  validateOnUpdate: false,
  validateUpdate: (obj) => validateServiceStatusUpdate(asService(obj)),
};

/** kube's loadBalancerStatusStringer; server-side tables are printed wide, so never clipped. */
function loadBalancerIngress(svc: Service): string {
  const set = new Set<string>();
  for (const ing of svc.status?.loadBalancer?.ingress ?? []) {
    if (ing.ip) set.add(ing.ip);
    else if (ing.hostname) set.add(ing.hostname);
  }
  return [...set].sort().join(',');
}

/** kube's getServiceExternalIP. */
export function serviceExternalIP(svc: Service): string {
  const spec = svc.spec ?? {};
  const external = spec.externalIPs ?? [];
  switch (spec.type) {
    case ServiceType.ClusterIP:
    case ServiceType.NodePort:
      return external.length > 0 ? external.join(',') : '<none>';
    case ServiceType.LoadBalancer: {
      const lb = loadBalancerIngress(svc);
      if (external.length > 0) return [...(lb ? lb.split(',') : []), ...external].join(',');
      return lb || '<pending>';
    }
    case ServiceType.ExternalName:
      return spec.externalName ?? '';
  }
  return '<unknown>';
}

/** kube's makePortString: `port/protocol`, or `port:nodePort/protocol`. */
export function servicePortString(ports: ServicePort[] | undefined): string {
  return (ports ?? []).map((p) => (p.nodePort ? `${p.port ?? 0}:${p.nodePort}/${p.protocol ?? ''}` : `${p.port ?? 0}/${p.protocol ?? ''}`)).join(',');
}

/** kube's printService: NAME TYPE CLUSTER-IP EXTERNAL-IP PORT(S) AGE, SELECTOR with -o wide. */
const serviceTable: TableDefinition = {
  columns: [
    nameColumn,
    col('Type', 'string', 'How the service is exposed.'),
    col('Cluster-IP', 'string', "The service's cluster IP."),
    col('External-IP', 'string', 'Where the service is reached from outside the cluster.'),
    col('Port(s)', 'string', "The service's ports."),
    ageColumn,
    col('Selector', 'string', 'The labels of the pods the service sends to.', { priority: 1 }),
  ],
  cells: (obj, now) => {
    const svc = asService(obj);
    const ips = svc.spec?.clusterIPs ?? [];
    return [
      obj.metadata.name ?? '',
      svc.spec?.type ?? '',
      ips.length > 0 ? ips[0] : '<none>',
      serviceExternalIP(svc),
      servicePortString(svc.spec?.ports) || '<none>',
      age(obj, now),
      formatLabels(svc.spec?.selector),
    ];
  },
};

export const services = defineResource({
  group: '',
  version: 'v1',
  kind: 'Service',
  plural: 'services',
  shortNames: ['svc'],
  categories: ['all'],
  namespaced: true,
  description: 'A Service is a name, a virtual IP and ports in front of a set of endpoints.',
  nameValidator: nameIsDNS1035Label,
  allowCreateOnUpdate: true,
  returnDeletedObject: true,
  storagePath: 'services/specs',
  subresources: [
    { name: 'proxy', verbs: ['create', 'delete', 'get', 'patch', 'update'], connect: { path: true } },
    { name: 'status', verbs: ['get', 'patch', 'update'], strategy: serviceStatusStrategy },
  ],
  strategy: serviceStrategy,
  table: serviceTable,
});
