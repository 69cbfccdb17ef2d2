/**
 * client-go's reflector in small: LIST (resourceVersion=0, limit=500, pages followed) then WATCH
 * from the list's resourceVersion with bookmarks and a timeoutSeconds in [300, 600) (reflector.go
 * 1.24); when the server ends a watch it resumes from the last seen resourceVersion, and a 410 Gone
 * makes it LIST again. It keeps a store (namespace/name → object) and hands every change to
 * `onEvent`. A watch is one HTTP/1.1 stream on a socket of its own (`watchAgent`).
 */
import { Agent, request as httpsRequest } from 'node:https';
import type { ClientRequest } from 'node:http';
import type { HollowClient } from './client.js';

/** The fields of an object the hollow actors read. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name: string;
    namespace?: string;
    uid: string;
    resourceVersion: string;
    generation?: number;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    ownerReferences?: Array<{ apiVersion: string; kind: string; name: string; uid: string; controller?: boolean }>;
    deletionTimestamp?: string;
    creationTimestamp?: string;
    generateName?: string;
  };
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
}

export type EventType = 'ADDED' | 'MODIFIED' | 'DELETED';

/** What to list and watch, with which client, and where the changes go. */
export interface InformerOptions {
  client: HollowClient;
  /** The collection path, e.g. /api/v1/pods. */
  path: string;
  /** Extra query (already encoded), e.g. fieldSelector=spec.nodeName%3Dn1. */
  query?: string;
  watchAgent: Agent;
  onEvent(type: EventType, obj: KubeObject): void;
}

/** A running reflector and its store. */
export interface Informer {
  readonly store: Map<string, KubeObject>;
  /** Resolves when the first LIST has been delivered. */
  readonly synced: Promise<void>;
  /** Watches (re)opened and LISTs done, for the report. */
  readonly stats: { lists: number; watches: number; events: number; relists: number };
  stop(): void;
}

const keyOf = (o: KubeObject): string => (o.metadata.namespace ? `${o.metadata.namespace}/${o.metadata.name}` : o.metadata.name);

interface ListBody {
  metadata: { resourceVersion: string; continue?: string };
  items: KubeObject[];
}

/** Starts a reflector on `opts.path` (list, then watch, resumed and re-listed as client-go does). */
export function createInformer(opts: InformerOptions): Informer {
  const store = new Map<string, KubeObject>();
  const stats = { lists: 0, watches: 0, events: 0, relists: 0 };
  const q = opts.query ? `${opts.query}&` : '';
  let stopped = false;
  let current: ClientRequest | undefined;
  let lastRv = '';
  let markSynced: () => void = () => undefined;
  const synced = new Promise<void>((r) => (markSynced = r));

  const apply = (type: EventType, obj: KubeObject): void => {
    const k = keyOf(obj);
    if (type === 'DELETED') store.delete(k);
    else store.set(k, obj);
    stats.events++;
    opts.onEvent(type, obj);
  };

  const list = async (): Promise<void> => {
    stats.lists++;
    const seen = new Set<string>();
    let cont = '';
    let rv = '';
    do {
      const page = await opts.client.must<ListBody>('GET', `${opts.path}?${q}limit=500&${cont ? `continue=${encodeURIComponent(cont)}` : 'resourceVersion=0'}`, undefined, [200]);
      if (!rv) rv = page.metadata.resourceVersion;
      for (const item of page.items) {
        const k = keyOf(item);
        seen.add(k);
        const old = store.get(k);
        if (!old || old.metadata.resourceVersion !== item.metadata.resourceVersion) apply(old ? 'MODIFIED' : 'ADDED', item);
      }
      cont = page.metadata.continue ?? '';
    } while (cont);
    for (const [k, o] of [...store]) if (!seen.has(k)) apply('DELETED', o);
    lastRv = rv;
  };

  /** One watch; resolves 'gone' on 410 (re-list), 'ended' when the server closed it. */
  const watchOnce = (): Promise<'gone' | 'ended'> =>
    new Promise((resolve) => {
      stats.watches++;
      const timeout = 300 + Math.floor(Math.random() * 300);
      const path = `${opts.path}?${q}allowWatchBookmarks=true&resourceVersion=${lastRv}&timeoutSeconds=${timeout}&watch=true`;
      const base = new URL(opts.client.info.server);
      const req = httpsRequest(
        {
          hostname: base.hostname,
          port: base.port,
          path,
          method: 'GET',
          headers: { authorization: `Bearer ${opts.client.token}`, accept: 'application/json', 'user-agent': opts.client.userAgent },
          agent: opts.watchAgent,
        },
        (res) => {
          if (res.statusCode !== 200) {
            res.resume();
            resolve(res.statusCode === 410 ? 'gone' : 'ended');
            return;
          }
          let buf = '';
          let result: 'gone' | 'ended' = 'ended';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            buf += chunk;
            let nl: number;
            while ((nl = buf.indexOf('\n')) >= 0) {
              const line = buf.slice(0, nl);
              buf = buf.slice(nl + 1);
              if (!line) continue;
              const e = JSON.parse(line) as { type: string; object: KubeObject & { code?: number } };
              if (e.type === 'ERROR') {
                if (e.object.code === 410) result = 'gone';
                continue;
              }
              if (e.object.metadata?.resourceVersion) lastRv = e.object.metadata.resourceVersion;
              if (e.type === 'BOOKMARK') continue;
              apply(e.type as EventType, e.object);
            }
          });
          res.on('end', () => resolve(result));
          res.on('error', () => resolve(result));
          res.on('close', () => resolve(result));
        },
      );
      req.on('error', () => resolve('ended'));
      req.end();
      current = req;
    });

  const run = async (): Promise<void> => {
    let backoff = 800;
    let needList = true;
    while (!stopped) {
      try {
        if (needList) {
          await list();
          markSynced();
          needList = false;
        }
        const r = await watchOnce();
        if (r === 'gone') {
          stats.relists++;
          needList = true;
        }
        backoff = 800;
      } catch {
        if (stopped) return;
        // reflector.go: backoff 800 ms doubling up to 30 s after an error.
        await new Promise((r) => setTimeout(r, backoff));
        backoff = Math.min(30_000, backoff * 2);
      }
    }
  };
  void run();
  return {
    store,
    synced,
    stats,
    stop() {
      stopped = true;
      current?.destroy();
    },
  };
}
