/**
 * Client certificates (`--client-ca-file`) and the authenticating proxy (`--requestheader-*`)
 * against a real plinth over real TLS: the identity the server saw, observed through
 * discovery (kube's default policy lets every authenticated user read `/api` and refuses
 * `system:anonymous` with 403) and SelfSubjectReview.
 */
import { describe, it, after, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Agent, request as httpsRequest } from 'node:https';
import { promisify } from 'node:util';
import { stringify as toYaml } from 'yaml';
import { startServer, parseFlags, createLogger } from '@plinth/apiserver';
import { startTestEtcd, tempDir, usePlinth, kubectlPath } from './harness.js';
import { AUTHENTICATED_PROBE, Pki } from './auth-fixtures.js';

const execFileAsync = promisify(execFile);

/** A throw-away PKI made with openssl, synchronously (the flags must name its files up front). */
const dir = tempDir('plinth-x509-');
const pki = new Pki(dir);
const pem = (name: string): string => pki.pem(name);
const keyPem = (name: string): string => pki.keyPem(name);

pki.rootCA('client-ca');
pki.rootCA('second-ca');
pki.rootCA('proxy-ca');
pki.rootCA('unknown-ca');
pki.issue('inter', '/CN=client-intermediate', 'client-ca', ['basicConstraints=critical,CA:TRUE', 'keyUsage=critical,keyCertSign']);
pki.issue('alice', '/O=dev/O=ops/CN=alice', 'client-ca');
pki.issue('admin', '/O=system:masters/CN=kube-admin', 'client-ca');
pki.issue('carol', '/O=second/CN=carol', 'second-ca');
pki.issue('dave', '/O=team/CN=dave', 'inter');
pki.issue('mallory', '/CN=alice', 'unknown-ca');
pki.issue('expired', '/CN=old-alice', 'client-ca', ['extendedKeyUsage=clientAuth'], { start: '20200101000000Z', end: '20200102000000Z' });
pki.issue('webserver', '/CN=web', 'client-ca', ['extendedKeyUsage=serverAuth']);
pki.issue('front-proxy', '/CN=front-proxy', 'proxy-ca');
pki.issue('other-proxy', '/CN=not-the-proxy', 'proxy-ca');
// --client-ca-file is a bundle of two CAs; the proxy CA is separate, as kube recommends.
writeFileSync(join(dir, 'client-bundle.crt'), pem('client-ca') + pem('second-ca'));

const env = usePlinth([
  '--feature-gates=APISelfSubjectReview=true',
  `--client-ca-file=${join(dir, 'client-bundle.crt')}`,
  `--requestheader-client-ca-file=${join(dir, 'proxy-ca.crt')}`,
  '--requestheader-username-headers=X-Remote-User',
  '--requestheader-group-headers=X-Remote-Group',
  '--requestheader-extra-headers-prefix=X-Remote-Extra-',
  '--requestheader-allowed-names=front-proxy',
]);
after(() => rmSync(dir, { recursive: true, force: true }));

interface Reply {
  status: number;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- test convenience
}

interface CallOptions {
  /** Client certificate (and chain) and key, by name; `chain` adds the intermediate. */
  cert?: string;
  chain?: string[];
  headers?: Record<string, string | string[]>;
  method?: string;
  body?: unknown;
  agent?: Agent;
}

