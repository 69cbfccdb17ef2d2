/**
 * The core group (`/api/v1`): its one version and its resources in discovery order, which is
 * alphabetical as kube's installer sorts a group version's storage paths.
 */
import { defineGroup } from '../define.js';
import { componentstatuses } from './componentstatuses.js';
import { configmaps } from './configmaps.js';
import { endpoints } from './endpoints.js';
import { events } from './events.js';
import { limitranges } from './limitranges.js';
import { namespaces } from './namespaces.js';
import { nodes } from './nodes.js';
import { persistentvolumeclaims } from './persistentvolumeclaims.js';
import { persistentvolumes } from './persistentvolumes.js';
import { bindings, pods } from './pods/resource.js';
import { podtemplates } from './podtemplates.js';
import { replicationcontrollers } from './replicationcontrollers.js';
import { resourcequotas } from './resourcequotas.js';
import { secrets } from './secrets.js';
import { serviceaccounts } from './serviceaccounts.js';
import { services } from './services.js';

export const coreGroup = defineGroup({
  group: '',
  versions: [{ version: 'v1' }],
  resources: [bindings, componentstatuses, configmaps, endpoints, events, limitranges, namespaces, nodes, persistentvolumeclaims, persistentvolumes, pods, podtemplates, replicationcontrollers, resourcequotas, secrets, serviceaccounts, services],
});

export { configmaps, validateConfigMap, validateConfigMapUpdate } from './configmaps.js';
export { events } from './events.js';
export { FINALIZER_KUBERNETES, LABEL_METADATA_NAME, namespaces, namespaceFinalizeStrategy, namespaceStatusStrategy } from './namespaces.js';
export { MAX_SECRET_SIZE, goJSONMapError, isConfigMapKey, secrets } from './secrets.js';
export { serviceaccounts } from './serviceaccounts.js';
export { podtemplates } from './podtemplates.js';
export { componentstatuses } from './componentstatuses.js';
export { nodeRoles, nodeStatusCell, nodes } from './nodes.js';
export { replicationcontrollers } from './replicationcontrollers.js';
export { endpoints, endpointsStrategy, formatEndpoints } from './endpoints.js';
export { services, serviceStrategy, serviceStatusStrategy, serviceExternalIP, servicePortString } from './services.js';
export { limitranges } from './limitranges.js';
export { persistentvolumeclaims } from './persistentvolumeclaims.js';
export { persistentvolumes } from './persistentvolumes.js';
export { resourcequotas } from './resourcequotas.js';
export { bindings, evictionKind, pods, podEphemeralContainersStrategy, podStatusStrategy } from './pods/resource.js';
export { summarizePod } from './pods/table.js';
