/**
 * The handler chain's filters, each `withX(next, deps)`. Assembled in order in server.ts
 * (kube's DefaultBuildHandlerChain): recover → request info → authenticate → route.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { tooManyRequests, unauthorized } from '@plinth/api';
import type { Authenticator } from '@plinth/auth';
import { setContext, contextOf, type Handler } from '../context.js';
import { parseRequestInfo, splitRequestTarget } from '../request-info.js';
import { writeError } from '../http.js';
import type { Logger } from '../log.js';

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

/** Parses the request target once, as received (never normalised), into a RequestInfo. */
export function withRequestInfo(next: Handler): Handler {
  return async (req, res) => {
    const target = splitRequestTarget(req.url ?? '/');
    const query = new URLSearchParams(target.query);
    setContext(req, { info: parseRequestInfo(req.method ?? 'GET', target.path, query), query, start: process.hrtime.bigint() });
    await next(req, res);
  };
}

/** The identity of a request that presented no credential (kube's anonymous authenticator). */
const ANONYMOUS = { name: 'system:anonymous', groups: ['system:unauthenticated'] };

/**
 * Authenticates every request. A credential that is presented and not accepted is a 401, always.
 * A request with no credential at all is anonymous where `allowAnonymous` says so (until
 * authorization exists: only the public health and version paths), a 401 elsewhere.
 */
export function withAuthentication(next: Handler, authenticator: Authenticator, allowAnonymous: (req: IncomingMessage) => boolean): Handler {
  return async (req: IncomingMessage, res: ServerResponse) => {
    const result = await authenticator.authenticate({ headers: req.headers });
    if (result.kind === 'authenticated') {
      // Credentials stop here: nothing below sees the Authorization header.
      delete req.headers['authorization'];
      contextOf(req).user = result.user;
    } else if (result.kind === 'no-opinion' && allowAnonymous(req)) {
      contextOf(req).user = { ...ANONYMOUS, groups: [...ANONYMOUS.groups] };
    } else {
      throw unauthorized();
    }
    await next(req, res);
  };
}

const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * kube's max-in-flight filter: at most `readonly` non-mutating and `mutating` mutating requests at
 * once (0: no limit); more get 429 TooManyRequests with Retry-After. Watches are long-running and
 * not counted, and `system:masters` is never limited, as in kube — which is why this runs after
 * authentication (kube's chain has it there too).
 */
export function withMaxInFlight(next: Handler, limits: { readonly: number; mutating: number }): Handler {
  let readonly = 0;
  let mutating = 0;
  return async (req, res) => {
    const { info, user } = contextOf(req);
    if (info.verb === 'watch' || user?.groups.includes('system:masters')) return next(req, res);
    const isMutating = MUTATING.has(req.method ?? '');
    const limit = isMutating ? limits.mutating : limits.readonly;
    if (limit > 0 && (isMutating ? mutating : readonly) >= limit) throw tooManyRequests();
    if (isMutating) mutating++;
    else readonly++;
    try {
      await next(req, res);
    } finally {
      if (isMutating) mutating--;
      else readonly--;
    }
  };
}