/** One HTTPS request to plinth presenting the given client certificate (no bearer token). */
function call(path: string, opts: CallOptions = {}): Promise<Reply> {
  const u = new URL(env.plinth.server.url);
  const payload = opts.body === undefined ? undefined : Buffer.from(JSON.stringify(opts.body));
  const tls = opts.cert ? { cert: pem(opts.cert) + (opts.chain ?? []).map(pem).join(''), key: keyPem(opts.cert) } : {};
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      {
        hostname: u.hostname,
        port: u.port,
        path,
        method: opts.method ?? 'GET',
        headers: { ...(opts.headers ?? {}), ...(payload ? { 'content-type': 'application/json', 'content-length': String(payload.length) } : {}) },
        ca: readFileSync(env.plinth.server.caFile!, 'utf8'),
        ...(opts.agent ? { agent: opts.agent } : { agent: false, ...tls }),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: unknown;
          try {
            body = JSON.parse(text);
          } catch {
            body = text;
          }
          resolve({ status: res.statusCode ?? 0, body });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** A request only an authenticated user may make (the default policy refuses anonymous). */
const listNamespaces = (opts: CallOptions = {}): Promise<Reply> => call(AUTHENTICATED_PROBE, opts);

function expectUnauthorized(r: Reply): void {
  assert.equal(r.status, 401, JSON.stringify(r.body));
  assert.equal(r.body.kind, 'Status');
  assert.equal(r.body.reason, 'Unauthorized');
}

function expectAnonymous(r: Reply): void {
  assert.equal(r.status, 403, JSON.stringify(r.body));
  assert.equal(r.body.message, 'forbidden: User "system:anonymous" cannot get path "/api"');
}

/** The identity the server saw, through SelfSubjectReview. */
async function whoami(_t: TestContext, opts: CallOptions): Promise<{ username: string; groups?: string[]; extra?: Record<string, string[]>; uid?: string }> {
  const r = await call('/apis/authentication.k8s.io/v1/selfsubjectreviews', { ...opts, method: 'POST', body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' } });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  return r.body.status.userInfo;
}

describe('client certificates (--client-ca-file)', () => {
  it('a certificate of the client CA authenticates as its CN with its O values as groups', async (t) => {
    assert.equal((await listNamespaces({ cert: 'alice' })).status, 200);
    const user = await whoami(t, { cert: 'alice' });
    assert.deepEqual(user, { username: 'alice', groups: ['dev', 'ops', 'system:authenticated'] });
  });

  it('any CA of the bundle will do', async (t) => {
    assert.equal((await listNamespaces({ cert: 'carol' })).status, 200);
    const user = await whoami(t, { cert: 'carol' });
    assert.deepEqual(user.groups, ['second', 'system:authenticated']);
  });

  it('a chain through an intermediate the client sends verifies, on new and on resumed TLS sessions', async () => {
    // One agent without keep-alive: each request is a new connection, the later ones resuming
    // the first one's TLS session (where the server no longer has the chain the client sent).
    const agent = new Agent({ keepAlive: false, cert: pem('dave') + pem('inter'), key: keyPem('dave'), ca: readFileSync(env.plinth.server.caFile!, 'utf8') });
    try {
      for (let i = 0; i < 3; i++) assert.equal((await listNamespaces({ agent })).status, 200, `request ${i + 1}`);
    } finally {
      agent.destroy();
    }
    // Without the intermediate the leaf chains to nothing the server knows.
    expectUnauthorized(await listNamespaces({ cert: 'dave' }));
  });

  it('a certificate of an unknown CA, an expired one and a server-only one are 401, never anonymous', async () => {
    expectUnauthorized(await listNamespaces({ cert: 'mallory' }));
    expectUnauthorized(await listNamespaces({ cert: 'expired' }));
    expectUnauthorized(await listNamespaces({ cert: 'webserver' }));
  });

  it('a refused certificate does not stop another credential: a valid bearer token still authenticates', async () => {
    const r = await listNamespaces({ cert: 'mallory', headers: { authorization: `Bearer ${env.plinth.server.adminToken}` } });
    assert.equal(r.status, 200);
  });

  it('no certificate and no token is anonymous', async () => {
    expectAnonymous(await listNamespaces());
  });

  it('kubectl with client-certificate-data / client-key-data works', async () => {
    const kubeconfig = join(dir, 'cert.kubeconfig');
    const b64 = (s: string): string => Buffer.from(s).toString('base64');
    writeFileSync(
      kubeconfig,
      toYaml({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'plinth', cluster: { server: env.plinth.server.url, 'certificate-authority-data': b64(readFileSync(env.plinth.server.caFile!, 'utf8')) } }],
        users: [{ name: 'admin', user: { 'client-certificate-data': b64(pem('admin')), 'client-key-data': b64(keyPem('admin')) } }],
        contexts: [{ name: 'plinth', context: { cluster: 'plinth', user: 'admin' } }],
        'current-context': 'plinth',
      }),
    );
    const { stdout } = await execFileAsync(kubectlPath(), ['--kubeconfig', kubeconfig, 'get', 'ns', '-o', 'name']);
    assert.match(stdout, /^namespace\/default$/m);
  });
});

describe('authenticating proxy (--requestheader-*)', () => {
  const asserted = { 'X-Remote-User': 'bob', 'X-Remote-Group': ['g1', 'g2'], 'X-Remote-Extra-Acme.com%2Fscopes': ['read', 'write'] };

  it('the proxy certificate makes the headers count: user, every group header line, extra', async (t) => {
    assert.equal((await listNamespaces({ cert: 'front-proxy', headers: asserted })).status, 200);
    // Observable without SelfSubjectReview: the proxy asserting the anonymous user is refused as anonymous.
    expectAnonymous(await listNamespaces({ cert: 'front-proxy', headers: { 'X-Remote-User': 'system:anonymous' } }));
    const user = await whoami(t, { cert: 'front-proxy', headers: asserted });
    assert.deepEqual(user, { username: 'bob', groups: ['g1', 'g2', 'system:authenticated'], extra: { 'acme.com/scopes': ['read', 'write'] } });
  });

  it('the headers on a user certificate of the client CA are ignored: the user is the CN', async (t) => {
    // Were the header honoured, the user would be anonymous and refused.
    assert.equal((await listNamespaces({ cert: 'alice', headers: { 'X-Remote-User': 'system:anonymous', 'X-Remote-Group': 'system:unauthenticated' } })).status, 200);
    const user = await whoami(t, { cert: 'alice', headers: asserted });
    assert.deepEqual(user, { username: 'alice', groups: ['dev', 'ops', 'system:authenticated'] });
  });

  it('the headers without any certificate are ignored: the request is anonymous, never the asserted user', async () => {
    expectAnonymous(await listNamespaces({ headers: asserted }));
  });

  it('a proxy-CA certificate whose CN is not allowed cannot assert anything: 401', async () => {
    expectUnauthorized(await listNamespaces({ cert: 'other-proxy', headers: asserted }));
  });

  it('the proxy without a user name header is no one: its certificate is not a client certificate, 401', async () => {
    expectUnauthorized(await listNamespaces({ cert: 'front-proxy', headers: { 'X-Remote-Group': 'g1' } }));
  });
});

describe('start-up', () => {
  it('an unreadable --client-ca-file or a --requestheader-client-ca-file without certificates fails start-up naming the flag', async () => {
    const etcd = await startTestEtcd();
    const start = (args: string[]): Promise<unknown> =>
      startServer(parseFlags(['--secure-port=0', '--bind-address=127.0.0.1', `--data-dir=${join(dir, 'data')}`, `--etcd-servers=${etcd.endpoint}`, ...args]), createLogger(-1, { write: () => true } as unknown as NodeJS.WritableStream));
    try {
      await assert.rejects(start([`--client-ca-file=${join(dir, 'missing.crt')}`]), /--client-ca-file: cannot read .*missing\.crt/);
      await assert.rejects(
        start([`--requestheader-client-ca-file=${join(dir, 'alice.key')}`, '--requestheader-username-headers=X-Remote-User']),
        /--requestheader-client-ca-file: .*alice\.key: no PEM CERTIFICATE block/,
      );
    } finally {
      await etcd.stop();
    }
  });
});
