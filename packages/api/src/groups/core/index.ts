/**
 * The core group (`/api/v1`): its one version and its resources in discovery order (configmaps
 * first, where kube's alphabetical list has it).
 */
import { defineGroup } from '../define.js';
import { componentstatuses } from './componentstatuses.js';
import { configmaps } from './configmaps.js';
import { events } from './events.js';
import { namespaces } from './namespaces.js';
import { nodes } from './nodes.js';
import { podtemplates } from './podtemplates.js';
import { replicationcontrollers } from './replicationcontrollers.js';
import { secrets } from './secrets.js';
import { serviceaccounts } from './serviceaccounts.js';

export const coreGroup = defineGroup({
  group: '',
  versions: [{ version: 'v1' }],
  resources: [componentstatuses, configmaps, namespaces, nodes, serviceaccounts, secrets, events, podtemplates, replicationcontrollers],
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
