/**
 * Webhook token authentication (`--authentication-token-webhook-config-file`), as kube-apiserver
 * 1.24 builds it (pkg/kubeapiserver/authenticator/config.go newWebhookTokenAuthenticator): the
 * bearer token is POSTed as an `authentication.k8s.io/<version>` TokenReview to the service the
 * kubeconfig names, and the answers — valid or not — are cached per token for
 * `--authentication-token-webhook-cache-ttl` (`tokencache.New(webhook, false, ttl, ttl)`).
 *
 * Result mapping (kube's WebhookTokenAuthenticator.AuthenticateToken):
 * - `status.authenticated` → the user the webhook returned.
 * - Audiences: the request's audiences (the API audiences unless a TokenReview asks for others)
 *   go out in `spec.audiences`; the answer's `status.audiences`, or when it has none the API
 *   audiences, must intersect them, or the token is refused (and that refusal is cached).
 * - Not authenticated → refused (401); with a `status.error`, an error, which is not cached.
 * - The webhook unreachable or answering badly (after kube's retries) → refused with an error
 *   that names no token; errors are never cached.
 */
import type { UserInfo } from '@plinth/api';
import { isPlainObject } from '@plinth/api';
import { bearerToken, type Authenticator } from './authenticator.js';
import type { AuthenticationMethod, AuthenticatorDeps } from './config.js';
import { loadKubeconfig, type RestClientConfig } from './kubeconfig.js';
import { createCachedTokenLookup, type TokenLookup, type TokenLookupResult } from './token-cache.js';
import { createGenericWebhook, WebhookError, type Backoff, type GenericWebhook } from './webhook-client.js';

export type TokenReviewVersion = 'v1' | 'v1beta1';

const GROUP = 'authentication.k8s.io';

/** The TokenReview sent to the webhook, shaped as kube's Go encoding of it. */
export function tokenReviewRequest(version: TokenReviewVersion, token: string, audiences: readonly string[] | undefined): Record<string, unknown> {
  return {
    kind: 'TokenReview',
    apiVersion: `${GROUP}/${version}`,
    metadata: { creationTimestamp: null },
    spec: { token, ...(audiences && audiences.length > 0 ? { audiences: [...audiences] } : {}) },
    status: { user: {} },
  };
}

/** The part of a TokenReview answer kube reads. */
export interface TokenReviewStatus {
  authenticated: boolean;
  user: { username: string; uid: string; groups: string[]; extra: Record<string, string[]> | undefined };
  audiences: string[];
  error: string;
}

function decodeError(message: string): WebhookError {
  return new WebhookError('decode', message);
}

/** A JSON string field as Go decodes it: absent or null → '', anything else but a string → error. */
function stringField(o: Record<string, unknown>, key: string, where: string): string {
  const v = o[key];
  if (v === undefined || v === null) return '';
  if (typeof v !== 'string') throw decodeError(`decoding TokenReview: ${where}.${key} must be a string`);
  return v;
}

function stringList(v: unknown, where: string): string[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || !v.every((s) => typeof s === 'string')) throw decodeError(`decoding TokenReview: ${where} must be a list of strings`);
  return [...(v as string[])];
}

/**
 * Reads the webhook's answer as client-go decodes it into a TokenReview of `version`: `kind` and
 * `apiVersion` may be omitted (they default to the expected ones) but any other kind or version
 * is an error, as is a field of the wrong type.
 */
export function decodeTokenReview(body: unknown, version: TokenReviewVersion): TokenReviewStatus {
  const expected = `${GROUP}/${version}`;
  if (!isPlainObject(body)) throw decodeError(`the webhook's answer is not a ${expected} TokenReview`);
  const kind = body['kind'] ?? '';
  const apiVersion = body['apiVersion'] ?? '';
  if ((kind !== '' && kind !== 'TokenReview') || (apiVersion !== '' && apiVersion !== expected)) {
    throw decodeError(`the webhook answered ${JSON.stringify(String(apiVersion))} ${JSON.stringify(String(kind))}, not a ${expected} TokenReview`);
  }
  const status = body['status'] ?? {};
  if (!isPlainObject(status)) throw decodeError('decoding TokenReview: status must be an object');
  const authenticated = status['authenticated'] ?? false;
  if (typeof authenticated !== 'boolean') throw decodeError('decoding TokenReview: status.authenticated must be a boolean');
  const user = status['user'] ?? {};
  if (!isPlainObject(user)) throw decodeError('decoding TokenReview: status.user must be an object');
  let extra: Record<string, string[]> | undefined;
  const rawExtra = user['extra'];
  if (rawExtra !== undefined && rawExtra !== null) {
    if (!isPlainObject(rawExtra)) throw decodeError('decoding TokenReview: status.user.extra must be an object');
    extra = Object.fromEntries(Object.entries(rawExtra).map(([k, v]) => [k, stringList(v, `status.user.extra[${JSON.stringify(k)}]`)]));
  }
  return {
    authenticated,
    user: {
      username: stringField(user, 'username', 'status.user'),
      uid: stringField(user, 'uid', 'status.user'),
      groups: stringList(user['groups'], 'status.user.groups'),
      extra,
    },
    audiences: stringList(status['audiences'], 'status.audiences'),
    error: stringField(status, 'error', 'status'),
  };
}

