/**
 * Bootstrap token authentication (`--enable-bootstrap-token-auth`), as kube-apiserver's
 * plugin/pkg/auth/authenticator/token/bootstrap does it: a bearer token `<id>.<secret>` names the
 * Secret `kube-system/bootstrap-token-<id>` of type `bootstrap.kubernetes.io/token`, which must
 * hold the same secret, be marked for authentication and not have expired. The user is
 * `system:bootstrap:<id>` in `system:bootstrappers` plus the Secret's `auth-extra-groups`.
 *
 * The rules on a Secret (expiry, extra groups) are exported for the token cleaner controller,
 * which deletes expired bootstrap token Secrets.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { decodeStdBase64, isPlainObject, type StoredObject, type UserInfo } from '@plinth/api';
import { type Authenticator, bearerToken } from './authenticator.js';
import type { AuthenticationMethod, AuthenticatorDeps } from './config.js';

// k8s.io/cluster-bootstrap/token/api.
export const BOOTSTRAP_TOKEN_SECRET_PREFIX = 'bootstrap-token-';
export const SECRET_TYPE_BOOTSTRAP_TOKEN = 'bootstrap.kubernetes.io/token';
export const BOOTSTRAP_TOKEN_ID_KEY = 'token-id';
export const BOOTSTRAP_TOKEN_SECRET_KEY = 'token-secret';
export const BOOTSTRAP_TOKEN_EXPIRATION_KEY = 'expiration';
export const BOOTSTRAP_TOKEN_EXTRA_GROUPS_KEY = 'auth-extra-groups';
export const BOOTSTRAP_TOKEN_USAGE_AUTHENTICATION = 'usage-bootstrap-authentication';
export const BOOTSTRAP_USER_PREFIX = 'system:bootstrap:';
export const BOOTSTRAP_DEFAULT_GROUP = 'system:bootstrappers';
/** The namespace bootstrap token Secrets live in (kube's NamespaceSystem). */
export const BOOTSTRAP_TOKEN_NAMESPACE = 'kube-system';

/** kube's BootstrapTokenPattern `\A([a-z0-9]{6})\.([a-z0-9]{16})\z`. */
const TOKEN_RE = /^([a-z0-9]{6})\.([a-z0-9]{16})$/;
/** kube's BootstrapGroupPattern, as kube's error message quotes it. */
const BOOTSTRAP_GROUP_PATTERN = '\\Asystem:bootstrappers:[a-z0-9:-]{0,255}[a-z0-9]\\z';
const GROUP_RE = /^system:bootstrappers:[a-z0-9:-]{0,255}[a-z0-9]$/;

/** Splits a bootstrap token into its id and secret; undefined when it is not of that form. */
export function parseBootstrapToken(token: string): { id: string; secret: string } | undefined {
  const m = TOKEN_RE.exec(token);
  return m ? { id: m[1]!, secret: m[2]! } : undefined;
}

/** A Secret's `data` map (base64 text, as the API and plinth's storage hold it), or undefined when empty. */
function dataOf(secret: StoredObject): Record<string, unknown> | undefined {
  const data = secret['data'];
  // Go decodes an empty map from storage as nil: both are "no data".
  return isPlainObject(data) && Object.keys(data).length > 0 ? data : undefined;
}

/** The decoded bytes of `data[key]`; empty when absent or undecodable (cluster-bootstrap's GetData). */
export function secretDataBytes(secret: StoredObject, key: string): Buffer {
  const value = dataOf(secret)?.[key];
  if (typeof value !== 'string') return Buffer.alloc(0);
  try {
    return decodeStdBase64(value);
  } catch {
    return Buffer.alloc(0);
  }
}

/** `data[key]` as text (cluster-bootstrap's GetData): '' when absent. */
export function secretData(secret: StoredObject, key: string): string {
  return secretDataBytes(secret, key).toString('utf8');
}

