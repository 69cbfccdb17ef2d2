/**
 * API aggregation as kube-aggregator 1.24 does it: the APIServices with a `spec.service` are
 * proxied (handler_proxy.go), listed in `/apis` and served at `/apis/<group>` (handler_apis.go),
 * and their `Available` condition is kept by probing the backend (pkg/controllers/status).
 */
import { readFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isPlainObject, type StoredObject, type UserInfo } from '@plinth/api';
import { contextOf, type Handler } from '../context.js';
import { localGroupPriority } from '../controllers/apiservice-autoregister.js';
import { runInformer } from '../controllers/informer.js';
import type { Logger } from '../log.js';
import type { ResourceStore } from '../registry/store.js';
import { authProxyHeaders, type BackendTLS, proxyRequest, tlsOptions } from './proxy.js';
import { resolveService, type ServiceRef } from './resolve.js';

const AGGREGATOR_USER: UserInfo = { name: 'system:kube-aggregator', groups: ['system:masters'] };
/** kube's discovery probe timeout (5 s) and the period plinth re-checks every backend at. */
const PROBE_TIMEOUT_MS = 5_000;
const RECHECK_MS = 5_000;

export interface AggregatorOptions {
  apiservices: ResourceStore;
  services: ResourceStore;
  endpoints: ResourceStore;
  proxyClientCertFile: string;
  proxyClientKeyFile: string;
  log: Logger;
}

export interface Aggregator {
  /** The filter: aggregated paths are proxied, anything else goes on to `next`. */
  withAggregation(next: Handler): Handler;
  /** Discovery with the aggregated groups merged into `/apis` and served at `/apis/<group>`. */
  mergeDiscovery(local: { get(path: string): unknown | undefined }): { get(path: string): unknown | undefined };
  start(): void;
  stop(): void;
}

type Raw = Record<string, unknown>;
const rec = (v: unknown): Raw => (isPlainObject(v) ? v : {});
const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const num = (v: unknown): number => (typeof v === 'number' ? v : 0);

interface Remote {
  name: string;
  group: string;
  version: string;
  groupPriority: number;
  versionPriority: number;
  ref: ServiceRef;
  tls: BackendTLS;
  available: boolean;
}

function remoteOf(obj: StoredObject, client: { cert?: Buffer; key?: Buffer }): Remote | undefined {
  const spec = rec(obj['spec']);
  const svc = rec(spec['service']);
  if (!isPlainObject(spec['service'])) return undefined;
  const ref = { namespace: str(svc['namespace']), name: str(svc['name']), port: num(svc['port']) || 443 };
  const conditions = Array.isArray(rec(obj['status'])['conditions']) ? (rec(obj['status'])['conditions'] as unknown[]) : [];
  const available = conditions.some((c) => rec(c)['type'] === 'Available' && rec(c)['status'] === 'True');
  return {
    name: obj.metadata.name ?? '',
    group: str(spec['group']),
    version: str(spec['version']),
    groupPriority: num(spec['groupPriorityMinimum']),
    versionPriority: num(spec['versionPriority']),
    ref,
    tls: {
      ...(str(spec['caBundle']) ? { ca: Buffer.from(str(spec['caBundle']), 'base64') } : {}),
      insecureSkipTLSVerify: spec['insecureSkipTLSVerify'] === true,
      serverName: `${ref.name}.${ref.namespace}.svc`,
      ...(client.cert && client.key ? { clientCert: client.cert, clientKey: client.key } : {}),
    },
    available,
  };
}

