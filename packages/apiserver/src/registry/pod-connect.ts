/**
 * The connecters of pods/log, exec, attach, portforward and proxy, as kube-apiserver 1.24 answers
 * them (pkg/registry/core/pod/rest/{log,subresources}.go, pod/strategy.go LogLocation,
 * streamLocation, PortForwardLocation, ResourceLocation; kubelet/client GetConnectionInfo):
 * options from the query, the pod, its container, its node, then the kubelet or the pod itself.
 * Every outbound call is bounded (--kubelet-timeout; 30 s dials for pods/proxy as kube's proxy
 * transport), and a failed one is answered as kube answers it (500 with Go's dial error text).
 */
import { isGlobalUnicast, splitSchemeNamePort } from '../proxy-addresses.js';
import { isIP } from 'node:net';
import {
  StatusError,
  badRequest,
  invalid,
  notFound,
  pods,
  validatePodLogOptions,
  type Catalog,
  type PodLogOptionsInput,
  type ResourceDefinition,
  type StoredObject,
  type SubresourceDefinition,
} from '@plinth/api';
import type { Connecter, ConnectRequest, Connecters } from './connect.js';
import type { ResourceStore } from './store.js';
import { OutboundError, dialKubelet, forwardedHeaders, joinHostPort, kubeletTLS, sendOutbound, type KubeletClientConfig, type KubeletTLS } from './kubelet-client.js';

export interface PodConnectDeps {
  catalog: Catalog;
  stores: ReadonlyMap<ResourceDefinition, ResourceStore>;
  kubelet: KubeletClientConfig;
}

/** kube's proxy transport dial timeout (pods/proxy). */
const POD_PROXY_TIMEOUT_MS = 30_000;

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const arr = (v: unknown): Obj[] => (Array.isArray(v) ? v.map(obj) : []);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** A plain error as kube's ErrorToAPIStatus answers it: 500, no reason, the error's text. */
function unknownError(message: string): StatusError {
  return new StatusError({ code: 500, reason: '', message });
}

// Query options, decoded as kube's parameter codec does (Go's strconv texts on bad values).

function boolParam(q: URLSearchParams, name: string): boolean {
  const v = q.get(name);
  if (v === null) return false;
  if (['1', 't', 'T', 'true', 'TRUE', 'True'].includes(v)) return true;
  if (['0', 'f', 'F', 'false', 'FALSE', 'False', ''].includes(v)) return false;
  throw badRequest(`strconv.ParseBool: parsing ${JSON.stringify(v)}: invalid syntax`);
}

function intParam(q: URLSearchParams, name: string): number | undefined {
  const v = q.get(name);
  if (v === null || v === '') return undefined;
  if (!/^[+-]?\d+$/.test(v)) throw badRequest(`strconv.ParseInt: parsing ${JSON.stringify(v)}: invalid syntax`);
  const n = Number(v);
  if (!Number.isSafeInteger(n)) throw badRequest(`strconv.ParseInt: parsing ${JSON.stringify(v)}: value out of range`);
  return n;
}

/** The pod named in the request, or kube's 404. */
async function getPod(r: ConnectRequest, name: string): Promise<StoredObject> {
  return r.store.get({ user: r.user, namespace: r.namespace }, name);
}

const containerNames = (list: unknown): string => arr(list).map((c) => str(c['name'])).join(' ');

/** kube's podHasContainerWithName: app, init or ephemeral containers. */
function hasContainer(pod: StoredObject, name: string): boolean {
  const spec = obj(pod['spec']);
  return ['containers', 'initContainers', 'ephemeralContainers'].some((k) => arr(spec[k]).some((c) => str(c['name']) === name));
}

