/** rbac.authorization.k8s.io: v1's resources, in plinth's discovery order. */
import { defineGroup } from '../define.js';
import { clusterrolebindings } from './clusterrolebindings.js';
import { clusterroles } from './clusterroles.js';
import { rolebindings } from './rolebindings.js';
import { roles } from './roles.js';

export const rbacGroup = defineGroup({
  group: 'rbac.authorization.k8s.io',
  versions: [{ version: 'v1' }],
  resources: [clusterroles, clusterrolebindings, roles, rolebindings],
});

export { clusterrolebindings, clusterroles, rolebindings, roles };
export { RBAC_GROUP } from './shared.js';
