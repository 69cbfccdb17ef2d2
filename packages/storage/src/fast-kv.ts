/**
 * etcd's KV Range and Txn as plain gRPC calls over one HTTP/2 session, for the hot paths (every
 * create, update, delete and consistent read). grpc-js's call stack (interceptors, resolving and
 * load-balancing calls, call credentials, per-call deadline timers) and etcd3's pool (a cockatiel
 * policy and breaker per call) cost about 230 µs of CPU per call on the development machine; the
 * same call here costs about 120 µs. Requests and responses are the very objects etcd3's
 * `kv.range` and `kv.txn` take and give (the same proto file, loaded with etcd3's options), and
 * errors are etcd3's typed errors (castGrpcError on grpc-js's message format), so callers cannot
 * tell which path served a call.
 *
 * Everything unusual goes through etcd3's client (the fallback), which keeps its failover, retry
 * and breaker policies: a call made while no session is connected (first use, a member that went
 * away, a reconnect backing off) is the fallback's, and a read cut by a broken connection is read
 * again through it. A write cut the same way may have been applied, so it fails as etcd3 reports
 * a dropped connection (14 UNAVAILABLE) and EtcdStore's write loop resolves it as any cut write.
 */
import http2 from 'node:http2';
import { createRequire } from 'node:module';
import { connect as netConnect, isIP, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { dirname, join } from 'node:path';
import protobuf from 'protobufjs';
import { castGrpcError, type Etcd3, type IRangeResponse, type ITxnResponse } from 'etcd3';

type KV = Etcd3['kv'];
export type RangeRequest = Parameters<KV['range']>[0];
export type TxnRequest = Parameters<KV['txn']>[0];

/** etcd3's proto-loader options: snake_case fields, 64-bit numbers and enums as strings. */
const TO_OBJECT: protobuf.IConversionOptions = { longs: String, enums: String, defaults: true, oneofs: true };

interface Method {
  readonly path: string;
  readonly request: protobuf.Type;
  readonly response: protobuf.Type;
}

let methods: { range: Method; txn: Method } | undefined;

/** The KV service's messages, from the proto file etcd3 itself loads (once per process). */
function kvMethods(): { range: Method; txn: Method } {
  if (methods) return methods;
  const proto = join(dirname(createRequire(import.meta.url).resolve('etcd3/package.json')), 'proto', 'rpc.proto');
  const root = new protobuf.Root().loadSync(proto, { keepCase: true });
  const method = (name: string): Method => ({
    path: `/etcdserverpb.KV/${name}`,
    request: root.lookupType(`etcdserverpb.${name}Request`),
    response: root.lookupType(`etcdserverpb.${name}Response`),
  });
  return (methods = { range: method('Range'), txn: method('Txn') });
}

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

/** The error etcd3 would throw for a call that ended with gRPC status `code`. */
export function grpcError(code: number, details: string): Error {
  const e = new Error(`${code} ${STATUS_NAMES[code] ?? 'UNKNOWN'}: ${details}`) as Error & { code: number; details: string };
  e.code = code;
  e.details = details;
  return castGrpcError(e);
}

const UNAVAILABLE = 14;

/** A call that never got a gRPC status: the connection broke or the stream was reset. */
class CutCall extends Error {}

export interface FastKVOptions {
  readonly endpoints: readonly string[];
  readonly tls?: { readonly ca: Buffer; readonly cert?: Buffer; readonly key?: Buffer } | undefined;
  /** Every call's deadline (etcd3's defaultCallOptions deadline). */
  readonly timeoutMs: number;
  /** The largest response accepted (grpc-js's grpc.max_receive_message_length). */
  readonly maxReceiveBytes: number;
  /** `write`: a cut call may have been applied and is not sent again (see the module comment). */
  readonly mode: 'read' | 'write';
}

interface InFlight {
  readonly stream: http2.ClientHttp2Stream;
  readonly deadline: number;
  readonly fail: (e: Error) => void;
}

/** How long after a session failed the next one is dialled (calls use the fallback meanwhile). */
const REDIAL_AFTER_MS = 1000;
/** How long a dial may take (etcd3's dialTimeout). */
const DIAL_TIMEOUT_MS = 5000;
/** How often deadlines are checked (one timer for every call, not one per call). */
const DEADLINE_TICK_MS = 50;
/** Receive window of the session and of each stream: a page of a list arrives without stalls. */
const WINDOW_BYTES = 16 * 1024 * 1024;

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

export class FastKV {
  readonly #opts: FastKVOptions;
  readonly #fallback: KV;
  #session: http2.ClientHttp2Session | undefined;
  #dialling = false;
  #redialAt = 0;
  #next: number;
  #closed = false;
  readonly #inFlight = new Set<InFlight>();
  #ticker: NodeJS.Timeout | undefined;

  constructor(opts: FastKVOptions, fallback: KV) {
    this.#opts = opts;
    this.#fallback = fallback;
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

  close(): void {
    this.#closed = true;
    this.#session?.close();
    this.#session = undefined;
    if (this.#ticker) clearInterval(this.#ticker);
  }

  /** The connected session, or undefined (a dial starts unless one is under way or backing off). */
  #ready(): http2.ClientHttp2Session | undefined {
    const s = this.#session;
    if (s && !s.closed && !s.destroyed) return s;
    this.#session = undefined;
    this.#dial();
    return undefined;
  }

  /** Stops sending calls on `s` (those in flight finish); the next call dials the next member. */
  #drop(s: http2.ClientHttp2Session): void {
    if (this.#session === s) this.#session = undefined;
    if (!s.closed) s.close();
  }

  #dial(): void {
    if (this.#dialling || this.#closed || Date.now() < this.#redialAt || this.#opts.endpoints.length === 0) return;
    this.#dialling = true;
    const endpoint = this.#opts.endpoints[this.#next++ % this.#opts.endpoints.length]!;
    const tls = this.#opts.tls;
    const url = new URL(/^[a-z]+:\/\//i.test(endpoint) ? endpoint : `${tls ? 'https' : 'http'}://${endpoint}`);
    const failed = (): void => {
      if (this.#session === s) this.#session = undefined;
      if (this.#dialling) this.#redialAt = Date.now() + REDIAL_AFTER_MS;
      this.#dialling = false;
    };
    let s: http2.ClientHttp2Session;
    try {
      s = http2.connect(url.origin, {
        // Our own socket, for TCP_NODELAY (as grpc-js sets): with Nagle's algorithm a small call
        // sent while the previous one is unacknowledged waits for the peer's delayed ACK.
        createConnection: () => connectSocket(url, tls),
        settings: { enablePush: false, initialWindowSize: WINDOW_BYTES },
      });
    } catch {
      this.#dialling = false;
      this.#redialAt = Date.now() + REDIAL_AFTER_MS;
      return;
    }
    s.on('error', failed);
    s.once('close', failed);
    s.once('goaway', () => {
      // New calls go elsewhere; the calls in flight finish or fail on their own.
      if (this.#session === s) this.#session = undefined;
    });
    // A member that takes the SYN and never completes the handshake: give up, calls use etcd3.
    const giveUp = setTimeout(() => s.destroy(), DIAL_TIMEOUT_MS);
    giveUp.unref();
    s.once('close', () => clearTimeout(giveUp));
    s.once('connect', () => {
      clearTimeout(giveUp);
      this.#dialling = false;
      if (this.#closed) {
        s.close();
        return;
      }
      s.setLocalWindowSize(WINDOW_BYTES);
      s.unref();
      this.#session = s;
    });
    s.unref();
  }

  #call<T>(s: http2.ClientHttp2Session, m: Method, req: object, fallback: () => Promise<T>): Promise<T> {
    let body: Buffer;
    try {
      const msg = m.request.encode(m.request.fromObject(req)).finish();
      body = Buffer.allocUnsafe(5 + msg.length);
      body[0] = 0;
      body.writeUInt32BE(msg.length, 1);
      body.set(msg, 5);
    } catch (e) {
      return Promise.reject(e);
    }
    return new Promise<T>((resolve, reject) => {
      let stream: http2.ClientHttp2Stream;
      try {
        stream = s.request({ ':method': 'POST', ':path': m.path, 'content-type': 'application/grpc', te: 'trailers' }, { endStream: false });
      } catch {
        // The session cannot take another stream (closing, or out of stream ids): nothing was sent.
        this.#drop(s);
        fallback().then(resolve, reject);
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
      const finish = (failure: Error | undefined): void => {
        if (settled) return;
        settled = true;
        // Closed with no gRPC status: the connection broke or the stream was reset.
        const err = failure ?? (status === undefined ? new CutCall(httpStatus === 200 || httpStatus === 0 ? 'Call ended without gRPC status' : `Received HTTP status code ${httpStatus}`) : undefined);
        this.#inFlight.delete(call);
        if (!stream.closed) stream.close(http2.constants.NGHTTP2_CANCEL);
        if (err instanceof CutCall) {
          if (this.#opts.mode === 'read') fallback().then(resolve, reject);
          else reject(grpcError(UNAVAILABLE, 'Connection dropped'));
          return;
        }
        if (err) {
          reject(err);
          return;
        }
        if (status === UNAVAILABLE) {
          // The member cannot serve (no leader, stopping): the next calls dial another one, and a
          // read goes through etcd3, which tries the others as it does for its own calls.
          this.#drop(s);
          if (this.#opts.mode === 'read') fallback().then(resolve, reject);
          else reject(grpcError(UNAVAILABLE, message));
          return;
        }
        if (status !== 0) {
          reject(grpcError(status!, message));
          return;
        }
        try {
          const buf = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, received);
          if (buf.length < 5 || buf[0] !== 0 || buf.readUInt32BE(1) !== buf.length - 5) throw grpcError(13, 'Failed to parse server response');
          resolve(m.response.toObject(m.response.decode(buf.subarray(5)), TO_OBJECT) as T);
        } catch (e) {
          reject(e instanceof Error && e.constructor !== Error ? e : grpcError(13, `Failed to parse server response: ${(e as Error).message}`));
        }
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
          finish(grpcError(8, `Received message larger than max (${received - 5} vs. ${this.#opts.maxReceiveBytes})`));
          return;
        }
        chunks.push(d);
      });
      // Settled on close, after the data and the trailers (an error or reset closes it too).
      stream.on('error', () => undefined);
      stream.on('close', () => finish(undefined));
      this.#inFlight.add(call);
      this.#tick();
      stream.end(body);
    });
  }

  /** Fails calls past their deadline (4 DEADLINE_EXCEEDED, as etcd3's own deadline does). */
  #tick(): void {
    if (this.#ticker) return;
    this.#ticker = setInterval(() => {
      const now = Date.now();
      for (const c of this.#inFlight) if (c.deadline <= now) c.fail(grpcError(4, 'Deadline exceeded'));
      if (this.#inFlight.size === 0) {
        clearInterval(this.#ticker);
        this.#ticker = undefined;
      }
    }, DEADLINE_TICK_MS);
    this.#ticker.unref();
  }
}
