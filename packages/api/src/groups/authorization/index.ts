/** authorization.k8s.io: v1's access reviews, in discovery order. */
import { defineGroup } from '../define.js';
import { localsubjectaccessreviews } from './localsubjectaccessreviews.js';
import { selfsubjectaccessreviews } from './selfsubjectaccessreviews.js';
import { selfsubjectrulesreviews } from './selfsubjectrulesreviews.js';
import { subjectaccessreviews } from './subjectaccessreviews.js';

export const authorizationGroup = defineGroup({
  group: 'authorization.k8s.io',
  versions: [{ version: 'v1' }],
  resources: [localsubjectaccessreviews, selfsubjectaccessreviews, selfsubjectrulesreviews, subjectaccessreviews],
});

export { localsubjectaccessreviews, selfsubjectaccessreviews, selfsubjectrulesreviews, subjectaccessreviews };
export { AUTHORIZATION_GROUP, validateLocalSubjectAccessReview, validateSelfSubjectAccessReview, validateSubjectAccessReview } from './validation.js';
