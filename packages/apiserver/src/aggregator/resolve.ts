/**
 * Where an APIService's Service is served (kube-aggregator's service resolvers and the reasons of
 * its availability controller, pkg/controllers/status). plinth runs no kube-proxy, so a cluster IP
 * leads nowhere from the apiserver: it always routes to one of the Service's endpoints, which is
 * what kube does with `--enable-aggregator-routing=true`.
 */
import { isNotFound, isPlainObject, type StoredObject, type UserInfo } from '@plinth/api';
import type { ResourceStore } from '../registry/store.js';

const CONTROLLER_USER: UserInfo = { name: 'system:kube-aggregator', groups: ['system:masters'] };

export interface ServiceRef {
  namespace: string;
  name: string;
  port: number;
}

/** A reachable address, or kube's reason and message why there is none. */
export type Resolution = { ok: true; host: string; port: number } | { ok: false; reason: string; message: string };

type Raw = Record<string, unknown>;
const list = (v: unknown): Raw[] => (Array.isArray(v) ? v.filter(isPlainObject) : []);

async function getOrUndefined(store: ResourceStore, namespace: string, name: string): Promise<StoredObject | undefined> {
  try {
    return await store.get({ user: CONTROLLER_USER, namespace }, name);
  } catch (e) {
    if (isNotFound(e)) return undefined;
    throw e;
  }
}

/** Resolves a Service reference to one endpoint address (random among the ready ones, as kube). */
export async function resolveService(deps: { services: ResourceStore; endpoints: ResourceStore }, ref: ServiceRef): Promise<Resolution> {
  const where = `service/${ref.name} in ${JSON.stringify(ref.namespace)}`;
  const svc = await getOrUndefined(deps.services, ref.namespace, ref.name);
  if (!svc) return { ok: false, reason: 'ServiceNotFound', message: `${where} is not present` };
  const spec = isPlainObject(svc['spec']) ? svc['spec'] : {};
  if (spec['type'] === 'ExternalName' && typeof spec['externalName'] === 'string') return { ok: true, host: spec['externalName'], port: ref.port };
  const svcPort = list(spec['ports']).find((p) => p['port'] === ref.port);
  if (!svcPort) return { ok: false, reason: 'ServicePortError', message: `${where} is not listening on port ${ref.port}` };
  const portName = typeof svcPort['name'] === 'string' ? svcPort['name'] : '';
  const ep = await getOrUndefined(deps.endpoints, ref.namespace, ref.name);
  if (!ep) return { ok: false, reason: 'EndpointsNotFound', message: `cannot find endpoints for ${where}` };
  for (const subset of list(ep['subsets'])) {
    const port = list(subset['ports']).find((p) => (typeof p['name'] === 'string' ? p['name'] : '') === portName);
    const addresses = list(subset['addresses']).map((a) => a['ip']).filter((ip): ip is string => typeof ip === 'string');
    if (port && typeof port['port'] === 'number' && addresses.length > 0) {
      return { ok: true, host: addresses[Math.floor(Math.random() * addresses.length)]!, port: port['port'] };
    }
  }
  return { ok: false, reason: 'MissingEndpoints', message: `endpoints for ${where} have no addresses with port name ${JSON.stringify(portName)}` };
}

/**
 * A webhook's service resolver (kube's webhook ServiceResolver over apiserver/pkg/util/proxy):
 * the Service's endpoint, as for APIServices; a failure reads as kube's resolver error.
 */
export function conversionServiceResolver(deps: { services: ResourceStore; endpoints: ResourceStore }): (ref: ServiceRef) => Promise<{ host: string; port: number }> {
  return async (ref) => {
    const r = await resolveService(deps, ref);
    if (r.ok) return { host: r.host, port: r.port };
    switch (r.reason) {
      case 'ServiceNotFound':
        throw new Error(`service ${JSON.stringify(ref.name)} not found`);
      case 'ServicePortError':
        throw new Error(`no service port ${ref.port} found for service ${JSON.stringify(ref.name)}`);
      default:
        throw new Error(`no endpoints available for service ${JSON.stringify(ref.name)}`);
    }
  };
}
