/**
 * AdmissionReview requests and responses (kube's webhook/request/admissionreview.go) and the
 * errors a webhook call ends in (util/webhook ErrCallingWebhook / ErrWebhookRejection,
 * webhook/errors ToStatusErr and NewDryRunUnsupportedErr).
 */
import { randomUUID } from 'node:crypto';
import { StatusError, apiVersionOf, badRequest, isPlainObject, type StatusDetails, type StatusReason, type StoredObject } from '@plinth/api';
import type { AdmissionAttributes, GroupVersionKind } from '../interfaces.js';
import { admissionNamespace, type WebhookInvocation } from './matching.js';
import type { Webhook } from './config.js';
import type { VersionedAttributes } from './versioned.js';

/** The webhook could not be called or answered nonsense: its failurePolicy decides. */
export class CallingWebhookError extends Error {
  readonly webhookName: string;
  constructor(webhookName: string, reason: string) {
    super(`failed calling webhook "${webhookName}": ${reason}`);
    this.name = 'CallingWebhookError';
    this.webhookName = webhookName;
  }
}

/** The webhook answered and refused the request. */
export class WebhookRejection extends Error {
  readonly status: StatusError;
  constructor(status: StatusError) {
    super(status.message);
    this.name = 'WebhookRejection';
    this.status = status;
  }
}

/** kube's NewDryRunUnsupportedErr: a dry-run request reaching a webhook with side effects (400). */
export function dryRunUnsupported(webhookName: string): StatusError {
  return badRequest(`admission webhook "${webhookName}" does not support dry run`);
}

/** kube's callHook preamble: dry-run requests only reach webhooks without side effects. */
export function checkDryRun(hook: Webhook, attrs: AdmissionAttributes): void {
  if (!attrs.dryRun) return;
  if (hook.sideEffects === undefined) throw new CallingWebhookError(hook.name, 'Webhook SideEffects is nil');
  if (hook.sideEffects !== 'None' && hook.sideEffects !== 'NoneOnDryRun') throw dryRunUnsupported(hook.name);
}

/** kube's ToStatusErr: a refusal as the Status the client sees. */
export function toStatusError(webhookName: string, result: unknown): StatusError {
  const r = isPlainObject(result) ? result : {};
  const deniedBy = `admission webhook "${webhookName}" denied the request`;
  const message = typeof r['message'] === 'string' ? r['message'] : '';
  const reason = typeof r['reason'] === 'string' ? r['reason'] : '';
  const code = typeof r['code'] === 'number' && r['code'] >= 400 ? r['code'] : 400;
  let text: string;
  if (message !== '') text = `${deniedBy}: ${message}`;
  else if (reason !== '') text = `${deniedBy}: ${reason}`;
  else text = `${deniedBy} without explanation`;
  return new StatusError({
    code,
    // Whatever the webhook says, as kube passes its Status through.
    reason: reason as StatusReason,
    message: text,
    ...(isPlainObject(r['details']) ? { details: r['details'] as StatusDetails } : {}),
  });
}

/** The object as kube encodes it for a webhook: with its apiVersion and kind. */
function typed(kind: GroupVersionKind, obj: StoredObject | undefined): StoredObject | null {
  if (!obj) return null;
  return { ...obj, apiVersion: apiVersionOf(kind), kind: kind.kind };
}

export type ReviewVersion = 'v1' | 'v1beta1';

/** The AdmissionReview version kube sends: the first one the webhook lists that it knows. */
export function reviewVersionFor(hook: Webhook): ReviewVersion {
  for (const v of hook.admissionReviewVersions) if (v === 'v1' || v === 'v1beta1') return v;
  throw new CallingWebhookError(hook.name, 'webhook does not accept known AdmissionReview versions (v1, v1beta1)');
}

export interface ReviewRequest {
  uid: string;
  version: ReviewVersion;
  body: Record<string, unknown>;
}

/**
 * kube's CreateV1AdmissionReview / CreateV1beta1AdmissionReview for one call: `kind`, `resource`
 * and the objects of the invocation (an equivalent resource's, converted), `requestKind`,
 * `requestResource` and `requestSubResource` of the request as it was made.
 */
