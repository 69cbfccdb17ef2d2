/**
 * Fixtures the authentication tests share: a throw-away PKI made with openssl, an OpenID provider
 * and a TokenReview webhook service, each a real HTTPS server on 127.0.0.1.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { SignJWT, exportJWK, generateKeyPair, type CryptoKey, type JWK, type JWTPayload } from 'jose';

/**
 * A request every authenticated user may make under kube's default policy (system:discovery is
 * bound to system:authenticated) and the anonymous user may not: 200 means "authenticated", 401 a
 * refused credential, 403 anonymous — whichever authorizer the server runs.
 */
export const AUTHENTICATED_PROBE = '/api';

/** Certificates and keys in `dir`, by name: `<name>.crt`, `<name>.key`. */
export class Pki {
  readonly dir: string;
  #serial = 100;

  constructor(dir: string) {
    this.dir = dir;
  }

  #openssl(args: string[]): void {
    execFileSync('openssl', args, { cwd: this.dir, stdio: ['ignore', 'ignore', 'pipe'] });
  }

  #key(name: string): void {
    this.#openssl(['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', `${name}.key`]);
  }

  /** A self-signed root CA. */
  rootCA(name: string): this {
    this.#key(name);
    this.#openssl(['req', '-x509', '-new', '-key', `${name}.key`, '-sha256', '-days', '30', '-subj', `/CN=${name}`, '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign', '-out', `${name}.crt`]);
    return this;
  }

  /**
   * A certificate for `subject` (`/O=g/CN=u`) signed by `issuer`, with the given extensions
   * (default: a client certificate). `dates` (YYYYMMDDHHMMSSZ) go through `openssl ca`, which can
   * issue certificates valid in the past.
   */
  issue(name: string, subject: string, issuer: string, ext: string[] = ['extendedKeyUsage=clientAuth'], dates?: { start: string; end: string }): this {
    this.#key(name);
    this.#openssl(['req', '-new', '-key', `${name}.key`, '-subj', subject, '-out', `${name}.csr`]);
    writeFileSync(join(this.dir, `${name}.ext`), `${ext.join('\n')}\n`);
    if (!dates) {
      this.#openssl(['x509', '-req', '-in', `${name}.csr`, '-CA', `${issuer}.crt`, '-CAkey', `${issuer}.key`, '-set_serial', String(++this.#serial), '-days', '10', '-sha256', '-extfile', `${name}.ext`, '-out', `${name}.crt`]);
      return this;
    }
    writeFileSync(join(this.dir, 'index.txt'), '');
    writeFileSync(join(this.dir, 'serial.txt'), `${(++this.#serial).toString(16).padStart(4, '0')}\n`);
    writeFileSync(join(this.dir, 'ca.cnf'), ['[ca]', 'default_ca = d', '[d]', 'database = index.txt', 'new_certs_dir = .', 'serial = serial.txt', 'default_md = sha256', 'policy = p', 'unique_subject = no', '[p]', 'commonName = optional', ''].join('\n'));
    this.#openssl(['ca', '-batch', '-config', 'ca.cnf', '-preserveDN', '-notext', '-cert', `${issuer}.crt`, '-keyfile', `${issuer}.key`, '-in', `${name}.csr`, '-startdate', dates.start, '-enddate', dates.end, '-extfile', `${name}.ext`, '-out', `${name}.crt`]);
    return this;
  }

  /** A serving certificate for 127.0.0.1 signed by `issuer`. */
  serving(name: string, issuer: string): this {
    return this.issue(name, `/CN=${name}`, issuer, ['basicConstraints=critical,CA:FALSE', 'keyUsage=critical,digitalSignature', 'extendedKeyUsage=serverAuth', 'subjectAltName=IP:127.0.0.1']);
  }

  certFile(name: string): string {
    return join(this.dir, `${name}.crt`);
  }

  keyFile(name: string): string {
    return join(this.dir, `${name}.key`);
  }

  pem(name: string): string {
    return readFileSync(this.certFile(name), 'utf8');
  }

  keyPem(name: string): string {
    return readFileSync(this.keyFile(name), 'utf8');
  }
}

async function listen(server: Server): Promise<number> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return (server.address() as AddressInfo).port;
}

async function closeServer(server: Server): Promise<void> {
  if (!server.listening) return;
  const closed = new Promise<void>((r) => server.close(() => r()));
  server.closeAllConnections();
  await closed;
}

export interface SigningKey {
  kid: string;
  privateKey: CryptoKey;
  jwk: JWK;
}

