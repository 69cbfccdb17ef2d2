/**
 * EtcdStore's clients: etcd3 (watches, leases, compaction, and the fallback of the fast path) for
 * reads and for writes, and a FastKV for each on the hot path. The one place where FastKV's typed
 * errors become etcd3's, and where a failed call is classified as unsent or cut.
 */
import { Etcd3, GRPCUnavailableError, castGrpcError } from 'etcd3';
import { ConsecutiveBreaker, ExponentialBackoff, circuitBreaker, handleWhen, retry } from 'cockatiel';
import { FastKV } from './fast-kv.js';
import { EtcdCallCut, EtcdCallError, EtcdCallNotSent, EtcdUnavailable } from './etcd-call-errors.js';

/** kube raises the client's receive limit to MaxInt32; pages keep real responses far below it. */
export const MAX_RECEIVE_BYTES = 2 ** 31 - 1;

/** grpc-js's names of status codes, for its error message format (`<code> <NAME>: <details>`). */
const STATUS_NAMES = [
  'OK',
  'CANCELLED',
  'UNKNOWN',
  'INVALID_ARGUMENT',
  'DEADLINE_EXCEEDED',
  'NOT_FOUND',
  'ALREADY_EXISTS',
  'PERMISSION_DENIED',
  'RESOURCE_EXHAUSTED',
  'FAILED_PRECONDITION',
  'ABORTED',
  'OUT_OF_RANGE',
  'UNIMPLEMENTED',
  'INTERNAL',
  'UNAVAILABLE',
  'DATA_LOSS',
  'UNAUTHENTICATED',
];

/**
 * The error etcd3 gives for the failure FastKV reports as `e` (its typed error stays as `cause`),
 * so callers see one vocabulary whichever client served the call. A cut call reads as etcd3's
 * dropped connection.
 */
export function toEtcd3Error(e: EtcdCallError): Error {
  const details = e instanceof EtcdCallCut ? 'Connection dropped' : e.details;
  const raw = new Error(`${e.code} ${STATUS_NAMES[e.code] ?? 'UNKNOWN'}: ${details}`) as Error & { code: number; details: string };
  raw.code = e.code;
  raw.details = details;
  const typed = castGrpcError(raw);
  typed.cause = e;
  return typed;
}

/** FastKV's typed error behind `e` (itself, or the cause of its etcd3 form), if any. */
function callError(e: unknown): EtcdCallError | undefined {
  if (e instanceof EtcdCallError) return e;
  const cause = (e as Error | undefined)?.cause;
  return cause instanceof EtcdCallError ? cause : undefined;
}

/**
 * A call that never reached a member (no connection to it): retrying it on another member is
 * safe whatever the call does. etcd3's own calls say so only in grpc-js's message text.
 */
export function isUnsentCall(e: unknown): boolean {
  const own = callError(e);
  if (own) return own instanceof EtcdCallNotSent;
  return e instanceof GRPCUnavailableError && /No connection established|ECONNREFUSED|no (address|connection) available/i.test(e.message);
}

/**
 * A call cut while a member had it (the member stopped or the connection broke): a read may be
 * sent again; a write may or may not have been applied. FastKV says so by its error's class;
 * etcd3 (grpc-js) only in text: "Received RST_STREAM with code 0", "Received HTTP status code 200"
 * (a stream ended without a gRPC status), "Connection dropped", etcd's "server stopped".
 */
export function isCutCall(e: unknown): boolean {
  const own = callError(e);
  if (own) return own instanceof EtcdCallCut || own instanceof EtcdUnavailable;
  if (e instanceof GRPCUnavailableError) return !isUnsentCall(e);
  return /RST_STREAM|Call ended without gRPC status|Received HTTP status code/.test(String((e as Error | undefined)?.message ?? ''));
}

