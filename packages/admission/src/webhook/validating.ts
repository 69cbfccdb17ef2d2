/**
 * kube's ValidatingAdmissionWebhook plugin (webhook/validating): every matching webhook is called
 * at once; the request fails with the first error any of them ends in.
 */
import type { ResourceDefinition } from '@plinth/api';
import type { AdmissionPlugin } from '../interfaces.js';
import { webhooksOf } from './config.js';
import { callHook, failureOf, observeCall, type WebhookPluginDeps } from './dispatch.js';
import { isWebhookConfigurationResource, shouldCallHook, type WebhookInvocation } from './matching.js';
import { versionedAttributes, type VersionedAttributes } from './versioned.js';

export const VALIDATING_WEBHOOK_PLUGIN = 'ValidatingAdmissionWebhook';

export function createValidatingWebhookPlugin(deps: WebhookPluginDeps): AdmissionPlugin {
  return {
    name: VALIDATING_WEBHOOK_PLUGIN,
    handles: () => true,
    async validate(attrs) {
      if (isWebhookConfigurationResource(attrs)) return;
      const hooks = webhooksOf(await deps.listConfigurations());
      const relevant: Array<{ inv: WebhookInvocation; objects: VersionedAttributes }> = [];
      // The objects once per version the webhooks are called with (kube's versionedAttrs by kind).
      const byResource = new Map<ResourceDefinition, VersionedAttributes>();
      // A selector that cannot be evaluated fails the request before any call (kube: ShouldCallHook's error).
      for (const hook of hooks) {
        const inv = await shouldCallHook(hook, attrs, deps.getNamespace, deps.equivalentResources);
        if (!inv) continue;
        let objects = byResource.get(inv.resource);
        if (!objects) {
          objects = await versionedAttributes(attrs, inv);
          byResource.set(inv.resource, objects);
        }
        relevant.push({ inv, objects });
      }
      if (relevant.length === 0) return;
      const outcomes = await Promise.all(
        relevant.map(async ({ inv, objects }) => {
          const hook = inv.hook;
          const t0 = performance.now();
          try {
            await callHook(inv, attrs, objects, false, deps);
            observeCall(deps, hook, 'validating', attrs, false, t0);
            return undefined;
          } catch (e) {
            const failure = failureOf(hook, e, deps);
            observeCall(deps, hook, 'validating', attrs, failure !== undefined, t0);
            return failure;
          }
        }),
      );
      const first = outcomes.find((e) => e !== undefined);
      if (first) throw first;
    },
  };
}
