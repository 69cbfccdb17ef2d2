/**
 * Client certificates (`--client-ca-file`), as kube's x509 authenticator
 * (k8s.io/apiserver/pkg/authentication/request/x509): the presented chain is verified the way
 * Go's `x509.Certificate.Verify` does with `KeyUsages: [ClientAuth]` — roots from the CA bundle,
 * intermediates from what the client sent, every certificate within its validity period, every
 * issuer a CA, and no certificate of the chain restricting its extended key usage to something
 * other than client authentication. The leaf's subject CN is the user name, each O a group.
 *
 * The chain verifier is shared with the authenticating proxy (request-header.ts).
 */
import { readFileSync } from 'node:fs';
import { X509Certificate } from 'node:crypto';
import type { UserInfo } from '@plinth/api';
import type { Authenticator } from './authenticator.js';
import type { AuthenticationMethod } from './config.js';

/** id-kp-clientAuth (RFC 5280 4.2.1.12). */
export const EKU_CLIENT_AUTH = '1.3.6.1.5.5.7.3.2';
/** anyExtendedKeyUsage: good for every purpose. */
export const EKU_ANY = '2.5.29.37.0';

/** Go's maxChainSignatureChecks: a bound on the work one presented chain can cause. */
const MAX_SIGNATURE_CHECKS = 100;
/** Longest chain built (leaf + intermediates + root); real client chains are 2–4 long. */
const MAX_CHAIN_LENGTH = 10;

/**
 * Every CERTIFICATE block of a PEM bundle, as client-go's `cert.ParseCertsPEM`: other block types
 * and blocks with PEM headers are skipped; a CERTIFICATE block that does not parse is an error, and
 * so is a bundle without any certificate.
 */
export function parseCertificatesPEM(text: string, source: string): X509Certificate[] {
  const certs: X509Certificate[] = [];
  const block = /-----BEGIN ([^-\r\n]+)-----\r?\n([\s\S]*?)-----END \1-----/g;
  for (let m = block.exec(text); m; m = block.exec(text)) {
    const body = m[2]!;
    if (m[1] !== 'CERTIFICATE' || body.includes(':')) continue;
    try {
      certs.push(new X509Certificate(Buffer.from(body.replace(/\s+/g, ''), 'base64')));
    } catch (e) {
      throw new Error(`${source}: certificate ${certs.length + 1} does not parse: ${(e as Error).message}`);
    }
  }
  if (certs.length === 0) throw new Error(`${source}: no PEM CERTIFICATE block found`);
  return certs;
}

/** Reads a CA bundle named by a flag now, so a missing or bad file fails start-up naming the flag. */
export function readCABundle(file: string, flag: string): X509Certificate[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new Error(`--${flag}: cannot read ${file}: ${(e as Error).message}`);
  }
  return parseCertificatesPEM(text, `--${flag}: ${file}`);
}

/** Validity bounds in ms, parsed once per certificate object. */
const validityOf = new WeakMap<X509Certificate, { from: number; to: number }>();

function validity(cert: X509Certificate): { from: number; to: number } {
  let v = validityOf.get(cert);
  if (!v) {
    // Unparseable dates make the certificate never valid (NaN compares false).
    v = { from: Date.parse(cert.validFrom), to: Date.parse(cert.validTo) };
    validityOf.set(cert, v);
  }
  return v;
}

/** Go's isValid time check: NotBefore ≤ now ≤ NotAfter. */
export function isWithinValidity(cert: X509Certificate, now: number): boolean {
  const { from, to } = validity(cert);
  return from <= now && now <= to;
}

/**
 * Go's checkChainForKeyUsage for [ClientAuth]: a certificate without an extended key usage
 * extension allows every usage; one with the extension must list clientAuth or
 * anyExtendedKeyUsage. Every certificate of the chain, the CA's included, is checked.
 */
export function allowsClientAuth(cert: X509Certificate): boolean {
  const eku = cert.keyUsage as string[] | undefined;
  return !eku || eku.length === 0 || eku.includes(EKU_CLIENT_AUTH) || eku.includes(EKU_ANY);
}

/**
 * The names of a certificate's subject, read from the parsed name (Node's legacy object keeps each
 * attribute's raw value, so escaping, multi-valued RDNs and repeated attributes need no parsing of
 * the printed subject). As Go's pkix.Name: the last CN wins; every O, in order.
 */
export function subjectNames(cert: X509Certificate): { commonName: string; organizations: string[] } {
  const subject = (cert.toLegacyObject().subject ?? {}) as unknown as Record<string, string | string[] | undefined>;
  const all = (v: string | string[] | undefined): string[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);
  const cns = all(subject['CN']);
  return { commonName: cns[cns.length - 1] ?? '', organizations: all(subject['O']) };
}

export type ChainVerification = { ok: true; chain: readonly X509Certificate[] } | { ok: false; reason: string };

export interface ChainVerifier {
  /**
   * Verifies a presented chain (leaf first, then what the client sent to help build the path) at
   * `now` (default: the current time). Chain building is memoised per leaf object — the server
   * parses the chain once per connection — while validity periods are checked on every call.
   */
  verify(presented: readonly X509Certificate[], now?: number): ChainVerification;
}

interface Built {
  intermediates: readonly X509Certificate[];
  /** Every path from the leaf to a root, validity periods not yet considered. */
  chains: X509Certificate[][];
}

