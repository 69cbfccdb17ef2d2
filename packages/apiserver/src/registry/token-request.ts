/**
 * serviceaccounts/<name>/token: a signed, bound, expiring token for a service account — kube
 * 1.24's TokenREST (pkg/registry/core/serviceaccount/storage/token.go). The order of the checks is
 * kube's: the name and namespace of the body, the service account, defaults, static validation,
 * validating admission, the bound object, the --service-account-max-token-expiration cap, then the
 * issuer.
 */
import {
  apiVersionOf,
  conflict,
  fieldErr,
  groupKindOf,
  internalError,
  invalid,
  isPlainObject,
  isStatusError,
  tokenRequestKind,
  validateTokenRequest,
  badRequest,
  type ObjectMeta,
  type StoredObject,
} from '@plinth/api';
import type { BoundObjectRef, TokenIssuer } from '@plinth/auth';
import type { RequestScope } from './store.js';
import type { CreateOnlyStorage } from './create-only.js';

/** kube's rest.Getter: one object by name, or a NotFound StatusError. */
export interface ObjectGetter {
  get(scope: RequestScope, name: string): Promise<StoredObject>;
}

export interface TokenRequestDeps {
  serviceAccounts: ObjectGetter;
  secrets: ObjectGetter;
  pods: ObjectGetter;
  /** Signs the tokens; undefined when the server has none (every request is then a 500). */
  issuer: TokenIssuer | undefined;
  /** --api-audiences: what a request that names no audience gets (the issuer's, when there is one). */
  apiAudiences: readonly string[];
  /** --service-account-max-token-expiration in seconds; 0: no cap. */
  maxExpirationSeconds: number;
}

const TOKEN_REQUEST = groupKindOf(tokenRequestKind);

/** schema.FromAPIVersionAndKind: an apiVersion that is no group/version leaves the group empty. */
function groupVersionKind(apiVersion: string, kind: string): { group: string; version: string; kind: string } {
  const parts = apiVersion.split('/');
  if (parts.length === 1) return { group: '', version: apiVersion, kind };
  if (parts.length === 2) return { group: parts[0]!, version: parts[1]!, kind };
  return { group: '', version: '', kind };
}

function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

/** Go's RFC 3339 with second precision (metav1.Time). */
function rfc3339(d: Date): string {
  return new Date(Math.floor(d.getTime() / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

export function createTokenRequestStorage(deps: TokenRequestDeps): CreateOnlyStorage {
  return {
    async create(ctx, obj, validate) {
      const { name, namespace } = ctx;
      const meta = obj.metadata;
      if (meta.name && meta.name !== name) {
        throw invalid(TOKEN_REQUEST, name, [fieldErr.invalid('metadata.name', meta.name, 'must match the service account name if specified')]);
      }
      if (meta.namespace && meta.namespace !== namespace) {
        throw invalid(TOKEN_REQUEST, name, [fieldErr.invalid('metadata.namespace', meta.namespace, 'must match the service account namespace if specified')]);
      }
      const sa = await deps.serviceAccounts.get({ user: ctx.user, namespace }, name);

      const spec = isPlainObject(obj['spec']) ? obj['spec'] : {};
      const given = Array.isArray(spec['audiences']) ? spec['audiences'].filter((a): a is string => typeof a === 'string') : [];
      const audiences = given.length > 0 ? given : [...(deps.issuer?.apiAudiences ?? deps.apiAudiences)];
      const ref = isPlainObject(spec['boundObjectRef']) ? spec['boundObjectRef'] : undefined;
      const issuedAt = new Date();
      const { name: _n, namespace: _ns, creationTimestamp: _c, ...restMeta } = meta;
      const metadata: ObjectMeta = { name: sa.metadata.name ?? name, namespace: sa.metadata.namespace ?? namespace, ...restMeta, creationTimestamp: rfc3339(issuedAt) };
      const request: StoredObject = {
        kind: tokenRequestKind.kind,
        apiVersion: apiVersionOf(tokenRequestKind),
        metadata,
        spec: { audiences, expirationSeconds: spec['expirationSeconds'], boundObjectRef: ref ?? null },
      };
      const errs = validateTokenRequest(request);
      if (errs.length > 0) throw invalid(TOKEN_REQUEST, '', errs);
      await validate(request);

      let boundObject: BoundObjectRef | undefined;
      if (ref) {
        const gvk = groupVersionKind(str(ref['apiVersion']), str(ref['kind']));
        const refName = str(ref['name']);
        let uid: string;
        if (gvk.group === '' && gvk.kind === 'Pod') {
          const pod = await deps.pods.get({ user: ctx.user, namespace }, refName);
          const podSpec = isPlainObject(pod['spec']) ? pod['spec'] : {};
          if (name !== str(podSpec['serviceAccountName'])) {
            throw badRequest(`cannot bind token for serviceaccount ${JSON.stringify(name)} to pod running with different serviceaccount name.`);
          }
          uid = pod.metadata.uid ?? '';
        } else if (gvk.group === '' && gvk.kind === 'Secret') {
          const secret = await deps.secrets.get({ user: ctx.user, namespace }, refName);
          uid = secret.metadata.uid ?? '';
        } else {
          throw badRequest(`cannot bind token to object of type ${gvk.group}/${gvk.version}, Kind=${gvk.kind}`);
        }
        const wantUID = str(ref['uid']);
        if (wantUID && wantUID !== uid) {
          throw conflict(
            { group: gvk.group, resource: gvk.kind },
            refName,
            `the UID in the bound object reference (${wantUID}) does not match the UID in record. The object might have been deleted and then recreated`,
          );
        }
        boundObject = { kind: gvk.kind as 'Pod' | 'Secret', apiVersion: str(ref['apiVersion']) || 'v1', name: refName, uid };
      }

      let expirationSeconds = Number(spec['expirationSeconds']);
      if (deps.maxExpirationSeconds > 0 && expirationSeconds > deps.maxExpirationSeconds) expirationSeconds = deps.maxExpirationSeconds;
      (request['spec'] as Record<string, unknown>)['expirationSeconds'] = expirationSeconds;

      if (!deps.issuer) throw internalError(new Error('no service account token issuer is configured'));
      let issued: Awaited<ReturnType<TokenIssuer['issue']>>;
      try {
        issued = await deps.issuer.issue({
          namespace: metadata.namespace!,
          name: metadata.name!,
          uid: sa.metadata.uid ?? '',
          audiences,
          expirationSeconds,
          ...(boundObject ? { boundObject } : {}),
        });
      } catch (e) {
        if (isStatusError(e)) throw e;
        throw internalError(new Error(`failed to generate token: ${e instanceof Error ? e.message : String(e)}`));
      }
      request['status'] = { token: issued.token, expirationTimestamp: rfc3339(issued.expirationTimestamp) };
      return request;
    },
  };
}
