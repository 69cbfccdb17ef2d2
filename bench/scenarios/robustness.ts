/**
 * Scenario 8: robustness with large collections, each part on a plinth and an etcd prefix of its
 * own, with Secrets of ~10 KB written straight into etcd in the form plinth stores them.
 *
 * 1. Restart with ~100 MB in one collection: the Secrets are in etcd before plinth starts, so its
 *    watch cache must load them all at start-up. Time to /readyz 200 (within a deadline), then an
 *    unpaged list, a paged list (limit 500) and an unpaged list from the cache (resourceVersion=0).
 * 2. 100 stalled watchers on ~10 MB: clients that open a watch (whose initial events are the whole
 *    collection) and never read. Plinth's RSS growth over a settled baseline while they stall and
 *    after they go, and whether a normal client's GETs are still answered meanwhile. The Secrets
 *    are written after plinth is ready (its cache takes them in through its etcd watch), so this
 *    part measures watchers, not the start-up that part 1 measures.
 *
 * Neither part may hang or end the bench: a start-up that misses its deadline, a failed request or
 * plinth's RSS passing 4 GiB (plinth is then killed) becomes a FAILED row with the reason.
 */
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { performance } from 'node:perf_hooks';
import type { BenchContext } from '../lib/context.js';
import type { KubeClient } from '../lib/http.js';
import { startPlinth, type PlinthProcess } from '../lib/plinth.js';
import { procRssBytes } from '../lib/proc.js';
import type { Row, Target } from '../lib/report.js';
import { Histogram, sleep, withTimeout } from '../lib/stats.js';
import { bulkPut } from '../lib/etcd.js';
import { storedNamespace, storedSecret, toBytes } from '../lib/objects.js';

/** Base64 bytes of data per Secret: ~10 KB objects, as the sizes in the row names assume. */
const SECRET_DATA_BYTES = 10_000;
/** Past this RSS plinth is killed: the machine is shared, and the figure is a failure anyway. */
const RSS_LIMIT_BYTES = 4 * 2 ** 30;
const RSS_LIMIT_TEXT = 'RSS exceeded 4 GiB';
const MiB = 2 ** 20;

const RESTART_PREFIX = '/bench-robust-restart';
const EMPTY_PREFIX = '/bench-robust-empty';
const WATCH_PREFIX = '/bench-robust-watch';

export async function robustnessScenario(ctx: BenchContext): Promise<void> {
  const details: Record<string, unknown> = {};
  ctx.details['robustness'] = details;
  // Each part reports its own failures as rows; a part that throws anyway fails only its rows.
  await runPart(ctx, restartRowNames(ctx.size(10_000)), async () => {
    details['restart'] = await restartWithLargeCollection(ctx);
  });
  await runPart(ctx, stalledRowNames(ctx.size(1000)), async () => {
    details['stalledWatchers'] = await stalledWatchers(ctx);
  });
}

/** A row a part owes: its name, unit and target (none if absent). */
type RowName = [scenario: string, unit: string, target?: Target];

/** Runs a part; if it throws, every row it owes is a FAILED row with the reason. */
async function runPart(ctx: BenchContext, rows: RowName[], fn: () => Promise<void>): Promise<void> {
  const before = ctx.rows.length;
  try {
    await fn();
  } catch (e) {
    const reason = failureReason(e);
    ctx.log(`  FAILED: ${reason}`);
    ctx.rows.splice(before);
    for (const [scenario, unit, target] of rows) ctx.rows.push(failedRow(scenario, unit, reason, target ? { target } : {}));
  }
}

// ---------------------------------------------------------------------------------------------
// Part 1: restart with a large collection

interface ListFigures {
  ms: number;
  count: number;
  pages: number;
  bytes: number;
}

function restartRowNames(count: number): RowName[] {
  const mb = sizeLabel(count);
  return [
    [`restart with ${mb} in one collection: time to ready`, 'ms'],
    [`restart with ${mb}: unpaged list`, 'ms'],
    [`restart with ${mb}: paged list (limit 500)`, 'ms'],
  ];
}

