/**
 * kube's ValidatingAdmissionWebhook plugin (webhook/validating): every matching webhook is called
 * at once; the request fails with the first error any of them ends in.
 */
import type { AdmissionPlugin } from '../interfaces.js';
import { webhooksOf, type Webhook } from './config.js';
import { callHook, failureOf, observeCall, type WebhookPluginDeps } from './dispatch.js';
import { isWebhookConfigurationResource, shouldCallHook } from './matching.js';

export const VALIDATING_WEBHOOK_PLUGIN = 'ValidatingAdmissionWebhook';

export function createValidatingWebhookPlugin(deps: WebhookPluginDeps): AdmissionPlugin {
  return {
    name: VALIDATING_WEBHOOK_PLUGIN,
    handles: () => true,
    async validate(attrs) {
      if (isWebhookConfigurationResource(attrs)) return;
      const hooks = webhooksOf(await deps.listConfigurations());
      const relevant: Webhook[] = [];
      // A selector that cannot be evaluated fails the request before any call (kube: ShouldCallHook's error).
      for (const hook of hooks) if (await shouldCallHook(hook, attrs, deps.getNamespace)) relevant.push(hook);
      if (relevant.length === 0) return;
      const outcomes = await Promise.all(
        relevant.map(async (hook) => {
          const t0 = performance.now();
          try {
            await callHook(hook, attrs, false, deps);
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
