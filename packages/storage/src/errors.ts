/**
 * Storage errors: a code enum and predicates, as kube's `pkg/storage/errors.go`. The registry
 * translates them once into API `StatusError`s (see apiserver's `interpretStorageError`).
 */

export type StorageErrorCode =
  | 'NotFound'
  | 'KeyExists'
  | 'Conflict'
  | 'ResourceVersionTooLarge'
  | 'Compacted'
  | 'InvalidContinue'
  | 'Unreachable'
  | 'InvalidObject';

export class StorageError extends Error {
  readonly code: StorageErrorCode;
  readonly key: string;
  /** For Compacted: the revision etcd has compacted to, when known. For TooLarge: the current one. */
  readonly revision: number;
  /** For TooLarge: the revision that was asked for. */
  readonly requested: number;

  constructor(code: StorageErrorCode, key: string, message: string, revision = 0, requested = 0) {
    super(message);
    this.name = 'StorageError';
    this.code = code;
    this.key = key;
    this.revision = revision;
    this.requested = requested;
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
