/** networking.k8s.io: v1's NetworkPolicies, IngressClasses and Ingresses (discovery lists them by name, as kube). */
import { defineGroup } from '../define.js';
import { ingressclasses } from './ingressclasses.js';
import { ingresses } from './ingresses.js';
import { networkpolicies } from './networkpolicies.js';

export const networkingGroup = defineGroup({
  group: 'networking.k8s.io',
  versions: [{ version: 'v1' }],
  resources: [ingressclasses, ingresses, networkpolicies],
});

export { NETWORKING_GROUP, ingresses } from './ingresses.js';
export { ingressclasses } from './ingressclasses.js';
export { networkpolicies } from './networkpolicies.js';
export { validateIngressClass, validateIngressCreate, validateIngressUpdate, validateNetworkPolicy } from './validation.js';
