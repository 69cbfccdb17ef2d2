/**
 * Flags → options: the flat flag values become validated, defaulted options grouped by component
 * (kube's ServerRunOptions.Complete + Validate). Everything wrong is reported at once.
 */
import { completeAuthenticationOptions, validateAuthenticationOptions, validateAuthorizationOptions, type AuthenticationOptions, type AuthorizationOptions } from '@plinth/auth';
import { enabledAdmissionPlugins, loadPodSecurityConfig, validateAdmissionPlugins } from '@plinth/admission';
import { type AdmissionPluginConfigs, loadAdmissionConfig } from './admission-config.js';
import { validateControllers } from './controllers-flag.js';
import { FlagError, type ServerOptions } from './flags.js';
import { featureGatesFrom, type FeatureGates } from './features.js';
import { validateAuditFlags } from './audit/index.js';
import { builtinResources } from '@plinth/api';
import { disabledByRuntimeConfig } from './runtime-config.js';
import { validateShowHiddenMetricsVersion } from './metrics/stability.js';
import { type ServiceIPRanges, parseServiceClusterIPRange, validateServiceClusterIPRange } from './services/ranges.js';
import { resolveAdvertiseAddress } from './services/advertise-address.js';

/** The Service network flags, completed (kube's ServerRunOptions.Complete for them). */
export interface ServiceNetworkOptions {
  /** `--service-cluster-ip-range` as given ('' is kube's default 10.0.0.0/24). */
  clusterIPRange: string;
  ranges: ServiceIPRanges;
  /** `--service-node-port-range` as given. */
  nodePortRange: string;
  /**
   * The advertised address (kube's DefaultAdvertiseAddress), or '' when none could be found; then
   * `advertiseAddressError` has kube's message (kube refuses to start; plinth reports it when the
   * kubernetes Service reconciler starts, which is what needs it).
   */
  advertiseAddress: string;
  advertiseAddressError?: string;
}

/** Completes and validates the Service network flags, adding kube's messages to `errs`. */
export function serviceNetworkOptionsFrom(f: ServerOptions, errs: string[]): ServiceNetworkOptions {
  let ranges: ServiceIPRanges;
  try {
    ranges = parseServiceClusterIPRange(f.serviceClusterIpRange);
    errs.push(...validateServiceClusterIPRange(f.serviceClusterIpRange, ranges));
  } catch (e) {
    errs.push((e as Error).message);
    ranges = parseServiceClusterIPRange('');
  }
  const out: ServiceNetworkOptions = { clusterIPRange: f.serviceClusterIpRange, ranges, nodePortRange: f.serviceNodePortRange, advertiseAddress: '' };
  try {
    out.advertiseAddress = resolveAdvertiseAddress(f.advertiseAddress, f.bindAddress);
  } catch (e) {
    out.advertiseAddressError = (e as Error).message;
  }
  return out;
}

export interface CompletedOptions {
  flags: ServerOptions;
  authentication: AuthenticationOptions;
  /** The admission plugins to run, by kube's name, in kube's order. */
  admissionPlugins: string[];
  /** `--admission-control-config-file`: each plugin's configuration by name. */
  admissionConfig: AdmissionPluginConfigs;
  authorization: AuthorizationOptions;
  featureGates: FeatureGates;
  /** The built-in definitions `--runtime-config` turns off, as `group/version/plural` (see runtime-config.ts). */
  disabledResources: ReadonlySet<string>;
  /** Warnings to log at start (e.g. a GA feature gate set). */
  warnings: string[];
  services: ServiceNetworkOptions;
}

/** The authentication options the flags describe (methods whose flags are unset stay off). */
export function authenticationOptionsFrom(f: ServerOptions): AuthenticationOptions {
  const oidcSet = f.oidcIssuerUrl !== '' || f.oidcClientId !== '';
  return {
    anonymous: f.anonymousAuth,
    apiAudiences: [...f.apiAudiences],
    ...(f.clientCaFile ? { clientCert: { caFile: f.clientCaFile } } : {}),
    // kube builds the proxy authenticator only when username headers are named
    // (ToAuthenticationRequestHeaderConfig); a CA file alone configures nothing.
    ...(f.requestheaderClientCaFile && f.requestheaderUsernameHeaders.length > 0
      ? {
          requestHeader: {
            clientCAFile: f.requestheaderClientCaFile,
            allowedNames: [...f.requestheaderAllowedNames],
            usernameHeaders: [...f.requestheaderUsernameHeaders],
            groupHeaders: [...f.requestheaderGroupHeaders],
            extraHeaderPrefixes: [...f.requestheaderExtraHeadersPrefix],
          },
        }
      : {}),
    ...(f.tokenAuthFile ? { tokenFile: f.tokenAuthFile } : {}),
    bootstrapToken: f.enableBootstrapTokenAuth,
    serviceAccounts: {
      issuers: [...f.serviceAccountIssuer],
      signingKeyFile: f.serviceAccountSigningKeyFile,
      keyFiles: [...f.serviceAccountKeyFile],
      lookup: f.serviceAccountLookup,
      maxExpirationSeconds: Math.floor(f.serviceAccountMaxTokenExpiration / 1000),
      extendExpiration: f.serviceAccountExtendTokenExpiration,
      jwksURI: f.serviceAccountJwksUri,
    },
    ...(oidcSet
      ? {
          oidc: {
            issuerURL: f.oidcIssuerUrl,
            clientID: f.oidcClientId,
            caFile: f.oidcCaFile,
            usernameClaim: f.oidcUsernameClaim,
            usernamePrefix: f.oidcUsernamePrefix,
            groupsClaim: f.oidcGroupsClaim,
            groupsPrefix: f.oidcGroupsPrefix,
            requiredClaims: { ...f.oidcRequiredClaim },
            signingAlgs: [...f.oidcSigningAlgs],
          },
        }
      : {}),
    ...(f.authenticationTokenWebhookConfigFile
      ? {
          webhook: {
            configFile: f.authenticationTokenWebhookConfigFile,
            cacheTTLms: f.authenticationTokenWebhookCacheTtl,
            version: f.authenticationTokenWebhookVersion as 'v1' | 'v1beta1',
          },
        }
      : {}),
  };
}

