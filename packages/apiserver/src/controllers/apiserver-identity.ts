/**
 * API server identity (kube 1.26+'s APIServerIdentity, alpha in 1.24 under other names): every
 * replica keeps a Lease in kube-system named `apiserver-<id>`, labelled
 * `apiserver.kubernetes.io/identity=kube-apiserver`, whose holderIdentity is `<lease name>_<uuid>`
 * (a restart keeps the name, the holder changes), renewed every 10 s with a 1 h duration. Leases
 * not renewed within their duration belong to replicas that are gone: a garbage collector deletes
 * them (kube's apiserverleasegc). The live leases also say how many replicas serve (kube's
 * establishing controller waits for the others when there are several).
 */
import { createHash, randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { isConflict, isNotFound, type StoredObject, type UserInfo } from '@plinth/api';
import type { ResourceStore } from '../registry/store.js';
import type { Logger } from '../log.js';
import { microTime } from './leader-election.js';

export const IDENTITY_LEASE_NAMESPACE = 'kube-system';
export const IDENTITY_LABEL = 'apiserver.kubernetes.io/identity';
export const IDENTITY_LABEL_VALUE = 'kube-apiserver';
/** kube's IdentityLeaseDurationSeconds and IdentityLeaseRenewIntervalPeriod. */
export const IDENTITY_LEASE_DURATION_SECONDS = 3600;
export const IDENTITY_LEASE_RENEW_MS = 10_000;

const USER: UserInfo = { name: 'system:apiserver', uid: '', groups: ['system:masters'] };
const SCOPE = { user: USER, namespace: IDENTITY_LEASE_NAMESPACE };

/**
 * `apiserver-` + 16 hex digits of a hash of the host name (kube) and the serving port: replicas
 * on one host (the local cluster) differ by port; a restarted replica gets its own lease back.
 */
export function identityLeaseName(host: string, port: number): string {
  return `apiserver-${createHash('sha256').update(`${host}:${port}`).digest('hex').slice(0, 16)}`;
}

interface LeaseLike extends StoredObject {
  spec?: { holderIdentity?: string; leaseDurationSeconds?: number; renewTime?: string };
}

/** Whether an identity lease was renewed within its duration at `nowMs`. */
export function isLive(lease: StoredObject, nowMs: number): boolean {
  const spec = (lease as LeaseLike).spec ?? {};
  const renewed = spec.renewTime ? Date.parse(spec.renewTime) : NaN;
  return Number.isFinite(renewed) && renewed + (spec.leaseDurationSeconds ?? 0) * 1000 > nowMs;
}

const isIdentityLease = (l: StoredObject): boolean => l.metadata.labels?.[IDENTITY_LABEL] === IDENTITY_LABEL_VALUE;

export interface IdentityLeaseDeps {
  leases: ResourceStore;
  /** The port this replica serves on (part of its id). */
  port: () => number;
  log: Logger;
  now?: () => number;
  /** ms between renewals (kube: 10 s). */
  renewMs?: number;
}

export interface IdentityLeases {
  /** This replica's lease name, once started. */
  name(): string;
  /** Starts renewing; returns a stop function. */
  start(): () => void;
  /** Deletes the identity leases that expired (what the garbage collector runs each period). */
  collectGarbage(): Promise<number>;
  /** How many replicas hold a live identity lease, as the cache has them (at least 1: this one). */
  liveCount(): Promise<number>;
}

export function identityLeases(deps: IdentityLeaseDeps): IdentityLeases {
  const now = deps.now ?? Date.now;
  let leaseName = '';
  let holder = '';

  const renew = async (): Promise<void> => {
    const t = microTime(now());
    const spec = { holderIdentity: holder, leaseDurationSeconds: IDENTITY_LEASE_DURATION_SECONDS, renewTime: t };
    try {
      await deps.leases.modify(SCOPE, leaseName, (obj) => {
        (obj as LeaseLike).spec = { ...(obj as LeaseLike).spec, ...spec };
        obj.metadata.labels = { ...obj.metadata.labels, [IDENTITY_LABEL]: IDENTITY_LABEL_VALUE, 'kubernetes.io/hostname': hostname() };
      });
    } catch (e) {
      if (!isNotFound(e)) throw e;
      await deps.leases.create(SCOPE, {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name: leaseName, namespace: IDENTITY_LEASE_NAMESPACE, labels: { [IDENTITY_LABEL]: IDENTITY_LABEL_VALUE, 'kubernetes.io/hostname': hostname() } },
        spec,
      } as unknown as StoredObject);
    }
  };

  const listIdentityLeases = async (): Promise<StoredObject[]> => (await deps.leases.list(SCOPE, { resourceVersion: '0' })).items.filter(isIdentityLease);

  return {
    name: () => leaseName,
    start() {
      leaseName = identityLeaseName(hostname(), deps.port());
      holder = `${leaseName}_${randomUUID()}`;
      let stopped = false;
      let timer: NodeJS.Timeout | undefined;
      const tick = async (): Promise<void> => {
        try {
          await renew();
        } catch (e) {
          deps.log.v(2, 'identity lease: renewal failed', { lease: leaseName, error: String(e) });
        }
        if (!stopped) {
          timer = setTimeout(() => void tick(), deps.renewMs ?? IDENTITY_LEASE_RENEW_MS);
          timer.unref();
        }
      };
      void tick();
      return () => {
        stopped = true;
        clearTimeout(timer);
      };
    },
    async collectGarbage() {
      const t = now();
      let deleted = 0;
      for (const lease of await listIdentityLeases()) {
        if (isLive(lease, t) || lease.metadata.name === leaseName) continue;
        try {
          // Only the expired object as read: a replica that came back and renewed it keeps it.
          await deps.leases.delete(SCOPE, lease.metadata.name!, { preconditions: { uid: lease.metadata.uid!, resourceVersion: lease.metadata.resourceVersion! } });
          deleted++;
          deps.log.info('identity lease: deleted an expired lease', { lease: lease.metadata.name });
        } catch (e) {
          if (!isNotFound(e) && !isConflict(e)) throw e;
        }
      }
      return deleted;
    },
    async liveCount() {
      const t = now();
      const live = (await listIdentityLeases()).filter((l) => isLive(l, t) && l.metadata.name !== leaseName).length;
      return live + 1;
    },
  };
}