/** A chain verifier with a fixed set of roots (a CA bundle). */
export function createChainVerifier(roots: readonly X509Certificate[]): ChainVerifier {
  const rootFingerprints = new Set(roots.map((r) => r.fingerprint256));
  const memo = new WeakMap<X509Certificate, Built>();

  function build(leaf: X509Certificate, intermediates: readonly X509Certificate[]): X509Certificate[][] {
    // A certificate that is itself one of the roots is its own chain (Go: opts.Roots.contains(c)).
    if (rootFingerprints.has(leaf.fingerprint256)) return [[leaf]];
    const chains: X509Certificate[][] = [];
    let checks = 0;
    // Go's CheckSignatureFrom + isValid, minus time: the parent is a CA, allowed to sign
    // certificates (checkIssued: issuer name, key identifiers, keyCertSign), and its key verifies
    // the child's signature.
    const issued = (child: X509Certificate, parent: X509Certificate): boolean => {
      if (!parent.ca || child.issuer !== parent.subject || !child.checkIssued(parent)) return false;
      if (++checks > MAX_SIGNATURE_CHECKS) return false;
      try {
        return child.verify(parent.publicKey);
      } catch {
        return false;
      }
    };
    const extend = (chain: X509Certificate[]): void => {
      const cert = chain[chain.length - 1]!;
      for (const root of roots) if (issued(cert, root)) chains.push([...chain, root]);
      if (chain.length + 1 >= MAX_CHAIN_LENGTH) return;
      for (const im of intermediates) {
        if (chain.some((c) => c === im || c.fingerprint256 === im.fingerprint256)) continue;
        if (issued(cert, im)) extend([...chain, im]);
      }
    };
    extend([leaf]);
    return chains;
  }

  return {
    verify(presented, now = Date.now()) {
      const leaf = presented[0];
      if (!leaf) return { ok: false, reason: 'x509: no certificate presented' };
      const intermediates = presented.slice(1);
      let built = memo.get(leaf);
      if (!built || built.intermediates.length !== intermediates.length || built.intermediates.some((c, i) => c !== intermediates[i])) {
        built = { intermediates, chains: build(leaf, intermediates) };
        memo.set(leaf, built);
      }
      // The order of Go's errors: the leaf's own validity, then the path, then key usage.
      if (!isWithinValidity(leaf, now)) return { ok: false, reason: `x509: certificate has expired or is not yet valid: current time ${new Date(now).toISOString()} is outside ${leaf.validFrom} – ${leaf.validTo}` };
      if (built.chains.length === 0) return { ok: false, reason: 'x509: certificate signed by unknown authority' };
      const current = built.chains.filter((chain) => chain.every((c) => isWithinValidity(c, now)));
      if (current.length === 0) return { ok: false, reason: 'x509: certificate has expired or is not yet valid: a certificate of its chain is outside its validity period' };
      const usable = current.find((chain) => chain.every(allowsClientAuth));
      if (!usable) return { ok: false, reason: 'x509: certificate specifies an incompatible key usage' };
      return { ok: true, chain: usable };
    },
  };
}

/** kube's certificateIdentifier: which certificate failed, for the error (no secret in it). */
export function certificateIdentifier(cert: X509Certificate): string {
  return `SN=${BigInt(`0x${cert.serialNumber}`)}, subject=${JSON.stringify(cert.subject.replace(/\n/g, ', '))}`;
}

/**
 * kube's CommonNameUserConversion: CN → name, each O → a group, no uid. A certificate with an
 * empty CN gives no user (the authenticator then has no opinion).
 */
export function userFromCertificate(leaf: X509Certificate): UserInfo | undefined {
  const { commonName, organizations } = subjectNames(leaf);
  if (!commonName) return undefined;
  return { name: commonName, groups: [...organizations] };
}

export interface X509AuthenticatorOptions {
  /** The CAs whose client certificates authenticate. */
  roots: readonly X509Certificate[];
}

/**
 * kube's x509.Authenticator: no certificate → no opinion; a certificate that does not verify → an
 * error (`rejected`: the union still tries the others, and answers 401 when none accepts); a
 * verified certificate with an empty CN → no opinion.
 */
export function createX509Authenticator(opts: X509AuthenticatorOptions): Authenticator {
  const verifier = createChainVerifier(opts.roots);
  const users = new WeakMap<X509Certificate, UserInfo | undefined>();
  return {
    clientCAs: opts.roots.map((c) => c.toString()),
    authenticate(req) {
      const leaf = req.peerCertificates[0];
      if (!leaf) return { kind: 'no-opinion' };
      const v = verifier.verify(req.peerCertificates);
      if (!v.ok) return { kind: 'rejected', reason: `verifying certificate ${certificateIdentifier(leaf)} failed: ${v.reason}` };
      if (!users.has(leaf)) users.set(leaf, userFromCertificate(leaf));
      const user = users.get(leaf);
      if (!user) return { kind: 'no-opinion' };
      return { kind: 'authenticated', user: { name: user.name, groups: [...user.groups] } };
    },
  };
}

/** Registration: `--client-ca-file`. */
export const x509Method: AuthenticationMethod = {
  name: 'x509',
  build(opts) {
    if (!opts.clientCert) return undefined;
    return createX509Authenticator({ roots: readCABundle(opts.clientCert.caFile, 'client-ca-file') });
  },
};
