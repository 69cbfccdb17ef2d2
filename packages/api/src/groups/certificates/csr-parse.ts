/**
 * PKCS#10 certificate requests as kube reads them (pkg/apis/certificates ParseCSR, then
 * CheckSignature): one PEM block of type CERTIFICATE REQUEST, DER-parsed, its signature checked
 * with the request's own public key. node:crypto verifies signatures and reads SubjectPublicKeyInfo
 * but has no CSR parser, so the few DER structures a CSR is made of are walked here (no library:
 * a CSR is three nested SEQUENCEs). Also the PEM checks of `status.certificate`.
 */
import { X509Certificate, createPublicKey, verify } from 'node:crypto';

interface Tlv {
  tag: number;
  /** The whole element (header and content). */
  full: Buffer;
  content: Buffer;
}

class DerError extends Error {}

/** One DER element at `pos` of `buf`. */
function readTlv(buf: Buffer, pos: number): { tlv: Tlv; next: number } {
  if (pos + 2 > buf.length) throw new DerError('asn1: syntax error: data truncated');
  const tag = buf[pos]!;
  let len = buf[pos + 1]!;
  let off = pos + 2;
  if (len & 0x80) {
    const n = len & 0x7f;
    if (n === 0 || n > 4 || off + n > buf.length) throw new DerError('asn1: syntax error: invalid length');
    len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + buf[off + i]!;
    off += n;
  }
  if (off + len > buf.length) throw new DerError('asn1: syntax error: data truncated');
  return { tlv: { tag, full: buf.subarray(pos, off + len), content: buf.subarray(off, off + len) }, next: off + len };
}

/** The elements inside a constructed element. */
function children(t: Tlv): Tlv[] {
  const out: Tlv[] = [];
  for (let pos = 0; pos < t.content.length; ) {
    const { tlv, next } = readTlv(t.content, pos);
    out.push(tlv);
    pos = next;
  }
  return out;
}

function expectTag(t: Tlv | undefined, tag: number): Tlv {
  if (!t || t.tag !== tag) throw new DerError('asn1: structure error: tags don\'t match');
  return t;
}

function oid(t: Tlv): string {
  const b = expectTag(t, 0x06).content;
  const parts: number[] = [Math.floor(b[0]! / 40), b[0]! % 40];
  let v = 0;
  for (let i = 1; i < b.length; i++) {
    v = v * 128 + (b[i]! & 0x7f);
    if (!(b[i]! & 0x80)) {
      parts.push(v);
      v = 0;
    }
  }
  return parts.join('.');
}

const SEQUENCE = 0x30;
const SET = 0x31;
const ORGANIZATION = '2.5.4.10';
const COMMON_NAME = '2.5.4.3';

/** Signature algorithms Go's x509 verifies, by OID: the digest node:crypto takes (null: none). */
const SIGNATURE_DIGESTS: Readonly<Record<string, string | null>> = {
  '1.2.840.113549.1.1.5': 'sha1',
  '1.2.840.113549.1.1.11': 'sha256',
  '1.2.840.113549.1.1.12': 'sha384',
  '1.2.840.113549.1.1.13': 'sha512',
  '1.2.840.10045.4.3.2': 'sha256',
  '1.2.840.10045.4.3.3': 'sha384',
  '1.2.840.10045.4.3.4': 'sha512',
  '1.3.101.112': null,
};

/** Go's error for a bad signature, by algorithm family. */
function verificationFailure(algId: string): string {
  if (algId.startsWith('1.2.840.113549.')) return 'crypto/rsa: verification error';
  return algId.startsWith('1.2.840.10045.') ? 'x509: ECDSA verification failure' : 'x509: Ed25519 verification failure';
}

/**
 * What plinth reads from a request: its subject's organizations and common name, the
 * subjectAltNames of its extension request (Go's DNSNames, EmailAddresses, IPAddresses, URIs),
 * and the DER of its subject and public key (what a signer copies into the certificate).
 */
export interface ParsedCSR {
  commonName: string;
  organizations: string[];
  dnsNames: string[];
  emailAddresses: string[];
  /** IP addresses as their raw bytes (4 or 16). */
  ipAddresses: Buffer[];
  uris: string[];
  /** The subject Name, DER. */
  rawSubject: Buffer;
  /** The SubjectPublicKeyInfo, DER. */
  rawPublicKey: Buffer;
}

const EXTENSION_REQUEST = '1.2.840.113549.1.9.14';
const SUBJECT_ALT_NAME = '2.5.29.17';

