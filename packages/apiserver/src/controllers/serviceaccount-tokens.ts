/**
 * The legacy service-account token controller (kube's pkg/controller/serviceaccount/
 * tokens_controller.go, with LegacyServiceAccountTokenNoAutoGeneration on as in 1.24): token
 * Secrets (type `kubernetes.io/service-account-token`, annotated with their account's name) get
 * `token`, `ca.crt` and `namespace` filled and the account's uid annotated; a token Secret whose
 * account is missing (or has another uid) is deleted, and so are an account's token Secrets when
 * the account goes. Accounts get no token Secrets of their own.
 */
import { isConflict, isNotFound, type StoredObject, type UserInfo } from '@plinth/api';
import type { TokenIssuer } from '@plinth/auth';
import type { ResourceStore } from '../registry/store.js';
import type { Logger } from '../log.js';
import { runInformer, type Informer } from './informer.js';

export const SECRET_TYPE_SERVICE_ACCOUNT_TOKEN = 'kubernetes.io/service-account-token';
export const SERVICE_ACCOUNT_NAME_KEY = 'kubernetes.io/service-account.name';
export const SERVICE_ACCOUNT_UID_KEY = 'kubernetes.io/service-account.uid';
/** The data keys of a token Secret (core/v1 ServiceAccountTokenKey, ...RootCAKey, ...NamespaceKey). */
const TOKEN_KEY = 'token';
const ROOT_CA_KEY = 'ca.crt';
const NAMESPACE_KEY = 'namespace';

const CONTROLLER_USER: UserInfo = { name: 'system:apiserver', groups: ['system:masters'] };

export interface TokensControllerDeps {
  secrets: ResourceStore;
  serviceAccounts: ResourceStore;
  issuer: TokenIssuer;
  /** PEM of the CA clients trust for this server (`ca.crt` of every token Secret). */
  rootCA: string | undefined;
  log: Logger;
  /** Relist period (ms). */
  resyncMs?: number;
}

type Secret = StoredObject & { type?: string; data?: Record<string, string> };

function isTokenSecret(obj: StoredObject): boolean {
  return (obj as Secret).type === SECRET_TYPE_SERVICE_ACCOUNT_TOKEN;
}

/** kube's IsServiceAccountToken: a token Secret naming this account (and its uid, when it names one). */
function isTokenOf(secret: StoredObject, sa: StoredObject): boolean {
  if (!isTokenSecret(secret)) return false;
  const a = secret.metadata.annotations ?? {};
  if (a[SERVICE_ACCOUNT_NAME_KEY] !== sa.metadata.name) return false;
  const uid = a[SERVICE_ACCOUNT_UID_KEY];
  return !uid || uid === sa.metadata.uid;
}

function decoded(secret: Secret, key: string): Buffer {
  return Buffer.from(secret.data?.[key] ?? '', 'base64');
}

/** secretUpdateNeeded: what of ca.crt, namespace and token is missing (or, for ca.crt, stale). */
function updatesNeeded(secret: Secret, rootCA: Buffer | undefined): { ca: boolean; namespace: boolean; token: boolean } {
  return {
    ca: !!rootCA && rootCA.length > 0 && !decoded(secret, ROOT_CA_KEY).equals(rootCA),
    namespace: decoded(secret, NAMESPACE_KEY).length === 0,
    token: decoded(secret, TOKEN_KEY).length === 0,
  };
}

