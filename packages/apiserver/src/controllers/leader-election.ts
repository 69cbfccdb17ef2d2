/**
 * Leader election for the singleton work of a replicated plinth (client-go's leaderelection with
 * a `leases` resource lock): a coordination.k8s.io/v1 Lease whose holder runs the singleton
 * controllers. The algorithm is client-go's tryAcquireOrRenew:
 *  - a candidate reads the Lease; held by another and renewed (as this replica observed it: a
 *    change of the record restarts the clock, local time only, no clock skew) within the lease
 *    duration → wait a retry period and look again;
 *  - otherwise write itself as holder with the resourceVersion it read (optimistic concurrency:
 *    of two candidates one wins, the other gets a Conflict), `leaseTransitions` + 1 on a change of
 *    holder;
 *  - the leader renews every retry period; when no renewal succeeds for the renew deadline it
 *    stops leading (its work is stopped) and becomes a candidate again.
 * On shutdown the leader releases the Lease (client-go's ReleaseOnCancel: empty holder, 1 s
 * duration), so the next replica takes over at once instead of after the lease duration.
 */
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { isAlreadyExists, isConflict, isNotFound, type StoredObject, type UserInfo } from '@plinth/api';
import type { ResourceStore } from '../registry/store.js';
import type { Logger } from '../log.js';

const ELECTION_USER: UserInfo = { name: 'system:apiserver', uid: '', groups: ['system:masters'] };

/** client-go's JitterFactor for the retry period. */
const JITTER_FACTOR = 1.2;

/** metav1.MicroTime's wire form (six fractional digits, UTC). */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

export interface LeaderElectionConfig {
  /** The store of coordination.k8s.io/v1 leases. */
  leases: ResourceStore;
  namespace: string;
  name: string;
  /** This candidate's identity (client-go: `<hostname>_<uuid>`). */
  identity?: string;
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
  log: Logger;
  /** The clock (ms since the epoch). */
  now?: () => number;
}

/** Work that runs only on the leader: started when leading begins, stopped when it ends. */
export type LeaderTask = () => () => void;

export interface LeaderElector {
  readonly identity: string;
  /** Begins campaigning (idempotent). */
  start(): void;
  isLeader(): boolean;
  /** Runs `task` whenever this replica leads (now, if it already does). */
  run(name: string, task: LeaderTask): void;
  /** Resolves when this replica leads, or with false once `timeoutMs` passes. */
  waitForLeadership(timeoutMs: number): Promise<boolean>;
  /** Stops leader work and campaigning; a leader releases the Lease (bounded by `timeoutMs`). */
  stop(timeoutMs?: number): Promise<void>;
}

interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}

const specOf = (lease: StoredObject): LeaseSpec => ((lease as { spec?: LeaseSpec }).spec ?? {});

/** A record's identity for "did it change since I last looked" (client-go compares the raw record). */
const recordKey = (spec: LeaseSpec): string => JSON.stringify([spec.holderIdentity ?? '', spec.leaseDurationSeconds ?? 0, spec.acquireTime ?? '', spec.renewTime ?? '', spec.leaseTransitions ?? 0]);

