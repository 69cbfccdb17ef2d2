/**
 * The server: flags → options (options.ts) → a config of components (config.ts) → this, which
 * serves a config over HTTPS through kube's handler chain and stops it cleanly.
 */
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { readFileSync } from 'node:fs';
import { constants } from 'node:crypto';
import { DEFAULT_CIPHERS as tlsDefaultCiphers } from 'node:tls';
import { join } from 'node:path';
import express from 'express';
import { methodNotSupported, pathNotFound } from '@plinth/api';
import type { EtcdStore, WatchCaches } from '@plinth/storage';
import type { ServerOptions } from './flags.js';
import { completeOptions } from './options.js';
import { buildConfig, type ServerConfig } from './config.js';
import { createLogger, type Logger } from './log.js';
import { logHeapSettled, settleHeapSoon } from './malloc.js';
import { contextOf, type Handler } from './context.js';
import { withAuthentication, withAuthorization, withCacheControl, withMaxInFlight, withRecover, withRequestInfo } from './filters/index.js';
import { createResourceHandler, SERVED_VERBS } from './handlers/resource.js';
import { withResourceTarget } from './handlers/target.js';
import { createAuthenticationStorages } from './registry/authentication.js';
import type { Connecters } from './registry/connect.js';
import { createCoreComputedStorages } from './registry/componentstatus.js';
import { createNodeConnecters } from './registry/node-proxy.js';
import { serviceConnecters } from './services/proxy.js';
import { createPodConnecters, createPodStorages, kubeletClientConfigOf, setupCapabilities } from './registry/pods.js';
import { createAuthorizationStorages } from './registry/authorization.js';
import { withImpersonation } from './filters/impersonation.js';
import { createOpenAPIHandler } from './openapi/handler.js';
import { buildDiscovery, VERSION } from './discovery.js';
import { healthEndpoints, serveHealth, type HealthEndpoints } from './health.js';
import { withPriorityAndFairness } from './filters/priority-and-fairness.js';
import { withRequestTimeout } from './filters/request-timeout.js';
import { startupStep } from './startup.js';
import { negotiate } from './negotiation.js';
import { writeObject } from './http.js';
import { writeKubeconfig } from './kubeconfig.js';
import { withCustomResources } from './crd/index.js';
import { withAudit, withAuditID, withFailedAuthenticationAudit } from './audit/index.js';
import { metricsHandler } from './metrics/index.js';
import { createLogsHandler } from './logs-handler.js';
import { createProfilingHandler } from './profiling.js';
import { createDebugFlagsHandler } from './debug-flags.js';

export interface RunningServer {
  /** https://host:port */
  url: string;
  port: number;
  adminToken: string;
  kubeconfigPath: string;
  caFile: string | undefined;
  storage: EtcdStore;
  /** The watch caches, when --watch-cache is on. */
  watchCaches: WatchCaches | undefined;
  /** Runs one compaction round now (what the --etcd-compaction-interval timer does). */
  compactNow(): Promise<boolean>;
  stop(): Promise<void>;
}

/** How long a request may wait in a priority level's queue with no --request-timeout: kube's default 60 s / 4. */
const DEFAULT_REQUEST_WAIT_LIMIT_MS = 15_000;

/**
 * How long a client may take to send a request's headers: kube's ReadHeaderTimeout (32 s, "just
 * shy of requestTimeoutUpperBound"). Node answers 408 and closes the connection after it.
 */
const HEADERS_TIMEOUT_MS = 32_000;
/**
 * How often Node checks those timeouts on open connections (its default, 30 s, would let a slow
 * client keep a connection up to 30 s longer than the limits say).
 */
const CONNECTIONS_CHECKING_INTERVAL_MS = 2_000;
/**
 * Node's own limit on receiving a whole request (headers and body; default 300 s): a backstop
 * behind withRequestTimeout, which answers first with kube's 504. It also ends a body still
 * trickling in after its request was answered (a 403 before the body was read), which holds no
 * seat but a connection. Long-running requests are unaffected: a watch's request is complete
 * once its headers are in.
 */