function daysIn(month: number, year: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

const RFC3339_RE = /^(\d{4})-(\d{2})-(\d{2})T(\d{1,2}):(\d{2}):(\d{2})(?:[.,](\d+))?(?:(Z)|([+-])(\d{2}):(\d{2}))$/;

/**
 * Go's `time.Parse(time.RFC3339, s)` (Go 1.18, which built kube 1.24): milliseconds since the
 * epoch, or undefined when Go would refuse it. As Go's parser does, it takes fractional seconds
 * (after '.' or ',') though the layout has none, and a one-digit hour.
 */
export function parseRFC3339(text: string): number | undefined {
  const m = RFC3339_RE.exec(text);
  if (!m) return undefined;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  if (month < 1 || month > 12 || day < 1 || day > daysIn(month, year)) return undefined;
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  const ms = m[7] ? Number(m[7].slice(0, 3).padEnd(3, '0')) : 0;
  const t = new Date(0);
  t.setUTCFullYear(year, month - 1, day); // Date.UTC would read years 0–99 as 1900–1999
  t.setUTCHours(hour, minute, second, ms);
  const offsetMin = m[8] ? 0 : (m[9] === '-' ? -1 : 1) * (Number(m[10]) * 60 + Number(m[11]));
  return t.getTime() - offsetMin * 60_000;
}

/**
 * cluster-bootstrap's GetExpiration: with no `expiration`, never expires (remaining 0, not
 * expired); an unparseable one counts as expired; else the time left, expired once none is.
 */
export function bootstrapTokenExpiration(secret: StoredObject, nowMs: number): { expired: boolean; remainingMs: number; unparseable?: true } {
  const expiration = secretData(secret, BOOTSTRAP_TOKEN_EXPIRATION_KEY);
  if (expiration === '') return { expired: false, remainingMs: 0 };
  const at = parseRFC3339(expiration);
  if (at === undefined) return { expired: true, remainingMs: 0, unparseable: true };
  const remainingMs = at - nowMs;
  return remainingMs <= 0 ? { expired: true, remainingMs: 0 } : { expired: false, remainingMs };
}

/** kube's ValidateBootstrapGroupName: undefined when valid, else why not. */
export function validateBootstrapGroupName(name: string): string | undefined {
  return GROUP_RE.test(name) ? undefined : `bootstrap group ${JSON.stringify(name)} is invalid (must match ${BOOTSTRAP_GROUP_PATTERN})`;
}

/**
 * cluster-bootstrap's GetGroups: `system:bootstrappers` plus `auth-extra-groups` (split on ',',
 * not trimmed), deduplicated and sorted; an invalid extra group is an error.
 */
export function bootstrapTokenGroups(secret: StoredObject): { groups: string[] } | { error: string } {
  const groups = new Set([BOOTSTRAP_DEFAULT_GROUP]);
  const extra = secretData(secret, BOOTSTRAP_TOKEN_EXTRA_GROUPS_KEY);
  if (extra !== '') {
    for (const g of extra.split(',')) {
      const err = validateBootstrapGroupName(g);
      if (err) return { error: err };
      groups.add(g);
    }
  }
  // Go's sets.String.List() sorts by bytes; the names are ASCII, so code units sort the same.
  return { groups: [...groups].sort() };
}

const sha256 = (b: Buffer): Buffer => createHash('sha256').update(b).digest();

/** Constant time in the secret's content and length: both sides hashed first. */
function secretsEqual(a: Buffer, b: Buffer): boolean {
  return timingSafeEqual(sha256(a), sha256(b));
}

/**
 * kube's checks of a Secret against a token, in kube's order: not being deleted, the type (and
 * some data), `token-secret`, `token-id`, expiry, `usage-bootstrap-authentication=true`, the
 * extra groups. The reason never contains the token's secret.
 */
export function checkBootstrapSecret(secret: StoredObject, token: { id: string; secret: string }, nowMs: number): { user: UserInfo } | { reason: string } {
  if (secret.metadata.deletionTimestamp) return { reason: 'is deleted and awaiting removal' };
  if (secret['type'] !== SECRET_TYPE_BOOTSTRAP_TOKEN || !dataOf(secret)) return { reason: `has invalid type, expected ${SECRET_TYPE_BOOTSTRAP_TOKEN}` };
  if (!secretsEqual(secretDataBytes(secret, BOOTSTRAP_TOKEN_SECRET_KEY), Buffer.from(token.secret))) {
    return { reason: `has invalid value for key ${BOOTSTRAP_TOKEN_SECRET_KEY}` };
  }
  const id = secretData(secret, BOOTSTRAP_TOKEN_ID_KEY);
  if (id !== token.id) return { reason: `has invalid value for key ${BOOTSTRAP_TOKEN_ID_KEY}, expected ${token.id}` };
  const exp = bootstrapTokenExpiration(secret, nowMs);
  if (exp.expired) return { reason: exp.unparseable ? 'has an unparseable expiration time (treated as expired)' : 'has expired' };
  if (secretData(secret, BOOTSTRAP_TOKEN_USAGE_AUTHENTICATION) !== 'true') return { reason: `not marked ${BOOTSTRAP_TOKEN_USAGE_AUTHENTICATION}=true` };
  const groups = bootstrapTokenGroups(secret);
  if ('error' in groups) return { reason: `has invalid value for key ${BOOTSTRAP_TOKEN_EXTRA_GROUPS_KEY}: ${groups.error}` };
  // kube's user has no UID.
  return { user: { name: BOOTSTRAP_USER_PREFIX + id, groups: groups.groups } };
}

export interface BootstrapTokenAuthenticatorOptions {
  /** Reads a Secret from the watch cache; undefined when there is none. */
  getSecret: AuthenticatorDeps['getSecret'];
  log?: AuthenticatorDeps['log'];
  /** The clock (ms since the epoch); tests pass their own. */
  now?: () => number;
}

/**
 * The authenticator. A bearer token not of the bootstrap form is no-opinion; one of the form is
 * rejected unless a valid Secret accepts it (kube answers 401 for it either way).
 */
export function createBootstrapTokenAuthenticator(opts: BootstrapTokenAuthenticatorOptions): Authenticator {
  const now = opts.now ?? Date.now;
  const verbose = (msg: string, fields: Record<string, unknown>): void => opts.log?.v?.(3, msg, fields);
  return {
    async authenticate(req) {
      const raw = bearerToken(req);
      const token = raw === undefined ? undefined : parseBootstrapToken(raw);
      if (!token) return { kind: 'no-opinion' };
      const name = BOOTSTRAP_TOKEN_SECRET_PREFIX + token.id;
      let secret: StoredObject | undefined;
      try {
        secret = await opts.getSecret(BOOTSTRAP_TOKEN_NAMESPACE, name);
      } catch (e) {
        // kube returns the lister's error; the request is refused either way.
        opts.log?.error('bootstrap token: reading its secret failed', { secret: `${BOOTSTRAP_TOKEN_NAMESPACE}/${name}`, error: String(e) });
        return { kind: 'rejected', reason: 'bootstrap token secret could not be read' };
      }
      if (!secret) {
        verbose('no secret to match bootstrap bearer token', { secret: `${BOOTSTRAP_TOKEN_NAMESPACE}/${name}` });
        return { kind: 'rejected', reason: 'invalid bootstrap token' };
      }
      const result = checkBootstrapSecret(secret, token, now());
      if ('reason' in result) {
        verbose(`bootstrap secret matching bearer token ${result.reason}`, { secret: `${BOOTSTRAP_TOKEN_NAMESPACE}/${name}` });
        return { kind: 'rejected', reason: 'invalid bootstrap token' };
      }
      return { kind: 'authenticated', user: result.user };
    },
  };
}

/** Registration: on with `--enable-bootstrap-token-auth`. */
export const bootstrapTokenMethod: AuthenticationMethod = {
  name: 'bootstrap-token',
  audienceAgnostic: true,
  build(opts, deps) {
    if (!opts.bootstrapToken) return undefined;
    return createBootstrapTokenAuthenticator({ getSecret: deps.getSecret, log: deps.log });
  },
};
