/**
 * The create-only storages of authentication.k8s.io/v1 and of serviceaccounts/token, keyed by the
 * catalog entries they serve (kube's authentication and core REST storage providers).
 */
import { pods, selfsubjectreviews, serviceaccounts, secrets, tokenreviews, type ResourceDefinition } from '@plinth/api';
import type { AuthenticationOptions, Authenticator, TokenIssuer } from '@plinth/auth';
import type { CreateOnlyStorage, CreateOnlyStorages } from './create-only.js';
import type { ResourceStore } from './store.js';
import { createSelfSubjectReviewStorage } from './selfsubjectreview.js';
import { createTokenRequestStorage } from './token-request.js';
import { createTokenReviewStorage } from './tokenreview.js';

export interface AuthenticationStorageDeps {
  authenticator: Authenticator;
  tokenIssuer: TokenIssuer | undefined;
  authentication: Pick<AuthenticationOptions, 'apiAudiences' | 'serviceAccounts'>;
  stores: ReadonlyMap<ResourceDefinition, ResourceStore>;
}

export function createAuthenticationStorages(deps: AuthenticationStorageDeps): CreateOnlyStorages {
  const storeOf = (def: ResourceDefinition): ResourceStore => {
    const store = deps.stores.get(def);
    if (!store) throw new Error(`no store for ${def.plural}`);
    return store;
  };
  const token = serviceaccounts.subresources.find((s) => s.name === 'token');
  if (!token) throw new Error('serviceaccounts has no token sub-resource');
  const { apiAudiences } = deps.authentication;
  return new Map<ResourceDefinition | typeof token, CreateOnlyStorage>([
    [tokenreviews, createTokenReviewStorage({ authenticator: deps.authenticator, apiAudiences })],
    [selfsubjectreviews, createSelfSubjectReviewStorage()],
    [
      token,
      createTokenRequestStorage({
        serviceAccounts: storeOf(serviceaccounts),
        secrets: storeOf(secrets),
        pods: storeOf(pods),
        issuer: deps.tokenIssuer,
        apiAudiences,
        maxExpirationSeconds: deps.authentication.serviceAccounts.maxExpirationSeconds,
      }),
    ],
  ]);
}
