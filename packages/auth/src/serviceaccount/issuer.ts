/**
 * The service-account token issuer (kube's JWTTokenGenerator with the TokenRequest rules of
 * pkg/registry/core/serviceaccount/storage/token.go): bound tokens for TokenRequest, legacy tokens
 * for token Secrets, and the discovery documents of the keys that verify them.
 */
import { SignJWT } from 'jose';
import type { IssuedToken, ServiceAccountTokenRequest, TokenIssuer } from '../token-issuer.js';
import type { ServiceAccountKeys } from './keys.js';
import { EXPIRATION_EXTENSION_SECONDS, WARN_ONLY_BOUND_TOKEN_EXPIRATION_SECONDS, boundClaims, legacyClaims } from './claims.js';
import { jwksURIFor, openIDConfiguration, openIDKeyset } from './openid.js';

export interface ServiceAccountTokenIssuerOptions {
  keys: ServiceAccountKeys;
  /** --service-account-issuer: the first is the `iss` of new tokens and of the discovery document. */
  issuers: readonly string[];
  /** --api-audiences (the default audiences of a TokenRequest). */
  apiAudiences: readonly string[];
  /** --service-account-max-token-expiration in seconds; 0: no cap. */
  maxExpirationSeconds: number;
  /** --service-account-extend-token-expiration. */
  extendExpiration: boolean;
  /** --service-account-jwks-uri; '' derives it from the server's external address. */
  jwksURI: string;
  /** The clock (tests). */
  now?: () => Date;
}

export function createServiceAccountTokenIssuer(opts: ServiceAccountTokenIssuerOptions): TokenIssuer {
  const issuer = opts.issuers[0];
  if (!issuer) throw new Error('service account token issuer: no --service-account-issuer');
  const { signing, verifying } = opts.keys;
  const apiAudiences = new Set(opts.apiAudiences);
  const clock = opts.now ?? (() => new Date());
  const sign = (claims: Record<string, unknown>): Promise<string> =>
    // The header kube writes: alg and kid, nothing else.
    new SignJWT(claims).setProtectedHeader({ alg: signing.alg, kid: signing.kid }).sign(signing.key);

  return {
    apiAudiences: [...opts.apiAudiences],

    async issue(req: ServiceAccountTokenRequest): Promise<IssuedToken> {
      const now = Math.floor(clock().getTime() / 1000);
      const audiences = req.audiences.length > 0 ? req.audiences : opts.apiAudiences;
      let seconds = req.expirationSeconds;
      if (opts.maxExpirationSeconds > 0 && seconds > opts.maxExpirationSeconds) seconds = opts.maxExpirationSeconds;
      // Safe rollout of bound tokens: a pod-bound token for the API asking for exactly 1h7s
      // lives a year, warning after the hour. Only pod-bound tokens; the status still reports
      // the requested expiry.
      let exp = seconds;
      let warnAfter = 0;
      const pod = req.boundObject?.kind === 'Pod' ? req.boundObject : undefined;
      const secret = req.boundObject?.kind === 'Secret' ? req.boundObject : undefined;
      if (opts.extendExpiration && pod && seconds === WARN_ONLY_BOUND_TOKEN_EXPIRATION_SECONDS && audiences.every((a) => apiAudiences.has(a))) {
        warnAfter = seconds;
        exp = EXPIRATION_EXTENSION_SECONDS;
      }
      const token = await sign(
        boundClaims({
          issuer,
          namespace: req.namespace,
          name: req.name,
          uid: req.uid,
          audiences,
          now,
          expirationSeconds: exp,
          warnAfterSeconds: warnAfter,
          ...(pod ? { pod: { name: pod.name, uid: pod.uid } } : {}),
          ...(secret ? { secret: { name: secret.name, uid: secret.uid } } : {}),
        }),
      );
      return { token, expirationTimestamp: new Date((now + seconds) * 1000) };
    },

    issueLegacy(req) {
      return sign(legacyClaims(req));
    },

    openidConfiguration(externalAddress: string) {
      return openIDConfiguration(issuer, jwksURIFor(opts.jwksURI, externalAddress), verifying);
    },

    jwks() {
      return openIDKeyset(verifying);
    },
  };
}
