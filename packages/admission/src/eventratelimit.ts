/**
 * kube's EventRateLimit plugin (plugin/pkg/admission/eventratelimit, 1.24), off by default: a
 * validating plugin that refuses core/v1 Event creates and updates over a token-bucket rate with
 * 429 TooManyRequests. Its configuration (kind Configuration of
 * eventratelimit.admission.k8s.io/v1alpha1) comes only from `--admission-control-config-file`;
 * enabling the plugin without one, or with a bad one, fails start-up as kube's does.
 *
 * Each limit has a bucket per key: one for the whole server (Server), one per namespace
 * (Namespace), per user name (User), or per event source and involved object (SourceAndObject);
 * the per-key buckets live in an LRU of `cacheSize` (default 4096), an evicted key starting over
 * with a full bucket. Dry runs are not counted. events.k8s.io Events are not limited (kube matches
 * the core Event kind only).
 */
import { fieldErr, fieldErrorString, GoLiteral, isJsonObject, StatusError, type FieldError } from '@plinth/api';
import type { AdmissionAttributes, AdmissionPlugin } from './interfaces.js';

export const EVENT_RATE_LIMIT_API_VERSION = 'eventratelimit.admission.k8s.io/v1alpha1';

const LIMIT_TYPES = ['Namespace', 'Server', 'SourceAndObject', 'User'] as const;
type LimitType = (typeof LIMIT_TYPES)[number];

/** One limit of the configuration (kube's Limit). */
export interface EventRateLimitLimit {
  type: LimitType;
  qps: number;
  burst: number;
  cacheSize: number;
}

const DEFAULT_CACHE_SIZE = 4096;
const INT32_MAX = 2 ** 31 - 1;

/** A JSON field of kube's int32 type: absent is 0; anything else not an int32 fails as kube's decoder does. */
function int32Field(limit: Record<string, unknown>, field: string): number {
  const v = limit[field];
  if (v === undefined || v === null) return 0;
  if (typeof v === 'number' && Number.isInteger(v) && v >= -INT32_MAX - 1 && v <= INT32_MAX) return v;
  const what = typeof v === 'number' ? `number ${v}` : Array.isArray(v) ? 'array' : typeof v === 'object' ? 'object' : typeof v;
  throw new Error(`json: cannot unmarshal ${what} into Go struct field Limit.limits.${field} of type int32`);
}

/** kube's aggregate of field errors: one as is, several (duplicates dropped) in brackets. */
function aggregate(errs: FieldError[]): string {
  const msgs = [...new Set(errs.map(fieldErrorString))];
  return msgs.length === 1 ? msgs[0]! : `[${msgs.join(', ')}]`;
}

/**
 * kube's LoadConfiguration and ValidateConfiguration: the limits of the plugin's configuration.
 * Throws an Error with kube's text (decode error, or the field errors aggregated).
 */
export function parseEventRateLimitConfig(config: Record<string, unknown> | undefined): EventRateLimitLimit[] {
  let raw: unknown;
  if (config !== undefined) {
    const kind = config['kind'];
    const apiVersion = config['apiVersion'];
    if (typeof kind !== 'string' || kind === '') throw new Error(`Object 'Kind' is missing in '${JSON.stringify(config)}'`);
    if (apiVersion !== EVENT_RATE_LIMIT_API_VERSION || kind !== 'Configuration') {
      throw new Error(`no kind "${kind}" is registered for version "${String(apiVersion ?? '')}"`);
    }
    raw = config['limits'];
  }
  if (raw !== undefined && raw !== null && !Array.isArray(raw)) throw new Error('json: cannot unmarshal object into Go struct field Configuration.limits of type []v1alpha1.Limit');
  const items = (raw ?? []) as unknown[];
  const errs: FieldError[] = [];
  if (items.length === 0) errs.push(fieldErr.invalid('limits', new GoLiteral(raw ? '[]eventratelimit.Limit{}' : '[]eventratelimit.Limit(nil)'), 'must not be empty'));
  const limits = items.map((item, i): EventRateLimitLimit => {
    if (!isJsonObject(item)) throw new Error('json: cannot unmarshal into Go struct field Configuration.limits of type v1alpha1.Limit');
    const type = typeof item['type'] === 'string' ? item['type'] : '';
    const limit = { type: type as LimitType, qps: int32Field(item, 'qps'), burst: int32Field(item, 'burst'), cacheSize: int32Field(item, 'cacheSize') };
    const path = `limits[${i}]`;
    // kube lists the supported types from a Go map (random order); plinth sorts them.
    if (!(LIMIT_TYPES as readonly string[]).includes(type)) errs.push(fieldErr.notSupported(`${path}.type`, type, [...LIMIT_TYPES]));
    if (limit.burst <= 0) errs.push(fieldErr.invalid(`${path}.burst`, limit.burst, 'must be positive'));
    if (limit.qps <= 0) errs.push(fieldErr.invalid(`${path}.qps`, limit.qps, 'must be positive'));
    if (type !== 'Server' && limit.cacheSize < 0) errs.push(fieldErr.invalid(`${path}.cacheSize`, limit.cacheSize, 'must not be negative'));
    return limit;
  });
  if (errs.length > 0) throw new Error(aggregate(errs));
  return limits;
}

