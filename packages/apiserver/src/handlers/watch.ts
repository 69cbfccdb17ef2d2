/**
 * Watch: a chunked stream of `{type, object}` JSON documents, one per line, until the client goes
 * away, `timeoutSeconds` passes, or the store ends the watch (e.g. after an ERROR event).
 */
import { notAcceptable, stringifyJson } from '@plinth/api';
import type { Socket } from 'node:net';
import type { WatchEvent } from '@plinth/storage';
import type { ResponseFormat } from '../negotiation.js';
import { tableOfObject, type IncludeObject } from '../table.js';
import { asPartialObjectMetadata } from '../partial-metadata.js';
import { encodeWatchEventFrame } from '../protobuf/codec.js';
import type { ParsedListOptions } from './options.js';
import { toStatusError } from '../registry/interpret.js';
import type { ResourceRequest } from './scope.js';
import { metricsOf } from '../metrics/index.js';

/**
 * Encoded events, by event object: the watch cache hands the same event object to every watcher
 * it fits unchanged, so a fan-out to N watchers serializes it once, not N times. What is kept is
 * the event as an HTTP/1.1 chunk (`<hex size>\r\n<event>\r\n`, what `res.write` would frame it
 * as), so every watcher sends the same bytes with no per-watcher framing, copy or allocation. A
 * run of events written together goes out as one chunk (see `runChunk`).
 */
const encodedJson = new WeakMap<WatchEvent, Buffer>();
const encodedProtobuf = new WeakMap<WatchEvent, Buffer>();
/** The same for metadata-only watches (client-go's metadata informers), by encoding and version. */
const encodedPartial = new Map<string, WeakMap<WatchEvent, Buffer>>();

function partialCache(encoding: string, version: string): WeakMap<WatchEvent, Buffer> {
  const key = `${encoding}/${version}`;
  let m = encodedPartial.get(key);
  if (!m) encodedPartial.set(key, (m = new WeakMap()));
  return m;
}

/** At most this much is encoded ahead of the socket per write. */
const WRITE_BATCH_BYTES = 64 * 1024;

/**
 * The shared flush: a watch woken by a new event waits for the event loop to turn once, so the
 * events that arrived in the same turn (one etcd watch response often carries several) go out in
 * one socket write, and every watch of a collection writes the same run of events (one buffer,
 * built once: see `lastBatch`). One setImmediate serves every watch. Nothing waits longer, as
 * kube's cacher dispatches each event at once: an earlier 50 ms gathering window for fan-outs
 * saved CPU per delivery (one write per window instead of per event) but held every event for
 * it, doubling the delivery p99 of 1,000 watches against a server that writes each event at once
 * (bench: the fan-out floor).
 */
let flushTick: Promise<void> | undefined;

function flushWindow(): Promise<void> {
  return (flushTick ??= new Promise<void>((resolve) => {
    setImmediate(() => {
      flushTick = undefined;
      resolve();
    });
  }));
}

/** Watches woken since the last turn (QueueWatcher.notify), flushed together in the next one. */
let pumps: Array<() => void> = [];

/** Runs `pump` in the shared flush turn (flushWindow's, without a promise per watch). */
function schedulePump(pump: () => void): void {
  pumps.push(pump);
  if (pumps.length > 1) return;
  setImmediate(() => {
    const run = pumps;
    pumps = [];
    for (const p of run) p();
  });
}

/** A run of events one watch sent in one write: their chunks, event sizes, and the buffer sent. */
interface Batch {
  readonly events: WatchEvent[];
  readonly sizes: number[];
  readonly chunks: Buffer[];
  bytes: Buffer | undefined;
}

/** The last run written directly, by encoding (a watch sending the same run reuses its bytes). */
const lastBatch: { json: Batch | undefined; protobuf: Batch | undefined } = { json: undefined, protobuf: undefined };

function prefixOf(b: Batch, k: number): Batch {
  return { events: b.events.slice(0, k), sizes: b.sizes.slice(0, k), chunks: b.chunks.slice(0, k), bytes: undefined };
}

const CRLF = Buffer.from('\r\n');

