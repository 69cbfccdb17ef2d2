/**
 * kube-controller-manager's `root-ca-cert-publisher` (pkg/controller/certificates/rootcacertpublisher,
 * 1.24): every namespace has the ConfigMap `kube-root-ca.crt` whose `ca.crt` is the CA bundle
 * clients verify the apiserver's serving certificate with (the ServiceAccount admission plugin's
 * projected volume mounts it in every pod). It is created for a new namespace, and recreated or
 * rewritten when someone deletes or changes it.
 */
import { isAlreadyExists, isNotFound, StatusError, type StoredObject, type UserInfo } from '@plinth/api';
import type { ResourceStore } from '../registry/store.js';
import type { Logger } from '../log.js';
import { runInformer, type Informer } from './informer.js';
import { createWorkQueue } from './work-queue.js';

export const ROOT_CA_CONFIGMAP_NAME = 'kube-root-ca.crt';
export const DESCRIPTION_ANNOTATION = 'kubernetes.io/description';
/** The annotation's value, as kube writes it (clients and tests compare it). */
export const ROOT_CA_DESCRIPTION =
  'Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. ' +
  'No other usage is guaranteed across distributions of Kubernetes clusters.';

const CONTROLLER_USER: UserInfo = { name: 'system:serviceaccount:kube-system:root-ca-cert-publisher', groups: ['system:masters'] };

export interface RootCACertPublisherDeps {
  namespaces: ResourceStore;
  configMaps: ResourceStore;
  /** The PEM bundle: the CA of the serving certificate. */
  rootCA: string;
  log: Logger;
  /** Relist period (ms): missed work is redone then. */
  resyncMs?: number;
}

/** Whether the create failed because the namespace is going or gone (kube ignores those). */
function isNamespaceGoing(e: unknown): boolean {
  if (isNotFound(e)) return true;
  return e instanceof StatusError && (e.details?.causes ?? []).some((c) => c.reason === 'NamespaceTerminating');
}

/** Starts the controller; returns a stop function. */
export function startRootCACertPublisher(deps: RootCACertPublisherDeps): () => void {
  const data = { 'ca.crt': deps.rootCA };
  const isCurrent = (cm: StoredObject): boolean => {
    const d = (cm['data'] ?? {}) as Record<string, unknown>;
    const keys = Object.keys(d);
    return keys.length === 1 && d['ca.crt'] === deps.rootCA && !!cm.metadata.annotations?.[DESCRIPTION_ANNOTATION];
  };
  const queue = createWorkQueue({
    name: 'root-ca-cert-publisher',
    log: deps.log,
    async process(ns) {
      const scope = { user: CONTROLLER_USER, namespace: ns };
      let cm: StoredObject | undefined;
      try {
        cm = await deps.configMaps.get(scope, ROOT_CA_CONFIGMAP_NAME, '0');
      } catch (e) {
        if (!isNotFound(e)) throw e;
      }
      if (!cm) {
        try {
          await deps.configMaps.create(scope, {
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: { name: ROOT_CA_CONFIGMAP_NAME, namespace: ns, annotations: { [DESCRIPTION_ANNOTATION]: ROOT_CA_DESCRIPTION } },
            data,
          });
          deps.log.v(3, 'root-ca-cert-publisher: created the ConfigMap', { namespace: ns });
        } catch (e) {
          // The cache was behind: an existing map is checked again from its next event or the relist.
          if (isAlreadyExists(e)) return queue.add(ns);
          if (!isNamespaceGoing(e)) throw e;
        }
        return;
      }
      if (isCurrent(cm)) return;
      try {
        await deps.configMaps.modify(scope, ROOT_CA_CONFIGMAP_NAME, (obj) => {
          obj['data'] = { ...data };
          obj.metadata.annotations = { ...obj.metadata.annotations, [DESCRIPTION_ANNOTATION]: ROOT_CA_DESCRIPTION };
        });
        deps.log.v(3, 'root-ca-cert-publisher: restored the ConfigMap', { namespace: ns });
      } catch (e) {
        if (isNotFound(e)) return queue.add(ns); // deleted meanwhile: create it again
        throw e;
      }
    },
  });
  const all = { user: CONTROLLER_USER, namespace: '' };
  const informers: Informer[] = [
    runInformer({
      store: deps.namespaces,
      scope: all,
      log: deps.log,
      resyncMs: deps.resyncMs ?? 300_000,
      types: ['ADDED', 'MODIFIED'],
      onObject: (type, ns) => {
        // kube: every added namespace; an updated one only while it is Active.
        if (type === 'MODIFIED' && (ns['status'] as { phase?: string } | undefined)?.phase !== 'Active') return;
        queue.add(ns.metadata.name!);
      },
    }),
    runInformer({
      store: deps.configMaps,
      scope: all,
      log: deps.log,
      resyncMs: deps.resyncMs ?? 300_000,
      changesOnly: true,
      types: ['MODIFIED', 'DELETED'],
      onObject: (_type, cm) => {
        if (cm.metadata.name === ROOT_CA_CONFIGMAP_NAME) queue.add(cm.metadata.namespace!);
      },
    }),
  ];
  return () => {
    informers.forEach((i) => i.stop());
    queue.stop();
  };
}