/**
 * A token bucket as kube's flowcontrol token-bucket limiter (golang.org/x/time/rate): it starts
 * full with `burst` tokens and refills at `qps` per second, never beyond `burst`.
 */
export class TokenBucket {
  readonly #qps: number;
  readonly #burst: number;
  #tokens: number;
  #last: number;

  constructor(qps: number, burst: number, nowMs: number) {
    this.#qps = qps;
    this.#burst = burst;
    this.#tokens = burst;
    this.#last = nowMs;
  }

  /** Takes a token if one is there (kube's TryAccept). */
  tryAccept(nowMs: number): boolean {
    if (nowMs > this.#last) {
      this.#tokens = Math.min(this.#burst, this.#tokens + ((nowMs - this.#last) / 1000) * this.#qps);
      this.#last = nowMs;
    }
    if (this.#tokens < 1) return false;
    this.#tokens -= 1;
    return true;
  }
}

/** The key of an event for a limit type (kube's key functions). */
function keyOf(type: LimitType, attrs: AdmissionAttributes): string {
  switch (type) {
    case 'Server':
      return '';
    case 'Namespace':
      return attrs.namespace;
    case 'User':
      return attrs.user.name ?? '';
    case 'SourceAndObject': {
      const ev: Record<string, unknown> = attrs.object ?? {};
      const source = isJsonObject(ev['source']) ? ev['source'] : {};
      const obj = isJsonObject(ev['involvedObject']) ? ev['involvedObject'] : {};
      const s = (v: unknown): string => (typeof v === 'string' ? v : '');
      return [source['component'], source['host'], obj['kind'], obj['namespace'], obj['name'], obj['uid'], obj['apiVersion']].map(s).join('');
    }
  }
}

/** One limit's buckets: a single one (Server), or an LRU of them by key. */
function createEnforcer(limit: EventRateLimitLimit, now: () => number): (attrs: AdmissionAttributes) => string | undefined {
  const size = limit.cacheSize || DEFAULT_CACHE_SIZE;
  const server = limit.type === 'Server' ? new TokenBucket(limit.qps, limit.burst, now()) : undefined;
  /** Map order is recency order: a hit is moved to the end, the first key is evicted. */
  const buckets = new Map<string, TokenBucket>();
  const bucketOf = (key: string): TokenBucket => {
    if (server) return server;
    let b = buckets.get(key);
    if (b) {
      buckets.delete(key);
    } else {
      b = new TokenBucket(limit.qps, limit.burst, now());
      if (buckets.size >= size) buckets.delete(buckets.keys().next().value!);
    }
    buckets.set(key, b);
    return b;
  };
  return (attrs) => {
    const key = keyOf(limit.type, attrs);
    return bucketOf(key).tryAccept(now()) ? undefined : `limit reached on type ${limit.type} for key ${key}`;
  };
}

export interface EventRateLimitOptions {
  /** The plugin's configuration from the admission configuration file; undefined: none given. */
  config: Record<string, unknown> | undefined;
  /** Clock in milliseconds, for tests. */
  now?: () => number;
}

/** The plugin; throws kube's start-up error for a missing or bad configuration. */
export function createEventRateLimit(opts: EventRateLimitOptions): AdmissionPlugin {
  let limits: EventRateLimitLimit[];
  try {
    limits = parseEventRateLimitConfig(opts.config);
  } catch (e) {
    throw new Error(`failed to initialize admission: couldn't init admission plugin "EventRateLimit": ${e instanceof Error ? e.message : String(e)}`);
  }
  const now = opts.now ?? Date.now;
  const enforcers = limits.map((l) => createEnforcer(l, now));
  return {
    name: 'EventRateLimit',
    handles: (op) => op === 'CREATE' || op === 'UPDATE',
    validate(attrs) {
      if (attrs.kind.group !== '' || attrs.kind.kind !== 'Event' || attrs.dryRun) return;
      // Every limit takes its token, as kube's does, even when an earlier one refused.
      const errs: string[] = [];
      for (const accept of enforcers) {
        const err = accept(attrs);
        if (err) errs.push(err);
      }
      if (errs.length === 0) return;
      const unique = [...new Set(errs)];
      const why = unique.length === 1 ? unique[0]! : `[${unique.join(', ')}]`;
      // kube's NewTooManyRequestsError: no details, so no Retry-After.
      throw new StatusError({ code: 429, reason: 'TooManyRequests', message: `Too many requests: ${why}` });
    },
  };
}
