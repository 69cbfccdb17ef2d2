/**
 * The audit filters (kube's endpoints/filters: with_auditid.go, audit.go, authn_audit.go) and the
 * hooks through which handlers hand the audit event their request and response objects.
 *
 * Per request with a policy level above None, one AuditEvent lives in a WeakMap beside the request
 * context: RequestReceived is emitted at once, ResponseStarted when a long-running request (a
 * watch) sends its headers, ResponseComplete (or Panic) when the response is done.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import { isPlainObject, hasOwn, stringifyJson } from '@plinth/api';
import { contextOf, type Handler } from '../context.js';
import { LEVEL, type AuditPolicy, type RequestAuditConfig, type Stage } from './policy.js';
import { hrtimeToEpochMicros, nowMicros, sourceIPs, userAgentOf, type AuditEvent, type ResponseStatus } from './event.js';
import type { AuditBackend } from './backend.js';

interface AuditState {
  event: AuditEvent;
  config: RequestAuditConfig;
  backend: AuditBackend;
  /** A long-running request whose ResponseStarted was sent. */
  started: boolean;
  /** What was thrown that was not an API error (kube: a panic). */
  panic: unknown;
}

const states = new WeakMap<IncomingMessage, AuditState>();

/** The level the request is audited at ('None' when it is not audited). */
export function auditLevelOf(req: IncomingMessage): number {
  return states.get(req)?.config.rank ?? 0;
}

/** Whether the request has an audit event (its annotations are kept only then). */
export function isAudited(req: IncomingMessage): boolean {
  return states.has(req);
}

/**
 * kube's WithAuditID: the client's `Audit-ID` header, else a new UUID, is the request's audit ID;
 * it goes back in the `Audit-Id` response header on every response.
 */
export function withAuditID(next: Handler): Handler {
  return (req, res) => {
    const given = req.headers['audit-id'];
    const id = typeof given === 'string' && given !== '' ? given : randomUUID();
    contextOf(req).auditID = id;
    if (!res.hasHeader('Audit-Id')) res.setHeader('Audit-Id', id);
    return next(req, res);
  };
}

export interface AuditDeps {
  policy: AuditPolicy;
  backend: AuditBackend;
  /** The level each request's policy evaluation gave (`apiserver_audit_level_total`). */
  onLevel?: (level: string) => void;
}

function configFor(req: IncomingMessage, deps: AuditDeps): RequestAuditConfig {
  const { info, user } = contextOf(req);
  const config = deps.policy.evaluate({
    user,
    verb: info.verb,
    isResourceRequest: info.isResourceRequest,
    path: info.path,
    apiGroup: info.apiGroup,
    namespace: info.namespace,
    resource: info.resource,
    subresource: info.subresource,
    name: info.name,
  });
  deps.onLevel?.(config.level);
  return config;
}

function newEvent(req: IncomingMessage, config: RequestAuditConfig): AuditEvent {
  const ctx = contextOf(req);
  const { info } = ctx;
  return {
    level: config.level,
    auditID: ctx.auditID ?? '',
    stage: 'RequestReceived',
    requestURI: req.url ?? '/',
    verb: info.verb,
    user: ctx.user,
    impersonatedUser: undefined,
    sourceIPs: sourceIPs(req),
    userAgent: userAgentOf(req),
    objectRef: info.isResourceRequest
      ? { resource: info.resource, namespace: info.namespace, name: info.name, uid: '', apiGroup: info.apiGroup, apiVersion: info.apiVersion, resourceVersion: '', subresource: info.subresource }
      : undefined,
    responseStatus: undefined,
    requestObject: undefined,
    responseObject: undefined,
    requestReceivedTimestamp: hrtimeToEpochMicros(ctx.start),
    stageTimestamp: 0,
    annotations: undefined,
  };
}

/** kube's processAuditEvent: the stage unless omitted, stamped, with the annotations so far. */
function emit(req: IncomingMessage, s: AuditState, stage: Stage): void {
  if (s.config.omitStages.has(stage)) return;
  const ev = s.event;
  ev.stage = stage;
  ev.stageTimestamp = stage === 'RequestReceived' ? ev.requestReceivedTimestamp : nowMicros();
  const ctx = contextOf(req);
  ev.annotations = ctx.auditAnnotations;
  // The audit filter runs before impersonation: a user changed below it is the impersonated one.
  if (ctx.user !== ev.user && ev.user) ev.impersonatedUser = ctx.user;
  if (stage !== 'RequestReceived') addDeprecation(req, ev);
  s.backend.processEvent(ev);
}

