/**
 * kube's `start-cluster-authentication-info-controller` hook
 * (pkg/controlplane/controller/clusterauthenticationtrust): the ConfigMap
 * kube-system/extension-apiserver-authentication tells aggregated servers (metrics-server, …)
 * which client CA and which front-proxy headers to trust.
 */
import { readFileSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import { isAlreadyExists, isNotFound, type StoredObject, type UserInfo } from '@plinth/api';
import type { ResourceStore } from '../registry/store.js';

const CONTROLLER_USER: UserInfo = { name: 'system:apiserver', groups: ['system:masters'] };
export const EXTENSION_AUTH_CONFIGMAP = 'extension-apiserver-authentication';

export interface AuthenticationInfo {
  clientCaFile: string;
  requestheaderClientCaFile: string;
  requestheaderAllowedNames: readonly string[];
  requestheaderUsernameHeaders: readonly string[];
  requestheaderGroupHeaders: readonly string[];
  requestheaderExtraHeadersPrefix: readonly string[];
}

/** The ConfigMap's data as kube writes it: PEM bundles, and the header lists as JSON arrays. */
export function authenticationInfoData(info: AuthenticationInfo): Record<string, string> {
  const data: Record<string, string> = {};
  if (info.clientCaFile) data['client-ca-file'] = readFileSync(info.clientCaFile, 'utf8');
  if (info.requestheaderClientCaFile) {
    data['requestheader-client-ca-file'] = readFileSync(info.requestheaderClientCaFile, 'utf8');
    data['requestheader-username-headers'] = JSON.stringify(info.requestheaderUsernameHeaders);
    data['requestheader-group-headers'] = JSON.stringify(info.requestheaderGroupHeaders);
    data['requestheader-extra-headers-prefix'] = JSON.stringify(info.requestheaderExtraHeadersPrefix);
    data['requestheader-allowed-names'] = JSON.stringify(info.requestheaderAllowedNames);
  }
  return data;
}

/** Creates or updates the ConfigMap with this server's authentication configuration. */
export async function publishAuthenticationInfo(configMaps: ResourceStore, info: AuthenticationInfo): Promise<void> {
  const scope = { user: CONTROLLER_USER, namespace: 'kube-system' };
  const data = authenticationInfoData(info);
  // An empty map is not written (Go's omitempty), as kube stores it.
  const obj: StoredObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: EXTENSION_AUTH_CONFIGMAP, namespace: 'kube-system' }, ...(Object.keys(data).length > 0 ? { data } : {}) };
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      // Unchanged (every replica and restart publishes the same): no write at all.
      const current = await configMaps.get(scope, EXTENSION_AUTH_CONFIGMAP);
      if (isDeepStrictEqual(current['data'] ?? {}, data)) return;
      await configMaps.modify(scope, EXTENSION_AUTH_CONFIGMAP, (cm) => {
        if (Object.keys(data).length > 0) cm['data'] = data;
        else delete cm['data'];
      });
      return;
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
    try {
      await configMaps.create(scope, obj);
      return;
    } catch (e) {
      if (!isAlreadyExists(e)) throw e;
    }
  }
}

/**
 * The hook as kube runs it: its controller retries in the background, so a failed write (an
 * admission plugin refusing it, etcd briefly away) is logged and retried, never a failed start.
 */
export function startAuthenticationInfoPublisher(configMaps: ResourceStore, info: AuthenticationInfo, onError: (e: unknown) => void, retryMs = 10_000): Promise<void> {
  const attempt = (): Promise<void> =>
    publishAuthenticationInfo(configMaps, info).catch((e: unknown) => {
      onError(e);
      setTimeout(() => void attempt(), retryMs).unref();
    });
  // The first attempt finishes before the hook does (a client that starts after readiness finds it).
  return attempt();
}
