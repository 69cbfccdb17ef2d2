/**
 * An OpenID Connect provider as kube-apiserver 1.24 uses it through go-oidc v2: discovery of the
 * issuer's `jwks_uri`, a cached key set, and go-oidc's `IDTokenVerifier.Verify` (claims first,
 * then the signature). Discovery runs in the background and is retried until it succeeds, so an
 * issuer that is down never blocks or fails start-up; until it has succeeded no token verifies.
 *
 * Lifecycle: `createOIDCProvider` starts the first attempt at once; `isReady()` turns true after
 * discovery and the first key-set fetch; `close()` stops retries and aborts requests in flight.
 */
import { request as httpRequest, Agent as HttpAgent, type IncomingMessage, type ClientRequest } from 'node:http';
import { request as httpsRequest, Agent as HttpsAgent } from 'node:https';
import { compactVerify, createLocalJWKSet, errors as joseErrors, type JSONWebKeySet, type JWSHeaderParameters } from 'jose';

/**
 * A token failed verification. The message is safe to log and to return: it names claims and
 * checks, never token material (no payload snippets, no signatures).
 */
export class OIDCTokenError extends Error {
  override readonly name = 'OIDCTokenError';
}

export interface OIDCLog {
  info(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

// ---------------------------------------------------------------------------------------------
// HTTP: the client kube builds for the issuer (its CA or the host roots, 30 s timeout).

export interface HttpResponse {
  status: number;
  body: Buffer;
}

/** GETs over HTTP(S) with the issuer's trust roots; one per authenticator. */
export interface HttpGetter {
  get(url: string, headers?: Record<string, string>): Promise<HttpResponse>;
  /** Aborts requests in flight and drops pooled connections. */
  close(): void;
}

export interface HttpGetterOptions {
  /** PEM CA bundle trusted for https; the default roots when unset. */
  ca?: string;
  /** Per request, redirects included (kube's http.Client Timeout: 30 s). */
  timeoutMs?: number;
  /** Larger bodies are refused (discovery documents and key sets are small). */
  maxBodyBytes?: number;
}

const MAX_REDIRECTS = 10; // Go's http.Client default

export function createHttpGetter(opts: HttpGetterOptions = {}): HttpGetter {
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const maxBody = opts.maxBodyBytes ?? 1 << 20;
  const https = new HttpsAgent({ keepAlive: true, maxSockets: 4, ...(opts.ca ? { ca: opts.ca } : {}) });
  const http = new HttpAgent({ keepAlive: true, maxSockets: 4 });
  const inflight = new Set<ClientRequest>();
  let closed = false;

  const once = (url: URL, headers: Record<string, string>, deadline: number): Promise<{ res: IncomingMessage; body: Buffer }> =>
    new Promise((resolve, reject) => {
      if (closed) return reject(new Error('closed'));
      const isHttps = url.protocol === 'https:';
      if (!isHttps && url.protocol !== 'http:') return reject(new Error(`unsupported protocol scheme ${JSON.stringify(url.protocol.slice(0, -1))}`));
      const req = (isHttps ? httpsRequest : httpRequest)(url, { method: 'GET', headers, agent: isHttps ? https : http }, (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > maxBody) req.destroy(new Error(`response body larger than ${maxBody} bytes`));
          else chunks.push(c);
        });
        res.on('end', () => resolve({ res, body: Buffer.concat(chunks) }));
        res.on('error', reject);
      });
      inflight.add(req);
      const timer = setTimeout(() => req.destroy(new Error(`timeout after ${timeoutMs} ms`)), Math.max(0, deadline - Date.now()));
      req.on('close', () => {
        clearTimeout(timer);
        inflight.delete(req);
      });
      req.on('error', reject);
      req.end();
    });

  return {
    async get(rawURL, headers = {}) {
      const deadline = Date.now() + timeoutMs;
      let url = new URL(rawURL);
      let hdrs = { ...headers };
      for (let hop = 0; ; hop++) {
        const { res, body } = await once(url, hdrs, deadline);
        const status = res.statusCode ?? 0;
        const location = res.headers.location;
        if (![301, 302, 303, 307, 308].includes(status) || !location) return { status, body };
        if (hop >= MAX_REDIRECTS) throw new Error(`stopped after ${MAX_REDIRECTS} redirects`);
        const next = new URL(location, url);
        // Go's client forwards credentials only within the same host.
        if (next.host !== url.host) {
          hdrs = Object.fromEntries(Object.entries(hdrs).filter(([k]) => k.toLowerCase() !== 'authorization'));
        }
        url = next;
      }
    },
    close() {
      closed = true;
      for (const req of inflight) req.destroy(new Error('closed'));
      https.destroy();
      http.destroy();
    },
  };
}