/** Starts the controller; returns a stop function. */
export function startServiceAccountTokensController(deps: TokensControllerDeps): () => void {
  const rootCA = deps.rootCA ? Buffer.from(deps.rootCA) : undefined;
  const scope = (namespace: string) => ({ user: CONTROLLER_USER, namespace });

  /**
   * The account, when it exists with the given uid (any uid when none is given): the cache
   * first, then — as kube's fetchOnCacheMiss — a consistent read (the account may be brand new).
   */
  const getServiceAccount = async (namespace: string, name: string, uid: string | undefined): Promise<StoredObject | undefined> => {
    for (const rv of ['0', '']) {
      try {
        const sa = await deps.serviceAccounts.get(scope(namespace), name, rv);
        if (!uid || sa.metadata.uid === uid) return sa;
      } catch (e) {
        if (!isNotFound(e)) throw e;
      }
    }
    return undefined;
  };

  /** deleteToken: gone already, or replaced by another object of that name, is fine. */
  const deleteToken = async (secret: StoredObject): Promise<void> => {
    try {
      await deps.secrets.delete(scope(secret.metadata.namespace!), secret.metadata.name!, { preconditions: { uid: secret.metadata.uid! } });
      deps.log.v(2, 'deleted a service-account token secret', { namespace: secret.metadata.namespace, name: secret.metadata.name });
    } catch (e) {
      if (!isNotFound(e) && !isConflict(e)) throw e;
    }
  };

  /** generateTokenIfNeeded: fills what is missing, in one update of the live Secret. */
  const populate = async (sa: StoredObject, cached: Secret): Promise<void> => {
    const needed = updatesNeeded(cached, rootCA);
    if (!needed.ca && !needed.namespace && !needed.token) return;
    const namespace = cached.metadata.namespace!;
    const name = cached.metadata.name!;
    // Signing is asynchronous, the update function is not: sign first, use only if still needed.
    const token = needed.token
      ? await deps.issuer.issueLegacy({ namespace, serviceAccountName: sa.metadata.name!, serviceAccountUID: sa.metadata.uid!, secretName: name })
      : undefined;
    try {
      await deps.secrets.modify(scope(namespace), name, (obj) => {
        const live = obj as Secret;
        // Replaced by another Secret of that name meanwhile: leave it to its own event.
        if (live.metadata.uid !== cached.metadata.uid) return;
        const now = updatesNeeded(live, rootCA);
        const data = (live.data ??= {});
        if (now.ca && rootCA) data[ROOT_CA_KEY] = rootCA.toString('base64');
        if (now.namespace) data[NAMESPACE_KEY] = Buffer.from(namespace).toString('base64');
        if (now.token && token) data[TOKEN_KEY] = Buffer.from(token).toString('base64');
        const annotations = (live.metadata.annotations ??= {});
        annotations[SERVICE_ACCOUNT_NAME_KEY] = sa.metadata.name!;
        annotations[SERVICE_ACCOUNT_UID_KEY] = sa.metadata.uid!;
      });
      deps.log.v(2, 'populated a service-account token secret', { namespace, name });
    } catch (e) {
      // Deleted meanwhile: nothing to populate.
      if (!isNotFound(e)) throw e;
    }
  };

  /** syncSecret for a Secret that exists. */
  const syncSecret = async (secret: Secret): Promise<void> => {
    const a = secret.metadata.annotations ?? {};
    const saName = a[SERVICE_ACCOUNT_NAME_KEY];
    if (!saName || secret.metadata.deletionTimestamp) return;
    const sa = await getServiceAccount(secret.metadata.namespace!, saName, a[SERVICE_ACCOUNT_UID_KEY]);
    if (!sa) await deleteToken(secret);
    else await populate(sa, secret);
  };

  /** syncSecret for a deleted Secret: the account's `secrets` list no longer names it. */
  const removeSecretReference = async (secret: StoredObject): Promise<void> => {
    const a = secret.metadata.annotations ?? {};
    const saName = a[SERVICE_ACCOUNT_NAME_KEY];
    if (!saName) return;
    const namespace = secret.metadata.namespace!;
    const sa = await getServiceAccount(namespace, saName, a[SERVICE_ACCOUNT_UID_KEY]);
    const listed = (sa?.['secrets'] as Array<{ name?: string }> | undefined) ?? [];
    if (!sa || !listed.some((r) => r.name === secret.metadata.name)) return;
    try {
      await deps.serviceAccounts.modify(scope(namespace), saName, (obj) => {
        if (obj.metadata.uid !== sa.metadata.uid) return;
        const refs = obj['secrets'];
        if (Array.isArray(refs)) obj['secrets'] = refs.filter((r) => (r as { name?: string }).name !== secret.metadata.name);
      });
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
  };

  /** syncServiceAccount for a deleted account: deleteTokens. */
  const deleteTokens = async (sa: StoredObject): Promise<void> => {
    const namespace = sa.metadata.namespace!;
    const list = await deps.secrets.list(scope(namespace), { resourceVersion: '0' });
    for (const secret of list.items) {
      if (isTokenOf(secret, sa)) await deleteToken({ ...secret, metadata: { ...secret.metadata, namespace } });
    }
  };

  const resyncMs = deps.resyncMs ?? 60_000;
  const informers: Informer[] = [
    runInformer({
      store: deps.secrets,
      scope: scope(''),
      log: deps.log,
      resyncMs,
      predicate: isTokenSecret,
      onObject: (type, secret) => (type === 'DELETED' ? removeSecretReference(secret) : syncSecret(secret as Secret)),
    }),
    runInformer({
      store: deps.serviceAccounts,
      scope: scope(''),
      log: deps.log,
      resyncMs,
      // Only deletions have work: accounts are never listed (there may be very many), and the
      // objects of other events are never decoded.
      changesOnly: true,
      types: ['DELETED'],
      onObject: async (type, sa) => {
        if (type === 'DELETED') await deleteTokens(sa);
      },
    }),
  ];
  return () => informers.forEach((i) => i.stop());
}
