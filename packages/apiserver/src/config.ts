/**
 * Options → a config of components (kube's genericapiserver.Config): etcd and storage, the
 * catalog's registry stores, admission, the authenticator union, the authorizer, TLS material,
 * health checks and the controllers to run. `server.ts` serves a config; nothing here listens.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { rootCertificates as tlsRootCertificates } from 'node:tls';
import { Catalog, apiVersionOf, builtinResources, isStored, storageDefOf, storagePathOf, type ResourceDefinition, type StoredObject, type UserInfo } from '@plinth/api';
import { EtcdStore, WatchCaches, createKeyFunctions, withTTL, isKeyNotFound, startCompactor, startEmbeddedEtcd, type Compactor, type EmbeddedEtcd, type KeyFunctions, type Store } from '@plinth/storage';
import { createAdmission, isIgnoredResource, createMutatingWebhookPlugin, createValidatingWebhookPlugin, type AdmissionChain } from '@plinth/admission';
import { buildAuthenticator, buildAuthorizer, createServiceAccountTokenIssuer, loadServiceAccountKeys, type Authenticator, type Authorizer, type TokenIssuer } from '@plinth/auth';
import type { CompletedOptions } from './options.js';
import type { Logger } from './log.js';
import type { Handler } from './context.js';
import { ResourceStore } from './registry/store.js';
import { decodeAdmitted } from './registry/codec.js';
import { createRevisionGets, createRevisionLists, type RevisionedStore } from './registry/revision-lists.js';
import { ensureSelfSignedCert } from './certs.js';
import { loadOrCreateAdminToken } from './kubeconfig.js';
import { ensureSystemNamespaces, startNamespaceControllers } from './controllers/namespaces.js';
import { createAggregator, type Aggregator } from './aggregator/aggregator.js';
import { conversionServiceResolver } from './aggregator/resolve.js';
import { startAuthenticationInfoPublisher } from './controllers/cluster-authentication-info.js';
import { syncCustomResourceAPIServices, syncLocalAPIServices } from './controllers/apiservice-autoregister.js';
import { ensureSystemPriorityClasses, priorityClassHooks } from './controllers/priority-classes.js';
import { ensureBootstrapPolicy, ensureBootstrapPolicyElected } from './controllers/rbac-bootstrap.js';
import { FEATURE_GATES, type FeatureName } from './features.js';
import { alwaysLeader, createLeaderElector, type LeaderElector } from './controllers/leader-election.js';
import { identityLeases, IDENTITY_LEASE_RENEW_MS } from './controllers/apiserver-identity.js';
import { startClusterRoleAggregation } from './controllers/clusterrole-aggregation.js';
import { createRbacEscalationGuard, isRbacResource } from './registry/rbac-escalation.js';
import { csrRequesterGuard, isCertificateSigningRequests } from './registry/csr-requester.js';
import { startTokenCleaner } from './controllers/token-cleaner.js';
import { startPVCProtection } from './controllers/pvc-protection.js';
import { startGarbageCollector } from './controllers/garbage-collector/index.js';
import { isControllerEnabled, KUBE_CONTROLLERS } from './controllers-flag.js';
import { createNodeGraphSource } from './controllers/node-graph-source.js';
import { startRootCACertPublisher } from './controllers/root-ca-cert-publisher.js';
import { startPVProtection } from './controllers/pv-protection.js';
import { startServiceAccountTokensController } from './controllers/serviceaccount-tokens.js';
import { startCSRApproving } from './controllers/csr-approving.js';
import { startCSRSigning } from './controllers/csr-signing.js';
import { loadSigners } from './controllers/csr-signers.js';
import { createRBACSource } from './controllers/rbac-source.js';
import { openIDMetadataRoutes } from './openid-metadata.js';
import { DEFAULT_HEALTH_CHECKS, type HealthCheck } from './health.js';
import { customResourceComponents } from './crd/index.js';
import { createAudit, type Audit } from './audit/index.js';
import { isDisabled } from './runtime-config.js';
import { ApiserverMetrics, createGarbageCollectorMetrics, createPodSecurityMetrics, etcdRequestObserver, storageObjectsSource } from './metrics/index.js';
import { startupStep } from './startup.js';
import { PriorityAndFairness } from './filters/priority-and-fairness.js';
import { ensureFlowcontrolBootstrap, startFlowcontrolConfig } from './controllers/flowcontrol.js';
import { createServiceComponents, type ServiceComponents } from './services/components.js';
import { startResourceQuotaController } from './controllers/resource-quota.js';

/** kube's quota admission writes quota status through the loopback client, as system:apiserver. */
const QUOTA_ADMISSION_USER: UserInfo = { name: 'system:apiserver', groups: ['system:masters'] };

export interface TLSMaterial {
  certFile: string;
  keyFile: string;
  /** The CA that signed a generated serving certificate (what the admin kubeconfig trusts). */
  caFile: string | undefined;
}

/** A controller: started once the server listens, stopped first on shutdown. */
export interface Controller {
  name: string;
  start(): () => void;
}

