/**
 * The fan-out floor (issue 28 §2): the least a node:https server must do to serve one collection's
 * watch to many clients. One etcd watch per resource (on its key prefix, all namespaces, as
 * plinth's watch cache feed), started from the first watch's resourceVersion + 1; each etcd event
 * becomes the frame plinth writes for it (`{"type":"ADDED","object":{...}}\n`, the stored JSON with
 * `metadata.resourceVersion` spliced in by plinth's own `withResourceVersion`), built once and
 * written to every open watch of its namespace (chunked by Node's `res.write`).
 *
 * What arrives from etcd in one turn of the event loop goes out as one write per watch (a
 * `setImmediate`, no timer: no latency is added). Backpressure, as cheaply as it can be honoured:
 * a watch whose `res.write` returned false gets nothing more written until 'drain', its frames
 * queued by reference (no copy) and written then in one go.
 *
 * What a floor leaves out: no history (a watch joins the feed where it is: every watch of the
 * bench opens before the first write), no initial events, bookmarks, timeouts, selectors or
 * limits on a slow reader's queue.
 */
import type { ServerResponse } from 'node:http';
import type { IEvent } from 'etcd3';
import { withResourceVersion } from '@plinth/storage';
import type { FloorEtcd } from './clients.js';

interface Watch {
  readonly res: ServerResponse;
  /** Frames waiting for 'drain' (undefined: the socket takes writes). */
  blocked: Buffer[] | undefined;
}

interface Feed {
  /** `<prefix>/<resource>/`: keys are `<feed key><namespace>/<name>`. */
  readonly key: string;
  readonly byNamespace: Map<string, Set<Watch>>;
  watches: number;
  /** Frames of this turn, by namespace. */
  readonly pending: Map<string, Buffer[]>;
  scheduled: boolean;
  watch: Promise<{ cancel(): void }> | undefined;
}

export interface Fanout {
  /** Serves `res` as a watch of `resource` in `namespace` (`resourceVersion` R: events from R + 1). */
  serve(res: ServerResponse, namespace: string, resource: string, resourceVersion: number): void;
}

const HEADERS = { 'content-type': 'application/json', 'cache-control': 'no-cache, private' };

/** The object of an etcd event as plinth serves it: stored JSON with metadata.resourceVersion. */
function objectJson(value: Buffer, rv: number): string {
  const text = value.toString('utf8');
  const rvText = String(rv);
  const fast = withResourceVersion(text, rvText);
  if (fast !== undefined) return fast;
  const obj = JSON.parse(text) as { metadata: Record<string, unknown> };
  obj.metadata['resourceVersion'] = rvText;
  return JSON.stringify(obj);
}

/** The event as plinth writes it on a JSON watch; undefined for a delete etcd sent without prev_kv. */
function frameOf(ev: IEvent): Buffer | undefined {
  const rv = Number(ev.kv.mod_revision);
  if (ev.type === 'Delete') {
    if (!ev.prev_kv) return undefined;
    return Buffer.from(`{"type":"DELETED","object":${objectJson(ev.prev_kv.value, rv)}}\n`);
  }
  const type = ev.kv.create_revision === ev.kv.mod_revision ? 'ADDED' : 'MODIFIED';
  return Buffer.from(`{"type":"${type}","object":${objectJson(ev.kv.value, rv)}}\n`);
}

function write(w: Watch, bytes: Buffer): void {
  if (w.blocked) w.blocked.push(bytes);
  else if (!w.res.write(bytes)) w.blocked = [];
}

/** The fan-out of the floor's watches, under the floor's etcd `prefix`, fed through `etcd`. */
export function createFanout(etcd: FloorEtcd, prefix: string): Fanout {
  const feeds = new Map<string, Feed>();

  const flush = (feed: Feed): void => {
    feed.scheduled = false;
    for (const [ns, frames] of feed.pending) {
      const watches = feed.byNamespace.get(ns);
      if (!watches) continue;
      const bytes = frames.length === 1 ? frames[0]! : Buffer.concat(frames);
      for (const w of watches) write(w, bytes);
    }
    feed.pending.clear();
  };

  const onEvents = (feed: Feed, events: IEvent[]): void => {
    for (const ev of events) {
      const key = ev.kv.key.toString('latin1');
      const slash = key.indexOf('/', feed.key.length);
      if (slash < 0) continue;
      const ns = key.slice(feed.key.length, slash);
      if (!feed.byNamespace.has(ns)) continue;
      const frame = frameOf(ev);
      if (!frame) continue;
      let frames = feed.pending.get(ns);
      if (!frames) feed.pending.set(ns, (frames = []));
      frames.push(frame);
    }
    if (!feed.scheduled && feed.pending.size > 0) {
      feed.scheduled = true;
      setImmediate(flush, feed);
    }
  };

  const leave = (resource: string, feed: Feed, ns: string, w: Watch): void => {
    const set = feed.byNamespace.get(ns);
    if (!set?.delete(w)) return;
    if (set.size === 0) feed.byNamespace.delete(ns);
    if (--feed.watches > 0) return;
    // The last watch went away: so does the etcd watch.
    feeds.delete(resource);
    void feed.watch?.then((x) => x.cancel(), () => undefined);
  };

  return {
    serve(res, ns, resource, resourceVersion) {
      let feed = feeds.get(resource);
      if (!feed) {
        const f: Feed = { key: `${prefix}/${resource}/`, byNamespace: new Map(), watches: 0, pending: new Map(), scheduled: false, watch: undefined };
        f.watch = etcd.watchPrefix(f.key, resourceVersion + 1, (events) => onEvents(f, events));
        f.watch.catch((e: unknown) => process.stderr.write(`floor: etcd watch of ${f.key}: ${String(e)}\n`));
        feeds.set(resource, (feed = f));
      }
      const w: Watch = { res, blocked: undefined };
      let set = feed.byNamespace.get(ns);
      if (!set) feed.byNamespace.set(ns, (set = new Set()));
      set.add(w);
      feed.watches++;
      const joined = feed;
      res.writeHead(200, HEADERS);
      res.flushHeaders();
      res.on('drain', () => {
        const queued = w.blocked;
        w.blocked = undefined;
        if (queued && queued.length > 0) write(w, queued.length === 1 ? queued[0]! : Buffer.concat(queued));
      });
      res.once('close', () => leave(resource, joined, ns, w));
    },
  };
}