function nodeRequestTimeoutMs(requestTimeoutMs: number): number {
  return requestTimeoutMs > 0 ? Math.max(requestTimeoutMs, HEADERS_TIMEOUT_MS) + 5_000 : 300_000;
}

/** What an embedder adds to a server (kube's GenericAPIServer.AddPostStartHook). */
export interface ServerExtensions {
  /** Run after plinth's own hooks, each with its `poststarthook/<name>` health check. */
  postStartHooks?: Array<{ name: string; run(): Promise<void> }>;
}

/** Flags in, a listening server out. */
export async function startServer(opts: ServerOptions, log: Logger = createLogger(opts.verbosity), extensions: ServerExtensions = {}): Promise<RunningServer> {
  const options = completeOptions(opts);
  for (const w of options.warnings) log.info(w);
  const config = await buildConfig(options, log);
  config.postStartHooks.push(...(extensions.postStartHooks ?? []));
  return serve(config);
}

const SERVER_CIPHERS = ['TLS_AES_128_GCM_SHA256', ...tlsDefaultCiphers.split(':').filter((c) => c !== 'TLS_AES_128_GCM_SHA256')].join(':');

/** `/api` and `/apis` and what is under them (the query aside): answered without express. */
function isApiPath(url: string): boolean {
  if (url.charCodeAt(0) !== 47 || url.charCodeAt(1) !== 97 || url.charCodeAt(2) !== 112 || url.charCodeAt(3) !== 105) return false; // "/api"
  const c = url.charCodeAt(4);
  if (Number.isNaN(c) || c === 47 || c === 63) return true; // "/api", "/api/…", "/api?…"
  if (c !== 115) return false; // "s"
  const d = url.charCodeAt(5);
  return Number.isNaN(d) || d === 47 || d === 63;
}

