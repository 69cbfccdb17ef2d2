/**
 * kube 1.24's componentstatuses (pkg/registry/core/componentstatus): computed on each read by
 * probing each component's health endpoint, as kube-apiserver does —
 *  - `scheduler`: https://127.0.0.1:10259/healthz, `controller-manager`: https://127.0.0.1:10257/healthz
 *    (kube's fixed local ports; certificates not verified, as kube's prober);
 *  - `etcd-<i>`: `<--etcd-servers[i]>/health`, with the etcd client TLS, healthy when etcd answers
 *    `"health":"true"`.
 * kube's HTTP prober: an answer 200–399 is Healthy with the body as message; another code is
 * Unhealthy ("HTTP probe failed with statuscode: N"); no answer (refused, timeout) is Unhealthy
 * with Go's error text as message and no error. A lone plinth has no scheduler or controller
 * manager on those ports, so they read Unhealthy with the refused connection — what kube answers
 * where they are not running; they are probed all the same, so a real scheduler or controller
 * manager run beside plinth shows Healthy.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { StatusError, type Catalog, type StoredObject } from '@plinth/api';
import type { ComputedStorage, ComputedStorages } from './computed.js';
import { GO_CLIENT_TIMEOUT, goClientError, goDialError } from './go-net-errors.js';

/** kube's probeTimeOut. */
const PROBE_TIMEOUT_MS = 20_000;
/** kube's prober reads at most 10 KiB of the body. */
const MAX_BODY = 10 * 1024;

/** One component to probe (kube's componentstatus.Server). */
export interface ComponentServer {
  url: string;
  /** TLS client material (etcd's); certificates are not verified without a CA. */
  tls?: { ca?: Buffer; cert?: Buffer; key?: Buffer };
  /** A check of the body of a successful answer (kube's ValidatorFn): an error message, or undefined. */
  validate?(body: string): string | undefined;
}

export interface ComponentStatusOptions {
  /** --etcd-servers (the embedded etcd's endpoint when none are given). */
  etcdServers: readonly string[];
  etcdTLS?: { ca?: Buffer; cert?: Buffer; key?: Buffer };
  /** Overrides of the servers (tests). */
  servers?: ReadonlyMap<string, ComponentServer>;
}

/** kube's EtcdHealthCheck. */
function etcdHealthCheck(body: string): string | undefined {
  let health: unknown;
  try {
    health = (JSON.parse(body) as { health?: unknown }).health;
  } catch (e) {
    return (e as Error).message;
  }
  return health === 'true' ? undefined : `Unhealthy health check status: ${typeof health === 'string' ? health : ''}`;
}

/** The components kube-apiserver 1.24 reports, in its order. */
export function componentServers(opts: ComponentStatusOptions): Map<string, ComponentServer> {
  if (opts.servers) return new Map(opts.servers);
  const out = new Map<string, ComponentServer>([
    ['scheduler', { url: 'https://127.0.0.1:10259/healthz' }],
    ['controller-manager', { url: 'https://127.0.0.1:10257/healthz' }],
  ]);
  opts.etcdServers.forEach((server, i) => {
    const base = server.replace(/\/+$/, '');
    out.set(`etcd-${i}`, { url: `${base}/health`, ...(opts.etcdTLS ? { tls: opts.etcdTLS } : {}), validate: etcdHealthCheck });
  });
  return out;
}

interface ProbeResult {
  status: 'True' | 'False' | 'Unknown';
  message: string;
  error: string;
}

/** kube's http prober and DoServerCheck. */
function probe(server: ComponentServer): Promise<ProbeResult> {
  return new Promise((resolve) => {
    const url = new URL(server.url);
    const hostPort = url.host;
    const https = url.protocol === 'https:';
    let done = false;
    const finish = (r: ProbeResult): void => {
      if (done) return;
      done = true;
      resolve(r);
    };
    const onResponse = (res: IncomingMessage): void => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        if (size < MAX_BODY) chunks.push(c);
        size += c.length;
      });
      res.on('end', () => {
        const body = Buffer.concat(chunks).subarray(0, MAX_BODY).toString('utf8');
        const code = res.statusCode ?? 0;
        if (code < 200 || code >= 400) return finish({ status: 'False', message: `HTTP probe failed with statuscode: ${code}`, error: '' });
        const invalid = server.validate?.(body);
        finish(invalid === undefined ? { status: 'True', message: body, error: '' } : { status: 'False', message: body, error: invalid });
      });
      res.on('error', (e) => finish({ status: 'False', message: goClientError('GET', server.url, goDialError(e, hostPort)), error: '' }));
    };
    const opts = {
      method: 'GET',
      timeout: PROBE_TIMEOUT_MS,
      headers: { 'user-agent': 'kube-probe/1.24', accept: '*/*' },
      ...(https ? { rejectUnauthorized: !!server.tls?.ca, ...(server.tls ?? {}) } : {}),
    };
    const req = https ? httpsRequest(url, opts, onResponse) : httpRequest(url, opts, onResponse);
    req.on('timeout', () => {
      req.destroy();
      finish({ status: 'False', message: goClientError('GET', server.url, GO_CLIENT_TIMEOUT), error: '' });
    });
    req.on('error', (e) => finish({ status: 'False', message: goClientError('GET', server.url, goDialError(e, hostPort)), error: '' }));
    req.end();
  });
}

function componentStatus(name: string, r: ProbeResult): StoredObject {
  const condition: Record<string, string> = { type: 'Healthy', status: r.status };
  if (r.message) condition['message'] = r.message;
  if (r.error) condition['error'] = r.error;
  return { apiVersion: 'v1', kind: 'ComponentStatus', metadata: { name }, conditions: [condition] };
}

/** The componentstatuses storage: every read probes (concurrently for a list). */
export function createComponentStatusStorage(opts: ComponentStatusOptions): ComputedStorage {
  const servers = componentServers(opts);
  return {
    async get(_ctx, name) {
      const server = servers.get(name);
      // kube answers a plain error here (not a Status): a 500 with its text and no reason.
      if (!server) throw new StatusError({ code: 500, reason: '', message: `Component not found: ${name}` });
      return componentStatus(name, await probe(server));
    },
    async list() {
      const names = [...servers.keys()];
      const results = await Promise.all(names.map((n) => probe(servers.get(n)!)));
      return names.map((n, i) => componentStatus(n, results[i]!));
    },
  };
}

/** The computed storages of core/v1 (componentstatuses), for the catalog's definition. */
export function createCoreComputedStorages(catalog: Catalog, etcd: { endpoints: readonly string[]; tls?: { ca?: Buffer; cert?: Buffer; key?: Buffer } }): ComputedStorages {
  const def = catalog.lookup('', 'v1', 'componentstatuses');
  if (!def) return new Map();
  return new Map([[def, createComponentStatusStorage({ etcdServers: etcd.endpoints, ...(etcd.tls ? { etcdTLS: etcd.tls } : {}) })]]);
}

