/**
 * The OpenID Connect authenticator (`--oidc-*`), as kube-apiserver 1.24's
 * (apiserver/plugin/pkg/authenticator/token/oidc/oidc.go and pkg/kubeapiserver/authenticator/
 * config.go): an ID token from the one configured issuer, verified against the issuer's keys
 * (oidc-provider.ts), mapped to a user by the username and groups claims.
 *
 * Answers: a bearer token that is not a JWT, or a JWT whose (unverified) `iss` is another issuer,
 * is not ours (no opinion: the union tries the others); a token of our issuer that fails any check
 * is rejected (401), and so is every token of our issuer until discovery has succeeded.
 */
import { readFileSync } from 'node:fs';
import { X509Certificate } from 'node:crypto';
import { setMember, type UserInfo } from '@plinth/api';
import { type Authenticator, type AuthResult, bearerToken } from './authenticator.js';
import type { AuthenticationMethod } from './config.js';
import type { OIDCOptions } from './options.js';
import {
  OIDCTokenError,
  claimSourcesOf,
  createHttpGetter,
  createOIDCProvider,
  decodeSegment,
  type HttpGetter,
  type OIDCLog,
  type OIDCProvider,
  type OIDCProviderOptions,
} from './oidc-provider.js';

const GOOGLE_ISSUER = 'https://accounts.google.com';

/**
 * The `iss` of a token, unverified, or undefined when the token is no compact JWT with a JSON
 * object payload (kube's untrustedIssuer). `accounts.google.com` counts as Google's URL.
 */
export function oidcUntrustedIssuer(token: string): string | undefined {
  const parts = token.split('.');
  if (parts.length !== 3) return undefined;
  const payload = decodeSegment(parts[1]!);
  if (!payload) return undefined;
  let v: unknown;
  try {
    v = JSON.parse(payload.toString('utf8'));
  } catch {
    return undefined;
  }
  // Go unmarshals `null` into the struct as a no-op, anything but an object is an error.
  if (v === null) return '';
  if (typeof v !== 'object' || Array.isArray(v)) return undefined;
  const iss = (v as Record<string, unknown>)['iss'];
  if (iss !== undefined && iss !== null && typeof iss !== 'string') return undefined;
  return iss === 'accounts.google.com' ? GOOGLE_ISSUER : ((iss as string | null | undefined) ?? '');
}

/**
 * The prefix user names get (kube's newAuthenticatorFromOIDCIssuerURL): the flag's value; when
 * the flag is empty, `<issuer>#` unless the claim is `email`; `-` means none.
 */
export function oidcUsernamePrefix(o: Pick<OIDCOptions, 'issuerURL' | 'usernameClaim' | 'usernamePrefix'>): string {
  let prefix = o.usernamePrefix;
  if (prefix === '' && o.usernameClaim !== 'email') prefix = `${o.issuerURL}#`;
  return prefix === '-' ? '' : prefix;
}

export interface OIDCClaimMapping {
  usernameClaim: string;
  /** Already resolved by oidcUsernamePrefix. */
  usernamePrefix: string;
  groupsClaim: string;
  groupsPrefix: string;
  requiredClaims: Readonly<Record<string, string>>;
}

/** A claim decoded as Go decodes JSON into a string: `null` leaves it empty, other types fail. */
function stringClaim(v: unknown): string | undefined {
  if (v === null) return '';
  return typeof v === 'string' ? v : undefined;
}

/**
 * The user a verified token's claims describe (kube's AuthenticateToken after Verify). Throws
 * OIDCTokenError when the username claim is absent or not a string, when the username claim is
 * `email` and a present `email_verified` is not `true` (an absent one is accepted), when the
 * groups claim is neither a string nor an array of strings, or when a required claim is absent or
 * is not exactly the required string. Only the name and groups are set: 1.24 maps no uid or extra.
 */
