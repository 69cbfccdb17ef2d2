/**
 * The benchmark's etcd (one for everything, started through @plinth/storage's embedded runner),
 * its metrics, version, and bulk loading with multi-put txns.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { Etcd3 } from 'etcd3';
import { startEmbeddedEtcd } from '@plinth/storage';

export interface BenchEtcd {
  endpoint: string;
  pid: number;
  stop(): Promise<void>;
}

export async function startBenchEtcd(): Promise<BenchEtcd> {
  const dir = mkdtempSync(join(tmpdir(), 'plinth-bench-etcd-'));
  // Plain HTTP loopback: the raw-etcd side of every scenario talks to it directly.
  const etcd = await startEmbeddedEtcd({ dataDir: dir, transport: 'plain' });
  return {
    endpoint: etcd.endpoint,
    pid: etcd.process.pid!,
    async stop() {
      await etcd.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * A raw etcd3 client. Replies may be large (an unpaged range of 10,000 objects is ~6 MB, over
 * grpc-js's default 4 MB limit), as kube's own client allows.
 */
export function rawClient(endpoint: string): Etcd3 {
  return new Etcd3({ hosts: [endpoint], grpcOptions: { 'grpc.max_receive_message_length': 2 ** 31 - 1 } });
}

/** etcd's count of open watchers (`etcd_debugging_mvcc_watcher_total`). */
export async function etcdWatcherTotal(endpoint: string): Promise<number> {
  const text = await (await fetch(`${endpoint}/metrics`)).text();
  const m = /^etcd_debugging_mvcc_watcher_total (\d+)/m.exec(text);
  if (!m) throw new Error('etcd does not expose etcd_debugging_mvcc_watcher_total');
  return Number(m[1]);
}

export function etcdVersion(): string {
  try {
    return /etcd Version:\s*(\S+)/.exec(execFileSync('etcd', ['--version'], { encoding: 'utf8' }))?.[1] ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

/**
 * Puts per txn at most: etcd refuses a request over 1.5 MiB (--max-request-bytes), so large
 * objects go in fewer puts per txn; 1 MiB leaves room for keys and framing.
 */
const MAX_TXN_PUTS = 100;
const MAX_TXN_BYTES = 1024 * 1024;

/** Writes the entries with txns of up to 100 puts and 1 MiB, `parallel` txns in flight. */
export async function bulkPut(client: Etcd3, entries: Array<[string, Buffer]>, parallel = 4): Promise<void> {
  const batches: Array<Array<[string, Buffer]>> = [];
  let batch: Array<[string, Buffer]> = [];
  let bytes = 0;
  for (const e of entries) {
    const size = e[0].length + e[1].length;
    if (batch.length > 0 && (batch.length >= MAX_TXN_PUTS || bytes + size > MAX_TXN_BYTES)) {
      batches.push(batch);
      batch = [];
      bytes = 0;
    }
    batch.push(e);
    bytes += size;
  }
  if (batch.length > 0) batches.push(batch);
  let next = 0;
  const worker = async (): Promise<void> => {
    for (;;) {
      const b = batches[next++];
      if (!b) return;
      await client.kv.txn({ compare: [], success: b.map(([k, v]) => ({ request_put: { key: Buffer.from(k), value: v } })), failure: [] });
    }
  };
  await Promise.all(Array.from({ length: parallel }, worker));
}
