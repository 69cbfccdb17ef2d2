/**
 * The floor's etcd client, one of two (`--client=`):
 *
 * - `fastkv` (the default): what plinth itself uses on its hot path. Range and Txn through
 *   @plinth/storage's FastKV (a read session and a write session, etcd3 as their fallback, as
 *   plinth's etcd transport builds them); the watch through the watch caches' etcd feed
 *   (`EtcdStore.watchFeed`: one raw gRPC watch stream with prev_kv, FastKV has no watch).
 * - `etcd3`: the same calls through the etcd3 client library (`kv.range`, `kv.txn`, and a
 *   `Watcher` with prev_kv), as the floor did before issue 28 §2.
 *
 * Either way the floor's handlers see etcd3's request and response objects.
 */
import { Etcd3, type IEvent, type IRangeResponse, type ITxnResponse } from 'etcd3';
import { EtcdStore, FastKV, toEtcd3Error } from '@plinth/storage';

/** Which etcd client the floor uses (see the file comment). */
export type FloorClientName = 'fastkv' | 'etcd3';

type KV = Etcd3['kv'];

/** What the floor asks of etcd. */
export interface FloorEtcd {
  readonly name: FloorClientName;
  range(req: Parameters<KV['range']>[0]): Promise<IRangeResponse>;
  txn(req: Parameters<KV['txn']>[0]): Promise<ITxnResponse>;
  /** One etcd watch on every key under `prefix`, from `startRevision`; `onEvents` per etcd response. */
  watchPrefix(prefix: string, startRevision: number, onEvents: (events: IEvent[]) => void): Promise<{ cancel(): void }>;
  close(): void;
}

/** kube (and plinth) raise the client's receive limit to MaxInt32. */
const MAX_RECEIVE_BYTES = 2 ** 31 - 1;
/** plinth's default etcd request deadline. */
const TIMEOUT_MS = 10_000;

/** `--client=fastkv|etcd3` from argv, else FLOOR_CLIENT, else fastkv. */
export function floorClientName(argv: readonly string[], env: NodeJS.ProcessEnv): FloorClientName {
  const v = argv.find((a) => a.startsWith('--client='))?.slice('--client='.length) ?? env['FLOOR_CLIENT'] ?? 'fastkv';
  if (v !== 'fastkv' && v !== 'etcd3') throw new Error(`floor: --client must be fastkv or etcd3, not ${v}`);
  return v;
}

/** The floor's etcd calls through `name`'s client, to the member at `endpoint`. */
export function createFloorEtcd(name: FloorClientName, endpoint: string): FloorEtcd {
  return name === 'fastkv' ? createFastKvEtcd(endpoint) : createEtcd3Etcd(endpoint);
}

function createFastKvEtcd(endpoint: string): FloorEtcd {
  // The store is here for its watch feed only; its reader client is the FastKVs' fallback.
  const store = new EtcdStore({ endpoints: [endpoint], requestTimeoutMs: TIMEOUT_MS });
  const base = { endpoints: [endpoint], timeoutMs: TIMEOUT_MS, maxReceiveBytes: MAX_RECEIVE_BYTES, mapError: toEtcd3Error };
  const readKv = new FastKV({ ...base, mode: 'read' }, store.client.kv);
  const writeKv = new FastKV({ ...base, mode: 'write' }, store.client.kv);
  return {
    name: 'fastkv',
    range: (req) => readKv.range(req),
    txn: (req) => writeKv.txn(req),
    watchPrefix: (prefix, startRevision, onEvents) =>
      store.watchFeed(prefix, false, startRevision, {
        onEvents: (events) => onEvents(events),
        onCancel: (reason) => process.stderr.write(`floor: etcd watch of ${prefix} ended: ${reason.message}\n`),
      }),
    close() {
      readKv.close();
      writeKv.close();
      void store.close();
    },
  };
}

function createEtcd3Etcd(endpoint: string): FloorEtcd {
  const etcd = new Etcd3({ hosts: [endpoint], grpcOptions: { 'grpc.max_receive_message_length': MAX_RECEIVE_BYTES } });
  return {
    name: 'etcd3',
    range: (req) => etcd.kv.range(req),
    txn: (req) => etcd.kv.txn(req),
    async watchPrefix(prefix, startRevision, onEvents) {
      // prev_kv as plinth's feed asks for it (a DELETED event carries the object as it was).
      const w = await etcd.watch().prefix(prefix).startRevision(String(startRevision)).withPreviousKV().create();
      w.on('data', (res) => onEvents(res.events));
      return { cancel: () => void w.cancel() };
    },
    close: () => etcd.close(),
  };
}
