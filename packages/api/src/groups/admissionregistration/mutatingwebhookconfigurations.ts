/**
 * admissionregistration.k8s.io/v1 MutatingWebhookConfigurations (kube's pkg/registry/admissionregistration/
 * mutatingwebhookconfiguration): cluster-scoped, category api-extensions, webhooks defaulted and validated
 * (webhooks.ts).
 */
import { defineResource } from '../define.js';
import { ADMISSIONREGISTRATION_GROUP, defaultConfiguration, validateConfiguration, webhookConfigurationGeneration, webhookConfigurationTable } from './webhooks.js';

export const mutatingwebhookconfigurations = defineResource({
  group: ADMISSIONREGISTRATION_GROUP,
  version: 'v1',
  kind: 'MutatingWebhookConfiguration',
  plural: 'mutatingwebhookconfigurations',
  categories: ['api-extensions'],
  namespaced: false,
  description: 'A MutatingWebhookConfiguration names webhooks that may change objects as they are written.',
  strategy: {
    ...webhookConfigurationGeneration,
    defaults: (obj) => defaultConfiguration(obj, true),
    validate: (obj) => validateConfiguration(obj, true),
  },
  table: webhookConfigurationTable,
});