export function oidcUserFromClaims(claims: Record<string, unknown>, m: OIDCClaimMapping): UserInfo {
  const bad = (msg: string): never => {
    throw new OIDCTokenError(`oidc: ${msg}`);
  };
  // Claims are the token's own members (Go map lookups): never an inherited `constructor`.
  const has = (name: string): boolean => Object.hasOwn(claims, name);
  if (!has(m.usernameClaim)) bad(`parse username claims ${JSON.stringify(m.usernameClaim)}: claim not present`);
  const username = claims[m.usernameClaim];
  // kube lets Go decode `null` as ""; a user with an empty name is refused here instead.
  if (typeof username !== 'string') bad(`parse username claims ${JSON.stringify(m.usernameClaim)}: not a string`);

  if (m.usernameClaim === 'email' && has('email_verified')) {
    const verified = claims['email_verified'];
    if (verified !== null && typeof verified !== 'boolean') bad("parse 'email_verified' claim: not a boolean");
    if (verified !== true) bad('email not verified');
  }

  let groups: string[] = [];
  if (m.groupsClaim && has(m.groupsClaim)) {
    // A single string is one group (kubernetes/kubernetes#33290).
    const v = claims[m.groupsClaim];
    if (v === null) groups = [];
    else if (typeof v === 'string') groups = [v];
    else if (Array.isArray(v) && v.every((g) => g === null || typeof g === 'string')) groups = v.map((g) => (g as string | null) ?? '');
    else bad(`parse groups claim ${JSON.stringify(m.groupsClaim)}: not a string or an array of strings`);
  }
  if (m.groupsPrefix) groups = groups.map((g) => m.groupsPrefix + g);

  for (const [claim, want] of Object.entries(m.requiredClaims)) {
    if (!has(claim)) bad(`required claim ${claim} not present in ID token`);
    const got = stringClaim(claims[claim]);
    if (got === undefined) bad(`parse claim ${claim}: not a string`);
    if (got !== want) bad(`required claim ${claim} value does not match`);
  }
  return { name: m.usernamePrefix + (username as string), groups };
}

export interface OIDCAuthenticatorOptions extends OIDCOptions {
  /** PEM bundle of `--oidc-ca-file` (already read); the default roots when unset. */
  caPEM?: string;
  log: OIDCLog;
  /** Provider tuning (retries, key refresh interval); kube's values by default. */
  provider?: Pick<OIDCProviderOptions, 'retryInitialMs' | 'retryMaxMs' | 'keyRefreshIntervalMs'>;
  /** Milliseconds since the epoch; default Date.now(). */
  now?: () => number;
}

const NO_OPINION: AuthResult = { kind: 'no-opinion' };

/** Builds the authenticator and starts discovery in the background (it never waits for it). */
export function createOIDCAuthenticator(opts: OIDCAuthenticatorOptions): Authenticator {
  const http = createHttpGetter(opts.caPEM ? { ca: opts.caPEM } : {});
  const providerOptions = (issuer: string): OIDCProviderOptions => ({ issuer, http, log: opts.log, ...opts.provider });
  const provider = createOIDCProvider(providerOptions(opts.issuerURL));
  const verifyConfig = { clientID: opts.clientID, algorithms: opts.signingAlgs.length ? opts.signingAlgs : ['RS256'], ...(opts.now ? { now: opts.now } : {}) };
  const mapping: OIDCClaimMapping = {
    usernameClaim: opts.usernameClaim,
    usernamePrefix: oidcUsernamePrefix(opts),
    groupsClaim: opts.groupsClaim,
    groupsPrefix: opts.groupsPrefix,
    requiredClaims: { ...opts.requiredClaims },
  };
  // Distributed claims are resolved for the groups claim only (kube's claimResolver).
  const resolver = opts.groupsClaim ? createClaimResolver(opts.groupsClaim, http, provider, (iss) => createOIDCProvider(providerOptions(iss)), verifyConfig) : undefined;

  return {
    async authenticate(req) {
      const token = bearerToken(req);
      if (!token || oidcUntrustedIssuer(token) !== opts.issuerURL) return NO_OPINION;
      try {
        const claims = await provider.verify(token, verifyConfig);
        if (resolver) await resolver.expand(claims);
        return { kind: 'authenticated', user: oidcUserFromClaims(claims, mapping) };
      } catch (e) {
        // Only OIDCTokenError messages are known to carry no token material.
        return { kind: 'rejected', reason: e instanceof OIDCTokenError ? e.message : 'oidc: verify token failed' };
      }
    },
    close() {
      provider.close();
      resolver?.close();
      http.close();
    },
  };
}

