/**
 * kube-aggregator's proxy handler (pkg/apiserver/handler_proxy.go): a request for an aggregated
 * group/version goes to the backend over TLS verified with the APIService's caBundle (server name
 * `<service>.<namespace>.svc`), presenting `--proxy-client-cert-file`, with the authenticated user in
 * kube's fixed front-proxy headers (client-go transport.SetAuthProxyHeaders).
 */
import { request as httpsRequest, type RequestOptions } from 'node:https';
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { UserInfo } from '@plinth/api';

/** The TLS material of one backend. */
export interface BackendTLS {
  ca?: Buffer;
  insecureSkipTLSVerify: boolean;
  serverName: string;
  clientCert?: Buffer;
  clientKey?: Buffer;
}

/** Hop-by-hop headers and the caller's own credentials never reach the backend. */
const DROPPED = new Set(['authorization', 'connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer', 'host']);

/** kube's SetAuthProxyHeaders: X-Remote-User, one X-Remote-Group per group, X-Remote-Extra-<escaped key>. */
export function authProxyHeaders(incoming: IncomingMessage['headers'], user: UserInfo): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const [k, v] of Object.entries(incoming)) {
    if (v === undefined || DROPPED.has(k) || k.startsWith('impersonate-') || k.startsWith('x-remote-')) continue;
    out[k] = v;
  }
  out['x-remote-user'] = user.name;
  if (user.groups && user.groups.length > 0) out['x-remote-group'] = [...user.groups];
  for (const [key, values] of Object.entries(user.extra ?? {})) out[`x-remote-extra-${encodeURIComponent(key)}`] = [...values];
  return out;
}

/** TLS options of a backend request. */
export function tlsOptions(tls: BackendTLS): RequestOptions {
  return {
    servername: tls.serverName,
    rejectUnauthorized: !tls.insecureSkipTLSVerify,
    ...(tls.ca ? { ca: tls.ca } : {}),
    ...(tls.clientCert && tls.clientKey ? { cert: tls.clientCert, key: tls.clientKey } : {}),
  };
}

/** Forwards `req` to host:port and streams the answer back; resolves when the answer is sent. */
export function proxyRequest(req: IncomingMessage, res: ServerResponse, target: { host: string; port: number; tls: BackendTLS; user: UserInfo; path: string; auditID?: string; timeoutMs?: number }): Promise<void> {
  return new Promise((resolve) => {
    const headers = authProxyHeaders(req.headers, target.user);
    // kube passes the request's audit ID on, so both servers' audit events share it.
    if (target.auditID) headers['audit-id'] = target.auditID;
    const upstream = httpsRequest({ host: target.host, port: target.port, method: req.method, path: target.path, headers, ...tlsOptions(target.tls), agent: false });
    // A client that goes away ends the backend request too (watches included).
    res.on('close', () => {
      if (!upstream.destroyed) upstream.destroy();
    });
    if (target.timeoutMs) upstream.setTimeout(target.timeoutMs, () => upstream.destroy(new Error('timeout')));
    upstream.on('response', (answer) => {
      const headers: OutgoingHttpHeaders = {};
      for (const [k, v] of Object.entries(answer.headers)) if (v !== undefined && !DROPPED.has(k)) headers[k] = v;
      res.writeHead(answer.statusCode ?? 502, headers);
      answer.pipe(res);
      answer.on('end', resolve);
      answer.on('error', () => {
        res.destroy();
        resolve();
      });
    });
    upstream.on('error', (e) => {
      // kube's upgrade-aware proxy answers 503 when it cannot reach the backend.
      if (!res.headersSent) {
        res.writeHead(503, { 'content-type': 'text/plain; charset=utf-8', 'x-content-type-options': 'nosniff' });
        res.end(`Error trying to reach service: '${e.message}'\n`);
      } else res.destroy();
      resolve();
    });
    req.pipe(upstream);
  });
}
