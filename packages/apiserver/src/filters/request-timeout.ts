/**
 * kube's WithRequestDeadline and WithTimeoutForNonLongRunningRequests in one filter: every request
 * that is not long-running (watch, proxy, exec, attach, log, portforward) must be complete —
 * body read, work done, response written — within --request-timeout of its arrival, or within the
 * shorter `timeout` query parameter (a Go duration; 0, negative or longer: the server's).
 *
 * At the deadline the request's RequestDeadline expires, so what still waits on the client gives up
 * (a body that has not arrived, a place in a priority level's queue) and its seat is freed; the
 * client gets kube's 504 `Timeout` Status ("Timeout: request did not complete within the allotted
 * timeout") if nothing was sent yet, else the connection is cut (kube: http.ErrAbortHandler), so a
 * response the client does not read ends there too. A connection whose request body was not read
 * to its end is closed after the 504: it cannot carry another request.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { badRequest, timeoutError } from '@plinth/api';
import { contextOf, RequestDeadline, type Handler } from '../context.js';
import { isLongRunningRequest } from '../request-info.js';
import { parseGoDuration } from '../duration.js';
import { writeError } from '../http.js';
import type { Logger } from '../log.js';

export interface RequestTimeoutOptions {
  /** --request-timeout in ms (kube's requestTimeoutMaximum); 0: none but the `timeout` parameter's. */
  timeoutMs: number;
  log: Logger;
}

/** kube's invalidTimeoutInURL. */
const INVALID_TIMEOUT = 'invalid timeout specified in the request URL';
const TIMED_OUT = 'request did not complete within the allotted timeout';

/** The request's timeout in ms: the `timeout` parameter when positive and shorter, else the server's (0: none). */
export function requestTimeoutOf(query: URLSearchParams, serverTimeoutMs: number): number {
  const param = query.get('timeout');
  if (param === null || param === '') return serverTimeoutMs;
  let asked: number;
  try {
    asked = parseGoDuration(param);
  } catch (e) {
    throw badRequest(`${INVALID_TIMEOUT} - ${(e as Error).message}`);
  }
  return asked > 0 && (serverTimeoutMs === 0 || asked < serverTimeoutMs) ? asked : serverTimeoutMs;
}

function swallow(): void {
  // After a timeout the handler may still write: those writes fail quietly.
}

/**
 * The filter (kube's chain has it right after request info, before authentication). Cheap on the
 * hot path: a timer and a listener per request, no promise of its own; the timer is disarmed
 * once the response is complete (its last byte handed to the OS) or the connection closes.
 */
export function withRequestTimeout(next: Handler, opts: RequestTimeoutOptions): Handler {
  return async (req: IncomingMessage, res: ServerResponse) => {
    const ctx = contextOf(req);
    if (isLongRunningRequest(ctx.info)) return next(req, res);
    const timeoutMs = requestTimeoutOf(ctx.query, opts.timeoutMs);
    if (timeoutMs === 0) return next(req, res);
    const deadline = new RequestDeadline();
    ctx.deadline = deadline;
    let timedOut = false;
    const expire = (): void => {
      timedOut = true;
      const err = timeoutError(TIMED_OUT);
      res.on('error', swallow);
      deadline.expire(err);
      if (!res.headersSent && !res.destroyed) writeError(req, res, err);
      else if (!res.writableFinished) res.destroy();
    };
    // From the request's arrival, as kube's deadline runs from the received timestamp.
    const left = timeoutMs - Number(process.hrtime.bigint() - ctx.start) / 1e6;
    const timer = setTimeout(expire, Math.max(0, left));
    // A response emits 'close' once complete (after 'finish'), or when its connection goes first.
    res.once('close', () => clearTimeout(timer));
    try {
      await next(req, res);
    } catch (e) {
      // Past the deadline the client has its answer: what the handler does now is not its concern.
      if (!timedOut) throw e;
      opts.log.v(2, 'request failed after its timeout', { path: ctx.info.path, error: String(e) });
    }
  };
}
