/**
 * selfsubjectreviews: who the caller is, as the server authenticated it — kube 1.28's
 * selfsubjectreview REST (pkg/registry/authentication/selfsubjectreview/rest.go), which is what
 * `kubectl auth whoami` asks.
 */
import { apiVersionOf, selfsubjectreviews } from '@plinth/api';
import type { CreateOnlyStorage } from './create-only.js';
import { now } from './meta.js';
import { userInfoOf } from './tokenreview.js';

export function createSelfSubjectReviewStorage(): CreateOnlyStorage {
  return {
    async create(ctx, obj, validate) {
      await validate(obj);
      // The body is not echoed: a fresh review, stamped now, with the caller's identity.
      return {
        kind: selfsubjectreviews.kind,
        apiVersion: apiVersionOf(selfsubjectreviews),
        metadata: { creationTimestamp: now() },
        status: { userInfo: userInfoOf(ctx.user) },
      };
    },
  };
}
