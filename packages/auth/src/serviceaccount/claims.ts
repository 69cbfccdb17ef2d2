/**
 * The claims of service-account tokens and their validation, as kube's pkg/serviceaccount
 * claims.go (bound tokens: TokenRequest) and legacy.go (tokens of `kubernetes.io/service-account-token`
 * Secrets), and the identity a valid token stands for (apiserver's serviceaccount/util.go).
 */
import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import type { StoredObject, UserInfo } from '@plinth/api';

/** The `iss` of legacy tokens (legacy.go LegacyIssuer). */
export const LEGACY_ISSUER = 'kubernetes/serviceaccount';
/** A pod-bound token asking for exactly this lifetime is extended (claims.go). */
export const WARN_ONLY_BOUND_TOKEN_EXPIRATION_SECONDS = 60 * 60 + 7;
/** ... to this lifetime, its requested expiry kept as `warnafter`. */
export const EXPIRATION_EXTENSION_SECONDS = 24 * 365 * 60 * 60;
/** go-jose's jwt.DefaultLeeway: clock skew allowed on exp/nbf, and on deletion timestamps. */
export const LEEWAY_SECONDS = 60;

export const SERVICE_ACCOUNT_USERNAME_PREFIX = 'system:serviceaccount:';
export const ALL_SERVICE_ACCOUNTS_GROUP = 'system:serviceaccounts';
export const SERVICE_ACCOUNT_GROUP_PREFIX = 'system:serviceaccounts:';
/** `extra` keys of a pod-bound token's user (k8s.io/apiserver/pkg/authentication/serviceaccount). */
export const POD_NAME_KEY = 'authentication.kubernetes.io/pod-name';
export const POD_UID_KEY = 'authentication.kubernetes.io/pod-uid';

export const LEGACY_CLAIM_NAMESPACE = 'kubernetes.io/serviceaccount/namespace';
export const LEGACY_CLAIM_SECRET_NAME = 'kubernetes.io/serviceaccount/secret.name';
export const LEGACY_CLAIM_SA_NAME = 'kubernetes.io/serviceaccount/service-account.name';
export const LEGACY_CLAIM_SA_UID = 'kubernetes.io/serviceaccount/service-account.uid';

export function serviceAccountUsername(namespace: string, name: string): string {
  return `${SERVICE_ACCOUNT_USERNAME_PREFIX}${namespace}:${name}`;
}

/** `system:serviceaccount:<ns>:<name>` → [ns, name], or undefined for any other name. */
export function splitServiceAccountUsername(username: string): [string, string] | undefined {
  if (!username.startsWith(SERVICE_ACCOUNT_USERNAME_PREFIX)) return undefined;
  const parts = username.slice(SERVICE_ACCOUNT_USERNAME_PREFIX.length).split(':');
  return parts.length === 2 && parts[0] && parts[1] ? [parts[0], parts[1]] : undefined;
}

/** Who a validated token stands for. */
export interface ServiceAccountInfo {
  namespace: string;
  name: string;
  uid: string;
  podName?: string;
  podUID?: string;
}

/** ServiceAccountInfo.UserInfo(): the account's user, groups, and the pod for pod-bound tokens. */
export function serviceAccountUser(sa: ServiceAccountInfo): UserInfo {
  const user: UserInfo = {
    name: serviceAccountUsername(sa.namespace, sa.name),
    uid: sa.uid,
    groups: [ALL_SERVICE_ACCOUNTS_GROUP, `${SERVICE_ACCOUNT_GROUP_PREFIX}${sa.namespace}`],
  };
  if (sa.podName && sa.podUID) user.extra = { [POD_NAME_KEY]: [sa.podName], [POD_UID_KEY]: [sa.podUID] };
  return user;
}

interface Ref {
  name?: string;
  uid?: string;
}

/** The private `kubernetes.io` claim of bound tokens (empty fields omitted, as Go's omitempty). */
export interface KubernetesClaim {
  namespace?: string;
  serviceaccount?: Ref;
  pod?: Ref;
  secret?: Ref;
  warnafter?: number;
}

