/**
 * The one place authorization modes are registered (kube's pkg/kubeapiserver/authorizer/config.go):
 * `--authorization-mode` names modes in the order the union tries them; `system:masters` is
 * allowed before any of them (createUnionAuthorizer).
 */
import type { Authorizer, Decision } from './authorizer.js';
import { createUnionAuthorizer } from './authorizer.js';
import { createRBACAuthorizer, type RBACSource } from './rbac/authorizer.js';
import { createWebhookAuthorizer, type SubjectAccessReviewVersion } from './authz-webhook.js';
import { loadKubeconfig, type RestClientConfig } from './kubeconfig.js';
import { createNodeAuthorizer, type NodeGraphSource } from './node/authorizer.js';

export interface AuthorizationOptions {
  /** `--authorization-mode`, in order. */
  modes: string[];
  /** `--authorization-webhook-*`: set when a config file is given. */
  webhook?: {
    configFile: string;
    version: string;
    authorizedTTLms: number;
    unauthorizedTTLms: number;
  };
}

export interface AuthorizerDeps {
  /** Roles and bindings, for RBAC (the apiserver's watch-cache informers). */
  rbacSource: RBACSource;
  /** Pods, PersistentVolumes and VolumeAttachments, for the Node authorizer's graph (watch-cache informers). */
  nodeGraphSource?: NodeGraphSource;
  log: { error(msg: string, fields?: Record<string, unknown>): void };
}

export interface AuthorizationMode {
  name: string;
  build(opts: AuthorizationOptions, deps: AuthorizerDeps): Authorizer;
}

const ALLOW: Decision = { decision: 'allow' };
/** kube's alwaysDenyAuthorizer: no opinion, with this reason (the union's "no allow" is the 403). */
const DENY: Decision = { decision: 'no-opinion', reason: 'Everything is forbidden.' };

export const alwaysAllowMode: AuthorizationMode = {
  name: 'AlwaysAllow',
  build: () => ({
    authorize: () => ALLOW,
    rulesFor: () => ({
      resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], resourceNames: [] }],
      nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
      incomplete: false,
    }),
  }),
};

export const alwaysDenyMode: AuthorizationMode = {
  name: 'AlwaysDeny',
  build: () => ({
    authorize: () => DENY,
    rulesFor: () => ({ resourceRules: [], nonResourceRules: [], incomplete: false }),
  }),
};

export const rbacMode: AuthorizationMode = {
  name: 'RBAC',
  build: (_opts, deps) => createRBACAuthorizer({ source: deps.rbacSource }),
};

/** kube's Node mode: kubelets reach only what the pods bound to them use. */
export const nodeMode: AuthorizationMode = {
  name: 'Node',
  build(_opts, deps) {
    if (!deps.nodeGraphSource) throw new Error('authorization-mode Node needs the pods, persistentvolumes and volumeattachments informers');
    return createNodeAuthorizer({ source: deps.nodeGraphSource });
  },
};

export const webhookAuthorizationMode: AuthorizationMode = {
  name: 'Webhook',
  build(opts, deps) {
    const w = opts.webhook;
    if (!w) throw new Error("authorization-mode Webhook's authorization config file not passed");
    let client: RestClientConfig;
    try {
      client = loadKubeconfig(w.configFile);
    } catch (e) {
      throw new Error(`--authorization-webhook-config-file: ${(e as Error).message}`);
    }
    return createWebhookAuthorizer({
      client,
      version: w.version as SubjectAccessReviewVersion,
      authorizedTTLms: w.authorizedTTLms,
      unauthorizedTTLms: w.unauthorizedTTLms,
      log: deps.log,
    });
  },
};

/** Registration: every mode `--authorization-mode` accepts. */
export const AUTHORIZATION_MODES: readonly AuthorizationMode[] = [alwaysAllowMode, alwaysDenyMode, nodeMode, rbacMode, webhookAuthorizationMode];

/** kube's modes plinth does not implement: named as such rather than as unknown. */
const UNSUPPORTED_KUBE_MODES = new Set(['ABAC']);

/** kube's BuiltInAuthorizationOptions.Validate: every problem, each naming its flag. */
export function validateAuthorizationOptions(o: AuthorizationOptions): string[] {
  const errs: string[] = [];
  const known = new Set(AUTHORIZATION_MODES.map((m) => m.name));
  if (o.modes.length === 0) errs.push('at least one authorization-mode must be passed');
  for (const mode of o.modes) {
    if (UNSUPPORTED_KUBE_MODES.has(mode)) errs.push(`authorization-mode ${JSON.stringify(mode)} is not supported by plinth (supported: ${[...known].join(', ')})`);
    else if (!known.has(mode)) errs.push(`authorization-mode ${JSON.stringify(mode)} is not a valid mode`);
    if (mode === 'Webhook' && !o.webhook) errs.push("authorization-mode Webhook's authorization config file not passed");
  }
  if (o.webhook && !o.modes.includes('Webhook')) errs.push('cannot specify --authorization-webhook-config-file without mode Webhook');
  if (new Set(o.modes).size !== o.modes.length) errs.push(`authorization-mode [${o.modes.map((m) => JSON.stringify(m)).join(' ')}] has mode specified more than once`);
  if (o.webhook && o.webhook.version !== 'v1' && o.webhook.version !== 'v1beta1') errs.push(`--authorization-webhook-version: unsupported webhook authorizer version ${JSON.stringify(o.webhook.version)}, supported versions are "v1", "v1beta1"`);
  return errs;
}

/** Builds each mode in the given order and their union. */
export function buildAuthorizer(opts: AuthorizationOptions, deps: AuthorizerDeps): Authorizer {
  const built: Authorizer[] = [];
  try {
    for (const name of opts.modes) {
      const mode = AUTHORIZATION_MODES.find((m) => m.name === name);
      if (!mode) throw new Error(`authorization-mode ${JSON.stringify(name)} is not a valid mode`);
      built.push(mode.build(opts, deps));
    }
  } catch (e) {
    for (const a of built) a.close?.();
    throw e;
  }
  return createUnionAuthorizer(built);
}
