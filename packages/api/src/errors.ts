/**
 * The API error: an HTTP code, a kube `reason`, a message and details, written out as a `Status`
 * by the HTTP layer and nowhere else. Constructors mirror kube's `k8s.io/apimachinery/pkg/api/errors`
 * so messages read the same to clients that match on them.
 */
import type { Status, StatusCause, StatusDetails } from './types.js';
import { type FieldError, fieldErrorBody, fieldErrorString } from './field-errors.js';

export type StatusReason =
  | 'Unauthorized'
  | 'Forbidden'
  | 'NotFound'
  | 'AlreadyExists'
  | 'Conflict'
  | 'Gone'
  | 'Invalid'
  | 'ServerTimeout'
  | 'Timeout'
  | 'TooManyRequests'
  | 'BadRequest'
  | 'MethodNotAllowed'
  | 'NotAcceptable'
  | 'RequestEntityTooLarge'
  | 'UnsupportedMediaType'
  | 'InternalError'
  | 'Expired'
  | 'ServiceUnavailable'
  | '';

/** A group and resource (plural), e.g. `{group: 'rbac.authorization.k8s.io', resource: 'clusterrolebindings'}`. */
export interface GroupResource {
  group: string;
  resource: string;
}

/** A group and kind, e.g. `{group: '', kind: 'ServiceAccount'}`. */
export interface GroupKind {
  group: string;
  kind: string;
}

/** kube's `GroupResource.String()`: `resource` or `resource.group`. */
export function groupResourceString(gr: GroupResource): string {
  return gr.group ? `${gr.resource}.${gr.group}` : gr.resource;
}

export function groupKindString(gk: GroupKind): string {
  return gk.group ? `${gk.kind}.${gk.group}` : gk.kind;
}

export interface StatusErrorInit {
  code: number;
  reason: StatusReason;
  message: string;
  details?: StatusDetails;
  /** A continue token for the Status's list metadata (kube's inconsistent-continue 410). */
  continue?: string;
}

/** An error that is answered with a kube `Status` body. */
export class StatusError extends Error {
  readonly code: number;
  readonly reason: StatusReason;
  readonly details: StatusDetails | undefined;
  readonly continue: string | undefined;

  constructor(init: StatusErrorInit) {
    super(init.message);
    this.name = 'StatusError';
    this.code = init.code;
    this.reason = init.reason;
    this.details = init.details;
    this.continue = init.continue;
  }

  toStatus(): Status {
    const s: Status = { kind: 'Status', apiVersion: 'v1', metadata: this.continue ? { continue: this.continue } : {}, status: 'Failure', message: this.message };
    // kube's StatusReasonUnknown is "", which its JSON omits (omitempty).
    if (this.reason !== '') s.reason = this.reason;
    if (this.details) s.details = this.details;
    s.code = this.code;
    return s;
  }
}

export function isStatusError(e: unknown): e is StatusError {
  return e instanceof StatusError;
}

export function reasonOf(e: unknown): StatusReason | undefined {
  return isStatusError(e) ? e.reason : undefined;
}

export const isNotFound = (e: unknown): boolean => reasonOf(e) === 'NotFound';
export const isAlreadyExists = (e: unknown): boolean => reasonOf(e) === 'AlreadyExists';
export const isConflict = (e: unknown): boolean => reasonOf(e) === 'Conflict';

export function notFound(gr: GroupResource, name: string): StatusError {
  const details: StatusDetails = { name, kind: gr.resource };
  if (gr.group) details.group = gr.group;
  return new StatusError({ code: 404, reason: 'NotFound', message: `${groupResourceString(gr)} "${name}" not found`, details });
}

export function alreadyExists(gr: GroupResource, name: string): StatusError {
  const details: StatusDetails = { name, kind: gr.resource };
  if (gr.group) details.group = gr.group;
  return new StatusError({ code: 409, reason: 'AlreadyExists', message: `${groupResourceString(gr)} "${name}" already exists`, details });
}

/**
 * kube's NewGenerateNameConflict (rest.CheckGeneratedNameError): the name the server generated from
 * `generateName` was taken; the client may retry after a second and get another.
 */
export function generateNameConflict(gr: GroupResource, name: string): StatusError {
  const details: StatusDetails = { name, kind: gr.resource, retryAfterSeconds: 1 };
  if (gr.group) details.group = gr.group;
  return new StatusError({ code: 409, reason: 'AlreadyExists', message: `${groupResourceString(gr)} "${name}" already exists, the server was not able to generate a unique name for the object`, details });
}

export function conflict(gr: GroupResource, name: string, why: string): StatusError {
  const details: StatusDetails = { name, kind: gr.resource };
  if (gr.group) details.group = gr.group;
  return new StatusError({
    code: 409,
    reason: 'Conflict',
    message: `Operation cannot be fulfilled on ${groupResourceString(gr)} "${name}": ${why}`,
    details,
  });
}

/** The optimistic-concurrency failure, word for word as kube's registry reports it. */
export const OPTIMISTIC_LOCK_MESSAGE = 'the object has been modified; please apply your changes to the latest version and try again';

