/**
 * nodes/<name>/proxy/<path>: kube 1.24's node ProxyREST over node.ResourceLocation
 * (pkg/registry/core/node/strategy.go, rest/proxy.go, pkg/kubelet/client GetConnectionInfo):
 *  - the name may carry a scheme and port (`https:n1:10250`, `n1:8080`: kube's SplitSchemeNamePort;
 *    anything else is 400 `invalid node request "<id>"`);
 *  - the node's address is its first of the preferred types (kube's --kubelet-preferred-address-types,
 *    default Hostname, InternalDNS, InternalIP, ExternalDNS, ExternalIP); none is kube's 500
 *    `no preferred addresses found; known addresses: [...]`;
 *  - every address the host resolves to must be proxyable (a global unicast IP: not loopback,
 *    link-local, multicast or unspecified), else 400 `address not allowed`;
 *  - without a port, or with the kubelet's (status.daemonEndpoints.kubeletEndpoint.Port, default
 *    10250), the request goes to https://<address>:<port>/<path> (certificates checked against the
 *    system roots, no client certificate: plinth has no --kubelet-client-certificate yet); another
 *    port goes to <scheme or http>://<address>:<port>/<path>;
 *  - the client's Authorization header is never forwarded (kube drops it once the request is
 *    authenticated), nor hop-by-hop headers; the query is passed on;
 *  - no answer within the dial/header bound is kube's 503 `error trying to reach service: <cause>`.
 * Upgrades (exec through the kubelet's API) are not proxied.
 */
