/**
 * authorization.k8s.io/v1 SubjectAccessReviews (kube's pkg/registry/authorization/subjectaccessreview): asked and
 * answered by the server's authorizer, never stored. The storage validates it with validateSubjectAccessReview.
 */
import { defineResource } from '../define.js';
import { AUTHORIZATION_GROUP } from './validation.js';

export const subjectaccessreviews = defineResource({
  group: AUTHORIZATION_GROUP,
  version: 'v1',
  kind: 'SubjectAccessReview',
  plural: 'subjectaccessreviews',
  namespaced: false,
  storage: 'none',
  description: 'A SubjectAccessReview asks whether a user or group may perform an action.',
  strategy: { validate: () => [] },
});
