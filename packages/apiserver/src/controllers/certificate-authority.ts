/**
 * A certificate authority from PEM files, signing certificate requests as kube-controller-manager's
 * local signer does (pkg/controller/certificates/authority, 1.24's PermissiveSigningPolicy): the
 * request's subject, public key and subjectAltNames; the usages asked for as keyUsage and
 * extKeyUsage; basicConstraints CA:FALSE; no other extension of the request; a random 128-bit
 * serial; valid from 5 minutes ago (the backdate) for the TTL, never past the CA's own expiry.
 *
 * node:crypto signs but cannot build certificates, and `openssl x509 -req` (OpenSSL 3.0, what
 * Debian ships) cannot backdate notBefore: the TBSCertificate is DER-encoded here (a handful of
 * fixed structures) and signed with node:crypto.
 */
import { X509Certificate, createPrivateKey, randomBytes, sign, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { ParsedCSR } from '@plinth/api';

/** kube's backdate of notBefore, and the TTL under which notAfter is not backdated too. */
const BACKDATE_MS = 5 * 60_000;
const SHORT_MS = 8 * 3_600_000;

// ---- DER encoding (only what a certificate needs) ----

function tlv(tag: number, content: Buffer): Buffer {
  const n = content.length;
  let head: number[];
  if (n < 0x80) head = [tag, n];
  else {
    const bytes: number[] = [];
    for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
    head = [tag, 0x80 | bytes.length, ...bytes];
  }
  return Buffer.concat([Buffer.from(head), content]);
}

const seq = (...items: Buffer[]): Buffer => tlv(0x30, Buffer.concat(items));
const octets = (b: Buffer): Buffer => tlv(0x04, b);
const bool = (v: boolean): Buffer => tlv(0x01, Buffer.from([v ? 0xff : 0]));

function oid(text: string): Buffer {
  const parts = text.split('.').map(Number);
  const out: number[] = [40 * parts[0]! + parts[1]!];
  for (const p of parts.slice(2)) {
    const chunk: number[] = [p & 0x7f];
    for (let v = Math.floor(p / 128); v > 0; v = Math.floor(v / 128)) chunk.unshift((v & 0x7f) | 0x80);
    out.push(...chunk);
  }
  return tlv(0x06, Buffer.from(out));
}

/** A non-negative INTEGER from big-endian bytes (minimal, with a 0 byte when the top bit is set). */
function unsignedInteger(bytes: Buffer): Buffer {
  let i = 0;
  while (i < bytes.length - 1 && bytes[i] === 0) i++;
  const b = bytes.subarray(i);
  return tlv(0x02, b[0]! & 0x80 ? Buffer.concat([Buffer.from([0]), b]) : b);
}

/** Go's encoding of a time in a certificate: UTCTime for 1950–2049, GeneralizedTime after. */
function time(ms: number): Buffer {
  const iso = new Date(Math.floor(ms / 1000) * 1000).toISOString(); // YYYY-MM-DDTHH:MM:SS.000Z
  const digits = iso.slice(0, 19).replace(/[-T:]/g, '');
  const year = Number(iso.slice(0, 4));
  return year >= 1950 && year < 2050 ? tlv(0x17, Buffer.from(`${digits.slice(2)}Z`)) : tlv(0x18, Buffer.from(`${digits}Z`));
}

/** A BIT STRING of the given bit numbers (bit 0 the first), trailing zero bits dropped as Go does. */
function bitString(bits: number[]): Buffer {
  if (bits.length === 0) return tlv(0x03, Buffer.from([0]));
  const top = Math.max(...bits);
  const bytes = Buffer.alloc(Math.floor(top / 8) + 1);
  for (const b of bits) bytes[Math.floor(b / 8)]! |= 0x80 >> (b % 8);
  const unused = 7 - (top % 8);
  return tlv(0x03, Buffer.concat([Buffer.from([unused]), bytes]));
}

// ---- DER reading (the CA certificate's subject and subjectKeyIdentifier) ----

interface Element {
  tag: number;
  full: Buffer;
  content: Buffer;
}

function read(buf: Buffer, pos: number): { el: Element; next: number } {
  const tag = buf[pos]!;
  let len = buf[pos + 1]!;
  let off = pos + 2;
  if (len & 0x80) {
    const n = len & 0x7f;
    len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + buf[off + i]!;
    off += n;
  }
  return { el: { tag, full: buf.subarray(pos, off + len), content: buf.subarray(off, off + len) }, next: off + len };
}

function childrenOf(el: Element): Element[] {
  const out: Element[] = [];
  for (let pos = 0; pos < el.content.length; ) {
    const { el: child, next } = read(el.content, pos);
    out.push(child);
    pos = next;
  }
  return out;
}

/** The subject Name (DER) and the subjectKeyIdentifier (if any) of a certificate. */
function subjectAndKeyId(der: Buffer): { subject: Buffer; keyId?: Buffer } {
  const tbs = childrenOf(childrenOf(read(der, 0).el)[0]!);
  const fields = tbs[0]!.tag === 0xa0 ? tbs.slice(1) : tbs; // [0] version
  // serialNumber, signature, issuer, validity, subject, subjectPublicKeyInfo, then [1], [2], [3] extensions.
  const subject = Buffer.from(fields[4]!.full);
  const extensions = fields.find((f) => f.tag === 0xa3);
  if (!extensions) return { subject };
  const skiOid = oid('2.5.29.14');
  for (const ext of childrenOf(childrenOf(extensions)[0]!)) {
    const parts = childrenOf(ext);
    if (!parts[0]!.full.equals(skiOid)) continue;
    const inner = read(parts[parts.length - 1]!.content, 0).el;
    return { subject, keyId: Buffer.from(inner.content) };
  }
  return { subject };
}

// ---- usages (kube's keyUsageDict / extKeyUsageDict) ----

/** certificates.k8s.io usages that are keyUsage bits (Go's x509.KeyUsage bit numbers). */
const KEY_USAGE_BITS: Readonly<Record<string, number>> = {
  signing: 0,
  'digital signature': 0,
  'content commitment': 1,
  'key encipherment': 2,
  'data encipherment': 3,
  'key agreement': 4,
  'cert sign': 5,
  'crl sign': 6,
  'encipher only': 7,
  'decipher only': 8,
};

/** Usages that are extKeyUsage OIDs, in Go's ExtKeyUsage order (kube sorts by it). */
const EXT_KEY_USAGES: ReadonlyArray<[string[], string]> = [
  [['any'], '2.5.29.37.0'],
  [['server auth'], '1.3.6.1.5.5.7.3.1'],
  [['client auth'], '1.3.6.1.5.5.7.3.2'],
  [['code signing'], '1.3.6.1.5.5.7.3.3'],
  [['email protection', 's/mime'], '1.3.6.1.5.5.7.3.4'],
  [['ipsec end system'], '1.3.6.1.5.5.7.3.5'],
  [['ipsec tunnel'], '1.3.6.1.5.5.7.3.6'],
  [['ipsec user'], '1.3.6.1.5.5.7.3.7'],
  [['timestamping'], '1.3.6.1.5.5.7.3.8'],
  [['ocsp signing'], '1.3.6.1.5.5.7.3.9'],
  [['microsoft sgc'], '1.3.6.1.4.1.311.10.3.3'],
  [['netscape sgc'], '2.16.840.1.113730.4.1'],
];

function extension(id: string, critical: boolean, value: Buffer): Buffer {
  return critical ? seq(oid(id), bool(true), octets(value)) : seq(oid(id), octets(value));
}

/** The extensions kube's policy leaves on a certificate, in the order Go writes them. */
function extensionsFor(csr: ParsedCSR, usages: readonly string[], caKeyId: Buffer | undefined): Buffer[] {
  const unrecognized = usages.filter((u) => !(u in KEY_USAGE_BITS) && !EXT_KEY_USAGES.some(([names]) => names.includes(u)));
  if (unrecognized.length > 0) throw new Error(`unrecognized usage values: [${unrecognized.map((u) => JSON.stringify(u)).join(' ')}]`);
  const out: Buffer[] = [];
  const bits = [...new Set(usages.flatMap((u) => (u in KEY_USAGE_BITS ? [KEY_USAGE_BITS[u]!] : [])))];
  if (bits.length > 0) out.push(extension('2.5.29.15', true, bitString(bits)));
  const ekus = EXT_KEY_USAGES.filter(([names]) => names.some((n) => usages.includes(n))).map(([, id]) => oid(id));
  if (ekus.length > 0) out.push(extension('2.5.29.37', false, seq(...ekus)));
  out.push(extension('2.5.29.19', true, seq()));
  if (caKeyId) out.push(extension('2.5.29.35', false, seq(tlv(0x80, caKeyId))));
  const names = [
    ...csr.dnsNames.map((n) => tlv(0x82, Buffer.from(n, 'latin1'))),
    ...csr.emailAddresses.map((n) => tlv(0x81, Buffer.from(n, 'latin1'))),
    ...csr.ipAddresses.map((ip) => tlv(0x87, ip)),
    ...csr.uris.map((n) => tlv(0x86, Buffer.from(n, 'latin1'))),
  ];
  // Go marks subjectAltName critical when the subject is empty (RFC 5280 4.2.1.6).
  const emptySubject = csr.rawSubject.length <= 2;
  if (names.length > 0) out.push(extension('2.5.29.17', emptySubject, seq(...names)));
  return out;
}

// ---- the authority ----

/** The signature algorithm Go picks for a CA key: its AlgorithmIdentifier and node's digest. */
function signatureAlgorithm(key: KeyObject): { id: Buffer; digest: string | null } {
  const type = key.asymmetricKeyType;
  if (type === 'rsa') return { id: seq(oid('1.2.840.113549.1.1.11'), tlv(0x05, Buffer.alloc(0))), digest: 'sha256' };
  if (type === 'ed25519') return { id: seq(oid('1.3.101.112')), digest: null };
  if (type === 'ec') {
    const curve = key.asymmetricKeyDetails?.namedCurve;
    if (curve === 'secp384r1') return { id: seq(oid('1.2.840.10045.4.3.3')), digest: 'sha384' };
    if (curve === 'secp521r1') return { id: seq(oid('1.2.840.10045.4.3.4')), digest: 'sha512' };
    return { id: seq(oid('1.2.840.10045.4.3.2')), digest: 'sha256' };
  }
  throw new Error(`unsupported CA key type ${String(type)}`);
}

export interface SignOptions {
  /** What the certificate is for (certificates.k8s.io usages). */
  usages: readonly string[];
  /** How long it is valid (ms). */
  ttlMs: number;
  /** The clock (ms since the epoch). */
  now?: number;
}

export interface CertificateAuthority {
  /** The CA certificate's expiry (ms since the epoch). */
  readonly notAfter: number;
  /** A PEM certificate for the request. Throws kube's errors (unknown usage, expired signer). */
  sign(csr: ParsedCSR, opts: SignOptions): string;
}

/**
 * Loads a CA from its certificate and key files (kube's newCAProvider): the first certificate of
 * the file, a key that matches it. Throws naming the file that is wrong.
 */
export function loadCertificateAuthority(certFile: string, keyFile: string): CertificateAuthority {
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(readFileSync(certFile));
  } catch (e) {
    throw new Error(`error reading CA cert file "${certFile}": ${(e as Error).message}`);
  }
  let key: KeyObject;
  try {
    key = createPrivateKey(readFileSync(keyFile));
  } catch (e) {
    throw new Error(`error reading CA key file "${keyFile}": ${(e as Error).message}`);
  }
  if (!cert.checkPrivateKey(key)) throw new Error(`error reading CA key file "${keyFile}": the key does not match the certificate in "${certFile}"`);
  const { subject: issuer, keyId } = subjectAndKeyId(cert.raw);
  const algorithm = signatureAlgorithm(key);
  const notAfter = Date.parse(cert.validTo);
  // Go's time.Time %v of the CA's NotAfter (UTC, whole seconds).
  const notAfterText = `${new Date(notAfter).toISOString().slice(0, 19).replace('T', ' ')} +0000 UTC`;

  return {
    notAfter,
    sign(csr, opts) {
      const now = opts.now ?? Date.now();
      const extensions = extensionsFor(csr, opts.usages, keyId);
      const notBefore = now - BACKDATE_MS;
      // A short-lived certificate's end is not backdated with its start.
      let end = opts.ttlMs < SHORT_MS ? now + opts.ttlMs : notBefore + opts.ttlMs;
      if (end >= notAfter) end = notAfter;
      if (notBefore >= notAfter) throw new Error(`the signer has expired: NotAfter=${notAfterText}`);
      if (now >= notAfter) throw new Error(`refusing to sign a certificate that expired in the past: NotAfter=${notAfterText}`);
      const serial = randomBytes(16);
      const tbs = seq(
        tlv(0xa0, tlv(0x02, Buffer.from([2]))), // v3
        unsignedInteger(serial),
        algorithm.id,
        issuer,
        seq(time(notBefore), time(end)),
        csr.rawSubject,
        csr.rawPublicKey,
        tlv(0xa3, seq(...extensions)),
      );
      const signature = sign(algorithm.digest, tbs, key);
      const der = seq(tbs, algorithm.id, tlv(0x03, Buffer.concat([Buffer.from([0]), signature])));
      const b64 = der.toString('base64').replace(/.{64}/g, '$&\n').replace(/\n$/, '');
      return `-----BEGIN CERTIFICATE-----\n${b64}\n-----END CERTIFICATE-----\n`;
    },
  };
}
