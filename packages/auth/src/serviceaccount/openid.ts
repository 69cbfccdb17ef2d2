/**
 * Discovery documents for relying parties (kube's pkg/serviceaccount/openidmetadata.go): a minimal
 * OIDC provider configuration at `/.well-known/openid-configuration` and the verifying keys as a
 * JWK Set at `/openid/v1/jwks`.
 */
import type { JWK } from 'jose';
import type { VerifyingKey } from './keys.js';

export const OPENID_CONFIG_PATH = '/.well-known/openid-configuration';
export const JWKS_PATH = '/openid/v1/jwks';
/** The JWKS content type (RFC 7517 §8.5.1). */
export const JWKS_CONTENT_TYPE = 'application/jwk-set+json';
/** routes/openidmetadata.go: both documents may be cached for an hour, by anyone. */
export const OPENID_CACHE_CONTROL = 'public, max-age=3600';

/**
 * Why kube would not serve the discovery documents for this issuer (NewOpenIDMetadataProvider's
 * extra checks: the issuer must be an https URL without query or fragment), or undefined.
 */
export function openIDDiscoveryProblem(issuerURL: string): string | undefined {
  let url: URL;
  try {
    url = new URL(issuerURL);
  } catch {
    return `issuer URL ${JSON.stringify(issuerURL)} is not a URL`;
  }
  if (url.protocol !== 'https:') return `issuer URL must use https scheme, got: ${issuerURL}`;
  if (url.search) return `issuer URL may not include a query, got: ${issuerURL}`;
  if (url.hash) return `issuer URL may not include a fragment, got: ${issuerURL}`;
  return undefined;
}

/**
 * The JWKS URI the configuration names: --service-account-jwks-uri, else the JWKS path on the
 * server's external address (`https://<host:port>/openid/v1/jwks`), as kube derives it.
 */
export function jwksURIFor(jwksURI: string, externalAddress: string): string {
  return jwksURI || new URL(JWKS_PATH, `https://${externalAddress}`).toString();
}

/** openIDConfigJSON: issuer, jwks_uri, and what kube's tokens are (ID tokens, public subjects). */
export function openIDConfiguration(issuer: string, jwksURI: string, keys: readonly VerifyingKey[]): Record<string, unknown> {
  return {
    issuer,
    jwks_uri: jwksURI,
    response_types_supported: ['id_token'],
    subject_types_supported: ['public'],
    // A sorted set, as kube's sets.String.List().
    id_token_signing_alg_values_supported: [...new Set(keys.map((k) => k.alg))].sort(),
  };
}

/** openIDKeysetJSON: every verifying public key. */
export function openIDKeyset(keys: readonly VerifyingKey[]): { keys: JWK[] } {
  return { keys: keys.map((k) => ({ ...k.jwk })) };
}
