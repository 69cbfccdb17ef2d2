/**
 * tokenreviews: whether a bearer token authenticates, and as whom — kube's tokenreview REST
 * (pkg/registry/authentication/tokenreview/storage.go). The token is checked by the server's own
 * authenticator, on a request that carries nothing but `Authorization: Bearer <token>`.
 */
import { apiVersionOf, badRequest, isPlainObject, tokenreviews, type StoredObject, type UserInfo } from '@plinth/api';
import { bearerToken, type AuthRequest, type AuthResult, type Authenticator } from '@plinth/auth';
import type { CreateOnlyStorage } from './create-only.js';

export interface TokenReviewDeps {
  authenticator: Authenticator;
  /** --api-audiences: the audiences a review that names none is for. */
  apiAudiences: readonly string[];
}

/** kube's bearertoken authenticator's answer for a token no authenticator accepts. */
export const INVALID_BEARER_TOKEN = 'invalid bearer token';

/** authentication/v1 UserInfo of a user, empty fields left out (omitempty). */
export function userInfoOf(user: UserInfo): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (user.name) out['username'] = user.name;
  if (user.uid) out['uid'] = user.uid;
  if (user.groups.length > 0) out['groups'] = [...user.groups];
  if (user.extra && Object.keys(user.extra).length > 0) {
    out['extra'] = Object.fromEntries(Object.entries(user.extra).map(([k, v]) => [k, [...v]]));
  }
  return out;
}

function strings(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}

export function createTokenReviewStorage(deps: TokenReviewDeps): CreateOnlyStorage {
  return {
    async create(_ctx, obj, validate) {
      const spec = isPlainObject(obj['spec']) ? obj['spec'] : {};
      const token = typeof spec['token'] === 'string' ? spec['token'] : '';
      // Refused before anything else, and as a 400 (not a 422): kube checks it in the REST.
      if (token === '') throw badRequest('token is required for TokenReview in authentication');
      await validate(obj);

      const requested = strings(spec['audiences']);
      // kube's TokenReview REST: the review is for the audiences asked for, else the API's.
      const audiences = requested.length > 0 ? requested : [...deps.apiAudiences];
      const authReq: AuthRequest = { headers: { authorization: `Bearer ${token}` }, peerCertificates: [] };
      if (audiences.length > 0) authReq.audiences = audiences;
      let result: AuthResult;
      let failure: string | undefined;
      try {
        result = await deps.authenticator.authenticate(authReq);
      } catch (e) {
        // kube puts the authenticator's error in status.error (a webhook that cannot be reached).
        result = { kind: 'no-opinion' };
        failure = e instanceof Error ? e.message : String(e);
      }

      const status: Record<string, unknown> = {};
      if (result.kind === 'authenticated') {
        status['authenticated'] = true;
        status['user'] = userInfoOf(result.user);
        // Those of the review's audiences the token is valid for, as the authenticator reported.
        if (result.audiences && result.audiences.length > 0) status['audiences'] = result.audiences;
      } else {
        status['user'] = {};
        // kube's bearer-token authenticator: a token nobody accepts is "invalid bearer token"; a
        // header that carries no token at all (a blank token) is no credential and no error.
        const error = failure ?? (result.kind === 'rejected' ? result.reason : bearerToken(authReq) ? INVALID_BEARER_TOKEN : '');
        if (error) status['error'] = error;
      }
      const { apiVersion: _v, kind: _k, metadata, status: _s, ...rest } = obj;
      return {
        kind: tokenreviews.kind,
        apiVersion: apiVersionOf(tokenreviews),
        // Nothing is created: the metadata comes back as sent (creationTimestamp null, as Go writes it).
        metadata: { ...metadata, creationTimestamp: metadata.creationTimestamp ?? null },
        ...rest,
        status,
      } satisfies StoredObject;
    },
  };
}
