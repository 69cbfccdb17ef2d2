/** The authenticator contract: a request's credentials in, a user (or nothing) out. */
import type { UserInfo } from '@plinth/api';

/** What an authenticator may look at: the request headers and the TLS peer, never the body. */
export interface AuthRequest {
  headers: Record<string, string | string[] | undefined>;
}

export type AuthResult =
  | { kind: 'authenticated'; user: UserInfo }
  /** The credentials were not for this authenticator (try the next). */
  | { kind: 'no-opinion' }
  /** The credentials were for this authenticator and are wrong. */
  | { kind: 'rejected'; reason: string };

export interface Authenticator {
  authenticate(req: AuthRequest): AuthResult | Promise<AuthResult>;
}

/** Every authenticated user is in this group (spec: Authentication rule 4). */
export const AUTHENTICATED_GROUP = 'system:authenticated';

/** Adds `system:authenticated` unless already present (kube's AuthenticatedGroupAdder). */
export function withAuthenticatedGroup(user: UserInfo): UserInfo {
  if (user.groups.includes(AUTHENTICATED_GROUP) || user.name === 'system:anonymous') return user;
  return { ...user, groups: [...user.groups, AUTHENTICATED_GROUP] };
}

/** Tries each authenticator in order; the first to authenticate wins. */
export function createUnionAuthenticator(authenticators: Authenticator[]): Authenticator {
  return {
    async authenticate(req) {
      let rejected: AuthResult | undefined;
      for (const a of authenticators) {
        const r = await a.authenticate(req);
        if (r.kind === 'authenticated') return { kind: 'authenticated', user: withAuthenticatedGroup(r.user) };
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
export function bearerToken(req: AuthRequest): string | undefined {
  const h = req.headers['authorization'];
  const value = (Array.isArray(h) ? h[0] : h)?.trim();
  if (!value) return undefined;
  const parts = value.split(' ', 3);
  if (parts.length < 2 || parts[0]!.toLowerCase() !== 'bearer') return undefined;
  return parts[1] || undefined;
}
