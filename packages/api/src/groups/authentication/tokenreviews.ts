/**
 * authentication.k8s.io/v1 TokenReviews (pkg/registry/authentication/tokenreview): created and
 * answered, never stored. The review validates in its REST (apiserver's registry/tokenreview.ts),
 * as kube's does: the strategy has nothing to do.
 */
import { defineResource } from '../define.js';
import { AUTHENTICATION_GROUP } from './tokenrequests.js';

export const tokenreviews = defineResource({
  group: AUTHENTICATION_GROUP,
  version: 'v1',
  kind: 'TokenReview',
  plural: 'tokenreviews',
  namespaced: false,
  storage: 'none',
  description: 'A TokenReview asks who a bearer token authenticates as.',
  strategy: { validate: () => [] },
});
