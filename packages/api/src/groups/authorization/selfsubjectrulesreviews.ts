/**
 * authorization.k8s.io/v1 SelfSubjectRulesReviews (kube's pkg/registry/authorization/selfsubjectrulesreview): asked and
 * answered by the server's authorizer, never stored.
 */
import { defineResource } from '../define.js';
import { AUTHORIZATION_GROUP } from './validation.js';

export const selfsubjectrulesreviews = defineResource({
  group: AUTHORIZATION_GROUP,
  version: 'v1',
  kind: 'SelfSubjectRulesReview',
  plural: 'selfsubjectrulesreviews',
  namespaced: false,
  storage: 'none',
  description: 'A SelfSubjectRulesReview lists the actions the requester may perform in a namespace.',
  strategy: { validate: () => [] },
});
