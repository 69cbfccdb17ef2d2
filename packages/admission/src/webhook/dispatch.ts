/**
 * What the mutating and validating webhook plugins share: their dependencies, one webhook call
 * (kube's callHook up to the verified response) and how a failed call ends (failurePolicy).
 */
import { internalError, isStatusError, setMember, type StoredObject } from '@plinth/api';
import type { AdmissionAttributes, GroupVersionKind } from '../interfaces.js';
import type { ConfigurationLister, Webhook } from './config.js';
import type { EquivalentResources, NamespaceGetter, WebhookInvocation } from './matching.js';
import type { VersionedAttributes } from './versioned.js';
import { postReview } from './client.js';
import { CallingWebhookError, WebhookRejection, checkDryRun, createAdmissionReview, toStatusError, verifyAdmissionResponse, type AdmissionResult } from './review.js';

export interface WebhookPluginDeps {
  /** Every stored configuration of the plugin's kind, from the watch cache. */
  listConfigurations: ConfigurationLister;
  /** Reads a namespace (cache first, then storage), for namespaceSelector. */
  getNamespace: NamespaceGetter;
  /**
   * The served resources that store a resource's objects (the catalog's), for matchPolicy
   * Equivalent. Without it a webhook is called only for the resources its rules name.
   */
  equivalentResources?: EquivalentResources;
  /**
   * Reports a failed call that failed open, or a refusal (kube's klog warnings). Messages name the
   * webhook and the failure, never the object.
   */
  warn?(message: string, fields: Record<string, unknown>): void;
  /** Sends one AdmissionReview and returns the decoded answer (default: HTTPS POST). */
  post?(hook: Webhook, review: unknown): Promise<unknown>;
  /**
   * Told of each webhook call, for the API server's metrics (admission has no metrics library):
   * kube's type label ("admit" for mutating webhooks, "validating" for validating ones), the
   * operation, whether the call made the request fail (a refusal, or a failed call that fails
   * closed) and its latency in seconds.
   */
  observeCall?(name: string, type: 'admit' | 'validating', operation: string, rejected: boolean, seconds: number): void;
  /**
   * Decodes an object a mutating webhook patched into its kind, as kube decodes the patched JSON
   * into the typed object: fields the kind does not have are dropped (a `__proto__` member among
   * them), API defaults applied; throws a StatusError for a value of the wrong type. Undefined
   * when the kind is not decoded here (custom resources): the object is then only defaulted.
   */
  decodeObject?(kind: GroupVersionKind, object: unknown): StoredObject | undefined;
}

/** Reports a finished call to `deps.observeCall`, timed from `t0` (performance.now()). */
export function observeCall(deps: WebhookPluginDeps, hook: Webhook, type: 'admit' | 'validating', attrs: AdmissionAttributes, rejected: boolean, t0: number): void {
  deps.observeCall?.(hook.name, type, attrs.operation, rejected, (performance.now() - t0) / 1000);
}

/**
 * Calls one webhook with the request's objects as the invocation reads them, and checks the
 * answer; a refusal throws WebhookRejection.
 */
export async function callHook(inv: WebhookInvocation, attrs: AdmissionAttributes, objects: VersionedAttributes, mutating: boolean, deps: WebhookPluginDeps): Promise<AdmissionResult> {
  const hook = inv.hook;
  checkDryRun(hook, attrs);
  const request = createAdmissionReview(inv, attrs, objects);
  const answer = await (deps.post ?? postReview)(hook, request.body);
  const result = verifyAdmissionResponse(hook, request, mutating, answer);
  for (const w of result.warnings) attrs.warn?.(w);
  if (!result.allowed) throw new WebhookRejection(toStatusError(hook.name, result.result));
  return result;
}

/**
 * How a failed call ends: undefined when it fails open (failurePolicy Ignore), else the error
 * the request fails with (kube: InternalError for a failed call, the webhook's Status for a
 * refusal, anything else as it is).
 */
export function failureOf(hook: Webhook, err: unknown, deps: WebhookPluginDeps): Error | undefined {
  if (err instanceof CallingWebhookError) {
    if (hook.failurePolicy === 'Ignore') {
      deps.warn?.('Failed calling webhook, failing open', { webhook: hook.name, error: err.message });
      return undefined;
    }
    deps.warn?.('Failed calling webhook, failing closed', { webhook: hook.name, error: err.message });
    return internalError(err);
  }
  if (err instanceof WebhookRejection) {
    deps.warn?.('rejected by webhook', { webhook: hook.name, message: err.status.message });
    return err.status;
  }
  if (isStatusError(err)) return err;
  return internalError(err);
}

/**
 * Replaces the contents of `target` with `source` (the store keeps its reference to the object).
 * Member by member with setMember: a webhook's patch may have added a member named `__proto__`,
 * which Object.assign would turn into the target's prototype.
 */
export function replaceObject(target: StoredObject, source: StoredObject): void {
  for (const k of Object.keys(target)) delete (target as Record<string, unknown>)[k];
  for (const [k, v] of Object.entries(source)) setMember(target, k, v);
}
