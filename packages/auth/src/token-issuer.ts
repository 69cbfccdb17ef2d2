/**
 * What the TokenRequest endpoint (`serviceaccounts/<name>/token`) and the legacy token controller
 * need from the service-account token machinery: signing, and the discovery documents relying
 * parties read (`/.well-known/openid-configuration`, `/openid/v1/jwks`).
 */

export interface BoundObjectRef {
  kind: 'Secret' | 'Pod';
  apiVersion: string;
  name: string;
  uid: string;
}

export interface ServiceAccountTokenRequest {
  namespace: string;
  name: string;
  uid: string;
  /** Already defaulted (the API audiences when the request named none). */
  audiences: string[];
  /** Already validated (≥ 600) — the issuer caps it at --service-account-max-token-expiration. */
  expirationSeconds: number;
  boundObject?: BoundObjectRef;
}

export interface IssuedToken {
  token: string;
  expirationTimestamp: Date;
}

export interface TokenIssuer {
  /** A bound token (TokenRequest), signed by the first --service-account-issuer. */
  issue(req: ServiceAccountTokenRequest): Promise<IssuedToken>;
  /** A legacy token for a `kubernetes.io/service-account-token` Secret: no expiry, no audience. */
  issueLegacy(req: { namespace: string; serviceAccountName: string; serviceAccountUID: string; secretName: string }): Promise<string>;
  /** The default audiences of a TokenRequest that names none (--api-audiences). */
  readonly apiAudiences: readonly string[];
  /**
   * `/.well-known/openid-configuration`. `externalAddress` (host:port the server is reached at)
   * makes the `jwks_uri` when --service-account-jwks-uri is unset, as kube derives it from its
   * external address.
   */
  openidConfiguration(externalAddress: string): Record<string, unknown>;
  /** `/openid/v1/jwks` (served as application/jwk-set+json). */
  jwks(): { keys: Array<Record<string, unknown>> };
}
