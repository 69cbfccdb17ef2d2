/**
 * Storage errors: a code enum and predicates, as kube's `pkg/storage/errors.go`. Storage throws
 * nothing else it knows about; the apiserver translates them once into API `StatusError`s (its
 * `toStatusError`). No API `Status` is built in this package.
 */
import { EtcdError, GRPCGenericError } from 'etcd3';

export type StorageErrorCode =
  | 'NotFound'
  | 'KeyExists'
  | 'Conflict'
  | 'ResourceVersionTooLarge'
  /** The revision asked for (a list, a continue token, a watch) has been compacted away. */
  | 'Compacted'
  | 'InvalidContinue'
  /** The object is larger than etcd accepts in one request: refused before it is sent. */
  | 'RequestTooLarge'
  /** etcd failed or ended a watch for a reason other than the above. */
  | 'Internal';

export interface StorageErrorDetails {
  /** Compacted: the revision etcd has compacted to, when known. TooLarge: the current one. */
  revision?: number;
  /** ResourceVersionTooLarge: the revision asked for. RequestTooLarge: the object's size. */
  requested?: number;
  /** RequestTooLarge: the largest object that fits. */
  limit?: number;
  /** Compacted continue tokens: a token that continues at the latest revision (inconsistently). */
  continueToken?: string;
}

export class StorageError extends Error {
  readonly code: StorageErrorCode;
  readonly key: string;
  readonly revision: number;
  readonly requested: number;
  readonly limit: number;
  readonly continueToken: string | undefined;

  constructor(code: StorageErrorCode, key: string, message: string, details: StorageErrorDetails = {}) {
    super(message);
    this.name = 'StorageError';
    this.code = code;
    this.key = key;
    this.revision = details.revision ?? 0;
    this.requested = details.requested ?? 0;
    this.limit = details.limit ?? 0;
    this.continueToken = details.continueToken;
  }
}

export function isStorageError(e: unknown, code?: StorageErrorCode): e is StorageError {
  return e instanceof StorageError && (code === undefined || e.code === code);
}

export const isKeyNotFound = (e: unknown): boolean => isStorageError(e, 'NotFound');
export const isKeyExists = (e: unknown): boolean => isStorageError(e, 'KeyExists');
export const isConflict = (e: unknown): boolean => isStorageError(e, 'Conflict');
export const isCompacted = (e: unknown): boolean => isStorageError(e, 'Compacted');

/** Whether an etcd client error says the requested revision was compacted. */
export function isEtcdCompactedError(e: unknown): boolean {
  return e instanceof Error && /required revision has been compacted/.test(e.message);
}

/** Whether an etcd client error says the requested revision is in the future. */
export function isEtcdFutureRevError(e: unknown): boolean {
  return e instanceof Error && /required revision is a future revision/.test(e.message);
}

/**
 * Whether an etcd client error says a message was too big: a response over the client's receive
 * limit (RESOURCE_EXHAUSTED), or a request over etcd's `--max-request-bytes`.
 */
export function isEtcdTooLargeError(e: unknown): boolean {
  // etcd answers a full database (its backend quota) with RESOURCE_EXHAUSTED too: that is no
  // message size, and kube passes it on as a 500 with etcd's text.
  return e instanceof Error && /RESOURCE_EXHAUSTED|larger than max|request is too large/i.test(e.message) && !isEtcdNoSpaceError(e);
}

/** etcd's `mvcc: database space exceeded` (ErrGRPCNoSpace): its backend quota is used up. */
export function isEtcdNoSpaceError(e: unknown): boolean {
  return e instanceof Error && /database space exceeded/.test(e.message);
}

/**
 * The text of an error from the etcd client (a gRPC error or etcd's own), without the gRPC code
 * prefix — `etcdserver: request timed out`, `context deadline exceeded` — or undefined for any
 * other error. kube answers such errors with a 500 whose message is etcd's text as is.
 */
export function etcdErrorMessage(e: unknown): string | undefined {
  if (!(e instanceof GRPCGenericError) && !(e instanceof EtcdError)) return undefined;
  return e.message.replace(/^\d+ [A-Z_]+: /, '');
}
