/**
 * Command-line flags with kube-apiserver's names and pflag syntax (`--name=value`, `--name value`,
 * bare booleans, `-v`). Unknown flags and bad values fail fast with a clear message.
 */
import { isIP } from 'node:net';
import { featureGatesUsage } from './features.js';
import { parsePortRange } from './services/port-allocator.js';

export interface ServerOptions {
  securePort: number;
  bindAddress: string;
  /** `--advertise-address` as given ('' when unset: see services/advertise-address.ts). */
  advertiseAddress: string;
  /** `--service-cluster-ip-range` as given ('' → kube's 10.0.0.0/24; validated by completeOptions). */
  serviceClusterIpRange: string;
  /** `--service-node-port-range`, checked as kube's PortRange syntax. */
  serviceNodePortRange: string;
  /** `--allow-privileged`: containers may run privileged (kube's default false). */
  allowPrivileged: boolean;
  /** The kubelet connection (kube's KubeletConfig flags): PEM paths, '' for none. */
  kubeletClientCertificate: string;
  kubeletClientKey: string;
  kubeletCertificateAuthority: string;
  /** ms: kube's --kubelet-timeout. */
  kubeletTimeout: number;
  kubeletPreferredAddressTypes: string[];
  etcdServers: string[];
  etcdPrefix: string;
  /** Client TLS to etcd (kube's --etcd-cafile, --etcd-certfile, --etcd-keyfile). */
  etcdCafile: string;
  etcdCertfile: string;
  etcdKeyfile: string;
  tlsCertFile: string;
  tlsPrivateKeyFile: string;
  certDir: string;
  tokenAuthFile: string;
  // Authentication (kube-apiserver's BuiltInAuthenticationOptions flags).
  anonymousAuth: boolean;
  clientCaFile: string;
  enableBootstrapTokenAuth: boolean;
  serviceAccountIssuer: string[];
  serviceAccountSigningKeyFile: string;
  serviceAccountKeyFile: string[];
  apiAudiences: string[];
  serviceAccountLookup: boolean;
  /** ms; 0: no maximum. */
  serviceAccountMaxTokenExpiration: number;
  serviceAccountExtendTokenExpiration: boolean;
  serviceAccountJwksUri: string;
  oidcIssuerUrl: string;
  oidcClientId: string;
  oidcCaFile: string;
  oidcUsernameClaim: string;
  oidcUsernamePrefix: string;
  oidcGroupsClaim: string;
  oidcGroupsPrefix: string;
  oidcRequiredClaim: Record<string, string>;
  oidcSigningAlgs: string[];
  authenticationTokenWebhookConfigFile: string;
  /** ms */
  authenticationTokenWebhookCacheTtl: number;
  authenticationTokenWebhookVersion: string;
  requestheaderClientCaFile: string;
  requestheaderAllowedNames: string[];
  requestheaderUsernameHeaders: string[];
  requestheaderGroupHeaders: string[];
  requestheaderExtraHeadersPrefix: string[];
  proxyClientCertFile: string;
  proxyClientKeyFile: string;
  enableAggregatorRouting: boolean;
  // Authorization and admission.
  authorizationMode: string[];
  authorizationWebhookConfigFile: string;
  authorizationWebhookVersion: string;
  /** ms */
  authorizationWebhookCacheAuthorizedTtl: number;
  /** ms */
  authorizationWebhookCacheUnauthorizedTtl: number;
  enableAdmissionPlugins: string[];
  disableAdmissionPlugins: string[];
  admissionControlConfigFile: string;
  /** kube-controller-manager's `--controllers` (controllers-flag.ts). */
  controllers: string[];
  /** kube-apiserver's and kube-controller-manager's `--enable-garbage-collector`: GC finalizers on delete, and the garbagecollector controller. */
  enableGarbageCollector: boolean;
  /** kube-controller-manager's `--concurrent-gc-syncs`: workers of each garbage-collector queue. */
  concurrentGcSyncs: number;
  /** Seconds: DefaultTolerationSeconds' not-ready:NoExecute toleration. */
  defaultNotReadyTolerationSeconds: number;
  /** Seconds: DefaultTolerationSeconds' unreachable:NoExecute toleration. */
  defaultUnreachableTolerationSeconds: number;
  verbosity: number;
  dataDir: string;
  watchCache: boolean;
  /** ms: how long Events live after their last write (whole seconds count; 0: forever). */
  eventTtl: number;
  /** ms; 0 disables. */
  etcdCompactionInterval: number;
  /** ms */
  shutdownDelayDuration: number;
  /** 0: no limit. */
  maxRequestsInflight: number;
  maxMutatingRequestsInflight: number;
  /** `--enable-priority-and-fairness`: APF instead of the max-in-flight filter (with its feature gate on). */
  enablePriorityAndFairness: boolean;
  /** `--profiling`: serve /debug/pprof (kube's default true). */
  profiling: boolean;
  /** `--enable-logs-handler`: serve /logs from `logsDir` (kube's default true). */
  enableLogsHandler: boolean;
  /** plinth's `--logs-dir`: what /logs serves (kube: /var/log, fixed). */
  logsDir: string;
  /** ms: how long after start /livez assumes unfinished post-start hooks will succeed. */
  livezGracePeriod: number;
  /** ms: kube's --request-timeout, the deadline of every non-long-running request (0: none). */
  requestTimeout: number;
  /** Seconds: kube's --min-request-timeout; a watch without timeoutSeconds lasts [min, 2×min) (0: no limit). */
  minRequestTimeout: number;
  /** ms: plinth's deadline for each start-up step (embedded etcd, first reads, cache sync, listen, post-start hooks). */
  startupStepTimeout: number;
  /** `--feature-gates`: gate name → value as given (validated in features.ts). */
  featureGates: Record<string, boolean>;
  /** `--runtime-config`: key → value as given ('' when the value is omitted, which means true). */
  runtimeConfig: Record<string, string>;
  // Audit (kube's AuditOptions flags).
  auditPolicyFile: string;
  auditLogPath: string;
  auditLogMaxsize: number;
  auditLogMaxbackup: number;
  auditLogMaxage: number;
  auditLogFormat: string;
  // Leader election for singleton work (kube-controller-manager's LeaderElectionConfiguration flags).
  leaderElect: boolean;
  /** ms */
  leaderElectLeaseDuration: number;
  /** ms */
  leaderElectRenewDeadline: number;
  /** ms */
  leaderElectRetryPeriod: number;
  leaderElectResourceLock: string;
  leaderElectResourceName: string;
  leaderElectResourceNamespace: string;
  /** `--show-hidden-metrics-for-version`: '' or `<major>.<minor>`. */
  showHiddenMetricsForVersion: string;
  // The in-process CSR signer (kube-controller-manager's CSRSigningController flags): PEM paths, '' for none.
  clusterSigningCertFile: string;
  clusterSigningKeyFile: string;
  clusterSigningKubeletServingCertFile: string;
  clusterSigningKubeletServingKeyFile: string;
  clusterSigningKubeletClientCertFile: string;
  clusterSigningKubeletClientKeyFile: string;
  clusterSigningKubeApiserverClientCertFile: string;
  clusterSigningKubeApiserverClientKeyFile: string;
  clusterSigningLegacyUnknownCertFile: string;
  clusterSigningLegacyUnknownKeyFile: string;
  /** ms: the longest validity of a signed certificate. */
  clusterSigningDuration: number;
  help: boolean;
}