async function restartWithLargeCollection(ctx: BenchContext): Promise<Record<string, unknown>> {
  const count = ctx.size(10_000);
  const namespace = 'robust-restart';
  const [readyName, unpagedName, pagedName] = restartRowNames(count).map(([n]) => n) as [string, string, string];
  // Ten times the expected start-up even on a loaded machine; --quick keeps a failing run short.
  const readyTimeoutMs = ctx.quick ? 20_000 : 60_000;
  const out: Record<string, unknown> = { objects: count, namespace, readyTimeoutMs };
  try {
    out['emptyStartupMs'] = await emptyStartupMs(ctx);
    Object.assign(out, await writeSecrets(ctx, RESTART_PREFIX, namespace, count, 4));

    let p: PlinthProcess;
    try {
      p = await startPlinth({ etcdEndpoint: ctx.etcd.endpoint, prefix: RESTART_PREFIX, maxSockets: 2, readyTimeoutMs });
    } catch (e) {
      const reason = failureReason(e);
      ctx.log(`  plinth with ${count} Secrets: ${reason}`);
      out['startFailure'] = reason;
      const notRun = 'not run: plinth never became ready';
      ctx.rows.push(failedRow(readyName, 'ms', reason, { note: readyNote(out), raw: numberOrNull(out['emptyStartupMs']) }), failedRow(unpagedName, 'ms', notRun), failedRow(pagedName, 'ms', notRun));
      return out;
    }
    try {
      ctx.log(`  plinth with ${count} Secrets ready in ${p.startupMs} ms (empty: ${String(out['emptyStartupMs'])} ms)`);
      out['startupMs'] = p.startupMs;
      ctx.rows.push({ scenario: readyName, unit: 'ms', plinth: p.startupMs, raw: numberOrNull(out['emptyStartupMs']), target: { kind: 'none' }, note: readyNote(out) });
      const base = `/api/v1/namespaces/${namespace}/secrets`;
      const unpaged = await listFigure(ctx, 'unpaged list', () => listAll(p.client, base, count, undefined));
      const cached = await listFigure(ctx, 'unpaged list rv=0', () => listAll(p.client, `${base}?resourceVersion=0`, count, undefined));
      const paged = await listFigure(ctx, 'paged list', () => listAll(p.client, base, count, 500));
      Object.assign(out, { unpaged, cached, paged });
      const cachedText = 'figures' in cached ? `rv=0 (cache): ${cached.figures.ms.toFixed(0)} ms` : `rv=0 (cache) FAILED: ${cached.failure}`;
      ctx.rows.push(
        'figures' in unpaged
          ? { scenario: unpagedName, unit: 'ms', plinth: unpaged.figures.ms, raw: null, target: { kind: 'none' }, note: `${count} objects, ${mib(unpaged.figures.bytes)} MiB of JSON; ${cachedText}` }
          : failedRow(unpagedName, 'ms', unpaged.failure, { note: cachedText }),
        'figures' in paged
          ? { scenario: pagedName, unit: 'ms', plinth: paged.figures.ms, raw: null, target: { kind: 'none' }, note: `${paged.figures.pages} pages` }
          : failedRow(pagedName, 'ms', paged.failure),
      );
    } finally {
      await p.stop();
    }
    return out;
  } finally {
    await deletePrefixes(ctx, [RESTART_PREFIX, EMPTY_PREFIX]);
  }
}

function readyNote(out: Record<string, unknown>): string {
  return `deadline ${Number(out['readyTimeoutMs']) / 1000} s; raw column: start-up of plinth on an empty prefix`;
}

/** Start-up of a plinth on an empty prefix, the yardstick for the loaded one; null if it fails. */
async function emptyStartupMs(ctx: BenchContext): Promise<number | null> {
  try {
    const p = await startPlinth({ etcdEndpoint: ctx.etcd.endpoint, prefix: EMPTY_PREFIX, maxSockets: 2 });
    await p.stop();
    return p.startupMs;
  } catch (e) {
    ctx.log(`  plinth on an empty prefix: ${failureReason(e)}`);
    return null;
  }
}

/** Runs one list measurement; a failure is kept as its reason, not thrown. */
async function listFigure(ctx: BenchContext, what: string, fn: () => Promise<ListFigures>): Promise<{ figures: ListFigures } | { failure: string }> {
  try {
    const figures = await fn();
    ctx.log(`  ${what}: ${figures.count} objects in ${figures.ms.toFixed(0)} ms (${figures.pages} page(s), ${mib(figures.bytes)} MiB)`);
    return { figures };
  } catch (e) {
    const failure = failureReason(e);
    ctx.log(`  ${what} FAILED: ${failure}`);
    return { failure };
  }
}

