/**
 * authentication.k8s.io/v1 SelfSubjectReviews (kube 1.28's pkg/registry/authentication/selfsubjectreview,
 * for `kubectl auth whoami`): created and answered with the requester's identity, never stored.
 * kube 1.24 has no such API, so it is served only with the APISelfSubjectReview gate on (off by
 * default here, as kube gated it until 1.28) and discovery lists exactly kube 1.24's APIs.
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
  featureGate: 'APISelfSubjectReview',
});