export interface ServerConfig {
  options: CompletedOptions;
  dataDir: string;
  log: Logger;
  storage: EtcdStore;
  /** The etcd servers plinth talks to and its client TLS (what componentstatuses probe). */
  etcdClient: { endpoints: string[]; tls?: { ca: Buffer; cert?: Buffer; key?: Buffer } };
  watchCaches: WatchCaches | undefined;
  catalog: Catalog;
  /** kube-aggregator: APIServices with a Service are proxied and merged into discovery. */
  aggregator: Aggregator;
  keys: KeyFunctions;
  /** The registry store of every stored resource in the catalog. */
  stores: Map<ResourceDefinition, ResourceStore>;
  admission: AdmissionChain;
  authenticator: Authenticator;
  authorizer: Authorizer;
  /** Signs service-account tokens (TokenRequest, legacy token Secrets). */
  tokenIssuer: TokenIssuer | undefined;
  adminToken: string;
  tls: TLSMaterial;
  /** Checks of /healthz, /livez and /readyz (ping, log, etcd); server.ts adds the hooks' and `shutdown`. */
  healthChecks: HealthCheck[];
  /** Checks of /readyz only, after `healthChecks` (kube's informer-sync). */
  readyzChecks: HealthCheck[];
  /** Non-resource GET endpoints besides discovery, health and OpenAPI, by exact path. */
  nonResourceRoutes: Map<string, Handler>;
  /**
   * Work done once the server listens, before controllers start (e.g. the system namespaces), in
   * order; each named as kube names its equivalent hook (its health check: `poststarthook/<name>`).
   */
  postStartHooks: Array<{ name: string; run(): Promise<void> }>;
  /** Work done first on shutdown, while storage is still up (kube's pre-shutdown hooks). */
  preShutdownHooks: Array<{ name: string; run(): Promise<void> }>;
  /** Controllers every replica runs (serving CRDs, its identity lease). */
  controllers: Controller[];
  /** Singleton work: runs on the replica the election chose (every replica with --leader-elect=false). */
  singletons: Controller[];
  elector: LeaderElector;
  /** Filled by the server once it listens (the identity lease's id includes the port). */
  listening: { port: number };
  /** The audit policy and log backend; undefined without --audit-policy-file and --audit-log-path. */
  audit: Audit | undefined;
  /** API Priority and Fairness (its gate on, a positive concurrency limit), configured from its objects. */
  apf: PriorityAndFairness | undefined;
  /** The Prometheus metrics (/metrics); recording is off with PLINTH_METRICS=off (benchmarks). */
  metrics: ApiserverMetrics;
  compactNow(): Promise<boolean>;
  /**
   * Releases what building the config started: the authenticators' background work, the
   * compactor and caches first, then — once `drained` settles (requests in flight done) — the
   * storage client and the embedded etcd.
   */
  close(drained?: Promise<void>): Promise<void>;
}

/** Until etcd answers a read; each attempt has a deadline of its own (a member may accept and never answer). */
async function waitForEtcd(store: EtcdStore, log: Logger, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await withTimeout(store.currentRevision(), Math.max(100, Math.min(5000, deadline - Date.now())));
      return;
    } catch (e) {
      if (Date.now() > deadline) throw new Error(`etcd is not reachable: ${(e as Error).message}`);
      log.v(1, 'waiting for etcd', { error: String(e) });
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return new Promise((resolveT, reject) => {
    const t = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
    p.then(
      (v) => {
        clearTimeout(t);
        resolveT(v);
      },
      (e) => {
        clearTimeout(t);
        reject(e);
      },
    );
  });
}

/**
 * Reads one object the way kube's informer-backed listers do: the cache as it is (no etcd round
 * trip). `fallback`: then a consistent read when the cache has not seen it (it may be brand new) —
 * for admission; never for authenticators, where anyone can make up names and each miss would cost
 * an etcd read. `live`: a quorum read only.
 */
export function cachedGetter(store: Store, key: (namespace: string, name: string) => string, fallback: boolean | 'live'): (namespace: string, name: string) => Promise<StoredObject | undefined> {
  const versions = fallback === 'live' ? [''] : fallback ? ['0', ''] : ['0'];
  return async (namespace, name) => {
    for (const resourceVersion of versions) {
      try {
        return await store.get(key(namespace, name), { resourceVersion });
      } catch (e) {
        if (!isKeyNotFound(e)) throw e;
      }
    }
    return undefined;
  };
}

/**
 * kube's --etcd-cafile/--etcd-certfile/--etcd-keyfile, read once at start (a missing file fails
 * start-up). Without a CA file, https endpoints are verified against Node's default roots.
 */
function etcdTLS(opts: CompletedOptions['flags']): { tls?: { ca: Buffer; cert?: Buffer; key?: Buffer } } {
  if (!opts.etcdCafile && !opts.etcdCertfile) return {};
  const read = (flag: string, file: string): Buffer => {
    try {
      return readFileSync(file);
    } catch (e) {
      throw new Error(`--${flag}: ${(e as Error).message}`);
    }
  };
  const ca = opts.etcdCafile ? read('etcd-cafile', opts.etcdCafile) : Buffer.concat(tlsRootCertificates.map((c) => Buffer.from(c + '\n')));
  return { tls: { ca, ...(opts.etcdCertfile ? { cert: read('etcd-certfile', opts.etcdCertfile), key: read('etcd-keyfile', opts.etcdKeyfile) } : {}) } };
}

