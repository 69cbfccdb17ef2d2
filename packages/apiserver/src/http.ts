/** Request body reading and response writing: the only place bodies are encoded. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { stringify as yamlStringify, parse as yamlParse } from 'yaml';
import { StatusError, badRequest, internalError, isStatusError, requestEntityTooLarge, type Status } from '@plinth/api';
import type { ResponseFormat } from './negotiation.js';
import { decodeProtobuf, encodeProtobuf, ProtobufDecodeError } from './protobuf/codec.js';

/** kube-apiserver's request body limit (3 MiB). */
export const MAX_REQUEST_BODY_BYTES = 3 * 1024 * 1024;

/**
 * Reads the whole body, refusing more than `limit` bytes with 413 (checked as it streams in).
 * Plain listeners rather than an async iterator: this runs on every write request.
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
    const onData = (b: Buffer): void => {
      size += b.length;
      if (size > limit) {
        req.off('data', onData);
        req.resume();
        reject(requestEntityTooLarge(limit));
        return;
      }
      chunks.push(b);
    };
    req.on('data', onData);
    req.once('end', () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size)));
    req.once('error', reject);
  });
}

/** Maximum nesting depth accepted in a body (kube's JSON decoder caps it at 10,000; we are stricter). */
export const MAX_BODY_DEPTH = 100;

function depthExceeds(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92 /* \ */) i++;
      else if (c === 34 /* " */) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 || c === 91) {
      if (++depth > max) return true;
    } else if (c === 125 || c === 93) depth--;
  }
  return false;
}

/** Parses a JSON, YAML or Protobuf body into a plain value; 400 with kube-like wording on bad input. */
export function parseBody(body: Buffer, encoding: 'json' | 'yaml' | 'protobuf'): unknown {
  if (encoding === 'protobuf') {
    if (body.length === 0) throw badRequest('the object provided is unrecognized: request body is empty');
    try {
      return decodeProtobuf(body);
    } catch (e) {
      if (e instanceof ProtobufDecodeError) throw badRequest(`the object provided is unrecognized: ${e.message}`);
      throw e;
    }
  }
  const text = body.toString('utf8');
  if (text.trim() === '') throw badRequest('the object provided is unrecognized: request body is empty');
  if (depthExceeds(text, MAX_BODY_DEPTH)) throw badRequest(`the object provided is unrecognized: nesting depth exceeds ${MAX_BODY_DEPTH}`);
  try {
    if (encoding === 'json') return JSON.parse(text);
    return yamlParse(text, { maxAliasCount: 100 });
  } catch (e) {
    const summary = text.length > 30 ? `${text.slice(0, 30)} ...` : text;
    throw badRequest(`the object provided is unrecognized (${summary.replace(/\s+/g, ' ')}): couldn't get version/kind; json parse error: ${(e as Error).message}`);
  }
}

function isPretty(query: URLSearchParams, req: IncomingMessage): boolean {
  const p = query.get('pretty');
  if (p !== null) return p === '' || p === 'true' || p === '1';
  // kube pretty-prints for curl and wget by default.
  const ua = req.headers['user-agent'] ?? '';
  return ua.startsWith('curl') || ua.startsWith('Wget');
}

export function encode(obj: unknown, format: ResponseFormat, pretty: boolean): string | Buffer {
  if (format.encoding === 'protobuf') return encodeProtobuf(obj as Record<string, unknown>);
  if (format.encoding === 'yaml') return yamlStringify(obj);
  return pretty ? `${JSON.stringify(obj, null, 2)}\n` : `${JSON.stringify(obj)}\n`;
}

/** Writes an API object with the negotiated encoding. */
export function writeObject(req: IncomingMessage, res: ServerResponse, query: URLSearchParams, code: number, obj: unknown, format: ResponseFormat): void {
  const body = encode(obj, format, isPretty(query, req));
  res.statusCode = code;
  res.setHeader('Content-Type', format.contentType);
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(req.method === 'HEAD' ? undefined : body);
}

const JSON_FORMAT: ResponseFormat = { encoding: 'json', contentType: 'application/json' };

/** Turns any thrown value into a StatusError (500 for the unexpected, logged without secrets). */
export function toStatusError(e: unknown): StatusError {
  if (isStatusError(e)) return e;
  return internalError(e);
}

/** Writes an error as a Status, in the negotiated format when known (JSON otherwise). */
export function writeError(req: IncomingMessage, res: ServerResponse, e: unknown, format?: ResponseFormat): void {
  const err = toStatusError(e);
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const status: Status = err.toStatus();
  if (err.details?.retryAfterSeconds) res.setHeader('Retry-After', String(err.details.retryAfterSeconds));
  const listContinue = (err as StatusError & { continueToken?: string }).continueToken;
  if (listContinue) status.metadata = { continue: listContinue };
  const fmt = format && format.table === undefined ? format : JSON_FORMAT;
  const query = new URL(req.url ?? '/', 'https://x').searchParams;
  writeObject(req, res, query, err.code, status, fmt);
}