/**
 * pflag value kinds. `strings` is a StringSlice (comma-separated; repeating the flag appends),
 * `stringArray` a StringArray (no comma splitting; repeating appends), `map` kube's
 * MapStringStringNoSplit (`key=value`, repeating adds keys), `mapBool` kube's MapStringBool
 * (`a=true,b=false`, every value a boolean), `config` kube's ConfigurationMap (`a=x,b`, an omitted
 * value is '').
 */
type Kind = 'int' | 'string' | 'strings' | 'stringArray' | 'map' | 'mapBool' | 'config' | 'bool' | 'ip' | 'duration' | 'portRange';

interface FlagSpec {
  name: string;
  kind: Kind;
  key: keyof ServerOptions;
  usage: string;
  default: string;
}

const SPECS: FlagSpec[] = [
  { name: 'secure-port', kind: 'int', key: 'securePort', default: '6443', usage: 'The port on which to serve HTTPS with authentication and authorization.' },
  { name: 'bind-address', kind: 'ip', key: 'bindAddress', default: '0.0.0.0', usage: 'The IP address on which to listen for the --secure-port port.' },
  { name: 'advertise-address', kind: 'ip', key: 'advertiseAddress', default: '', usage: "The IP address this replica advertises as an endpoint of the kubernetes Service. If blank, --bind-address; if that is 0.0.0.0, :: or loopback, the address of the host's default-route interface." },
  { name: 'service-cluster-ip-range', kind: 'string', key: 'serviceClusterIpRange', default: '', usage: 'A CIDR (or two of different IP families, comma-separated) from which to assign Service cluster IPs; at most 20 host bits. The first address goes to the kubernetes Service. Default 10.0.0.0/24.' },
  { name: 'service-node-port-range', kind: 'portRange', key: 'serviceNodePortRange', default: '30000-32767', usage: 'A port range to reserve for Services with NodePort visibility, inclusive at both ends (e.g. 30000-32767 or 30000+2767).' },
  { name: 'allow-privileged', kind: 'bool', key: 'allowPrivileged', default: 'false', usage: 'If true, allow privileged containers.' },
  { name: 'kubelet-certificate-authority', kind: 'string', key: 'kubeletCertificateAuthority', default: '', usage: "Path to a cert file for the certificate authority. Without it the kubelet's serving certificate is not verified." },
  { name: 'kubelet-client-certificate', kind: 'string', key: 'kubeletClientCertificate', default: '', usage: 'Path to a client cert file for TLS.' },
  { name: 'kubelet-client-key', kind: 'string', key: 'kubeletClientKey', default: '', usage: 'Path to a client key file for TLS.' },
  { name: 'kubelet-preferred-address-types', kind: 'strings', key: 'kubeletPreferredAddressTypes', default: 'Hostname,InternalDNS,InternalIP,ExternalDNS,ExternalIP', usage: 'List of the preferred NodeAddressTypes to use for kubelet connections.' },
  { name: 'kubelet-timeout', kind: 'duration', key: 'kubeletTimeout', default: '5s', usage: 'Timeout for kubelet operations.' },
  { name: 'etcd-servers', kind: 'strings', key: 'etcdServers', default: '', usage: 'List of etcd servers to connect with (scheme://ip:port), comma separated. Without it, an embedded etcd runs under --data-dir.' },
  { name: 'etcd-prefix', kind: 'string', key: 'etcdPrefix', default: '/registry', usage: 'The prefix to prepend to all resource paths in etcd.' },
  { name: 'etcd-cafile', kind: 'string', key: 'etcdCafile', default: '', usage: 'SSL Certificate Authority file used to secure etcd communication.' },
  { name: 'etcd-certfile', kind: 'string', key: 'etcdCertfile', default: '', usage: 'SSL certification file used to secure etcd communication.' },
  { name: 'etcd-keyfile', kind: 'string', key: 'etcdKeyfile', default: '', usage: 'SSL key file used to secure etcd communication.' },
  { name: 'tls-cert-file', kind: 'string', key: 'tlsCertFile', default: '', usage: 'File containing the default x509 certificate for HTTPS.' },
  { name: 'tls-private-key-file', kind: 'string', key: 'tlsPrivateKeyFile', default: '', usage: 'File containing the default x509 private key matching --tls-cert-file.' },
  { name: 'cert-dir', kind: 'string', key: 'certDir', default: '', usage: 'The directory where the self-signed TLS certificates are (default <data-dir>/certs). Ignored if --tls-cert-file and --tls-private-key-file are provided.' },
  { name: 'token-auth-file', kind: 'string', key: 'tokenAuthFile', default: '', usage: 'If set, the file that will be used to secure the secure port of the API server via token authentication.' },
  { name: 'anonymous-auth', kind: 'bool', key: 'anonymousAuth', default: 'true', usage: 'Enables anonymous requests to the secure port of the API server. Requests that are not rejected by another authentication method are treated as anonymous requests. Anonymous requests have a username of system:anonymous, and a group name of system:unauthenticated.' },
  { name: 'client-ca-file', kind: 'string', key: 'clientCaFile', default: '', usage: 'If set, any request presenting a client certificate signed by one of the authorities in the client-ca-file is authenticated with an identity corresponding to the CommonName of the client certificate.' },
  { name: 'enable-bootstrap-token-auth', kind: 'bool', key: 'enableBootstrapTokenAuth', default: 'false', usage: "Enable to allow secrets of type 'bootstrap.kubernetes.io/token' in the 'kube-system' namespace to be used for TLS bootstrapping authentication." },
  { name: 'service-account-issuer', kind: 'stringArray', key: 'serviceAccountIssuer', default: '', usage: 'Identifier of the service account token issuer. Repeatable: the first signs, all are accepted. Default https://kubernetes.default.svc.cluster.local.' },
  { name: 'service-account-signing-key-file', kind: 'string', key: 'serviceAccountSigningKeyFile', default: '', usage: 'Path to the file that contains the current private key of the service account token issuer. Default: a key generated in --data-dir.' },
  { name: 'service-account-key-file', kind: 'stringArray', key: 'serviceAccountKeyFile', default: '', usage: 'File containing PEM-encoded x509 RSA or ECDSA private or public keys, used to verify ServiceAccount tokens. Repeatable.' },
  { name: 'api-audiences', kind: 'strings', key: 'apiAudiences', default: '', usage: 'Identifiers of the API. The service account token authenticator will validate that tokens used against the API are bound to at least one of these audiences. Default: the first --service-account-issuer.' },
  { name: 'service-account-lookup', kind: 'bool', key: 'serviceAccountLookup', default: 'true', usage: 'If true, validate ServiceAccount tokens exist in etcd as part of authentication.' },
  { name: 'service-account-max-token-expiration', kind: 'duration', key: 'serviceAccountMaxTokenExpiration', default: '0s', usage: 'The maximum validity duration of a token created by the service account token issuer. 0: no maximum.' },
  { name: 'service-account-extend-token-expiration', kind: 'bool', key: 'serviceAccountExtendTokenExpiration', default: 'true', usage: 'Turns on projected service account expiration extension during token generation.' },
  { name: 'service-account-jwks-uri', kind: 'string', key: 'serviceAccountJwksUri', default: '', usage: "Overrides the URI for the JSON Web Key Set in the discovery doc served at /.well-known/openid-configuration. This flag is useful if the discovery doc and key set are served to relying parties from a URL other than the API server's external address." },
  { name: 'oidc-issuer-url', kind: 'string', key: 'oidcIssuerUrl', default: '', usage: "The URL of the OpenID issuer, only HTTPS scheme will be accepted. If set, it will be used to verify the OIDC JSON Web Token (JWT)." },
  { name: 'oidc-client-id', kind: 'string', key: 'oidcClientId', default: '', usage: 'The client ID for the OpenID Connect client, must be set if oidc-issuer-url is set.' },
  { name: 'oidc-ca-file', kind: 'string', key: 'oidcCaFile', default: '', usage: "If set, the OpenID server's certificate will be verified by one of the authorities in the oidc-ca-file, otherwise the host's root CA set will be used." },
  { name: 'oidc-username-claim', kind: 'string', key: 'oidcUsernameClaim', default: 'sub', usage: 'The OpenID claim to use as the user name.' },
  { name: 'oidc-username-prefix', kind: 'string', key: 'oidcUsernamePrefix', default: '', usage: "If provided, all usernames will be prefixed with this value. If not provided, username claims other than 'email' are prefixed by the issuer URL to avoid clashes. To skip any prefixing, provide the value '-'." },
  { name: 'oidc-groups-claim', kind: 'string', key: 'oidcGroupsClaim', default: '', usage: 'If provided, the name of a custom OpenID Connect claim for specifying user groups. The claim value is expected to be a string or array of strings.' },
  { name: 'oidc-groups-prefix', kind: 'string', key: 'oidcGroupsPrefix', default: '', usage: 'If provided, all groups will be prefixed with this value to prevent conflicts with other authentication strategies.' },
  { name: 'oidc-required-claim', kind: 'map', key: 'oidcRequiredClaim', default: '', usage: 'A key=value pair that describes a required claim in the ID Token. If set, the claim is verified to be present in the ID Token with a matching value. Repeat this flag to specify multiple claims.' },
  { name: 'oidc-signing-algs', kind: 'strings', key: 'oidcSigningAlgs', default: 'RS256', usage: "Comma-separated list of allowed JOSE asymmetric signing algorithms. JWTs with a supported 'alg' header values are: RS256, RS384, RS512, ES256, ES384, ES512, PS256, PS384, PS512." },
  { name: 'authentication-token-webhook-config-file', kind: 'string', key: 'authenticationTokenWebhookConfigFile', default: '', usage: 'File with webhook configuration for token authentication in kubeconfig format. The API server will query the remote service to determine authentication for bearer tokens.' },
  { name: 'authentication-token-webhook-cache-ttl', kind: 'duration', key: 'authenticationTokenWebhookCacheTtl', default: '2m', usage: 'The duration to cache responses from the webhook token authenticator.' },
  { name: 'authentication-token-webhook-version', kind: 'string', key: 'authenticationTokenWebhookVersion', default: 'v1beta1', usage: 'The API version of the authentication.k8s.io TokenReview to send to and expect from the webhook.' },
  { name: 'requestheader-client-ca-file', kind: 'string', key: 'requestheaderClientCaFile', default: '', usage: 'Root certificate bundle to use to verify client certificates on incoming requests before trusting usernames in headers specified by --requestheader-username-headers.' },
  { name: 'requestheader-allowed-names', kind: 'strings', key: 'requestheaderAllowedNames', default: '', usage: 'List of client certificate common names to allow to provide usernames in headers specified by --requestheader-username-headers. If empty, any client certificate validated by the authorities in --requestheader-client-ca-file is allowed.' },
  { name: 'requestheader-username-headers', kind: 'strings', key: 'requestheaderUsernameHeaders', default: '', usage: 'List of request headers to inspect for usernames. X-Remote-User is common.' },
  { name: 'requestheader-group-headers', kind: 'strings', key: 'requestheaderGroupHeaders', default: '', usage: 'List of request headers to inspect for groups. X-Remote-Group is suggested.' },
  { name: 'requestheader-extra-headers-prefix', kind: 'strings', key: 'requestheaderExtraHeadersPrefix', default: '', usage: 'List of request header prefixes to inspect. X-Remote-Extra- is suggested.' },
  { name: 'proxy-client-cert-file', kind: 'string', key: 'proxyClientCertFile', default: '', usage: 'Client certificate used to prove the identity of the aggregator or kube-apiserver when it must call out during a request. This includes proxying requests to a user api-server and calling out to webhook admission plugins.' },
  { name: 'proxy-client-key-file', kind: 'string', key: 'proxyClientKeyFile', default: '', usage: 'Private key for the client certificate used to prove the identity of the aggregator or kube-apiserver when it must call out during a request.' },
  { name: 'enable-aggregator-routing', kind: 'bool', key: 'enableAggregatorRouting', default: 'false', usage: 'Turns on aggregator routing requests to endpoints IP rather than cluster IP.' },
  { name: 'authorization-mode', kind: 'strings', key: 'authorizationMode', default: 'RBAC', usage: 'Ordered list of plug-ins to do authorization on secure port. Comma-delimited list of: AlwaysAllow,AlwaysDeny,Node,RBAC,Webhook. (kube-apiserver defaults to AlwaysAllow; plinth is secure by default.)' },
  { name: 'authorization-webhook-config-file', kind: 'string', key: 'authorizationWebhookConfigFile', default: '', usage: 'File with webhook configuration in kubeconfig format, used with --authorization-mode=Webhook. The API server will query the remote service to determine access on the API server\'s secure port.' },
  { name: 'authorization-webhook-version', kind: 'string', key: 'authorizationWebhookVersion', default: 'v1beta1', usage: 'The API version of the authorization.k8s.io SubjectAccessReview to send to and expect from the webhook.' },
  { name: 'authorization-webhook-cache-authorized-ttl', kind: 'duration', key: 'authorizationWebhookCacheAuthorizedTtl', default: '5m', usage: "The duration to cache 'authorized' responses from the webhook authorizer." },
  { name: 'authorization-webhook-cache-unauthorized-ttl', kind: 'duration', key: 'authorizationWebhookCacheUnauthorizedTtl', default: '30s', usage: "The duration to cache 'unauthorized' responses from the webhook authorizer." },
  { name: 'enable-admission-plugins', kind: 'strings', key: 'enableAdmissionPlugins', default: '', usage: 'admission plugins that should be enabled in addition to default enabled ones (NamespaceLifecycle, ServiceAccount, MutatingAdmissionWebhook, ValidatingAdmissionWebhook).' },
  { name: 'admission-control-config-file', kind: 'string', key: 'admissionControlConfigFile', default: '', usage: 'File with admission control configuration.' },
  { name: 'controllers', kind: 'strings', key: 'controllers', default: '*', usage: "A list of controllers to enable. '*' enables all on-by-default controllers, 'foo' enables the controller named 'foo', '-foo' disables the controller named 'foo'. Controllers plinth runs in-process (all on by default): clusterrole-aggregation, csrapproving, csrsigning, garbagecollector, namespace, pv-protection, pvc-protection, resourcequota, root-ca-cert-publisher, serviceaccount, serviceaccount-token, tokencleaner. Other kube-controller-manager names are known and may be turned off, not on." },
  { name: 'enable-garbage-collector', kind: 'bool', key: 'enableGarbageCollector', default: 'true', usage: 'Enables the generic garbage collector. MUST be synced with the corresponding flag of the kube-controller-manager. (plinth runs the garbage collector in-process: false also stops it.)' },
  { name: 'concurrent-gc-syncs', kind: 'int', key: 'concurrentGcSyncs', default: '20', usage: 'The number of garbage collector workers that are allowed to sync concurrently.' },
  { name: 'disable-admission-plugins', kind: 'strings', key: 'disableAdmissionPlugins', default: '', usage: 'admission plugins that should be disabled although they are in the default enabled plugins list.' },
  { name: 'default-not-ready-toleration-seconds', kind: 'int', key: 'defaultNotReadyTolerationSeconds', default: '300', usage: 'Indicates the tolerationSeconds of the toleration for notReady:NoExecute that is added by default to every pod that does not already have such a toleration.' },
  { name: 'default-unreachable-toleration-seconds', kind: 'int', key: 'defaultUnreachableTolerationSeconds', default: '300', usage: 'Indicates the tolerationSeconds of the toleration for unreachable:NoExecute that is added by default to every pod that does not already have such a toleration.' },
  { name: 'v', kind: 'int', key: 'verbosity', default: '0', usage: 'number for the log level verbosity' },
  { name: 'data-dir', kind: 'string', key: 'dataDir', default: './data', usage: 'Directory for the embedded etcd, generated certificates, the admin token and admin.kubeconfig.' },
  { name: 'watch-cache', kind: 'bool', key: 'watchCache', default: 'true', usage: 'Enable watch caching in the apiserver.' },
  { name: 'event-ttl', kind: 'duration', key: 'eventTtl', default: '1h0m0s', usage: 'Amount of time to retain events.' },
  { name: 'etcd-compaction-interval', kind: 'duration', key: 'etcdCompactionInterval', default: '5m', usage: 'The interval of compaction requests. If 0, the compaction request from apiserver is disabled.' },
  { name: 'max-requests-inflight', kind: 'int', key: 'maxRequestsInflight', default: '400', usage: 'The maximum number of non-mutating requests in flight at a given time. When the server exceeds this, it rejects requests. Zero for no limit.' },
  { name: 'enable-priority-and-fairness', kind: 'bool', key: 'enablePriorityAndFairness', default: 'true', usage: 'If true and the APIPriorityAndFairness feature gate is enabled, replace the max-in-flight handler with an enhanced one that queues and dispatches with priority and fairness' },
  { name: 'profiling', kind: 'bool', key: 'profiling', default: 'true', usage: 'Enable profiling via web interface host:port/debug/pprof/ (for plinth: V8 CPU and sampling heap profiles).' },
  { name: 'enable-logs-handler', kind: 'bool', key: 'enableLogsHandler', default: 'true', usage: 'If true, install a /logs handler for the apiserver logs.' },
  { name: 'logs-dir', kind: 'string', key: 'logsDir', default: '/var/log', usage: "The directory /logs serves (plinth's own flag; kube serves /var/log)." },
  { name: 'max-mutating-requests-inflight', kind: 'int', key: 'maxMutatingRequestsInflight', default: '200', usage: 'The maximum number of mutating requests in flight at a given time. When the server exceeds this, it rejects requests. Zero for no limit.' },
  { name: 'shutdown-delay-duration', kind: 'duration', key: 'shutdownDelayDuration', default: '0s', usage: 'Time to delay the termination. During that time /readyz fails while the server keeps serving.' },
  { name: 'request-timeout', kind: 'duration', key: 'requestTimeout', default: '1m0s', usage: 'An optional field indicating the duration a handler must keep a request open before timing it out. This is the default request timeout for requests but may be overridden by flags such as --min-request-timeout for specific types of requests.' },
  { name: 'min-request-timeout', kind: 'int', key: 'minRequestTimeout', default: '1800', usage: 'An optional field indicating the minimum number of seconds a handler must keep a request open before timing it out. Currently only honored by the watch request handler, which picks a randomized value above this number as the connection timeout, to spread out load.' },
  { name: 'startup-step-timeout', kind: 'duration', key: 'startupStepTimeout', default: '1m0s', usage: 'How long each start-up step may take (embedded etcd start and readiness, the first etcd reads, watch cache sync, listening, each post-start hook) before start-up fails naming the step.' },
  { name: 'livez-grace-period', kind: 'duration', key: 'livezGracePeriod', default: '0s', usage: "This option represents the maximum amount of time it should take for apiserver to complete its startup sequence and become live. From apiserver's start time to when this amount of time has elapsed, /livez will assume that unfinished post-start hooks will complete successfully and therefore return true." },
  { name: 'feature-gates', kind: 'mapBool', key: 'featureGates', default: '', usage: 'A set of key=value pairs that describe feature gates for alpha/experimental features. Options are (gates marked [declared, not implemented] are accepted but change nothing in plinth):' },
  { name: 'runtime-config', kind: 'config', key: 'runtimeConfig', default: '', usage: 'A set of key=value pairs that enable or disable built-in APIs. Supported options are: v1=true|false for the core API group; <group>/<version>=true|false for a specific API group and version (e.g. apps/v1=true); <group>/<version>/<resource>=true|false for a resource; api/all=true|false controls all API versions; api/ga=true|false controls all API versions of the form v[0-9]+; api/beta=true|false controls all API versions of the form v[0-9]+beta[0-9]+; api/alpha=true|false controls all API versions of the form v[0-9]+alpha[0-9]+. An omitted value means true.' },
  { name: 'audit-policy-file', kind: 'string', key: 'auditPolicyFile', default: '', usage: 'Path to the file that defines the audit policy configuration.' },
  { name: 'audit-log-path', kind: 'string', key: 'auditLogPath', default: '', usage: "If set, all requests coming to the apiserver will be logged to this file. '-' means standard out." },
  { name: 'audit-log-maxsize', kind: 'int', key: 'auditLogMaxsize', default: '0', usage: 'The maximum size in megabytes of the audit log file before it gets rotated.' },
  { name: 'audit-log-maxbackup', kind: 'int', key: 'auditLogMaxbackup', default: '0', usage: 'The maximum number of old audit log files to retain. Setting a value of 0 will mean there\'s no restriction on the number of files.' },
  { name: 'audit-log-maxage', kind: 'int', key: 'auditLogMaxage', default: '0', usage: 'The maximum number of days to retain old audit log files based on the timestamp encoded in their filename.' },
  { name: 'audit-log-format', kind: 'string', key: 'auditLogFormat', default: 'json', usage: 'Format of saved audits. "legacy" indicates 1-line text format for each event. "json" indicates structured json format. Known formats are legacy,json.' },
  { name: 'leader-elect', kind: 'bool', key: 'leaderElect', default: 'true', usage: "Start a leader election client and gain leadership before running the singleton controllers (namespace finalization, garbage collection, token cleaner, service-account tokens, RBAC aggregation, PVC and PV protection, bootstrap-policy reconciliation, CRD cleanup, compaction). Enable this when running replicated components for high availability." },
  { name: 'leader-elect-lease-duration', kind: 'duration', key: 'leaderElectLeaseDuration', default: '15s', usage: 'The duration that non-leader candidates will wait after observing a leadership renewal until attempting to acquire leadership of a led but unrenewed leader slot. This is effectively the maximum duration that a leader can be stopped before it is replaced by another candidate. This is only applicable if leader election is enabled.' },
  { name: 'leader-elect-renew-deadline', kind: 'duration', key: 'leaderElectRenewDeadline', default: '10s', usage: 'The interval between attempts by the acting master to renew a leadership slot before it stops leading. This must be less than the lease duration. This is only applicable if leader election is enabled.' },
  { name: 'leader-elect-retry-period', kind: 'duration', key: 'leaderElectRetryPeriod', default: '2s', usage: 'The duration the clients should wait between attempting acquisition and renewal of a leadership. This is only applicable if leader election is enabled.' },
  { name: 'leader-elect-resource-lock', kind: 'string', key: 'leaderElectResourceLock', default: 'leases', usage: "The type of resource object that is used for locking during leader election. Supported options are 'leases'." },
  { name: 'leader-elect-resource-name', kind: 'string', key: 'leaderElectResourceName', default: 'plinth-apiserver', usage: 'The name of resource object that is used for locking during leader election.' },
  { name: 'leader-elect-resource-namespace', kind: 'string', key: 'leaderElectResourceNamespace', default: 'kube-system', usage: 'The namespace of resource object that is used for locking during leader election.' },
  { name: 'show-hidden-metrics-for-version', kind: 'string', key: 'showHiddenMetricsForVersion', default: '', usage: "The previous version for which you want to show hidden metrics. Only the previous minor version is meaningful, other values will not be allowed. The format is <major>.<minor>, e.g.: '1.16'. The purpose of this format is make sure you have the opportunity to notice if the next release hides additional metrics, rather than being surprised when they are permanently removed in the release after that." },
  { name: 'cluster-signing-cert-file', kind: 'string', key: 'clusterSigningCertFile', default: '', usage: 'Filename containing a PEM-encoded X509 CA certificate used to issue cluster-scoped certificates (every kubernetes.io signer below not given its own). Without it (and the signer flags) no CSR is signed.' },
  { name: 'cluster-signing-key-file', kind: 'string', key: 'clusterSigningKeyFile', default: '', usage: 'Filename containing a PEM-encoded RSA or ECDSA private key used to sign cluster-scoped certificates.' },
  { name: 'cluster-signing-kubelet-serving-cert-file', kind: 'string', key: 'clusterSigningKubeletServingCertFile', default: '', usage: 'Filename containing a PEM-encoded X509 CA certificate used to issue certificates for the kubernetes.io/kubelet-serving signer.' },
  { name: 'cluster-signing-kubelet-serving-key-file', kind: 'string', key: 'clusterSigningKubeletServingKeyFile', default: '', usage: 'Filename containing a PEM-encoded RSA or ECDSA private key used to sign certificates for the kubernetes.io/kubelet-serving signer.' },
  { name: 'cluster-signing-kubelet-client-cert-file', kind: 'string', key: 'clusterSigningKubeletClientCertFile', default: '', usage: 'Filename containing a PEM-encoded X509 CA certificate used to issue certificates for the kubernetes.io/kube-apiserver-client-kubelet signer.' },
  { name: 'cluster-signing-kubelet-client-key-file', kind: 'string', key: 'clusterSigningKubeletClientKeyFile', default: '', usage: 'Filename containing a PEM-encoded RSA or ECDSA private key used to sign certificates for the kubernetes.io/kube-apiserver-client-kubelet signer.' },
  { name: 'cluster-signing-kube-apiserver-client-cert-file', kind: 'string', key: 'clusterSigningKubeApiserverClientCertFile', default: '', usage: 'Filename containing a PEM-encoded X509 CA certificate used to issue certificates for the kubernetes.io/kube-apiserver-client signer.' },
  { name: 'cluster-signing-kube-apiserver-client-key-file', kind: 'string', key: 'clusterSigningKubeApiserverClientKeyFile', default: '', usage: 'Filename containing a PEM-encoded RSA or ECDSA private key used to sign certificates for the kubernetes.io/kube-apiserver-client signer.' },
  { name: 'cluster-signing-legacy-unknown-cert-file', kind: 'string', key: 'clusterSigningLegacyUnknownCertFile', default: '', usage: 'Filename containing a PEM-encoded X509 CA certificate used to issue certificates for the kubernetes.io/legacy-unknown signer.' },
  { name: 'cluster-signing-legacy-unknown-key-file', kind: 'string', key: 'clusterSigningLegacyUnknownKeyFile', default: '', usage: 'Filename containing a PEM-encoded RSA or ECDSA private key used to sign certificates for the kubernetes.io/legacy-unknown signer.' },
  { name: 'cluster-signing-duration', kind: 'duration', key: 'clusterSigningDuration', default: '8760h0m0s', usage: 'The max length of duration signed certificates will be given. Individual CSRs may request shorter certs by setting spec.expirationSeconds.' },
  { name: 'help', kind: 'bool', key: 'help', default: 'false', usage: 'help for plinth-apiserver' },
];