export async function buildConfig(options: CompletedOptions, log: Logger): Promise<ServerConfig> {
  const opts = options.flags;
  const dataDir = resolve(opts.dataDir);
  // PLINTH_METRICS=off (not a flag: the benchmarks' way to measure what recording costs).
  const metrics = new ApiserverMetrics({ recording: process.env['PLINTH_METRICS'] !== 'off', showHidden: opts.showHiddenMetricsForVersion !== '', log });
  // First: a bad policy file fails start-up before anything is started.
  const audit = createAudit(opts, log, {
    onEvent: () => metrics.auditEvent(),
    onError: (events) => {
      for (let i = 0; i < events; i++) metrics.auditError('log');
    },
  });
  const stepTimeout = opts.startupStepTimeout;
  // The signers' CAs: an unusable file fails start-up before anything is started.
  const signers = loadSigners(opts);
  let etcd: EmbeddedEtcd | undefined;
  let endpoints = opts.etcdServers;
  let tls = etcdTLS(opts);
  if (endpoints.length === 0) {
    // TLS with client certificates of its own CA (<data-dir>/etcd/pki); it dies with this process.
    etcd = await startEmbeddedEtcd({ dataDir: join(dataDir, 'etcd'), startTimeoutMs: stepTimeout, log: (msg, fields) => log.info(msg, fields) });
    endpoints = [etcd.endpoint];
    tls = etcd.tls ? { tls: etcd.tls } : {};
    log.info('embedded etcd started', { endpoint: etcd.endpoint, dataDir: join(dataDir, 'etcd') });
  }
  const etcdObserver = etcdRequestObserver(metrics, opts.etcdPrefix);
  const storage = new EtcdStore({ endpoints, ...tls, ...(metrics.recording ? { observer: etcdObserver } : {}) });
  const etcdClient = { endpoints, ...tls };
  let stopObjectCounts: (() => void) | undefined;
  let watchCaches: WatchCaches | undefined;
  let compactor: Compactor | undefined;
  let authenticator: Authenticator | undefined;
  let authorizer: Authorizer | undefined;
  let elector: LeaderElector | undefined;
  let serviceComponents: ServiceComponents | undefined;
  const close = async (drained?: Promise<void>): Promise<void> => {
    await serviceComponents?.preShutdown();
    authenticator?.close?.();
    authorizer?.close?.();
    compactor?.stop();
    await elector?.stop();
    metrics.close();
    stopObjectCounts?.();
    await watchCaches?.stop();
    await drained;
    await audit?.backend.close();
    await storage.close();
    await etcd?.stop();
  };
  try {
    await startupStep(log, 'etcd reachable', stepTimeout, () => waitForEtcd(storage, log, stepTimeout));

    const catalog = new Catalog(builtinResources());
    const keys = createKeyFunctions(opts.etcdPrefix);
    // Every built-in definition, served or not: components reach stores through these, and a
    // version --runtime-config turns off keeps its store (another version may store through it).
    const builtins = new Map(catalog.all().map((d) => [`${d.group}/${d.version}/${d.plural}`, d]));
    const builtinNamespaced = catalog.namespacedResources();
    metrics.attach(catalog);
    // Declared once per server (the leader's collector reports into it, as KCM's /metrics).
    const gcMetrics = createGarbageCollectorMetrics(metrics.registry);
    etcdObserver.attach(catalog);
    const def = (group: string, version: string, plural: string): ResourceDefinition => builtins.get(`${group}/${version}/${plural}`)!;
    // One watch cache per resource (one etcd watch each), or etcd for everything with --watch-cache=false.
    watchCaches = opts.watchCache ? new WatchCaches(storage, {
          onError: (msg, err) => log.error(msg, { error: String(err ?? '') }),
          consistentReadsFromCache: options.featureGates.enabled('ConsistentListFromCache'),
        }) : undefined;
    const storeOf = new Map<ResourceDefinition, Store>();
    /** The watch caches among them (none with --watch-cache=false). */
    const cacheOf = new Map<ResourceDefinition, RevisionedStore>();
    for (const d of catalog.stored()) {
      const cache = watchCaches?.add(keys.collectionPrefix(storagePathOf(d)), apiVersionOf(d), d.kind, watchIndexOf(d));
      storeOf.set(d, cache ?? storage);
      if (cache) cacheOf.set(d, cache);
    }
    // Admission's informer listers: lists at resourceVersion 0, reused while the cache's revision holds.
    const revisionLists = createRevisionLists();
    const listAt0 = async (d: ResourceDefinition, prefix: string): Promise<StoredObject[]> => {
      const cache = cacheOf.get(d);
      return cache ? revisionLists(cache, prefix) : (await storeOf.get(d)!.list(prefix, { resourceVersion: '0' })).items;
    };
    const getterOf = (d: ResourceDefinition, fallback: boolean) => cachedGetter(storeOf.get(d)!, (namespace, name) => keys.objectKey(storagePathOf(d), d.namespaced ? namespace : undefined, name), fallback);
    // Admission's lookups of every pod (its namespace, its service account): the cache's object,
    // reused while the cache's revision holds; a miss still falls back to a consistent read.
    const revisionGets = createRevisionGets();
    const memoGetterOf = (d: ResourceDefinition) => {
      const cache = cacheOf.get(d);
      const fallback = getterOf(d, true);
      if (!cache) return fallback;
      return async (namespace: string, name: string): Promise<StoredObject | undefined> =>
        (await revisionGets(cache, keys.objectKey(storagePathOf(d), d.namespaced ? namespace : undefined, name))) ?? fallback(namespace, name);
    };
    const memoGetters = new Map([def('', 'v1', 'namespaces'), def('', 'v1', 'serviceaccounts')].map((d) => [d, memoGetterOf(d)]));

    const namespaceGetters = { cached: memoGetters.get(def('', 'v1', 'namespaces'))!, live: cachedGetter(storage, (_ns, name) => keys.objectKey(storagePathOf(def('', 'v1', 'namespaces')), undefined, name), 'live') };
    const getNamespace = (ns: string, name: string, opts?: { live?: boolean }) => (opts?.live ? namespaceGetters.live : namespaceGetters.cached)(ns, name);
    // Webhook configurations as the watch cache has them (kube's informer-backed managers).
    const configurations = (plural: string) => (): Promise<StoredObject[]> => listAt0(def('admissionregistration.k8s.io', 'v1', plural), keys.collectionPrefix(plural));
    const webhookDeps = {
      getNamespace: (name: string) => getNamespace('', name),
      // matchPolicy Equivalent: the catalog's served versions and groups of one storage.
      equivalentResources: (d: ResourceDefinition, subresource: string) => catalog.equivalentResources(d, subresource),
      warn: (msg: string, fields: Record<string, unknown>) => log.info(msg, fields),
      ...(metrics.recording ? { observeCall: metrics.webhookCall.bind(metrics) } : {}),
    };
    const admission = createAdmission(options.admissionPlugins, {
      getNamespace: (name, opts) => getNamespace('', name, opts),
      listStorageClasses: () => listAt0(def('storage.k8s.io', 'v1', 'storageclasses'), keys.collectionPrefix('storageclasses')),
      // The authorizer is built after the stores; admission runs only once it is.
      authorizeSigner: async (a) => (await authorizer!.authorize({ ...a, isResourceRequest: true, path: '', namespace: '', subresource: '' })).decision === 'allow',
      // The informer listers of the Priority, RuntimeClass and DefaultIngressClass plugins: the watch
      // cache, or etcd itself (`fresh`) where a plugin would refuse a name the cache may not have yet.
      listObjects: async (group, version, plural, opts) => {
        const d = def(group, version, plural);
        const prefix = keys.collectionPrefix(storagePathOf(d), d.namespaced && opts?.namespace ? opts.namespace : undefined);
        return opts?.fresh ? (await storeOf.get(d)!.list(prefix, {})).items : listAt0(d, prefix);
      },
      pluginConfig: (name) => options.admissionConfig.get(name),
      // NamespaceAutoProvision's loopback client (kube's runs as system:apiserver in system:masters).
      createNamespace: async (name) => {
        const scope = { user: { name: 'system:apiserver', groups: ['system:masters', 'system:authenticated'] }, namespace: '' };
        await stores.get(def('', 'v1', 'namespaces'))!.create(scope, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
      },
      featureGate: (name) => Object.hasOwn(FEATURE_GATES, name) && options.featureGates.enabled(name as FeatureName),
      ownerReferences: {
        authorize: async (a) => {
          const d = await authorizer!.authorize({ ...a, isResourceRequest: true, path: '' });
          return { allowed: d.decision === 'allow', reason: d.reason ?? '', ...(d.decision !== 'allow' && d.error ? { error: d.error } : {}) };
        },
        // kube's discovery REST mapper: what the catalog serves now, custom resources included.
        servedResources: (group, version) => catalog.all().filter((d) => d.group === group && d.version === version),
      },
      ...(metrics.recording ? { podSecurityMetrics: createPodSecurityMetrics(metrics.registry) } : {}),
      // ResourceQuota: the namespace's quotas from the watch cache (or etcd), and kube's UpdateStatus
      // with the quota's resourceVersion as precondition. The stores are built below.
      quotas: {
        list: async (namespace, fresh) => {
          const d = def('', 'v1', 'resourcequotas');
          const prefix = keys.collectionPrefix(storagePathOf(d), namespace);
          return fresh ? (await storeOf.get(d)!.list(prefix, {})).items : listAt0(d, prefix);
        },
        updateStatus: async (quota) => {
          const d = def('', 'v1', 'resourcequotas');
          const status = d.subresources.find((s) => s.name === 'status')!.strategy!;
          const scope = { user: QUOTA_ADMISSION_USER, namespace: quota.metadata.namespace! };
          return (await stores.get(d)!.update(scope, quota.metadata.name!, quota, {}, status)).object;
        },
      },
      // Informer listers (ServiceAccount, NodeRestriction): the watch cache with a miss confirmed
      // by a quorum read, or (`fresh`) etcd itself.
      getObject: (group, version, plural, namespace, name, opts) => {
        const d = def(group, version, plural);
        return (opts?.fresh ? cachedGetter(storage, (ns, n) => keys.objectKey(storagePathOf(d), d.namespaced ? ns : undefined, n), 'live') : (memoGetters.get(d) ?? getterOf(d, true)))(namespace, name);
      },
      defaultTolerationSeconds: { notReady: opts.defaultNotReadyTolerationSeconds, unreachable: opts.defaultUnreachableTolerationSeconds },
      mutatingWebhook: () =>
        createMutatingWebhookPlugin({ ...webhookDeps, listConfigurations: configurations('mutatingwebhookconfigurations'), decodeObject: (kind, obj) => decodeAdmitted(catalog, kind, obj) }),
      validatingWebhook: () => createValidatingWebhookPlugin({ ...webhookDeps, listConfigurations: configurations('validatingwebhookconfigurations') }),
    });
    const stores = new Map<ResourceDefinition, ResourceStore>();
    // Services: cluster IPs and node ports allocated in etcd by the Service REST's hooks.
    const services = (serviceComponents = createServiceComponents({ storage, etcdPrefix: opts.etcdPrefix, network: options.services, securePort: () => listening.port, log }));
    const servicesDef = def('', 'v1', 'services');
    const priorityClassesDef = def('scheduling.k8s.io', 'v1', 'priorityclasses');
    const rbacStore = (plural: string) => () => stores.get(def('rbac.authorization.k8s.io', 'v1', plural))!;
    // The escalation check asks the authorizer built below (the stores are built first).
    const guardDeps = { authorizer: () => authorizer!, roles: rbacStore('roles'), clusterRoles: rbacStore('clusterroles') };
    // Events expire --event-ttl after their last write (kube: whole seconds; 0 keeps them).
    const eventsDef = def('', 'v1', 'events');
    const eventTtlSeconds = Math.floor(opts.eventTtl / 1000);
    const events = eventTtlSeconds > 0 ? withTTL(storeOf.get(eventsDef)!, eventTtlSeconds) : storeOf.get(eventsDef)!;
    // A store per served version; versions that convert share their storage version's cache.
    for (const d of catalog.all()) {
      if (!isStored(d)) continue;
      const writeGuard = isRbacResource(d) ? createRbacEscalationGuard(d, guardDeps) : isCertificateSigningRequests(d) ? csrRequesterGuard : undefined;
      const storageDef = storageDefOf(d);
      const hooks = storageDef === servicesDef ? services.hooks : storageDef === priorityClassesDef ? priorityClassHooks : undefined;
      stores.set(d, new ResourceStore(d, { storage: storageDef === eventsDef ? events : storeOf.get(storageDef)!, keys, admission, writeGuard, hooks, garbageCollection: opts.enableGarbageCollector }));
    }
    const caches = watchCaches;
    if (caches) await startupStep(log, 'watch caches synced', stepTimeout, () => caches.start());
    const objectCounts = storageObjectsSource({ catalog, storage, watchCaches, collectionPrefix: (d) => keys.collectionPrefix(storagePathOf(d)), onError: (e) => log.error('counting stored objects failed', { error: String(e) }) });
    stopObjectCounts = objectCounts.stop;
    metrics.setStorageObjectsSource(objectCounts.source);
    // The compactor's rounds run on the leader's timer (below); its CAS on compact_rev_key keeps
    // one compaction per interval even while two replicas believe they lead.
    compactor = startCompactor({
      client: storage.client,
      intervalMs: 0,
      onError: (e) => log.error('etcd compaction failed', { error: String(e) }),
      onCompacted: (rev) => log.v(2, 'etcd compacted', { revision: rev }),
    });

    const adminToken = loadOrCreateAdminToken(join(dataDir, 'admin-token'));
    authenticator = await startupStep(log, 'authenticators', stepTimeout, () => buildAuthenticator(options.authentication, {
      getSecret: getterOf(def('', 'v1', 'secrets'), false),
      // After a verified signature only: a miss may be an account another replica just created.
      getServiceAccount: getterOf(def('', 'v1', 'serviceaccounts'), true),
      getServiceAccountSecret: getterOf(def('', 'v1', 'secrets'), true),
      getPod: getterOf(def('', 'v1', 'pods'), true),
      staticTokens: new Map([[adminToken, { name: 'plinth-admin', uid: 'plinth-admin', groups: ['system:masters'] }]]),
      dataDir,
      log,
    }));

    // The modes of --authorization-mode, in order; RBAC reads roles and bindings through informers.
    const rbacGroup = 'rbac.authorization.k8s.io';
    authorizer = buildAuthorizer(options.authorization, {
      rbacSource: createRBACSource({ storeOf: (plural) => stores.get(def(rbacGroup, 'v1', plural))!, log }),
      nodeGraphSource: createNodeGraphSource({ storeOf: (kind) => stores.get(kind === 'volumeattachments' ? def('storage.k8s.io', 'v1', kind) : def('', 'v1', kind))!, log }),
      log,
    });

    let tls: TLSMaterial;
    if (opts.tlsCertFile) {
      tls = { certFile: opts.tlsCertFile, keyFile: opts.tlsPrivateKeyFile, caFile: undefined };
    } else {
      tls = ensureSelfSignedCert(opts.certDir || join(dataDir, 'certs'), opts.bindAddress);
    }
    // Readable now: a missing file fails start-up, not the first handshake.
    readFileSync(tls.certFile);
    readFileSync(tls.keyFile);

    const sa = options.authentication.serviceAccounts;
    const tokenIssuer = createServiceAccountTokenIssuer({
      // The key set the service-account authenticator loaded (memoised per options object).
      keys: await loadServiceAccountKeys(sa, dataDir),
      issuers: sa.issuers,
      apiAudiences: options.authentication.apiAudiences,
      maxExpirationSeconds: sa.maxExpirationSeconds,
      extendExpiration: sa.extendExpiration,
      jwksURI: sa.jwksURI,
    });

    // kube's etcd check reads with a 2 s timeout (--etcd-healthcheck-timeout's default): a dead
    // etcd fails it within seconds, and it passes again once etcd answers (the client reconnects).
    const healthChecks: HealthCheck[] = [...DEFAULT_HEALTH_CHECKS, { name: 'etcd', check: () => withTimeout(storage.currentRevision(), 2000).then(() => undefined) }];
    // kube's informer-sync (readyz only): the informers the server decides from have synced once —
    // here the built-in resources' watch caches and the authorizer's RBAC informers.
    const builtinCaches = watchCaches ? [...watchCaches.all()] : [];
    const cachesSynced = new WeakSet<object>();
    let authorizationSynced = false;
    void authorizer.synced?.then(() => (authorizationSynced = true), () => undefined);
    if (!authorizer.synced) authorizationSynced = true;
    const readyzChecks: HealthCheck[] = [
      {
        name: 'informer-sync',
        check: () => {
          const notSynced = builtinCaches.filter((c) => {
            if (c.ready) cachesSynced.add(c);
            return !cachesSynced.has(c);
          }).length;
          if (notSynced > 0 || !authorizationSynced) throw new Error(`${notSynced + (authorizationSynced ? 0 : 1)} informers not started yet`);
        },
      },
    ];

    // CustomResourceDefinitions: each served as ResourceDefinitions and stores added while serving.
    const leases = stores.get(def('coordination.k8s.io', 'v1', 'leases'))!;
    const listening = { port: opts.securePort };
    const identity = identityLeases({ leases, port: () => listening.port, log });
    elector = opts.leaderElect
      ? createLeaderElector({
          leases,
          namespace: opts.leaderElectResourceNamespace,
          name: opts.leaderElectResourceName,
          leaseDurationMs: opts.leaderElectLeaseDuration,
          renewDeadlineMs: opts.leaderElectRenewDeadline,
          retryPeriodMs: opts.leaderElectRetryPeriod,
          log,
        })
      : alwaysLeader();
    const apiextensions = customResourceComponents({
      catalog,
      stores,
      crds: stores.get(def('apiextensions.k8s.io', 'v1', 'customresourcedefinitions'))!,
      storage,
      watchCaches,
      keys,
      admission,
      garbageCollection: opts.enableGarbageCollector,
      log,
      apiserverCount: () => identity.liveCount(),
      conversion: {
        resolveService: conversionServiceResolver({ services: stores.get(def('', 'v1', 'services'))!, endpoints: stores.get(def('', 'v1', 'endpoints'))! }),
        observe: (labels, seconds) => metrics.crdWebhookConversion(labels, seconds),
      },
    });

    const namespaces = stores.get(def('', 'v1', 'namespaces'))!;
    const clusterRoles = rbacStore('clusterroles')();
    const clusterRoleBindings = rbacStore('clusterrolebindings')();
    const bootstrapPolicy = {
      clusterRoles,
      clusterRoleBindings,
      roles: rbacStore('roles')(),
      roleBindings: rbacStore('rolebindings')(),
      namespaces,
      // kube's policy has rules only some feature gates add.
      policy: { featureEnabled: (name: string) => (Object.hasOwn(FEATURE_GATES, name) ? options.featureGates.enabled(name as FeatureName) : false) },
      log,
    };
    const comp = compactor;
    const every = (name: string, ms: number, fn: () => Promise<unknown>): Controller => ({
      name,
      start: () => {
        const timer = setInterval(() => void fn().catch((e: unknown) => log.error(`${name} failed`, { error: String(e) })), ms);
        timer.unref();
        return () => clearInterval(timer);
      },
    });
    // kube: APF with its gate on and a positive total limit (the max-in-flight filter otherwise);
    // a queued request waits at most --request-timeout / 4 (15 s with none).
    const serverConcurrencyLimit = opts.maxRequestsInflight + opts.maxMutatingRequestsInflight;
    const apf =
      options.featureGates.enabled('APIPriorityAndFairness') && opts.enablePriorityAndFairness && serverConcurrencyLimit > 0
        ? new PriorityAndFairness({ serverConcurrencyLimit, requestWaitLimitMs: opts.requestTimeout > 0 ? opts.requestTimeout / 4 : 15_000 })
        : undefined;
    const flowcontrolStores = {
      flowSchemas: stores.get(def('flowcontrol.apiserver.k8s.io', 'v1beta2', 'flowschemas'))!,
      priorityLevels: stores.get(def('flowcontrol.apiserver.k8s.io', 'v1beta2', 'prioritylevelconfigurations'))!,
      log,
    };
    const aggregator = createAggregator({
      apiservices: stores.get(def('apiregistration.k8s.io', 'v1', 'apiservices'))!,
      services: stores.get(def('', 'v1', 'services'))!,
      endpoints: stores.get(def('', 'v1', 'endpoints'))!,
      proxyClientCertFile: opts.proxyClientCertFile,
      proxyClientKeyFile: opts.proxyClientKeyFile,
      log,
    });
    const controllers: Controller[] = [
      apiextensions.controller,
      { name: 'apiserver-identity', start: () => identity.start() },
      // kube's APF config controller runs in every apiserver that has the filter.
      ...(apf ? [{ name: 'priority-and-fairness-config-consumer', start: () => startFlowcontrolConfig({ ...flowcontrolStores, apf }) }] : []),
      // kube's crdRegistrationController: APIServices follow the group/versions CRDs serve.
      {
        name: 'crd-apiservice-registration',
        start: () => {
          const apiservices = stores.get(def('apiregistration.k8s.io', 'v1', 'apiservices'))!;
          let running: Promise<void> = Promise.resolve();
          const sync = (): void => {
            running = running.then(() => syncCustomResourceAPIServices(apiservices, catalog.all())).catch((e: unknown) => log.error('registering the APIServices of CRDs failed', { error: String(e) }));
          };
          sync();
          return catalog.subscribe(sync);
        },
      },
      // kube-aggregator's proxy routes and APIServiceAvailable controller (every replica, as kube's).
      {
        name: 'kube-aggregator',
        start: () => {
          aggregator.start();
          return () => aggregator.stop();
        },
      },
    ];
    // kube-controller-manager's controllers as --controllers selects them (plinth's own singletons,
    // e.g. the compactor, always run).
    const controllerOn = (name: string): boolean => isControllerEnabled(opts.controllers, name);
    // kube-controller-manager's log when an enabled controller's init declines to run.
    if (!opts.enableGarbageCollector && controllerOn('garbagecollector')) log.info('Skipping "garbagecollector"', { reason: '--enable-garbage-collector=false' });
    const singletons: Controller[] = [
      ...(opts.etcdCompactionInterval > 0 ? [every('compactor', opts.etcdCompactionInterval, () => comp.tick())] : []),
      // kube's apiserverleasegc (every replica, hourly there): here the leader, each renewal period.
      every('apiserver-identity-gc', IDENTITY_LEASE_RENEW_MS, () => identity.collectGarbage()),
      {
        // kube's namespace and serviceaccount controllers, one informer on namespaces for both.
        name: 'namespace',
        start: () =>
          startNamespaceControllers({
            namespaces,
            serviceAccounts: stores.get(def('', 'v1', 'serviceaccounts'))!,
            namespacedStores: () => [...new Set([...builtinNamespaced, ...catalog.namespacedResources()])].flatMap((d) => stores.get(d) ?? []),
            log,
            namespace: controllerOn('namespace'),
            serviceAccount: controllerOn('serviceaccount'),
          }),
      },
      // kube-controller-manager's tokencleaner, run in-process along with bootstrap token auth.
      { name: 'clusterrole-aggregation', start: () => startClusterRoleAggregation({ clusterRoles, log }) },
      ...(options.authentication.bootstrapToken ? [{ name: 'tokencleaner', start: () => startTokenCleaner({ secrets: stores.get(def('', 'v1', 'secrets'))!, log }) }] : []),
      {
        name: 'serviceaccount-token',
        start: () =>
          startServiceAccountTokensController({
            secrets: stores.get(def('', 'v1', 'secrets'))!,
            serviceAccounts: stores.get(def('', 'v1', 'serviceaccounts'))!,
            issuer: tokenIssuer,
            rootCA: readFileSync(tls.caFile ?? tls.certFile, 'utf8'),
            log,
          }),
      },
      // kube-controller-manager's pvc-protection and pv-protection: without them the finalizers
      // StorageObjectInUseProtection adds would keep every deleted claim and volume forever.
      {
        name: 'pvc-protection',
        start: () => startPVCProtection({ persistentVolumeClaims: stores.get(def('', 'v1', 'persistentvolumeclaims'))!, pods: stores.get(def('', 'v1', 'pods'))!, log }),
      },
      // kube-controller-manager's root-ca-cert-publisher: kube-root-ca.crt in every namespace, for
      // the projected volume the ServiceAccount plugin mounts (the CA of the serving certificate).
      {
        name: 'root-ca-cert-publisher',
        start: () =>
          startRootCACertPublisher({
            namespaces,
            configMaps: stores.get(def('', 'v1', 'configmaps'))!,
            rootCA: readFileSync(tls.caFile ?? tls.certFile, 'utf8'),
            log,
          }),
      },
      { name: 'pv-protection', start: () => startPVProtection({ persistentVolumes: stores.get(def('', 'v1', 'persistentvolumes'))!, log }) },
      // kube-controller-manager's csrapproving (always on there) and csrsigning (on with a CA).
      { name: 'csrapproving', start: () => startCSRApproving({ csrs: stores.get(def('certificates.k8s.io', 'v1', 'certificatesigningrequests'))!, authorizer: () => authorizer!, log }) },
      ...(signers.size > 0
        ? [{ name: 'csrsigning', start: () => startCSRSigning({ csrs: stores.get(def('certificates.k8s.io', 'v1', 'certificatesigningrequests'))!, signers, durationMs: opts.clusterSigningDuration, log }) }]
        : []),
      // kube-controller-manager's resourcequota controller: status.hard and status.used of every quota.
      {
        name: 'resourcequota',
        start: () =>
          startResourceQuotaController({
            quotas: stores.get(def('', 'v1', 'resourcequotas'))!,
            storeFor: (group, resource) => {
              // Built-in resources, then custom resources (their stores join `stores` as CRDs are established).
              const d = [...builtinNamespaced, ...catalog.namespacedResources()].find((x) => x.group === group && x.plural === resource);
              return d && (stores.get(storageDefOf(d)) ?? stores.get(d));
            },
            monitored: () => [...new Set(builtinNamespaced.map((d) => storageDefOf(d)))].filter((d) => !isIgnoredResource(d.group, d.plural)).flatMap((d) => stores.get(d) ?? []),
            log,
          }),
      },
      // kube-controller-manager's garbagecollector (skipped, as kube's, with --enable-garbage-collector=false).
      ...(opts.enableGarbageCollector
        ? [
            {
              name: 'garbagecollector',
              start: () =>
                startGarbageCollector({
                  catalog,
                  storeOf: (d) => stores.get(d),
                  events: stores.get(def('', 'v1', 'events'))!,
                  workers: opts.concurrentGcSyncs,
                  log,
                  metrics: gcMetrics,
                }),
            },
          ]
        : []),
      apiextensions.singleton,
    ].filter((c) => (c.name === 'namespace' ? controllerOn('namespace') || controllerOn('serviceaccount') : !KUBE_CONTROLLERS.includes(c.name) || controllerOn(c.name)));

    // --runtime-config: what is off leaves the served catalog (404, gone from discovery and
    // OpenAPI); its store stays.
    // A resource behind a feature gate that is off is left out the same way.
    const disabled = catalog.all().filter((d) => isDisabled(options.disabledResources, d) || (d.featureGate !== undefined && !options.featureGates.enabled(d.featureGate as FeatureName)));
    if (disabled.length > 0) {
      catalog.remove(disabled);
      log.info('API versions and resources disabled by --runtime-config or a feature gate', { resources: disabled.map((d) => `${apiVersionOf(d)}/${d.plural}`) });
    }

    const cache = watchCaches;
    const leader = elector;
    return {
      options,
      dataDir,
      log,
      storage,
      watchCaches: cache,
      catalog,
      aggregator,
      keys,
      stores,
      admission,
      authenticator,
      authorizer,
      tokenIssuer,
      adminToken,
      tls,
      etcdClient,
      healthChecks,
      readyzChecks,
      nonResourceRoutes: openIDMetadataRoutes(tokenIssuer, sa.issuers[0]!, opts.bindAddress, log),
      postStartHooks: [
        // kube's bootstrap-controller creates the system namespaces.
        // The election starts once kube-system (where its Lease lives) exists.
        {
          name: 'bootstrap-controller',
          run: async () => {
            await ensureSystemNamespaces(namespaces);
            leader.start();
            // The allocation repairs' first run, then the kubernetes Service and Endpoints.
            await services.postStart();
          },
        },
        {
          name: 'rbac/bootstrap-roles',
          run: () =>
            opts.leaderElect
              ? ensureBootstrapPolicyElected({ ...bootstrapPolicy, isLeader: () => leader.isLeader(), fallbackMs: 2 * opts.leaderElectLeaseDuration })
              : ensureBootstrapPolicy(bootstrapPolicy),
        },
        // kube's hook publishing kube-system/extension-apiserver-authentication for aggregated servers.
        { name: 'start-cluster-authentication-info-controller', run: () => startAuthenticationInfoPublisher(stores.get(def('', 'v1', 'configmaps'))!, opts, (e) => log.error('publishing kube-system/extension-apiserver-authentication failed; retrying', { error: String(e) })) },
        // kube's scheduling hook creates the system PriorityClasses.
        { name: 'scheduling/bootstrap-system-priority-classes', run: () => ensureSystemPriorityClasses(stores.get(priorityClassesDef)!) },
        // kube's flowcontrol hook: the mandatory and suggested APF objects.
        { name: 'priority-and-fairness-config-producer', run: () => ensureFlowcontrolBootstrap(flowcontrolStores) },
        // kube's hook that starts the shared informers; plinth's started with the config, so this
        // waits for the authorizer's first lists (no request is decided on half-loaded roles).
        { name: 'generic-apiserver-start-informers', run: async () => authorizer!.synced },
        // `crd-informer-synced`: the CRDs present at start are served.
        apiextensions.postStartHook,
        // kube's autoregister: a local APIService per served group/version (after the CRDs, as kube waits for their sync).
        { name: 'kube-apiserver-autoregistration', run: () => syncLocalAPIServices(stores.get(def('apiregistration.k8s.io', 'v1', 'apiservices'))!, catalog.all()) },
      ],
      preShutdownHooks: [{ name: 'bootstrap-controller', run: () => services.preShutdown() }],
      controllers,
      singletons,
      elector: leader,
      listening,
      audit,
      apf,
      metrics,
      compactNow: () => comp.tick(),
      close,
    };
  } catch (e) {
    // Nothing started may outlive a failed start; closing is bounded too (an etcd that never
    // answered may not answer a close either).
    await withTimeout(close(), 10_000).catch((err: unknown) => log.error('closing after a failed start', { error: String(err) }));
    throw e;
  }
}

/** The watch cache index of a stored resource (kube's TriggerFunc), when it has one. */
function watchIndexOf(d: ResourceDefinition): ((obj: StoredObject) => string) | undefined {
  const index = d.fieldSelector?.index;
  return index ? (obj) => index.value(obj) : undefined;
}
