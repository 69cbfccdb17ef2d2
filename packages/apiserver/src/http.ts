/** Request body reading and response writing: the only place bodies are encoded. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { stringify as yamlStringify } from 'yaml';
import {
  NestingTooDeepError,
  SCAN_TOO_DEEP,
  badRequest,
  exceedsNestingDepth,
  isNestingTooDeep,
  parseScannedJson,
  requestEntityTooLarge,
  scanJsonText,
  stringifyJson,
  isPlainObject,
  type ParseJsonOptions,
  type Status,
  type StoredObject,
} from '@plinth/api';
import type { YamlParseOptions } from './yaml.js';
import { parseYamlOffLoop } from './yaml-off-loop.js';
import { toStatusError } from './registry/interpret.js';
import type { ResponseFormat } from './negotiation.js';
import { decodeProtobuf, encodeProtobuf, ProtobufDecodeError, ProtobufUnsupportedError } from './protobuf/codec.js';
import { splitRequestTarget } from './request-info.js';
import { auditResponseObject } from './audit/filter.js';
import { deadlineOf } from './context.js';
import { writtenJson } from '@plinth/storage';

/** The query of a request, parsed from its raw target (for writers that run outside the chain). */
function queryOf(req: IncomingMessage): URLSearchParams {
  return new URLSearchParams(splitRequestTarget(req.url ?? '/').query);
}

/** kube-apiserver's request body limit (3 MiB). */
export const MAX_REQUEST_BODY_BYTES = 3 * 1024 * 1024;

/**
 * Reads the whole body, refusing more than `limit` bytes with 413 (checked as it streams in).
 * Gives up when the request's deadline passes (rejecting with its 504, so the request's seat is
 * freed: see withRequestTimeout) or the connection closes first: a body that does not arrive in
 * time holds nothing. Plain listeners rather than an async iterator: this runs on every write.
 */
export function readBody(req: IncomingMessage, limit = MAX_REQUEST_BODY_BYTES): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? '0');
  if (declared > limit) {
    req.resume();
    return Promise.reject(requestEntityTooLarge(limit));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (): void => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', fail);
      req.off('close', onClose);
      stopWaiting?.();
    };
    const fail = (e: unknown): void => {
      done();
      reject(e);
    };
    const onData = (b: Buffer): void => {
      size += b.length;
      if (size > limit) {
        done();
        req.resume();
        reject(requestEntityTooLarge(limit));
        return;
      }
      chunks.push(b);
    };
    const onEnd = (): void => {
      done();
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    };
    // 'close' before 'end': the client went away mid-body (Node may not emit 'error' then).
    const onClose = (): void => fail(new Error('the client closed the connection before its request body was complete'));
    const stopWaiting = deadlineOf(req)?.onExpired(fail);
    req.on('data', onData);
    req.once('end', onEnd);
    req.once('error', fail);
    req.once('close', onClose);
  });
}

/** How much of a response body is handed to the socket ahead of what the client has taken. */
export const RESPONSE_WRITE_AHEAD_BYTES = 64 * 1024;

const streamedBytes = new WeakMap<ServerResponse, number>();

/**
 * The body's size: its Content-Length, or what streamBody wrote once it is done (a chunked body
 * is counted as it goes; undefined until then).
 */
export function responseBodyBytes(res: ServerResponse): number | undefined {
  const v = res.getHeader('content-length');
  if (typeof v === 'number') return v;
  if (typeof v === 'string') return Number(v) || 0;
  return streamedBytes.get(res);
}

/**
 * Writes what `next` produces (undefined: the end) as the socket takes it: the next piece is
 * made only once the last was accepted (`drain`), so whatever the client's speed, about one piece
 * waits in memory ahead of the socket — never a copy of the whole body, and for a list encoded as
 * it goes, not even the body once. Stops, dropping `next`, when the response is destroyed (the
 * client went away, or the request's deadline passed: withRequestTimeout).
 */
export function streamBody(res: ServerResponse, next: () => Buffer | undefined): void {
  let bytes = 0;
  const stop = (): void => {
    res.off('drain', pump);
    res.off('close', stop);
  };
  function pump(): void {
    while (!res.destroyed) {
      const piece = next();
      if (piece === undefined) {
        stop();
        streamedBytes.set(res, bytes);
        res.end();
        return;
      }
      bytes += piece.length;
      if (!res.write(piece)) return;
    }
    stop();
  }
  res.on('drain', pump);
  res.once('close', stop);
  pump();
}

/**
 * Sends a complete body with its Content-Length: one write when small, else slices of
 * RESPONSE_WRITE_AHEAD_BYTES as the socket takes them (streamBody). HEAD gets the headers only.
 */