interface ClaimResolver {
  /** Replaces a distributed groups claim by its value from the claim source's endpoint. */
  expand(claims: Record<string, unknown>): Promise<void>;
  close(): void;
}

/**
 * kube's claimResolver (OIDC Core 5.6.2 distributed claims): when the token has no groups claim
 * but `_claim_names` maps it to a `_claim_sources` entry with an `endpoint`, GET that endpoint
 * (with its `access_token` as a bearer token), verify the JWT it answers with the verifier of that
 * JWT's issuer (same client id and algorithms; a provider per issuer, discovered in the
 * background like the main one), and take the claim from it. Aggregated claims (`JWT` sources)
 * are ignored, as in kube.
 */
function createClaimResolver(
  claim: string,
  http: HttpGetter,
  main: OIDCProvider,
  newProvider: (issuer: string) => OIDCProvider,
  verifyConfig: { clientID: string; algorithms: readonly string[]; now?: () => number },
): ClaimResolver {
  const others = new Map<string, OIDCProvider>();
  const bad = (msg: string): never => {
    throw new OIDCTokenError(`oidc: could not expand distributed claims: ${msg}`);
  };
  return {
    async expand(claims) {
      if (Object.hasOwn(claims, claim) || !Object.hasOwn(claims, '_claim_names')) return;
      if (!Object.hasOwn(claims, '_claim_sources')) bad('no claim sources');
      const source = claimSourcesOf(claims).get(claim);
      if (!source || !source.endpoint) return;

      let res;
      try {
        res = await http.get(source.endpoint, source.accessToken ? { authorization: `Bearer ${source.accessToken}` } : {});
      } catch (e) {
        return bad(`while getting distributed claim ${JSON.stringify(claim)}: ${(e as Error).message}`);
      }
      if (res.status < 200 || res.status > 226) bad(`error while getting distributed claim JWT: HTTP ${res.status}`);
      const jwt = res.body.toString('utf8').trim();
      const iss = oidcUntrustedIssuer(jwt);
      if (iss === undefined) bad(`getting untrusted issuer from endpoint failed for claim ${JSON.stringify(claim)}`);
      let verifier = iss === main.issuer ? main : others.get(iss!);
      if (!verifier) others.set(iss!, (verifier = newProvider(iss!)));
      if (!verifier.isReady()) bad(`verifier not initialized for issuer: ${JSON.stringify(iss)}`);
      let distClaims: Record<string, unknown>;
      try {
        distClaims = await verifier.verify(jwt, verifyConfig);
      } catch (e) {
        return bad(`verify distributed claim token: ${e instanceof OIDCTokenError ? e.message : 'failed'}`);
      }
      if (!Object.hasOwn(distClaims, claim)) bad(`jwt returned by distributed claim endpoint did not contain claim: ${claim}`);
      setMember(claims, claim, distClaims[claim]);
    },
    close() {
      for (const p of others.values()) p.close();
    },
  };
}

/** Reads `--oidc-ca-file` now, so a missing or empty file fails start-up (as kube's). */
export function readOIDCCAFile(file: string): string {
  let pem: string;
  try {
    pem = readFileSync(file, 'utf8');
  } catch (e) {
    throw new Error(`--oidc-ca-file: cannot read ${file}: ${(e as Error).message}`);
  }
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  const valid = blocks.filter((b) => {
    try {
      new X509Certificate(b);
      return true;
    } catch {
      return false;
    }
  });
  if (valid.length === 0) throw new Error(`--oidc-ca-file: ${file} contains no valid certificate`);
  return valid.join('\n');
}

/** Registration: on when --oidc-issuer-url and --oidc-client-id are set (options.ts validates them). */
export const oidcMethod: AuthenticationMethod = {
  name: 'oidc',
  audienceAgnostic: true,
  build(opts, deps) {
    if (!opts.oidc) return undefined;
    const caPEM = opts.oidc.caFile ? readOIDCCAFile(opts.oidc.caFile) : undefined;
    if (!caPEM) deps.log.info("OIDC: No x509 certificates provided, will use host's root CA set");
    return createOIDCAuthenticator({ ...opts.oidc, ...(caPEM ? { caPEM } : {}), log: deps.log });
  },
};
