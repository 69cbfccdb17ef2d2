/**
 * admissionregistration.k8s.io/v1 ValidatingWebhookConfigurations (kube's pkg/registry/admissionregistration/
 * validatingwebhookconfiguration): cluster-scoped, category api-extensions, webhooks defaulted and validated
 * (webhooks.ts).
 */
import { defineResource } from '../define.js';
import { ADMISSIONREGISTRATION_GROUP, defaultConfiguration, validateConfiguration, webhookConfigurationGeneration, webhookConfigurationTable } from './webhooks.js';

export const validatingwebhookconfigurations = defineResource({
  group: ADMISSIONREGISTRATION_GROUP,
  version: 'v1',
  kind: 'ValidatingWebhookConfiguration',
  plural: 'validatingwebhookconfigurations',
  categories: ['api-extensions'],
  namespaced: false,
  description: 'A ValidatingWebhookConfiguration names webhooks that may refuse objects as they are written.',
  strategy: {
    ...webhookConfigurationGeneration,
    defaults: (obj) => defaultConfiguration(obj, false),
    validate: (obj) => validateConfiguration(obj, false),
  },
  table: webhookConfigurationTable,
});
