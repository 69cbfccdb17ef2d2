/**
 * Authentication options: what kube-apiserver's BuiltInAuthenticationOptions hold, one sub-object
 * per method, validated and defaulted here so every authenticator is built from complete options.
 */

export interface ClientCertOptions {
  /** `--client-ca-file`: PEM bundle of the CAs whose client certificates authenticate. */
  caFile: string;
}

export interface RequestHeaderOptions {
  /** `--requestheader-client-ca-file`: the CAs the authenticating proxy's client certificate chains to. */
  clientCAFile: string;
  /** `--requestheader-allowed-names`: the proxy certificate's CN must be one of these (any when empty). */
  allowedNames: string[];
  usernameHeaders: string[];
  groupHeaders: string[];
  extraHeaderPrefixes: string[];
}

export interface ServiceAccountOptions {
  /** `--service-account-issuer`: the first signs new tokens, every one is accepted. */
  issuers: string[];
  /** `--service-account-signing-key-file`: PEM private key that signs tokens. */
  signingKeyFile: string;
  /** `--service-account-key-file`: PEM public or private keys that verify tokens. */
  keyFiles: string[];
  /** `--service-account-lookup`: tokens of deleted accounts, and of deleted legacy Secrets, are refused. */
  lookup: boolean;
  /** `--service-account-max-token-expiration` in seconds; 0: no maximum. */
  maxExpirationSeconds: number;
  /** `--service-account-extend-token-expiration`. */
  extendExpiration: boolean;
  /** `--service-account-jwks-uri`: the discovery document's `jwks_uri` ('' derives it from the server's address). */
  jwksURI: string;
}

export interface OIDCOptions {
  issuerURL: string;
  clientID: string;
  /** `--oidc-ca-file`; the host's roots when empty. */
  caFile: string;
  usernameClaim: string;
  /** `--oidc-username-prefix` as given: '' means the default rule, '-' means none. */
  usernamePrefix: string;
  groupsClaim: string;
  groupsPrefix: string;
  requiredClaims: Record<string, string>;
  signingAlgs: string[];
}

export interface WebhookOptions {
  /** `--authentication-token-webhook-config-file` (kubeconfig format). */
  configFile: string;
  /** `--authentication-token-webhook-cache-ttl` in ms. */
  cacheTTLms: number;
  /** `--authentication-token-webhook-version`: 'v1beta1' or 'v1'. */
  version: 'v1' | 'v1beta1';
}

export interface AuthenticationOptions {
  /** `--anonymous-auth`. */
  anonymous: boolean;
  /** `--api-audiences` (defaulted to the first service-account issuer). */
  apiAudiences: string[];
  clientCert?: ClientCertOptions;
  requestHeader?: RequestHeaderOptions;
  /** `--token-auth-file`. */
  tokenFile?: string;
  /** `--enable-bootstrap-token-auth`. */
  bootstrapToken: boolean;
  serviceAccounts: ServiceAccountOptions;
  oidc?: OIDCOptions;
  webhook?: WebhookOptions;
}

/** kube's default issuer when none is configured (plinth's embedded default). */
export const DEFAULT_SERVICE_ACCOUNT_ISSUER = 'https://kubernetes.default.svc.cluster.local';

/** Algorithms `--oidc-signing-algs` accepts (go-oidc's asymmetric set). */
export const OIDC_SIGNING_ALGS = ['RS256', 'RS384', 'RS512', 'ES256', 'ES384', 'ES512', 'PS256', 'PS384', 'PS512'];

/** Applies kube's defaults in place and returns the options. */
export function completeAuthenticationOptions(o: AuthenticationOptions): AuthenticationOptions {
  if (o.serviceAccounts.issuers.length === 0) o.serviceAccounts.issuers = [DEFAULT_SERVICE_ACCOUNT_ISSUER];
  if (o.apiAudiences.length === 0) o.apiAudiences = [o.serviceAccounts.issuers[0]!];
  return o;
}

/** kube's BuiltInAuthenticationOptions.Validate: every problem, as flag-named messages. */
export function validateAuthenticationOptions(o: AuthenticationOptions): string[] {
  const errs: string[] = [];
  for (const issuer of o.serviceAccounts.issuers) {
    if (issuer.includes(':')) {
      try {
        new URL(issuer);
      } catch {
        errs.push(`service-account-issuer ${JSON.stringify(issuer)} contained a ':' but was not a valid URL`);
      }
    }
  }
  if (new Set(o.serviceAccounts.issuers).size !== o.serviceAccounts.issuers.length) errs.push('service-account-issuer contains duplicate values');
  // kube's validateTokenRequest: verifying keys without a signing key is a half-made issuer.
  if (o.serviceAccounts.keyFiles.length > 0 && !o.serviceAccounts.signingKeyFile) {
    errs.push('--service-account-signing-key-file, --service-account-issuer, and --api-audiences should be specified together');
  }
  if (o.serviceAccounts.jwksURI) {
    let url: URL | undefined;
    try {
      url = new URL(o.serviceAccounts.jwksURI);
    } catch {
      errs.push(`service-account-jwks-uri must be a valid URL: ${JSON.stringify(o.serviceAccounts.jwksURI)}`);
    }
    if (url && url.protocol !== 'https:') errs.push(`service-account-jwks-uri requires https scheme, parsed as: ${o.serviceAccounts.jwksURI}`);
  }
  if (o.serviceAccounts.maxExpirationSeconds !== 0 && o.serviceAccounts.maxExpirationSeconds < 3600) {
    errs.push('service-account-max-token-expiration should be 0 (no maximum) or at least 1h');
  }
  if (o.oidc) {
    if (!o.oidc.issuerURL || !o.oidc.clientID) errs.push('oidc-issuer-url and oidc-client-id should be specified together');
    else {
      let url: URL | undefined;
      try {
        url = new URL(o.oidc.issuerURL);
      } catch {
        errs.push(`oidc-issuer-url: invalid URL ${JSON.stringify(o.oidc.issuerURL)}`);
      }
      if (url && url.protocol !== 'https:') errs.push(`oidc-issuer-url (${o.oidc.issuerURL}) must use https scheme`);
    }
    if (!o.oidc.usernameClaim) errs.push('oidc-username-claim must not be empty');
    for (const alg of o.oidc.signingAlgs) if (!OIDC_SIGNING_ALGS.includes(alg)) errs.push(`oidc-signing-algs: unsupported signing alg ${JSON.stringify(alg)}`);
  }
  if (o.webhook) {
    if (o.webhook.version !== 'v1' && o.webhook.version !== 'v1beta1') errs.push(`authentication-token-webhook-version: invalid version ${JSON.stringify(o.webhook.version)}, must be v1 or v1beta1`);
    if (o.webhook.cacheTTLms < 0) errs.push('authentication-token-webhook-cache-ttl must not be negative');
  }
  return errs;
}
