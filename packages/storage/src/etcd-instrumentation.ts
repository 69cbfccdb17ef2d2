/**
 * EtcdStore's instrumentation: each request it makes for a caller is reported to the
 * EtcdRequestObserver (kube's etcd_request_duration_seconds), failed ones included. Storage has no
 * metrics library; the observer is the API server's.
 */
import type { EtcdOperation, EtcdRequestObserver } from './interface.js';

/** Reports `operation` on `key`, begun at `t0` (performance.now()), as ending now. */
export function observeSince(observer: EtcdRequestObserver, operation: EtcdOperation, key: string, t0: number): void {
  observer.observe(operation, key, (performance.now() - t0) / 1000);
}
