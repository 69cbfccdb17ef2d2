/**
 * core/v1 Endpoints as kube-apiserver 1.24 serves them (pkg/registry/core/endpoint): short name
 * `ep`, every verb, create on update, stored under kube's key `services/endpoints`; ports
 * default to TCP; kube's ValidateEndpoints on create and update. Table: kube's printEndpoints.
 */
import type { ResourceStrategy } from '../../catalog.js';
import { age, ageColumn, col, nameColumn, type TableDefinition } from '../../tables.js';
import type { StoredObject } from '../../types.js';
import { defineResource } from '../define.js';
import { defaultEndpoints } from './defaults/service.js';
import type { Endpoints } from './service-types.js';
import { validateEndpoints } from './validation/endpoints.js';

const asEndpoints = (obj: StoredObject): Endpoints => obj as Endpoints;

export const endpointsStrategy: ResourceStrategy = {
  defaults: (obj) => defaultEndpoints(asEndpoints(obj)),
  validate: (obj) => validateEndpoints(asEndpoints(obj)),
};

/** kube's net.JoinHostPort. */
const hostPort = (ip: string, port: number): string => (ip.includes(':') ? `[${ip}]:${port}` : `${ip}:${port}`);

/** How many addresses the table shows before `+ N more...` (kube's formatEndpoints). */
const MAX_SHOWN = 3;

/** kube's formatEndpoints with every port: `ip:port,...`, at most 3, then ` + N more...`. */
export function formatEndpoints(ep: Endpoints): string {
  const subsets = ep.subsets ?? [];
  if (subsets.length === 0) return '<none>';
  const list: string[] = [];
  let count = 0;
  let more = false;
  for (const ss of subsets) {
    const addresses = ss.addresses ?? [];
    const ports = ss.ports ?? [];
    // A headless service may have no ports: the addresses alone.
    const pairs: Array<number | undefined> = ports.length === 0 ? [undefined] : ports.map((p) => p.port ?? 0);
    for (const port of pairs) {
      count += addresses.length;
      for (const a of addresses) {
        if (list.length === MAX_SHOWN) {
          more = true;
          break;
        }
        list.push(port === undefined ? (a.ip ?? '') : hostPort(a.ip ?? '', port));
      }
    }
  }
  const text = list.join(',');
  return more ? `${text} + ${count - MAX_SHOWN} more...` : text;
}

/** kube's printEndpoints: NAME ENDPOINTS AGE. */
const endpointsTable: TableDefinition = {
  columns: [nameColumn, col('Endpoints', 'string', 'The ready addresses and ports.'), ageColumn],
  cells: (obj, now) => [obj.metadata.name ?? '', formatEndpoints(asEndpoints(obj)), age(obj, now)],
};

export const endpoints = defineResource({
  group: '',
  version: 'v1',
  kind: 'Endpoints',
  plural: 'endpoints',
  shortNames: ['ep'],
  namespaced: true,
  description: 'Endpoints are the addresses and ports that implement a Service.',
  allowCreateOnUpdate: true,
  storagePath: 'services/endpoints',
  strategy: endpointsStrategy,
  table: endpointsTable,
});
