export { createMutatingWebhookPlugin, MUTATING_WEBHOOK_PLUGIN } from './mutating.js';
export { createValidatingWebhookPlugin, VALIDATING_WEBHOOK_PLUGIN } from './validating.js';
export type { WebhookPluginDeps } from './dispatch.js';
export type { Webhook, ConfigurationLister } from './config.js';
export type { NamespaceGetter } from './matching.js';
export { postJSON, type PostJSONOptions } from './client.js';
