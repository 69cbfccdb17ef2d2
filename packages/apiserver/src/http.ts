/** Request body reading and response writing: the only place bodies are encoded. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { stringify as yamlStringify } from 'yaml';
import { NestingTooDeepError, badRequest, exceedsNestingDepth, isNestingTooDeep, jsonTextExceedsDepth, requestEntityTooLarge, type Status } from '@plinth/api';
import type { YamlParseOptions } from './yaml.js';
import { parseYamlOffLoop } from './yaml-off-loop.js';
import { toStatusError } from './registry/interpret.js';
import type { ResponseFormat } from './negotiation.js';
import { decodeProtobuf, encodeProtobuf, ProtobufDecodeError, ProtobufUnsupportedError } from './protobuf/codec.js';
import { splitRequestTarget } from './request-info.js';
import { auditResponseObject } from './audit/filter.js';

/** The query of a request, parsed from its raw target (for writers that run outside the chain). */
function queryOf(req: IncomingMessage): URLSearchParams {
  return new URLSearchParams(splitRequestTarget(req.url ?? '/').query);
}

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

/**
 * Parses JSON text after measuring its nesting (a bracket scan, no allocation): nothing deeper
 * than the limit is ever built. `what` names the document in the 400.
 */
export function parseJsonText(text: string, what: string): unknown {
  if (jsonTextExceedsDepth(text)) throw new NestingTooDeepError(what);
  return JSON.parse(text);
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
    // A large YAML body is parsed on a worker thread (yaml-off-loop.ts): the library is slow.
    return encoding === 'json' ? parseJsonText(text, 'the object provided') : await parseYamlOffLoop(text, opts);
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
  return pretty ? `${JSON.stringify(obj, null, 2)}\n` : `${JSON.stringify(obj)}\n`;
}

/** Writes an API object with the negotiated encoding. */
export function writeObject(req: IncomingMessage, res: ServerResponse, query: URLSearchParams, code: number, obj: unknown, format: ResponseFormat): void {
  auditResponseObject(req, obj);
  const body = encode(obj, format, isPretty(query, req));
  res.statusCode = code;
  res.setHeader('Content-Type', format.contentType);
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(req.method === 'HEAD' ? undefined : body);
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