/**
 * Lists `path` to the end (following continue tokens when `limit` is set) and checks the count.
 * Each request gets 60 s: far beyond a healthy answer, short enough not to stall the bench.
 */
async function listAll(client: KubeClient, path: string, expected: number, limit: number | undefined): Promise<ListFigures> {
  const t0 = performance.now();
  let count = 0;
  let pages = 0;
  let bytes = 0;
  let cont = '';
  do {
    const params = new URLSearchParams();
    if (limit !== undefined) params.set('limit', String(limit));
    if (cont) params.set('continue', cont);
    const query = params.toString();
    const url = query ? `${path}${path.includes('?') ? '&' : '?'}${query}` : path;
    const res = await withTimeout(client.request('GET', url), 60_000, `GET ${url}`);
    if (res.status !== 200) throw new Error(`GET ${url}: ${res.status} ${res.body.toString('utf8').slice(0, 200)}`);
    const list = JSON.parse(res.body.toString('utf8')) as { items: unknown[]; metadata: { continue?: string } };
    count += list.items.length;
    bytes += res.body.length;
    pages++;
    cont = limit !== undefined ? (list.metadata.continue ?? '') : '';
  } while (cont);
  const ms = performance.now() - t0;
  if (count !== expected) throw new Error(`GET ${path}${limit ? ` (limit ${limit})` : ''}: ${count} objects, expected ${expected}`);
  return { ms, count, pages, bytes };
}

// ---------------------------------------------------------------------------------------------
// Part 2: stalled watchers

const WATCHERS = 100;

/** A stalled watcher's whole backlog should not sit in plinth's memory: 100 × 10 MB is 1,000 MB. */
const PEAK_TARGET: Target = { kind: 'plinthAtMost', value: 300, unit: 'MiB' };

function stalledRowNames(count: number): RowName[] {
  const prefix = `${WATCHERS} stalled watchers on ${sizeLabel(count)}`;
  return [
    [`${prefix}: peak RSS growth`, 'MiB', PEAK_TARGET],
    [`${prefix}: RSS growth after close`, 'MiB'],
    [`${prefix}: GET latency while stalled (max)`, 'ms'],
  ];
}

/** What the RSS sampler saw: the peak, and whether it killed plinth or found it gone. */
interface RssGuard {
  killed: boolean;
  gone: boolean;
  peak: number;
}

interface RssSample {
  /** ms since the watches were opened. */
  t: number;
  rssMiB: number;
}

