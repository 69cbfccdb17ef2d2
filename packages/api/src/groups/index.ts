/**
 * The built-in API: one folder per group (`<group>/index.ts`: its versions and discovery order),
 * one module per resource. `builtinResources()` lists every built-in resource in discovery order:
 * groups as kube 1.24 orders them (core, …, events.k8s.io, authentication, authorization, …, rbac,
 * …, admissionregistration, apiextensions, scheduling, coordination, …).
 */
import type { ResourceDefinition } from '../catalog.js';
import { apiregistrationGroup } from './apiregistration/index.js';
import { admissionregistrationGroup } from './admissionregistration/index.js';
import { appsGroup } from './apps/index.js';
import { apiextensionsGroup } from './apiextensions/index.js';
import { autoscalingGroup } from './autoscaling/index.js';
import { policyGroup } from './policy/index.js';
import { authenticationGroup } from './authentication/index.js';
import { authorizationGroup } from './authorization/index.js';
import { certificatesGroup } from './certificates/index.js';
import { batchGroup } from './batch/index.js';
import { coordinationGroup } from './coordination/index.js';
import { coreGroup } from './core/index.js';
import { discoveryGroup } from './discovery/index.js';
import { eventsGroup } from './events/index.js';
import { networkingGroup } from './networking/index.js';
import { nodeGroup } from './node/index.js';
import { rbacGroup } from './rbac/index.js';
import { storageGroup } from './storage/index.js';
import { schedulingGroup } from './scheduling/index.js';
import { flowcontrolGroup } from './flowcontrol/index.js';

/** Every built-in resource, in registration (and discovery) order. */
export function builtinResources(): ResourceDefinition[] {
  return [
    ...coreGroup,
    // kube's /apis order: apiregistration, apps, events.k8s.io, authentication, authorization, ...
    ...apiregistrationGroup,
    ...appsGroup,
    ...eventsGroup,
    ...authenticationGroup,
    ...authorizationGroup,
    // autoscaling, batch, certificates, networking, policy precede rbac in kube 1.24's /apis order.
    ...autoscalingGroup,
    ...batchGroup,
    ...certificatesGroup,
    ...networkingGroup,
    ...policyGroup,
    ...rbacGroup,
    ...storageGroup,
    ...admissionregistrationGroup,
    // apiextensions.k8s.io follows admissionregistration in kube 1.24's /apis order, then coordination.
    ...apiextensionsGroup,
    ...schedulingGroup,
    ...coordinationGroup,
    ...nodeGroup,
    ...discoveryGroup,
    // flowcontrol.apiserver.k8s.io is last in kube 1.24's /apis order.
    ...flowcontrolGroup,
  ];
}

export * from './core/index.js';
export * from './apiregistration/index.js';
export * from './apps/index.js';
export * from './events/index.js';
export * from './batch/index.js';
export * from './authentication/index.js';
export * from './authorization/index.js';
export * from './certificates/index.js';
export * from './rbac/index.js';
export * from './storage/index.js';
export * from './admissionregistration/index.js';
export * from './apiextensions/index.js';
export * from './coordination/index.js';
export * from './autoscaling/index.js';
export * from './policy/index.js';
export * from './scheduling/index.js';
export * from './node/index.js';
export * from './networking/index.js';
export * from './discovery/index.js';
export * from './flowcontrol/index.js';
export { ALL_VERBS, defineGroup, defineKind, defineResource, type GroupSpec, type GroupVersionSpec, type KindSpec, type ResourceSpec } from './define.js';
export { scaleKind, scaleSubresource, validateScale, type BuiltinScaleSpec } from './scale.js';