function ref(name: string, uid: string): Ref {
  const r: Ref = {};
  if (name) r.name = name;
  if (uid) r.uid = uid;
  return r;
}

/** Claims with their keys sorted, as go-jose serialises its merged claim map. */
function sorted(claims: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(claims).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

export interface BoundClaimsInput {
  issuer: string;
  namespace: string;
  name: string;
  uid: string;
  audiences: readonly string[];
  /** Seconds since the epoch. */
  now: number;
  expirationSeconds: number;
  /** Seconds after `now` at which the token is stale but still valid (extended tokens); 0: none. */
  warnAfterSeconds: number;
  pod?: { name: string; uid: string };
  secret?: { name: string; uid: string };
}

/** claims.go Claims(): a bound token's claims. `jti` as kube 1.29+ (a random UUID). */
export function boundClaims(c: BoundClaimsInput): Record<string, unknown> {
  const k8s: KubernetesClaim = {};
  if (c.namespace) k8s.namespace = c.namespace;
  k8s.serviceaccount = ref(c.name, c.uid);
  if (c.pod) k8s.pod = ref(c.pod.name, c.pod.uid);
  else if (c.secret) k8s.secret = ref(c.secret.name, c.secret.uid);
  if (c.warnAfterSeconds) k8s.warnafter = c.now + c.warnAfterSeconds;
  return sorted({
    iss: c.issuer,
    sub: serviceAccountUsername(c.namespace, c.name),
    aud: [...c.audiences],
    exp: c.now + c.expirationSeconds,
    iat: c.now,
    nbf: c.now,
    jti: randomUUID(),
    'kubernetes.io': k8s,
  });
}

/** legacy.go LegacyClaims(): no audience, no expiry; the Secret named so deleting it revokes. */
export function legacyClaims(c: { namespace: string; serviceAccountName: string; serviceAccountUID: string; secretName: string }): Record<string, unknown> {
  return sorted({
    iss: LEGACY_ISSUER,
    sub: serviceAccountUsername(c.namespace, c.serviceAccountName),
    [LEGACY_CLAIM_NAMESPACE]: c.namespace,
    [LEGACY_CLAIM_SECRET_NAME]: c.secretName,
    [LEGACY_CLAIM_SA_NAME]: c.serviceAccountName,
    [LEGACY_CLAIM_SA_UID]: c.serviceAccountUID,
  });
}

/** Reads of the objects a token names, served from the watch cache. */
export interface ServiceAccountTokenGetter {
  getServiceAccount(namespace: string, name: string): Promise<StoredObject | undefined>;
  getSecret(namespace: string, name: string): Promise<StoredObject | undefined>;
  /** Pods are not served by plinth yet: without a getter, pod-bound tokens are refused. */
  getPod?(namespace: string, name: string): Promise<StoredObject | undefined>;
}

export type Validation = { valid: true; info: ServiceAccountInfo } | { valid: false; reason: string };

const invalid = (reason: string): Validation => ({ valid: false, reason });

function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

function refOf(v: unknown): { name: string; uid: string } | undefined {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return undefined;
  const r = v as Record<string, unknown>;
  return { name: str(r['name']), uid: str(r['uid']) };
}

/** True when the object's deletion started before `before` (seconds since the epoch). */
function deletedBefore(obj: StoredObject, before: number): boolean {
  const ts = obj.metadata.deletionTimestamp;
  return typeof ts === 'string' && Date.parse(ts) / 1000 < before;
}

/**
 * claims.go validator.Validate, after signature, issuer, audience, exp and nbf are checked: the
 * account (and the bound Secret or Pod) must still exist with the uids the token names. Objects
 * whose deletion started less than a leeway ago still count — kube's rule. Bound tokens are
 * always looked up, whatever --service-account-lookup says.
 */
export async function validateBoundClaims(payload: Record<string, unknown>, getter: ServiceAccountTokenGetter, nowSeconds: number): Promise<Validation> {
  const k8s = payload['kubernetes.io'];
  if (typeof k8s !== 'object' || k8s === null || Array.isArray(k8s)) return invalid('service account token claims could not be validated');
  const priv = k8s as Record<string, unknown>;
  const namespace = str(priv['namespace']);
  const saRef = refOf(priv['serviceaccount']) ?? { name: '', uid: '' };
  const podRef = refOf(priv['pod']);
  const secretRef = refOf(priv['secret']);
  const invalidIfDeletedBefore = nowSeconds - LEEWAY_SECONDS;

  const sa = await getter.getServiceAccount(namespace, saRef.name);
  if (!sa) return invalid(`serviceaccounts "${saRef.name}" not found`);
  if (deletedBefore(sa, invalidIfDeletedBefore)) return invalid(`service account ${namespace}/${saRef.name} has been deleted`);
  if (sa.metadata.uid !== saRef.uid) return invalid(`service account UID (${sa.metadata.uid ?? ''}) does not match claim (${saRef.uid})`);

  if (secretRef) {
    const secret = await getter.getSecret(namespace, secretRef.name);
    if (!secret || deletedBefore(secret, invalidIfDeletedBefore)) return invalid('service account token has been invalidated');
    if (secret.metadata.uid !== secretRef.uid) return invalid(`secret UID (${secret.metadata.uid ?? ''}) does not match service account secret ref claim (${secretRef.uid})`);
  }

  const info: ServiceAccountInfo = { namespace, name: saRef.name, uid: saRef.uid };
  if (podRef) {
    const pod = getter.getPod ? await getter.getPod(namespace, podRef.name) : undefined;
    if (!pod || deletedBefore(pod, invalidIfDeletedBefore)) return invalid('service account token has been invalidated');
    if (pod.metadata.uid !== podRef.uid) return invalid(`pod UID (${pod.metadata.uid ?? ''}) does not match service account pod ref claim (${podRef.uid})`);
    info.podName = podRef.name;
    info.podUID = podRef.uid;
  }
  return { valid: true, info };
}

function digest(bytes: Buffer): Buffer {
  return createHash('sha256').update(bytes).digest();
}

/**
 * legacy.go legacyValidator.Validate: the claims must be complete and agree with `sub`; with
 * lookup, the Secret must still exist (not being deleted) and hold this very token, and the
 * account must exist (not being deleted) with the uid the token names.
 */
export async function validateLegacyClaims(token: string, payload: Record<string, unknown>, getter: ServiceAccountTokenGetter, lookup: boolean): Promise<Validation> {
  const sub = str(payload['sub']);
  if (!sub) return invalid('sub claim is missing');
  const namespace = str(payload[LEGACY_CLAIM_NAMESPACE]);
  if (!namespace) return invalid('namespace claim is missing');
  const secretName = str(payload[LEGACY_CLAIM_SECRET_NAME]);
  if (!secretName) return invalid('secretName claim is missing');
  const name = str(payload[LEGACY_CLAIM_SA_NAME]);
  if (!name) return invalid('serviceAccountName claim is missing');
  const uid = str(payload[LEGACY_CLAIM_SA_UID]);
  if (!uid) return invalid('serviceAccountUID claim is missing');
  const subject = splitServiceAccountUsername(sub);
  if (!subject || subject[0] !== namespace || subject[1] !== name) return invalid('sub claim is invalid');

  if (lookup) {
    const secret = await getter.getSecret(namespace, secretName);
    if (!secret || secret.metadata.deletionTimestamp) return invalid('Token has been invalidated');
    const data = (secret as { data?: Record<string, unknown> }).data;
    const stored = Buffer.from(str(data?.['token']), 'base64');
    // Digests compared in constant time: no early-exit compare of the server's copy with input.
    if (!timingSafeEqual(digest(stored), digest(Buffer.from(token)))) return invalid("Token does not match server's copy");
    const sa = await getter.getServiceAccount(namespace, name);
    if (!sa) return invalid(`serviceaccounts "${name}" not found`);
    if (sa.metadata.deletionTimestamp) return invalid(`ServiceAccount ${namespace}/${name} has been deleted`);
    if (sa.metadata.uid !== uid) return invalid(`ServiceAccount UID (${sa.metadata.uid ?? ''}) does not match claim (${uid})`);
  }
  return { valid: true, info: { namespace, name, uid } };
}
