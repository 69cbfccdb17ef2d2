/** Per-request state the filters establish and the handlers read. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Deprecation, UserInfo } from '@plinth/api';
import type { RequestInfo } from './request-info.js';
import type { ResourceTarget } from './handlers/target.js';

export interface RequestContext {
  info: RequestInfo;
  query: URLSearchParams;
  user?: UserInfo;
  /**
   * What a resource request addresses, once authorized: set by the resource-target filter
   * (handlers/target.ts), the only source of the resource, namespace and name handlers act on.
   */
  target?: ResourceTarget;
  /** When the request started (process.hrtime.bigint()). */
  start: bigint;
  /**
   * Set when the request addressed a deprecated version (kube's `deprecation` request marker):
   * the audit annotation `k8s.io/deprecated` and the `apiserver_requested_deprecated_apis`
   * gauge read it.
   */
  deprecated?: { group: string; version: string; resource: string; subresource: string; deprecation: Deprecation };
  /** The request's audit ID (the `Audit-Id` response header), set by the audit filter. */
  auditID?: string;
  /**
   * Annotations for the request's audit event, added by any layer (authorization decision and
   * reason, deprecation, admission); read by the audit filter when it writes the event.
   */
  auditAnnotations?: Record<string, string>;
  /**
   * The request's deadline (kube's request context deadline, set by withRequestTimeout for every
   * request that is not long-running): what waits on the client (its body, a seat in a queue)
   * gives up once it passes.
   */
  deadline?: RequestDeadline;
}

/**
 * A deadline that passes once (a small stand-in for an AbortSignal, which costs an EventTarget
 * per request): listeners run once when it expires, with the error the request ends with.
 */
export class RequestDeadline {
  #reason: Error | undefined;
  #listeners: Array<(reason: Error) => void> | undefined;

  /** The error the request was ended with, once the deadline passed. */
  get reason(): Error | undefined {
    return this.#reason;
  }

  /** Calls `fn` once the deadline passes (on the next turn if it has); returns what unregisters it. */
  onExpired(fn: (reason: Error) => void): () => void {
    if (this.#reason) {
      const reason = this.#reason;
      queueMicrotask(() => fn(reason));
      return () => undefined;
    }
    (this.#listeners ??= []).push(fn);
    return () => {
      const i = this.#listeners?.indexOf(fn) ?? -1;
      if (i >= 0) this.#listeners!.splice(i, 1);
    };
  }

  /** Passes the deadline: every listener runs once with `reason`. */
  expire(reason: Error): void {
    if (this.#reason) return;
    this.#reason = reason;
    const listeners = this.#listeners ?? [];
    this.#listeners = undefined;
    for (const fn of listeners) fn(reason);
  }
}

/** The request's deadline, if it has one (requests outside the chain and long-running ones have none). */
export function deadlineOf(req: IncomingMessage): RequestDeadline | undefined {
  return contexts.get(req)?.deadline;
}

/** Adds an audit annotation to the request's event (kube's audit.AddAuditAnnotation). */
export function addAuditAnnotation(req: IncomingMessage, key: string, value: string): void {
  const ctx = contextOf(req);
  (ctx.auditAnnotations ??= {})[key] = value;
}

const contexts = new WeakMap<IncomingMessage, RequestContext>();

export function setContext(req: IncomingMessage, ctx: RequestContext): void {
  contexts.set(req, ctx);
}

export function contextOf(req: IncomingMessage): RequestContext {
  const c = contexts.get(req);
  if (!c) throw new Error('request context missing: the request-info filter did not run');
  return c;
}

export type Handler = (req: IncomingMessage, res: ServerResponse) => Promise<void>;