/** kube's validateContainer / streamLocation's container choice. */
function chooseContainer(pod: StoredObject, container: string, name: string): string {
  const spec = obj(pod['spec']);
  if (container !== '') {
    if (!hasContainer(pod, container)) throw badRequest(`container ${container} is not valid for pod ${name}`);
    return container;
  }
  const containers = arr(spec['containers']);
  if (containers.length === 1) return str(containers[0]!['name']);
  if (containers.length === 0) throw badRequest(`a container name must be specified for pod ${name}`);
  let msg = `a container name must be specified for pod ${name}, choose one of: [${containerNames(containers)}]`;
  const inits = containerNames(spec['initContainers']);
  if (inits !== '') msg += ` or one of the init containers: [${inits}]`;
  throw badRequest(msg);
}

interface KubeletLocation {
  host: string;
  port: number;
}

/** kube's NodeConnectionInfoGetter.GetConnectionInfo: the node's preferred address and kubelet port. */
async function kubeletOf(deps: PodConnectDeps, r: ConnectRequest, nodeName: string): Promise<KubeletLocation> {
  const nodesDef = deps.catalog.lookup('', 'v1', 'nodes');
  const nodes = nodesDef && deps.stores.get(nodesDef);
  if (!nodes) throw notFound({ group: '', resource: 'nodes' }, nodeName);
  const node = await nodes.get({ user: r.user, namespace: '' }, nodeName);
  const status = obj(node['status']);
  const addresses = arr(status['addresses']);
  let host = '';
  for (const t of deps.kubelet.preferredAddressTypes) {
    const a = addresses.find((x) => str(x['type']) === t);
    if (a) {
      host = str(a['address']);
      break;
    }
  }
  if (!host) throw unknownError(`no preferred addresses found; known addresses: [${addresses.map((a) => `{${str(a['type'])} ${str(a['address'])}}`).join(' ')}]`);
  const port = Number(obj(obj(status['daemonEndpoints'])['kubeletEndpoint'])['port'] ?? 0);
  return { host, port: port > 0 ? port : deps.kubelet.defaultPort };
}

/** The pod's node name ('' when unscheduled). */
const nodeNameOf = (pod: StoredObject): string => str(obj(pod['spec'])['nodeName']);

/** An Upgrade request (SPDY or WebSocket), which exec, attach and portforward require. */
function isUpgrade(r: ConnectRequest): boolean {
  const connection = str(r.req.headers.connection).toLowerCase();
  return connection.split(',').some((t) => t.trim() === 'upgrade') && !!r.req.headers.upgrade;
}

/** Copies an outbound response to the client, ending it when either side goes. */
function pipeResponse(r: ConnectRequest, res: import('node:http').IncomingMessage, contentType?: string): void {
  const headers: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(res.headers)) {
    if (v === undefined || ['connection', 'keep-alive', 'transfer-encoding'].includes(k)) continue;
    headers[k] = v;
  }
  if (contentType) headers['content-type'] = contentType;
  r.res.writeHead(res.statusCode ?? 502, headers);
  res.pipe(r.res);
  r.res.once('close', () => res.destroy());
}