/** `payload` as one HTTP/1.1 chunk, exactly as Node's `res.write` frames it. */
function chunkOf(payload: Buffer): Buffer {
  const head = `${payload.length.toString(16)}\r\n`;
  const out = Buffer.allocUnsafe(head.length + payload.length + 2);
  out.write(head, 0, 'latin1');
  payload.copy(out, head.length);
  CRLF.copy(out, head.length + payload.length);
  return out;
}

/** Where the event starts in a chunk made by chunkOf (after `<hex size>\r\n`). */
function payloadStart(chunk: Buffer): number {
  let i = 0;
  while (chunk[i] !== 13) i++;
  return i + 2;
}

/**
 * A run of events' chunks as one chunk. A watch stream's events are delimited by their own
 * framing (a newline, or Protobuf's length prefix), never by chunks: clients read the body as one
 * stream, so one chunk per run costs each client one body callback per write instead of one per
 * event. kube does the same: its watch handler flushes only once no further event is waiting.
 */
function runChunk(chunks: readonly Buffer[]): Buffer {
  if (chunks.length === 1) return chunks[0]!;
  const payloads = chunks.map((c) => c.subarray(payloadStart(c), c.length - 2));
  let size = 0;
  for (const p of payloads) size += p.length;
  const head = `${size.toString(16)}\r\n`;
  const out = Buffer.allocUnsafe(head.length + size + 2);
  let at = out.write(head, 0, 'latin1');
  for (const p of payloads) at += p.copy(out, at);
  CRLF.copy(out, at);
  return out;
}

/** Node's http internals this module writes around (see directSocket). */
interface OutgoingInternals {
  chunkedEncoding?: boolean;
  _hasBody?: boolean;
  outputData?: unknown[];
}

/**
 * The socket a watch response may write its chunks to itself: the response is the connection's
 * current one, its headers are out, nothing of it is buffered in `res`, and its body is chunked.
 * Otherwise (an HTTP/1.0 client, a pipelined response still queued, a HEAD) undefined, and the
 * watch writes through `res` as any response does. Either way the client gets the same bytes.
 */
function directSocket(res: ResourceRequest['res']): Socket | undefined {
  const o = res as unknown as OutgoingInternals;
  const s = res.socket as (Socket & { _httpMessage?: unknown }) | null;
  if (!s || s._httpMessage !== res || !res.headersSent || o.chunkedEncoding !== true || o._hasBody !== true) return undefined;
  if (!Array.isArray(o.outputData) || o.outputData.length !== 0 || s.destroyed) return undefined;
  return s;
}

