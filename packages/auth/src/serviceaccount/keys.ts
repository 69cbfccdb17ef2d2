/**
 * Service-account keys: the private key that signs tokens (`--service-account-signing-key-file`, or
 * a key plinth generates in its data dir) and the public keys that verify them
 * (`--service-account-key-file`, plus the signing key's own). Files are read and keys imported
 * once, at start-up; requests only ever see ready CryptoKeys.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createHash, createPrivateKey, createPublicKey, generateKeyPair, X509Certificate, type KeyObject } from 'node:crypto';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { exportJWK, importPKCS8, importSPKI, type CryptoKey, type JWK } from 'jose';
import type { ServiceAccountOptions } from '../options.js';

/** The JWS algorithms kube signs service-account tokens with (jwt.go: RS256 for RSA, ES* by curve). */
export type ServiceAccountAlg = 'RS256' | 'ES256' | 'ES384' | 'ES512';

/** A public key that verifies tokens. */
export interface VerifyingKey {
  /** kube's key id: unpadded base64url of the SHA-256 of the key's DER (PKIX) encoding. */
  kid: string;
  alg: ServiceAccountAlg;
  /** Imported once; what jose verifies with. */
  key: CryptoKey;
  /** The public JWK as `/openid/v1/jwks` publishes it (`use`, `kty`, `kid`, `alg`, key params). */
  jwk: JWK;
}

export interface SigningKey {
  kid: string;
  alg: ServiceAccountAlg;
  key: CryptoKey;
}

export interface ServiceAccountKeys {
  signing: SigningKey;
  /** Every verifying key, in flag order, the signing key's public key last (unless listed already). */
  verifying: readonly VerifyingKey[];
  /** Verifying keys by kid (a token's `kid` header picks its key without trying the others). */
  byKid: ReadonlyMap<string, VerifyingKey>;
}

/** The signing key plinth generates when no key flag is given (kept across restarts). */
export const GENERATED_SIGNING_KEY_FILE = 'sa-signing.key';

const CURVE_ALGS: Record<string, ServiceAccountAlg> = { prime256v1: 'ES256', secp384r1: 'ES384', secp521r1: 'ES512' };

/** kube's keyIDFromPublicKey: base64url (no padding) of SHA-256 over the PKIX DER public key. */
export function keyIdOf(publicKey: KeyObject): string {
  const der = publicKey.export({ type: 'spki', format: 'der' });
  return createHash('sha256').update(der).digest('base64url');
}

/** The algorithm kube uses with a key, or undefined for key types it does not support. */
export function algorithmOf(key: KeyObject): ServiceAccountAlg | undefined {
  if (key.asymmetricKeyType === 'rsa') return 'RS256';
  if (key.asymmetricKeyType === 'ec') return CURVE_ALGS[key.asymmetricKeyDetails?.namedCurve ?? ''];
  return undefined;
}

interface PemBlock {
  label: string;
  text: string;
}

function pemBlocks(data: string): PemBlock[] {
  const out: PemBlock[] = [];
  for (const m of data.matchAll(/-----BEGIN ([A-Z0-9 ]+)-----[\s\S]*?-----END \1-----/g)) out.push({ label: m[1]!, text: m[0] });
  return out;
}

/**
 * kube's keyutil.ParsePublicKeysPEM: every RSA or ECDSA key in the PEM data — public keys,
 * certificates, and the public halves of private keys (PKCS#1, PKCS#8, SEC1). Other blocks (EC
 * PARAMETERS, unsupported key types) are skipped; no key at all is an error.
 */
export function parsePublicKeysPEM(data: string, source: string): KeyObject[] {
  const keys: KeyObject[] = [];
  for (const block of pemBlocks(data)) {
    let key: KeyObject;
    try {
      key = block.label === 'CERTIFICATE' ? new X509Certificate(block.text).publicKey : createPublicKey(block.text);
    } catch {
      continue;
    }
    if (algorithmOf(key)) keys.push(key);
  }
  if (keys.length === 0) throw new Error(`${source}: data does not contain any valid RSA or ECDSA public keys`);
  return keys;
}

