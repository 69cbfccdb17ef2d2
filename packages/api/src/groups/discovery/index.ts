/** discovery.k8s.io: v1 (preferred) and v1beta1 (deprecated in 1.21, removed in 1.25) EndpointSlices, stored as v1. */
import { defineGroup } from '../define.js';
import { endpointslicesV1, endpointslicesV1beta1 } from './endpointslices.js';

export const discoveryGroup = defineGroup({
  group: 'discovery.k8s.io',
  versions: [{ version: 'v1' }, { version: 'v1beta1', deprecated: { in: '1.21', removedIn: '1.25' } }],
  resources: [endpointslicesV1, endpointslicesV1beta1],
});

export { endpointslicesV1, endpointslicesV1beta1, formatDiscoveryEndpoints, formatDiscoveryPorts, LABEL_SERVICE_NAME } from './endpointslices.js';
export { DISCOVERY_GROUP, endpointSliceV1beta1ToV1, endpointSliceV1ToV1beta1 } from './conversion.js';
export { validateEndpointSlice, validateEndpointSliceUpdate } from './validation.js';