export function createLeaderElector(cfg: LeaderElectionConfig): LeaderElector {
  const now = cfg.now ?? Date.now;
  const identity = cfg.identity ?? `${hostname()}_${randomUUID()}`;
  const scope = { user: ELECTION_USER, namespace: cfg.namespace };
  const leaseSeconds = Math.max(1, Math.round(cfg.leaseDurationMs / 1000));
  const tasks: Array<{ name: string; task: LeaderTask; stop?: () => void }> = [];
  const waiters = new Set<() => void>();
  let observed = '';
  let observedAt = 0;
  let leading = false;
  let started = false;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let lastRenew = 0;
  /** The holder of the record last read ('' when none). */
  let lastHolder = '';

  const startTasks = (): void => {
    for (const t of tasks) startTask(t);
    for (const w of waiters) w();
    waiters.clear();
  };
  const startTask = (t: (typeof tasks)[number]): void => {
    if (t.stop) return;
    try {
      t.stop = t.task();
    } catch (e) {
      cfg.log.error('leader task failed to start', { task: t.name, error: String(e) });
    }
  };
  const stopTasks = (): void => {
    for (const t of tasks) {
      const stop = t.stop;
      t.stop = undefined;
      stop?.();
    }
  };

  /** client-go's tryAcquireOrRenew: true when this replica holds the Lease afterwards. */
  const tryAcquireOrRenew = async (): Promise<boolean> => {
    const t = now();
    const fresh: LeaseSpec = { holderIdentity: identity, leaseDurationSeconds: leaseSeconds, acquireTime: microTime(t), renewTime: microTime(t), leaseTransitions: 0 };
    let current: StoredObject;
    try {
      current = await cfg.leases.get(scope, cfg.name);
    } catch (e) {
      if (!isNotFound(e)) throw e;
      await cfg.leases.create(scope, { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: cfg.name, namespace: cfg.namespace }, spec: fresh } as unknown as StoredObject);
      observed = recordKey(fresh);
      observedAt = t;
      return true;
    }
    const spec = specOf(current);
    const key = recordKey(spec);
    if (key !== observed) {
      observed = key;
      observedAt = t;
    }
    const holder = spec.holderIdentity ?? '';
    lastHolder = holder;
    const duration = (spec.leaseDurationSeconds ?? leaseSeconds) * 1000;
    if (holder !== '' && holder !== identity && observedAt + duration > t) return false;
    const next: LeaseSpec =
      holder === identity
        ? { ...fresh, acquireTime: spec.acquireTime ?? fresh.acquireTime, leaseTransitions: spec.leaseTransitions ?? 0 }
        : { ...fresh, leaseTransitions: (spec.leaseTransitions ?? 0) + 1 };
    // The resourceVersion read: a concurrent candidate's write makes this a Conflict.
    await cfg.leases.update(scope, cfg.name, { ...current, spec: next } as StoredObject);
    observed = recordKey(next);
    observedAt = t;
    return true;
  };

  const attempt = async (): Promise<boolean> => {
    try {
      return await tryAcquireOrRenew();
    } catch (e) {
      if (!isConflict(e) && !isAlreadyExists(e)) cfg.log.v(2, 'leader election: attempt failed', { lease: `${cfg.namespace}/${cfg.name}`, error: String(e) });
      return false;
    }
  };

  const schedule = (ms: number): void => {
    if (stopped) return;
    timer = setTimeout(() => void loop(), ms);
    timer.unref();
  };

  /** The attempt under way (stop waits for it: a renewal racing the release would make it a Conflict). */
  let inFlight: Promise<boolean> | undefined;

  const loop = async (): Promise<void> => {
    if (stopped) return;
    inFlight = attempt();
    const ok = await inFlight;
    inFlight = undefined;
    if (stopped) return;
    const t = now();
    if (ok) {
      lastRenew = t;
      if (!leading) {
        leading = true;
        cfg.log.info('leader election: became leader', { lease: `${cfg.namespace}/${cfg.name}`, identity });
        startTasks();
      }
      schedule(cfg.retryPeriodMs);
      return;
    }
    if (leading && (t - lastRenew >= cfg.renewDeadlineMs || (lastHolder !== '' && lastHolder !== identity))) {
      // client-go: failed to renew within the renew deadline → leadership lost; a record that
      // names another holder ends it at once.
      leading = false;
      cfg.log.info('leader election: leadership lost', { lease: `${cfg.namespace}/${cfg.name}`, identity });
      stopTasks();
    }
    // A leader retries at the retry period; a candidate with jitter (client-go's JitterUntil).
    schedule(leading ? cfg.retryPeriodMs : cfg.retryPeriodMs * (1 + Math.random() * (JITTER_FACTOR - 1)));
  };

  const release = async (): Promise<void> => {
    const current = await cfg.leases.get(scope, cfg.name);
    const spec = specOf(current);
    if (spec.holderIdentity !== identity) return;
    const t = microTime(now());
    await cfg.leases.update(scope, cfg.name, { ...current, spec: { leaseDurationSeconds: 1, acquireTime: t, renewTime: t, leaseTransitions: spec.leaseTransitions ?? 0 } } as StoredObject);
  };

  return {
    identity,
    start() {
      if (started || stopped) return;
      started = true;
      void loop();
    },
    isLeader: () => leading,
    run(name, task) {
      const t = { name, task } as (typeof tasks)[number];
      tasks.push(t);
      if (leading) startTask(t);
    },
    waitForLeadership(timeoutMs) {
      if (leading) return Promise.resolve(true);
      return new Promise((resolveWait) => {
        const done = (): void => {
          clearTimeout(t);
          resolveWait(true);
        };
        const t = setTimeout(() => {
          waiters.delete(done);
          resolveWait(false);
        }, timeoutMs);
        t.unref();
        waiters.add(done);
      });
    },
    async stop(timeoutMs = 2000) {
      if (stopped) return;
      stopped = true;
      clearTimeout(timer);
      leading = false;
      stopTasks();
      await inFlight;
      // Released when the Lease names this replica (also if the attempt under way just acquired it).
      if (!started) return;
      let t: NodeJS.Timeout | undefined;
      await Promise.race([release().catch((e: unknown) => cfg.log.v(2, 'leader election: release failed', { error: String(e) })), new Promise<void>((r) => (t = setTimeout(r, timeoutMs)))]);
      clearTimeout(t);
    },
  };
}

/** The elector without --leader-elect: this replica always leads (every task runs at once). */
export function alwaysLeader(): LeaderElector {
  const stops: Array<() => void> = [];
  let stopped = false;
  return {
    identity: hostname(),
    start() {},
    isLeader: () => !stopped,
    run(_name, task) {
      if (!stopped) stops.push(task());
    },
    waitForLeadership: async () => !stopped,
    async stop() {
      stopped = true;
      for (const s of stops.splice(0)) s();
    },
  };
}
