/**
 * Watch: a chunked stream of `{type, object}` JSON documents, one per line, until the client goes
 * away, `timeoutSeconds` passes, or the store ends the watch (e.g. after an ERROR event).
 */
import { notAcceptable } from '@plinth/api';
import type { WatchEvent } from '@plinth/storage';
import type { ResponseFormat } from '../negotiation.js';
import { tableOfObject, type IncludeObject } from '../table.js';
import { encodeWatchEventFrame } from '../protobuf/codec.js';
import type { ParsedListOptions } from './options.js';
import { toStatusError } from '../registry/interpret.js';
import type { ResourceRequest } from './scope.js';
import { metricsOf } from '../metrics/index.js';

/**
 * Encoded events, by event object: the watch cache hands the same event object to every watcher
 * it fits unchanged, so a fan-out to N watchers serializes it once, not N times.
 */
const encodedJson = new WeakMap<WatchEvent, Buffer>();
const encodedProtobuf = new WeakMap<WatchEvent, Buffer>();

/** At most this much is encoded ahead of the socket per write. */
const WRITE_BATCH_BYTES = 64 * 1024;

/** kube's --min-request-timeout default: a watch without timeoutSeconds lasts 30–60 minutes. */
const MIN_REQUEST_TIMEOUT_S = 1800;

export async function serveWatch(r: ResourceRequest, opts: ParsedListOptions, format: ResponseFormat, include: IncludeObject): Promise<void> {
  if (format.encoding === 'yaml') {
    throw notAcceptable(['application/json', 'application/json;stream=watch', 'application/vnd.kubernetes.protobuf', 'application/vnd.kubernetes.protobuf;stream=watch']);
  }
  const protobufStream = format.encoding === 'protobuf';
  const watchOpts = { resourceVersion: opts.resourceVersion ?? '', bookmarks: opts.allowWatchBookmarks, ...(opts.predicate ? { predicate: opts.predicate } : {}) };
  // The legacy /watch/.../<name> path watches one object.
  const watcher = await r.store.watch(r.scope, watchOpts, r.info.name || undefined);
  const { res } = r;
  // kube's apiserver_registered_watchers and apiserver_watch_events_{total,sizes}, by the watched
  // group, version and kind (children looked up once per watch).
  const metrics = metricsOf(r.catalog)?.watchSeries(r.def.group, r.def.version, r.def.kind);
  metrics?.watchers.inc();
  // Unset or 0: kube picks a random timeout between --min-request-timeout and twice that.
  const timeoutS = opts.timeoutSeconds || MIN_REQUEST_TIMEOUT_S * (1 + Math.random());
  const timer = setTimeout(() => watcher.stop(), timeoutS * 1000);
  const onClose = (): void => watcher.stop();
  res.once('close', onClose);
  res.statusCode = 200;
  res.setHeader('Content-Type', format.table ? format.contentType : protobufStream ? `${format.contentType};stream=watch` : 'application/json');
  res.setHeader('Cache-Control', 'no-cache, private');
  res.flushHeaders();
  const encodeEvent = (e: WatchEvent): Buffer => {
    if (e.type === 'ERROR') {
      const status = toStatusError(e.error, r.def).toStatus() as unknown as Record<string, unknown>;
      return protobufStream ? encodeWatchEventFrame('ERROR', status) : Buffer.from(`${JSON.stringify({ type: 'ERROR', object: status })}\n`);
    }
    if (protobufStream) {
      // Protobuf watches are length-prefixed WatchEvent frames (see protobuf/codec.ts).
      let frame = encodedProtobuf.get(e);
      if (!frame) encodedProtobuf.set(e, (frame = encodeWatchEventFrame(e.type, e.object as Record<string, unknown>)));
      return frame;
    }
    if (format.table && e.type !== 'BOOKMARK') {
      return Buffer.from(`${JSON.stringify({ type: e.type, object: tableOfObject(r.def, e.object, include, format.table) })}\n`);
    }
    let line = encodedJson.get(e);
    if (!line) encodedJson.set(e, (line = Buffer.from(`${JSON.stringify({ type: e.type, object: e.object })}\n`)));
    return line;
  };
  const wanted = (e: WatchEvent): boolean => e.type !== 'BOOKMARK' || opts.allowWatchBookmarks;
  try {
    for (;;) {
      const first = await watcher.next();
      if (!first) break;
      // What is ready now goes out in one write (one TLS record, one syscall), up to a bound: a
      // client that does not read fills its socket once and then holds no more than a position
      // in the snapshot and its bounded queue — never the collection's encoding.
      const chunks: Buffer[] = [];
      let bytes = 0;
      for (let e: WatchEvent | undefined = first; e; e = bytes < WRITE_BATCH_BYTES ? watcher.poll() : undefined) {
        if (!wanted(e)) continue;
        const b = encodeEvent(e);
        if (metrics) {
          metrics.events.inc();
          metrics.sizes.observe(b.length);
        }
        chunks.push(b);
        bytes += b.length;
      }
      if (chunks.length === 0) continue;
      const ok = res.write(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, bytes));
      if (!ok) await new Promise<void>((resolve) => {
        const done = (): void => {
          res.off('drain', done);
          res.off('close', done);
          resolve();
        };
        res.once('drain', done);
        res.once('close', done);
      });
      if (res.destroyed) break;
    }
  } finally {
    metrics?.watchers.dec();
    clearTimeout(timer);
    res.off('close', onClose);
    watcher.stop();
    if (!res.destroyed) res.end();
  }
}