/** kube's keyutil.ParsePrivateKeyPEM: the first RSA or ECDSA private key (PKCS#1, PKCS#8 or SEC1). */
export function parsePrivateKeyPEM(data: string, source: string): KeyObject {
  for (const block of pemBlocks(data)) {
    if (!/(^| )PRIVATE KEY$/.test(block.label) || block.label.startsWith('ENCRYPTED')) continue;
    let key: KeyObject;
    try {
      key = createPrivateKey(block.text);
    } catch {
      continue;
    }
    if (!algorithmOf(key)) {
      throw new Error(
        key.asymmetricKeyType === 'ec'
          ? `${source}: unknown private key curve, must be 256, 384, or 521`
          : `${source}: unknown private key type ${key.asymmetricKeyType}, must be RSA or ECDSA`,
      );
    }
    return key;
  }
  throw new Error(`${source}: data does not contain a valid RSA or ECDSA private key`);
}

function readFile(file: string, flag: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (e) {
    throw new Error(`--${flag}: cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
}

/**
 * The generated signing key in `dataDir`: read when present (so tokens outlive restarts), else a
 * new RSA 2048 key written aside with mode 0600 and renamed into place.
 */
export async function loadOrGenerateSigningKey(dataDir: string, onGenerated?: (file: string) => void): Promise<KeyObject> {
  const file = join(dataDir, GENERATED_SIGNING_KEY_FILE);
  if (existsSync(file)) return parsePrivateKeyPEM(readFileSync(file, 'utf8'), file);
  const { privateKey } = await promisify(generateKeyPair)('rsa', { modulusLength: 2048 });
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
  // writeFileSync's mode is subject to the umask; the key is its owner's alone whatever the umask.
  chmodSync(tmp, 0o600);
  renameSync(tmp, file);
  onGenerated?.(file);
  return privateKey;
}

async function verifyingKey(publicKey: KeyObject): Promise<VerifyingKey> {
  const alg = algorithmOf(publicKey)!;
  const kid = keyIdOf(publicKey);
  const key = await importSPKI(publicKey.export({ type: 'spki', format: 'pem' }) as string, alg, { extractable: true });
  const params = await exportJWK(key);
  // go-jose's field order: use, kty, kid, alg, then the key's own parameters.
  const jwk: JWK = { use: 'sig', kty: params.kty!, kid, alg };
  for (const p of ['crv', 'x', 'y', 'n', 'e'] as const) if (params[p] !== undefined) jwk[p] = params[p];
  return { kid, alg, key, jwk };
}

/** Reads, parses and imports every key the options name (generating the default signing key). */
export async function buildServiceAccountKeys(opts: Pick<ServiceAccountOptions, 'signingKeyFile' | 'keyFiles'>, dataDir: string, onGenerated?: (file: string) => void): Promise<ServiceAccountKeys> {
  const signingPrivate = opts.signingKeyFile
    ? parsePrivateKeyPEM(readFile(opts.signingKeyFile, 'service-account-signing-key-file'), opts.signingKeyFile)
    : await loadOrGenerateSigningKey(dataDir, onGenerated);
  const signingPublic = createPublicKey(signingPrivate);
  const alg = algorithmOf(signingPrivate)!;
  const signing: SigningKey = {
    kid: keyIdOf(signingPublic),
    alg,
    key: await importPKCS8(signingPrivate.export({ type: 'pkcs8', format: 'pem' }) as string, alg),
  };

  const publicKeys: KeyObject[] = [];
  for (const file of opts.keyFiles) publicKeys.push(...parsePublicKeysPEM(readFile(file, 'service-account-key-file'), file));
  const verifying: VerifyingKey[] = [];
  const seen = new Set<string>();
  for (const pk of [...publicKeys, signingPublic]) {
    const kid = keyIdOf(pk);
    if (seen.has(kid)) continue; // the same key listed twice (often the signing key's own file)
    seen.add(kid);
    verifying.push(await verifyingKey(pk));
  }
  return { signing, verifying, byKid: new Map(verifying.map((k) => [k.kid, k])) };
}

const loaded = new WeakMap<ServiceAccountOptions, Map<string, Promise<ServiceAccountKeys>>>();

/**
 * The keys of one options object, built once: the authenticator (METHODS) and the token issuer
 * (config) both ask, and share one set — one file read, one generated key.
 */
export function loadServiceAccountKeys(opts: ServiceAccountOptions, dataDir: string, onGenerated?: (file: string) => void): Promise<ServiceAccountKeys> {
  let byDir = loaded.get(opts);
  if (!byDir) loaded.set(opts, (byDir = new Map()));
  let keys = byDir.get(dataDir);
  if (!keys) byDir.set(dataDir, (keys = buildServiceAccountKeys(opts, dataDir, onGenerated)));
  return keys;
}
