/**
 * What the fan-out scenario (scenarios/watch.ts) measures on each side: when each watch first
 * received each write, when each write was sent and acknowledged, and the stream scanner that
 * finds the writes' names in a watch's JSON lines.
 */
import { performance } from 'node:perf_hooks';
import { Histogram, paced, sleep, type LatencySummary } from './stats.js';
import type { KubeClient } from './http.js';

/** Connections a side's write client may open (the bench's KubeClients: 64). */
const WARM_WRITES = 64;

/**
 * 64 concurrent creates (`warm-<i>`, which no watch counts) before the watches open: every side
 * starts its measured writes with its client's connections and its server's etcd session up, as
 * plinth's are after the scenarios before this one (a fresh floor's first writes otherwise pay for
 * TLS handshakes and dials while 1,000 watches are being served).
 */
export async function warmWrites(client: KubeClient, path: string, body: (name: string, i: number) => Buffer): Promise<void> {
  await Promise.all(Array.from({ length: WARM_WRITES }, (_, i) => client.json('POST', path, body(`warm-${i}`, i), 201)));
}

/**
 * One second of writes at the measured rate (`live-<i>`, which no watch counts) once a side's
 * watches are open, then a second for their delivery: the measured writes start on a running
 * fan-out, on every side alike. Without it, whichever side runs first (plinth) also paid for the
 * load generator's own warm-up: its reading of 1,000 fresh streams was slow for the first one or
 * two seconds, sockets filled, and those seconds set the side's p99 (plinth's p99 per second was
 * 130–265 ms there and 45–80 ms after; run after a floor, plinth's first seconds were like its
 * others).
 */
export async function warmFanout(client: KubeClient, path: string, body: (name: string, i: number) => Buffer, ratePerSec: number): Promise<void> {
  await paced(ratePerSec, ratePerSec, async (i) => {
    await client.json('POST', path, body(`live-${i}`, i), 201);
  });
  await sleep(1000);
}

/** One side's run: N watches, N writes at a steady rate. */
export interface FanoutRun {
  watchers: number;
  writes: number;
  ratePerSec: number;
  openMs: number;
  expected: number;
  delivered: number;
  /** From the write's acknowledgement to receipt (negative clamped to 0). */
  latencyFromAck: LatencySummary;
  /** From the write's start to receipt. */
  latencyFromSend: LatencySummary;
  etcdWatchersAdded: number;
  writeErrors: number;
  /** Writes acknowledged per second (offered: ratePerSec). */
  achievedWriteRate: number;
  loadgenCpuPct: number;
  etcdCpuPct: number;
  otherCpuPct: number;
  plinthCpuPct?: number;
  /** The answering server process's CPU (% of one core) and peak RSS: plinth or a floor. */
  serverCpuPct?: number;
  serverRssPeak?: number;
  /** Bytes one watch received per write (its stream's bytes ÷ writes, HTTP framing included). */
  bytesPerEvent?: number;
  plinthRssBeforeWatches?: number;
  plinthRssWithWatches?: number;
  plinthRssPeak?: number;
}

/** Tracks first receipt of (watcher, write) and the time each write was sent and acknowledged. */
export class Receipts {
  readonly at: Float64Array;
  readonly sent: Float64Array;
  readonly acked: Float64Array;
  delivered = 0;

  constructor(readonly watchers: number, readonly writes: number) {
    this.at = new Float64Array(watchers * writes);
    this.sent = new Float64Array(writes);
    this.acked = new Float64Array(writes);
  }

  /** Bytes watch 0 received (headers and chunk framing included): about the bytes per event × writes. */
  firstWatchBytes = 0;

  /** The stream reader of watch `w`: marks the writes it names on receipt. */
  reader(w: number): (chunk: Buffer) => void {
    const scan = lineScanner((i) => this.mark(w, i, performance.now()));
    if (w !== 0) return scan;
    return (chunk) => {
      this.firstWatchBytes += chunk.length;
      scan(chunk);
    };
  }

  mark(watcher: number, write: number, now: number): void {
    if (write < 0 || write >= this.writes) return;
    const k = watcher * this.writes + write;
    if (this.at[k] === 0) {
      this.at[k] = now;
      this.delivered++;
    }
  }

  summaries(): { fromAck: LatencySummary; fromSend: LatencySummary } {
    const ack = new Histogram();
    const send = new Histogram();
    for (let k = 0; k < this.at.length; k++) {
      const t = this.at[k]!;
      if (t === 0) continue;
      const w = k % this.writes;
      ack.add(Math.max(0, t - this.acked[w]!));
      send.add(t - this.sent[w]!);
    }
    return { fromAck: ack.summary(), fromSend: send.summary() };
  }

  /** p99 delivery latency from the acknowledgement, per run of `perBucket` consecutive writes. */
  p99ByWrites(perBucket: number): number[] {
    const buckets: Histogram[] = [];
    for (let k = 0; k < this.at.length; k++) {
      const t = this.at[k]!;
      if (t === 0) continue;
      const w = k % this.writes;
      (buckets[Math.floor(w / perBucket)] ??= new Histogram()).add(Math.max(0, t - this.acked[w]!));
    }
    return buckets.map((h) => Math.round(h.summary().p99Ms));
  }

  /** Writes acknowledged per second, from the first write's start to the last acknowledgement. */
  achievedRate(): number {
    let first = Infinity;
    let last = 0;
    for (let i = 0; i < this.writes; i++) {
      first = Math.min(first, this.sent[i]!);
      last = Math.max(last, this.acked[i]!);
    }
    return last > first ? (this.writes * 1000) / (last - first) : 0;
  }

  async allDelivered(timeoutMs: number): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    while (this.delivered < this.at.length && performance.now() < deadline) await sleep(50);
  }
}

const MARKER = Buffer.from('"name":"fan-');

/** Finds every `"name":"fan-<i>"` in newline-terminated event lines of a watch stream. */
export function lineScanner(onWrite: (i: number) => void): (chunk: Buffer) => void {
  let tail: Buffer = Buffer.alloc(0);
  return (chunk) => {
    const data = tail.length ? Buffer.concat([tail, chunk]) : chunk;
    const lastNl = data.lastIndexOf(10);
    if (lastNl < 0) {
      tail = data;
      return;
    }
    let pos = data.indexOf(MARKER);
    while (pos >= 0 && pos < lastNl) {
      let j = pos + MARKER.length;
      let idx = 0;
      for (let ch = data[j]!; ch >= 48 && ch <= 57; ch = data[++j]!) idx = idx * 10 + (ch - 48);
      onWrite(idx);
      pos = data.indexOf(MARKER, j);
    }
    tail = Buffer.from(data.subarray(lastNl + 1));
  };
}
