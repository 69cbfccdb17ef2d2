/**
 * A generic webhook client, as kube's apiserver/pkg/util/webhook GenericWebhook over client-go's
 * REST client: JSON POSTed to the kubeconfig's server with its CA and credentials, a 30 s timeout
 * per request, client-go's Retry-After retries, and kube's exponential backoff for transient
 * failures (DefaultShouldRetry).
 */
import { readFileSync } from 'node:fs';
import { Agent as HttpAgent, request as httpRequest, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { isPlainObject } from '@plinth/api';
import type { RestClientConfig } from './kubeconfig.js';

/** kube's wait.Backoff: `steps` attempts, waiting `initialMs`, then ×factor, each + up to jitter×wait. */
export interface Backoff {
  initialMs: number;
  factor: number;
  jitter: number;
  steps: number;
}

/** kube's DefaultAuthWebhookRetryBackoff (webhookutil.DefaultRetryBackoffWithInitialDelay(500ms)). */
export const DEFAULT_RETRY_BACKOFF: Readonly<Backoff> = Object.freeze({ initialMs: 500, factor: 1.5, jitter: 0.2, steps: 5 });

/** kube's defaultRequestTimeout: one HTTP request, response body included. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;

/** client-go's rest.Request maxRetries: answers with Retry-After retried this many times. */
const MAX_RETRY_AFTER_RETRIES = 10;

/** client-go's cached file token source re-reads the token file this often. */
const TOKEN_FILE_REFRESH_MS = 60_000;

export type WebhookErrorKind = 'status' | 'transport' | 'timeout' | 'aborted' | 'decode';

/** Why a webhook call failed. Messages never contain the request body. */
export class WebhookError extends Error {
  readonly kind: WebhookErrorKind;
  /** The Status code (the HTTP code for non-Status answers); 0 without an answer. */
  readonly code: number;
  /** The Status reason ('' = Unknown). */
  readonly reason: string;
  readonly retryAfterSeconds: number;
  /** Whether the Status carried details (kube's SuggestsClientDelay needs them). */
  readonly hasDetails: boolean;
  /** The socket error code of a transport failure (ECONNRESET, ECONNREFUSED, ...). */
  readonly errno: string | undefined;
  constructor(kind: WebhookErrorKind, message: string, extra: { code?: number; reason?: string; retryAfterSeconds?: number; hasDetails?: boolean; errno?: string } = {}) {
    super(message);
    this.name = 'WebhookError';
    this.kind = kind;
    this.code = extra.code ?? 0;
    this.reason = extra.reason ?? '';
    this.retryAfterSeconds = extra.retryAfterSeconds ?? 0;
    this.hasDetails = extra.hasDetails ?? false;
    this.errno = extra.errno;
  }
}

/**
 * kube's webhook.DefaultShouldRetry: a connection reset, or an answer that is an internal error,
 * a timeout or too many requests, or that suggests a delay (Retry-After). A refused connection,
 * a client timeout and every other answer fail at once.
 */
export function isRetryableWebhookError(e: unknown): boolean {
  if (!(e instanceof WebhookError)) return false;
  if (e.kind === 'transport') return e.errno === 'ECONNRESET';
  if (e.kind !== 'status') return false;
  const unknown = e.reason === '';
  if (e.reason === 'InternalError' || (unknown && e.code === 500)) return true;
  if (e.reason === 'Timeout' || (unknown && e.code === 504)) return true;
  if (e.reason === 'TooManyRequests' || e.code === 429) return true;
  return e.hasDetails && (e.reason === 'ServerTimeout' || e.retryAfterSeconds > 0);
}

function abortableSleep(ms: number, signal: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve(false);
    const done = (ok: boolean): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      resolve(ok);
    };
    const onAbort = (): void => done(false);
    const timer = setTimeout(() => done(true), ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * kube's webhook.WithExponentialBackoff: runs `fn` until it succeeds, fails with an error
 * `shouldRetry` refuses, or the attempts run out; then the last error is thrown. When `signal`
 * aborts, the last attempt's error wins over the abort (kube keeps the webhook's error).
 */
export async function withExponentialBackoff<T>(backoff: Backoff, signal: AbortSignal, fn: () => Promise<T>, shouldRetry: (e: unknown) => boolean): Promise<T> {
  let last: unknown;
  let wait = backoff.initialMs;
  for (let steps = backoff.steps; steps > 0; steps--) {
    if (signal.aborted) break;
    try {
      return await fn();
    } catch (e) {
      last = e;
      if (!shouldRetry(e)) throw e;
    }
    if (steps === 1) break;
    const delay = backoff.jitter > 0 ? wait + Math.random() * backoff.jitter * wait : wait;
    wait *= backoff.factor;
    if (!(await abortableSleep(delay, signal))) break;
  }
  if (last !== undefined) throw last;
  throw new WebhookError('aborted', 'webhook call failed: context deadline exceeded');
}

/** The reason and message kube's NewGenericServerResponse gives an answer without a Status body. */
function genericReason(code: number, serverMessage: string): { reason: string; message: string } {
  switch (code) {
    case 400:
      return { reason: 'BadRequest', message: 'the server rejected our request for an unknown reason' };
    case 401:
      return { reason: 'Unauthorized', message: 'the server has asked for the client to provide credentials' };
    case 403:
      return { reason: 'Forbidden', message: serverMessage || 'forbidden' };
    case 404:
      return { reason: 'NotFound', message: 'the server could not find the requested resource' };
    case 405:
      return { reason: 'MethodNotAllowed', message: 'the server does not allow this method on the requested resource' };
    case 409:
      return { reason: 'Conflict', message: 'the server reported a conflict' };
    case 429:
      return { reason: 'TooManyRequests', message: 'the server has received too many requests and has asked us to try again later' };
    case 503:
      return { reason: 'ServiceUnavailable', message: 'the server is currently unable to handle the request' };
    case 504:
      return { reason: 'Timeout', message: 'the server was unable to return a response in the time allotted, but may still be processing the request' };
    default:
      if (code >= 500) return { reason: 'InternalError', message: `an error on the server (${JSON.stringify(serverMessage)}) has prevented the request from succeeding` };
      return { reason: '', message: `the server responded with the status code ${code} but did not return more information` };
  }
}

/** Go's strconv.Atoi of Retry-After: whole seconds only. */
function retryAfterSeconds(headers: IncomingHttpHeaders): number | undefined {
  const h = headers['retry-after'];
  return typeof h === 'string' && /^[+-]?\d+$/.test(h.trim()) ? Number(h.trim()) : undefined;
}

interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

function isStatusObject(v: unknown): v is Record<string, unknown> {
  return isPlainObject(v) && v['kind'] === 'Status' && typeof v['status'] === 'string' && v['status'] !== '';
}

function errorFromStatus(s: Record<string, unknown>, httpCode: number): WebhookError {
  const details = isPlainObject(s['details']) ? s['details'] : undefined;
  const retryAfter = details && typeof details['retryAfterSeconds'] === 'number' ? details['retryAfterSeconds'] : 0;
  const code = typeof s['code'] === 'number' ? s['code'] : httpCode;
  const message = typeof s['message'] === 'string' && s['message'] ? s['message'] : `the server responded with status ${code}`;
  return new WebhookError('status', message, { code, reason: typeof s['reason'] === 'string' ? s['reason'] : '', retryAfterSeconds: retryAfter, hasDetails: details !== undefined });
}

/** client-go's transformResponse + Into: the JSON body of a 2xx answer, or the error it means. */
export function interpretWebhookResponse(res: RawResponse): unknown {
  let parsed: unknown;
  let parseError: Error | undefined;
  try {
    parsed = res.body.length > 0 ? JSON.parse(res.body.toString('utf8')) : undefined;
  } catch (e) {
    parseError = e as Error;
  }
  const ok = res.status >= 200 && res.status <= 206;
  if (isStatusObject(parsed) && (!ok || parsed['status'] !== 'Success')) throw errorFromStatus(parsed, res.status);
  if (!ok) {
    const text = /^text\//i.test(String(res.headers['content-type'] ?? '')) ? res.body.toString('utf8').trim().slice(0, 1024) : 'unknown';
    const retryAfter = retryAfterSeconds(res.headers) ?? 0;
    const { reason, message } = genericReason(res.status, text);
    throw new WebhookError('status', message, { code: res.status, reason, retryAfterSeconds: retryAfter, hasDetails: true });
  }
  if (res.body.length === 0) throw new WebhookError('decode', `0-length response with status code: ${res.status} and content type: ${String(res.headers['content-type'] ?? '')}`);
  if (parseError) throw new WebhookError('decode', `the webhook's answer is not JSON: ${parseError.message}`);
  return parsed;
}

export interface GenericWebhookOptions {
  config: RestClientConfig;
  retryBackoff?: Backoff;
  requestTimeoutMs?: number;
  userAgent?: string;
}

export interface GenericWebhook {
  /** POSTs `body` as JSON, with retries; resolves with the parsed JSON answer. */
  post(body: unknown, signal: AbortSignal): Promise<unknown>;
  /** Closes idle connections. */
  close(): void;
}

export function createGenericWebhook(opts: GenericWebhookOptions): GenericWebhook {
  const { config } = opts;
  const backoff = opts.retryBackoff ?? DEFAULT_RETRY_BACKOFF;
  const requestTimeoutMs = opts.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  const tls = config.url.protocol === 'https:';
  const agent = tls ? new HttpsAgent({ keepAlive: true }) : new HttpAgent({ keepAlive: true });
  // Where errors say the request went: the URL without any user info.
  const shown = `${config.url.protocol}//${config.url.host}${config.url.pathname}`;

  let token = config.bearerToken;
  let tokenReadAt = Date.now();
  const bearer = (): string | undefined => {
    if (config.bearerTokenFile && Date.now() - tokenReadAt >= TOKEN_FILE_REFRESH_MS) {
      tokenReadAt = Date.now();
      try {
        // A file that cannot be read (or is empty) leaves the last good token in use.
        token = readFileSync(config.bearerTokenFile, 'utf8').trim() || token;
      } catch {
        /* keep the previous token */
      }
    }
    return token;
  };

  const sendOnce = (payload: Buffer, signal: AbortSignal): Promise<RawResponse> => {
    const timeout = AbortSignal.timeout(requestTimeoutMs);
    const combined = AbortSignal.any([signal, timeout]);
    const headers: OutgoingHttpHeaders = {
      'content-type': 'application/json',
      accept: 'application/json, */*',
      'user-agent': opts.userAgent ?? 'plinth-apiserver',
      'content-length': payload.length,
    };
    const t = bearer();
    if (t) headers['authorization'] = `Bearer ${t}`;
    else if (config.basicAuth) headers['authorization'] = `Basic ${Buffer.from(`${config.basicAuth.username}:${config.basicAuth.password}`).toString('base64')}`;
    const tlsOptions = tls
      ? {
          ...(config.ca ? { ca: config.ca } : {}),
          ...(config.clientCert ? { cert: config.clientCert.cert, key: config.clientCert.key } : {}),
          ...(config.tlsServerName ? { servername: config.tlsServerName } : {}),
          rejectUnauthorized: !config.insecureSkipTLSVerify,
        }
      : {};
    return new Promise<RawResponse>((resolve, reject) => {
      let settled = false;
      const fail = (e: unknown): void => {
        if (settled) return;
        settled = true;
        if (timeout.aborted) reject(new WebhookError('timeout', `Post ${JSON.stringify(shown)}: context deadline exceeded (Client.Timeout exceeded)`));
        else if (signal.aborted) reject(new WebhookError('aborted', `Post ${JSON.stringify(shown)}: context deadline exceeded`));
        else {
          const err = e as NodeJS.ErrnoException;
          reject(new WebhookError('transport', `Post ${JSON.stringify(shown)}: ${err.message}`, { ...(err.code ? { errno: err.code } : {}) }));
        }
      };
      const send = tls ? httpsRequest : httpRequest;
      const req = send(config.url, { method: 'POST', headers, agent, signal: combined, ...tlsOptions }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', fail);
        res.on('close', () => {
          if (!res.complete) fail(Object.assign(new Error('unexpected EOF'), { code: 'ECONNRESET' }));
        });
        res.on('end', () => {
          if (settled) return;
          settled = true;
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) });
        });
      });
      req.on('error', fail);
      req.end(payload);
    });
  };

  /** client-go's own retries: a 429 or 5xx answer with Retry-After is retried after that delay. */
  const send = async (payload: Buffer, signal: AbortSignal): Promise<RawResponse> => {
    for (let retries = 0; ; retries++) {
      const res = await sendOnce(payload, signal);
      const wait = res.status === 429 || res.status >= 500 ? retryAfterSeconds(res.headers) : undefined;
      if (wait === undefined || retries >= MAX_RETRY_AFTER_RETRIES) return res;
      if (!(await abortableSleep(Math.max(0, wait) * 1000, signal))) return res;
    }
  };

  return {
    post(body, signal) {
      const payload = Buffer.from(JSON.stringify(body));
      return withExponentialBackoff(backoff, signal, async () => interpretWebhookResponse(await send(payload, signal)), isRetryableWebhookError);
    },
    close() {
      agent.destroy();
    },
  };
}
