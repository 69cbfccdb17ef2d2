/**
 * `services/<id>/proxy/<path>` as kube-apiserver 1.24 answers it (pkg/registry/core/service
 * ProxyREST + the Service REST's ResourceLocation, apimachinery util/proxy UpgradeAwareHandler and
 * Transport):
 *
 * - `<id>` is `name`, `name:port` or `scheme:name:port` (scheme http or https; 400 `invalid
 *   service request` otherwise). A numeric port is the Service's port of that number (503 `no
 *   service port N found for service "x"` when it has none), else the port's name.
 * - The Endpoints of the Service (404 when there are none) give the address: a subset with ready
 *   addresses and a port of that name, an address that is a pod of the namespace whose
 *   status.podIPs has the IP (kube proxies to pods only). None: 503 `no endpoints available for
 *   service`. An address in a range no proxy may reach (unspecified, loopback, link-local) is
 *   refused (400 `address not allowed`, as kube's pod proxy), whatever put it there.
 * - The request goes to `scheme://ip:port/<path>` (the path cleaned, so `..` stays inside) with
 *   its query, without the client's credentials (Authorization, Proxy-Authorization and the
 *   impersonation headers never leave), X-Forwarded-Uri set; HTTPS backends are not verified
 *   (kube's proxy transport skips verification: it dials IPs). A backend that cannot be reached
 *   or stalls for 30 s is a 503 `error trying to reach service: ...`. Redirects are never
 *   followed; a Location on the backend's own host is rewritten under the proxy path, as kube's
 *   Transport does. A GET of the bare `.../proxy` is a 301 to `.../proxy/`.
 *
 * Upgrades (WebSocket through a service) are not proxied: the Upgrade header is dropped.
 */
