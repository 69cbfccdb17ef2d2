/**
 * The service-account token authenticator (kube's JWTTokenAuthenticator, twice: once for legacy
 * tokens, issuer `kubernetes/serviceaccount`, once for bound tokens of the --service-account-issuer
 * values). A bearer token that is not a JWT, or names another issuer, is not ours (no opinion);
 * one of ours must verify against a service-account key, be for one of the audiences asked for,
 * be in date, and still name existing objects.
 */
import { decodeJwt, decodeProtectedHeader, errors, jwtVerify, type JWTPayload } from 'jose';
import { bearerToken, type AuthResult, type Authenticator } from '../authenticator.js';
import type { AuthenticationMethod } from '../config.js';
import type { ServiceAccountKeys, VerifyingKey } from './keys.js';
import { loadServiceAccountKeys } from './keys.js';
import { LEEWAY_SECONDS, LEGACY_ISSUER, serviceAccountUser, validateBoundClaims, validateLegacyClaims, type ServiceAccountTokenGetter } from './claims.js';

export interface ServiceAccountAuthenticatorOptions {
  keys: ServiceAccountKeys;
  /** --service-account-issuer: bound tokens of any of these are accepted. */
  issuers: readonly string[];
  /** --api-audiences: what a token must be for when the request names no audiences. */
  apiAudiences: readonly string[];
  /** --service-account-lookup (legacy tokens; bound tokens are always looked up). */
  lookup: boolean;
  getter: ServiceAccountTokenGetter;
  /** The clock (tests). */
  now?: () => Date;
}

const rejected = (reason: string): AuthResult => ({ kind: 'rejected', reason });
const NO_OPINION: AuthResult = { kind: 'no-opinion' };

/** The unverified `iss` of a compact JWS, or undefined when the token is not one (hasCorrectIssuer). */
function unverifiedIssuer(token: string): string | undefined {
  if (token.trimStart().startsWith('{')) return undefined;
  try {
    const iss = decodeJwt(token).iss;
    return typeof iss === 'string' ? iss : undefined;
  } catch {
    return undefined;
  }
}

/** A failure that another key could fix: the signature (or alg) did not fit this key. */
function isKeyMismatch(e: unknown): boolean {
  return e instanceof errors.JWSSignatureVerificationFailed || e instanceof errors.JOSEAlgNotAllowed;
}

export function createServiceAccountAuthenticator(opts: ServiceAccountAuthenticatorOptions): Authenticator {
  const issuers = new Set(opts.issuers);
  const apiAudiences = [...opts.apiAudiences];
  const clock = opts.now ?? (() => new Date());
  const { verifying, byKid } = opts.keys;

  /** The verified payload, or why the token is refused. */
  const verify = async (token: string, now: Date): Promise<JWTPayload | string> => {
    let kid: string | undefined;
    try {
      kid = decodeProtectedHeader(token).kid;
    } catch {
      return 'invalid token header';
    }
    // The key the token names first; any key when it names none or one we do not know (kube
    // 1.24 tries every key).
    const named = kid !== undefined ? byKid.get(kid) : undefined;
    const candidates: readonly VerifyingKey[] = named ? [named, ...verifying.filter((k) => k !== named)] : verifying;
    for (const key of candidates) {
      try {
        const { payload } = await jwtVerify(token, key.key, { algorithms: [key.alg], clockTolerance: LEEWAY_SECONDS, currentDate: now });
        return payload;
      } catch (e) {
        if (isKeyMismatch(e)) continue;
        if (e instanceof errors.JWTExpired) return 'service account token has expired';
        if (e instanceof errors.JWTClaimValidationFailed && e.claim === 'nbf') return 'service account token is not valid yet';
        return 'service account token could not be validated';
      }
    }
    return 'invalid signature';
  };

  return {
    async authenticate(req) {
      const token = bearerToken(req);
      if (!token) return NO_OPINION;
      const iss = unverifiedIssuer(token);
      const legacy = iss === LEGACY_ISSUER;
      if (iss === undefined || (!legacy && !issuers.has(iss))) return NO_OPINION;

      const now = clock();
      const payload = await verify(token, now);
      if (typeof payload === 'string') return rejected(payload);
      if (payload.iss !== iss) return rejected('token issuer is invalid');

      // Tokens without an audience (legacy ones) are for the API audiences.
      const claimed = typeof payload.aud === 'string' ? [payload.aud] : Array.isArray(payload.aud) ? payload.aud : [];
      const tokenAudiences = claimed.length > 0 ? claimed : apiAudiences;
      const requested = req.audiences ?? apiAudiences;
      const audiences = tokenAudiences.filter((a) => requested.includes(a));
      if (audiences.length === 0 && apiAudiences.length > 0) return rejected('token audiences are invalid for the target audiences');

      try {
        const v = legacy
          ? await validateLegacyClaims(token, payload, opts.getter, opts.lookup)
          : await validateBoundClaims(payload, opts.getter, Math.floor(now.getTime() / 1000));
        return v.valid ? { kind: 'authenticated', user: serviceAccountUser(v.info), ...(audiences.length > 0 ? { audiences } : {}) } : rejected(v.reason);
      } catch {
        // The lookup failed (storage unavailable): no identity can be vouched for.
        return rejected('service account token could not be validated');
      }
    },
  };
}

/** Registration: service-account tokens are always on (kube's default); keys shared with the issuer. */
export const serviceAccountMethod: AuthenticationMethod = {
  name: 'service-account',
  async build(opts, deps) {
    const sa = opts.serviceAccounts;
    const keys = await loadServiceAccountKeys(sa, deps.dataDir, (file) => deps.log.info('generated a service-account signing key', { file }));
    return createServiceAccountAuthenticator({
      keys,
      issuers: sa.issuers,
      apiAudiences: opts.apiAudiences,
      lookup: sa.lookup,
      getter: { getServiceAccount: deps.getServiceAccount, getSecret: deps.getServiceAccountSecret ?? deps.getSecret, ...(deps.getPod ? { getPod: deps.getPod } : {}) },
    });
  },
};