/** The authorization options the flags describe (the webhook's only with a config file). */
export function authorizationOptionsFrom(f: ServerOptions): AuthorizationOptions {
  return {
    modes: [...f.authorizationMode],
    ...(f.authorizationWebhookConfigFile
      ? {
          webhook: {
            configFile: f.authorizationWebhookConfigFile,
            version: f.authorizationWebhookVersion,
            authorizedTTLms: f.authorizationWebhookCacheAuthorizedTtl,
            unauthorizedTTLms: f.authorizationWebhookCacheUnauthorizedTtl,
          },
        }
      : {}),
  };
}

/**
 * kube 1.24's validateAPIPriorityAndFairness: APF reads its configuration from the flowcontrol
 * API, so turning off the versions it needs conflicts with it. Its test runs over the flag's
 * canonical string (keys sorted, `k=v` joined by commas) with substring matches, as kube's does.
 */
export function priorityAndFairnessConflict(runtimeConfig: Record<string, string>): string | undefined {
  const text = Object.keys(runtimeConfig)
    .sort()
    .map((k) => `${k}=${runtimeConfig[k]}`)
    .join(',');
  for (const key of ['flowcontrol.apiserver.k8s.io/v1beta2', 'flowcontrol.apiserver.k8s.io/v1beta1', 'api/beta', 'api/all']) {
    if (text.includes(`${key}=false`)) return `--runtime-config=${key}=false conflicts with --enable-priority-and-fairness=true and --feature-gates=APIPriorityAndFairness=true`;
    if (text.includes(`${key}=true`)) return undefined;
  }
  return undefined;
}

/** Validates and defaults; throws a FlagError listing every problem. */
export function completeOptions(flags: ServerOptions): CompletedOptions {
  const authentication = authenticationOptionsFrom(flags);
  const errs = validateAuthenticationOptions(authentication);
  if (flags.requestheaderUsernameHeaders.length > 0 && !flags.requestheaderClientCaFile) errs.push('requestheader-username-headers requires requestheader-client-ca-file: the proxy must present a client certificate');
  const plugins = { enable: flags.enableAdmissionPlugins, disable: flags.disableAdmissionPlugins };
  errs.push(...validateAdmissionPlugins(plugins));
  let admissionConfig: AdmissionPluginConfigs = new Map();
  try {
    admissionConfig = loadAdmissionConfig(flags.admissionControlConfigFile);
  } catch (e) {
    errs.push(e instanceof Error ? e.message : String(e));
  }
  // kube initialises each enabled plugin from its configuration before serving: a bad one stops start-up.
  if (validateAdmissionPlugins(plugins).length === 0 && enabledAdmissionPlugins(plugins).includes('PodSecurity')) {
    try {
      loadPodSecurityConfig(admissionConfig.get('PodSecurity'));
    } catch (e) {
      errs.push(e instanceof Error ? e.message : String(e));
    }
  }
  errs.push(...validateControllers(flags.controllers));
  const authorization = authorizationOptionsFrom(flags);
  errs.push(...validateAuthorizationOptions(authorization));
  const warnings: string[] = [];
  const featureGates = featureGatesFrom(flags.featureGates, errs, (w) => warnings.push(w));
  errs.push(...validateAuditFlags(flags));
  const disabledResources = disabledByRuntimeConfig(flags.runtimeConfig, builtinResources(), errs, (w) => warnings.push(w));
  if (featureGates.enabled('APIPriorityAndFairness') && flags.enablePriorityAndFairness) {
    const conflict = priorityAndFairnessConflict(flags.runtimeConfig);
    if (conflict) errs.push(conflict);
  }
  const hiddenMetrics = validateShowHiddenMetricsVersion(flags.showHiddenMetricsForVersion);
  if (hiddenMetrics) errs.push(hiddenMetrics);
  const services = serviceNetworkOptionsFrom(flags, errs);
  if (errs.length > 0) throw new FlagError(errs.join('\n'));
  return { flags, authentication: completeAuthenticationOptions(authentication), authorization, admissionPlugins: enabledAdmissionPlugins(plugins), admissionConfig, featureGates, disabledResources, warnings, services };
}
