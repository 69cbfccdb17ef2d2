/**
 * Start-up and the handler chain: etcd (embedded or given), the storage, the catalog's registry
 * stores, authentication, TLS, discovery, health, controllers — and a clean stop.
 */
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import express from 'express';
import { Catalog, apiVersionOf, builtinResources, pathNotFound, methodNotSupported, type ResourceDefinition } from '@plinth/api';
import { EtcdStore, WatchCaches, createKeyFunctions, isKeyNotFound, startCompactor, startEmbeddedEtcd, type EmbeddedEtcd, type Store } from '@plinth/storage';
import { createAdmissionChain, createNamespaceLifecycle } from '@plinth/admission';
import { createTokenAuthenticator, createTokenFileAuthenticator, createUnionAuthenticator, type Authenticator } from '@plinth/auth';
import type { ServerOptions } from './flags.js';
import { createLogger, type Logger } from './log.js';
import { contextOf, type Handler } from './context.js';
import { withAuthentication, withMaxInFlight, withRecover, withRequestInfo } from './filters/index.js';
import { ResourceStore } from './registry/store.js';
import { createResourceHandler, SERVED_VERBS } from './handlers/resource.js';
import { createOpenAPIHandler } from './openapi/handler.js';
import { buildDiscovery, VERSION } from './discovery.js';
import { serveHealth, type HealthCheck } from './health.js';
import { negotiate } from './negotiation.js';
import { writeObject } from './http.js';
import { ensureSelfSignedCert } from './certs.js';
import { loadOrCreateAdminToken, writeKubeconfig } from './kubeconfig.js';
import { ensureSystemNamespaces, startNamespaceControllers } from './controllers/namespaces.js';

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

/**
 * What anyone may read without credentials: kube's system:public-info-viewer grants `get` on
 * exactly these non-resource URLs to system:unauthenticated — not `/readyz/etcd`, not POST.
 */
const PUBLIC_PATHS: ReadonlySet<string> = new Set(['/healthz', '/livez', '/readyz', '/version', '/version/']);

async function waitForEtcd(store: EtcdStore, log: Logger, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await store.currentRevision();
      return;
    } catch (e) {
      if (Date.now() > deadline) throw new Error(`etcd is not reachable: ${(e as Error).message}`);
      log.v(1, 'waiting for etcd', { error: String(e) });
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}

