/** authentication.k8s.io: v1's review resources, in discovery order, and TokenRequest. */
import { defineGroup } from '../define.js';
import { selfsubjectreviews } from './selfsubjectreviews.js';
import { tokenreviews } from './tokenreviews.js';

export const authenticationGroup = defineGroup({
  group: 'authentication.k8s.io',
  versions: [{ version: 'v1' }],
  resources: [selfsubjectreviews, tokenreviews],
});

export { selfsubjectreviews, tokenreviews };
export {
  AUTHENTICATION_GROUP,
  DEFAULT_TOKEN_EXPIRATION_SECONDS,
  MAX_TOKEN_EXPIRATION_SECONDS,
  MIN_TOKEN_EXPIRATION_SECONDS,
  tokenRequestKind,
  validateTokenRequest,
} from './tokenrequests.js';
