/**
 * Outbound calls of the pod connecters: to a kubelet (pods/log, exec, attach, portforward) and to
 * a pod (pods/proxy), each bounded in time, with Go's error texts for what kube answers when the
 * dial fails (`dial tcp 10.0.0.5:10250: connect: connection refused`). Nothing of the client's
 * request that identifies it (Authorization, impersonation headers) is passed on: kube's
 * authentication filter removes the Authorization header before any handler runs.
 */
import { goDialError } from './go-net-errors.js';
import { request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { readFileSync } from 'node:fs';

/** kube-apiserver's KubeletClientConfig, from the --kubelet-* flags. */
export interface KubeletClientConfig {
  /** --kubelet-timeout in ms (kube's default 5 s): the dial and the wait for response headers. */
  timeoutMs: number;
  /** --kubelet-preferred-address-types, in order. */
  preferredAddressTypes: readonly string[];
  /** --kubelet-client-certificate / --kubelet-client-key (PEM paths; '' for none). */
  clientCertificate: string;
  clientKey: string;
  /** --kubelet-certificate-authority ('' : the kubelet's certificate is not verified, as kube does without a CA). */
  certificateAuthority: string;
  /** The kubelet port used when the node reports none (kube's ports.KubeletPort). */
  defaultPort: number;
}

/** kube's default --kubelet-preferred-address-types. */
export const DEFAULT_KUBELET_ADDRESS_TYPES = ['Hostname', 'InternalDNS', 'InternalIP', 'ExternalDNS', 'ExternalIP'];
/** kube's ports.KubeletPort. */
export const KUBELET_PORT = 10250;

/** The TLS material of kubelet calls, read once. */
export interface KubeletTLS {
  cert?: Buffer;
  key?: Buffer;
  ca?: Buffer;
  rejectUnauthorized: boolean;
}

export function kubeletTLS(c: KubeletClientConfig): KubeletTLS {
  const tls: KubeletTLS = { rejectUnauthorized: c.certificateAuthority !== '' };
  if (c.clientCertificate) tls.cert = readFileSync(c.clientCertificate);
  if (c.clientKey) tls.key = readFileSync(c.clientKey);
  if (c.certificateAuthority) tls.ca = readFileSync(c.certificateAuthority);
  return tls;
}

/** `host:port` as Go's net.JoinHostPort writes it (IPv6 in brackets). */
export function joinHostPort(host: string, port: string | number): string {
  return isIP(host) === 6 ? `[${host}]:${port}` : `${host}:${port}`;
}

/** Headers that identify the client to plinth, or belong to one hop: never sent on. */
const DROPPED = new Set(['authorization', 'proxy-authorization', 'connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'host', 'content-length']);

/** The client's headers fit to send on (see DROPPED; every `Impersonate-*` header too). */
export function forwardedHeaders(h: IncomingHttpHeaders, remoteAddress: string | undefined): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  const hop = new Set((typeof h.connection === 'string' ? h.connection : '').split(',').map((s) => s.trim().toLowerCase()));
  for (const [k, v] of Object.entries(h)) {
    if (v === undefined || DROPPED.has(k) || hop.has(k) || k.startsWith('impersonate-')) continue;
    out[k] = v;
  }
  if (remoteAddress) {
    const prior = typeof h['x-forwarded-for'] === 'string' ? `${h['x-forwarded-for']}, ` : '';
    out['x-forwarded-for'] = `${prior}${remoteAddress.replace(/^::ffff:/, '')}`;
  }
  return out;
}

/** A failed outbound call: `message` is the Go text kube's answer carries. */
export class OutboundError extends Error {}

export interface OutboundRequest {
  url: URL;
  method: string;
  headers: OutgoingHttpHeaders;
  /** Bounds the dial and the wait for the response headers. */
  timeoutMs: number;
  tls?: KubeletTLS;
  /** The request body to stream (a proxied request); none when absent. */
  body?: IncomingMessage;
  /** Aborts the call (the client went away). */
  signal?: AbortSignal;
}

/**
 * Sends one request and resolves with the response once its headers arrive. Redirects are never
 * followed. Rejects with an OutboundError carrying Go's dial or timeout text; a call that goes
 * past `timeoutMs` before its headers is destroyed.
 */
export function sendOutbound(r: OutboundRequest): Promise<IncomingMessage> {
  const hostPort = joinHostPort(r.url.hostname.replace(/^\[|\]$/g, ''), r.url.port || (r.url.protocol === 'https:' ? 443 : 80));
  return new Promise((resolve, reject) => {
    const https = r.url.protocol === 'https:';
    const opts = {
      method: r.method,
      headers: r.headers,
      agent: false as const,
      ...(r.signal ? { signal: r.signal } : {}),
      ...(https && r.tls ? { cert: r.tls.cert, key: r.tls.key, ca: r.tls.ca, rejectUnauthorized: r.tls.rejectUnauthorized } : {}),
      ...(https && !r.tls ? { rejectUnauthorized: false } : {}),
    };
    let connected = false;
    let done = false;
    const req = (https ? httpsRequest : httpRequest)(r.url, opts, (res) => {
      done = true;
      clearTimeout(timer);
      resolve(res);
    });
    const timer = setTimeout(() => {
      if (done) return;
      done = true;
      const message = connected ? 'net/http: timeout awaiting response headers' : `dial tcp ${hostPort}: i/o timeout`;
      req.destroy();
      reject(new OutboundError(message));
    }, r.timeoutMs);
    req.on('socket', (s) => s.once(https ? 'secureConnect' : 'connect', () => (connected = true)));
    req.on('error', (err) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      reject(new OutboundError(goDialError(err, hostPort)));
    });
    if (r.body) r.body.pipe(req);
    else req.end();
  });
}

/**
 * Dials a kubelet for an upgraded stream (exec, attach, portforward), bounded by `timeoutMs`.
 * Rejects with kube's `error dialing backend: <Go dial error>`.
 */
export function dialKubelet(host: string, port: number, timeoutMs: number, tls: KubeletTLS): Promise<TLSSocket> {
  const hostPort = joinHostPort(host, port);
  return new Promise((resolve, reject) => {
    let done = false;
    const socket = tlsConnect({ host, port, cert: tls.cert, key: tls.key, ca: tls.ca, rejectUnauthorized: tls.rejectUnauthorized, ...(isIP(host) ? {} : { servername: host }) });
    const timer = setTimeout(() => {
      if (done) return;
      done = true;
      socket.destroy();
      reject(new OutboundError(`error dialing backend: dial tcp ${hostPort}: i/o timeout`));
    }, timeoutMs);
    socket.once('secureConnect', () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve(socket);
    });
    socket.once('error', (err) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      reject(new OutboundError(`error dialing backend: ${goDialError(err, hostPort)}`));
    });
  });
}
