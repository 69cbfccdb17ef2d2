/** The built-in resources plinth serves, and the shared schema definitions their schemas reference. */
import type { ResourceDefinition } from '../catalog.js';
import type { Schema } from '../schema.js';
import { coreDefinitions, namespaces, secrets, serviceaccounts } from './core.js';
import { clusterrolebindings, clusterroles, rbacDefinitions, rolebindings, roles } from './rbac.js';

export { namespaces, secrets, serviceaccounts, namespaceStatusStrategy, namespaceFinalizeStrategy } from './core.js';
export { clusterrolebindings, clusterroles, rolebindings, roles, RBAC_GROUP } from './rbac.js';

/**
 * Shared definitions referenced by the built-in schemas (besides `metaDefinitions`): the decoder
 * resolves `$ref` names through one map built from both.
 */
export const resourceDefinitions: Record<string, Schema> = { ...coreDefinitions, ...rbacDefinitions };

/** Every built-in resource, in registration (and discovery) order. */
export function builtinResources(): ResourceDefinition[] {
  return [namespaces, serviceaccounts, secrets, clusterroles, clusterrolebindings, roles, rolebindings];
}
