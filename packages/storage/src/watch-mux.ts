/**
 * A watch multiplexer over one raw etcd gRPC watch stream. The etcd3 library's watcher throws away
 * the compact revision of a cancelled watch (see TOOLING.md); on the raw stream we see it. Every
 * etcd watch of a store shares this one stream.
 */
import type { Etcd3, IWatchResponse, IEvent, IWatchRequest } from 'etcd3';

type Duplex = Awaited<ReturnType<Etcd3['watchClient']['watch']>>;

export interface RawWatchHandlers {
  onEvents(events: IEvent[], revision: number): void;
  /** The watch ended: compacted (with etcd's compact revision) or another cancel/stream failure. */
  onCancel(reason: { compactRevision: number; message: string }): void;
}

interface Registration {
  key: Buffer;
  rangeEnd: Buffer | undefined;
  /** Next revision to receive from; advanced as events arrive so a reconnect resumes exactly. */
  nextRevision: number;
  prevKv: boolean;
  handlers: RawWatchHandlers;
  watchId: string | undefined;
  cancelled: boolean;
  /** Resolves once etcd has confirmed the watch (first creation only). */
  onCreated?: () => void;
}

export interface RawWatch {
  cancel(): void;
}

export class WatchMux {
  readonly #client: Etcd3;
  #stream: Duplex | undefined;
  #connecting: Promise<Duplex> | undefined;
  /** Registrations waiting for their `created` response, in request order. */
  #pending: Registration[] = [];
  readonly #byId = new Map<string, Registration>();
  #closed = false;
  /** Count of etcd watches currently open on the stream (for tests and metrics). */
  get activeWatches(): number {
    return this.#byId.size;
  }

  constructor(client: Etcd3) {
    this.#client = client;
  }

  /**
   * Opens an etcd watch of [key, rangeEnd) starting at `startRevision`. `prevKv` asks etcd for each
   * event's previous value too (a deletion's last state); etcd reads it from its store for every
   * event, and it doubles an update's bytes on the stream.
   */
  async watch(key: Buffer, rangeEnd: Buffer | undefined, startRevision: number, handlers: RawWatchHandlers, prevKv = true): Promise<RawWatch> {
    const reg: Registration = { key, rangeEnd, nextRevision: startRevision, prevKv, handlers, watchId: undefined, cancelled: false };
    const stream = await this.#ensureStream();
    const created = new Promise<void>((resolve) => {
      reg.onCreated = resolve;
    });
    this.#sendCreate(stream, reg);
    await created;
    return {
      cancel: () => {
        if (reg.cancelled) return;
        reg.cancelled = true;
        if (reg.watchId !== undefined) {
          this.#byId.delete(reg.watchId);
          this.#write({ cancel_request: { watch_id: reg.watchId } });
        }
      },
    };
  }

  close(): void {
    this.#closed = true;
    const stream = this.#stream;
    this.#stream = undefined;
    // Half-closing is not enough: etcd keeps a watch stream open until the client cancels it, and
    // the open call would keep the process alive.
    stream?.end();
    stream?.cancel();
  }

  #sendCreate(stream: Duplex, reg: Registration): void {
    this.#pending.push(reg);
    const req: IWatchRequest = {
      create_request: { key: reg.key, start_revision: reg.nextRevision, prev_kv: reg.prevKv, progress_notify: false },
    };
    if (reg.rangeEnd) req.create_request!.range_end = reg.rangeEnd;
    stream.write(req);
  }

  #write(req: IWatchRequest): void {
    this.#stream?.write(req);
  }

  async #ensureStream(): Promise<Duplex> {
    if (this.#stream) return this.#stream;
    if (!this.#connecting) {
      this.#connecting = this.#client.watchClient.watch().then((stream) => {
        this.#stream = stream;
        this.#connecting = undefined;
        stream.on('data', (res: IWatchResponse) => this.#onResponse(res));
        const fail = (err: Error | undefined): void => this.#onStreamEnd(stream, err);
        stream.on('error', fail);
        stream.on('end', () => fail(undefined));
        return stream;
      });
      this.#connecting.catch(() => {
        this.#connecting = undefined;
      });
    }
    return this.#connecting;
  }

  #onResponse(res: IWatchResponse): void {
    const revision = Number(res.header?.revision ?? 0);
    if (res.created) {
      const reg = this.#pending.shift();
      if (!reg) return;
      reg.watchId = res.watch_id;
      reg.onCreated?.();
      delete reg.onCreated;
      if (reg.cancelled) {
        this.#write({ cancel_request: { watch_id: res.watch_id } });
        return;
      }
      this.#byId.set(res.watch_id, reg);
      if (res.canceled) this.#cancelReg(reg, res);
      return;
    }
    const reg = this.#byId.get(res.watch_id);
    if (res.canceled) {
      if (reg) this.#cancelReg(reg, res);
      return;
    }
    if (res.events && res.events.length > 0) {
      if (!reg) return;
      const last = res.events[res.events.length - 1]!;
      reg.nextRevision = Number(last.kv.mod_revision) + 1;
      reg.handlers.onEvents(res.events, revision);
      return;
    }
    // An empty, non-created response is a progress notification: we never ask for one (etcd 3.4
    // answers a progress request out of band, ahead of queued events: it proves nothing).
  }

  #cancelReg(reg: Registration, res: IWatchResponse): void {
    if (reg.watchId !== undefined) this.#byId.delete(reg.watchId);
    if (reg.cancelled) return;
    reg.cancelled = true;
    reg.handlers.onCancel({ compactRevision: Number(res.compact_revision ?? 0), message: res.cancel_reason || 'watch cancelled' });
  }

  /** The stream broke: re-open every live watch from where it was, on a new stream. */
  #onStreamEnd(stream: Duplex, err: Error | undefined): void {
    if (this.#stream !== stream) return;
    this.#stream = undefined;
    const live = [...this.#pending, ...this.#byId.values()].filter((r) => !r.cancelled);
    this.#pending = [];
    this.#byId.clear();
    if (this.#closed) {
      for (const r of live) {
        r.onCreated?.();
        r.cancelled = true;
        r.handlers.onCancel({ compactRevision: 0, message: 'store closed' });
      }
      return;
    }
    const retry = (attempt: number): void => {
      this.#ensureStream()
        .then((s) => {
          for (const r of live) {
            if (r.cancelled) continue;
            r.watchId = undefined;
            this.#sendCreate(s, r);
          }
        })
        .catch(() => {
          if (this.#closed || attempt > 50) {
            for (const r of live) r.handlers.onCancel({ compactRevision: 0, message: `etcd watch stream failed: ${err?.message ?? 'ended'}` });
            return;
          }
          setTimeout(() => retry(attempt + 1), Math.min(100 * 2 ** attempt, 2000)).unref();
        });
    };
    retry(0);
  }
}