// ---------------------------------------------------------------------------------------------
// go-oidc's claim checks, as pure functions.

const B64URL = /^[A-Za-z0-9_-]*$/;

/** Go's base64.RawURLEncoding: the URL alphabet, no padding. */
export function decodeSegment(s: string): Buffer | undefined {
  if (!B64URL.test(s) || s.length % 4 === 1) return undefined;
  return Buffer.from(s, 'base64url');
}

/** Parses a JSON object; undefined when the bytes are not one (the parser's message could quote the input). */
export function parseJSONObject(bytes: Buffer): Record<string, unknown> | undefined {
  let v: unknown;
  try {
    v = JSON.parse(bytes.toString('utf8'));
  } catch {
    return undefined;
  }
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}

const JSON_NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

/**
 * go-oidc's jsonTime: a JSON number (or a string holding one, as Go's json.Number allows) of
 * seconds, truncated to whole seconds. Undefined when the value is no such number.
 */
function jsonTimeSeconds(v: unknown): number | undefined {
  if (typeof v === 'number' && Number.isFinite(v)) return Math.trunc(v);
  if (typeof v === 'string' && JSON_NUMBER.test(v)) return Math.trunc(Number(v));
  return undefined;
}

const isStringOrNull = (v: unknown): boolean => v === undefined || v === null || typeof v === 'string';

/** go-oidc's audience: a string or an array of strings. */
function audienceOf(v: unknown): string[] | undefined {
  if (v === undefined || v === null) return [];
  if (typeof v === 'string') return [v];
  if (Array.isArray(v) && v.every((a) => a === null || typeof a === 'string')) return v.map((a) => (a as string | null) ?? '');
  return undefined;
}

export interface ClaimSource {
  endpoint: string;
  accessToken: string;
}

const GOOGLE_ISSUER = 'https://accounts.google.com';
const GOOGLE_ISSUER_NO_SCHEME = 'accounts.google.com';
/** go-oidc v2: a token may be used up to this long before its `nbf`. `exp` has no leeway. */
export const NBF_LEEWAY_MS = 60_000;

export interface IDTokenChecks {
  issuer: string;
  clientID: string;
  /** Milliseconds since the epoch. */
  now: number;
}

/**
 * go-oidc v2.1 `IDTokenVerifier.Verify` before the signature: the standard claims have their
 * types, each `_claim_names` entry names a `_claim_sources` entry, `iss` is the issuer, `aud`
 * contains the client id, `exp` is not past (no leeway; absent means expired), `nbf` is at most a
 * minute ahead. `iat` is type-checked only. Throws OIDCTokenError.
 */
export function checkIDTokenClaims(claims: Record<string, unknown>, c: IDTokenChecks): void {
  const bad = (msg: string): never => {
    throw new OIDCTokenError(`oidc: ${msg}`);
  };
  for (const k of ['iss', 'sub', 'nonce', 'at_hash']) if (!isStringOrNull(claims[k])) bad(`failed to unmarshal claims: ${k} is not a string`);
  const aud = audienceOf(claims['aud']);
  if (!aud) bad('failed to unmarshal claims: aud is not a string or an array of strings');
  const exp = claims['exp'] === undefined ? 0 : jsonTimeSeconds(claims['exp']);
  if (exp === undefined) bad('failed to unmarshal claims: exp is not a number');
  if (claims['iat'] !== undefined && jsonTimeSeconds(claims['iat']) === undefined) bad('failed to unmarshal claims: iat is not a number');
  const nbf = claims['nbf'] === undefined || claims['nbf'] === null ? null : jsonTimeSeconds(claims['nbf']);
  if (nbf === undefined) bad('failed to unmarshal claims: nbf is not a number');
  claimSourcesOf(claims);

  const iss = (claims['iss'] as string | null | undefined) ?? '';
  if (iss !== c.issuer && !(c.issuer === GOOGLE_ISSUER && iss === GOOGLE_ISSUER_NO_SCHEME)) bad('id token issued by a different provider');
  if (!aud!.includes(c.clientID)) bad('expected audience not in the token');
  if (exp! * 1000 < c.now) bad('token is expired');
  if (nbf !== null && c.now + NBF_LEEWAY_MS < nbf! * 1000) bad('current time before the nbf (not before) time');
}

/**
 * The distributed claims of a token: claim name → its source (OIDC Core 5.6.2), checked as
 * go-oidc does (every `_claim_names` value is a non-empty name of a `_claim_sources` entry).
 */
