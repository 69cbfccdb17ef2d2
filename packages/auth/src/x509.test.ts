import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { X509Certificate } from 'node:crypto';
import { createChainVerifier, createX509Authenticator, parseCertificatesPEM, readCABundle, subjectNames, x509Method } from './x509.js';
import { createRequestHeaderAuthenticator, identityFromHeaders, unescapeExtraKey } from './request-header.js';
import { createUnionAuthenticator, type AuthRequest } from './authenticator.js';
import type { AuthenticationOptions } from './options.js';
import type { AuthenticatorDeps } from './config.js';

/** A throw-away PKI made with openssl: CAs, intermediates and leaves with chosen extensions and dates. */
class Pki {
  readonly dir = mkdtempSync(join(tmpdir(), 'plinth-x509-unit-'));
  #n = 0;

  #openssl(args: string[]): void {
    execFileSync('openssl', args, { cwd: this.dir, stdio: ['ignore', 'ignore', 'pipe'] });
  }

  #ext(lines: string[]): string {
    const f = `ext${++this.#n}.cnf`;
    writeFileSync(join(this.dir, f), `${lines.join('\n')}\n`);
    return f;
  }

  /** A self-signed root CA. */
  root(name: string, days = 30): X509Certificate {
    this.#openssl(['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', `${name}.key`]);
    const args = ['req', '-x509', '-new', '-key', `${name}.key`, '-sha256', '-days', String(days), '-subj', `/CN=${name}`, '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign'];
    this.#openssl([...args, '-out', `${name}.crt`]);
    return this.cert(name);
  }

  /**
   * A certificate `name` with `subject`, signed by `issuer`, with extension lines `ext`; `dates`
   * sets notBefore/notAfter (YYYYMMDDHHMMSSZ) through `openssl ca`.
   */
  issue(name: string, subject: string, issuer: string, ext: string[] = ['extendedKeyUsage=clientAuth'], dates?: { start: string; end: string }): X509Certificate {
    this.#openssl(['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', `${name}.key`]);
    this.#openssl(['req', '-new', '-key', `${name}.key`, '-subj', subject, '-multivalue-rdn', '-out', `${name}.csr`]);
    const extFile = this.#ext(ext.length > 0 ? ext : ['subjectKeyIdentifier=hash']);
    if (!dates) {
      this.#openssl(['x509', '-req', '-in', `${name}.csr`, '-CA', `${issuer}.crt`, '-CAkey', `${issuer}.key`, '-set_serial', String(1000 + ++this.#n), '-days', '10', '-sha256', '-extfile', extFile, '-out', `${name}.crt`]);
    } else {
      writeFileSync(join(this.dir, 'index.txt'), '');
      writeFileSync(join(this.dir, 'serial.txt'), `${(4096 + ++this.#n).toString(16)}\n`);
      const cnf = this.#ext(['[ca]', 'default_ca = d', '[d]', 'database = index.txt', 'new_certs_dir = .', 'serial = serial.txt', 'default_md = sha256', 'policy = p', 'unique_subject = no', '[p]', 'commonName = optional']);
      this.#openssl(['ca', '-batch', '-config', cnf, '-preserveDN', '-notext', '-cert', `${issuer}.crt`, '-keyfile', `${issuer}.key`, '-in', `${name}.csr`, '-startdate', dates.start, '-enddate', dates.end, '-extfile', extFile, '-out', `${name}.crt`]);
    }
    return this.cert(name);
  }

  cert(name: string): X509Certificate {
    return new X509Certificate(readFileSync(join(this.dir, `${name}.crt`)));
  }

  pem(name: string): string {
    return readFileSync(join(this.dir, `${name}.crt`), 'utf8');
  }

  cleanup(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

const pki = new Pki();
const c = {} as Record<string, X509Certificate>;

before(() => {
  c.root = pki.root('root');
  c.other = pki.root('other');
  c.shortRoot = pki.root('shortRoot', 1);
  c.outlivesRoot = pki.issue('outlivesRoot', '/CN=grace', 'shortRoot');
  c.alice = pki.issue('alice', '/O=dev/O=ops/CN=alice', 'root');
  c.stranger = pki.issue('stranger', '/CN=alice', 'other');
  c.expired = pki.issue('expired', '/CN=old', 'root', ['extendedKeyUsage=clientAuth'], { start: '20200101000000Z', end: '20200102000000Z' });
  c.future = pki.issue('future', '/CN=later', 'root', ['extendedKeyUsage=clientAuth'], { start: '20990101000000Z', end: '20990102000000Z' });
  c.longLived = pki.issue('longLived', '/CN=patient', 'root', ['extendedKeyUsage=clientAuth'], { start: '20200105000000Z', end: '20990105000000Z' });
  c.serverOnly = pki.issue('serverOnly', '/CN=web', 'root', ['extendedKeyUsage=serverAuth']);
  c.anyEku = pki.issue('anyEku', '/CN=any', 'root', ['extendedKeyUsage=anyExtendedKeyUsage']);
  c.noEku = pki.issue('noEku', '/CN=plain', 'root', []);
  c.noCN = pki.issue('noCN', '/O=only-org', 'root');
  c.multi = pki.issue('multi', '/O=beta+O=alpha/O=sys\\, tem/O=a\\+b/CN=first/CN=carol', 'root');
  c.inter = pki.issue('inter', '/CN=intermediate', 'root', ['basicConstraints=critical,CA:TRUE', 'keyUsage=critical,keyCertSign']);
  c.viaInter = pki.issue('viaInter', '/O=team/CN=dave', 'inter');
  c.notCA = pki.issue('notCA', '/CN=not-a-ca', 'root', ['basicConstraints=critical,CA:FALSE', 'keyUsage=critical,digitalSignature,keyCertSign']);
  c.viaNotCA = pki.issue('viaNotCA', '/CN=eve', 'notCA');
  c.serverInter = pki.issue('serverInter', '/CN=server-intermediate', 'root', ['basicConstraints=critical,CA:TRUE', 'keyUsage=critical,keyCertSign', 'extendedKeyUsage=serverAuth']);
  c.viaServerInter = pki.issue('viaServerInter', '/CN=frank', 'serverInter');
  c.proxy = pki.issue('proxy', '/CN=front-proxy', 'other');
  c.rogueProxy = pki.issue('rogueProxy', '/CN=someone-else', 'other');
});
after(() => pki.cleanup());

const req = (chain: X509Certificate[], headers: AuthRequest['headers'] = {}, rawHeaders?: string[]): AuthRequest => ({ headers, peerCertificates: chain, ...(rawHeaders ? { rawHeaders } : {}) });

describe('chain verification', () => {
  test('a leaf signed by a CA of the bundle verifies; one from another CA does not', () => {
    const v = createChainVerifier([c.root!]);
    assert.equal(v.verify([c.alice!]).ok, true);
    const r = v.verify([c.stranger!]);
    assert.deepEqual(r, { ok: false, reason: 'x509: certificate signed by unknown authority' });
    // A bundle of several CAs: either one.
    assert.equal(createChainVerifier([c.root!, c.other!]).verify([c.stranger!]).ok, true);
  });

  test('expired and not-yet-valid certificates are refused', () => {
    const v = createChainVerifier([c.root!]);
    for (const leaf of [c.expired!, c.future!]) {
      const r = v.verify([leaf]);
      assert.equal(r.ok, false);
      assert.match((r as { reason: string }).reason, /expired or is not yet valid/);
    }
  });

  test('validity periods are read exactly (single-digit days included)', () => {
    const v = createChainVerifier([c.root!]);
    assert.equal(v.verify([c.longLived!]).ok, true);
    // Trusted as itself, so that only its own period counts (the root is younger than 2020).
    const self = createChainVerifier([c.longLived!]);
    assert.equal(self.verify([c.longLived!], Date.UTC(2020, 0, 5, 0, 0, 0)).ok, true);
    assert.equal(self.verify([c.longLived!], Date.UTC(2020, 0, 4, 23, 59, 59)).ok, false);
    assert.equal(self.verify([c.longLived!], Date.UTC(2099, 0, 5, 0, 0, 0)).ok, true);
    assert.equal(self.verify([c.longLived!], Date.UTC(2099, 0, 5, 0, 0, 1)).ok, false);
  });

  test('validity is re-checked on every call, although the chain is built once per leaf', () => {
    const v = createChainVerifier([c.root!]);
    assert.equal(v.verify([c.alice!]).ok, true);
    const afterExpiry = Date.parse(c.alice!.validTo) + 1000;
    const r = v.verify([c.alice!], afterExpiry);
    assert.equal(r.ok, false);
    assert.match((r as { reason: string }).reason, /expired/);
    assert.equal(v.verify([c.alice!], Date.parse(c.alice!.validFrom)).ok, true);
    // The CA's own validity counts too: two days on, the leaf is still valid, its root no longer.
    const short = createChainVerifier([c.shortRoot!]);
    assert.equal(short.verify([c.outlivesRoot!]).ok, true);
    const r2 = short.verify([c.outlivesRoot!], Date.now() + 2 * 86_400_000);
    assert.deepEqual(r2, { ok: false, reason: 'x509: certificate has expired or is not yet valid: a certificate of its chain is outside its validity period' });
  });

  test('extended key usage: serverAuth only is refused; clientAuth, anyExtendedKeyUsage or none pass', () => {
    const v = createChainVerifier([c.root!]);
    assert.deepEqual(v.verify([c.serverOnly!]), { ok: false, reason: 'x509: certificate specifies an incompatible key usage' });
    assert.equal(v.verify([c.anyEku!]).ok, true);
    assert.equal(v.verify([c.noEku!]).ok, true);
  });

  test('an intermediate the client sends completes the chain; without it the leaf is unknown', () => {
    const v = createChainVerifier([c.root!]);
    const ok = v.verify([c.viaInter!, c.inter!]);
    assert.equal(ok.ok, true);
    assert.deepEqual((ok as { chain: readonly X509Certificate[] }).chain.map((x) => x.subject), ['O=team\nCN=dave', 'CN=intermediate', 'CN=root']);
    assert.equal(v.verify([c.viaInter!]).ok, false);
    // The intermediate's CA is not a root: trusting it requires it in the bundle.
    assert.equal(createChainVerifier([c.inter!]).verify([c.viaInter!]).ok, true);
  });

  test('an issuer that is not a CA cannot sign, and the EKU rule covers the whole chain', () => {
    const v = createChainVerifier([c.root!]);
    assert.equal(v.verify([c.viaNotCA!, c.notCA!]).ok, false);
    assert.equal(v.verify([c.viaServerInter!, c.serverInter!]).ok, false);
    assert.match((v.verify([c.viaServerInter!, c.serverInter!]) as { reason: string }).reason, /incompatible key usage/);
  });

  test('a certificate that is itself in the bundle verifies (as Go: Roots.contains)', () => {
    assert.equal(createChainVerifier([c.alice!]).verify([c.alice!]).ok, true);
  });
});

describe('x509 authenticator', () => {
  test('CN is the user, each O a group, no uid', async () => {
    const a = createX509Authenticator({ roots: [c.root!] });
    assert.deepEqual(await a.authenticate(req([c.alice!])), { kind: 'authenticated', user: { name: 'alice', groups: ['dev', 'ops'] } });
  });

  test('several O values, multi-valued RDNs and escaped characters become groups verbatim; the last CN wins', async () => {
    // In DER order, as Go reads them: the multi-valued RDN is a SET, sorted by encoding (shorter first).
    assert.deepEqual(subjectNames(c.multi!), { commonName: 'carol', organizations: ['beta', 'alpha', 'sys, tem', 'a+b'] });
    const a = createX509Authenticator({ roots: [c.root!] });
    const r = await a.authenticate(req([c.multi!]));
    assert.ok(r.kind === 'authenticated');
    assert.equal(r.user.name, 'carol');
    assert.deepEqual(r.user.groups, ['beta', 'alpha', 'sys, tem', 'a+b']);
  });

  test('no certificate: no opinion; an unverified one: rejected; an empty CN: no opinion', async () => {
    const a = createX509Authenticator({ roots: [c.root!] });
    assert.deepEqual(await a.authenticate(req([])), { kind: 'no-opinion' });
    const bad = await a.authenticate(req([c.stranger!]));
    assert.equal(bad.kind, 'rejected');
    assert.match((bad as { reason: string }).reason, /^verifying certificate SN=\d+, .* failed: x509: certificate signed by unknown authority$/);
    assert.equal((await a.authenticate(req([c.expired!]))).kind, 'rejected');
    assert.deepEqual(await a.authenticate(req([c.noCN!])), { kind: 'no-opinion' });
  });

  test('the CA PEMs are the client CAs the TLS server asks for', () => {
    const a = createX509Authenticator({ roots: [c.root!, c.other!] });
    assert.deepEqual(a.clientCAs!.map((p) => new X509Certificate(p).fingerprint256), [c.root!.fingerprint256, c.other!.fingerprint256]);
  });

  test('the CA bundle is read at build time: several certificates, other blocks skipped; bad files name the flag', () => {
    const bundle = join(pki.dir, 'bundle.pem');
    writeFileSync(bundle, `junk before\n${pki.pem('root')}-----BEGIN EC PRIVATE KEY-----\nAAAA\n-----END EC PRIVATE KEY-----\n${pki.pem('other')}`);
    assert.deepEqual(readCABundle(bundle, 'client-ca-file').map((x) => x.subject), ['CN=root', 'CN=other']);
    const deps = {} as AuthenticatorDeps;
    const opts = (caFile: string): AuthenticationOptions => ({ clientCert: { caFile } }) as AuthenticationOptions;
    assert.ok(x509Method.build(opts(bundle), deps));
    assert.throws(() => x509Method.build(opts(join(pki.dir, 'missing.pem')), deps), /^Error: --client-ca-file: cannot read .*missing\.pem/);
    const empty = join(pki.dir, 'empty.pem');
    writeFileSync(empty, 'not a certificate\n');
    assert.throws(() => x509Method.build(opts(empty), deps), /--client-ca-file: .*empty\.pem: no PEM CERTIFICATE block/);
    assert.throws(() => parseCertificatesPEM('-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n', 'f'), /f: certificate 1 does not parse/);
  });
});

describe('request header authenticator', () => {
  const opts = {
    allowedNames: ['front-proxy'],
    usernameHeaders: ['X-Remote-User', 'X-Other-User'],
    groupHeaders: ['X-Remote-Group'],
    extraHeaderPrefixes: ['X-Remote-Extra-'],
  };
  const proxyHeaders = (): Record<string, string> => ({
    'x-remote-user': 'mallory',
    'x-remote-group': 'system:masters',
    'x-remote-extra-scopes': 'all',
    'x-other-user': 'x',
    accept: 'application/json',
  });

  test('a verified proxy with an allowed CN asserts user, groups and extra; the headers are gone afterwards', async () => {
    const a = createRequestHeaderAuthenticator({ roots: [c.other!], ...opts });
    const raw = ['X-Remote-User', '', 'X-Remote-User', 'second', 'X-Other-User', 'bob', 'X-Remote-Group', 'g1', 'x-remote-group', 'g2', 'X-Remote-Group', '', 'X-Remote-Extra-Acme.com%2FProject', 'p1', 'X-REMOTE-EXTRA-acme.com%2fproject', 'p2', 'X-Remote-Extra-Bad%zz', 'v', 'Accept', '*/*'];
    const headers: AuthRequest['headers'] = { 'x-remote-user': ', second', 'x-other-user': 'bob', 'x-remote-group': 'g1, g2, ', 'x-remote-extra-acme.com%2fproject': 'p1, p2', 'x-remote-extra-bad%zz': 'v', accept: '*/*' };
    const r = await a.authenticate(req([c.proxy!], headers, raw));
    // The first username header's first value is empty, so the next header names the user.
    assert.deepEqual(r, { kind: 'authenticated', user: { name: 'bob', groups: ['g1', 'g2'], extra: { 'acme.com/project': ['p1', 'p2'], 'bad%zz': ['v'] } } });
    assert.deepEqual(headers, { accept: '*/*' });
    assert.deepEqual(raw, ['Accept', '*/*']);
  });

  test('headers without a proxy certificate, or with a certificate of another CA, are ignored and removed', async () => {
    const a = createRequestHeaderAuthenticator({ roots: [c.other!], ...opts });
    let headers: AuthRequest['headers'] = proxyHeaders();
    assert.deepEqual(await a.authenticate(req([], headers)), { kind: 'no-opinion' });
    assert.deepEqual(headers, { accept: 'application/json' });
    headers = proxyHeaders();
    // A user certificate of the client CA: kube's Verifier errors, the union goes on to x509.
    const r = await a.authenticate(req([c.alice!], headers));
    assert.equal(r.kind, 'rejected');
    assert.deepEqual(headers, { accept: 'application/json' });
  });

  test('a proxy certificate whose CN is not allowed is refused and its headers removed', async () => {
    const a = createRequestHeaderAuthenticator({ roots: [c.other!], ...opts });
    const headers = proxyHeaders();
    assert.deepEqual(await a.authenticate(req([c.rogueProxy!], headers)), { kind: 'rejected', reason: 'x509: subject with cn=someone-else is not in the allowed list' });
    assert.deepEqual(headers, { accept: 'application/json' });
    // With no allowed names, any certificate of the CA may act as the proxy.
    const any = createRequestHeaderAuthenticator({ roots: [c.other!], ...opts, allowedNames: [] });
    assert.equal((await any.authenticate(req([c.rogueProxy!], proxyHeaders()))).kind, 'authenticated');
  });

  test('a verified proxy without a user name header has no opinion', async () => {
    const a = createRequestHeaderAuthenticator({ roots: [c.other!], ...opts });
    assert.deepEqual(await a.authenticate(req([c.proxy!], { 'x-remote-group': 'g' })), { kind: 'no-opinion' });
  });

  test('in the union: the proxy first, then the user certificate; spoofed headers never reach the user', async () => {
    const union = createUnionAuthenticator([createRequestHeaderAuthenticator({ roots: [c.other!], ...opts }), createX509Authenticator({ roots: [c.root!] })]);
    const viaProxy = await union.authenticate(req([c.proxy!], proxyHeaders()));
    assert.ok(viaProxy.kind === 'authenticated');
    assert.deepEqual(viaProxy.user, { name: 'mallory', groups: ['system:masters', 'system:authenticated'], extra: { scopes: ['all'] } });
    const headers = proxyHeaders();
    const user = await union.authenticate(req([c.alice!], headers));
    assert.ok(user.kind === 'authenticated');
    assert.deepEqual(user.user, { name: 'alice', groups: ['dev', 'ops', 'system:authenticated'] });
    assert.deepEqual(headers, { accept: 'application/json' });
    // A certificate neither trusts: 401.
    assert.equal((await union.authenticate(req([c.future!], proxyHeaders()))).kind, 'rejected');
  });

  test('identity headers as kube reads them', () => {
    const o = { usernameHeaders: ['X-Remote-User'], groupHeaders: ['X-Remote-Group'], extraHeaderPrefixes: ['X-Remote-Extra-'] };
    assert.equal(identityFromHeaders([['x-remote-group', 'g']], o), undefined);
    assert.deepEqual(identityFromHeaders([['x-remote-user', 'u']], o), { name: 'u', groups: [] });
    assert.equal(unescapeExtraKey('a%2fb%20c'), 'a/b c');
    assert.equal(unescapeExtraKey('100%'), '100%');
    assert.equal(unescapeExtraKey('%e2%9c%93'), '✓');
  });
});