import { isGlobalUnicast, splitSchemeNamePort } from '../proxy-addresses.js';
import { request as httpRequest, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { posix } from 'node:path';
import { type ResourceDefinition, type SubresourceDefinition, StatusError, badRequest, serviceUnavailable, type Endpoints, type Service, type StoredObject } from '@plinth/api';
import type { Connecter, ConnectRequest } from '../registry/connect.js';
import type { ResourceStore } from '../registry/store.js';

/** How long the backend may stay silent (connect, headers, body) before the proxy gives up. */
export const SERVICE_PROXY_TIMEOUT_MS = 30_000;

/** Hop-by-hop headers (Go's httputil.ReverseProxy drops them) and the client's credentials. */
const DROPPED_REQUEST_HEADERS = new Set(['connection', 'proxy-connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'authorization', 'host']);
const DROPPED_RESPONSE_HEADERS = new Set(['connection', 'proxy-connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade']);

/** Whether a proxy may dial `ip` (see isGlobalUnicast). */
export function isProxyableIP(ip: string): boolean {
  return isGlobalUnicast(ip);
}

const random = (n: number): number => Math.floor(Math.random() * n);

interface Location {
  scheme: 'http' | 'https';
  ip: string;
  port: number;
}

export interface ServiceProxyDeps {
  /** The registry stores (Endpoints and, once served, Pods are read through them). */
  stores: ReadonlyMap<ResourceDefinition, ResourceStore>;
  timeoutMs?: number;
}

function storeOf(deps: ServiceProxyDeps, plural: string): ResourceStore | undefined {
  for (const [d, s] of deps.stores) if (d.group === '' && d.version === 'v1' && d.plural === plural) return s;
  return undefined;
}

/** kube's isValidAddress: the address is a pod of this namespace that has the IP. */
async function isPodAddress(r: ConnectRequest, deps: ServiceProxyDeps, addr: { ip?: string; targetRef?: { kind?: string; namespace?: string; name?: string } }): Promise<boolean> {
  const ref = addr.targetRef;
  if (!ref || ref.namespace !== r.namespace || !ref.name) return false;
  const pods = storeOf(deps, 'pods');
  if (!pods) return false;
  let pod: StoredObject;
  try {
    pod = await pods.get({ user: r.user, namespace: r.namespace }, ref.name);
  } catch {
    return false;
  }
  const podIPs = ((pod['status'] as { podIPs?: Array<{ ip?: string }> } | undefined)?.podIPs ?? []).map((p) => p.ip);
  return podIPs.includes(addr.ip);
}

/** kube's ResourceLocation for services. */
async function resourceLocation(r: ConnectRequest, deps: ServiceProxyDeps): Promise<Location> {
  const id = r.name;
  const parsed = splitSchemeNamePort(id);
  if (!parsed) throw badRequest(`invalid service request "${id}"`);
  const { scheme, name } = parsed;
  let portName = parsed.port;
  const scope = { user: r.user, namespace: r.namespace };
  if (/^[+-]?\d+$/.test(portName)) {
    const num = Number(portName);
    const svc = (await r.store.get(scope, name)) as Service;
    const found = (svc.spec?.ports ?? []).find((p) => p.port === num);
    if (!found) throw serviceUnavailable(`no service port ${num} found for service "${name}"`);
    portName = found.name ?? '';
  }
  const endpointsStore = storeOf(deps, 'endpoints');
  if (!endpointsStore) throw serviceUnavailable(`no endpoints available for service "${name}"`);
  const eps = (await endpointsStore.get(scope, name)) as Endpoints;
  const subsets = eps.subsets ?? [];
  if (subsets.length === 0) throw serviceUnavailable(`no endpoints available for service "${name}"`);
  const ssSeed = random(subsets.length);
  for (let i = 0; i < subsets.length; i++) {
    const ss = subsets[(ssSeed + i) % subsets.length]!;
    const addresses = ss.addresses ?? [];
    if (addresses.length === 0) continue;
    for (const port of ss.ports ?? []) {
      if ((port.name ?? '') !== portName) continue;
      const addrSeed = random(addresses.length);
      for (let t = 0; t < addresses.length; t++) {
        const addr = addresses[(addrSeed + t) % addresses.length]!;
        if (!(await isPodAddress(r, deps, addr))) continue;
        const ip = addr.ip ?? '';
        if (!isProxyableIP(ip)) throw badRequest('address not allowed');
        return { scheme: scheme === 'https' ? 'https' : 'http', ip, port: port.port ?? 0 };
      }
    }
  }
  throw serviceUnavailable(`no endpoints available for service "${id}"`);
}

/** The path after the proxy: cleaned (kube's path.Join), a trailing slash kept. */
function backendPath(subpath: string, requestPath: string): string {
  let p = subpath === '' ? '' : posix.join('/', subpath);
  if (p === '/' && subpath === '') p = '';
  if (!p.endsWith('/') && requestPath.endsWith('/')) p += '/';
  return p;
}

const escapePath = (p: string): string => p.split('/').map((seg) => encodeURIComponent(seg).replace(/%40/g, '@').replace(/%3A/gi, ':')).join('/');

/** kube's Transport.rewriteURL for a Location header of the backend: its own host goes under the proxy path. */
export function rewriteLocation(value: string, backendHost: string, requestHost: string | undefined, pathPrepend: string): string {
  let u: URL;
  const absolute = /^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(value) || value.startsWith('//');
  try {
    u = new URL(value, `http://${backendHost}`);
  } catch {
    throw new StatusError({ code: 500, reason: 'InternalError', message: `Internal error occurred: error trying to parse Location header: ${value}` });
  }
  // Go keeps the port as written (URL would drop a default one).
  const host = absolute ? (/^(?:[a-zA-Z][a-zA-Z0-9+.-]*:)?\/\/([^/?#]*)/.exec(value)?.[1] ?? u.host) : '';
  const differentHost = host !== '' && host !== backendHost && host !== requestHost;
  const relative = !absolute && !value.startsWith('/');
  if (differentHost || relative) return value;
  const path = u.pathname;
  const rest = `${u.search}${u.hash}`;
  if (path.startsWith(pathPrepend)) return `${path}${rest}`;
  let joined = posix.join(pathPrepend, path);
  if (path.endsWith('/') && !joined.endsWith('/')) joined += '/';
  return `${joined}${rest}`;
}

/** The services/proxy connecter. */
export function createServiceProxyConnecter(deps: ServiceProxyDeps): Connecter {
  const timeoutMs = deps.timeoutMs ?? SERVICE_PROXY_TIMEOUT_MS;
  return async (r) => {
    const loc = await resourceLocation(r, deps);
    const rawUrl = r.req.url ?? '';
    const q = rawUrl.indexOf('?');
    const requestPath = q >= 0 ? rawUrl.slice(0, q) : rawUrl;
    const rawQuery = q >= 0 ? rawUrl.slice(q + 1) : '';
    const path = backendPath(r.path, requestPath);
    const method = r.req.method ?? 'GET';
    if (path === '' && (method === 'GET' || method === 'HEAD')) {
      r.res.writeHead(301, { location: `${requestPath}/${rawQuery ? `?${rawQuery}` : ''}` });
      r.res.end();
      return;
    }
    const pathPrepend = path === '' ? requestPath : requestPath.slice(0, requestPath.length - path.length) || requestPath;
    const headers: OutgoingHttpHeaders = {};
    const connectionListed = new Set(String(r.req.headers['connection'] ?? '').toLowerCase().split(',').map((h) => h.trim()).filter(Boolean));
    for (const [k, v] of Object.entries(r.req.headers as IncomingHttpHeaders)) {
      if (v === undefined || DROPPED_REQUEST_HEADERS.has(k) || connectionListed.has(k) || k.startsWith('impersonate-')) continue;
      headers[k] = v;
    }
    // kube's Transport: the path the client asked for.
    headers['x-forwarded-uri'] = requestPath;
    const remote = r.req.socket.remoteAddress;
    if (remote) headers['x-forwarded-for'] = headers['x-forwarded-for'] ? `${String(headers['x-forwarded-for'])}, ${remote}` : remote;
    const host = loc.ip.includes(':') ? `[${loc.ip}]:${loc.port}` : `${loc.ip}:${loc.port}`;
    headers['host'] = host;
    const send = loc.scheme === 'https' ? httpsRequest : httpRequest;
    await new Promise<void>((resolve, reject) => {
      let answered = false;
      const upstream = send({
        host: loc.ip,
        port: loc.port,
        method,
        path: `${escapePath(path || '/')}${rawQuery ? `?${rawQuery}` : ''}`,
        headers,
        timeout: timeoutMs,
        // kube's proxy transport dials IPs and skips verification.
        ...(loc.scheme === 'https' ? { rejectUnauthorized: false, servername: '' } : {}),
        agent: false,
      });
      const fail = (e: Error): void => {
        upstream.destroy();
        if (answered) {
          r.res.destroy();
          resolve();
        } else {
          answered = true;
          reject(serviceUnavailable(`error trying to reach service: ${e.message}`));
        }
      };
      upstream.on('timeout', () => fail(new Error(`dial tcp ${host}: i/o timeout`)));
      upstream.on('error', fail);
      upstream.on('response', (up) => {
        answered = true;
        const out: OutgoingHttpHeaders = {};
        for (const [k, v] of Object.entries(up.headers)) {
          if (v === undefined || DROPPED_RESPONSE_HEADERS.has(k)) continue;
          out[k] = v;
        }
        const location = up.headers['location'];
        if (typeof location === 'string' && location !== '') {
          try {
            out['location'] = rewriteLocation(location, host, r.req.headers.host, pathPrepend);
          } catch (e) {
            up.destroy();
            reject(e);
            return;
          }
        }
        r.res.writeHead(up.statusCode ?? 502, out);
        up.pipe(r.res);
        up.on('error', () => r.res.destroy());
        r.res.on('close', () => {
          up.destroy();
          resolve();
        });
        up.on('end', () => resolve());
      });
      r.req.on('aborted', () => upstream.destroy());
      r.req.pipe(upstream);
    });
  };
}

/** The connecter entries of this file for server.ts's map: services/proxy of core/v1. */
export function serviceConnecters(deps: ServiceProxyDeps): Array<[SubresourceDefinition, Connecter]> {
  const out: Array<[SubresourceDefinition, Connecter]> = [];
  for (const d of deps.stores.keys()) {
    if (d.group !== '' || d.plural !== 'services') continue;
    const sub = d.subresources.find((s) => s.name === 'proxy' && s.connect);
    if (sub) out.push([sub, createServiceProxyConnecter(deps)]);
  }
  return out;
}