import { DEFAULT_KUBELET_ADDRESS_TYPES } from './kubelet-client.js';
import { isGlobalUnicast, splitSchemeNamePort } from '../proxy-addresses.js';
import { request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { StatusError, badRequest, type Catalog, type StoredObject, type SubresourceDefinition } from '@plinth/api';
import type { ConnectRequest, Connecter } from './connect.js';
import { GO_CLIENT_TIMEOUT, goDialError } from './go-net-errors.js';

/** kube's --kubelet-port default, for a node that reports no kubelet endpoint. */
export const DEFAULT_KUBELET_PORT = 10250;
/** How long the kubelet has to answer with headers (kube's kubelet client dials with a 30 s timeout). */
const KUBELET_TIMEOUT_MS = 30_000;

/** Headers never passed on (hop-by-hop, and the client's own credentials). */
const DROPPED_HEADERS = new Set(['authorization', 'connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'host']);

export interface NodeProxyOptions {
  preferredAddressTypes?: readonly string[];
  /** For tests: the system roots otherwise. */
  kubeletCA?: Buffer;
}

interface NodeAddress {
  type: string;
  address: string;
}

function addressesOf(node: StoredObject): NodeAddress[] {
  const list = (node['status'] as { addresses?: unknown } | undefined)?.addresses;
  if (!Array.isArray(list)) return [];
  return list.map((a: { type?: unknown; address?: unknown }) => ({ type: typeof a?.type === 'string' ? a.type : '', address: typeof a?.address === 'string' ? a.address : '' }));
}

/** kube's nodeutil.GetPreferredNodeAddress; a plain error (500) when none fits. */
function preferredAddress(node: StoredObject, types: readonly string[]): string {
  const addresses = addressesOf(node);
  for (const t of types) {
    const found = addresses.find((a) => a.type === t);
    if (found) return found.address;
  }
  throw new StatusError({ code: 500, reason: '', message: `no preferred addresses found; known addresses: [${addresses.map((a) => `{${a.type} ${a.address}}`).join(' ')}]` });
}

function kubeletPort(node: StoredObject): number {
  const port = (node['status'] as { daemonEndpoints?: { kubeletEndpoint?: { Port?: unknown } } } | undefined)?.daemonEndpoints?.kubeletEndpoint?.Port;
  return typeof port === 'number' && port > 0 ? port : DEFAULT_KUBELET_PORT;
}

/** kube's isProxyableHostname: every address of the host is proxyable. */
async function checkProxyable(host: string): Promise<void> {
  let ips: string[];
  if (isIP(host)) ips = [host];
  else {
    try {
      ips = (await lookup(host, { all: true })).map((a) => a.address);
    } catch {
      throw new StatusError({ code: 500, reason: '', message: `lookup ${host}: no such host` });
    }
  }
  if (ips.length === 0) throw badRequest('no addresses for hostname');
  if (!ips.every(isGlobalUnicast)) throw badRequest('address not allowed');
}

const unreachable = (cause: string): StatusError => new StatusError({ code: 503, reason: 'ServiceUnavailable', message: `error trying to reach service: ${cause}` });

function forwardedHeaders(headers: IncomingHttpHeaders): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const [k, v] of Object.entries(headers)) if (v !== undefined && !DROPPED_HEADERS.has(k) && !k.startsWith('impersonate-')) out[k] = v;
  return out;
}

/** The nodes/proxy connecter. */
export function createNodeProxyConnecter(opts: NodeProxyOptions = {}): (r: ConnectRequest) => Promise<void> {
  const types = opts.preferredAddressTypes ?? DEFAULT_KUBELET_ADDRESS_TYPES;
  return async (r) => {
    const id = splitSchemeNamePort(r.name);
    if (!id) throw badRequest(`invalid node request ${JSON.stringify(r.name)}`);
    const node = await r.store.get({ user: r.user, namespace: '' }, id.name);
    const host = preferredAddress(node, types);
    await checkProxyable(host);
    const port = kubeletPort(node);
    const toKubelet = id.port === '' || id.port === String(port);
    const scheme = toKubelet ? 'https' : id.scheme || 'http';
    const hostPort = `${isIP(host) === 6 ? `[${host}]` : host}:${toKubelet ? port : id.port}`;
    const search = r.req.url?.includes('?') ? r.req.url.slice(r.req.url.indexOf('?')) : '';
    const path = `/${r.path.split('/').map(encodeURIComponent).join('/')}${search}`;
    const headers = forwardedHeaders(r.req.headers);
    await new Promise<void>((resolve, reject) => {
      let answered = false;
      const onResponse = (up: IncomingMessage): void => {
        answered = true;
        const out: OutgoingHttpHeaders = {};
        for (const [k, v] of Object.entries(up.headers)) if (v !== undefined && !DROPPED_HEADERS.has(k)) out[k] = v;
        r.res.writeHead(up.statusCode ?? 502, out);
        up.pipe(r.res);
        up.on('end', resolve);
        up.on('error', () => {
          r.res.destroy();
          resolve();
        });
      };
      const options = { method: r.req.method ?? 'GET', headers, timeout: KUBELET_TIMEOUT_MS, ...(scheme === 'https' && opts.kubeletCA ? { ca: opts.kubeletCA } : {}) };
      const url = `${scheme}://${hostPort}${path}`;
      const up = scheme === 'https' ? httpsRequest(url, options, onResponse) : httpRequest(url, options, onResponse);
      up.on('timeout', () => {
        if (!answered) reject(unreachable(GO_CLIENT_TIMEOUT));
        up.destroy();
      });
      up.on('error', (e) => {
        if (!answered) reject(unreachable(goDialError(e, hostPort)));
        else r.res.destroy();
      });
      // The client going away ends the upstream request too.
      r.res.on('close', () => up.destroy());
      r.req.pipe(up);
    });
  };
}

/** The nodes/proxy connecter, keyed by the catalog's sub-resource (server.ts's connecters map). */
export function createNodeConnecters(catalog: Catalog, opts: NodeProxyOptions = {}): Array<[SubresourceDefinition, Connecter]> {
  const proxy = catalog.lookup('', 'v1', 'nodes')?.subresources.find((s) => s.name === 'proxy');
  return proxy ? [[proxy, createNodeProxyConnecter(opts)]] : [];
}