/** Builds the handler chain over a config's components. */
function buildHandler(config: ServerConfig, address: () => string, isShuttingDown: () => boolean, hooksDone: ReadonlySet<string>): Handler {
  const { catalog, stores, options } = config;
  const discovery = config.aggregator.mergeDiscovery(buildDiscovery(catalog, SERVED_VERBS, address));
  const health = healthEndpoints({
    base: config.healthChecks,
    readyOnly: config.readyzChecks,
    hooks: config.postStartHooks.map((h) => h.name),
    hookDone: (name) => hooksDone.has(name),
    livezGraceUntil: Date.now() + options.flags.livezGracePeriod,
    isShuttingDown,
  });
  const createOnly = new Map([
    ...createAuthenticationStorages({ authenticator: config.authenticator, tokenIssuer: config.tokenIssuer, authentication: options.authentication, stores }),
    ...createAuthorizationStorages({ authorizer: config.authorizer }),
    ...createPodStorages({ pods: stores.get(catalog.lookup('', 'v1', 'pods')!)!, pdbs: stores.get(catalog.lookup('policy', 'v1', 'poddisruptionbudgets')!) }),
  ]);
  // One entry per connect sub-resource (registry/connect.ts), each from its group's module.
  setupCapabilities(options.flags);
  const kubelet = kubeletClientConfigOf(options.flags);
  const connecters: Connecters = new Map([...createPodConnecters({ catalog, stores, kubelet }), ...createNodeConnecters(catalog, { preferredAddressTypes: kubelet.preferredAddressTypes, ...(kubelet.certificateAuthority ? { kubeletCA: readFileSync(kubelet.certificateAuthority) } : {}) }), ...serviceConnecters({ stores })]);
  const computed = createCoreComputedStorages(catalog, config.etcdClient);
  const resourceHandler = withCustomResources(
    createResourceHandler({ catalog, stores, createOnly, connecters, computed, admission: config.admission, features: config.options.featureGates, minRequestTimeoutSeconds: options.flags.minRequestTimeout }),
    { catalog, stores },
  );
  const openapi = createOpenAPIHandler(catalog, {
    verbs: SERVED_VERBS,
    fieldValidation: config.options.featureGates.enabled('ServerSideFieldValidation'),
    serverSideApply: config.options.featureGates.enabled('ServerSideApply'),
  });
  const { metrics } = config;
  const serveMetrics = metricsHandler(metrics);
  // kube's unlisted debugging routes: --profiling (/debug/pprof) and --enable-logs-handler (/logs).
  const profiling = options.flags.profiling ? createProfilingHandler() : undefined;
  const debugFlags = options.flags.profiling ? createDebugFlagsHandler(config.log) : undefined;
  const logs = options.flags.enableLogsHandler ? createLogsHandler(options.flags.logsDir) : undefined;

  const route: Handler = async (req, res) => {
    const { info, query } = contextOf(req);
    if (info.isResourceRequest) return resourceHandler(req, res);
    const path = info.path;
    if (await openapi(req, res, path, query)) return;
    const endpoint = /^\/(healthz|livez|readyz)(\/|$)/.exec(path)?.[1] as keyof HealthEndpoints | undefined;
    if (endpoint) return serveHealth(req, res, path, query, endpoint, health[endpoint], config.log);
    if (profiling && (path === '/debug/pprof' || path.startsWith('/debug/pprof/'))) return profiling(req, res, path, query);
    if (debugFlags && (path === '/debug/flags' || path.startsWith('/debug/flags/'))) return debugFlags(req, res, path);
    const isLogs = logs !== undefined && (path === '/logs' || path.startsWith('/logs/'));
    const extra = config.nonResourceRoutes.get(path);
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      if (isLogs) throw methodNotSupported(undefined, req.method ?? '');
      if (path === '/version' || path === '/metrics' || discovery.get(path) || extra) throw methodNotSupported(undefined, req.method ?? '');
      throw pathNotFound();
    }
    if (isLogs) return logs(req, res, path);
    if (extra) return extra(req, res);
    if (path === '/metrics') return serveMetrics(req, res);
    if (path === '/version' || path === '/version/') {
      writeObject(req, res, query, 200, VERSION, { encoding: 'json', contentType: 'application/json' });
      return;
    }
    const doc = discovery.get(path);
    if (doc) {
      writeObject(req, res, query, 200, doc, negotiate(req.headers.accept, { allowTable: false, allowProtobuf: true }));
      return;
    }
    throw pathNotFound();
  };

  // The chain, in order (kube's DefaultBuildHandlerChain): cache control → recover → request info → audit ID →
  // request timeout → authenticate (failures audited) → audit → impersonate → priority and
  // fairness (or max in-flight) → authorize → resource target → route. Metrics: the route is instrumented (kube counts what its
  // routes serve), the limiter is wrapped (in-flight gauge, 429s counted).
  // A resource request's target is resolved (a path that is no route: 404) once it is authorized,
  // before it is instrumented or reaches any handler (handlers/target.ts).
  const authorized = withAuthorization(config.aggregator.withAggregation(withResourceTarget(metrics.instrument(route), { catalog })), config.authorizer);
  // kube: APF with its gate on and a positive total limit, the max-in-flight filter otherwise.
  const serverConcurrencyLimit = options.flags.maxRequestsInflight + options.flags.maxMutatingRequestsInflight;
  const limited = metrics.trackInflight(
    config.apf
      ? withPriorityAndFairness(authorized, { serverConcurrencyLimit, requestWaitLimitMs: options.flags.requestTimeout > 0 ? options.flags.requestTimeout / 4 : DEFAULT_REQUEST_WAIT_LIMIT_MS, apf: config.apf })
      : withMaxInFlight(authorized, { readonly: options.flags.maxRequestsInflight, mutating: options.flags.maxMutatingRequestsInflight }),
  );
  const impersonated = withImpersonation(limited, config.authorizer);
  const audited = config.audit ? withAudit(impersonated, config.audit) : impersonated;
  const authMetrics = metrics.recording ? { metrics } : {};
  let authenticated = withAuthentication(audited, config.authenticator, { anonymous: options.authentication.anonymous, ...authMetrics });
  if (config.audit) authenticated = withFailedAuthenticationAudit(authenticated, config.audit);
  const timed = withRequestTimeout(authenticated, { timeoutMs: options.flags.requestTimeout, log: config.log });
  return withCacheControl(withRecover(withRequestInfo(withAuditID(timed)), config.log));
}