export async function startServer(opts: ServerOptions, log: Logger = createLogger(opts.verbosity)): Promise<RunningServer> {
  const dataDir = resolve(opts.dataDir);
  let etcd: EmbeddedEtcd | undefined;
  let endpoints = opts.etcdServers;
  if (endpoints.length === 0) {
    etcd = await startEmbeddedEtcd({ dataDir: join(dataDir, 'etcd') });
    endpoints = [etcd.endpoint];
    log.info('embedded etcd started', { endpoint: etcd.endpoint, dataDir: join(dataDir, 'etcd') });
  }
  const storage = new EtcdStore({ endpoints });
  try {
    await waitForEtcd(storage, log);
  } catch (e) {
    await storage.close();
    await etcd?.stop();
    throw e;
  }

  const catalog = new Catalog(builtinResources());
  const keys = createKeyFunctions(opts.etcdPrefix);
  const namespacesDef = catalog.lookup('', 'v1', 'namespaces')!;
  const serviceAccountsDef = catalog.lookup('', 'v1', 'serviceaccounts')!;
  const stores = new Map<ResourceDefinition, ResourceStore>();
  // One watch cache per resource (one etcd watch each), or etcd for everything with --watch-cache=false.
  const watchCaches = opts.watchCache ? new WatchCaches(storage, { onError: (msg, err) => log.error(msg, { error: String(err ?? '') }) }) : undefined;
  const storeOf = new Map<ResourceDefinition, Store>();
  for (const def of catalog.all()) {
    storeOf.set(def, watchCaches ? watchCaches.add(keys.collectionPrefix(def.plural), apiVersionOf(def), def.kind) : storage);
  }
  const namespaceStorage = storeOf.get(namespacesDef)!;
  const admission = createAdmissionChain([
    createNamespaceLifecycle(async (name) => {
      // Like kube's informer-backed lister: the cache as it is first (no etcd round trip), and a
      // consistent read only when it has not seen the namespace (it may have just been created).
      const key = keys.objectKey(namespacesDef.plural, undefined, name);
      for (const resourceVersion of ['0', '']) {
        try {
          return await namespaceStorage.get(key, { resourceVersion });
        } catch (e) {
          if (!isKeyNotFound(e)) throw e;
        }
      }
      return undefined;
    }),
  ]);
  for (const def of catalog.all()) stores.set(def, new ResourceStore(def, { storage: storeOf.get(def)!, keys, admission }));
  await watchCaches?.start();
  const compactor = startCompactor({
    client: storage.client,
    intervalMs: opts.etcdCompactionInterval,
    onError: (e) => log.error('etcd compaction failed', { error: String(e) }),
    onCompacted: (rev) => log.v(2, 'etcd compacted', { revision: rev }),
  });

  // Authentication: the admin token, plus --token-auth-file.
  const adminToken = loadOrCreateAdminToken(join(dataDir, 'admin-token'));
  const authenticators: Authenticator[] = [
    createTokenAuthenticator({ tokens: new Map([[adminToken, { name: 'plinth-admin', uid: 'plinth-admin', groups: ['system:masters'] }]]) }),
  ];
  if (opts.tokenAuthFile) authenticators.push(createTokenFileAuthenticator(opts.tokenAuthFile));
  const authenticator = createUnionAuthenticator(authenticators);

  // TLS
  let certFile = opts.tlsCertFile;
  let keyFile = opts.tlsPrivateKeyFile;
  let caFile: string | undefined;
  if (!certFile) {
    const cert = ensureSelfSignedCert(opts.certDir || join(dataDir, 'certs'), opts.bindAddress);
    certFile = cert.certFile;
    keyFile = cert.keyFile;
    caFile = cert.caFile;
  }

  let shuttingDown = false;
  let port = opts.securePort;
  const host = opts.bindAddress === '0.0.0.0' || opts.bindAddress === '::' ? '127.0.0.1' : opts.bindAddress;
  const hostForUrl = host.includes(':') ? `[${host}]` : host;
  const discovery = buildDiscovery(catalog, SERVED_VERBS, () => `${host}:${port}`);
  const etcdCheck: HealthCheck = { name: 'etcd', check: () => withTimeout(storage.currentRevision(), 2000).then(() => undefined) };
  const baseChecks: HealthCheck[] = [
    { name: 'ping', check: async () => undefined },
    { name: 'log', check: async () => undefined },
    etcdCheck,
  ];
  const readyChecks: HealthCheck[] = [
    ...baseChecks,
    {
      name: 'shutdown',
      check: async () => {
        if (shuttingDown) throw new Error('shutting down');
      },
    },
  ];
  const resourceHandler = createResourceHandler({ catalog, stores });
  const openapi = createOpenAPIHandler(catalog, { verbs: SERVED_VERBS });

  const route: Handler = async (req, res) => {
    const { info, query } = contextOf(req);
    if (info.isResourceRequest) return resourceHandler(req, res);
    const path = info.path;
    if (await openapi(req, res, path, query)) return;
    const health = /^\/(healthz|livez|readyz)(\/|$)/.exec(path);
    if (health) return serveHealth(req, res, path, query, health[1]!, health[1] === 'readyz' ? readyChecks : baseChecks);
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      if (path === '/version' || discovery.get(path)) throw methodNotSupported(undefined, req.method ?? '');
      throw pathNotFound();
    }
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

  const isPublic = (req: IncomingMessage): boolean => req.method === 'GET' && PUBLIC_PATHS.has(contextOf(req).info.path);

  // The chain, in order (kube's DefaultBuildHandlerChain): recover → request info → authenticate
  // → max in-flight → route.
  const limited = withMaxInFlight(route, { readonly: opts.maxRequestsInflight, mutating: opts.maxMutatingRequestsInflight });
  const handler: Handler = withRecover(withRequestInfo(withAuthentication(limited, authenticator, isPublic)), log);

  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', false);
  app.use((req: IncomingMessage, res: ServerResponse) => {
    // withRecover answers every error; should answering itself fail, this request's connection
    // is cut — an unhandled rejection would take the process (and every other client) down.
    handler(req, res).catch((e: unknown) => {
      log.error('request could not be answered', { method: req.method, error: String((e as Error)?.stack ?? e) });
      res.destroy();
    });
  });

  const server: HttpsServer = createHttpsServer({ cert: readFileSync(certFile), key: readFileSync(keyFile) }, app);
  server.keepAliveTimeout = 65_000;
  const sockets = new Set<Socket>();
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  });
  try {
    await new Promise<void>((resolveListen, reject) => {
      server.once('error', reject);
      server.listen(opts.securePort, opts.bindAddress, () => {
        server.off('error', reject);
        resolveListen();
      });
    });
  } catch (e) {
    // Nothing started so far may outlive a failed start: not the caches, not the embedded etcd.
    compactor.stop();
    await watchCaches?.stop();
    await storage.close();
    await etcd?.stop();
    throw new Error(`cannot listen on ${opts.bindAddress}:${opts.securePort}: ${(e as Error).message}`);
  }
  const addr = server.address();
  port = typeof addr === 'object' && addr ? addr.port : opts.securePort;
  const url = `https://${hostForUrl}:${port}`;

  await ensureSystemNamespaces(stores.get(namespacesDef)!);
  const stopControllers = startNamespaceControllers({
    namespaces: stores.get(namespacesDef)!,
    serviceAccounts: stores.get(serviceAccountsDef)!,
    namespacedStores: catalog.namespacedResources().map((d) => stores.get(d)!),
    log,
  });

  const kubeconfigPath = join(dataDir, 'admin.kubeconfig');
  writeKubeconfig(kubeconfigPath, { server: url, caPem: caFile ? readFileSync(caFile, 'utf8') : readFileSync(certFile, 'utf8'), token: adminToken });
  log.info('plinth serving', { url, kubeconfig: kubeconfigPath });

  let stopped: Promise<void> | undefined;
  return {
    url,
    port,
    adminToken,
    kubeconfigPath,
    caFile,
    storage,
    watchCaches,
    compactNow: () => compactor.tick(),
    stop() {
      stopped ??= (async () => {
        shuttingDown = true;
        if (opts.shutdownDelayDuration > 0) await new Promise((r) => setTimeout(r, opts.shutdownDelayDuration));
        stopControllers();
        const closed = new Promise<void>((r) => server.close(() => r()));
        server.closeIdleConnections();
        // Ending the caches ends every watch stream cleanly; what is still open after a grace
        // period (requests in flight, watches served straight from etcd) is cut.
        compactor.stop();
        await watchCaches?.stop();
        const grace = setTimeout(() => {
          for (const s of sockets) s.destroy();
        }, 1000);
        await closed;
        clearTimeout(grace);
        await storage.close();
        await etcd?.stop();
      })();
      return stopped;
    },
  };
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