/** kube's availability probe: GET /apis/<group>/<version> answered 2xx within 5 s. */
function probe(host: string, port: number, remote: Remote): Promise<string | undefined> {
  const url = `https://${host.includes(':') ? `[${host}]` : host}:${port}/apis/${remote.group}/${remote.version}`;
  return new Promise((resolve) => {
    const req = httpsRequest({ host, port, path: `/apis/${remote.group}/${remote.version}`, method: 'GET', headers: authProxyHeaders({}, AGGREGATOR_USER), ...tlsOptions(remote.tls), agent: false });
    req.setTimeout(PROBE_TIMEOUT_MS, () => req.destroy(new Error(`Get "${url}": context deadline exceeded`)));
    req.on('response', (res) => {
      res.resume();
      const code = res.statusCode ?? 0;
      resolve(code >= 200 && code < 300 ? undefined : `failing or missing response from ${url}: bad status from ${url}: ${code}`);
    });
    req.on('error', (e) => resolve(`failing or missing response from ${url}: Get "${url}": ${e.message}`));
    req.end();
  });
}

/** Creates the aggregator over the APIService, Service and Endpoints stores. */
export function createAggregator(opts: AggregatorOptions): Aggregator {
  const client = {
    ...(opts.proxyClientCertFile ? { cert: readFileSync(opts.proxyClientCertFile) } : {}),
    ...(opts.proxyClientKeyFile ? { key: readFileSync(opts.proxyClientKeyFile) } : {}),
  };
  const all = new Map<string, StoredObject>();
  const remotes = new Map<string, Remote>(); // `${group}/${version}`
  let timer: NodeJS.Timeout | undefined;
  let informer: { stop(): void } | undefined;
  let stopped = false;
  const statusStrategy = opts.apiservices.def.subresources.find((s) => s.name === 'status')?.strategy;

  const rebuild = (): void => {
    remotes.clear();
    for (const obj of all.values()) {
      const r = remoteOf(obj, client);
      if (r) remotes.set(`${r.group}/${r.version}`, r);
    }
  };

  /** kube's AvailableConditionController for one APIService: writes the condition when it changes. */
  const check = async (remote: Remote): Promise<void> => {
    const resolved = await resolveService(opts, remote.ref);
    let cond: Raw;
    if (!resolved.ok) cond = { type: 'Available', status: 'False', reason: resolved.reason, message: resolved.message };
    else {
      const failure = await probe(resolved.host, resolved.port, remote);
      cond = failure ? { type: 'Available', status: 'False', reason: 'FailedDiscoveryCheck', message: failure } : { type: 'Available', status: 'True', reason: 'Passed', message: 'all checks passed' };
    }
    const current = all.get(remote.name);
    const old = (Array.isArray(rec(current?.['status'])['conditions']) ? (rec(current?.['status'])['conditions'] as unknown[]) : []).map(rec).find((c) => c['type'] === 'Available');
    if (old && old['status'] === cond['status'] && old['reason'] === cond['reason'] && old['message'] === cond['message']) return;
    const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
    cond['lastTransitionTime'] = old && old['status'] === cond['status'] ? old['lastTransitionTime'] : now;
    await opts.apiservices.modify(
      { user: AGGREGATOR_USER, namespace: '' },
      remote.name,
      (obj) => {
        const conditions = (Array.isArray(rec(obj['status'])['conditions']) ? (rec(obj['status'])['conditions'] as unknown[]) : []).filter((c) => rec(c)['type'] !== 'Available');
        obj['status'] = { ...rec(obj['status']), conditions: [...conditions, cond] };
      },
      {},
      statusStrategy,
    );
  };

  const checkAll = async (): Promise<void> => {
    for (const r of [...remotes.values()]) {
      if (stopped) return;
      await check(r).catch((e: unknown) => opts.log.v(2, 'aggregator: availability check failed', { apiservice: r.name, error: String(e) }));
    }
  };

  const schedule = (): void => {
    if (stopped) return;
    timer = setTimeout(() => void checkAll().finally(schedule), RECHECK_MS);
    timer.unref();
  };

  const unavailable = (res: ServerResponse): void => {
    // kube's proxyError: http.Error's plain text.
    res.writeHead(503, { 'content-type': 'text/plain; charset=utf-8', 'x-content-type-options': 'nosniff' });
    res.end('service unavailable\n');
  };

  const serve = async (req: IncomingMessage, res: ServerResponse, remote: Remote): Promise<void> => {
    if (!remote.available) return unavailable(res);
    const { user, auditID } = contextOf(req);
    if (!user) {
      res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
      res.end('missing user\n');
      return;
    }
    const resolved = await resolveService(opts, remote.ref);
    if (!resolved.ok) return unavailable(res);
    const isDiscovery = (req.url ?? '').split('?')[0]!.replace(/\/+$/, '').split('/').length === 4;
    await proxyRequest(req, res, { host: resolved.host, port: resolved.port, tls: remote.tls, user, path: req.url ?? '/', ...(auditID ? { auditID } : {}), ...(isDiscovery ? { timeoutMs: PROBE_TIMEOUT_MS } : {}) });
  };

  const groupDoc = (group: string): Raw | undefined => {
    const versions = [...remotes.values()].filter((r) => r.group === group).sort((a, b) => b.versionPriority - a.versionPriority || a.version.localeCompare(b.version));
    if (versions.length === 0) return undefined;
    const gv = versions.map((r) => ({ groupVersion: `${group}/${r.version}`, version: r.version }));
    return { kind: 'APIGroup', apiVersion: 'v1', name: group, versions: gv, preferredVersion: gv[0] };
  };

  return {
    withAggregation(next) {
      return async (req, res) => {
        if (remotes.size > 0) {
          const path = contextOf(req).info.path;
          const m = /^\/apis\/([^/]+)\/([^/]+)(\/|$)/.exec(path);
          const remote = m ? remotes.get(`${m[1]}/${m[2]}`) : undefined;
          if (remote) return serve(req, res, remote);
        }
        return next(req, res);
      };
    },
    mergeDiscovery(local) {
      return {
        get(path) {
          const doc = local.get(path);
          if (remotes.size === 0) return doc;
          const p = path.replace(/\/+$/, '');
          if (p === '/apis' && isPlainObject(doc)) {
            const localGroups = (Array.isArray(doc['groups']) ? doc['groups'] : []).map(rec);
            const localNames = new Set(localGroups.map((g) => str(g['name'])));
            const entries = localGroups.map((g) => ({ doc: g, priority: localGroupPriority(str(g['name'])), name: str(g['name']), aggregated: false }));
            for (const group of new Set([...remotes.values()].map((r) => r.group))) {
              if (localNames.has(group)) continue;
              const priority = Math.max(...[...remotes.values()].filter((r) => r.group === group).map((r) => r.groupPriority));
              const { kind: _k, apiVersion: _a, ...g } = groupDoc(group)!;
              entries.push({ doc: g, priority, name: group, aggregated: true });
            }
            // kube sorts groups by priority, then by name; plinth's local order already is kube's.
            entries.sort((a, b) => b.priority - a.priority || (a.aggregated || b.aggregated ? a.name.localeCompare(b.name) : 0));
            return { ...doc, groups: entries.map((e) => e.doc) };
          }
          const g = /^\/apis\/([^/]+)$/.exec(p);
          if (!doc && g) return groupDoc(g[1]!);
          return doc;
        },
      };
    },
    start() {
      informer = runInformer({
        store: opts.apiservices,
        scope: { user: AGGREGATOR_USER, namespace: '' },
        log: opts.log,
        resyncMs: 60_000,
        onList(items) {
          all.clear();
          for (const o of items) all.set(o.metadata.name ?? '', o);
          rebuild();
        },
        onObject(type, obj) {
          if (type === 'DELETED') all.delete(obj.metadata.name ?? '');
          else all.set(obj.metadata.name ?? '', obj);
          rebuild();
          const r = remoteOf(obj, client);
          if (r && type !== 'DELETED') void check(r).catch((e: unknown) => opts.log.v(2, 'aggregator: availability check failed', { apiservice: r.name, error: String(e) }));
        },
      });
      schedule();
    },
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      informer?.stop();
    },
  };
}