/** Serves a config: listens, runs post-start hooks and controllers, writes the admin kubeconfig. */
export async function serve(config: ServerConfig): Promise<RunningServer> {
  const { log } = config;
  const opts = config.options.flags;
  let shuttingDown = false;
  let port = opts.securePort;
  const host = opts.bindAddress === '0.0.0.0' || opts.bindAddress === '::' ? '127.0.0.1' : opts.bindAddress;
  const hostForUrl = host.includes(':') ? `[${host}]` : host;
  const hooksDone = new Set<string>();
  const handler = buildHandler(config, () => `${host}:${port}`, () => shuttingDown, hooksDone);

  // How a request reaches the handler chain: node's 'request' event calls `dispatch`. API
  // requests (/api, /apis: every resource request and API discovery) go straight to the chain —
  // its filters and the resource handler do their own routing from the parsed RequestInfo, so a
  // general-purpose router would only add work to the hot path. Everything else (health, metrics,
  // OpenAPI, version, service-account issuer discovery) goes through an express app, where new
  // non-API endpoints are mounted, and then through the same chain.
  const answer = (req: IncomingMessage, res: ServerResponse): void => {
    // Draining (--shutdown-delay-duration): every answer closes its connection, so keep-alive
    // clients move to another replica while this one still answers. Otherwise the idle
    // connections closed at the end of the delay race clients sending on them (ECONNRESET for a
    // client that does not retry, as Node's agent, client-node and Python do not).
    if (shuttingDown) res.setHeader('connection', 'close');
    // withRecover answers every error; should answering itself fail, this request's connection
    // is cut — an unhandled rejection would take the process (and every other client) down.
    handler(req, res).catch((e: unknown) => {
      log.error('request could not be answered', { method: req.method, error: String((e as Error)?.stack ?? e) });
      res.destroy();
    });
  };
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', false);
  app.use(answer);
  const dispatch = (req: IncomingMessage, res: ServerResponse): void => {
    if (isApiPath(req.url ?? '')) answer(req, res);
    else app(req, res);
  };

  // Client certificates are asked for (never required) when an authenticator verifies them; the
  // CertificateRequest names those CAs, so clients pick a matching certificate. Verification is the
  // authenticators' (rejectUnauthorized: false keeps a bad certificate from failing the handshake).
  // No session tickets then: a resumed session keeps only the client's leaf, not the intermediates
  // it sent (Go's tickets keep the whole chain), so every connection makes a full handshake.
  const clientCAs = config.authenticator.clientCAs ?? [];
  const server: HttpsServer = createHttpsServer(
    {
      cert: readFileSync(config.tls.certFile),
      key: readFileSync(config.tls.keyFile),
      // The server's order decides, AES-128-GCM first, as Go's crypto/tls (kube-apiserver) picks
      // on hardware with AES instructions; Node's default would negotiate AES-256-GCM, whose
      // encryption costs about a quarter more on every response byte and watch event.
      ciphers: SERVER_CIPHERS,
      honorCipherOrder: true,
      // Slow clients: see HEADERS_TIMEOUT_MS and nodeRequestTimeoutMs.
      requestTimeout: nodeRequestTimeoutMs(opts.requestTimeout),
      headersTimeout: HEADERS_TIMEOUT_MS,
      connectionsCheckingInterval: CONNECTIONS_CHECKING_INTERVAL_MS,
      ...(clientCAs.length > 0 ? { requestCert: true, rejectUnauthorized: false, ca: [...clientCAs], secureOptions: constants.SSL_OP_NO_TICKET } : {}),
    },
    dispatch,
  );
  server.keepAliveTimeout = 65_000;
  const sockets = new Set<Socket>();
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  });
  const stepTimeout = opts.startupStepTimeout;
  try {
    await startupStep(log, 'listen', stepTimeout, () =>
      new Promise<void>((resolveListen, reject) => {
        server.once('error', reject);
        server.listen(opts.securePort, opts.bindAddress, () => {
          server.off('error', reject);
          resolveListen();
        });
      }),
    );
  } catch (e) {
    // Nothing started so far may outlive a failed start: not the caches, not the embedded etcd.
    await config.close();
    throw new Error(`cannot listen on ${opts.bindAddress}:${opts.securePort}: ${(e as Error).message}`);
  }
  const addr = server.address();
  port = typeof addr === 'object' && addr ? addr.port : opts.securePort;
  config.listening.port = port;
  const url = `https://${hostForUrl}:${port}`;

  // Each hook has the step deadline; with leader election, plus the two lease durations a replica
  // may wait for the leader to reconcile the bootstrap policy before doing it itself.
  const hookTimeout = stepTimeout + (opts.leaderElect ? 2 * opts.leaderElectLeaseDuration : 0);
  try {
    for (const hook of config.postStartHooks) {
      await startupStep(log, `post-start hook ${hook.name}`, hookTimeout, () => hook.run());
      hooksDone.add(hook.name);
    }
  } catch (e) {
    server.close();
    for (const s of sockets) s.destroy();
    await config.close();
    throw e;
  }
  // What loading the watch caches left behind goes back to the OS (the garbage collector asks
  // again once its monitors have listed every resource).
  settleHeapSoon(logHeapSettled(log));
  const stopControllers = config.controllers.map((c) => c.start());
  // Singleton work runs while this replica leads (always, with --leader-elect=false).
  for (const c of config.singletons) config.elector.run(c.name, () => c.start());

  const kubeconfigPath = join(config.dataDir, 'admin.kubeconfig');
  writeKubeconfig(kubeconfigPath, { server: url, caPem: readFileSync(config.tls.caFile ?? config.tls.certFile, 'utf8'), token: config.adminToken });
  log.info('plinth serving', { url, kubeconfig: kubeconfigPath });

  let stopped: Promise<void> | undefined;
  return {
    url,
    port,
    adminToken: config.adminToken,
    kubeconfigPath,
    caFile: config.tls.caFile,
    storage: config.storage,
    watchCaches: config.watchCaches,
    compactNow: () => config.compactNow(),
    stop() {
      stopped ??= (async () => {
        shuttingDown = true;
        for (const h of config.preShutdownHooks) await h.run().catch((e: unknown) => log.error(`pre-shutdown hook ${h.name} failed`, { error: String(e) }));
        if (opts.shutdownDelayDuration > 0) await new Promise((r) => setTimeout(r, opts.shutdownDelayDuration));
        for (const stop of stopControllers) stop();
        // Leader work stops and the Lease is released: another replica takes over at once.
        await config.elector.stop();
        const closed = new Promise<void>((r) => server.close(() => r()));
        server.closeIdleConnections();
        // Ending the caches (in config.close) ends every watch stream cleanly; what is still open
        // after a grace period (requests in flight, watches served straight from etcd) is cut.
        const grace = setTimeout(() => {
          for (const s of sockets) s.destroy();
        }, 1000);
        await config.close(closed.then(() => clearTimeout(grace)));
      })();
      return stopped;
    },
  };
}