export async function serveWatch(r: ResourceRequest, opts: ParsedListOptions, format: ResponseFormat, include: IncludeObject): Promise<void> {
  if (format.encoding === 'yaml') {
    throw notAcceptable(['application/json', 'application/json;stream=watch', 'application/vnd.kubernetes.protobuf', 'application/vnd.kubernetes.protobuf;stream=watch']);
  }
  const protobufStream = format.encoding === 'protobuf';
  const partial = format.partial ? { version: format.partial.version, cache: partialCache(format.encoding, format.partial.version) } : undefined;
  // kube transforms each event's object; a list form cannot be made of one, so kube's encoder
  // fails on the first event and the watch ends there (an ERROR event still goes out).
  const endAtFirstEvent = format.partial?.list === true;
  const watchOpts = {
    resourceVersion: opts.resourceVersion ?? '',
    bookmarks: opts.allowWatchBookmarks,
    ...(opts.predicate ? { predicate: opts.predicate } : {}),
    ...(opts.indexValue !== undefined ? { indexValue: opts.indexValue } : {}),
  };
  // The legacy /watch/.../<name> path watches one object.
  const watcher = await r.store.watch(r.scope, watchOpts, r.target.name || undefined);
  const { res } = r;
  // kube's apiserver_registered_watchers and apiserver_watch_events_{total,sizes}, by the watched
  // group, version and kind (children looked up once per watch).
  const metrics = metricsOf(r.catalog)?.watchSeries(r.def.group, r.def.version, r.def.kind);
  metrics?.watchers.inc();
  // Unset or 0: kube picks a random timeout between --min-request-timeout and twice that (with
  // --min-request-timeout=0, none: the watch lasts until it ends otherwise).
  const timeoutS = opts.timeoutSeconds || r.minRequestTimeoutSeconds * (1 + Math.random());
  const timer = timeoutS > 0 ? setTimeout(() => watcher.stop(), timeoutS * 1000) : undefined;
  const onClose = (): void => watcher.stop();
  res.once('close', onClose);
  res.statusCode = 200;
  res.setHeader('Content-Type', format.table ? format.contentType : protobufStream ? `${format.contentType};stream=watch` : 'application/json');
  res.setHeader('Cache-Control', 'no-cache, private');
  res.flushHeaders();
  /** The event as one HTTP/1.1 chunk (see chunkOf); shared by every watcher it is the same for. */
  const encodeEvent = (e: WatchEvent): Buffer => {
    if (e.type === 'ERROR') {
      const status = toStatusError(e.error, r.def).toStatus() as unknown as Record<string, unknown>;
      return chunkOf(protobufStream ? encodeWatchEventFrame('ERROR', status) : Buffer.from(`${stringifyJson({ type: 'ERROR', object: status })}\n`));
    }
    if (partial) {
      // Each object as PartialObjectMetadata, encoded once per event for every such watcher.
      let chunk = partial.cache.get(e);
      if (!chunk) {
        const object = asPartialObjectMetadata(e.object, partial.version) as unknown as Record<string, unknown>;
        const payload = protobufStream ? encodeWatchEventFrame(e.type, object) : Buffer.from(`${stringifyJson({ type: e.type, object })}\n`);
        partial.cache.set(e, (chunk = chunkOf(payload)));
      }
      return chunk;
    }
    if (protobufStream) {
      // Protobuf watches are length-prefixed WatchEvent frames (see protobuf/codec.ts).
      let frame = encodedProtobuf.get(e);
      if (!frame) encodedProtobuf.set(e, (frame = chunkOf(encodeWatchEventFrame(e.type, e.object as Record<string, unknown>))));
      return frame;
    }
    if (format.table && e.type !== 'BOOKMARK') {
      return chunkOf(Buffer.from(`${stringifyJson({ type: e.type, object: tableOfObject(r.def, e.object, include, format.table) })}\n`));
    }
    let line = encodedJson.get(e);
    if (!line) encodedJson.set(e, (line = chunkOf(Buffer.from(`${stringifyJson({ type: e.type, object: e.object })}\n`))));
    return line;
  };
  const wanted = (e: WatchEvent): boolean => e.type !== 'BOOKMARK' || opts.allowWatchBookmarks;
  let socket: Socket | undefined;
  const slot = format.table || partial ? undefined : protobufStream ? 'protobuf' : 'json';
  /**
   * Sends `first` and what else is ready as one chunk. Watches that flush the same run of events
   * (every watch of a collection, woken by one flush turn) send the same bytes: the first builds
   * them, the others find the run in `lastBatch` and write that buffer again.
   */
  const writeDirect = (to: Socket, first: WatchEvent): boolean => {
    const cand = slot ? lastBatch[slot] : undefined;
    let own: Batch | undefined = cand ? undefined : { events: [], sizes: [], chunks: [], bytes: undefined };
    let k = 0;
    let bytes = 0;
    let n = 0;
    for (let e: WatchEvent | undefined = first; e; e = bytes < WRITE_BATCH_BYTES ? watcher.poll() : undefined) {
      if (!wanted(e)) continue;
      let size: number;
      if (!own && cand!.events[k] === e) {
        size = cand!.sizes[k++]!;
      } else {
        own ??= prefixOf(cand!, k);
        const chunk = encodeEvent(e);
        size = chunk.length - payloadStart(chunk) - 2;
        own.events.push(e);
        own.sizes.push(size);
        own.chunks.push(chunk);
      }
      metrics?.sizes.observe(size);
      bytes += size;
      n++;
    }
    if (n === 0) return true;
    metrics?.events.inc(n);
    if (!own && k < cand!.events.length) own = prefixOf(cand!, k);
    if (!own) return to.write(cand!.bytes!);
    own.bytes = runChunk(own.chunks);
    if (slot) lastBatch[slot] = own;
    return to.write(own.bytes);
  };
  /** The same through `res` (one write: `res` frames it as one chunk, or as HTTP/2 data). */
  const writeThroughRes = (first: WatchEvent): boolean => {
    const payloads: Buffer[] = [];
    let bytes = 0;
    for (let e: WatchEvent | undefined = first; e; e = bytes < WRITE_BATCH_BYTES ? watcher.poll() : undefined) {
      if (!wanted(e)) continue;
      const chunk = encodeEvent(e);
      const payload = chunk.subarray(payloadStart(chunk), chunk.length - 2);
      metrics?.sizes.observe(payload.length);
      payloads.push(payload);
      bytes += payload.length;
    }
    if (payloads.length === 0) return true;
    metrics?.events.inc(payloads.length);
    return res.write(payloads.length === 1 ? payloads[0]! : Buffer.concat(payloads, bytes));
  };
  /**
   * Writes what is ready: `first` and what follows it (one socket write, see below). False when
   * the watch is to end here (the client is gone, or a list form's first event went out); else
   * whether the socket took the bytes without backpressure is in `blocked`.
   */
  let blocked: NodeJS.EventEmitter | undefined;
  const send = (first: WatchEvent): boolean => {
    if (endAtFirstEvent && wanted(first)) {
      if (first.type === 'ERROR') {
        const chunk = encodeEvent(first);
        res.write(chunk.subarray(payloadStart(chunk), chunk.length - 2));
      }
      return false;
    }
    // What is ready now goes out in one socket write (one TLS record run, one syscall), up to a
    // bound: a client that does not read fills its socket once and then holds no more than a
    // position in the snapshot and its bounded queue — never the collection's encoding.
    // Once direct, a response stays its connection's current one until it ends.
    if (!socket || socket.destroyed) socket = directSocket(res);
    const ok = socket ? writeDirect(socket, first) : writeThroughRes(first);
    blocked = ok ? undefined : (socket ?? res);
    return !res.destroyed;
  };
  const drained = (out: NodeJS.EventEmitter, then: () => void): void => {
    const done = (): void => {
      out.off('drain', done);
      res.off('close', done);
      then();
    };
    out.once('drain', done);
    res.once('close', done);
  };
  try {
    if (typeof watcher.notify === 'function') {
      // Woken synchronously by the watcher and flushed with every other woken watch in one shared
      // turn (see schedulePump): no promise per watch and event on a fan-out's hot path.
      await new Promise<void>((resolve, reject) => {
        const pump = (): void => {
          try {
            for (;;) {
              const first = watcher.poll();
              if (!first) {
                if (watcher.notify!(wake)) return;
                // Not armed (initial events to load, or the end): the general path below.
                watcher.next().then((e) => {
                  try {
                    if (!e || !send(e)) resolve();
                    else if (blocked) drained(blocked, pump);
                    else schedulePump(pump);
                  } catch (err) {
                    reject(err);
                  }
                }, reject);
                return;
              }
              if (!send(first)) return resolve();
              if (blocked) return drained(blocked, pump);
            }
          } catch (e) {
            reject(e);
          }
        };
        const wake = (): void => schedulePump(pump);
        pump();
      });
    } else {
      for (;;) {
        let first = watcher.poll();
        if (!first) {
          // Nothing ready: wait for the next event, then for the shared flush window, so the events
          // that follow it within the window go out in the same write.
          first = await watcher.next();
          if (!first) break;
          await flushWindow();
        }
        if (!send(first)) break;
        const out = blocked;
        if (out) await new Promise<void>((resolve) => drained(out, resolve));
        if (res.destroyed) break;
      }
    }
  } finally {
    metrics?.watchers.dec();
    clearTimeout(timer);
    res.off('close', onClose);
    watcher.stop();
    if (!res.destroyed) res.end();
  }
}