export function claimSourcesOf(claims: Record<string, unknown>): Map<string, ClaimSource> {
  const bad = (msg: string): never => {
    throw new OIDCTokenError(`oidc: ${msg}`);
  };
  const out = new Map<string, ClaimSource>();
  const names = claims['_claim_names'];
  const sources = claims['_claim_sources'];
  if (names !== undefined && names !== null && (typeof names !== 'object' || Array.isArray(names))) bad('failed to unmarshal claims: _claim_names is not an object');
  if (sources !== undefined && sources !== null && (typeof sources !== 'object' || Array.isArray(sources))) bad('failed to unmarshal claims: _claim_sources is not an object');
  const srcs = new Map<string, ClaimSource>();
  for (const [k, v] of Object.entries((sources as Record<string, unknown> | null) ?? {})) {
    if (v === null) {
      srcs.set(k, { endpoint: '', accessToken: '' });
      continue;
    }
    if (typeof v !== 'object' || Array.isArray(v)) bad('failed to unmarshal claims: a _claim_sources entry is not an object');
    const { endpoint, access_token: accessToken } = v as Record<string, unknown>;
    if (!isStringOrNull(endpoint) || !isStringOrNull(accessToken)) bad('failed to unmarshal claims: a _claim_sources entry has a non-string field');
    srcs.set(k, { endpoint: (endpoint as string | undefined) ?? '', accessToken: (accessToken as string | undefined) ?? '' });
  }
  for (const [claim, src] of Object.entries((names as Record<string, unknown> | null) ?? {})) {
    if (!isStringOrNull(src)) bad('failed to unmarshal claims: a _claim_names value is not a string');
    if (!src) bad('failed to obtain source from claim name');
    const s = srcs.get(src as string);
    if (!s) bad('source does not exist');
    out.set(claim, s!);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The provider: discovery, key set, verification.

export interface OIDCProviderOptions {
  /** The issuer URL exactly as configured (and as it must appear in `iss` and discovery). */
  issuer: string;
  http: HttpGetter;
  log: OIDCLog;
  /** Background discovery retries: the first delay, doubled per failure up to the maximum. */
  retryInitialMs?: number;
  /** kube polls every 10 s. */
  retryMaxMs?: number;
  /**
   * A token naming a key the cached set lacks refetches the set at most this often, so a flood of
   * made-up `kid`s cannot make plinth hammer the issuer.
   */
  keyRefreshIntervalMs?: number;
}

export interface VerifyConfig {
  clientID: string;
  /** `--oidc-signing-algs`. */
  algorithms: readonly string[];
  /** Milliseconds since the epoch; default Date.now(). */
  now?: () => number;
}

export interface OIDCProvider {
  readonly issuer: string;
  /** Discovery and the first key-set fetch have succeeded. */
  isReady(): boolean;
  /**
   * go-oidc's Verify: parses the compact JWS, checks the claims (checkIDTokenClaims), the `alg`
   * against the allowed algorithms, then the signature against the issuer's keys (refetching the
   * key set, rate-limited, when the token's `kid` is unknown). Returns the claims. Throws
   * OIDCTokenError.
   */
  verify(token: string, config: VerifyConfig): Promise<Record<string, unknown>>;
  close(): void;
}

interface KeySet {
  jwks: ReturnType<typeof createLocalJWKSet>;
  kids: Set<string>;
}

export function createOIDCProvider(opts: OIDCProviderOptions): OIDCProvider {
  const { issuer, http, log } = opts;
  const retryMax = opts.retryMaxMs ?? 10_000;
  const refreshInterval = opts.keyRefreshIntervalMs ?? 10_000;
  let retryDelay = opts.retryInitialMs ?? 1_000;
  let closed = false;
  let timer: NodeJS.Timeout | undefined;
  let jwksURI: string | undefined;
  let keys: KeySet | undefined;
  let refreshing: Promise<boolean> | undefined;
  let lastRefresh = -Infinity;

  const getJSON = async (url: string, what: string): Promise<Record<string, unknown>> => {
    const res = await http.get(url, { accept: 'application/json' });
    if (res.status !== 200) throw new Error(`${what}: GET ${url}: HTTP ${res.status}`);
    const obj = parseJSONObject(res.body);
    if (!obj) throw new Error(`${what}: GET ${url}: the response is not a JSON object`);
    return obj;
  };

  const fetchKeys = async (uri: string): Promise<KeySet> => {
    const doc = await getJSON(uri, 'fetching keys');
    let jwks: KeySet['jwks'];
    try {
      jwks = createLocalJWKSet(doc as unknown as JSONWebKeySet);
    } catch (e) {
      throw new Error(`fetching keys: GET ${uri}: not a JSON Web Key Set (${(e as Error).message})`);
    }
    const kids = new Set<string>();
    for (const k of (doc['keys'] as Array<Record<string, unknown>>) ?? []) if (typeof k['kid'] === 'string') kids.add(k['kid']);
    return { jwks, kids };
  };

  // go-oidc's NewProvider: the discovery document must name this very issuer.
  const discover = async (): Promise<string> => {
    const doc = await getJSON(`${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`, 'discovery');
    if (doc['issuer'] !== issuer) throw new Error(`issuer did not match the issuer returned by provider, expected ${JSON.stringify(issuer)} got ${JSON.stringify(doc['issuer'])}`);
    if (typeof doc['jwks_uri'] !== 'string' || !doc['jwks_uri']) throw new Error('discovery document has no jwks_uri');
    return doc['jwks_uri'];
  };

  const attempt = async (): Promise<void> => {
    timer = undefined;
    if (closed) return;
    try {
      const uri = await discover();
      const ks = await fetchKeys(uri);
      if (closed) return;
      jwksURI = uri;
      keys = ks;
      log.info('oidc authenticator: initialized', { issuer });
    } catch (e) {
      if (closed) return;
      log.error('oidc authenticator: initializing plugin', { issuer, err: (e as Error).message, retryInMs: retryDelay });
      timer = setTimeout(() => void attempt(), retryDelay);
      timer.unref();
      retryDelay = Math.min(retryDelay * 2, retryMax);
    }
  };
  void attempt();

  /** Refetches the key set unless one was refetched within the interval; concurrent callers share one fetch. */
  const refreshKeys = (): Promise<boolean> => {
    if (refreshing) return refreshing;
    if (!jwksURI || Date.now() - lastRefresh < refreshInterval) return Promise.resolve(false);
    lastRefresh = Date.now();
    const uri = jwksURI;
    refreshing = fetchKeys(uri)
      .then(
        (ks) => {
          keys = ks;
          return true;
        },
        (e: Error) => {
          log.error('oidc authenticator: refreshing keys', { issuer, err: e.message });
          return false;
        },
      )
      .finally(() => {
        refreshing = undefined;
      });
    return refreshing;
  };

  return {
    issuer,
    isReady: () => keys !== undefined,
    async verify(token, config) {
      if (!keys) throw new OIDCTokenError('oidc: authenticator not initialized');
      // go-jose's ParseSigned (compact form): three segments, a JSON header with an alg.
      const parts = token.split('.');
      if (parts.length !== 3) throw new OIDCTokenError('oidc: malformed jwt');
      const headerBytes = decodeSegment(parts[0]!);
      const header = headerBytes && parseJSONObject(headerBytes);
      if (!header || typeof header['alg'] !== 'string') throw new OIDCTokenError('oidc: malformed jwt: bad header');
      if (header['kid'] !== undefined && typeof header['kid'] !== 'string') throw new OIDCTokenError('oidc: malformed jwt: bad kid');
      const payloadBytes = decodeSegment(parts[1]!);
      const claims = payloadBytes && parseJSONObject(payloadBytes);
      if (!claims) throw new OIDCTokenError('oidc: malformed jwt payload');
      if (!decodeSegment(parts[2]!)) throw new OIDCTokenError('oidc: malformed jwt: bad signature encoding');

      // Cheap checks before the signature, so a bad token never makes us refetch keys.
      checkIDTokenClaims(claims, { issuer, clientID: config.clientID, now: (config.now ?? Date.now)() });
      const alg = header['alg'];
      if (!config.algorithms.includes(alg)) throw new OIDCTokenError(`oidc: id token signed with unsupported algorithm ${JSON.stringify(alg)}`);

      const kid = header['kid'] as string | undefined;
      if (await verifiesWith(token, keys.jwks, config.algorithms, header)) return claims;
      // OIDC Core 10.1.1: a key the cached set does not have may be a new one; fetch the set again.
      const unknownKey = kid === undefined || !keys.kids.has(kid);
      if (unknownKey && (await refreshKeys()) && (await verifiesWith(token, keys.jwks, config.algorithms, header))) return claims;
      throw new OIDCTokenError('oidc: failed to verify signature');
    },
    close() {
      closed = true;
      if (timer) clearTimeout(timer);
    },
  };
}

/** Tries the key the set selects, or each candidate when several match (go-oidc tries all). */
async function verifiesWith(token: string, jwks: KeySet['jwks'], algorithms: readonly string[], header: JWSHeaderParameters): Promise<boolean> {
  const options = { algorithms: [...algorithms] };
  try {
    const key = await jwks(header);
    await compactVerify(token, key, options);
    return true;
  } catch (e) {
    if (!(e instanceof joseErrors.JWKSMultipleMatchingKeys)) return false;
    for await (const key of e) {
      try {
        await compactVerify(token, key, options);
        return true;
      } catch {
        // the next candidate
      }
    }
    return false;
  }
}