/** kube's deprecation annotations, for a request to a deprecated version. */
function addDeprecation(req: IncomingMessage, ev: AuditEvent): void {
  const dep = contextOf(req).deprecated;
  if (!dep) return;
  const a = (ev.annotations = contextOf(req).auditAnnotations ??= {});
  a['k8s.io/deprecated'] = 'true';
  if (dep.deprecation.removedRelease) a['k8s.io/removed-release'] = dep.deprecation.removedRelease;
}

/** The status code goes in once the headers go out (kube's auditResponseWriter.processCode). */
function setCode(ev: AuditEvent, code: number): void {
  (ev.responseStatus ??= {}).code = code;
}

/** At the end of the response: ResponseComplete, or Panic; kube's faked status when nothing was sent. */
function complete(req: IncomingMessage, res: ServerResponse, s: AuditState, longRunning: boolean): void {
  const ev = s.event;
  if (s.panic !== undefined) {
    ev.responseStatus = { status: 'Failure', reason: 'InternalError', message: `APIServer panic'd: ${String(s.panic)}`, code: 500 };
    emit(req, s, 'Panic');
    return;
  }
  if (!res.headersSent) {
    const faked: ResponseStatus = { status: 'Success', message: 'Connection closed early', code: 200 };
    if (!ev.responseStatus && longRunning) {
      ev.responseStatus = faked;
      emit(req, s, 'ResponseStarted');
    }
    ev.responseStatus ??= faked;
  } else {
    setCode(ev, res.statusCode);
  }
  emit(req, s, 'ResponseComplete');
}

/**
 * kube's WithAudit: evaluates the policy for the (authenticated, not yet impersonated) request;
 * above None the event's stages go to the backend. Runs after authentication, before impersonation.
 */
export function withAudit(next: Handler, deps: AuditDeps): Handler {
  return async (req, res) => {
    const config = configFor(req, deps);
    if (config.rank === LEVEL.None) return next(req, res);
    const s: AuditState = { event: newEvent(req, config), config, backend: deps.backend, started: false, panic: undefined };
    states.set(req, s);
    emit(req, s, 'RequestReceived');
    const longRunning = contextOf(req).info.verb === 'watch';
    if (longRunning) {
      // ResponseStarted when the headers go out (res.write and flushHeaders call writeHead too).
      const writeHead = res.writeHead;
      res.writeHead = function (this: ServerResponse, ...args: Parameters<ServerResponse['writeHead']>) {
        if (!s.started) {
          s.started = true;
          setCode(s.event, typeof args[0] === 'number' ? args[0] : res.statusCode);
          emit(req, s, 'ResponseStarted');
        }
        return writeHead.apply(this, args);
      } as ServerResponse['writeHead'];
    }
    res.once('close', () => complete(req, res, s, longRunning));
    try {
      await next(req, res);
    } catch (e) {
      if (typeof (e as { code?: unknown })?.code !== 'number') s.panic = e instanceof Error ? e.message : e;
      throw e;
    }
  };
}

/**
 * kube's WithFailedAuthenticationAudit: a request refused by authentication (401) gets one event,
 * at ResponseStarted, with no user. Wraps the authentication filter; costs a try block otherwise.
 */
export function withFailedAuthenticationAudit(next: Handler, deps: AuditDeps): Handler {
  return async (req, res) => {
    try {
      await next(req, res);
    } catch (e) {
      if ((e as { code?: unknown })?.code === 401 && !states.has(req) && !res.headersSent) {
        const config = configFor(req, deps);
        if (config.rank > LEVEL.None) {
          const s: AuditState = { event: newEvent(req, config), config, backend: deps.backend, started: true, panic: undefined };
          s.event.responseStatus = { message: authMethods(req) };
          states.set(req, s);
          res.once('close', () => {
            setCode(s.event, res.statusCode);
            emit(req, s, 'ResponseStarted');
          });
        }
      }
      throw e;
    }
  };
}

