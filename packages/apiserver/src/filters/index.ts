/**
 * The handler chain's filters, each `withX(next, deps)`. Assembled in order in server.ts
 * (kube's DefaultBuildHandlerChain): recover → request info → authenticate → route.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { X509Certificate } from 'node:crypto';
import { forbidden, unauthorized } from '@plinth/api';
import { ANONYMOUS_USER, UNAUTHENTICATED_GROUP, forbiddenMessage, type Attributes, type Authenticator, type Authorizer } from '@plinth/auth';
import { setContext, contextOf, addAuditAnnotation, type Handler } from '../context.js';
import { isAudited } from '../audit/filter.js';
import { parseRequestInfo, splitRequestTarget } from '../request-info.js';
import { responseDone, writeError } from '../http.js';
import type { Logger } from '../log.js';
import { writeTooManyRequests } from './priority-and-fairness.js';

/** Turns anything thrown below into a Status response; never leaks a stack to the client. */
export function withRecover(next: Handler, log: Logger): Handler {
  return async (req, res) => {
    try {
      await next(req, res);
    } catch (e) {
      const code = (e as { code?: unknown }).code;
      if (typeof code !== 'number' || code >= 500) log.error('request failed', { method: req.method, path: splitRequestTarget(req.url ?? '/').path, error: String((e as Error)?.stack ?? e) });
      writeError(req, res, e);
    }
  };
}

/**
 * kube's WithCacheControl: every response says `Cache-Control: no-cache, private` (all of it is
 * behind authentication and authorization), set before the chain runs so a handler that sets its
 * own replaces it. Outside every other filter: 401s, 403s, 429s, 504s and 404s carry it too.
 */
export function withCacheControl(next: Handler): Handler {
  return (req, res) => {
    res.setHeader('Cache-Control', 'no-cache, private');
    return next(req, res);
  };
}

/** Parses the request target once, as received (never normalised), into a RequestInfo. */
export function withRequestInfo(next: Handler): Handler {
  return async (req, res) => {
    const target = splitRequestTarget(req.url ?? '/');
    const query = new URLSearchParams(target.query);
    setContext(req, { info: parseRequestInfo(req.method ?? 'GET', target.path, query), query, start: process.hrtime.bigint() });
    await next(req, res);
  };
}

/** The certificate chains TLS peers presented, parsed once per connection (keep-alive reuses it). */
const peerChains = new WeakMap<object, readonly X509Certificate[]>();
const NO_CERTIFICATES: readonly X509Certificate[] = Object.freeze([]);

/** The client's certificate chain, leaf first, as presented (unverified); empty when none. */
export function peerCertificates(req: IncomingMessage): readonly X509Certificate[] {
  const socket = req.socket as TLSSocket;
  if (typeof socket.getPeerCertificate !== 'function') return NO_CERTIFICATES;
  const cached = peerChains.get(socket);
  if (cached) return cached;
  const chain: X509Certificate[] = [];
  let cert = socket.getPeerCertificate(true);
  const seen = new Set<unknown>();
  // The chain links each certificate to its issuer; a self-signed root links to itself.
  while (cert && cert.raw && !seen.has(cert)) {
    seen.add(cert);
    chain.push(new X509Certificate(cert.raw));
    cert = cert.issuerCertificate;
  }
  const out = chain.length === 0 ? NO_CERTIFICATES : Object.freeze(chain);
  peerChains.set(socket, out);
  return out;
}

/** Where withAuthentication counts its outcomes (kube's authentication_attempts{result}). */
export interface AuthenticationMetrics {
  authenticationAttempt(result: 'success' | 'failure' | 'error'): void;
}

/**
 * Authenticates every request (kube's WithAuthentication). A credential that is presented and not
 * accepted is a 401, always. A request with no credential at all is `system:anonymous` in
 * `system:unauthenticated` with --anonymous-auth (authorization then decides), a 401 without.
 */
export function withAuthentication(next: Handler, authenticator: Authenticator, opts: { anonymous: boolean; metrics?: AuthenticationMetrics }): Handler {
  const metrics = opts.metrics;
  return async (req: IncomingMessage, res: ServerResponse) => {
    const result = await authenticator.authenticate({ headers: req.headers, rawHeaders: req.rawHeaders, peerCertificates: peerCertificates(req) });
    if (result.kind === 'authenticated') {
      // Credentials stop here: nothing below sees the Authorization header.
      delete req.headers['authorization'];
      contextOf(req).user = result.user;
      metrics?.authenticationAttempt('success');
    } else if (result.kind === 'no-opinion' && opts.anonymous) {
      // kube's anonymous authenticator is the union's last member: its answer is a success.
      contextOf(req).user = { name: ANONYMOUS_USER, groups: [UNAUTHENTICATED_GROUP] };
      metrics?.authenticationAttempt('success');
    } else {
      // A credential presented and not accepted is kube's authenticator error ("error"); no
      // credential at all without --anonymous-auth is a plain "failure".
      metrics?.authenticationAttempt(result.kind === 'rejected' ? 'error' : 'failure');
      throw unauthorized();
    }
    await next(req, res);
  };
}

