/**
 * The one place authentication methods are registered, in kube-apiserver's order (pkg/kubeapiserver/
 * authenticator/config.go): authenticating proxy, client certificates, token file, service
 * accounts, bootstrap tokens, OIDC, webhook. Each method builds its authenticator from its own
 * options; adding a method is a module in this package plus one line in METHODS.
 */
import type { StoredObject } from '@plinth/api';
import { createUnionAuthenticator, type Authenticator } from './authenticator.js';
import type { AuthenticationOptions } from './options.js';
import { requestHeaderMethod } from './request-header.js';
import { x509Method } from './x509.js';
import { tokenFileMethod } from './token-file.js';
import { bootstrapTokenMethod } from './bootstrap-token.js';
import { oidcMethod } from './oidc.js';
import { webhookMethod } from './webhook.js';
import { serviceAccountMethod } from './serviceaccount/authenticator.js';

/** Reads the authenticators need, served from the watch cache (no etcd read per request). */
export interface AuthenticatorDeps {
  /** A Secret as the cache has it (bootstrap tokens: looked up before anything is verified). */
  getSecret(namespace: string, name: string): Promise<StoredObject | undefined>;
  /**
   * Reads for service-account tokens, made only once the token's signature verified: the cache,
   * then etcd when the cache has not seen the object yet — another replica may have created it a
   * moment ago (kube's NewGetterFromClient: lister first, then a live GET).
   */
  getServiceAccount(namespace: string, name: string): Promise<StoredObject | undefined>;
  getServiceAccountSecret?(namespace: string, name: string): Promise<StoredObject | undefined>;
  /** The pod of a pod-bound token, read as getServiceAccount reads; unset: pod-bound tokens are refused. */
  getPod?(namespace: string, name: string): Promise<StoredObject | undefined>;
  /** Plinth's own fixed tokens (the admin token from the data dir): token → user. */
  staticTokens: Map<string, import('@plinth/api').UserInfo>;
  /** Where generated keys are kept (the service-account signing key). */
  dataDir: string;
  log: {
    info(msg: string, fields?: Record<string, unknown>): void;
    error(msg: string, fields?: Record<string, unknown>): void;
    /** Logged only at verbosity >= level (kube's klog.V); absent: not logged. */
    v?(level: number, msg: string, fields?: Record<string, unknown>): void;
  };
}

export interface AuthenticationMethod {
  name: string;
  /**
   * Its tokens carry no audience (token file, bootstrap, OIDC): they are taken to be for the API
   * audiences, so a request for other audiences only (a TokenReview's spec.audiences) is not
   * theirs — kube's WrapAudienceAgnosticToken.
   */
  audienceAgnostic?: boolean;
  /** The method's authenticator, or undefined when its options leave it off. */
  build(opts: AuthenticationOptions, deps: AuthenticatorDeps): Authenticator | undefined | Promise<Authenticator | undefined>;
}

/** Registration, in the order the union tries them. */
export const METHODS: readonly AuthenticationMethod[] = [
  requestHeaderMethod,
  x509Method,
  tokenFileMethod,
  serviceAccountMethod,
  bootstrapTokenMethod,
  oidcMethod,
  webhookMethod,
];

/** Builds every enabled method and their union (which adds system:authenticated). */
export async function buildAuthenticator(opts: AuthenticationOptions, deps: AuthenticatorDeps): Promise<Authenticator> {
  const built: Authenticator[] = [];
  try {
    for (const m of METHODS) {
      const a = await m.build(opts, deps);
      if (a) built.push(m.audienceAgnostic ? forAPIAudiences(a, opts.apiAudiences) : a);
    }
  } catch (e) {
    for (const a of built) a.close?.();
    throw e;
  }
  return createUnionAuthenticator(built);
}

/** kube's WrapAudienceAgnosticToken: no opinion on requests for audiences other than the API's. */
function forAPIAudiences(a: Authenticator, apiAudiences: readonly string[]): Authenticator {
  return {
    ...(a.clientCAs ? { clientCAs: a.clientCAs } : {}),
    close: () => a.close?.(),
    async authenticate(req) {
      if (!req.audiences || req.audiences.length === 0) return a.authenticate(req);
      const audiences = apiAudiences.filter((x) => req.audiences!.includes(x));
      if (audiences.length === 0) return { kind: 'no-opinion' };
      const r = await a.authenticate(req);
      return r.kind === 'authenticated' ? { ...r, audiences } : r;
    },
  };
}