/** The subjectAltNames of a CSR's attributes (`[0]` SET of Attribute), into `out`. */
function readAltNames(attributes: Tlv | undefined, out: ParsedCSR): void {
  if (!attributes || attributes.tag !== 0xa0) return;
  for (const attr of children(attributes)) {
    const [type, values] = children(expectTag(attr, SEQUENCE));
    if (oid(type!) !== EXTENSION_REQUEST) continue;
    for (const exts of children(expectTag(values, SET))) {
      for (const ext of children(expectTag(exts, SEQUENCE))) {
        const parts = children(expectTag(ext, SEQUENCE));
        if (oid(parts[0]!) !== SUBJECT_ALT_NAME) continue;
        const value = expectTag(parts[parts.length - 1], 0x04);
        const { tlv: names } = readTlv(value.content, 0);
        for (const name of children(expectTag(names, SEQUENCE))) {
          // GeneralName's context tags: [1] rfc822Name, [2] dNSName, [6] URI, [7] iPAddress.
          if (name.tag === 0x81) out.emailAddresses.push(name.content.toString('latin1'));
          else if (name.tag === 0x82) out.dnsNames.push(name.content.toString('latin1'));
          else if (name.tag === 0x86) out.uris.push(name.content.toString('latin1'));
          else if (name.tag === 0x87) out.ipAddresses.push(Buffer.from(name.content));
        }
      }
    }
  }
}

/** The first PEM block of `text`: its type, headers and body; undefined when there is none. */
function firstPemBlock(text: string): { type: string; hasHeaders: boolean; der: Buffer; rest: string } | undefined {
  const m = /-----BEGIN ([A-Z0-9 ]+)-----\r?\n([\s\S]*?)-----END \1-----\r?\n?/.exec(text);
  if (!m) return undefined;
  const body = m[2]!;
  const hasHeaders = /^[^\s:]+:/m.test(body);
  return { type: m[1]!, hasHeaders, der: Buffer.from(body.replace(/\s+/g, ''), 'base64'), rest: text.slice(m.index + m[0].length) };
}

/**
 * kube's ParseCSR and CheckSignature of `spec.request` (the PEM text): the parsed subject, or an
 * Error whose message is the reason.
 */
export function parseCertificateRequest(pem: string): ParsedCSR {
  const block = firstPemBlock(pem);
  if (!block || block.type !== 'CERTIFICATE REQUEST') throw new Error('PEM block type must be CERTIFICATE REQUEST');
  try {
    const { tlv: outer } = readTlv(block.der, 0);
    const [info, algorithm, signature] = children(expectTag(outer, SEQUENCE));
    const infoParts = children(expectTag(info, SEQUENCE));
    const subject = children(expectTag(infoParts[1], SEQUENCE));
    const spki = expectTag(infoParts[2], SEQUENCE);
    const out: ParsedCSR = { commonName: '', organizations: [], dnsNames: [], emailAddresses: [], ipAddresses: [], uris: [], rawSubject: Buffer.from(infoParts[1]!.full), rawPublicKey: Buffer.from(spki.full) };
    for (const rdn of subject) {
      for (const atv of children(expectTag(rdn, SET))) {
        const [type, value] = children(expectTag(atv, SEQUENCE));
        const id = oid(type!);
        const text = value ? value.content.toString('utf8') : '';
        if (id === ORGANIZATION) out.organizations.push(text);
        else if (id === COMMON_NAME) out.commonName = text;
      }
    }
    readAltNames(infoParts[3], out);
    const algId = oid(children(expectTag(algorithm, SEQUENCE))[0]!);
    if (!(algId in SIGNATURE_DIGESTS)) throw new Error('x509: cannot verify signature: algorithm unimplemented');
    const sig = expectTag(signature, 0x03).content.subarray(1);
    const key = createPublicKey({ key: spki.full, format: 'der', type: 'spki' });
    if (!verify(SIGNATURE_DIGESTS[algId] ?? null, info!.full, key, sig)) throw new Error(verificationFailure(algId));
    return out;
  } catch (e) {
    if (e instanceof DerError) throw new Error(e.message);
    if (e instanceof Error && e.message.startsWith('x509:')) throw e;
    throw new Error(`x509: malformed certificate request: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/** kube's validateCertificate of `status.certificate`: '' when valid (or empty), else the reason. */
export function certificatePemProblem(pem: string): string {
  if (pem.length === 0) return '';
  let rest = pem;
  let blocks = 0;
  for (;;) {
    const block = firstPemBlock(rest);
    if (!block) break;
    if (block.type !== 'CERTIFICATE') return `only CERTIFICATE PEM blocks are allowed, found ${JSON.stringify(block.type)}`;
    if (block.hasHeaders) return 'no PEM block headers are permitted';
    blocks++;
    try {
      new X509Certificate(block.der);
    } catch {
      return 'x509: malformed certificate';
    }
    rest = block.rest;
  }
  return blocks === 0 ? 'must contain at least one CERTIFICATE PEM block' : '';
}