/** The authorizer's view of a request. */
export function attributesOf(req: IncomingMessage): Attributes {
  const { info, user } = contextOf(req);
  return {
    user: user!,
    verb: info.verb,
    isResourceRequest: info.isResourceRequest,
    path: info.path,
    apiGroup: info.apiGroup,
    apiVersion: info.apiVersion,
    namespace: info.namespace,
    resource: info.resource,
    subresource: info.subresource,
    name: info.name,
  };
}

const DECISION_ANNOTATION = 'authorization.k8s.io/decision';
const REASON_ANNOTATION = 'authorization.k8s.io/reason';

/**
 * kube's WithAuthorization: a request not allowed is a 403 Forbidden naming the user and the
 * action (and the authorizers' reasons), or a 500 when an authorizer failed.
 */
export function withAuthorization(next: Handler, authorizer: Authorizer): Handler {
  return async (req: IncomingMessage, res: ServerResponse) => {
    const attrs = attributesOf(req);
    const decision = await authorizer.authorize(attrs);
    // kube's audit annotations of the decision (kept only when the request is audited).
    const audited = isAudited(req);
    if (audited && decision.decision === 'allow') {
      addAuditAnnotation(req, DECISION_ANNOTATION, 'allow');
      addAuditAnnotation(req, REASON_ANNOTATION, decision.reason ?? '');
    }
    // An authorizer that failed (and no other allowed): kube's responsewriters.InternalError, plain text.
    if (decision.decision !== 'allow' && decision.error) {
      if (audited) addAuditAnnotation(req, REASON_ANNOTATION, 'internal error');
      const text = `Internal Server Error: ${JSON.stringify(req.url ?? '')}: ${decision.error}`.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
      res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8', 'x-content-type-options': 'nosniff' });
      res.end(`${text}\n`);
      return;
    }
    if (decision.decision !== 'allow') {
      if (audited) {
        addAuditAnnotation(req, DECISION_ANNOTATION, 'forbid');
        addAuditAnnotation(req, REASON_ANNOTATION, decision.reason ?? '');
      }
      const msg = forbiddenMessage(attrs);
      throw forbidden({ group: attrs.apiGroup, resource: attrs.resource }, attrs.name, decision.reason ? `${msg}: ${decision.reason}` : msg);
    }
    await next(req, res);
  };
}

/** kube's non-mutating verbs (everything else counts against --max-mutating-requests-inflight). */
const NON_MUTATING_VERBS = new Set(['get', 'list', 'watch']);
/** kube's long-running requests (BasicLongRunningRequestCheck): not counted. */
const LONG_RUNNING_SUBRESOURCES = new Set(['proxy', 'attach', 'exec', 'log', 'portforward']);

/**
 * kube's max-in-flight filter (used with the APIPriorityAndFairness gate off): at most `readonly`
 * non-mutating (get, list, watch) and `mutating` other requests at once (0: no limit); more get
 * kube's 429 — plain text `Too many requests, please try again later.` with `Retry-After: 1`.
 * Long-running requests (watches, proxy, exec, …) are not counted, and `system:masters` is never
 * refused, as in kube — which is why this runs after authentication (kube's chain has it there too).
 */
export function withMaxInFlight(next: Handler, limits: { readonly: number; mutating: number }): Handler {
  if (limits.readonly === 0 && limits.mutating === 0) return next;
  let readonly = 0;
  let mutating = 0;
  return async (req, res) => {
    const { info, user } = contextOf(req);
    if (info.verb === 'watch' || (info.isResourceRequest && (info.verb === 'proxy' || LONG_RUNNING_SUBRESOURCES.has(info.subresource)))) return next(req, res);
    const isMutating = !NON_MUTATING_VERBS.has(info.verb);
    const limit = isMutating ? limits.mutating : limits.readonly;
    if (limit === 0) return next(req, res);
    if ((isMutating ? mutating : readonly) >= limit) {
      if (user?.groups.includes('system:masters')) return next(req, res);
      writeTooManyRequests(res);
      return;
    }
    if (isMutating) mutating++;
    else readonly++;
    try {
      await next(req, res);
      // Counted until the response is written (kube's handler blocks in Write until then).
      await responseDone(res);
    } finally {
      if (isMutating) mutating--;
      else readonly--;
    }
  };
}
