/**
 * kube's cached token authenticator (apiserver/pkg/authentication/token/cache): answers of a slow
 * token authenticator (the webhook) are remembered per token and audience list for a TTL, and
 * concurrent lookups of the same token share one call (kube: singleflight).
 *
 * Keys are an HMAC-SHA256, under a random per-cache key, of the length-prefixed token and
 * audiences: the raw token is never a map key (nor kept in memory), and attacker-chosen tokens
 * cannot precompute or collide keys. Errors are not cached unless `cacheErrors` (kube's
 * `cacheErrs`; false for the webhook): an outage is not remembered past the calls that saw it.
 *
 * Size: kube 1.24 keeps the entries in 32 expiring maps with no size bound (kubernetes#84424 chose
 * expiry over its earlier LRU). Plinth bounds the cache too, evicting the least recently used entry
 * when full, since failed lookups (any random token) are cached as well. There is no striping:
 * stripes spread Go lock contention, and one JS thread has none.
 */
import { createHmac, randomBytes } from 'node:crypto';
import type { UserInfo } from '@plinth/api';

/** What a token lookup answers — kube's `(response, ok, err)`. */
export interface TokenLookupResult {
  /** The token is valid (for the audiences); `user` is set. */
  ok: boolean;
  user?: UserInfo;
  /** Those of the wanted audiences the token is valid for. */
  audiences?: string[];
  /** The lookup failed (outage, bad answer); never contains the token. */
  error?: Error;
}

/**
 * Looks a token up. `audiences`: the audiences the token must be for (undefined: no audience
 * check). `signal` aborts the lookup once the shared deadline passes.
 */
export type TokenLookup = (token: string, audiences: readonly string[] | undefined, signal: AbortSignal) => Promise<TokenLookupResult>;

/** kube's sharedLookupTimeout: a lookup shared by several requests runs at most this long. */
export const SHARED_LOOKUP_TIMEOUT_MS = 30_000;

/** Entries kept at most (kube's comment sizes its cache at 32k entries for 5k nodes and 10k namespaces). */
export const DEFAULT_MAX_CACHE_ENTRIES = 32 * 1024;

export interface CachedTokenLookupOptions {
  lookup: TokenLookup;
  /** Also cache lookups that failed with an error (kube's cacheErrs). */
  cacheErrors: boolean;
  /** How long a valid token's answer is kept; 0: not kept. */
  successTTLms: number;
  /** How long an invalid token's answer is kept; 0: not kept. */
  failureTTLms: number;
  maxEntries?: number;
  /** The clock (ms); tests substitute it. */
  now?: () => number;
  sharedLookupTimeoutMs?: number;
}

export interface CachedTokenLookup {
  lookup(token: string, audiences: readonly string[] | undefined): Promise<TokenLookupResult>;
  /** Entries held (expired ones may linger until touched). */
  readonly size: number;
  clear(): void;
}

/**
 * The cache key of (token, audiences): HMAC-SHA256 under `secret` of the token and each audience,
 * each prefixed with its length as a 32-bit big-endian integer, with the audience count between
 * (kube's keyFunc) — so ("ab", ["c"]) and ("a", ["bc"]) differ, and no audiences equals [].
 */
export function tokenCacheKey(secret: Buffer, token: string, audiences: readonly string[] | undefined): string {
  const h = createHmac('sha256', secret);
  const len = Buffer.alloc(4);
  const writeString = (s: string): void => {
    const b = Buffer.from(s, 'utf8');
    len.writeUInt32BE(b.length);
    h.update(len);
    h.update(b);
  };
  writeString(token);
  len.writeUInt32BE(audiences?.length ?? 0);
  h.update(len);
  for (const aud of audiences ?? []) writeString(aud);
  return h.digest('base64');
}

interface Entry {
  result: TokenLookupResult;
  expiresAt: number;
}

/** Wraps a lookup with kube's token cache. */
export function createCachedTokenLookup(opts: CachedTokenLookupOptions): CachedTokenLookup {
  const secret = randomBytes(32);
  const now = opts.now ?? Date.now;
  const maxEntries = opts.maxEntries ?? DEFAULT_MAX_CACHE_ENTRIES;
  const sharedTimeout = opts.sharedLookupTimeoutMs ?? SHARED_LOOKUP_TIMEOUT_MS;
  // Map order is recency order: a hit moves its entry to the end, eviction takes the first.
  const entries = new Map<string, Entry>();
  const inFlight = new Map<string, Promise<TokenLookupResult>>();

  const get = (key: string): TokenLookupResult | undefined => {
    const e = entries.get(key);
    if (!e) return undefined;
    entries.delete(key);
    if (e.expiresAt <= now()) return undefined;
    entries.set(key, e);
    return e.result;
  };

  const set = (key: string, result: TokenLookupResult, ttl: number): void => {
    const t = now();
    entries.delete(key);
    // Drop expired entries from the old end first, then the least recently used while full.
    for (const [k, e] of entries) {
      if (e.expiresAt > t && entries.size < maxEntries) break;
      entries.delete(k);
    }
    entries.set(key, { result, expiresAt: t + ttl });
  };

  const fetch = async (key: string, token: string, audiences: readonly string[] | undefined): Promise<TokenLookupResult> => {
    // Detached from any one request (several may be waiting), but bounded.
    const signal = AbortSignal.timeout(sharedTimeout);
    let result: TokenLookupResult;
    try {
      result = await opts.lookup(token, audiences, signal);
    } catch (e) {
      // A lookup that throws is an error result; its message is the lookup's own (no token).
      result = { ok: false, error: e instanceof Error ? e : new Error('token lookup failed') };
    }
    if (result.error && !opts.cacheErrors) return result;
    if (result.ok && opts.successTTLms > 0) set(key, result, opts.successTTLms);
    else if (!result.ok && opts.failureTTLms > 0) set(key, result, opts.failureTTLms);
    return result;
  };

  return {
    get size() {
      return entries.size;
    },
    clear() {
      entries.clear();
    },
    lookup(token, audiences) {
      const key = tokenCacheKey(secret, token, audiences);
      const cached = get(key);
      if (cached) return Promise.resolve(cached);
      let pending = inFlight.get(key);
      if (!pending) {
        pending = fetch(key, token, audiences).finally(() => inFlight.delete(key));
        inFlight.set(key, pending);
      }
      return pending;
    },
  };
}