export class FlagError extends Error {}

const UNITS: Record<string, number> = { ns: 1e-6, us: 1e-3, 'µs': 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Go's time.ParseDuration, in milliseconds. */
export function parseDuration(text: string): number {
  if (text === '0') return 0;
  const re = /(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/gy;
  let total = 0;
  let pos = 0;
  let m: RegExpExecArray | null;
  while ((m = re.exec(text)) !== null) {
    total += Number(m[1]) * UNITS[m[2]!]!;
    pos = re.lastIndex;
  }
  if (pos !== text.length || text.length === 0) throw new Error(`time: invalid duration "${text}"`);
  return total;
}

function convert(spec: FlagSpec, raw: string): ServerOptions[keyof ServerOptions] {
  const bad = (why: string): FlagError => new FlagError(`invalid argument "${raw}" for "--${spec.name}" flag: ${why}`);
  switch (spec.kind) {
    case 'int': {
      if (!/^-?\d+$/.test(raw)) throw bad(`strconv.ParseInt: parsing "${raw}": invalid syntax`);
      const n = Number(raw);
      if (spec.name === 'secure-port' && (n < 0 || n > 65535)) throw bad('must be a valid port number between 0 and 65535');
      return n;
    }
    case 'bool':
      if (['true', '1', 't', 'T', 'TRUE', 'True'].includes(raw)) return true;
      if (['false', '0', 'f', 'F', 'FALSE', 'False'].includes(raw)) return false;
      throw bad(`strconv.ParseBool: parsing "${raw}": invalid syntax`);
    case 'ip':
      // pflag's IP value: Go's net.ParseIP of the trimmed text.
      if (!isIP(raw.trim())) throw bad(`failed to parse IP: ${JSON.stringify(raw)}`);
      return raw.trim();
    case 'portRange':
      try {
        parsePortRange(raw);
      } catch (e) {
        throw bad((e as Error).message);
      }
      return raw;
    case 'strings': {
      const list = raw.split(',').map((x) => x.trim()).filter(Boolean);
      if (spec.name === 'etcd-servers') {
        for (const u of list) {
          try {
            const url = new URL(u);
            if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error();
          } catch {
            throw bad(`"${u}" is not a URL like http://127.0.0.1:2379`);
          }
        }
      }
      return list;
    }
    case 'stringArray':
      return [raw];
    case 'map': {
      const eq = raw.indexOf('=');
      if (eq <= 0) throw bad('must be formatted as key=value');
      return { [raw.slice(0, eq)]: raw.slice(eq + 1) };
    }
    case 'mapBool': {
      const out = Object.create(null) as Record<string, boolean>;
      for (const pair of raw.split(',')) {
        if (pair.trim() === '') continue;
        const eq = pair.indexOf('=');
        if (eq <= 0) throw bad(`missing bool value for ${pair.trim()}`);
        const v = pair.slice(eq + 1).trim();
        if (['true', '1', 't', 'T', 'TRUE', 'True'].includes(v)) out[pair.slice(0, eq).trim()] = true;
        else if (['false', '0', 'f', 'F', 'FALSE', 'False'].includes(v)) out[pair.slice(0, eq).trim()] = false;
        else throw bad(`invalid value of ${pair.slice(0, eq).trim()}: ${v}, err: strconv.ParseBool: parsing "${v}": invalid syntax`);
      }
      return out;
    }
    case 'config': {
      const out = Object.create(null) as Record<string, string>;
      for (const pair of raw.split(',')) {
        if (pair.trim() === '') continue;
        const eq = pair.indexOf('=');
        out[(eq >= 0 ? pair.slice(0, eq) : pair).trim()] = eq >= 0 ? pair.slice(eq + 1).trim() : '';
      }
      return out;
    }
    case 'duration':
      try {
        return parseDuration(raw);
      } catch (e) {
        throw bad((e as Error).message);
      }
    default:
      return raw;
  }
}

export function parseFlags(argv: string[]): ServerOptions {
  const byName = new Map(SPECS.map((s) => [s.name, s]));
  const opts = {} as Record<keyof ServerOptions, unknown>;
  for (const s of SPECS) {
    if (s.default === '' && (s.kind === 'strings' || s.kind === 'stringArray')) opts[s.key] = [];
    else if (s.kind === 'map' || s.kind === 'mapBool' || s.kind === 'config') opts[s.key] = {};
    else if (s.default === '' && s.kind === 'ip') opts[s.key] = ''; // unset (pflag's nil IP)
    else opts[s.key] = convert(s, s.default);
  }
  // pflag: the first occurrence of a list flag replaces its default, later ones append.
  const seen = new Set<string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith('-') || arg === '-' || arg === '--') throw new FlagError(`unexpected argument "${arg}": plinth-apiserver takes flags only`);
    const body = arg.replace(/^--?/, '');
    const eq = body.indexOf('=');
    const name = eq >= 0 ? body.slice(0, eq) : body;
    const spec = byName.get(name === 'h' ? 'help' : name);
    if (!spec) throw new FlagError(`unknown flag: ${arg.startsWith('--') ? '--' : '-'}${name}`);
    let value: string;
    if (eq >= 0) value = body.slice(eq + 1);
    else if (spec.kind === 'bool') value = 'true';
    else {
      const next = argv[i + 1];
      if (next === undefined) throw new FlagError(`flag needs an argument: --${name}`);
      value = next;
      i++;
    }
    const converted = convert(spec, value);
    if (spec.kind === 'strings' || spec.kind === 'stringArray') opts[spec.key] = seen.has(spec.name) ? [...(opts[spec.key] as string[]), ...(converted as string[])] : converted;
    else if (spec.kind === 'map' || spec.kind === 'mapBool' || spec.kind === 'config') opts[spec.key] = { ...(opts[spec.key] as Record<string, unknown>), ...(converted as Record<string, unknown>) };
    else opts[spec.key] = converted;
    seen.add(spec.name);
  }
  const o = opts as unknown as ServerOptions;
  if (!!o.tlsCertFile !== !!o.tlsPrivateKeyFile) throw new FlagError('--tls-cert-file and --tls-private-key-file must be given together');
  if (!!o.etcdCertfile !== !!o.etcdKeyfile) throw new FlagError('--etcd-certfile and --etcd-keyfile must be given together');
  if ((o.etcdCafile || o.etcdCertfile) && o.etcdServers.length === 0) throw new FlagError('--etcd-cafile, --etcd-certfile and --etcd-keyfile need --etcd-servers (the embedded etcd uses certificates of its own)');
  if (o.leaderElect) {
    // client-go's leaderelection.NewLeaderElector checks, with its messages.
    if (o.leaderElectLeaseDuration <= o.leaderElectRenewDeadline) throw new FlagError('leaseDuration must be greater than renewDeadline');
    if (o.leaderElectRenewDeadline <= 1.2 * o.leaderElectRetryPeriod) throw new FlagError('renewDeadline must be greater than retryPeriod*JitterFactor');
    if (o.leaderElectLeaseDuration < 1 || o.leaderElectRenewDeadline < 1 || o.leaderElectRetryPeriod < 1) throw new FlagError('leaseDuration, renewDeadline and retryPeriod must be greater than zero');
    if (o.leaderElectResourceLock !== 'leases') throw new FlagError(`--leader-elect-resource-lock: only "leases" is supported, got "${o.leaderElectResourceLock}"`);
  }
  if (o.etcdCompactionInterval < 0) throw new FlagError('--etcd-compaction-interval must not be negative');
  if (o.maxRequestsInflight < 0 || o.maxMutatingRequestsInflight < 0) throw new FlagError('--max-requests-inflight and --max-mutating-requests-inflight must not be negative');
  if (o.livezGracePeriod < 0) throw new FlagError('--livez-grace-period can not be a negative value');
  // kube's ServerRunOptions.Validate.
  if (o.requestTimeout < 0) throw new FlagError('--request-timeout can not be negative value');
  if (o.minRequestTimeout < 0) throw new FlagError('--min-request-timeout can not be negative value');
  if (o.startupStepTimeout <= 0) throw new FlagError('--startup-step-timeout must be positive');
  if (o.serviceAccountMaxTokenExpiration < 0) throw new FlagError('--service-account-max-token-expiration must not be negative');
  // Every kubelet call is bounded: 0 would wait forever (kube's http.Client with no timeout).
  if (o.kubeletTimeout <= 0) throw new FlagError('--kubelet-timeout must be positive');
  if (!!o.kubeletClientCertificate !== !!o.kubeletClientKey) throw new FlagError('--kubelet-client-certificate and --kubelet-client-key must be given together');
  validateSigningFlags(o);
  return o;
}

