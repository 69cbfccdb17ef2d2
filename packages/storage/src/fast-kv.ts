/**
 * etcd's KV Range and Txn as plain gRPC calls over one HTTP/2 session, for the hot paths (every
 * create, update, delete and consistent read). grpc-js's call stack (interceptors, resolving and
 * load-balancing calls, call credentials, per-call deadline timers) and etcd3's pool (a cockatiel
 * policy and breaker per call) cost about 230 µs of CPU per call on the development machine; the
 * same call here costs about 120 µs. Requests and responses are the very objects etcd3's
 * `kv.range` and `kv.txn` take and give (the same proto file, loaded with etcd3's options); they
 * are written and read without protobufjs's message objects (etcd-request-encoder.ts,
 * etcd-response-decoder.ts), which leave forms they do not handle to protobufjs. Node 20's own
 * per-stream costs are cut where a caller can: the stream options carry the priority fields Node
 * would add (STREAM_OPTIONS), and the process installs a cheaper AsyncResource#bind
 * (async-resource-bind.ts).
 *
 * A fenced component: its calls fail with its own typed errors (etcd-call-errors.ts), which its
 * owner maps once into its own vocabulary (`mapError`; EtcdStore: etcd3's errors). The session is
 * kept as kube keeps its etcd client's (storagebackend/factory/etcd3.go): an HTTP/2 PING after
 * 30 s without an answer while calls are in flight, which must be answered within 10 s, so a
 * dead connection (an idle one included, on its next call) is noticed well before the call's
 * deadline and dialled again (with gRPC's jittered exponential backoff); every call has a
 * deadline; with credentials, calls carry etcd's auth token (Authenticate), fetched again when
 * etcd calls it invalid.
 *
 * Everything unusual goes through etcd3's client (the fallback), which keeps its failover, retry
 * and breaker policies: a call made while no session is connected (first use, a member that went
 * away, a reconnect backing off) is the fallback's, and a read cut by a broken connection is read
 * again through it. A write cut the same way may have been applied, so it fails as EtcdCallCut and
 * EtcdStore's write loop resolves it as any cut write.
 */
