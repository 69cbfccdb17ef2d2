/**
 * authorization.k8s.io/v1 LocalSubjectAccessReviews (kube's pkg/registry/authorization/localsubjectaccessreview): asked and
 * answered by the server's authorizer, never stored. The storage validates it with validateLocalSubjectAccessReview.
 */
import { defineResource } from '../define.js';
import { AUTHORIZATION_GROUP } from './validation.js';

export const localsubjectaccessreviews = defineResource({
  group: AUTHORIZATION_GROUP,
  version: 'v1',
  kind: 'LocalSubjectAccessReview',
  plural: 'localsubjectaccessreviews',
  namespaced: true,
  storage: 'none',
  description: 'A LocalSubjectAccessReview asks whether a user or group may perform an action in a namespace.',
  strategy: { validate: () => [] },
});
