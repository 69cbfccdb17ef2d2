/** apiregistration.k8s.io: v1 APIServices (v1beta1 was removed in 1.22). */
import { defineGroup } from '../define.js';
import { apiservices } from './apiservices.js';

export const apiregistrationGroup = defineGroup({
  group: 'apiregistration.k8s.io',
  versions: [{ version: 'v1' }],
  resources: [apiservices],
});

export { APIREGISTRATION_GROUP, AUTOMANAGED_LABEL, apiservices, availableCell, localAvailableCondition, validateAPIService, validateAPIServiceStatus } from './apiservices.js';
