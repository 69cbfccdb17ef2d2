/**
 * The loop kube's certificate controllers share (pkg/controller/certificates CertificateController):
 * every CertificateSigningRequest is handed to `handle` when it is added or changes, one at a
 * time, unless it already has a certificate; a handler that throws is retried with backoff
 * (kube's rate-limited queue; an "ignorable" error there is retried the same way).
 */
import { csrBytesText, isPlainObject, type StoredObject } from '@plinth/api';
import type { ResourceStore, RequestScope } from '../registry/store.js';
import type { Logger } from '../log.js';
import { runInformer } from './informer.js';
import { createWorkQueue } from './work-queue.js';

export interface CSRControllerOptions {
  /** kube's controller name (csrsigning, csrapproving), for the log. */
  name: string;
  csrs: ResourceStore;
  scope: RequestScope;
  log: Logger;
  /** Works on one request (the latest state seen); throwing retries it later. */
  handle(csr: StoredObject): Promise<void>;
  /** The longest retry backoff (ms). */
  maxBackoffMs?: number;
}

/** Whether a request already has its certificate. */
export function isIssued(csr: StoredObject): boolean {
  const status = csr['status'];
  return isPlainObject(status) && csrBytesText(status['certificate']).length > 0;
}

/** Starts the loop; returns a stop function. */
export function startCSRController(opts: CSRControllerOptions): () => void {
  const latest = new Map<string, StoredObject>();
  const queue = createWorkQueue({
    name: opts.name,
    log: opts.log,
    ...(opts.maxBackoffMs !== undefined ? { maxBackoffMs: opts.maxBackoffMs } : {}),
    process: async (name) => {
      const csr = latest.get(name);
      if (!csr || isIssued(csr)) return;
      await opts.handle(csr);
    },
  });
  const informer = runInformer({
    store: opts.csrs,
    scope: opts.scope,
    log: opts.log,
    resyncMs: 10 * 60_000,
    onObject: (type, csr) => {
      const name = csr.metadata.name!;
      if (type === 'DELETED') {
        latest.delete(name);
        return;
      }
      latest.set(name, csr);
      queue.add(name);
    },
  });
  return () => {
    informer.stop();
    queue.stop();
  };
}
