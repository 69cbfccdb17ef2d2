/**
 * The kube-scheduler stand-in (research-28 §3): user `system:kube-scheduler`, kube-scheduler's
 * user agent and client limit (QPS 100 / burst 100: kube's scalability jobs run it with `--kube-api-qps=100`, its default being 50). Informers on pods with
 * `fieldSelector=status.phase!=Succeeded,status.phase!=Failed` and on nodes (cluster-wide, list then
 * watch); an unassigned pod of `default-scheduler` is bound through `POST pods/<p>/binding` to the
 * node with the fewest pods (least-allocated, ≤ 110 pods a node).
 */
import { Agent } from 'node:https';
import { createHollowClient, kubeUserAgent, TokenBucket, type LatencyRecorder, type ServerInfo } from './client.js';
import { createInformer, type KubeObject } from './informer.js';
import { createWorkQueue } from './queue.js';
import type { Ledger } from './nodes.js';

/** Where plinth is, the scheduler's token, where latencies and bindings go. */
export interface SchedulerOptions {
  info: ServerInfo;
  token: string;
  recorder: LatencyRecorder;
  ledger: Ledger;
}

/** The running scheduler stand-in. */
export interface Scheduler {
  readonly synced: Promise<void>;
  readonly errors: string[];
  bindings(): number;
  stop(): void;
}

/** Starts the scheduler stand-in: its informers and a binding queue of 16 workers. */
export function createScheduler(opts: SchedulerOptions): Scheduler {
  const agent = new Agent({ ca: opts.info.caPem, keepAlive: true, maxSockets: 8, maxFreeSockets: 8 });
  const watchAgent = new Agent({ ca: opts.info.caPem, keepAlive: false, maxSockets: Infinity });
  const client = createHollowClient({ info: opts.info, token: opts.token, userAgent: kubeUserAgent('kube-scheduler', 'scheduler'), agent, recorder: opts.recorder, limit: new TokenBucket(100, 100) });
  const errors: string[] = [];
  /** node name → pods assigned (bound here or seen assigned). */
  const load = new Map<string, number>();
  /** pod uid → node, for pods counted in `load`. */
  const assigned = new Map<string, string>();
  let bound = 0;

  const account = (pod: KubeObject, gone: boolean): void => {
    const uid = pod.metadata.uid;
    const node = (pod.spec?.['nodeName'] as string | undefined) ?? assigned.get(uid);
    if (!node) return;
    if (gone) {
      if (assigned.delete(uid)) load.set(node, (load.get(node) ?? 1) - 1);
    } else if (!assigned.has(uid)) {
      assigned.set(uid, node);
      load.set(node, (load.get(node) ?? 0) + 1);
    }
  };

  const pick = (): string | undefined => {
    let best: string | undefined;
    let bestLoad = Infinity;
    for (const [name, n] of load) {
      if (n < bestLoad && n < 110) {
        best = name;
        bestLoad = n;
      }
    }
    return best;
  };

  const pods = createInformer({
    client,
    path: '/api/v1/pods',
    query: `fieldSelector=${encodeURIComponent('status.phase!=Succeeded,status.phase!=Failed')}`,
    watchAgent,
    onEvent(type, pod) {
      if (type === 'DELETED') return account(pod, true);
      if (pod.spec?.['nodeName']) return account(pod, false);
      if ((pod.spec?.['schedulerName'] ?? 'default-scheduler') === 'default-scheduler' && !pod.metadata.deletionTimestamp) queue.add(`${pod.metadata.namespace}/${pod.metadata.name}`);
    },
  });
  const nodes = createInformer({
    client,
    path: '/api/v1/nodes',
    watchAgent,
    onEvent(type, node) {
      if (type === 'DELETED') load.delete(node.metadata.name);
      else if (!load.has(node.metadata.name)) load.set(node.metadata.name, 0);
    },
  });

  const queue = createWorkQueue(
    16,
    async (key) => {
      const pod = pods.store.get(key);
      if (!pod || pod.spec?.['nodeName'] || pod.metadata.deletionTimestamp || assigned.has(pod.metadata.uid)) return;
      const node = pick();
      if (!node) throw new Error(`no node with room for ${key}`);
      // Assumed before the bind answers (the scheduler cache's assume), so the next pick sees it.
      assigned.set(pod.metadata.uid, node);
      load.set(node, (load.get(node) ?? 0) + 1);
      const r = await client.call('POST', `/api/v1/namespaces/${pod.metadata.namespace}/pods/${pod.metadata.name}/binding`, {
        kind: 'Binding',
        apiVersion: 'v1',
        metadata: { name: pod.metadata.name, namespace: pod.metadata.namespace, uid: pod.metadata.uid },
        target: { kind: 'Node', name: node },
      });
      if (r.status === 201) {
        bound++;
        opts.ledger.bound.set(pod.metadata.uid, node);
        return;
      }
      assigned.delete(pod.metadata.uid);
      load.set(node, (load.get(node) ?? 1) - 1);
      // 404: the pod is gone; 409: already bound (the informer catches up).
      if (r.status !== 404 && r.status !== 409) throw new Error(`bind ${key}: ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
    },
    (key, e) => {
      if (errors.length < 50) errors.push(`${key}: ${String(e)}`);
    },
  );

  return {
    synced: Promise.all([pods.synced, nodes.synced]).then(() => undefined),
    errors,
    bindings: () => bound,
    stop() {
      queue.stop();
      pods.stop();
      nodes.stop();
      agent.destroy();
      watchAgent.destroy();
    },
  };
}
