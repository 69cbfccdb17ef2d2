/**
 * POSTs an AdmissionReview to a webhook over HTTPS, as kube's webhook ClientManager and rest
 * client do: the url (or a service reference) plus `?timeout=<n>s`, the caBundle (else the
 * system roots) as trust, timeoutSeconds as the deadline. Failures read as Go's client errors
 * (`Post "<url>": ...`), since kube puts them in the message clients see.
 */
import { request as httpsRequest } from 'node:https';
import { stringifyJson } from '@plinth/api';
import type { Webhook } from './config.js';
import { CallingWebhookError } from './review.js';

/** The address kube posts to. A service reference names `<service>.<namespace>.svc`. */
export function webhookURL(hook: Webhook): string {
  const timeout = `?timeout=${hook.timeoutSeconds}s`;
  const svc = hook.clientConfig.service;
  if (svc) {
    const path = svc.path ? (svc.path.startsWith('/') ? svc.path : `/${svc.path}`) : '/';
    return `https://${svc.name}.${svc.namespace}.svc:${svc.port ?? 443}${path}${timeout}`;
  }
  const url = new URL(hook.clientConfig.url ?? '');
  return `${url.protocol}//${url.host}${url.pathname || '/'}${timeout}`;
}

/**
 * Resolves a service reference to an address. plinth has no Services (nor endpoints), so every
 * reference fails as kube's ClusterIP resolver fails for a Service it cannot find.
 */
function resolveService(svc: NonNullable<Webhook['clientConfig']['service']>): never {
  throw new Error(`service "${svc.name}" not found`);
}

/** Go's rendering of a dial/TLS failure. */
function describe(err: NodeJS.ErrnoException & { address?: string; port?: number }, host: string): string {
  switch (err.code) {
    case 'ECONNREFUSED':
      return `dial tcp ${err.address && err.port ? `${err.address}:${err.port}` : host}: connect: connection refused`;
    case 'ECONNRESET':
      return 'EOF';
    case 'ENOTFOUND':
      return `dial tcp: lookup ${host.replace(/:\d+$/, '')}: no such host`;
    case 'UNABLE_TO_VERIFY_LEAF_SIGNATURE':
    case 'SELF_SIGNED_CERT_IN_CHAIN':
    case 'DEPTH_ZERO_SELF_SIGNED_CERT':
    case 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY':
      return 'x509: certificate signed by unknown authority';
    case 'ERR_TLS_CERT_ALTNAME_INVALID':
      return `x509: ${err.message}`;
    default:
      return err.message;
  }
}

/** client-go's NewGenericServerResponse text for a non-2xx answer that is no Status. */
function genericServerResponse(code: number, body: string): string {
  switch (code) {
    case 400:
      return 'the server rejected our request for an unknown reason';
    case 401:
      return 'the server has asked for the client to provide credentials';
    case 403:
      return 'the server does not allow access to the requested resource';
    case 404:
      return 'the server could not find the requested resource';
    case 405:
      return 'the server does not allow this method on the requested resource';
    case 409:
      return 'the server reported a conflict';
    case 422:
      return 'the server rejected our request due to an error in our request';
    case 429:
      return 'the server has received too many requests and has asked us to try again later';
    case 503:
      return 'the server is currently unable to handle the request';
    case 504:
      return 'the server was unable to return a response in the time allotted, but may still be processing the request';
    default:
      return code >= 500 ? `an error on the server (${JSON.stringify(body.trim())}) has prevented the request from succeeding` : `the server responded with the status code ${code} but did not return more information`;
  }
}

const MAX_RESPONSE_BYTES = 3 * 1024 * 1024;

/** Where and how to POST (see postJSON). */
export interface PostJSONOptions {
  /** The address as kube prints it in errors (with `?timeout=<n>s`). */
  url: string;
  /** base64 PEM; the system roots when absent. */
  caBundle?: string | undefined;
  timeoutMs: number;
  /**
   * Where to connect when the URL's host is a service name (kube's service resolver): the TLS
   * server name and Host header stay the URL's.
   */
  connectTo?: { host: string; port: number } | undefined;
  /**
   * The largest answer accepted, as a multiple of the request body (never under 3 MiB): a
   * conversion webhook answers a whole list page with objects about the size it was sent.
   */
  responseSizeFactor?: number | undefined;
}

