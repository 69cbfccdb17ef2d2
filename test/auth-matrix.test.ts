/**
 * The authentication matrix: every method of the spec, each with a valid, an invalid or expired,
 * and an absent credential, against the real plinth executable with all methods on at once —
 * the identity the server saw read with `kubectl auth whoami -o json`, failures read as kubectl
 * reports the 401 (or, for the anonymous user, the 403) Status. Then the server's whole log of the
 * run is searched for every token and private key used: none may appear.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, request as httpRequest, type Server as HttpServer } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { stringify as toYaml } from 'yaml';
import { createLocalJWKSet, jwtVerify } from 'jose';
import { eventually, kubectlPath, startInProcess, startProcess, tempDir, type InProcessPlinth, type PlinthProcess, type TestClient } from './harness.js';
import { expectCode } from './assertions.js';
import { Pki, TestIssuer, TokenReviewService } from './auth-fixtures.js';

const OIDC_CLIENT = 'plinth-matrix';
const dir = tempDir('plinth-matrix-');
const pki = new Pki(dir)
  .rootCA('client-ca')
  .rootCA('proxy-ca')
  .rootCA('svc-ca')
  .issue('alice', '/O=dev/O=ops/CN=alice', 'client-ca')
  .issue('expired', '/O=dev/CN=old-alice', 'client-ca', ['extendedKeyUsage=clientAuth'], { start: '20200101000000Z', end: '20200102000000Z' })
  .issue('front-proxy', '/CN=front-proxy', 'proxy-ca')
  .serving('idp', 'svc-ca')
  .serving('webhook', 'svc-ca')
  .issue('webhook-client', '/CN=plinth-webhook-client', 'svc-ca');

const secret = (): string => randomBytes(12).toString('hex');
const STATIC_TOKEN = `static-${secret()}`;
const WRONG_TOKEN = `wrong-${secret()}`;
const WEBHOOK_GOOD = `good-${secret()}`;
const WEBHOOK_BAD = `refused-${secret()}`;
const BOOTSTRAP_ID = randomBytes(3).toString('hex');
const BOOTSTRAP_SECRET = randomBytes(8).toString('hex');
const EXPIRED_ID = randomBytes(3).toString('hex');
const EXPIRED_SECRET = randomBytes(8).toString('hex');

/** Every credential used in the run: the log must contain none of them. */
const secrets: Array<[string, string]> = [];
const remember = <T extends string>(what: string, value: T): T => {
  secrets.push([what, value]);
  return value;
};

let issuer: TestIssuer;
const webhook = new TokenReviewService();
let plinth: PlinthProcess;
let admin: TestClient;
let caPem: string;
let proxy: HttpServer;
let proxyURL: string;

interface Credential {
  token?: string;
  cert?: string;
  /** Talk to the authenticating proxy instead of plinth. */
  viaProxy?: boolean;
}

/** A kubeconfig for one credential. */
function kubeconfig(name: string, cred: Credential): string {
  // No credential: kubectl would prompt for one, so the user has a user name and password — Basic
  // authentication, which kube (and plinth) ignore: the request is anonymous.
  const user: Record<string, string> = cred.token || cred.cert ? {} : { username: 'nobody', password: 'ignored' };
  if (cred.token) user['token'] = cred.token;
  if (cred.cert) {
    user['client-certificate-data'] = Buffer.from(pki.pem(cred.cert)).toString('base64');
    user['client-key-data'] = Buffer.from(pki.keyPem(cred.cert)).toString('base64');
  }
  const cluster: Record<string, string> = cred.viaProxy ? { server: proxyURL } : { server: `https://127.0.0.1:${new URL(admin.base).port}`, 'certificate-authority-data': Buffer.from(caPem).toString('base64') };
  const file = join(dir, `${name}.kubeconfig`);
  writeFileSync(
    file,
    toYaml({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'plinth', cluster }],
      users: [{ name, user }],
      contexts: [{ name: 'ctx', context: { cluster: 'plinth', user: name } }],
      'current-context': 'ctx',
    }),
    { mode: 0o600 },
  );
  return file;
}

interface WhoAmI {
  ok: boolean;
  user?: { username: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> };
  stderr: string;
}