async function stalledWatchers(ctx: BenchContext): Promise<Record<string, unknown>> {
  const count = ctx.size(1000);
  const namespace = 'robust-watch';
  const [peakName, afterName, latencyName] = stalledRowNames(count).map(([n]) => n) as [string, string, string];
  const stallMs = ctx.quick ? 5000 : 15_000;
  const afterCloseMs = ctx.quick ? 4000 : 10_000;
  const settleMs = ctx.quick ? 3000 : 5000;
  const out: Record<string, unknown> = { objects: count, namespace, watchers: WATCHERS, stallMs, afterCloseMs, settleMs };
  const sockets: TLSSocket[] = [];
  let p: PlinthProcess | undefined;
  try {
    const plinth = await startPlinth({ etcdEndpoint: ctx.etcd.endpoint, prefix: WATCH_PREFIX, maxSockets: 4 });
    p = plinth;
    // One txn in flight: one modest etcd watch response per txn for plinth's cache feed.
    Object.assign(out, await writeSecrets(ctx, WATCH_PREFIX, namespace, count, 1));
    const base = `/api/v1/namespaces/${namespace}/secrets`;
    out['cacheFillMs'] = await waitForCache(plinth.client, base, count, 60_000);
    await probeWatch(plinth.client, `${base}?watch=1`);
    await sleep(settleMs);
    const baseline = await medianRss(plinth.pid, 8);
    out['baselineRssMiB'] = mib(baseline);
    ctx.log(`  plinth with ${count} Secrets: baseline RSS ${mib(baseline)} MiB`);

    // Sampling starts with the first watch (the server copies the collection as it accepts each
    // one, which takes a while) and ends `stallMs` after the last one is open.
    const t0 = performance.now();
    const guard: RssGuard = { killed: false, gone: false, peak: 0 };
    const stall = { endAt: Infinity };
    const stalledSamples: RssSample[] = [];
    const sampling = sampleRss(plinth.pid, t0, stall, stalledSamples, guard);
    const probing = timeGets(plinth.client, `${base}/${secretName(0)}`, stall, guard);
    const opened = await Promise.allSettled(Array.from({ length: WATCHERS }, () => openStalledWatch(plinth.client, `${base}?watch=1`)));
    stall.endAt = performance.now() + stallMs;
    for (const r of opened) if (r.status === 'fulfilled') sockets.push(r.value);
    const openFailures = opened.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    const openedCount = sockets.length;
    out['watchersOpened'] = openedCount;
    out['openMs'] = Math.round(performance.now() - t0);
    if (openFailures.length) out['firstOpenFailure'] = failureReason(openFailures[0]!.reason);

    const getLatency = new Histogram();
    const [, gets] = await Promise.all([sampling, probing]);
    for (const ms of gets.latencies) getLatency.add(ms);
    // Bytes waiting in a socket we never read (up to its buffer limit): the server did answer.
    const answered = sockets.filter((s) => s.readableLength > 0).length;
    out['watchersAnswered'] = answered;
    out['stalledSamples'] = stalledSamples;
    out['getLatency'] = getLatency.summary();
    if (gets.failure) out['getFailure'] = gets.failure;
    ctx.log(`  ${sockets.length} stalled watches open (${answered} with unread answers); peak RSS ${mib(guard.peak)} MiB`);

    for (const s of sockets) s.destroy();
    sockets.length = 0;
    const afterSamples: RssSample[] = [];
    if (!guard.killed && !guard.gone) await sampleRss(plinth.pid, t0, { endAt: performance.now() + afterCloseMs }, afterSamples, guard);
    out['afterCloseSamples'] = afterSamples;
    out['peakRssMiB'] = mib(guard.peak);

    const lat = getLatency.summary();
    const openNote = openedCount < WATCHERS ? `; only ${openedCount} of ${WATCHERS} watches opened (${String(out['firstOpenFailure'])})` : '';
    const stallNote = `baseline ${mib(baseline)} MiB with ${count} Secrets cached, peak ${mib(guard.peak)} MiB; ${answered} of ${WATCHERS} watches had unread data${openNote}`;
    if (guard.gone) {
      const reason = failureReason(new Error(`plinth exited during the test (peak RSS ${mib(guard.peak)} MiB)\n${plinth.output().slice(-2000)}`));
      out['failure'] = reason;
      ctx.rows.push(failedRow(peakName, 'MiB', reason, { note: stallNote, target: PEAK_TARGET }), failedRow(afterName, 'MiB', reason), failedRow(latencyName, 'ms', gets.failure ?? reason));
      return out;
    }
    if (guard.killed) {
      const reason = `${RSS_LIMIT_TEXT} (peak ${mib(guard.peak)} MiB)`;
      out['failure'] = reason;
      ctx.rows.push(
        failedRow(peakName, 'MiB', reason, { note: stallNote, target: PEAK_TARGET }),
        failedRow(afterName, 'MiB', `plinth killed: ${RSS_LIMIT_TEXT}`),
        failedRow(latencyName, 'ms', gets.failure ?? `plinth killed: ${RSS_LIMIT_TEXT}`),
      );
      return out;
    }
    const tail = afterSamples.slice(-8).map((s) => s.rssMiB * MiB);
    const after = tail.length ? median(tail) : procRssBytes(plinth.pid);
    out['afterCloseRssMiB'] = mib(after);
    ctx.log(`  RSS growth: peak ${mib(guard.peak - baseline)} MiB, after close ${mib(after - baseline)} MiB; GET p50 ${lat.p50Ms.toFixed(1)} ms max ${lat.maxMs.toFixed(1)} ms (${lat.count})`);
    ctx.rows.push(
      { scenario: peakName, unit: 'MiB', plinth: (guard.peak - baseline) / MiB, raw: null, target: PEAK_TARGET, note: stallNote },
      {
        scenario: afterName,
        unit: 'MiB',
        plinth: (after - baseline) / MiB,
        raw: null,
        target: { kind: 'none' },
        note: `median of the last samples ${afterCloseMs / 1000} s after the sockets closed; no target, as how much a heap returns to the OS depends on when V8 collects`,
      },
      gets.failure
        ? failedRow(latencyName, 'ms', gets.failure)
        : { scenario: latencyName, unit: 'ms', plinth: lat.maxMs, raw: null, target: { kind: 'none' }, note: `${lat.count} GETs of one Secret, p50 ${lat.p50Ms.toFixed(1)} ms` },
    );
    return out;
  } finally {
    for (const s of sockets) s.destroy();
    await p?.stop();
    await deletePrefixes(ctx, [WATCH_PREFIX]);
  }
}