/** Replaces every occurrence of the token: a webhook (or proxy) may echo it in an error text. */
function redact(message: string, token: string): string {
  return token ? message.split(token).join('[redacted]') : message;
}

export interface WebhookTokenReviewerOptions {
  webhook: Pick<GenericWebhook, 'post'>;
  version: TokenReviewVersion;
  /** The API audiences (`--api-audiences`): what a token is for when the answer names none. */
  implicitAudiences: readonly string[];
  log?: Pick<AuthenticatorDeps['log'], 'error'>;
}

/** kube's WebhookTokenAuthenticator.AuthenticateToken, uncached. */
export function createWebhookTokenReviewer(opts: WebhookTokenReviewerOptions): TokenLookup {
  return async (token, wantAudiences, signal): Promise<TokenLookupResult> => {
    let status: TokenReviewStatus;
    try {
      status = decodeTokenReview(await opts.webhook.post(tokenReviewRequest(opts.version, token, wantAudiences), signal), opts.version);
    } catch (e) {
      // An outage or a bad configuration: logged (kube does too), never with the token.
      const message = redact(e instanceof Error ? e.message : String(e), token);
      opts.log?.error('Failed to make webhook authenticator request', { error: message });
      return { ok: false, error: new Error(message) };
    }
    // Audience-limited request: the answer's audiences (or, when it names none, the API's)
    // must include one of the wanted ones. Checked before `authenticated`, as kube does.
    let audiences: string[] | undefined;
    if (wantAudiences && wantAudiences.length > 0) {
      const got = status.audiences.length > 0 ? status.audiences : opts.implicitAudiences;
      audiences = wantAudiences.filter((a) => got.includes(a));
      if (audiences.length === 0) return { ok: false };
    }
    if (!status.authenticated) return status.error ? { ok: false, error: new Error(redact(status.error, token)) } : { ok: false };
    const u = status.user;
    const user: UserInfo = { name: u.username, groups: u.groups, ...(u.uid ? { uid: u.uid } : {}), ...(u.extra ? { extra: u.extra } : {}) };
    return { ok: true, user, ...(audiences ? { audiences } : {}) };
  };
}

export interface WebhookTokenAuthenticatorOptions {
  client: RestClientConfig;
  version: TokenReviewVersion;
  /** `--api-audiences`: a request's audiences when it names none, and the implicit answer. */
  apiAudiences: readonly string[];
  /** `--authentication-token-webhook-cache-ttl` in ms, for valid and invalid tokens alike; 0: no cache. */
  cacheTTLms: number;
  retryBackoff?: Backoff;
  requestTimeoutMs?: number;
  log?: Pick<AuthenticatorDeps['log'], 'error'>;
}

function copyUser(u: UserInfo): UserInfo {
  return {
    name: u.name,
    groups: [...u.groups],
    ...(u.uid !== undefined ? { uid: u.uid } : {}),
    ...(u.extra ? { extra: Object.fromEntries(Object.entries(u.extra).map(([k, v]) => [k, [...v]])) } : {}),
  };
}

/** The webhook token authenticator with kube's cache in front. */
export function createWebhookTokenAuthenticator(opts: WebhookTokenAuthenticatorOptions): Authenticator {
  const webhook = createGenericWebhook({
    config: opts.client,
    ...(opts.retryBackoff ? { retryBackoff: opts.retryBackoff } : {}),
    ...(opts.requestTimeoutMs !== undefined ? { requestTimeoutMs: opts.requestTimeoutMs } : {}),
  });
  const cache = createCachedTokenLookup({
    lookup: createWebhookTokenReviewer({ webhook, version: opts.version, implicitAudiences: opts.apiAudiences, ...(opts.log ? { log: opts.log } : {}) }),
    cacheErrors: false,
    successTTLms: opts.cacheTTLms,
    failureTTLms: opts.cacheTTLms,
  });
  return {
    async authenticate(req) {
      const token = bearerToken(req);
      if (!token) return { kind: 'no-opinion' };
      const audiences = req.audiences ?? opts.apiAudiences;
      const r = await cache.lookup(token, audiences.length > 0 ? audiences : undefined);
      if (r.ok && r.user) return { kind: 'authenticated', user: copyUser(r.user), ...(r.audiences ? { audiences: [...r.audiences] } : {}) };
      // kube's bearertoken authenticator: a refusal without an error is "invalid bearer token".
      return { kind: 'rejected', reason: r.error ? r.error.message : 'invalid bearer token' };
    },
    close() {
      cache.clear();
      webhook.close();
    },
  };
}

/** Registration: `--authentication-token-webhook-config-file` and its cache TTL and version. */
export const webhookMethod: AuthenticationMethod = {
  name: 'webhook',
  build(opts, deps) {
    if (!opts.webhook) return undefined;
    let client: RestClientConfig;
    try {
      client = loadKubeconfig(opts.webhook.configFile);
    } catch (e) {
      throw new Error(`--authentication-token-webhook-config-file: ${(e as Error).message}`);
    }
    return createWebhookTokenAuthenticator({
      client,
      version: opts.webhook.version,
      apiAudiences: opts.apiAudiences,
      cacheTTLms: opts.webhook.cacheTTLms,
      log: deps.log,
    });
  },
};