/** `kubectl auth whoami -o json` with one credential. */
function whoami(name: string, cred: Credential): Promise<WhoAmI> {
  const file = kubeconfig(name, cred);
  return new Promise((resolve) => {
    const child = execFile(kubectlPath(), ['--kubeconfig', file, 'auth', 'whoami', '-o', 'json'], { timeout: 60_000 }, (err, stdout, stderr) => {
      if (err) return resolve({ ok: false, stderr });
      const review = JSON.parse(stdout) as { kind: string; status: { userInfo: WhoAmI['user'] } };
      assert.equal(review.kind, 'SelfSubjectReview');
      resolve({ ok: true, user: review.status.userInfo, stderr });
    });
    // Without credentials kubectl would prompt for a user name on a terminal; there is none.
    child.stdin?.end();
  });
}

function expectUser(r: WhoAmI, username: string, groups: string[], extra?: Record<string, string[]>): void {
  assert.ok(r.ok, `kubectl auth whoami failed: ${r.stderr}`);
  assert.equal(r.user!.username, username);
  assert.deepEqual([...(r.user!.groups ?? [])].sort(), [...groups, 'system:authenticated'].sort());
  if (extra) assert.deepEqual(r.user!.extra, extra);
}

/** kubectl's report of a 401 Status. */
function expectUnauthorized(r: WhoAmI): void {
  assert.equal(r.ok, false, `expected 401, kubectl saw ${JSON.stringify(r.user)}`);
  assert.match(r.stderr, /You must be logged in to the server \(Unauthorized\)/);
}

/**
 * The anonymous user is refused the review (403): kubectl then reports the API as unavailable to
 * it, so the Status is read from the same request made directly — it names the user the server saw.
 */
async function expectAnonymous(r: WhoAmI, cred: Credential): Promise<void> {
  assert.equal(r.ok, false, `expected 403, kubectl saw ${JSON.stringify(r.user)}`);
  assert.match(r.stderr, /the selfsubjectreviews API is not enabled in the cluster or you do not have permission to call it/);
  const direct = await postReview(cred);
  assert.equal(direct.status, 403, JSON.stringify(direct.body));
  assert.equal(direct.body.reason, 'Forbidden');
  assert.equal(direct.body.message, 'selfsubjectreviews.authentication.k8s.io is forbidden: User "system:anonymous" cannot create resource "selfsubjectreviews" in API group "authentication.k8s.io" at the cluster scope');
}

/** POST a SelfSubjectReview with one credential, straight (or through the proxy). */
function postReview(cred: Credential): Promise<{ status: number; body: any }> { // eslint-disable-line @typescript-eslint/no-explicit-any -- test convenience
  const payload = JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' });
  const headers: Record<string, string> = { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)) };
  if (cred.token) headers['authorization'] = `Bearer ${cred.token}`;
  const path = '/apis/authentication.k8s.io/v1/selfsubjectreviews';
  return new Promise((resolve, reject) => {
    const onResponse = (res: import('node:http').IncomingMessage): void => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString()) }));
    };
    const req = cred.viaProxy
      ? httpRequest(`${proxyURL}${path}`, { method: 'POST', headers }, onResponse)
      : httpsRequest(`${admin.base}${path}`, { method: 'POST', headers, ca: caPem, agent: false, ...(cred.cert ? { cert: pki.pem(cred.cert), key: pki.keyPem(cred.cert) } : {}) }, onResponse);
    req.on('error', reject);
    req.end(payload);
  });
}

/**
 * The authenticating proxy: plain HTTP in, HTTPS to plinth out with the proxy's client certificate
 * (when `withCert`) and the identity headers — as a real front proxy that authenticated the user.
 */