/**
 * Waits until plinth's cache holds `expected` objects (a 1-item page from the cache reports how
 * many remain); returns how long that took.
 */
async function waitForCache(client: KubeClient, path: string, expected: number, timeoutMs: number): Promise<number> {
  const t0 = performance.now();
  for (;;) {
    const l = await client.json<{ items: unknown[]; metadata: { remainingItemCount?: number } }>('GET', `${path}?resourceVersion=0&limit=1`, undefined, 200);
    let seen = l.items.length + (l.metadata.remainingItemCount ?? 0);
    if (l.metadata.remainingItemCount === undefined && l.items.length > 0) {
      seen = (await client.json<{ items: unknown[] }>('GET', `${path}?resourceVersion=0`, undefined, 200)).items.length;
    }
    if (seen >= expected) return Math.round(performance.now() - t0);
    if (performance.now() - t0 > timeoutMs) throw new Error(`plinth's cache shows ${seen} of ${expected} objects after ${timeoutMs / 1000} s`);
    await sleep(200);
  }
}

/** One watch that is read: the path and token are accepted (200) and events arrive. */
async function probeWatch(client: KubeClient, path: string): Promise<void> {
  const agent = client.streamAgent();
  try {
    let gotData!: () => void;
    const data = new Promise<void>((r) => (gotData = r));
    const stream = await withTimeout(client.openStream(path, agent, () => gotData()), 10_000, `watch ${path}`);
    try {
      await withTimeout(data, 10_000, `first event of watch ${path}`);
    } finally {
      stream.close();
    }
  } finally {
    agent.destroy();
  }
}

/**
 * A watch from a client that never reads: the HTTP request goes out on a raw TLS socket that is
 * then paused, so the server's writes back up (past the little a paused socket buffers).
 */
function openStalledWatch(client: KubeClient, path: string): Promise<TLSSocket> {
  const server = new URL(client.info.server);
  return new Promise<TLSSocket>((resolve, reject) => {
    const socket = tlsConnect({ host: server.hostname, port: Number(server.port), ca: client.info.caPem }, () => {
      clearTimeout(timer);
      socket.write(
        `GET ${path} HTTP/1.1\r\nHost: ${server.host}\r\nAuthorization: Bearer ${client.info.token}\r\n` +
          'Accept: application/json\r\nUser-Agent: plinth-bench-stalled-watcher\r\n\r\n',
      );
      socket.pause();
      resolve(socket);
    });
    // A server busy copying collections for earlier watches is slow to accept: a minute, then a
    // socket that connects too late is destroyed, not left open behind the measurement.
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error('stalled watch: no TLS connection within 60 s'));
    }, 60_000);
    // A reset once the test destroys it (or the server drops it) is expected; never fatal.
    socket.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
  });
}

/**
 * Samples RSS every 250 ms into `samples` until `window.endAt` (which may move), tracking the
 * peak; past the limit it kills plinth at once and stops.
 */
async function sampleRss(pid: number, t0: number, window: { endAt: number }, samples: RssSample[], guard: RssGuard): Promise<void> {
  while (performance.now() < window.endAt && !guard.killed && !guard.gone) {
    let rss: number;
    try {
      rss = procRssBytes(pid);
    } catch {
      guard.gone = true; // plinth exited (or crashed) by itself
      return;
    }
    guard.peak = Math.max(guard.peak, rss);
    samples.push({ t: Math.round(performance.now() - t0), rssMiB: mib(rss) });
    if (rss > RSS_LIMIT_BYTES) {
      guard.killed = true;
      process.kill(pid, 'SIGKILL');
      return;
    }
    await sleep(250);
  }
}

/**
 * GETs of one object from a normal client, one every 1.5 s (at least three) from 1 s after the
 * watches start opening until `window.endAt`. Each must be answered within 10 s; the first
 * failure ends the probing.
 */
