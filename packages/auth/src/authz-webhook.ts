/**
 * kube's webhook authorizer (staging/src/k8s.io/apiserver/plugin/pkg/authorizer/webhook): each
 * request becomes a SubjectAccessReview (authorization.k8s.io v1beta1 or v1) POSTed to the service
 * the kubeconfig names; answers are cached by the review's spec — allowed ones for
 * `--authorization-webhook-cache-authorized-ttl`, the others for the unauthorized TTL. A webhook
 * that fails or answers garbage has no opinion, with the error (kube's decisionOnError).
 */
import { isPlainObject } from '@plinth/api';
import type { Attributes, Authorizer, Decision } from './authorizer.js';
import { createGenericWebhook, type Backoff, type GenericWebhook } from './webhook-client.js';
import type { RestClientConfig } from './kubeconfig.js';

export type SubjectAccessReviewVersion = 'v1' | 'v1beta1';

/** kube's maxControlledAttrCacheSize: requests with more attribute bytes than this are not cached. */
const MAX_CACHED_ATTRIBUTE_BYTES = 10_000;
/** Entries kept at most (least recently used evicted first). */
const MAX_CACHE_ENTRIES = 8192;

/**
 * The review sent for a request. v1beta1 names the groups `group` (kube's v1beta1 JSON tag), v1
 * `groups`.
 */
export function subjectAccessReviewRequest(version: SubjectAccessReviewVersion, a: Attributes): Record<string, unknown> {
  const spec: Record<string, unknown> = {};
  if (a.isResourceRequest) {
    const ra: Record<string, string> = {};
    const put = (k: string, v: string): void => {
      if (v) ra[k] = v;
    };
    put('namespace', a.namespace);
    put('verb', a.verb);
    put('group', a.apiGroup);
    put('version', a.apiVersion);
    put('resource', a.resource);
    put('subresource', a.subresource);
    put('name', a.name);
    spec['resourceAttributes'] = ra;
  } else {
    spec['nonResourceAttributes'] = { ...(a.path ? { path: a.path } : {}), ...(a.verb ? { verb: a.verb } : {}) };
  }
  if (a.user.name) spec['user'] = a.user.name;
  if (a.user.groups.length > 0) spec[version === 'v1beta1' ? 'group' : 'groups'] = [...a.user.groups];
  if (a.user.extra && Object.keys(a.user.extra).length > 0) spec['extra'] = a.user.extra;
  if (a.user.uid) spec['uid'] = a.user.uid;
  return { kind: 'SubjectAccessReview', apiVersion: `authorization.k8s.io/${version}`, metadata: { creationTimestamp: null }, spec, status: { allowed: false } };
}

export interface SubjectAccessReviewStatus {
  allowed: boolean;
  denied: boolean;
  reason: string;
}

/** The answer's status as client-go decodes a SubjectAccessReview of `version`. */
export function decodeSubjectAccessReview(body: unknown, version: SubjectAccessReviewVersion): SubjectAccessReviewStatus {
  const expected = `authorization.k8s.io/${version}`;
  if (!isPlainObject(body)) throw new Error(`the webhook's answer is not a ${expected} SubjectAccessReview`);
  const kind = body['kind'] ?? '';
  const apiVersion = body['apiVersion'] ?? '';
  if ((kind !== '' && kind !== 'SubjectAccessReview') || (apiVersion !== '' && apiVersion !== expected)) {
    throw new Error(`the webhook answered ${JSON.stringify(String(apiVersion))} ${JSON.stringify(String(kind))}, not a ${expected} SubjectAccessReview`);
  }
  const s = body['status'] ?? {};
  if (!isPlainObject(s)) throw new Error('decoding SubjectAccessReview: status must be an object');
  const bool = (k: string): boolean => {
    const v = s[k] ?? false;
    if (typeof v !== 'boolean') throw new Error(`decoding SubjectAccessReview: status.${k} must be a boolean`);
    return v;
  };
  const reason = s['reason'] ?? '';
  if (typeof reason !== 'string') throw new Error('decoding SubjectAccessReview: status.reason must be a string');
  return { allowed: bool('allowed'), denied: bool('denied'), reason };
}

export interface WebhookAuthorizerOptions {
  client: RestClientConfig;
  version: SubjectAccessReviewVersion;
  authorizedTTLms: number;
  unauthorizedTTLms: number;
  retryBackoff?: Backoff;
  requestTimeoutMs?: number;
  now?: () => number;
  log?: { error(msg: string, fields?: Record<string, unknown>): void };
}

/** kube's shouldCache: the size of what the requester controls (the user's own fields are not counted). */
function attributeBytes(a: Attributes): number {
  return a.namespace.length + a.verb.length + a.apiGroup.length + a.apiVersion.length + a.resource.length + a.subresource.length + a.name.length + a.path.length;
}

export function createWebhookAuthorizer(opts: WebhookAuthorizerOptions): Authorizer {
  const webhook: GenericWebhook = createGenericWebhook({
    config: opts.client,
    ...(opts.retryBackoff ? { retryBackoff: opts.retryBackoff } : {}),
    ...(opts.requestTimeoutMs !== undefined ? { requestTimeoutMs: opts.requestTimeoutMs } : {}),
  });
  const now = opts.now ?? Date.now;
  // Map order is recency order: a hit moves its entry to the end, eviction takes the first.
  const cache = new Map<string, { status: SubjectAccessReviewStatus; expiresAt: number }>();

  const decide = (s: SubjectAccessReviewStatus): Decision => {
    if (s.denied && s.allowed) return { decision: 'deny', reason: s.reason, error: 'webhook subject access review returned both allow and deny response' };
    if (s.denied) return { decision: 'deny', reason: s.reason };
    if (s.allowed) return { decision: 'allow', ...(s.reason ? { reason: s.reason } : {}) };
    return { decision: 'no-opinion', ...(s.reason ? { reason: s.reason } : {}) };
  };

  return {
    async authorize(a) {
      const review = subjectAccessReviewRequest(opts.version, a);
      const key = JSON.stringify(review['spec']);
      const hit = cache.get(key);
      if (hit) {
        cache.delete(key);
        if (hit.expiresAt > now()) {
          cache.set(key, hit);
          return decide(hit.status);
        }
      }
      let status: SubjectAccessReviewStatus;
      try {
        status = decodeSubjectAccessReview(await webhook.post(review, AbortSignal.timeout(60_000)), opts.version);
      } catch (e) {
        // kube's decisionOnError (no opinion), with the error: unless another mode allows, a 500.
        const error = e instanceof Error ? e.message : String(e);
        opts.log?.error('Failed to make webhook authorizer request', { error });
        return { decision: 'no-opinion', error };
      }
      const ttl = status.allowed ? opts.authorizedTTLms : opts.unauthorizedTTLms;
      if (ttl > 0 && attributeBytes(a) < MAX_CACHED_ATTRIBUTE_BYTES) {
        while (cache.size >= MAX_CACHE_ENTRIES) cache.delete(cache.keys().next().value!);
        cache.set(key, { status, expiresAt: now() + ttl });
      }
      return decide(status);
    },
    rulesFor() {
      return { resourceRules: [], nonResourceRules: [], incomplete: true, evaluationError: 'webhook authorizer does not support user rule resolution' };
    },
    close() {
      cache.clear();
      webhook.close();
    },
  };
}