function startProxy(target: string, opts: { withCert: () => boolean; user: () => string | undefined }): Promise<string> {
  proxy = createHttpServer((req, res) => {
    const u = new URL(target);
    const headers = { ...req.headers, host: u.host } as Record<string, string | string[]>;
    delete headers['authorization'];
    const user = opts.user();
    if (user) {
      headers['x-remote-user'] = user;
      headers['x-remote-group'] = ['proxied', 'readers'];
      headers['x-remote-extra-acme.com%2fscopes'] = 'read';
    }
    const out = httpsRequest(
      { hostname: u.hostname, port: u.port, path: req.url, method: req.method, headers, ca: caPem, agent: false, ...(opts.withCert() ? { cert: pki.pem('front-proxy'), key: pki.keyPem('front-proxy') } : {}) },
      (upstream) => {
        res.writeHead(upstream.statusCode ?? 502, upstream.headers);
        upstream.pipe(res);
      },
    );
    out.on('error', () => res.destroy());
    req.pipe(out);
  });
  return new Promise((resolve) => proxy.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(proxy.address() as AddressInfo).port}`)));
}

let proxyWithCert = true;
let proxyUser: string | undefined = 'bob';

before(async () => {
  issuer = await TestIssuer.start({ cert: pki.pem('idp'), key: pki.keyPem('idp') }, { clientID: OIDC_CLIENT });
  await webhook.start({ cert: pki.pem('webhook'), key: pki.keyPem('webhook'), ca: pki.pem('svc-ca') });
  writeFileSync(join(dir, 'tokens.csv'), `${remember('static token', STATIC_TOKEN)},tina,tina-uid,"ops,dev"\n`);
  writeFileSync(
    join(dir, 'webhook.kubeconfig'),
    toYaml({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'authn', cluster: { server: `https://127.0.0.1:${webhook.port}/authenticate`, 'certificate-authority': pki.certFile('svc-ca') } }],
      users: [{ name: 'apiserver', user: { 'client-certificate': pki.certFile('webhook-client'), 'client-key': pki.keyFile('webhook-client') } }],
      contexts: [{ name: 'webhook', context: { cluster: 'authn', user: 'apiserver' } }],
      'current-context': 'webhook',
    }),
  );
  plinth = await startProcess(join(dir, 'data'), [
    '-v=10',
    '--feature-gates=APISelfSubjectReview=true',
    `--client-ca-file=${pki.certFile('client-ca')}`,
    `--requestheader-client-ca-file=${pki.certFile('proxy-ca')}`,
    '--requestheader-allowed-names=front-proxy',
    '--requestheader-username-headers=X-Remote-User',
    '--requestheader-group-headers=X-Remote-Group',
    '--requestheader-extra-headers-prefix=X-Remote-Extra-',
    `--token-auth-file=${join(dir, 'tokens.csv')}`,
    '--enable-bootstrap-token-auth',
    `--oidc-issuer-url=${issuer.url}`,
    `--oidc-client-id=${OIDC_CLIENT}`,
    `--oidc-ca-file=${pki.certFile('svc-ca')}`,
    '--oidc-groups-claim=groups',
    '--oidc-groups-prefix=oidc:',
    `--authentication-token-webhook-config-file=${join(dir, 'webhook.kubeconfig')}`,
  ]);
  admin = plinth.client;
  remember('admin token', admin.token);
  caPem = Buffer.from(readFileSync(plinth.kubeconfig, 'utf8').match(/certificate-authority-data: (\S+)/)![1]!, 'base64').toString();
  proxyURL = await startProxy(admin.base, { withCert: () => proxyWithCert, user: () => proxyUser });
  for (const name of ['alice', 'expired', 'front-proxy', 'webhook-client']) remember(`${name} client key`, pki.keyPem(name));
});

