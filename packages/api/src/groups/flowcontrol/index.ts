/** flowcontrol.apiserver.k8s.io: v1beta2 (preferred, stored) and v1beta1 (deprecated in 1.23, removed in 1.26). */
import { defineGroup } from '../define.js';
import { flowschemasV1beta1, flowschemasV1beta2, prioritylevelconfigurationsV1beta1, prioritylevelconfigurationsV1beta2 } from './resources.js';

export const flowcontrolGroup = defineGroup({
  group: 'flowcontrol.apiserver.k8s.io',
  versions: [{ version: 'v1beta2' }, { version: 'v1beta1', deprecated: { in: '1.23', removedIn: '1.26' } }],
  resources: [flowschemasV1beta2, prioritylevelconfigurationsV1beta2, flowschemasV1beta1, prioritylevelconfigurationsV1beta1],
});

export * from './bootstrap.js';
export { FLOW_SCHEMA_MAX_MATCHING_PRECEDENCE, isMandatoryFlowcontrolName, validateFlowSchema, validatePriorityLevelConfiguration } from './validation.js';
export { flowschemasV1beta1, flowschemasV1beta2, prioritylevelconfigurationsV1beta1, prioritylevelconfigurationsV1beta2 };
