/**
 * The core group (`/api/v1`): its one version and its resources in discovery order (configmaps
 * first, where kube's alphabetical list has it).
 */
import { defineGroup } from '../define.js';
import { configmaps } from './configmaps.js';
import { events } from './events.js';
import { namespaces } from './namespaces.js';
import { bindings, pods } from './pods/resource.js';
import { podtemplates } from './podtemplates.js';
import { secrets } from './secrets.js';
import { serviceaccounts } from './serviceaccounts.js';

export const coreGroup = defineGroup({
  group: '',
  versions: [{ version: 'v1' }],
  resources: [bindings, configmaps, namespaces, serviceaccounts, secrets, events, pods, podtemplates],
});

export { configmaps, validateConfigMap, validateConfigMapUpdate } from './configmaps.js';
export { events } from './events.js';
export { FINALIZER_KUBERNETES, LABEL_METADATA_NAME, namespaces, namespaceFinalizeStrategy, namespaceStatusStrategy } from './namespaces.js';
export { MAX_SECRET_SIZE, goJSONMapError, isConfigMapKey, secrets } from './secrets.js';
export { serviceaccounts } from './serviceaccounts.js';
export { podtemplates } from './podtemplates.js';
export { bindings, evictionKind, pods, podEphemeralContainersStrategy, podStatusStrategy } from './pods/resource.js';
export { summarizePod } from './pods/table.js';