export function sendBody(req: IncomingMessage, res: ServerResponse, body: string | Buffer): void {
  const length = typeof body === 'string' ? Buffer.byteLength(body) : body.length;
  res.setHeader('Content-Length', length);
  if (req.method === 'HEAD') {
    res.end();
    return;
  }
  if (length <= RESPONSE_WRITE_AHEAD_BYTES) {
    res.end(body);
    return;
  }
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  let offset = 0;
  streamBody(res, () => {
    if (offset >= bytes.length) return undefined;
    const end = Math.min(bytes.length, offset + RESPONSE_WRITE_AHEAD_BYTES);
    const piece = bytes.subarray(offset, end);
    offset = end;
    return piece;
  });
}

const responsesDone = new WeakMap<ServerResponse, Promise<void>>();

/**
 * Settles once the response is complete — its last byte handed to the operating system
 * (`finish`) — or destroyed (`close`). What holds a request's seat waits for it, as kube's
 * handler holds its seat while its writes block on a slow client.
 */
export function responseDone(res: ServerResponse): Promise<void> {
  if (res.writableFinished || res.destroyed) return Promise.resolve();
  let done = responsesDone.get(res);
  if (!done) {
    done = new Promise<void>((resolve) => {
      const settle = (): void => {
        res.off('finish', settle);
        res.off('close', settle);
        resolve();
      };
      res.once('finish', settle);
      res.once('close', settle);
    });
    responsesDone.set(res, done);
  }
  return done;
}

/**
 * Parses JSON text after measuring its nesting (a bracket scan, no allocation): nothing deeper
 * than the limit is ever built. `what` names the document in the 400. Numbers are kube's
 * (api/src/number-codec.ts): the same scan picks the exact parser when a number needs it.
 */
export function parseJsonText(text: string, what: string, opts?: ParseJsonOptions): unknown {
  const flags = scanJsonText(text);
  if (flags & SCAN_TOO_DEEP) throw new NestingTooDeepError(what);
  return parseScannedJson(text, flags, opts);
}

/**
 * Parses a JSON, YAML or Protobuf body into a plain value; 400 with kube-like wording on bad
 * input. Every encoding is held to the one nesting limit before anything recurses over it.
 */
export async function parseBody(body: Buffer, encoding: 'json' | 'yaml' | 'protobuf', opts: YamlParseOptions = {}): Promise<unknown> {
  if (encoding === 'protobuf') {
    if (body.length === 0) throw badRequest('the object provided is unrecognized: request body is empty');
    let value: unknown;
    try {
      value = decodeProtobuf(body);
    } catch (e) {
      // Malformed bytes, or a kind no protobuf form exists for: the client's mistake either way.
      if (e instanceof ProtobufDecodeError || e instanceof ProtobufUnsupportedError) throw badRequest(`the object provided is unrecognized: ${e.message}`);
      throw e;
    }
    if (exceedsNestingDepth(value)) throw new NestingTooDeepError('the object provided');
    return value;
  }
  const text = body.toString('utf8');
  if (text.trim() === '') throw badRequest('the object provided is unrecognized: request body is empty');
  try {
    // A number beyond float64 stays in place: decodeInto answers it as kube's decoder does. A large
    // YAML body is parsed on a worker thread (yaml-off-loop.ts): the library is slow.
    return encoding === 'json' ? parseJsonText(text, 'the object provided', { marks: true }) : await parseYamlOffLoop(text, opts);
  } catch (e) {
    if (isNestingTooDeep(e)) throw e;
    const summary = text.length > 30 ? `${text.slice(0, 30)} ...` : text;
    throw badRequest(`the object provided is unrecognized (${summary.replace(/\s+/g, ' ')}): couldn't get version/kind; json parse error: ${(e as Error).message}`);
  }
}

export function isPretty(query: URLSearchParams, req: IncomingMessage): boolean {
  const p = query.get('pretty');
  if (p !== null) return p === '' || p === 'true' || p === '1';
  // kube pretty-prints for curl and wget by default.
  const ua = req.headers['user-agent'] ?? '';
  return ua.startsWith('curl') || ua.startsWith('Wget');
}

export function encode(obj: unknown, format: ResponseFormat, pretty: boolean): string | Buffer {
  if (format.encoding === 'protobuf') return encodeProtobuf(obj as Record<string, unknown>);
  if (format.encoding === 'yaml') return yamlStringify(obj);
  // The object a write just stored: its JSON is the bytes written, with the resourceVersion.
  const written = pretty || !isStoredObject(obj) ? undefined : writtenJson(obj);
  return `${written ?? stringifyJson(obj, pretty ? 2 : undefined)}\n`;
}

function isStoredObject(v: unknown): v is StoredObject {
  return typeof v === 'object' && v !== null && isPlainObject((v as { metadata?: unknown }).metadata);
}

