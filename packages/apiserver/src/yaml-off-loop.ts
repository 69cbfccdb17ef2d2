/**
 * Large YAML request bodies parsed on a worker thread. The YAML library is linear but slow
 * (~0.8 µs per byte): a 3 MiB body held the event loop, and so every other client, for ~2.5 s.
 * Bodies from {@link OFF_LOOP_MIN_BYTES} up go to one worker (started on first use, unref'd, so
 * it never keeps the process up); the loop only receives the value (a structured clone, ~15× cheaper
 * than the parse). Smaller bodies, and any body while the worker is unavailable, are parsed
 * in place: same function, same answers, same errors.
 */
import { Worker } from 'node:worker_threads';
import { NestingTooDeepError } from '@plinth/api';
import { parseYaml, YamlError, type YamlParseOptions } from './yaml.js';

/** Below this a parse costs the loop less than handing it over would (~100 µs per KiB of YAML). */
export const OFF_LOOP_MIN_BYTES = 64 * 1024;

/** A body for the worker. */
export interface YamlJob {
  id: number;
  text: string;
  /** Whether to collect duplicate keys (a strict decode). */
  duplicateKeys: boolean;
}

/** The worker's answer: the value, or the error's kind and message. */
export type YamlJobResult =
  | { id: number; ok: true; value: unknown; duplicateKeys?: string[] }
  | { id: number; ok: false; kind: 'nesting' | 'yaml' | 'other'; message: string };

interface Pending {
  resolve(v: YamlJobResult): void;
  reject(e: Error): void;
}

let worker: Worker | undefined;
let nextId = 1;
const pending = new Map<number, Pending>();

function failAll(e: Error): void {
  worker = undefined;
  for (const p of pending.values()) p.reject(e);
  pending.clear();
}

function getWorker(): Worker {
  if (worker) return worker;
  const w = new Worker(new URL('./yaml-worker.js', import.meta.url));
  w.on('message', (r: YamlJobResult) => {
    const p = pending.get(r.id);
    pending.delete(r.id);
    if (pending.size === 0) w.unref();
    p?.resolve(r);
  });
  // Only the current worker's end fails the pending jobs (an old one's exit may come late).
  w.on('error', (e) => {
    if (worker === w) failAll(e);
  });
  w.on('exit', (code) => {
    if (worker === w) failAll(new Error(`the YAML worker exited with code ${code}`));
  });
  // Referenced only while it has work (adding a listener refs it): an idle worker never keeps
  // the process up.
  w.unref();
  worker = w;
  return w;
}

function runOnWorker(job: YamlJob): Promise<YamlJobResult> {
  return new Promise<YamlJobResult>((resolve, reject) => {
    try {
      const w = getWorker();
      pending.set(job.id, { resolve, reject });
      w.ref();
      w.postMessage(job);
    } catch (e) {
      pending.delete(job.id);
      reject(e instanceof Error ? e : new Error(String(e)));
    }
  });
}

/**
 * {@link parseYaml}, on the worker for large texts. Same value, same errors (NestingTooDeepError,
 * YamlError), same duplicate keys in `opts.duplicateKeys`.
 */
export async function parseYamlOffLoop(text: string, opts: YamlParseOptions = {}): Promise<unknown> {
  if (text.length < OFF_LOOP_MIN_BYTES) return parseYaml(text, opts);
  let r: YamlJobResult;
  try {
    r = await runOnWorker({ id: nextId++, text, duplicateKeys: opts.duplicateKeys !== undefined });
  } catch {
    // The worker could not run (no threads, or it died): the loop parses, as it always did.
    return parseYaml(text, opts);
  }
  if (!r.ok) {
    if (r.kind === 'nesting') throw new NestingTooDeepError('the YAML document');
    throw r.kind === 'yaml' ? new YamlError(r.message) : new Error(r.message);
  }
  if (opts.duplicateKeys && r.duplicateKeys) for (const d of r.duplicateKeys) opts.duplicateKeys.push(d);
  return r.value;
}