export function createAdmissionReview(inv: WebhookInvocation, attrs: AdmissionAttributes, objects: VersionedAttributes): ReviewRequest {
  const version = reviewVersionFor(inv.hook);
  const uid = randomUUID();
  const kind = { group: inv.kind.group, version: inv.kind.version, kind: inv.kind.kind };
  const resource = { group: inv.resource.group, version: inv.resource.version, resource: inv.resource.plural };
  const def = attrs.resource;
  const requestKind = { group: attrs.kind.group, version: attrs.kind.version, kind: attrs.kind.kind };
  const requestResource = { group: def.group, version: def.version, resource: def.plural };
  const user = attrs.user;
  const userInfo: Record<string, unknown> = {};
  if (user.name) userInfo['username'] = user.name;
  if (user.uid) userInfo['uid'] = user.uid;
  if (user.groups.length > 0) userInfo['groups'] = user.groups;
  if (user.extra && Object.keys(user.extra).length > 0) userInfo['extra'] = user.extra;
  const request: Record<string, unknown> = {
    uid,
    kind,
    resource,
    ...(inv.subresource ? { subResource: inv.subresource } : {}),
    requestKind,
    requestResource,
    ...(attrs.subresource ? { requestSubResource: attrs.subresource } : {}),
    ...(attrs.name ? { name: attrs.name } : {}),
    ...(admissionNamespace(attrs) ? { namespace: admissionNamespace(attrs) } : {}),
    operation: attrs.operation,
    userInfo,
    object: typed(objects.kind, objects.object),
    oldObject: typed(objects.kind, objects.oldObject),
    dryRun: attrs.dryRun,
    options: attrs.options ?? null,
  };
  return { uid, version, body: { kind: 'AdmissionReview', apiVersion: `admission.k8s.io/${version}`, request } };
}

/** What kube reads from a response (webhookrequest.AdmissionResponse). */
export interface AdmissionResult {
  allowed: boolean;
  result: unknown;
  patch: Buffer | undefined;
  patchType: string | undefined;
  warnings: string[];
}

/** kube's VerifyAdmissionResponse. Throws a CallingWebhookError for a malformed response. */
export function verifyAdmissionResponse(hook: Webhook, req: ReviewRequest, mutating: boolean, review: unknown): AdmissionResult {
  const fail = (reason: string): never => {
    throw new CallingWebhookError(hook.name, reason);
  };
  const r = isPlainObject(review) ? review : {};
  const response = r['response'];
  if (!isPlainObject(response)) return fail('webhook response was absent');
  const patchB64 = typeof response['patch'] === 'string' ? response['patch'] : '';
  const patch = patchB64 === '' ? undefined : Buffer.from(patchB64, 'base64');
  const hasPatchType = response['patchType'] !== undefined && response['patchType'] !== null;
  const patchType = typeof response['patchType'] === 'string' ? response['patchType'] : undefined;
  const warnings = Array.isArray(response['warnings']) ? response['warnings'].filter((w): w is string => typeof w === 'string') : [];
  const allowed = response['allowed'] === true;
  if (req.version === 'v1beta1') {
    // v1beta1 responses were never checked for uid or type.
    return { allowed, result: response['status'], patch: mutating ? patch : undefined, patchType: mutating ? patchType : undefined, warnings };
  }
  const uid = typeof response['uid'] === 'string' ? response['uid'] : '';
  if (uid !== req.uid) fail(`expected response.uid="${req.uid}", got "${uid}"`);
  const apiVersion = typeof r['apiVersion'] === 'string' ? r['apiVersion'] : '';
  const kind = typeof r['kind'] === 'string' ? r['kind'] : '';
  if (apiVersion !== 'admission.k8s.io/v1' || kind !== 'AdmissionReview') {
    const gv = apiVersion.includes('/') ? apiVersion : `/${apiVersion}`;
    fail(`expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got ${gv}, Kind=${kind}`);
  }
  if (mutating) {
    if (patch && !hasPatchType) fail('webhook returned response.patch but not response.patchType');
    if (!patch && hasPatchType) fail('webhook returned response.patchType but not response.patch');
    if (hasPatchType && !patchType) fail(`webhook returned invalid response.patchType of "${patchType ?? ''}"`);
  } else {
    if (patch) fail('validating webhook may not return response.patch');
    if (hasPatchType) fail('validating webhook may not return response.patchType');
  }
  return { allowed, result: response['status'], patch, patchType, warnings };
}
