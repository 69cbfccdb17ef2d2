/** admissionregistration.k8s.io: v1's webhook configurations, in discovery order. */
import { defineGroup } from '../define.js';
import { mutatingwebhookconfigurations } from './mutatingwebhookconfigurations.js';
import { validatingwebhookconfigurations } from './validatingwebhookconfigurations.js';

export const admissionregistrationGroup = defineGroup({
  group: 'admissionregistration.k8s.io',
  versions: [{ version: 'v1' }],
  resources: [mutatingwebhookconfigurations, validatingwebhookconfigurations],
});

export { mutatingwebhookconfigurations, validatingwebhookconfigurations };
export { ACCEPTED_ADMISSION_REVIEW_VERSIONS, ADMISSIONREGISTRATION_GROUP } from './webhooks.js';
