/**
 * kube's MutatingAdmissionWebhook plugin (webhook/mutating): matching webhooks are called one at a
 * time, in order, each seeing the object as the previous ones patched it (JSONPatch only). When a
 * webhook changed the object, the webhooks called before it with reinvocationPolicy IfNeeded are
 * called once more (kube's reinvocation round, which admission runs at most once). A webhook
 * matched through an equivalent resource patches the object in its own version, which is
 * defaulted there and converted back into the request's.
 */
import { applyJsonPatch, internalError, isPlainObject, isStatusError, jsonEqual, parseJson, type StoredObject } from '@plinth/api';
import type { AdmissionAttributes, AdmissionPlugin } from '../interfaces.js';
import { webhooksOf } from './config.js';
import { callHook, failureOf, observeCall, replaceObject, type WebhookPluginDeps } from './dispatch.js';
import { isWebhookConfigurationResource, shouldCallHook, type WebhookInvocation } from './matching.js';
import { CallingWebhookError } from './review.js';
import { toRequestVersion, versionedAttributes } from './versioned.js';

export const MUTATING_WEBHOOK_PLUGIN = 'MutatingAdmissionWebhook';

/** kube's callAttrMutatingHook: whether the webhook changed the object. */
async function callMutatingHook(inv: WebhookInvocation, attrs: AdmissionAttributes, deps: WebhookPluginDeps): Promise<boolean> {
  const hook = inv.hook;
  // The object as the previous webhooks left it, in this webhook's version.
  const objects = await versionedAttributes(attrs, inv);
  const result = await callHook(inv, attrs, objects, true, deps);
  if (!result.patch) return false;
  let ops: unknown;
  try {
    // kube's numbers: an int64 above 2^53 the webhook adds stays exact (number-codec.ts).
    ops = parseJson(result.patch.toString('utf8'));
  } catch (e) {
    throw internalError(e);
  }
  if (Array.isArray(ops) && ops.length === 0) return false;
  const object = objects.object;
  if (!object || !attrs.object) throw internalError(`admission webhook "${hook.name}" attempted to modify the object, which is not supported for this operation`);
  if (result.patchType !== 'JSONPatch') throw new CallingWebhookError(hook.name, `unsupported patch type "${result.patchType ?? ''}"`);
  let patched: unknown;
  try {
    patched = applyJsonPatch(object, ops);
  } catch (e) {
    throw internalError(e);
  }
  if (!isPlainObject(patched) || !isPlainObject(patched['metadata'])) throw internalError('json: cannot unmarshal the patched object into the resource\'s type');
  let next: StoredObject;
  try {
    // kube decodes the patched JSON into the webhook's version of the kind (unknown fields
    // dropped, defaults of that version applied); a type error is an InternalError.
    next = deps.decodeObject?.(inv.kind, patched) ?? (patched as StoredObject);
  } catch (e) {
    throw internalError(isStatusError(e) ? e.message : e);
  }
  if (next === patched) {
    // Custom resources: the defaults of the webhook's version and kind.
    const ownKind = inv.subresource ? inv.resource.subresources.find((sub) => sub.name === inv.subresource)?.kind : undefined;
    (ownKind ?? inv.resource).strategy.defaults?.(next);
  }
  const changed = !jsonEqual(object, next);
  replaceObject(attrs.object, objects.converted ? await toRequestVersion(attrs, inv.resource, next) : next);
  return changed;
}

export function createMutatingWebhookPlugin(deps: WebhookPluginDeps): AdmissionPlugin {
  return {
    name: MUTATING_WEBHOOK_PLUGIN,
    handles: () => true,
    async admit(attrs) {
      if (isWebhookConfigurationResource(attrs)) return;
      const hooks = webhooksOf(await deps.listConfigurations());
      // kube's webhookReinvokeContext.
      let previouslyInvoked = new Set<string>();
      const reinvoke = new Set<string>();
      let shouldReinvoke = false;
      for (const round of [0, 1]) {
        if (round === 1 && !shouldReinvoke) break;
        for (const hook of hooks) {
          const inv = await shouldCallHook(hook, attrs, deps.getNamespace, deps.equivalentResources);
          if (!inv) continue;
          // A webhook skipped in the first round is not called for the first time in the second.
          if (round === 1 && !reinvoke.has(hook.uid)) continue;
          let changed = false;
          let failure: Error | undefined;
          const t0 = performance.now();
          try {
            changed = await callMutatingHook(inv, attrs, deps);
            observeCall(deps, hook, 'admit', attrs, false, t0);
          } catch (e) {
            failure = failureOf(hook, e, deps);
            observeCall(deps, hook, 'admit', attrs, failure !== undefined, t0);
          }
          if (changed) {
            for (const uid of previouslyInvoked) reinvoke.add(uid);
            previouslyInvoked = new Set();
            shouldReinvoke = true;
          }
          if (hook.reinvocationPolicy === 'IfNeeded') previouslyInvoked.add(hook.uid);
          if (failure) throw failure;
        }
      }
    },
  };
}
