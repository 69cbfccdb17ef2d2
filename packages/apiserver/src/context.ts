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
