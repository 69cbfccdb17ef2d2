/** The built-in resources plinth serves, and the shared schema definitions their schemas reference. */
import type { ResourceDefinition } from '../catalog.js';
import type { Schema } from '../schema.js';
import { authenticationDefinitions, selfsubjectreviews, tokenreviews } from './authentication.js';
import { authorizationDefinitions, localsubjectaccessreviews, selfsubjectaccessreviews, selfsubjectrulesreviews, subjectaccessreviews } from './authorization.js';
import { coreDefinitions, namespaces, secrets, serviceaccounts } from './core.js';
import { clusterrolebindings, clusterroles, rbacDefinitions, rolebindings, roles } from './rbac.js';
import { eventDefinitions, events, eventsV1, eventsV1beta1 } from './events.js';
import { admissionregistrationDefinitions, mutatingwebhookconfigurations, validatingwebhookconfigurations } from './admissionregistration.js';
import { configmaps } from './configmaps.js';
import { leases } from './coordination.js';
import { apiextensionsDefinitions, customresourcedefinitions } from '../apiextensions/index.js';

export { namespaces, secrets, serviceaccounts, namespaceStatusStrategy, namespaceFinalizeStrategy } from './core.js';
export {
  EVENTS_GROUP,
  asCoreEvent,
  coreToEvent,
  eventToCore,
  events,
  eventsV1,
  eventsV1beta1,
  legacyValidateEvent,
  validateEventCreate,
  validateEventUpdateStrict,
  type EventRequestVersion,
} from './events.js';
export { configmaps, validateConfigMap, validateConfigMapUpdate } from './configmaps.js';
export { COORDINATION_GROUP, leases, validateLease } from './coordination.js';
export { clusterrolebindings, clusterroles, rolebindings, roles, RBAC_GROUP } from './rbac.js';
export {
  ACCEPTED_ADMISSION_REVIEW_VERSIONS,
  ADMISSIONREGISTRATION_GROUP,
  mutatingwebhookconfigurations,
  validatingwebhookconfigurations,
} from './admissionregistration.js';
export {
  AUTHENTICATION_GROUP,
  DEFAULT_TOKEN_EXPIRATION_SECONDS,
  MAX_TOKEN_EXPIRATION_SECONDS,
  MIN_TOKEN_EXPIRATION_SECONDS,
  selfsubjectreviews,
  tokenRequestKind,
  tokenreviews,
  validateTokenRequest,
} from './authentication.js';
export {
  AUTHORIZATION_GROUP,
  localsubjectaccessreviews,
  selfsubjectaccessreviews,
  selfsubjectrulesreviews,
  subjectaccessreviews,
  validateLocalSubjectAccessReview,
  validateSelfSubjectAccessReview,
  validateSubjectAccessReview,
} from './authorization.js';

/**
 * Shared definitions referenced by the built-in schemas (besides `metaDefinitions`): the decoder
 * resolves `$ref` names through one map built from both.
 */
export const resourceDefinitions: Record<string, Schema> = { ...coreDefinitions, ...eventDefinitions, ...authenticationDefinitions, ...authorizationDefinitions, ...rbacDefinitions, ...admissionregistrationDefinitions, ...apiextensionsDefinitions };

/**
 * Every built-in resource, in registration (and discovery) order: groups as kube 1.24 orders them
 * (…, authentication, authorization, …, rbac, …, admissionregistration, apiextensions, scheduling,
 * coordination, …); configmaps first in core/v1, where kube's alphabetical /api/v1 list has it.
 */
export function builtinResources(): ResourceDefinition[] {
  return [
    configmaps,
    namespaces,
    serviceaccounts,
    secrets,
    events,
    // kube's /apis order: apiregistration, apps, events.k8s.io, authentication, authorization, ...
    eventsV1,
    eventsV1beta1,
    selfsubjectreviews,
    tokenreviews,
    localsubjectaccessreviews,
    selfsubjectaccessreviews,
    selfsubjectrulesreviews,
    subjectaccessreviews,
    clusterroles,
    clusterrolebindings,
    roles,
    rolebindings,
    mutatingwebhookconfigurations,
    validatingwebhookconfigurations,
    // apiextensions.k8s.io follows admissionregistration in kube 1.24's /apis order, then coordination.
    customresourcedefinitions,
    leases,
  ];
}
