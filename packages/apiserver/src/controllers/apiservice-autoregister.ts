/**
 * kube-apiserver's autoregister controller (cmd/kube-apiserver/app/aggregator.go,
 * kube-aggregator pkg/controllers/autoregister): one local APIService per served group/version,
 * labelled `kube-aggregator.kubernetes.io/automanaged: onstart`, with kube's group and version
 * priorities. Synced at start: missing ones are created, changed ones put back, and `onstart`
 * ones no longer served (a `--runtime-config` change) deleted.
 */
import { AUTOMANAGED_LABEL, isAlreadyExists, isNotFound, type StoredObject, type UserInfo } from '@plinth/api';
import type { ResourceStore } from '../registry/store.js';

const CONTROLLER_USER: UserInfo = { name: 'system:apiserver', groups: ['system:masters'] };

/** kube 1.24's apiVersionPriorities (group priority minimum, version priority). */
const PRIORITIES: Readonly<Record<string, readonly [number, number]>> = {
  '/v1': [18000, 1],
  'apiregistration.k8s.io/v1': [18000, 15],
  'apps/v1': [17800, 15],
  'events.k8s.io/v1': [17750, 15],
  'events.k8s.io/v1beta1': [17750, 5],
  'authentication.k8s.io/v1': [17700, 15],
  'authentication.k8s.io/v1beta1': [17700, 9],
  'authorization.k8s.io/v1': [17600, 15],
  'authorization.k8s.io/v1beta1': [17600, 9],
  'autoscaling/v1': [17500, 15],
  'autoscaling/v2': [17500, 30],
  'autoscaling/v2beta1': [17500, 9],
  'autoscaling/v2beta2': [17500, 1],
  'batch/v1': [17400, 15],
  'batch/v1beta1': [17400, 9],
  'certificates.k8s.io/v1': [17300, 15],
  'networking.k8s.io/v1': [17200, 15],
  'policy/v1': [17100, 15],
  'policy/v1beta1': [17100, 9],
  'rbac.authorization.k8s.io/v1': [17000, 15],
  'storage.k8s.io/v1': [16800, 15],
  'storage.k8s.io/v1beta1': [16800, 9],
  'apiextensions.k8s.io/v1': [16700, 15],
  'admissionregistration.k8s.io/v1': [16700, 15],
  'scheduling.k8s.io/v1': [16600, 15],
  'coordination.k8s.io/v1': [16500, 15],
  'node.k8s.io/v1': [16300, 15],
  'node.k8s.io/v1beta1': [16300, 9],
  'discovery.k8s.io/v1': [16200, 15],
  'discovery.k8s.io/v1beta1': [16200, 12],
  'flowcontrol.apiserver.k8s.io/v1beta2': [16100, 15],
  'flowcontrol.apiserver.k8s.io/v1beta1': [16100, 12],
};

/** kube's group priority of a built-in group; CRD groups get 1000 (kube's crdregistration controller). */
export function localGroupPriority(group: string): number {
  for (const [gv, p] of Object.entries(PRIORITIES)) if (gv.slice(0, gv.lastIndexOf('/')) === group) return p[0];
  return 1000;
}

/** The local APIService kube registers for a served group/version; undefined when kube's table has none. */
export function localAPIService(group: string, version: string): StoredObject | undefined {
  const p = PRIORITIES[`${group}/${version}`];
  if (!p) return undefined;
  return {
    apiVersion: 'apiregistration.k8s.io/v1',
    kind: 'APIService',
    metadata: { name: `${version}.${group}`, labels: { [AUTOMANAGED_LABEL]: 'onstart' } },
    // The core group's is "" (omitempty: not written).
    spec: { ...(group ? { group } : {}), version, groupPriorityMinimum: p[0], versionPriority: p[1] },
  };
}

const sameSpec = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

/** Syncs the local APIServices with the served group/versions (kube's sync-on-start). */
export async function syncLocalAPIServices(store: ResourceStore, served: ReadonlyArray<{ group: string; version: string }>): Promise<void> {
  const scope = { user: CONTROLLER_USER, namespace: '' };
  const desired = new Map<string, StoredObject>();
  for (const gv of served) {
    const svc = localAPIService(gv.group, gv.version);
    if (svc) desired.set(svc.metadata.name!, svc);
  }
  const existing = await store.list(scope, {});
  const byName = new Map(existing.items.map((o) => [o.metadata.name!, o]));
  for (const [name, svc] of desired) {
    const have = byName.get(name);
    if (!have) {
      try {
        await store.create(scope, svc);
      } catch (e) {
        if (!isAlreadyExists(e)) throw e;
      }
      continue;
    }
    // kube leaves an APIService a user took over (no automanaged label) alone.
    if (!have.metadata.labels?.[AUTOMANAGED_LABEL]) continue;
    if (sameSpec(have['spec'], svc['spec']) && have.metadata.labels[AUTOMANAGED_LABEL] === 'onstart') continue;
    await store.modify(scope, name, (o) => {
      o['spec'] = svc['spec'];
      o.metadata.labels = { ...o.metadata.labels, [AUTOMANAGED_LABEL]: 'onstart' };
    });
  }
  for (const [name, have] of byName) {
    if (desired.has(name) || have.metadata.labels?.[AUTOMANAGED_LABEL] !== 'onstart') continue;
    try {
      await store.delete(scope, name);
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
  }
}

/**
 * kube's crdRegistrationController: an APIService per group/version served by CRDs alone
 * (priorities 1000 and 100, label `automanaged: true`), removed when no CRD serves it any more.
 */
export async function syncCustomResourceAPIServices(store: ResourceStore, served: ReadonlyArray<{ group: string; version: string }>): Promise<void> {
  const scope = { user: CONTROLLER_USER, namespace: '' };
  const desired = new Map<string, StoredObject>();
  for (const { group, version } of served) {
    if (PRIORITIES[`${group}/${version}`]) continue;
    const name = `${version}.${group}`;
    desired.set(name, {
      apiVersion: 'apiregistration.k8s.io/v1',
      kind: 'APIService',
      metadata: { name, labels: { [AUTOMANAGED_LABEL]: 'true' } },
      spec: { group, version, groupPriorityMinimum: 1000, versionPriority: 100 },
    });
  }
  const existing = new Map((await store.list(scope, {})).items.map((o) => [o.metadata.name!, o]));
  for (const [name, svc] of desired) {
    if (existing.has(name)) continue;
    try {
      await store.create(scope, svc);
    } catch (e) {
      if (!isAlreadyExists(e)) throw e;
    }
  }
  for (const [name, have] of existing) {
    if (desired.has(name) || have.metadata.labels?.[AUTOMANAGED_LABEL] !== 'true') continue;
    try {
      await store.delete(scope, name);
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
  }
}