export function invalid(gk: GroupKind, name: string, errs: FieldError[]): StatusError {
  const causes: StatusCause[] = errs.map((e) => ({ reason: e.type, message: fieldErrorBody(e), field: e.field }));
  const details: StatusDetails = { name, kind: gk.kind, causes };
  if (gk.group) details.group = gk.group;
  // kube's ErrorList.ToAggregate drops repeated messages (the causes keep them); its Aggregate
  // prints one error bare and several in brackets.
  const texts = [...new Set(errs.map(fieldErrorString))];
  const agg = texts.length === 0 ? '' : texts.length === 1 ? texts[0] : `[${texts.join(', ')}]`;
  const message = agg ? `${groupKindString(gk)} "${name}" is invalid: ${agg}` : `${groupKindString(gk)} "${name}" is invalid`;
  return new StatusError({ code: 422, reason: 'Invalid', message, details });
}

export function badRequest(message: string): StatusError {
  return new StatusError({ code: 400, reason: 'BadRequest', message });
}

export function unauthorized(message = 'Unauthorized'): StatusError {
  return new StatusError({ code: 401, reason: 'Unauthorized', message });
}

export function forbidden(gr: GroupResource, name: string, why: string, causes?: StatusCause[]): StatusError {
  const details: StatusDetails = {};
  if (name) details.name = name;
  if (gr.resource) details.kind = gr.resource;
  if (gr.group) details.group = gr.group;
  if (causes) details.causes = causes;
  // kube's NewForbidden: no resource (a non-resource path) reads "forbidden: <why>".
  const message = !gr.resource && !gr.group ? `forbidden: ${why}` : `${name ? `${groupResourceString(gr)} "${name}"` : groupResourceString(gr)} is forbidden: ${why}`;
  return new StatusError({ code: 403, reason: 'Forbidden', message, details });
}

export function methodNotSupported(gr: GroupResource | undefined, action: string): StatusError {
  const details: StatusDetails | undefined = gr ? { kind: gr.resource, ...(gr.group ? { group: gr.group } : {}) } : undefined;
  const message = gr ? `${action} is not supported on resources of kind "${groupResourceString(gr)}"` : 'the server does not allow this method on the requested resource';
  return new StatusError({ code: 405, reason: 'MethodNotAllowed', message, ...(details ? { details } : {}) });
}

export function pathNotFound(): StatusError {
  return new StatusError({ code: 404, reason: 'NotFound', message: 'the server could not find the requested resource', details: {} });
}

export function unsupportedMediaType(accepted: string[]): StatusError {
  return new StatusError({
    code: 415,
    reason: 'UnsupportedMediaType',
    message: `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`,
  });
}

export function notAcceptable(accepted: string[]): StatusError {
  return new StatusError({
    code: 406,
    reason: 'NotAcceptable',
    message: `only the following media types are accepted: ${accepted.join(', ')}`,
  });
}

/** 413, as kube's `NewRequestEntityTooLargeError`: a byte limit, or a message saying what was too large. */
export function requestEntityTooLarge(limitOrMessage: number | string): StatusError {
  const what = typeof limitOrMessage === 'number' ? `limit is ${limitOrMessage}` : limitOrMessage;
  return new StatusError({ code: 413, reason: 'RequestEntityTooLarge', message: `Request entity too large: ${what}` });
}

export function internalError(err: unknown): StatusError {
  const msg = err instanceof Error ? err.message : String(err);
  return new StatusError({
    code: 500,
    reason: 'InternalError',
    message: `Internal error occurred: ${msg}`,
    details: { causes: [{ message: msg }] },
  });
}

/** 429, as kube's max-in-flight filter answers (with a Retry-After header of 1 s). */
export function tooManyRequests(): StatusError {
  return new StatusError({ code: 429, reason: 'TooManyRequests', message: 'Too many requests, please try again later.', details: { retryAfterSeconds: 1 } });
}

export function serviceUnavailable(message: string): StatusError {
  return new StatusError({ code: 503, reason: 'ServiceUnavailable', message });
}

/** 410 Gone with reason Expired, as kube answers an expired continue token or a too-old watch. */
export function resourceExpired(message: string, continueToken?: string): StatusError {
  return new StatusError({ code: 410, reason: 'Expired', message, ...(continueToken ? { continue: continueToken } : {}) });
}

/** 504 for a resourceVersion the server has not reached ("Too large resource version"). */
export function tooLargeResourceVersion(requested: string | number, current: string | number): StatusError {
  return new StatusError({
    code: 504,
    reason: 'Timeout',
    message: `Timeout: Too large resource version: ${requested}, current: ${current}`,
    details: { causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }], retryAfterSeconds: 1 },
  });
}

/** A success Status, as answered by deletecollection and immediate deletes. */
export function successStatus(details?: StatusDetails): Status {
  const s: Status = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success' };
  if (details) s.details = details;
  return s;
}

/**
 * 504 with reason Timeout (kube's NewTimeoutError): `Timeout: <message>`, and details that carry
 * only a Retry-After (empty when 0, as kube's encoder writes `"details":{}`).
 */
export function timeoutError(message: string, retryAfterSeconds = 0): StatusError {
  return new StatusError({ code: 504, reason: 'Timeout', message: `Timeout: ${message}`, details: retryAfterSeconds > 0 ? { retryAfterSeconds } : {} });
}
