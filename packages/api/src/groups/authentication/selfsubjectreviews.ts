/**
 * authentication.k8s.io/v1 SelfSubjectReviews (kube 1.28's pkg/registry/authentication/selfsubjectreview,
 * served here for `kubectl auth whoami`): created and answered with the requester's identity,
 * never stored.
 */
import { defineResource } from '../define.js';
import { AUTHENTICATION_GROUP } from './tokenrequests.js';

export const selfsubjectreviews = defineResource({
  group: AUTHENTICATION_GROUP,
  version: 'v1',
  kind: 'SelfSubjectReview',
  plural: 'selfsubjectreviews',
  namespaced: false,
  storage: 'none',
  description: 'A SelfSubjectReview answers who the requester is, as the server authenticated them.',
  strategy: { validate: () => [] },
});