/** pods/log: kube's LogREST.Get over LogLocation. */
function logConnecter(deps: PodConnectDeps, tls: () => KubeletTLS): Connecter {
  return async (r) => {
    const q = r.query;
    const opts: PodLogOptionsInput = {};
    const tailLines = intParam(q, 'tailLines');
    const limitBytes = intParam(q, 'limitBytes');
    const sinceSeconds = intParam(q, 'sinceSeconds');
    const sinceTime = q.get('sinceTime');
    if (tailLines !== undefined) opts.tailLines = tailLines;
    if (limitBytes !== undefined) opts.limitBytes = limitBytes;
    if (sinceSeconds !== undefined) opts.sinceSeconds = sinceSeconds;
    if (sinceTime) {
      if (Number.isNaN(Date.parse(sinceTime))) throw badRequest(`parsing time ${JSON.stringify(sinceTime)} as "2006-01-02T15:04:05Z07:00": cannot parse ${JSON.stringify(sinceTime)} as "2006"`);
      opts.sinceTime = sinceTime;
    }
    const follow = boolParam(q, 'follow');
    const previous = boolParam(q, 'previous');
    const timestamps = boolParam(q, 'timestamps');
    boolParam(q, 'insecureSkipTLSVerifyBackend');
    const errs = validatePodLogOptions(opts);
    if (errs.length > 0) throw invalid({ group: '', kind: 'PodLogOptions' }, r.name, errs);
    const pod = await getPod(r, r.name);
    const container = chooseContainer(pod, q.get('container') ?? '', r.name);
    const nodeName = nodeNameOf(pod);
    // No node, no location: kube's LocationStreamer answers an empty body.
    if (nodeName === '') {
      r.res.writeHead(200, { 'content-type': 'text/plain' });
      r.res.end();
      return;
    }
    const kubelet = await kubeletOf(deps, r, nodeName);
    const params = new URLSearchParams();
    if (follow) params.set('follow', 'true');
    if (previous) params.set('previous', 'true');
    if (timestamps) params.set('timestamps', 'true');
    if (opts.sinceSeconds !== undefined) params.set('sinceSeconds', String(opts.sinceSeconds));
    if (opts.sinceTime) params.set('sinceTime', new Date(Date.parse(opts.sinceTime)).toISOString().replace(/\.\d{3}Z$/, 'Z'));
    if (opts.tailLines !== undefined) params.set('tailLines', String(opts.tailLines));
    if (opts.limitBytes !== undefined) params.set('limitBytes', String(opts.limitBytes));
    const qs = params.toString();
    const url = new URL(`https://${joinHostPort(kubelet.host, kubelet.port)}/containerLogs/${encodeURIComponent(r.namespace)}/${encodeURIComponent(r.name)}/${encodeURIComponent(container)}${qs ? `?${qs}` : ''}`);
    const abort = new AbortController();
    r.res.once('close', () => abort.abort());
    let res;
    try {
      res = await sendOutbound({ url, method: 'GET', headers: {}, timeoutMs: deps.kubelet.timeoutMs, tls: tls(), signal: abort.signal });
    } catch (e) {
      if (e instanceof OutboundError) throw unknownError(`Get ${JSON.stringify(url.toString())}: ${e.message}`);
      throw e;
    }
    const code = res.statusCode ?? 500;
    if (code < 200 || code >= 300) {
      // kube's GenericHttpResponseChecker: the kubelet's own answer as the error's text.
      const body = await readSome(res, 4096);
      throw new StatusError({ code, reason: '', message: body.trim() || `the server responded with the status code ${code} but did not return more information (get pods/log ${r.name})` });
    }
    pipeResponse(r, res, 'text/plain');
  };
}

function readSome(res: import('node:http').IncomingMessage, limit: number): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let n = 0;
    res.on('data', (c: Buffer) => {
      if (n < limit) chunks.push(c);
      n += c.length;
      if (n >= limit) res.destroy();
    });
    res.once('close', () => resolve(Buffer.concat(chunks).subarray(0, limit).toString('utf8')));
    res.once('error', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}

/**
 * exec, attach and portforward: the pod, the container (not for portforward), the host, the
 * node; then kube's upgrade-aware proxy, which refuses a request that is not an upgrade and
 * answers a failed dial with "error dialing backend".
 */
function streamConnecter(deps: PodConnectDeps, tls: () => KubeletTLS, kind: 'exec' | 'attach' | 'portforward'): Connecter {
  return async (r) => {
    const q = r.query;
    for (const b of ['stdin', 'stdout', 'stderr', 'tty']) if (kind !== 'portforward') boolParam(q, b);
    const pod = await getPod(r, r.name);
    if (kind !== 'portforward') chooseContainer(pod, q.get('container') ?? '', r.name);
    const nodeName = nodeNameOf(pod);
    if (nodeName === '') throw badRequest(`pod ${r.name} does not have a host assigned`);
    const kubelet = await kubeletOf(deps, r, nodeName);
    if (!isUpgrade(r)) throw badRequest('Upgrade request required');
    let socket;
    try {
      socket = await dialKubelet(kubelet.host, kubelet.port, deps.kubelet.timeoutMs, tls());
    } catch (e) {
      if (e instanceof OutboundError) throw unknownError(e.message);
      throw e;
    }
    // The kubelet answered: relaying the upgraded stream is not implemented yet (README).
    socket.destroy();
    throw new StatusError({ code: 502, reason: '', message: `error dialing backend: plinth does not relay ${kind} streams to kubelets yet` });
  };
}