/** kube-controller-manager's CSRSigningControllerOptions.Validate, with its messages. */
function validateSigningFlags(o: ServerOptions): void {
  const perSigner: Array<[string, string, string]> = [
    ['cluster-signing-kubelet-serving', o.clusterSigningKubeletServingCertFile, o.clusterSigningKubeletServingKeyFile],
    ['cluster-signing-kubelet-client', o.clusterSigningKubeletClientCertFile, o.clusterSigningKubeletClientKeyFile],
    ['cluster-signing-kube-apiserver-client', o.clusterSigningKubeApiserverClientCertFile, o.clusterSigningKubeApiserverClientKeyFile],
    ['cluster-signing-legacy-unknown', o.clusterSigningLegacyUnknownCertFile, o.clusterSigningLegacyUnknownKeyFile],
  ];
  if ((o.clusterSigningCertFile || o.clusterSigningKeyFile) && perSigner.some(([, c, k]) => c || k)) throw new FlagError('cannot specify --cluster-signing-{cert,key}-file and other --cluster-signing-*-file flags at the same time');
  // kube's default pair is a pair too (it has defaults; plinth's are empty: no signer).
  if (!!o.clusterSigningCertFile !== !!o.clusterSigningKeyFile) throw new FlagError('--cluster-signing-cert-file and --cluster-signing-key-file must be given together');
  for (const [name, c, k] of perSigner) if (!!c !== !!k) throw new FlagError(`"${name}": cannot specify key without cert or cert without key`);
  if (o.clusterSigningDuration <= 0) throw new FlagError('--cluster-signing-duration must be positive');
}

const KIND_NAMES: Partial<Record<Kind, string>> = { map: 'key=value', mapBool: 'mapStringBool', config: 'mapStringString' };

export function usage(): string {
  const lines = ['Usage: plinth-apiserver [flags]', '', 'Flags:'];
  for (const s of SPECS) {
    lines.push(`      --${s.name}${s.kind === 'bool' ? '' : ` ${KIND_NAMES[s.kind] ?? s.kind}`}`.padEnd(44) + `${s.usage}${s.default ? ` (default ${s.kind === 'string' ? JSON.stringify(s.default) : s.default})` : ''}`);
    if (s.name === 'feature-gates') for (const gate of featureGatesUsage()) lines.push(`${''.padEnd(44)}${gate}`);
  }
  return lines.join('\n');
}
