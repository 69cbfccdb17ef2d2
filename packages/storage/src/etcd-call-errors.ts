/**
 * How a FastKV call (fast-kv.ts) can fail, as its own typed errors: what a caller must decide —
 * may it be sent again, may a write have been applied — is the class, never a message's text.
 * EtcdStore maps them once into etcd3's errors (etcd-transport.ts), the vocabulary of the rest of
 * the storage package.
 */

/** gRPC status codes FastKV itself gives or reacts to. */
export const GRPC_DEADLINE_EXCEEDED = 4;
export const GRPC_RESOURCE_EXHAUSTED = 8;
export const GRPC_INTERNAL = 13;
export const GRPC_UNAVAILABLE = 14;
export const GRPC_UNAUTHENTICATED = 16;

/** Any failure of a FastKV call. `code` is the gRPC status code the failure is closest to. */
export abstract class EtcdCallError extends Error {
  abstract readonly code: number;
  /** The failure's text without a code prefix (etcd's own text for an answer from etcd). */
  readonly details: string;

  constructor(details: string) {
    super(details);
    this.details = details;
    this.name = new.target.name;
  }
}

/** The request surely did not reach etcd (no stream could be opened): sending it again is safe. */
export class EtcdCallNotSent extends EtcdCallError {
  readonly code = GRPC_UNAVAILABLE;
}

/**
 * The connection broke (or the stream was reset) after the request was sent and before etcd's
 * answer arrived: a read may be sent again; a write may or may not have been applied.
 */
export class EtcdCallCut extends EtcdCallError {
  readonly code = GRPC_UNAVAILABLE;
}

/**
 * The member answered UNAVAILABLE (no leader, stopping, too many requests): it did not serve the
 * call. etcd answers so also for a write it may have proposed before stepping down, so a write is
 * treated as a cut one.
 */
export class EtcdUnavailable extends EtcdCallError {
  readonly code = GRPC_UNAVAILABLE;
}

/** No answer within the call's deadline (the member may still apply a write it had). */
export class EtcdDeadlineExceeded extends EtcdCallError {
  readonly code = GRPC_DEADLINE_EXCEEDED;
}

/** etcd (or this client, for an answer it refuses) ended the call with gRPC status `code`. */
export class EtcdStatusError extends EtcdCallError {
  readonly code: number;

  constructor(code: number, details: string) {
    super(details);
    this.code = code;
  }
}

/** etcd's answer to a call carrying an expired or unknown auth token (the token is fetched again). */
export function isInvalidAuthToken(e: unknown): boolean {
  return e instanceof EtcdStatusError && e.code === GRPC_UNAUTHENTICATED && e.details === 'etcdserver: invalid auth token';
}
