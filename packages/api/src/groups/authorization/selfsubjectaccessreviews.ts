/**
 * authorization.k8s.io/v1 SelfSubjectAccessReviews (kube's pkg/registry/authorization/selfsubjectaccessreview): asked and
 * answered by the server's authorizer, never stored. The storage validates it with validateSelfSubjectAccessReview.
 */
import { defineResource } from '../define.js';
import { AUTHORIZATION_GROUP } from './validation.js';

export const selfsubjectaccessreviews = defineResource({
  group: AUTHORIZATION_GROUP,
  version: 'v1',
  kind: 'SelfSubjectAccessReview',
  plural: 'selfsubjectaccessreviews',
  namespaced: false,
  storage: 'none',
  description: 'A SelfSubjectAccessReview asks whether the requester may perform an action.',
  strategy: { validate: () => [] },
});