/**
 * POSTs `body` as JSON over HTTPS and returns the decoded answer (kube's webhook rest client);
 * fails with Go's client error text (`Post "<url>": ...`, or client-go's message for a non-2xx
 * answer), which kube puts in the messages clients see.
 */
export function postJSON(opts: PostJSONOptions, payload: unknown): Promise<unknown> {
  const address = opts.url;
  const fail = (why: string): Error => new Error(why);
  const url = new URL(address);
  const body = Buffer.from(stringifyJson(payload));
  const maxResponseBytes = Math.max(MAX_RESPONSE_BYTES, (opts.responseSizeFactor ?? 0) * body.length);
  const ca = opts.caBundle ? Buffer.from(opts.caBundle, 'base64').toString('utf8') : undefined;
  const target = opts.connectTo
    ? { hostname: opts.connectTo.host, port: opts.connectTo.port, path: `${url.pathname}${url.search}`, servername: url.hostname }
    : undefined;
  return new Promise((resolve, reject) => {
    let settled = false;
    const finish = (err: Error | undefined, value?: unknown): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (err) reject(err);
      else resolve(value);
    };
    // kube's webhook client manager sets this User-Agent for admission and conversion webhooks alike.
    const headers = { 'Content-Type': 'application/json', Accept: 'application/json, */*', 'User-Agent': 'kube-apiserver-admission', 'Content-Length': body.length, ...(target ? { Host: url.host } : {}) };
    const onResponse = (res: import('node:http').IncomingMessage): void => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > maxResponseBytes) {
          res.destroy();
          finish(fail(`Post "${address}": response body too large`));
          return;
        }
        chunks.push(c);
      });
      res.on('error', (e) => finish(fail(`Post "${address}": ${e.message}`)));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const code = res.statusCode ?? 0;
        let parsed: unknown;
        try {
          parsed = JSON.parse(text);
        } catch (e) {
          if (code < 200 || code > 299) return finish(fail(genericServerResponse(code, text)));
          return finish(fail(`couldn't get version/kind; json parse error: ${(e as Error).message}`));
        }
        if (code < 200 || code > 299) {
          const status = parsed as { kind?: unknown; message?: unknown };
          return finish(fail(status.kind === 'Status' && typeof status.message === 'string' ? status.message : genericServerResponse(code, text)));
        }
        finish(undefined, parsed);
      });
    };
    const req = target
      ? httpsRequest({ ...target, method: 'POST', ...(ca ? { ca } : {}), headers }, onResponse)
      : httpsRequest(url, { method: 'POST', ...(ca ? { ca } : {}), headers }, onResponse);
    const timer = setTimeout(() => {
      finish(fail(`Post "${address}": context deadline exceeded`));
      req.destroy();
    }, opts.timeoutMs);
    req.on('error', (e: NodeJS.ErrnoException) => finish(fail(`Post "${address}": ${describe(e, url.host)}`)));
    req.end(body);
  });
}

/** POSTs `review` to the webhook and returns the decoded answer; throws CallingWebhookError. */
export async function postReview(hook: Webhook, review: unknown): Promise<unknown> {
  const address = webhookURL(hook);
  const fail = (why: string): CallingWebhookError => new CallingWebhookError(hook.name, `failed to call webhook: ${why}`);
  const svc = hook.clientConfig.service;
  if (svc) {
    try {
      resolveService(svc);
    } catch (e) {
      throw fail(`Post "${address}": ${(e as Error).message}`);
    }
  }
  try {
    return await postJSON({ url: address, caBundle: hook.clientConfig.caBundle, timeoutMs: hook.timeoutSeconds * 1000 }, review);
  } catch (e) {
    throw fail((e as Error).message);
  }
}