async function timeGets(client: KubeClient, path: string, window: { endAt: number }, guard: RssGuard): Promise<{ latencies: number[]; failure?: string }> {
  const latencies: number[] = [];
  await sleep(1000);
  while ((performance.now() < window.endAt || latencies.length < 3) && !guard.killed && !guard.gone) {
    const t = performance.now();
    try {
      const res = await withTimeout(client.request('GET', path), 10_000, `GET ${path}`);
      if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${res.body.toString('utf8').slice(0, 200)}`);
      latencies.push(performance.now() - t);
    } catch (e) {
      return { latencies, failure: guard.killed ? `plinth killed: ${RSS_LIMIT_TEXT}` : failureReason(e) };
    }
    await sleep(Math.max(0, 1500 - (performance.now() - t)));
  }
  return { latencies };
}

async function medianRss(pid: number, n: number): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    samples.push(procRssBytes(pid));
    await sleep(250);
  }
  return median(samples);
}

// ---------------------------------------------------------------------------------------------
// Shared helpers

/** Writes `count` Secrets of ~10 KB (and their Namespace) under `prefix`, in slices of 1,000. */
async function writeSecrets(ctx: BenchContext, prefix: string, namespace: string, count: number, parallel: number): Promise<{ jsonBytes: number; writeMs: number }> {
  const t0 = performance.now();
  let jsonBytes = 0;
  await bulkPut(ctx.raw, [[`${prefix}/namespaces/${namespace}`, toBytes(storedNamespace(namespace))]]);
  for (let from = 0; from < count; from += 1000) {
    const entries: Array<[string, Buffer]> = [];
    for (let i = from; i < Math.min(count, from + 1000); i++) {
      const v = toBytes(storedSecret(namespace, secretName(i), SECRET_DATA_BYTES));
      jsonBytes += v.length;
      entries.push([`${prefix}/secrets/${namespace}/${secretName(i)}`, v]);
    }
    await bulkPut(ctx.raw, entries, parallel);
  }
  const writeMs = Math.round(performance.now() - t0);
  ctx.log(`  wrote ${count} Secrets (${mib(jsonBytes)} MiB of JSON) under ${prefix} in ${(writeMs / 1000).toFixed(1)} s`);
  return { jsonBytes, writeMs };
}

function secretName(i: number): string {
  return `secret-${String(i).padStart(6, '0')}`;
}

/** Leaves etcd as it was (plinth also writes its bootstrap objects under a prefix). */
async function deletePrefixes(ctx: BenchContext, prefixes: string[]): Promise<void> {
  for (const prefix of prefixes) await ctx.raw.delete().prefix(`${prefix}/`).exec();
}

/** "100 MB" for 10,000 Secrets of ~10 KB: the size the row names state. */
function sizeLabel(count: number): string {
  return `${Math.round((count * SECRET_DATA_BYTES) / 1e6)} MB`;
}

function failedRow(scenario: string, unit: string, failure: string, opts: { note?: string; target?: Target; raw?: number | null } = {}): Row {
  return { scenario, unit, plinth: null, raw: opts.raw ?? null, target: opts.target ?? { kind: 'none' }, failure, ...(opts.note ? { note: opts.note } : {}) };
}

/**
 * The first line of an error, and for a plinth that failed to start the last line it printed
 * (its log is JSON lines; the last one usually says what it was stuck on).
 */
function failureReason(e: unknown): string {
  const text = e instanceof Error ? e.message : String(e);
  const lines = text.split('\n').map((l) => l.trim()).filter(Boolean);
  const first = (lines[0] ?? 'unknown error').replace(/:$/, '');
  const last = lines.length > 1 ? logLineText(lines[lines.length - 1]!) : '';
  return (last ? `${first}; plinth's last log line: ${last}` : first).slice(0, 400);
}

/** `msg: error` of one of plinth's JSON log lines (the line itself if it is not one). */
function logLineText(line: string): string {
  try {
    const entry = JSON.parse(line) as { msg?: unknown; error?: unknown };
    if (typeof entry.msg === 'string') return typeof entry.error === 'string' ? `${entry.msg}: ${entry.error}` : entry.msg;
  } catch {
    // not JSON
  }
  return line.slice(0, 300);
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? 0;
}

function mib(bytes: number): number {
  return Math.round((bytes / MiB) * 10) / 10;
}

function numberOrNull(v: unknown): number | null {
  return typeof v === 'number' ? v : null;
}
