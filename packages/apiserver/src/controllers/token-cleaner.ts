/**
 * The token cleaner (kube-controller-manager's `tokencleaner`, pkg/controller/bootstrap): deletes
 * bootstrap token Secrets in kube-system once their `expiration` has passed (or cannot be
 * parsed). A Secret not yet expired is looked at again when it expires — a timer at its
 * expiration time, as kube's queue.AddAfter(key, ttl) — so nothing polls.
 */
import { isConflict, isNotFound, type StoredObject, type UserInfo } from '@plinth/api';
import { BOOTSTRAP_TOKEN_NAMESPACE, SECRET_TYPE_BOOTSTRAP_TOKEN, bootstrapTokenExpiration } from '@plinth/auth';
import type { ResourceStore } from '../registry/store.js';
import type { Logger } from '../log.js';
import { runInformer } from './informer.js';

const CONTROLLER_USER: UserInfo = { name: 'system:apiserver', groups: ['system:masters'] };

/** setTimeout's limit (~24.8 days); a later expiration is re-checked then, and rescheduled. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export interface TokenCleanerDeps {
  secrets: ResourceStore;
  log: Logger;
  /** Relist period (ms): missed work, such as a failed delete, is retried then. */
  resyncMs?: number;
  /** The clock (ms since the epoch). */
  now?: () => number;
}

const isBootstrapToken = (s: StoredObject): boolean => s['type'] === SECRET_TYPE_BOOTSTRAP_TOKEN;

/** Starts the controller; returns a stop function. */
export function startTokenCleaner(deps: TokenCleanerDeps): () => void {
  const now = deps.now ?? Date.now;
  const scope = { user: CONTROLLER_USER, namespace: BOOTSTRAP_TOKEN_NAMESPACE };
  /** The latest state of each bootstrap token Secret, by name: what a timer looks at when it fires. */
  const latest = new Map<string, StoredObject>();
  const timers = new Map<string, NodeJS.Timeout>();
  let stopped = false;

  const unschedule = (name: string): void => {
    clearTimeout(timers.get(name));
    timers.delete(name);
  };

  const evaluate = async (name: string): Promise<void> => {
    unschedule(name);
    const secret = latest.get(name);
    if (stopped || !secret) return;
    const { expired, remainingMs } = bootstrapTokenExpiration(secret, now());
    if (expired) {
      deps.log.v(3, 'token cleaner: deleting expired secret', { secret: `${BOOTSTRAP_TOKEN_NAMESPACE}/${name}` });
      try {
        // The UID precondition: a Secret re-created under the same name meanwhile is not this one.
        const uid = secret.metadata.uid;
        await deps.secrets.delete(scope, name, uid ? { preconditions: { uid } } : {});
      } catch (e) {
        // NotFound: already gone; Conflict: the precondition failed (another Secret by now).
        if (!isNotFound(e) && !isConflict(e)) deps.log.v(3, 'token cleaner: error deleting secret', { secret: `${BOOTSTRAP_TOKEN_NAMESPACE}/${name}`, error: String(e) });
      }
    } else if (remainingMs > 0) {
      const timer = setTimeout(() => void evaluate(name), Math.min(remainingMs, MAX_TIMER_MS));
      timer.unref();
      timers.set(name, timer);
    }
  };

  const informer = runInformer({
    store: deps.secrets,
    scope,
    log: deps.log,
    resyncMs: deps.resyncMs ?? 5 * 60_000,
    // kube filters the shared Secret informer on type and namespace; the scope gives the namespace.
    predicate: isBootstrapToken,
    onObject: async (type, secret) => {
      const name = secret.metadata.name!;
      if (type === 'DELETED') {
        latest.delete(name);
        unschedule(name);
        return;
      }
      latest.set(name, secret);
      await evaluate(name);
    },
  });

  return () => {
    stopped = true;
    informer.stop();
    for (const t of timers.values()) clearTimeout(t);
    timers.clear();
  };
}