/** kube's getAuthMethods: what the client tried. */
function authMethods(req: IncomingMessage): string {
  const methods: string[] = [];
  const auth = (req.headers['authorization'] ?? '').trim();
  const parts = auth.split(' ');
  if (/^basic$/i.test(parts[0] ?? '') && parts.length > 1) methods.push('basic');
  if (parts.length > 1 && parts[0]!.toLowerCase() === 'bearer') methods.push('bearer');
  if ((contextOf(req).query.get('access_token') ?? '').trim()) methods.push('access_token');
  const socket = req.socket as { getPeerCertificate?: () => { raw?: Buffer } };
  if (typeof socket.getPeerCertificate === 'function' && socket.getPeerCertificate()?.raw) methods.push('x509');
  return methods.length > 0 ? `Authentication failed, attempted: ${methods.join(', ')}` : 'Authentication failed, no credentials provided';
}

/** A copy without metadata.managedFields (of the object, a list's items, a table's rows' objects). */
function withoutManagedFields(obj: unknown): unknown {
  if (!isPlainObject(obj)) return obj;
  let out: Record<string, unknown> = obj;
  const meta = obj['metadata'];
  if (isPlainObject(meta) && hasOwn(meta, 'managedFields')) {
    const { managedFields: _, ...rest } = meta;
    out = { ...out, metadata: rest };
  }
  if (Array.isArray(obj['items'])) out = { ...out, items: obj['items'].map(withoutManagedFields) };
  if (Array.isArray(obj['rows'])) {
    out = { ...out, rows: obj['rows'].map((r: unknown) => (isPlainObject(r) && r['object'] !== undefined ? { ...r, object: withoutManagedFields(r['object']) } : r)) };
  }
  return out;
}

function encodeObject(s: AuditState, obj: unknown): string {
  return stringifyJson(s.config.omitManagedFields ? withoutManagedFields(obj) : obj);
}

/**
 * kube's audit.LogRequestObject: a decoded request object names the event's object (namespace,
 * name, uid, resourceVersion where the URL did not) and, at Request level and above, is logged.
 */
export function auditRequestObject(req: IncomingMessage, obj: unknown): void {
  const s = states.get(req);
  if (!s) return;
  const ref = s.event.objectRef;
  const meta = isPlainObject(obj) ? obj['metadata'] : undefined;
  if (ref && isPlainObject(meta)) {
    const str = (v: unknown): string => (typeof v === 'string' ? v : '');
    ref.namespace ||= str(meta['namespace']);
    ref.name ||= str(meta['name']);
    ref.uid ||= str(meta['uid']);
    ref.resourceVersion ||= str(meta['resourceVersion']);
  }
  if (s.config.rank >= LEVEL.Request) s.event.requestObject = encodeObject(s, obj);
}

/** kube's audit.LogRequestPatch: at Request level and above, the patch is the request object. */
export function auditRequestPatch(req: IncomingMessage, patch: unknown): void {
  const s = states.get(req);
  if (s && s.config.rank >= LEVEL.Request) s.event.requestObject = stringifyJson(patch);
}

/**
 * kube's audit.LogResponseObject: a Status written is the event's responseStatus; at
 * RequestResponse level the object written is logged.
 */
/** Whether auditResponseObject records the object itself (RequestResponse): a writer of bytes decodes them only then. */
export function auditRecordsResponseObject(req: IncomingMessage): boolean {
  const s = states.get(req);
  return !!s && s.config.rank >= LEVEL.RequestResponse;
}

export function auditResponseObject(req: IncomingMessage, obj: unknown): void {
  const s = states.get(req);
  if (!s) return;
  if (isPlainObject(obj) && obj['kind'] === 'Status' && typeof obj['code'] === 'number') {
    s.event.responseStatus = {
      status: obj['status'] as string | undefined,
      message: obj['message'] as string | undefined,
      reason: obj['reason'] as string | undefined,
      details: obj['details'],
      code: obj['code'],
    };
  }
  if (s.config.rank >= LEVEL.RequestResponse) s.event.responseObject = encodeObject(s, obj);
}
