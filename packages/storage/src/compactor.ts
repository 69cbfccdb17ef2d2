/**
 * The compactor (kube's etcd3 compactor): every interval, one replica compacts etcd to the
 * revision it saw one interval earlier, so one interval of history is kept. Replicas coordinate
 * through the version of the `compact_rev_key` key (a compare-and-swap), so each interval
 * compacts once however many replicas share the etcd. The key's value is the compacted revision,
 * which every replica's watch caches follow.
 */
import type { Etcd3 } from 'etcd3';

export const COMPACT_REV_KEY = 'compact_rev_key';

export interface CompactorOptions {
  client: Etcd3;
  intervalMs: number;
  onError?: (err: unknown) => void;
  onCompacted?: (rev: number) => void;
}

export interface Compactor {
  /** One round now (what the timer does); resolves with whether this replica compacted. */
  tick(): Promise<boolean>;
  stop(): void;
}

/**
 * One CAS round: if the key's version is still `time`, claim the round (put the revision seen last
 * round) and compact to it. Returns the new logical time and the current revision.
 */
async function compactRound(client: Etcd3, time: number, rev: number): Promise<{ time: number; rev: number; compacted: boolean }> {
  const key = Buffer.from(COMPACT_REV_KEY);
  const res = await client.kv.txn({
    compare: [{ key, target: 'Version', result: 'Equal', version: time }],
    success: [{ request_put: { key, value: Buffer.from(String(rev)) } }],
    failure: [{ request_range: { key } }],
  });
  const current = Number(res.header.revision);
  if (!res.succeeded) {
    const kv = res.responses[0]?.response_range?.kvs[0];
    return { time: kv ? Number(kv.version) : 0, rev: current, compacted: false };
  }
  if (rev === 0) return { time: time + 1, rev: current, compacted: false }; // no compaction on bootstrap
  await client.kv.compact({ revision: rev, physical: false });
  return { time: time + 1, rev: current, compacted: true };
}

export function startCompactor(opts: CompactorOptions): Compactor {
  let time = 0;
  let rev = 0;
  let running: Promise<boolean> | undefined;
  const tick = (): Promise<boolean> => {
    running ??= (async () => {
      try {
        const compactTo = rev;
        const r = await compactRound(opts.client, time, rev);
        time = r.time;
        rev = r.rev;
        if (r.compacted) opts.onCompacted?.(compactTo);
        return r.compacted;
      } catch (e) {
        opts.onError?.(e);
        return false;
      } finally {
        running = undefined;
      }
    })();
    return running;
  };
  const timer = opts.intervalMs > 0 ? setInterval(() => void tick(), opts.intervalMs) : undefined;
  timer?.unref();
  return {
    tick,
    stop: () => {
      if (timer) clearInterval(timer);
    },
  };
}

/**
 * Compacts etcd to `rev` now and records it in `compact_rev_key` so watch caches of every replica
 * drop history at or below it (used by operators' tooling and tests to force a compaction).
 */
export async function forceCompaction(client: Etcd3, rev: number): Promise<void> {
  await client.kv.put({ key: Buffer.from(COMPACT_REV_KEY), value: Buffer.from(String(rev)) });
  await client.kv.compact({ revision: rev, physical: false });
}