/** Each segment escaped for a URL path (the route unescaped them). */
const escapePath = (p: string): string => p.split('/').map((s) => encodeURIComponent(s).replace(/%3A/gi, ':').replace(/%40/g, '@')).join('/');

/** pods/proxy: kube's ProxyREST over ResourceLocation, with a bounded dial and no redirect followed. */
function proxyConnecter(): Connecter {
  return async (r) => {
    const parts = splitSchemeNamePort(r.name);
    if (!parts) throw badRequest(`invalid pod request ${JSON.stringify(r.name)}`);
    const pod = await getPod(r, parts.name);
    let port = parts.port;
    if (port === '') {
      for (const c of arr(obj(pod['spec'])['containers'])) {
        const ports = arr(c['ports']);
        if (ports.length > 0) {
          port = String(ports[0]!['containerPort'] ?? '');
          break;
        }
      }
    }
    const status = obj(pod['status']);
    const podIP = str(arr(status['podIPs'])[0]?.['ip']) || str(status['podIP']);
    // Only a pod's own routable address: never loopback, link-local, multicast or unspecified.
    if (!isGlobalUnicast(podIP)) throw badRequest('address not allowed');
    const scheme = parts.scheme || 'http';
    const host = port === '' ? (isIP(podIP) === 6 ? `[${podIP}]` : podIP) : joinHostPort(podIP, port);
    const search = r.req.url?.includes('?') ? r.req.url.slice(r.req.url.indexOf('?')) : '';
    const url = new URL(`${scheme}://${host}/${escapePath(r.path)}${search}`);
    const abort = new AbortController();
    r.res.once('close', () => abort.abort());
    const method = r.req.method ?? 'GET';
    const hasBody = !['GET', 'HEAD', 'DELETE', 'OPTIONS'].includes(method) || r.req.headers['content-length'] !== undefined || r.req.headers['transfer-encoding'] !== undefined;
    const headers = forwardedHeaders(r.req.headers, r.req.socket.remoteAddress);
    if (r.req.headers['content-length'] !== undefined) headers['content-length'] = r.req.headers['content-length'];
    let res;
    try {
      res = await sendOutbound({ url, method, headers, timeoutMs: POD_PROXY_TIMEOUT_MS, signal: abort.signal, ...(hasBody ? { body: r.req } : {}) });
    } catch (e) {
      if (e instanceof OutboundError) throw unknownError(e.message);
      throw e;
    }
    pipeResponse(r, res);
  };
}

/** The connecter of each connect sub-resource of pods. */
export function createPodConnecters(deps: PodConnectDeps): Connecters {
  let material: KubeletTLS | undefined;
  const tls = (): KubeletTLS => (material ??= kubeletTLS(deps.kubelet));
  const sub = (name: string): SubresourceDefinition => {
    const s = pods.subresources.find((x) => x.name === name);
    if (!s) throw new Error(`pods has no ${name} sub-resource`);
    return s;
  };
  return new Map<SubresourceDefinition, Connecter>([
    [sub('log'), logConnecter(deps, tls)],
    [sub('exec'), streamConnecter(deps, tls, 'exec')],
    [sub('attach'), streamConnecter(deps, tls, 'attach')],
    [sub('portforward'), streamConnecter(deps, tls, 'portforward')],
    [sub('proxy'), proxyConnecter()],
  ]);
}
