/**
 * The authenticating proxy (`--requestheader-*`), as kube's requestheader authenticator
 * (k8s.io/apiserver/pkg/authentication/request/headerrequest) behind its x509 Verifier: the
 * identity headers count only on a connection whose client certificate verifies against
 * `--requestheader-client-ca-file` (and whose CN is in `--requestheader-allowed-names`, when set).
 * Whatever the outcome, the identity headers are removed from the request, so nothing below this
 * authenticator — handlers, a later method — ever sees a spoofed identity.
 */
import type { X509Certificate } from 'node:crypto';
import type { UserInfo } from '@plinth/api';
import type { AuthRequest, Authenticator } from './authenticator.js';
import type { AuthenticationMethod } from './config.js';
import { certificateIdentifier, createChainVerifier, readCABundle, subjectNames } from './x509.js';

export interface RequestHeaderAuthenticatorOptions {
  /** The CAs the proxy's client certificate must chain to. */
  roots: readonly X509Certificate[];
  /** CNs allowed to act as the proxy; any verified certificate when empty. */
  allowedNames: readonly string[];
  /** Tried in order; the first with a non-empty value names the user. */
  usernameHeaders: readonly string[];
  /** Every non-empty value of every one is a group. */
  groupHeaders: readonly string[];
  /** `<prefix><key>: <value>` headers are extra[key] values. */
  extraHeaderPrefixes: readonly string[];
}

/** The request's headers as a list of (lower-cased name, value), repeated headers kept apart. */
function headerList(req: AuthRequest): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  if (req.rawHeaders) {
    for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) out.push([req.rawHeaders[i]!.toLowerCase(), req.rawHeaders[i + 1]!]);
    return out;
  }
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) out.push([name.toLowerCase(), v]);
  }
  return out;
}

/**
 * Go's url.PathUnescape: %XX sequences become bytes; a malformed escape leaves the key as it was
 * (kube records extra keys even when they are not encoded).
 */
export function unescapeExtraKey(encoded: string): string {
  if (!encoded.includes('%')) return encoded;
  const bytes: number[] = [];
  for (let i = 0; i < encoded.length; ) {
    const ch = encoded[i]!;
    if (ch === '%') {
      const hex = encoded.slice(i + 1, i + 3);
      if (!/^[0-9a-fA-F]{2}$/.test(hex)) return encoded;
      bytes.push(parseInt(hex, 16));
      i += 3;
    } else {
      for (const b of Buffer.from(ch, 'utf8')) bytes.push(b);
      i++;
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

/** The identity a trusted proxy asserted, read as kube reads it; undefined without a user name. */
export function identityFromHeaders(
  headers: ReadonlyArray<readonly [string, string]>,
  opts: Pick<RequestHeaderAuthenticatorOptions, 'usernameHeaders' | 'groupHeaders' | 'extraHeaderPrefixes'>,
): UserInfo | undefined {
  // The first value of each username header (Go's Header.Get); the first non-empty one wins.
  let name = '';
  for (const h of opts.usernameHeaders.map((n) => n.trim().toLowerCase())) {
    name = headers.find(([n]) => n === h)?.[1] ?? '';
    if (name) break;
  }
  if (!name) return undefined;
  const groups: string[] = [];
  for (const h of opts.groupHeaders.map((n) => n.trim().toLowerCase())) {
    for (const [n, v] of headers) if (n === h && v) groups.push(v);
  }
  // Prefix by prefix (kube's order); the key lower-cased, then %-unescaped; values kept as sent.
  // Keys come from header names (`__proto__` is a key like any other): gathered in a Map.
  const extra = new Map<string, string[]>();
  for (const prefix of opts.extraHeaderPrefixes.map((p) => p.trim().toLowerCase())) {
    for (const [n, v] of headers) {
      if (!n.startsWith(prefix)) continue;
      const key = unescapeExtraKey(n.slice(prefix.length));
      if (extra.has(key)) extra.get(key)!.push(v);
      else extra.set(key, [v]);
    }
  }
  return { name, groups, ...(extra.size > 0 ? { extra: Object.fromEntries(extra) } : {}) };
}

/**
 * Removes every identity header (kube's ClearAuthenticationHeaders) from the live request: from
 * `headers` and, when given, from `rawHeaders` in place.
 */
export function clearIdentityHeaders(req: AuthRequest, opts: Pick<RequestHeaderAuthenticatorOptions, 'usernameHeaders' | 'groupHeaders' | 'extraHeaderPrefixes'>): void {
  const exact = new Set([...opts.usernameHeaders, ...opts.groupHeaders].map((n) => n.trim().toLowerCase()));
  const prefixes = opts.extraHeaderPrefixes.map((p) => p.trim().toLowerCase());
  const isIdentity = (name: string): boolean => {
    const n = name.toLowerCase();
    return exact.has(n) || prefixes.some((p) => n.startsWith(p));
  };
  for (const name of Object.keys(req.headers)) if (isIdentity(name)) delete req.headers[name];
  const raw = req.rawHeaders;
  if (raw) {
    for (let i = raw.length - 2; i >= 0; i -= 2) if (isIdentity(raw[i]!)) raw.splice(i, 2);
  }
}

/**
 * kube's requestheader authenticator wrapped in its x509 Verifier. No certificate → no opinion.
 * A certificate that does not verify against the proxy CA, or whose CN is not allowed → an error
 * (`rejected`), exactly as kube: the union goes on (the certificate may be a user's, for the x509
 * method) and answers 401 only when no method accepts the request. A verified proxy without a
 * user-name header → no opinion.
 */
export function createRequestHeaderAuthenticator(opts: RequestHeaderAuthenticatorOptions): Authenticator {
  const verifier = createChainVerifier(opts.roots);
  const allowed = new Set(opts.allowedNames);
  const commonNames = new WeakMap<X509Certificate, string>();
  const commonName = (leaf: X509Certificate): string => {
    let cn = commonNames.get(leaf);
    if (cn === undefined) {
      cn = subjectNames(leaf).commonName;
      commonNames.set(leaf, cn);
    }
    return cn;
  };
  return {
    clientCAs: opts.roots.map((c) => c.toString()),
    authenticate(req) {
      try {
        const leaf = req.peerCertificates[0];
        if (!leaf) return { kind: 'no-opinion' };
        const v = verifier.verify(req.peerCertificates);
        if (!v.ok) return { kind: 'rejected', reason: `verifying certificate ${certificateIdentifier(leaf)} failed: ${v.reason}` };
        const cn = commonName(leaf);
        if (allowed.size > 0 && !allowed.has(cn)) return { kind: 'rejected', reason: `x509: subject with cn=${cn} is not in the allowed list` };
        const user = identityFromHeaders(headerList(req), opts);
        return user ? { kind: 'authenticated', user } : { kind: 'no-opinion' };
      } finally {
        // Honoured or not, the identity headers end here.
        clearIdentityHeaders(req, opts);
      }
    },
  };
}

/** Registration: `--requestheader-client-ca-file` and its companions. */
export const requestHeaderMethod: AuthenticationMethod = {
  name: 'requestheader',
  build(opts) {
    const o = opts.requestHeader;
    if (!o) return undefined;
    return createRequestHeaderAuthenticator({
      roots: readCABundle(o.clientCAFile, 'requestheader-client-ca-file'),
      allowedNames: o.allowedNames,
      usernameHeaders: o.usernameHeaders,
      groupHeaders: o.groupHeaders,
      extraHeaderPrefixes: o.extraHeaderPrefixes,
    });
  },
};