/**
 * The etcd client's fault handling. etcd3's default counts every "recoverable" gRPC error
 * (RESOURCE_EXHAUSTED, DEADLINE_EXCEEDED, INTERNAL...) towards a per-host circuit breaker and
 * retries them: one oversized request then fails everybody's requests for 5 s. Here only real
 * unavailability (UNAVAILABLE: no connection) counts towards the breaker: a host that keeps
 * failing is skipped for a second. The client's calls are retried on another member when
 * `retryWhen` says so. A client's bad request fails alone.
 */
function faultHandling(retryWhen: (e: unknown) => boolean) {
  const unavailable = handleWhen((e) => e instanceof GRPCUnavailableError);
  return {
    host: () => circuitBreaker(unavailable, { halfOpenAfter: 1000, breaker: new ConsecutiveBreaker(3) }),
    // Up to three attempts: with one of three members down, a call that drew the dead member
    // twice still reaches a live one (connection refusals fail fast; deadlines are not retried).
    global: retry(handleWhen(retryWhen), { maxAttempts: 3, backoff: new ExponentialBackoff({ initialDelay: 50, maxDelay: 500 }) }),
  };
}

export interface EtcdTransportOptions {
  readonly endpoints: readonly string[];
  /** Deadline of each unary call (ms). */
  readonly timeoutMs: number;
  readonly tls?: { readonly ca: Buffer; readonly cert?: Buffer; readonly key?: Buffer } | undefined;
  /** etcd user and password (etcd's auth): every client authenticates and sends the token. */
  readonly auth?: { readonly username: string; readonly password: string } | undefined;
  /** The fast path's HTTP/2 keepalive (default: kube's 30 s / 10 s). */
  readonly keepalive?: { readonly timeMs: number; readonly timeoutMs: number } | undefined;
}

/** The clients of one EtcdStore. */
export interface EtcdTransport {
  /** Reads, watches, leases (sent again after any unavailability). */
  readonly client: Etcd3;
  /** Write txns: only what never left is sent again (a cut write is the store's to resolve). */
  readonly writer: Etcd3;
  /** Range and Txn without grpc-js's call stack; `client` serves what they cannot. */
  readonly readKv: FastKV;
  /** The same for writes; `writer` serves what it cannot. */
  readonly writeKv: FastKV;
  close(): void;
}

/** The clients for `opts`: two etcd3 clients and a FastKV in front of each. */
export function createEtcdTransport(opts: EtcdTransportOptions): EtcdTransport {
  const { tls, auth } = opts;
  // Every unary call gets a deadline, so a request never hangs on an unreachable etcd;
  // streams (watch) run until cancelled.
  const client = (retryWhen: (e: unknown) => boolean): Etcd3 =>
    new Etcd3({
      hosts: [...opts.endpoints],
      dialTimeout: 5000,
      defaultCallOptions: (ctx) => (ctx.isStream ? {} : { deadline: Date.now() + opts.timeoutMs }),
      grpcOptions: { 'grpc.max_receive_message_length': MAX_RECEIVE_BYTES },
      faultHandling: faultHandling(retryWhen),
      ...(tls ? { credentials: { rootCertificate: tls.ca, ...(tls.cert ? { certChain: tls.cert, privateKey: tls.key } : {}) } } : {}),
      ...(auth ? { auth: { username: auth.username, password: auth.password } } : {}),
    });
  // Reads, watches and leases are sent again after any unavailability. Writes have a client of
  // their own that only resends what never left: a cut write is resolved by the store's write
  // loop, which knows what the write was and can tell whether it was applied.
  const reader = client((e) => e instanceof GRPCUnavailableError || isCutCall(e));
  const writer = client(isUnsentCall);
  const fast = { endpoints: opts.endpoints, tls, auth, keepalive: opts.keepalive, timeoutMs: opts.timeoutMs, maxReceiveBytes: MAX_RECEIVE_BYTES, mapError: toEtcd3Error };
  const readKv = new FastKV({ ...fast, mode: 'read' }, reader.kv);
  const writeKv = new FastKV({ ...fast, mode: 'write' }, writer.kv);
  return {
    client: reader,
    writer,
    readKv,
    writeKv,
    close() {
      readKv.close();
      writeKv.close();
      reader.close();
      writer.close();
    },
  };
}