/**
 * An answer given before the request's body has fully arrived (a 401, 403 or 429 ahead of the
 * body, a 504 for a body that stalled) closes the connection once sent: otherwise Node would keep
 * it, reading and discarding the rest of a body that may never come, until its own request
 * timeout.
 */
export function closeIfBodyUnread(req: IncomingMessage, res: ServerResponse): void {
  if (!req.complete && !res.headersSent) res.setHeader('Connection', 'close');
}

/** Writes an API object with the negotiated encoding. */
export function writeObject(req: IncomingMessage, res: ServerResponse, query: URLSearchParams, code: number, obj: unknown, format: ResponseFormat): void {
  auditResponseObject(req, obj);
  closeIfBodyUnread(req, res);
  res.statusCode = code;
  res.setHeader('Content-Type', format.contentType);
  const pretty = isPretty(query, req);
  if (format.encoding === 'json' && format.table === undefined && !pretty && req.method !== 'HEAD' && isList(obj)) {
    writeJsonListObject(req, res, obj);
    return;
  }
  sendBody(req, res, encode(obj, format, pretty));
}

function isList(obj: unknown): obj is Record<string, unknown> & { items: unknown[] } {
  return typeof obj === 'object' && obj !== null && Array.isArray((obj as { items?: unknown }).items);
}

/**
 * A list as compact JSON, byte for byte what `JSON.stringify(list) + '\n'` writes, encoded an item
 * at a time as the socket takes it: one that fits a piece goes out whole with its Content-Length;
 * a larger one is chunked, and holds at most a piece of encoded text ahead of the socket (never
 * the list's encoding). Written items are dropped from a copy of the array (references only), so
 * what nothing else holds (objects fresh from etcd) is freed as it goes.
 */
function writeJsonListObject(req: IncomingMessage, res: ServerResponse, list: Record<string, unknown> & { items: unknown[] }): void {
  // JSON.stringify's member order and omissions (undefined, functions), with `items` left open.
  let head = '{';
  let tail = '';
  let afterItems = false;
  for (const key of Object.keys(list)) {
    if (key === 'items') {
      head += `${head.length > 1 ? ',' : ''}"items":[`;
      afterItems = true;
      continue;
    }
    const value = stringifyJson(list[key]);
    if (value === undefined) continue;
    const member = `${JSON.stringify(key)}:${value}`;
    if (afterItems) tail += `,${member}`;
    else head += `${head.length > 1 ? ',' : ''}${member}`;
  }
  tail = `]${tail}}\n`;
  const items = list.items.slice();
  let next = 0;
  /** Item JSON (arrays write `null` where JSON.stringify gives undefined) up to about a piece. */
  const piece = (): string => {
    let text = '';
    while (next < items.length && text.length < RESPONSE_WRITE_AHEAD_BYTES) {
      if (next > 0) text += ',';
      text += stringifyJson(items[next]) ?? 'null';
      items[next] = undefined;
      next++;
    }
    return text;
  };
  const first = head + piece();
  if (next >= items.length) {
    sendBody(req, res, first + tail);
    return;
  }
  let sent = false;
  let ended = false;
  streamBody(res, () => {
    if (!sent) {
      sent = true;
      return Buffer.from(first);
    }
    if (ended) return undefined;
    if (next >= items.length) {
      ended = true;
      return Buffer.from(tail);
    }
    return Buffer.from(piece());
  });
}


const JSON_FORMAT: ResponseFormat = { encoding: 'json', contentType: 'application/json' };

/** Writes an error as a Status, in the negotiated format when known (JSON otherwise). */
export function writeError(req: IncomingMessage, res: ServerResponse, e: unknown, format?: ResponseFormat): void {
  const err = toStatusError(e);
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const status: Status = err.toStatus();
  if (err.details?.retryAfterSeconds) res.setHeader('Retry-After', String(err.details.retryAfterSeconds));
  const fmt = format && format.table === undefined ? format : JSON_FORMAT;
  writeObject(req, res, queryOf(req), err.code, status, fmt);
}

const warningsSent = new WeakMap<ServerResponse, Set<string>>();

/**
 * Adds a `Warning: 299 - "<text>"` header (kube's warning recorder: each text once per response,
 * surrounding space trimmed, control characters as spaces, `"` and `\` escaped). kubectl prints
 * these as `Warning: <text>` on stderr. Dropped once the headers are out (a streaming watch).
 */
export function addWarning(res: ServerResponse, message: string): void {
  // eslint-disable-next-line no-control-regex
  const text = message.replace(/[\u0000-\u0008\u000a-\u001f\u007f]/g, ' ').trim();
  if (text === '' || res.headersSent) return;
  let sent = warningsSent.get(res);
  if (!sent) warningsSent.set(res, (sent = new Set()));
  if (sent.has(text)) return;
  sent.add(text);
  res.appendHeader('Warning', `299 - "${text.replace(/[\\"]/g, (c) => `\\${c}`)}"`);
}