import http2 from 'node:http2';
import { createRequire } from 'node:module';
import { connect as netConnect, isIP, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { dirname, join } from 'node:path';
import protobuf from 'protobufjs';
import type { Etcd3, IRangeResponse, ITxnResponse } from 'etcd3';
import {
  EtcdCallCut,
  EtcdCallNotSent,
  EtcdDeadlineExceeded,
  EtcdStatusError,
  EtcdUnavailable,
  GRPC_INTERNAL,
  GRPC_RESOURCE_EXHAUSTED,
  GRPC_UNAVAILABLE,
  isInvalidAuthToken,
  EtcdCallError,
} from './etcd-call-errors.js';
import { encodeRangeFrame, encodeTxnFrame } from './etcd-request-encoder.js';
import { decodeRangeResponse, decodeTxnResponse } from './etcd-response-decoder.js';

type KV = Etcd3['kv'];
export type RangeRequest = Parameters<KV['range']>[0];
export type TxnRequest = Parameters<KV['txn']>[0];

/** etcd3's proto-loader options: snake_case fields, 64-bit numbers and enums as strings. */
const TO_OBJECT: protobuf.IConversionOptions = { longs: String, enums: String, defaults: true, oneofs: true };

interface Method {
  readonly path: string;
  readonly request: protobuf.Type;
  readonly response: protobuf.Type;
  /** The request's frame written directly (etcd-request-encoder.ts); undefined: protobufjs writes it. */
  readonly encodeFrame?: (req: unknown) => Buffer | undefined;
  /** The response's object read directly from the frame (etcd-response-decoder.ts); undefined: protobufjs reads it. */
  readonly decodeResponse?: (frame: Buffer, start: number) => object | undefined;
}

interface Methods {
  readonly range: Method;
  readonly txn: Method;
  readonly authenticate: Method;
}

let methods: Methods | undefined;

/** The KV and Auth services' messages, from the proto file etcd3 itself loads (once per process). */
function kvMethods(): Methods {
  if (methods) return methods;
  const proto = join(dirname(createRequire(import.meta.url).resolve('etcd3/package.json')), 'proto', 'rpc.proto');
  const root = new protobuf.Root().loadSync(proto, { keepCase: true });
  const method = (name: string, service = 'KV', direct: Pick<Method, 'encodeFrame' | 'decodeResponse'> = {}): Method => ({
    path: `/etcdserverpb.${service}/${name}`,
    request: root.lookupType(`etcdserverpb.${name}Request`),
    response: root.lookupType(`etcdserverpb.${name}Response`),
    ...direct,
  });
  return (methods = {
    range: method('Range', 'KV', { encodeFrame: encodeRangeFrame, decodeResponse: decodeRangeResponse }),
    txn: method('Txn', 'KV', { encodeFrame: encodeTxnFrame, decodeResponse: decodeTxnResponse }),
    authenticate: method('Authenticate', 'Auth'),
  });
}

/** How often an idle or busy session is pinged, and how long the answer may take (kube's etcd client). */
export const KEEPALIVE_TIME_MS = 30_000;
export const KEEPALIVE_TIMEOUT_MS = 10_000;

export interface FastKVOptions {
  readonly endpoints: readonly string[];
  readonly tls?: { readonly ca: Buffer; readonly cert?: Buffer; readonly key?: Buffer } | undefined;
  /** Every call's deadline (etcd3's defaultCallOptions deadline). */
  readonly timeoutMs: number;
  /** The largest response accepted (grpc-js's grpc.max_receive_message_length). */
  readonly maxReceiveBytes: number;
  /** `write`: a cut call may have been applied and is not sent again (see the module comment). */
  readonly mode: 'read' | 'write';
  /** etcd user and password: calls carry the token etcd's Authenticate gives for them. */
  readonly auth?: { readonly username: string; readonly password: string } | undefined;
  /** PING interval and answer deadline (default KEEPALIVE_TIME_MS / KEEPALIVE_TIMEOUT_MS). */
  readonly keepalive?: { readonly timeMs: number; readonly timeoutMs: number } | undefined;
  /** Redial backoff: first delay and cap (ms; default 1 s and 30 s, ×1.6 with ±20 % jitter as gRPC's). */
  readonly redial?: { readonly initialMs: number; readonly maxMs: number } | undefined;
  /** Turns a call's typed error into the owner's (once, where the call fails); default: as is. */
  readonly mapError?: ((e: EtcdCallError) => Error) | undefined;
}

interface InFlight {
  readonly stream: http2.ClientHttp2Stream;
  readonly deadline: number;
  readonly fail: (e: EtcdCallError) => void;
}

/** How long a dial may take (etcd3's dialTimeout). */
const DIAL_TIMEOUT_MS = 5000;
/** How often deadlines are checked (one timer for every call, not one per call). */
const DEADLINE_TICK_MS = 50;
/** Receive window of the session and of each stream: a page of a list arrives without stalls. */
const WINDOW_BYTES = 16 * 1024 * 1024;
/** gRPC's connection backoff (connection-backoff.md): multiplier and jitter. */
const BACKOFF_MULTIPLIER = 1.6;
const BACKOFF_JITTER = 0.2;

const asIs = (e: EtcdCallError): Error => e;

/**
 * Every call's stream options, with the priority fields at the defaults Node would write into
 * them (NGHTTP2_DEFAULT_WEIGHT 16, no parent, not exclusive, not silent). Node 20's request
 * copies the options and adds whichever are missing, and adding them to that copy took ~5 µs
 * per call (a micro-benchmark of 20,000 HTTP/2 requests: 28% of its CPU went with it).
 */
const STREAM_OPTIONS = { endStream: false, weight: 16, parent: 0, exclusive: false, silent: false };

/** A TCP (http:) or TLS (https:, offering h2) connection to `url` with TCP_NODELAY. */
function connectSocket(url: URL, tls: FastKVOptions['tls']): Socket {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const port = Number(url.port) || (url.protocol === 'https:' ? 443 : 80);
  if (url.protocol !== 'https:') return netConnect({ host, port, noDelay: true });
  const socket = tlsConnect({
    host,
    port,
    ALPNProtocols: ['h2'],
    // No SNI for an IP address (RFC 6066; Node warns); the certificate is still checked against it.
    ...(isIP(host) ? {} : { servername: host }),
    ...(tls ? { ca: tls.ca, ...(tls.cert ? { cert: tls.cert, key: tls.key } : {}) } : {}),
  });
  return socket.setNoDelay(true);
}

/** A request as etcd's gRPC wants it: the 5-byte message prefix, then the encoded message. */
function frame(m: Method, req: object): Buffer {
  const direct = m.encodeFrame?.(req);
  if (direct) return direct;
  const msg = m.request.encode(m.request.fromObject(req)).finish();
  const body = Buffer.allocUnsafe(5 + msg.length);
  body[0] = 0;
  body.writeUInt32BE(msg.length, 1);
  body.set(msg, 5);
  return body;
}

/** A connected session and the auth token its calls carry. */
interface Session {
  readonly h2: http2.ClientHttp2Session;
  token: string | undefined;
  /** A token being fetched again (after `invalid auth token`); calls wait for it. */
  reauth: Promise<void> | undefined;
  /** Calls in flight on it, and calls the member answered so far (keepalive activity; backoff reset). */
  calls: number;
  answered: number;
}

export class FastKV {
  readonly #opts: FastKVOptions;
  readonly #fallback: KV;
  readonly #mapError: (e: EtcdCallError) => Error;
  #session: Session | undefined;
  #dialling = false;
  #redialAt = 0;
  /** The next redial's delay before jitter (gRPC's backoff; reset by a session that answered a call). */
  #backoffMs: number;
  #next: number;
  #closed = false;
  readonly #inFlight = new Set<InFlight>();
  #ticker: NodeJS.Timeout | undefined;

  constructor(opts: FastKVOptions, fallback: KV) {
    this.#opts = opts;
    this.#fallback = fallback;
    this.#mapError = opts.mapError ?? asIs;
    this.#backoffMs = opts.redial?.initialMs ?? 1000;
    // Replicas spread their sessions over the members.
    this.#next = Math.floor(Math.random() * Math.max(1, opts.endpoints.length));
  }

  range(req: RangeRequest): Promise<IRangeResponse> {
    const s = this.#ready();
    if (!s) return this.#fallback.range(req);
    return this.#call<IRangeResponse>(s, kvMethods().range, req, () => this.#fallback.range(req));
  }

  txn(req: TxnRequest): Promise<ITxnResponse> {
    const s = this.#ready();
    if (!s) return this.#fallback.txn(req);
    return this.#call<ITxnResponse>(s, kvMethods().txn, req, () => this.#fallback.txn(req));
  }

  /** Whether calls are served by its own session now (not by the fallback): for tests and metrics. */
  get connected(): boolean {
    const s = this.#session;
    return s !== undefined && !s.h2.closed && !s.h2.destroyed;
  }

  close(): void {
    this.#closed = true;
    this.#session?.h2.close();
    this.#session = undefined;
    if (this.#ticker) clearInterval(this.#ticker);
  }

  /** The connected session, or undefined (a dial starts unless one is under way or backing off). */
  #ready(): Session | undefined {
    const s = this.#session;
    if (s && !s.h2.closed && !s.h2.destroyed) return s;
    this.#session = undefined;
    this.#dial();
    return undefined;
  }

  /** Stops sending calls on `s` (those in flight finish); the next call dials the next member. */
  #drop(s: Session): void {
    if (this.#session === s) this.#session = undefined;
    if (!s.h2.closed) s.h2.close();
  }

  /** When the next dial may start: gRPC's jittered exponential backoff. */
  #backOff(): void {
    const max = this.#opts.redial?.maxMs ?? 30_000;
    const jitter = 1 + BACKOFF_JITTER * (2 * Math.random() - 1);
    this.#redialAt = Date.now() + Math.round(this.#backoffMs * jitter);
    this.#backoffMs = Math.min(max, this.#backoffMs * BACKOFF_MULTIPLIER);
  }

  #dial(): void {
    if (this.#dialling || this.#closed || Date.now() < this.#redialAt || this.#opts.endpoints.length === 0) return;
    this.#dialling = true;
    const endpoint = this.#opts.endpoints[this.#next++ % this.#opts.endpoints.length]!;
    const tls = this.#opts.tls;
    const url = new URL(/^[a-z]+:\/\//i.test(endpoint) ? endpoint : `${tls ? 'https' : 'http'}://${endpoint}`);
    let session: Session | undefined;
    let keepalive: NodeJS.Timeout | undefined;
    let ended = false;
    const failed = (): void => {
      // 'error' is followed by 'close': the first one counts.
      if (ended) return;
      ended = true;
      if (keepalive) clearInterval(keepalive);
      if (session && this.#session === session) this.#session = undefined;
      if (this.#dialling || (session && session.answered === 0)) {
        // A dial that failed, or a session that closed before answering anything (a member that
        // takes the connection and drops it): the next dial waits, longer each time.
        this.#backOff();
      } else if (session) {
        // A session that worked: the next call dials again at once, and backoff starts afresh.
        this.#backoffMs = this.#opts.redial?.initialMs ?? 1000;
      }
      this.#dialling = false;
    };
    let h2: http2.ClientHttp2Session;
    try {
      h2 = http2.connect(url.origin, {
        // Our own socket, for TCP_NODELAY (as grpc-js sets): with Nagle's algorithm a small call
        // sent while the previous one is unacknowledged waits for the peer's delayed ACK.
        createConnection: () => connectSocket(url, tls),
        settings: { enablePush: false, initialWindowSize: WINDOW_BYTES },
      });
    } catch {
      this.#dialling = false;
      this.#backOff();
      return;
    }
    h2.on('error', failed);
    h2.once('close', failed);
    h2.once('goaway', () => {
      // New calls go elsewhere; the calls in flight finish or fail on their own.
      if (session && this.#session === session) this.#session = undefined;
    });
    // A member that takes the SYN and never completes the handshake: give up, calls use etcd3.
    const giveUp = setTimeout(() => h2.destroy(), DIAL_TIMEOUT_MS);
    giveUp.unref();
    h2.once('close', () => clearTimeout(giveUp));
    h2.once('connect', () => {
      if (this.#closed) {
        clearTimeout(giveUp);
        this.#dialling = false;
        h2.close();
        return;
      }
      h2.setLocalWindowSize(WINDOW_BYTES);
      h2.unref();
      const s: Session = { h2, token: undefined, reauth: undefined, calls: 0, answered: 0 };
      keepalive = this.#keepalive(s);
      const up = (): void => {
        clearTimeout(giveUp);
        this.#dialling = false;
        session = s;
        this.#session = s;
      };
      if (!this.#opts.auth) {
        up();
        return;
      }
      // The token first (within the dial's time limit); calls go to etcd3 meanwhile.
      this.#authenticate(s).then(up, () => h2.destroy());
    });
    h2.unref();
  }

  /**
   * kube's etcd client keepalive (keepaliveTime / keepaliveTimeout; gRPC's rule without
   * PermitWithoutStream): while calls are in flight and nothing was answered for an interval, a
   * PING; one unanswered within the timeout destroys the session (its calls end as cut ones, the
   * next call dials again). An idle session is not pinged: etcd's server counts a PING on a
   * connection without calls as abuse (too_many_pings GOAWAY); a dead idle connection is found by
   * its next call's PING instead of that call's deadline.
   */
  #keepalive(s: Session): NodeJS.Timeout {
    const { h2 } = s;
    const timeMs = this.#opts.keepalive?.timeMs ?? KEEPALIVE_TIME_MS;
    const timeoutMs = this.#opts.keepalive?.timeoutMs ?? KEEPALIVE_TIMEOUT_MS;
    let waiting: NodeJS.Timeout | undefined;
    let answered = -1;
    const timer = setInterval(() => {
      const quiet = s.answered === answered;
      answered = s.answered;
      if (waiting || s.calls === 0 || !quiet || h2.closed || h2.destroyed) return;
      waiting = setTimeout(() => h2.destroy(new Error('keepalive ping not answered')), timeoutMs);
      waiting.unref();
      const sent = h2.ping((err) => {
        clearTimeout(waiting);
        waiting = undefined;
        if (err) h2.destroy(err);
      });
      if (!sent) {
        clearTimeout(waiting);
        waiting = undefined;
      }
    }, timeMs);
    timer.unref();
    h2.once('close', () => {
      clearInterval(timer);
      clearTimeout(waiting);
    });
    return timer;
  }

  /** Fetches an auth token for `s` (etcd's Auth/Authenticate with the configured credentials). */
  async #authenticate(s: Session): Promise<void> {
    const auth = this.#opts.auth!;
    const res = await new Promise<{ token: string }>((resolve, reject) =>
      this.#send(s, kvMethods().authenticate, { name: auth.username, password: auth.password }, false, resolve, reject),
    );
    s.token = res.token;
  }

  #call<T>(s: Session, m: Method, req: object, fallback: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => this.#send(s, m, req, true, resolve, reject, fallback));
  }

  /** A failed call: as #failed says for range and txn, as is for the token's call. */
  #fail<T>(e: EtcdCallError, s: Session, m: Method, req: object, resolve: (v: T) => void, reject: (e: unknown) => void, fallback: (() => Promise<T>) | undefined): void {
    if (fallback) this.#failed(e, s, m, req, resolve, reject, fallback);
    else reject(e);
  }

  /** What a failed call of range/txn becomes (see the module comment). */
  #failed<T>(e: EtcdCallError, s: Session, m: Method, req: object, resolve: (v: T) => void, reject: (e: unknown) => void, fallback: () => Promise<T>): void {
    if (e instanceof EtcdCallNotSent) {
      // The session cannot take another stream (closing, or out of stream ids): nothing was sent.
      this.#drop(s);
      fallback().then(resolve, reject);
    } else if (e instanceof EtcdCallCut || e instanceof EtcdUnavailable) {
      // Unavailable: the member cannot serve (no leader, stopping): the next calls dial another
      // one. A read goes through etcd3, which tries the others as it does for its own calls.
      if (e instanceof EtcdUnavailable) this.#drop(s);
      if (this.#opts.mode === 'read') fallback().then(resolve, reject);
      else reject(this.#mapError(e));
    } else if (isInvalidAuthToken(e) && this.#opts.auth) {
      // etcd refused the token (expired, or etcd restarted): nothing was applied; a new token,
      // then the call once more.
      s.reauth ??= this.#authenticate(s).finally(() => (s.reauth = undefined));
      s.reauth.then(
        () => this.#send(s, m, req, true, resolve, (e2: unknown) => reject(e2 instanceof EtcdCallError ? this.#mapError(e2) : e2)),
        () => fallback().then(resolve, reject),
      );
    } else {
      reject(this.#mapError(e));
    }
  }

  /** Sends one call on `s`; settles with the decoded answer or a typed error. */
  #send<T>(s: Session, m: Method, req: object, withToken: boolean, resolve: (v: T) => void, reject: (e: unknown) => void, fallback?: () => Promise<T>): void {
    let body: Buffer;
    try {
      body = frame(m, req);
    } catch (e) {
      // An invalid request (protobufjs refused it): etcd3 fails it the same way, unsent.
      reject(e);
      return;
    }
    const token = withToken ? s.token : undefined;
    let stream: http2.ClientHttp2Stream;
    try {
      stream = s.h2.request(
        token === undefined
          ? { ':method': 'POST', ':path': m.path, 'content-type': 'application/grpc', te: 'trailers' }
          : { ':method': 'POST', ':path': m.path, 'content-type': 'application/grpc', te: 'trailers', token },
        STREAM_OPTIONS,
      );
    } catch (e) {
      this.#fail(new EtcdCallNotSent((e as Error).message), s, m, req, resolve, reject, fallback);
      return;
    }
    const chunks: Buffer[] = [];
    let received = 0;
    let status: number | undefined;
    let message = '';
    let httpStatus = 0;
    let settled = false;
    const call: InFlight = {
      stream,
      deadline: Date.now() + this.#opts.timeoutMs,
      fail: (e) => {
        // A member that does not answer in time: the next calls dial another one.
        this.#drop(s);
        finish(e);
      },
    };
    const finish = (failure: EtcdCallError | undefined): void => {
      if (settled) return;
      settled = true;
      s.calls--;
      // An answer from the member (any gRPC status): it works, and the session is active.
      if (status !== undefined) s.answered++;
      this.#inFlight.delete(call);
      if (!stream.closed) stream.close(http2.constants.NGHTTP2_CANCEL);
      if (failure) {
        this.#fail(failure, s, m, req, resolve, reject, fallback);
        return;
      }
      if (status === undefined) {
        // Closed with no gRPC status: the connection broke or the stream was reset.
        this.#fail(new EtcdCallCut(httpStatus === 200 || httpStatus === 0 ? 'call ended without gRPC status' : `received HTTP status code ${httpStatus}`), s, m, req, resolve, reject, fallback);
        return;
      }
      if (status === GRPC_UNAVAILABLE) {
        this.#fail(new EtcdUnavailable(message), s, m, req, resolve, reject, fallback);
        return;
      }
      if (status !== 0) {
        this.#fail(new EtcdStatusError(status, message), s, m, req, resolve, reject, fallback);
        return;
      }
      let value: T;
      try {
        const buf = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, received);
        if (buf.length < 5 || buf[0] !== 0 || buf.readUInt32BE(1) !== buf.length - 5) throw new Error('bad message frame');
        value = (m.decodeResponse?.(buf, 5) ?? m.response.toObject(m.response.decode(buf.subarray(5)), TO_OBJECT)) as T;
      } catch (e) {
        this.#fail(new EtcdStatusError(GRPC_INTERNAL, `Failed to parse server response: ${(e as Error).message}`), s, m, req, resolve, reject, fallback);
        return;
      }
      resolve(value);
    };
    const readStatus = (h: http2.IncomingHttpHeaders): void => {
      const code = h['grpc-status'];
      if (code === undefined) return;
      status = Number(code);
      const msg = h['grpc-message'];
      if (typeof msg === 'string') {
        try {
          message = decodeURIComponent(msg);
        } catch {
          message = msg;
        }
      }
    };
    stream.on('response', (h) => {
      httpStatus = Number(h[':status']);
      readStatus(h); // a Trailers-Only response
    });
    stream.on('trailers', readStatus);
    stream.on('data', (d: Buffer) => {
      received += d.length;
      if (received > this.#opts.maxReceiveBytes + 5) {
        finish(new EtcdStatusError(GRPC_RESOURCE_EXHAUSTED, `Received message larger than max (${received - 5} vs. ${this.#opts.maxReceiveBytes})`));
        return;
      }
      chunks.push(d);
    });
    // Settled on close, after the data and the trailers (an error or reset closes it too).
    stream.on('error', () => undefined);
    stream.on('close', () => finish(undefined));
    s.calls++;
    this.#inFlight.add(call);
    this.#tick();
    stream.end(body);
  }

  /** Fails calls past their deadline. */
  #tick(): void {
    if (this.#ticker) return;
    this.#ticker = setInterval(() => {
      const now = Date.now();
      for (const c of this.#inFlight) if (c.deadline <= now) c.fail(new EtcdDeadlineExceeded('Deadline exceeded'));
      if (this.#inFlight.size === 0) {
        clearInterval(this.#ticker);
        this.#ticker = undefined;
      }
    }, DEADLINE_TICK_MS);
    this.#ticker.unref();
  }
}
