import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildServiceAccountKeys, keyIdOf, loadServiceAccountKeys, parsePrivateKeyPEM, parsePublicKeysPEM, GENERATED_SIGNING_KEY_FILE } from './keys.js';
import type { ServiceAccountOptions } from '../options.js';

const dir = mkdtempSync(join(tmpdir(), 'plinth-sa-keys-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function write(name: string, text: string): string {
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
}

/** The kid as kube computes it, done here with openssl: SHA-256 of the DER public key, base64url. */
function opensslKid(pemFile: string): string {
  const der = execFileSync('openssl', ['pkey', '-in', pemFile, '-pubout', '-outform', 'DER']);
  return createHash('sha256').update(der).digest('base64url');
}

function saOptions(o: Partial<ServiceAccountOptions> = {}): ServiceAccountOptions {
  return { issuers: ['https://issuer.test'], signingKeyFile: '', keyFiles: [], lookup: true, maxExpirationSeconds: 0, extendExpiration: true, jwksURI: '', ...o };
}

test('kid: unpadded base64url SHA-256 of the PKIX DER public key', () => {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const file = write('kid.pem', privateKey.export({ type: 'pkcs1', format: 'pem' }) as string);
  const kid = keyIdOf(createPublicKey(privateKey));
  assert.equal(kid, opensslKid(file));
  assert.match(kid, /^[A-Za-z0-9_-]{43}$/); // 32 bytes, no padding
});

test('signing keys in PKCS#1, PKCS#8 and SEC1, with kube algorithms by key type and curve', async () => {
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
  const cases: Array<[string, KeyObject, string, string]> = [
    ['rsa-pkcs1.pem', rsa, 'pkcs1', 'RS256'],
    ['rsa-pkcs8.pem', rsa, 'pkcs8', 'RS256'],
    ['p256-sec1.pem', generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey, 'sec1', 'ES256'],
    ['p384-pkcs8.pem', generateKeyPairSync('ec', { namedCurve: 'P-384' }).privateKey, 'pkcs8', 'ES384'],
    ['p521-sec1.pem', generateKeyPairSync('ec', { namedCurve: 'P-521' }).privateKey, 'sec1', 'ES512'],
  ];
  for (const [name, key, type, alg] of cases) {
    const file = write(name, key.export({ type: type as 'pkcs1', format: 'pem' }) as string);
    const keys = await buildServiceAccountKeys({ signingKeyFile: file, keyFiles: [] }, join(dir, 'unused'));
    assert.equal(keys.signing.alg, alg, name);
    assert.equal(keys.signing.kid, opensslKid(file), name);
    // The signing key's public key verifies too, and is published.
    assert.deepEqual(keys.verifying.map((k) => k.kid), [keys.signing.kid], name);
    assert.equal(keys.verifying[0]!.jwk.alg, alg);
    assert.equal(keys.verifying[0]!.jwk.use, 'sig');
    assert.equal(keys.verifying[0]!.jwk.kid, keys.signing.kid);
    assert.equal(keys.verifying[0]!.jwk['d'], undefined, 'no private parameters in the JWK');
  }
  // A signing key flag never leads to a generated key.
  assert.equal(existsSync(join(dir, 'unused')), false);
});

test('verifying key files: public keys, certificates, private keys, several per file', async () => {
  const a = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const b = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const keyFile = write('cert.key', a.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string);
  const certFile = join(dir, 'cert.crt');
  execFileSync('openssl', ['req', '-x509', '-new', '-key', keyFile, '-subj', '/CN=sa', '-days', '1', '-out', certFile]);
  const ecParams = execFileSync('openssl', ['ecparam', '-name', 'prime256v1']).toString();
  const bundle = write('bundle.pem', ecParams + (b.publicKey.export({ type: 'spki', format: 'pem' }) as string) + readFileSync(certFile, 'utf8'));
  const parsed = parsePublicKeysPEM(readFileSync(bundle, 'utf8'), bundle);
  assert.deepEqual(parsed.map(keyIdOf), [keyIdOf(b.publicKey), keyIdOf(a.publicKey)]);

  const signer = write('signer.pem', generateKeyPairSync('ec', { namedCurve: 'P-384' }).privateKey.export({ type: 'sec1', format: 'pem' }) as string);
  // The signing key listed among the verifying ones too appears once.
  const keys = await buildServiceAccountKeys({ signingKeyFile: signer, keyFiles: [bundle, signer, keyFile] }, dir);
  assert.deepEqual(keys.verifying.map((k) => k.kid), [keyIdOf(b.publicKey), keyIdOf(a.publicKey), keys.signing.kid]);
  assert.equal(keys.byKid.get(keyIdOf(b.publicKey))!.alg, 'ES256');
});

test('key files without a usable key fail start-up with the file named', async () => {
  const empty = write('empty.pem', 'not a key\n');
  assert.throws(() => parsePublicKeysPEM(readFileSync(empty, 'utf8'), empty), /empty\.pem: data does not contain any valid RSA or ECDSA public keys/);
  assert.throws(() => parsePrivateKeyPEM('', 'x.pem'), /x\.pem: data does not contain a valid RSA or ECDSA private key/);
  const ed = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
  assert.throws(() => parsePrivateKeyPEM(ed, 'ed.pem'), /ed\.pem: unknown private key type ed25519/);
  await assert.rejects(buildServiceAccountKeys({ signingKeyFile: join(dir, 'missing.pem'), keyFiles: [] }, dir), /--service-account-signing-key-file: cannot read .*missing\.pem: ENOENT/);
});

test('the default signing key is generated once in the data dir (0600) and reused', async () => {
  const dataDir = join(dir, 'data');
  const first = await buildServiceAccountKeys({ signingKeyFile: '', keyFiles: [] }, dataDir);
  const file = join(dataDir, GENERATED_SIGNING_KEY_FILE);
  assert.equal(statSync(file).mode & 0o777, 0o600);
  assert.equal(first.signing.alg, 'RS256');
  assert.equal(first.signing.kid, opensslKid(file));
  const second = await buildServiceAccountKeys({ signingKeyFile: '', keyFiles: [] }, dataDir);
  assert.equal(second.signing.kid, first.signing.kid);
});

test('keys are built once per options object', async () => {
  const dataDir = join(dir, 'memo');
  const opts = saOptions();
  const a = loadServiceAccountKeys(opts, dataDir);
  assert.equal(loadServiceAccountKeys(opts, dataDir), a);
  await a;
  const other = loadServiceAccountKeys(saOptions(), dataDir);
  assert.notEqual(other, a);
  // Another options object reads the same generated key.
  assert.equal((await other).signing.kid, (await a).signing.kid);
});