export async function newSigningKey(kid: string): Promise<SigningKey> {
  const { publicKey, privateKey } = await generateKeyPair('RS256');
  return { kid, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' } };
}

const now = (): number => Math.floor(Date.now() / 1000);

/** An OpenID provider under `<origin>/idp`: discovery, JWKS and a distributed-claims endpoint. */
export class TestIssuer {
  readonly url: string;
  readonly clientID: string;
  /** The keys the JWKS publishes; the first signs. */
  keys: SigningKey[];
  /** When set, every connection is dropped (the issuer is down). */
  down = false;
  jwksFetches = 0;
  /** The bearer token the claims endpoint wants, and the groups it answers with. */
  readonly claimsAccessToken = 'claims-access-token';
  claimsGroups = ['from-endpoint'];
  readonly #server: Server;

  private constructor(server: Server, url: string, clientID: string, key: SigningKey) {
    this.#server = server;
    this.url = url;
    this.clientID = clientID;
    this.keys = [key];
  }

  /** Serves with `tls` (a certificate for 127.0.0.1); tokens are for `clientID`. */
  static async start(tls: { cert: string; key: string }, opts: { clientID: string; down?: boolean }): Promise<TestIssuer> {
    const server = createServer({ cert: tls.cert, key: tls.key });
    const port = await listen(server);
    const issuer = new TestIssuer(server, `https://127.0.0.1:${port}/idp`, opts.clientID, await newSigningKey('key-1'));
    issuer.down = opts.down ?? false;
    server.on('request', (req, res) => void issuer.#serve(req, res));
    return issuer;
  }

  async #serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (this.down) return void req.socket.destroy();
    const json = (code: number, body: unknown): void => {
      res.writeHead(code, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    };
    switch (req.url) {
      case '/idp/.well-known/openid-configuration':
        return json(200, { issuer: this.url, jwks_uri: `${this.url}/keys`, id_token_signing_alg_values_supported: ['RS256'], response_types_supported: ['id_token'], subject_types_supported: ['public'] });
      case '/idp/keys':
        this.jwksFetches++;
        return json(200, { keys: this.keys.map((k) => k.jwk) });
      case '/idp/claims':
        if (req.headers.authorization !== `Bearer ${this.claimsAccessToken}`) return json(401, { error: 'invalid_token' });
        res.writeHead(200, { 'content-type': 'application/jwt' }).end(await this.sign({ sub: 'alice', groups: this.claimsGroups }));
        return;
      default:
        return json(404, {});
    }
  }

  /** The standard claims of a token for plinth, valid for ten minutes. */
  claims(extra: JWTPayload = {}): JWTPayload {
    return { iss: this.url, aud: this.clientID, iat: now(), exp: now() + 600, ...extra };
  }

  /** Signs `extra` over the standard claims with the current key (or `key`, under `kid`). */
  sign(extra: JWTPayload = {}, opts: { key?: SigningKey; kid?: string } = {}): Promise<string> {
    const key = opts.key ?? this.keys[0]!;
    return new SignJWT(this.claims(extra)).setProtectedHeader({ alg: 'RS256', kid: opts.kid ?? key.kid }).sign(key.privateKey);
  }

  close(): Promise<void> {
    return closeServer(this.#server);
  }
}

export interface Review {
  path: string;
  clientCN: string;
  apiVersion: string;
  kind: string;
  spec: { token: string; audiences?: string[] };
}

/**
 * A TokenReview webhook service that requires a client certificate of its CA. It answers by token
 * prefix — `good-` authenticated, `aud-` authenticated for another audience, `error-` an error,
 * anything else refused — and records every review it was sent.
 */
export class TokenReviewService {
  readonly reviews: Review[] = [];
  #server: Server | undefined;
  port = 0;

  /** `tls`: the service's serving certificate and key, and the CA its clients' certificates chain to. */
  async start(tls: { cert: string | Buffer; key: string | Buffer; ca: string | Buffer }): Promise<void> {
    this.#server = createServer({ ...tls, requestCert: true, rejectUnauthorized: true }, (req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        const review = JSON.parse(body) as Review;
        const cert = (req.socket as TLSSocket).getPeerCertificate();
        this.reviews.push({ ...review, path: req.url ?? '', clientCN: String(cert.subject?.CN ?? '') });
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ apiVersion: review.apiVersion, kind: 'TokenReview', status: this.#answer(review.spec.token) }));
      });
    });
    this.port = await listen(this.#server);
  }

  #answer(token: string): Record<string, unknown> {
    const user = { username: 'alice@example.com', uid: 'alice-uid', groups: ['developers', 'webhook-users'], extra: { 'example.com/team': ['payments', 'ops'] } };
    if (token.startsWith('good-')) return { authenticated: true, user };
    if (token.startsWith('aud-')) return { authenticated: true, user, audiences: ['https://elsewhere.test'] };
    if (token.startsWith('error-')) return { authenticated: false, error: 'the token store is unavailable' };
    return { authenticated: false };
  }

  /** How many reviews carried this token. */
  seen(token: string): number {
    return this.reviews.filter((r) => r.spec.token === token).length;
  }

  async stop(): Promise<void> {
    if (this.#server) await closeServer(this.#server);
  }
}