after(async () => {
  await plinth?.stop();
  await issuer?.close();
  await webhook.stop();
  proxy?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A bootstrap token Secret in kube-system. */
async function bootstrapSecret(id: string, tokenSecret: string, expiration: Date): Promise<void> {
  const r = await admin.post('/api/v1/namespaces/kube-system/secrets', {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: `bootstrap-token-${id}`, namespace: 'kube-system' },
    type: 'bootstrap.kubernetes.io/token',
    stringData: { 'token-id': id, 'token-secret': tokenSecret, expiration: expiration.toISOString().replace(/\.\d+Z$/, 'Z'), 'usage-bootstrap-authentication': 'true', 'auth-extra-groups': 'system:bootstrappers:matrix' },
  });
  expectCode(r, 201, 'create bootstrap token secret');
}

describe('authentication matrix (kubectl auth whoami against the plinth executable)', () => {
  it('no credential at all: the anonymous user, whom authorization refuses (403)', async () => {
    await expectAnonymous(await whoami('nobody', {}), {});
  });

  it('x509 client certificates: CN and O; expired → 401; no certificate → anonymous', async () => {
    expectUser(await whoami('x509', { cert: 'alice' }), 'alice', ['dev', 'ops']);
    expectUnauthorized(await whoami('x509-expired', { cert: 'expired' }));
    await expectAnonymous(await whoami('x509-absent', {}), {});
  });

  it('static token file: the user and groups of its line; a wrong token → 401', async () => {
    expectUser(await whoami('static', { token: STATIC_TOKEN }), 'tina', ['ops', 'dev']);
    expectUnauthorized(await whoami('static-wrong', { token: remember('wrong token', WRONG_TOKEN) }));
  });

  it('bootstrap tokens: system:bootstrap:<id>; expired → 401; deleted → 401', async () => {
    const token = remember('bootstrap token', `${BOOTSTRAP_ID}.${BOOTSTRAP_SECRET}`);
    remember('bootstrap token secret', BOOTSTRAP_SECRET);
    await bootstrapSecret(BOOTSTRAP_ID, BOOTSTRAP_SECRET, new Date(Date.now() + 3600_000));
    // The authenticator reads the watch cache, which sees the Secret a moment after the write.
    await eventually(async () => (await whoami('bootstrap', { token })).ok, 10_000, 'the bootstrap token to authenticate');
    expectUser(await whoami('bootstrap', { token }), `system:bootstrap:${BOOTSTRAP_ID}`, ['system:bootstrappers', 'system:bootstrappers:matrix']);
    const expired = remember('expired bootstrap token', `${EXPIRED_ID}.${EXPIRED_SECRET}`);
    await bootstrapSecret(EXPIRED_ID, EXPIRED_SECRET, new Date(Date.now() - 60_000));
    expectUnauthorized(await whoami('bootstrap-expired', { token: expired }));
    expectCode(await admin.delete(`/api/v1/namespaces/kube-system/secrets/bootstrap-token-${BOOTSTRAP_ID}`), 200);
    await eventually(async () => !(await whoami('bootstrap-deleted', { token })).ok, 10_000, 'the deleted bootstrap token to be refused');
    expectUnauthorized(await whoami('bootstrap-deleted', { token }));
  });

  it('service accounts: `kubectl create token` works, verifies with the JWKS, and dies with its account', async () => {
    expectCode(await admin.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'matrix' } }), 201);
    const adminConfig = plinth.kubeconfig;
    // The namespace controller gives every namespace its `default` account.
    await eventually(async () => (await admin.get('/api/v1/namespaces/matrix/serviceaccounts/default')).status === 200, 10_000, 'the default service account');
    const token = remember(
      'service account token',
      await new Promise<string>((resolve, reject) =>
        // No --duration: kubectl sends a Protobuf TokenRequest without expirationSeconds (nil),
        // which kube defaults to an hour.
        execFile(kubectlPath(), ['--kubeconfig', adminConfig, 'create', 'token', 'default', '-n', 'matrix'], (err, stdout, stderr) => (err ? reject(new Error(stderr)) : resolve(stdout.trim()))),
      ),
    );
    const account = (await admin.get('/api/v1/namespaces/matrix/serviceaccounts/default')).body;
    const who = await whoami('sa', { token });
    expectUser(who, 'system:serviceaccount:matrix:default', ['system:serviceaccounts', 'system:serviceaccounts:matrix']);
    assert.equal(who.user!.uid, account.metadata.uid);

    // The JWKS the server publishes verifies the token (what a relying party does).
    const jwks = await admin.get('/openid/v1/jwks');
    expectCode(jwks, 200, 'JWKS');
    assert.equal(jwks.headers['content-type'], 'application/jwk-set+json');
    const { payload, protectedHeader } = await jwtVerify(token, createLocalJWKSet(jwks.body), { issuer: 'https://kubernetes.default.svc.cluster.local', audience: 'https://kubernetes.default.svc.cluster.local' });
    assert.equal(payload.sub, 'system:serviceaccount:matrix:default');
    assert.equal(payload.exp! - payload.iat!, 3600, 'the defaulted expiration');
    assert.ok(protectedHeader.kid, 'the token names its key');
    assert.equal((payload['kubernetes.io'] as { serviceaccount: { uid: string } }).serviceaccount.uid, account.metadata.uid);

    // `--audience=x`: a token for another service is refused by the API, and a TokenReview for
    // that audience vouches for it (what the other service asks plinth).
    const forVault = remember(
      'audience-bound service account token',
      await new Promise<string>((resolve, reject) =>
        execFile(kubectlPath(), ['--kubeconfig', adminConfig, 'create', 'token', 'default', '-n', 'matrix', '--duration=10m', '--audience=vault'], (err, stdout, stderr) => (err ? reject(new Error(stderr)) : resolve(stdout.trim()))),
      ),
    );
    expectUnauthorized(await whoami('sa-vault', { token: forVault }));
    const reviewed = await admin.post('/apis/authentication.k8s.io/v1/tokenreviews', { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token: forVault, audiences: ['vault', 'other'] } });
    expectCode(reviewed, 201, 'TokenReview');
    assert.equal(reviewed.body.status.authenticated, true);
    assert.equal(reviewed.body.status.user.username, 'system:serviceaccount:matrix:default');
    assert.deepEqual(reviewed.body.status.audiences, ['vault']);

    // A tampered token is refused; so is the token of a deleted account.
    const [h, p, sig] = token.split('.');
    const forged = Buffer.from(p!, 'base64url').toString().replace('"default"', '"admin"');
    expectUnauthorized(await whoami('sa-tampered', { token: `${h}.${Buffer.from(forged).toString('base64url')}.${sig}` }));
    expectCode(await admin.delete('/api/v1/namespaces/matrix/serviceaccounts/default'), 200);
    await eventually(async () => !(await whoami('sa-deleted', { token })).ok, 10_000, 'the deleted account\'s token to be refused');
    expectUnauthorized(await whoami('sa-deleted', { token }));
  });

  it('OIDC: <issuer>#sub with prefixed groups; expired → 401', async () => {
    const token = remember('oidc token', await issuer.sign({ sub: 'olivia', groups: ['eng'] }));
    await eventually(async () => (await whoami('oidc', { token })).ok, 15_000, 'the OIDC keys to be fetched');
    expectUser(await whoami('oidc', { token }), `${issuer.url}#olivia`, ['oidc:eng']);
    const expired = remember('expired oidc token', await issuer.sign({ sub: 'olivia', iat: Math.floor(Date.now() / 1000) - 7200, exp: Math.floor(Date.now() / 1000) - 3600 }));
    expectUnauthorized(await whoami('oidc-expired', { token: expired }));
  });

  it('webhook: the user the TokenReview service returned; a refused token → 401', async () => {
    expectUser(await whoami('webhook', { token: remember('webhook token', WEBHOOK_GOOD) }), 'alice@example.com', ['developers', 'webhook-users'], { 'example.com/team': ['payments', 'ops'] });
    assert.equal(webhook.reviews.at(-1)?.clientCN, 'plinth-webhook-client');
    expectUnauthorized(await whoami('webhook-refused', { token: remember('refused webhook token', WEBHOOK_BAD) }));
  });

  it('authenticating proxy: headers honoured with the proxy certificate, ignored without', async () => {
    proxyWithCert = true;
    proxyUser = 'bob';
    expectUser(await whoami('proxy', { viaProxy: true }), 'bob', ['proxied', 'readers'], { 'acme.com/scopes': ['read'] });
    // The same headers from a connection without the proxy's certificate: ignored → anonymous.
    proxyWithCert = false;
    await expectAnonymous(await whoami('proxy-nocert', { viaProxy: true }), { viaProxy: true });
    // The proxy asserting no user: its certificate is then a client certificate of a CA that
    // --client-ca-file does not name — a failed credential, 401 (as in kube).
    proxyWithCert = true;
    proxyUser = undefined;
    expectUnauthorized(await whoami('proxy-nouser', { viaProxy: true }));
  });

  it('with --anonymous-auth=false a request without credentials is a 401', async () => {
    let strict: InProcessPlinth | undefined;
    try {
      strict = await startInProcess({ args: ['--anonymous-auth=false'] });
      const r = await strict.client.get('/api/v1/namespaces', { token: null });
      assert.equal(r.status, 401);
      assert.equal(r.body.reason, 'Unauthorized');
      // Even the public paths need a credential then, as in kube.
      assert.equal((await strict.client.get('/healthz', { token: null })).status, 401);
    } finally {
      await strict?.stop();
    }
  });

  it('the server log of the whole run holds none of the tokens and keys used', async () => {
    // Private keys plinth itself holds (the serving key, the service-account signing key).
    const dataDir = join(dir, 'data');
    for (const file of listFiles(dataDir)) {
      if (/\.key$/.test(file)) remember(`data-dir key ${file}`, readFileSync(file, 'utf8'));
    }
    const log = plinth.output();
    assert.ok(log.length > 0, 'the server logged something');
    for (const [what, value] of secrets) {
      // A PEM's base64 body, line by line: no line of it may appear.
      const pieces = value.includes('-----BEGIN') ? value.split('\n').filter((l) => l.length >= 40 && !l.startsWith('-----')) : [value];
      for (const piece of pieces) assert.ok(!log.includes(piece), `the log contains the ${what}`);
      // A JWT's signature alone would be as bad as the token.
      if (/^[\w-]+\.[\w-]+\.[\w-]+$/.test(value)) assert.ok(!log.includes(value.split('.')[2]!), `the log contains the signature of the ${what}`);
    }
    assert.ok(secrets.length >= 15, `every credential was checked (${secrets.length})`);
  });
});

function listFiles(root: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(root)) {
    const full = join(root, name);
    if (name === 'etcd') continue;
    if (statSync(full).isDirectory()) out.push(...listFiles(full));
    else out.push(full);
  }
  return out;
}
