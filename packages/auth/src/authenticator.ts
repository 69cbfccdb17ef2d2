/** The authenticator contract: a request's credentials in, a user (or nothing) out. */
import type { X509Certificate } from 'node:crypto';
import type { UserInfo } from '@plinth/api';

/** What an authenticator may look at: the request headers and the TLS peer, never the body. */
export interface AuthRequest {
  /**
   * The request's headers — the live object: an authenticator that consumes headers (the
   * authenticating proxy's) deletes them so nothing below sees them.
   */
  headers: Record<string, string | string[] | undefined>;
  /**
   * The headers as received (name, value, name, value, …) — the live array, where repeated headers
   * stay apart (`headers` joins most of them with ', '). Absent for requests not from the wire.
   */
  rawHeaders?: string[];
  /**
   * The certificate chain the TLS client presented, leaf first, unverified (empty when none):
   * each authenticator verifies it against its own CAs.
   */
  peerCertificates: readonly X509Certificate[];
  /**
   * The audiences a token must be for (one of them): a TokenReview's `spec.audiences`. Unset: the
   * API audiences (--api-audiences). Authenticators of audience-less credentials ignore it.
   */
  audiences?: readonly string[];
}

export type AuthResult =
  /**
   * `audiences`: those of the request's audiences the credential is valid for (kube's
   * Response.Audiences), reported by a TokenReview; unset for credentials that carry none.
   */
  | { kind: 'authenticated'; user: UserInfo; audiences?: string[] }
  /** The credentials were not for this authenticator (try the next). */
  | { kind: 'no-opinion' }
  /** The credentials were for this authenticator and are wrong. */
  | { kind: 'rejected'; reason: string };

export interface Authenticator {
  authenticate(req: AuthRequest): AuthResult | Promise<AuthResult>;
  /**
   * PEM certificates of the CAs whose client certificates this authenticator verifies: the TLS
   * server asks clients for certificates signed by these.
   */
  readonly clientCAs?: readonly string[];
  /** Stops background work (caches, key refreshes). */
  close?(): void;
}

/** Every authenticated user is in this group (spec: Authentication rule 4). */
export const AUTHENTICATED_GROUP = 'system:authenticated';

/** Adds `system:authenticated` unless already present (kube's AuthenticatedGroupAdder). */
export function withAuthenticatedGroup(user: UserInfo): UserInfo {
  if (user.groups.includes(AUTHENTICATED_GROUP) || user.name === 'system:anonymous') return user;
  // An immutable user (a static token's) gets one immutable answer, shared by its requests.
  const frozen = Object.isFrozen(user);
  if (frozen) {
    const known = withGroup.get(user);
    if (known) return known;
  }
  const out: UserInfo = { ...user, groups: [...user.groups, AUTHENTICATED_GROUP] };
  if (frozen) {
    Object.freeze(out.groups);
    withGroup.set(user, Object.freeze(out));
  }
  return out;
}
const withGroup = new WeakMap<UserInfo, UserInfo>();

/** Tries each authenticator in order; the first to authenticate wins. */
export function createUnionAuthenticator(authenticators: Authenticator[]): Authenticator {
  return {
    clientCAs: authenticators.flatMap((a) => a.clientCAs ?? []),
    close() {
      for (const a of authenticators) a.close?.();
    },
    async authenticate(req) {
      let rejected: AuthResult | undefined;
      for (const a of authenticators) {
        const r = await a.authenticate(req);
        if (r.kind === 'authenticated') return { ...r, user: withAuthenticatedGroup(r.user) };
        if (r.kind === 'rejected') rejected ??= r;
      }
      return rejected ?? { kind: 'no-opinion' };
    },
  };
}

/**
 * The bearer token of a request, or undefined when there is none — as kube's bearertoken
 * authenticator reads it: `Authorization` trimmed, split on single spaces into at most three
 * parts, scheme `bearer` in any case, the token the second part. `Bearer  <token>` (two spaces)
 * has an empty second part and is no credential at all; text after the token is ignored.
 */
export function bearerToken(req: Pick<AuthRequest, 'headers'>): string | undefined {
  const h = req.headers['authorization'];
  const value = (Array.isArray(h) ? h[0] : h)?.trim();
  if (!value) return undefined;
  const parts = value.split(' ', 3);
  if (parts.length < 2 || parts[0]!.toLowerCase() !== 'bearer') return undefined;
  return parts[1] || undefined;
}
