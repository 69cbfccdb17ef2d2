/**
 * kube's audit log backend (plugin/pkg/audit/log) behind a buffer (plugin/pkg/audit/buffered):
 * events are encoded at once and written asynchronously, so a slow, full or failing disk never
 * holds a request. Past the buffer's bound an event is dropped and counted as an error. The file
 * rotates as lumberjack (kube's log writer) does: past --audit-log-maxsize MB the file is renamed to
 * `<name>-<UTC 2006-01-02T15-04-05.000><ext>` and a new one started; backups beyond
 * --audit-log-maxbackup, or older than --audit-log-maxage days, are removed.
 */
import { closeSync, mkdirSync, openSync, promises as fsp } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';
import type { Logger } from '../log.js';
import { encodeEventJSON, encodeEventLegacy, type AuditEvent } from './event.js';

/** How long the log backend gathers events before writing them. */
const WRITE_DELAY_MS = 5;

export const LOG_FORMATS = ['legacy', 'json'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

export interface LogBackendOptions {
  /** A file, or '-' for standard out. */
  path: string;
  format: LogFormat;
  /** Megabytes before rotation; 0 is lumberjack's default, 100. */
  maxSizeMB: number;
  /** Backups kept; 0 keeps all. */
  maxBackups: number;
  /** Days a backup is kept (by the time in its name); 0 keeps them regardless of age. */
  maxAgeDays: number;
  log: Logger;
  /** Events the buffer holds at most (kube's log buffer: 10000). */
  bufferSize?: number;
  /** Bytes the buffer holds at most. */
  bufferBytes?: number;
  /** Each event handed to the backend (`apiserver_audit_event_total`). */
  onEvent?: () => void;
  /** Events that could not be written (`apiserver_audit_error_total{plugin="log"}`). */
  onError?: (events: number) => void;
  /** For tests: the clock backups are named by. */
  now?: () => Date;
}

export interface AuditBackend {
  /** Encodes the event now and queues it; never blocks, never throws. */
  processEvent(ev: AuditEvent): void;
  /** Writes what is queued, then closes the file. */
  close(): Promise<void>;
}

const MEGABYTE = 1024 * 1024;
const LUMBERJACK_DEFAULT_MAX_MB = 100;
const ERROR_LOG_INTERVAL_MS = 10_000;

/** lumberjack's backup name: `<name without ext>-<UTC time>.<ext>` beside the file. */
export function backupName(path: string, t: Date): string {
  const ext = extname(path);
  const prefix = basename(path).slice(0, basename(path).length - ext.length);
  const stamp = t.toISOString().replace(/:/g, '-').replace(/Z$/, '');
  return join(dirname(path), `${prefix}-${stamp}${ext}`);
}

/** The time in a backup's name, or undefined when the name is not one of this file's backups. */
function backupTime(path: string, file: string): number | undefined {
  const ext = extname(path);
  const prefix = `${basename(path).slice(0, basename(path).length - ext.length)}-`;
  if (!file.startsWith(prefix) || !file.endsWith(ext)) return undefined;
  const stamp = file.slice(prefix.length, file.length - ext.length);
  const m = /^(\d{4}-\d{2}-\d{2})T(\d{2})-(\d{2})-(\d{2}\.\d{3})$/.exec(stamp);
  if (!m) return undefined;
  const t = Date.parse(`${m[1]}T${m[2]}:${m[3]}:${m[4]}Z`);
  return Number.isNaN(t) ? undefined : t;
}

/**
 * kube's ensureLogFile: the directory and the file exist and open for writing at start (mode
 * 0600), so a path that can never work fails start-up, not every request later.
 */
export function ensureLogFile(path: string): void {
  try {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    closeSync(openSync(path, 'a+', 0o600));
  } catch (e) {
    throw new Error(`ensureLogFile: ${(e as Error).message}`);
  }
}

export function createLogBackend(opts: LogBackendOptions): AuditBackend {
  const encode = opts.format === 'legacy' ? encodeEventLegacy : encodeEventJSON;
  const toStdout = opts.path === '-';
  if (!toStdout) ensureLogFile(opts.path);
  const maxBytes = (opts.maxSizeMB > 0 ? opts.maxSizeMB : LUMBERJACK_DEFAULT_MAX_MB) * MEGABYTE;
  const bufferSize = opts.bufferSize ?? 10_000;
  const bufferBytes = opts.bufferBytes ?? 64 * MEGABYTE;
  const now = opts.now ?? (() => new Date());

  const queue: string[] = [];
  let queuedBytes = 0;
  let draining: Promise<void> | undefined;
  let closed = false;
  let file: fsp.FileHandle | undefined;
  let size = 0;
  let lastErrorLog = 0;
  let suppressed = 0;

  // Counted, and logged at most every ERROR_LOG_INTERVAL_MS — never with an event's content.
  const failed = (events: number, err: unknown): void => {
    opts.onError?.(events);
    const t = Date.now();
    if (t - lastErrorLog < ERROR_LOG_INTERVAL_MS) {
      suppressed += events;
      return;
    }
    lastErrorLog = t;
    opts.log.error('audit log: events could not be written', { plugin: 'log', events: events + suppressed, error: (err as Error)?.message ?? String(err) });
    suppressed = 0;
  };

  const open = async (): Promise<fsp.FileHandle> => {
    if (file) return file;
    // lumberjack's openExistingOrNew: append to the file as it is.
    const f = await fsp.open(opts.path, 'a', 0o600);
    try {
      size = (await f.stat()).size;
    } catch {
      size = 0;
    }
    file = f;
    return f;
  };

  const removeOldBackups = async (): Promise<void> => {
    if (opts.maxBackups <= 0 && opts.maxAgeDays <= 0) return;
    const dir = dirname(opts.path);
    const backups = (await fsp.readdir(dir)).flatMap((name) => {
      const t = backupTime(opts.path, name);
      return t === undefined ? [] : [{ name, t }];
    });
    backups.sort((a, b) => b.t - a.t);
    const remove = new Set<string>();
    if (opts.maxBackups > 0) for (const b of backups.slice(opts.maxBackups)) remove.add(b.name);
    if (opts.maxAgeDays > 0) {
      const cutoff = now().getTime() - opts.maxAgeDays * 24 * 3600 * 1000;
      for (const b of backups) if (b.t < cutoff) remove.add(b.name);
    }
    await Promise.all([...remove].map((name) => fsp.rm(join(dir, name), { force: true })));
  };

  const rotate = async (): Promise<void> => {
    if (file) {
      const f = file;
      file = undefined;
      await f.close();
    }
    await fsp.rename(opts.path, backupName(opts.path, now()));
    size = 0;
    removeOldBackups().catch((e: unknown) => opts.log.error('audit log: removing old backups failed', { error: (e as Error).message }));
  };

  const writeFile = async (chunks: Buffer[], bytes: number, events: number): Promise<void> => {
    if (events === 0) return;
    try {
      const f = await open();
      await f.write(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, bytes));
      size += bytes;
    } catch (e) {
      failed(events, e);
    }
  };

  const writeStdout = (text: string, events: number): Promise<void> =>
    new Promise((resolve) => {
      process.stdout.write(text, (e) => {
        if (e) failed(events, e);
        resolve();
      });
    });

  const drain = async (): Promise<void> => {
    while (queue.length > 0) {
      const lines = queue.splice(0, queue.length);
      for (const l of lines) queuedBytes -= l.length;
      if (toStdout) {
        await writeStdout(lines.join(''), lines.length);
        continue;
      }
      let chunks: Buffer[] = [];
      let bytes = 0;
      for (const line of lines) {
        const b = Buffer.from(line);
        if (b.length > maxBytes) {
          failed(1, new Error(`write length ${b.length} exceeds maximum file size ${maxBytes}`));
          continue;
        }
        if (file === undefined && bytes === 0) {
          try {
            await open();
          } catch {
            // Reported with the write below.
          }
        }
        if (size + bytes + b.length > maxBytes) {
          await writeFile(chunks, bytes, chunks.length);
          chunks = [];
          bytes = 0;
          try {
            await rotate();
          } catch (e) {
            failed(0, e);
          }
        }
        chunks.push(b);
        bytes += b.length;
      }
      await writeFile(chunks, bytes, chunks.length);
    }
  };

  const kick = (): void => {
    if (draining) return;
    // Writes gather what a few milliseconds bring: one file write per batch, not per event (a
    // write costs the event loop about as much as encoding ten events).
    draining = new Promise((r) => setTimeout(r, closed ? 0 : WRITE_DELAY_MS)).then(drain).finally(() => {
      draining = undefined;
      if (queue.length > 0 && !closed) kick();
    });
  };

  return {
    processEvent(ev) {
      opts.onEvent?.();
      if (closed) return;
      let line: string;
      try {
        line = encode(ev);
      } catch (e) {
        failed(1, e);
        return;
      }
      if (queue.length >= bufferSize || queuedBytes + line.length > bufferBytes) {
        failed(1, new Error('audit buffer is full'));
        return;
      }
      queue.push(line);
      queuedBytes += line.length;
      kick();
    },
    async close() {
      closed = true;
      while (draining) await draining;
      if (queue.length > 0) await drain();
      const f = file;
      file = undefined;
      await f?.close().catch(() => undefined);
    },
  };
}
