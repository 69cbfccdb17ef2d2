/**
 * The kube-controller-manager stand-in for Deployments and ReplicaSets (research-28 §4), each
 * controller with its own identity as `--use-service-account-credentials` gives
 * (`system:serviceaccount:kube-system:{deployment,replicaset}-controller`, bound by plinth's
 * bootstrap RBAC), kube's user agents and the client limit kube's scalability CI gives kube-controller-manager
 * (`--kube-api-qps=100 --kube-api-burst=100`; kube's default 20/30 caps pod creation at 20/s). Shared informers
 * (deployments, replicasets, pods; cluster-wide, list then watch) feed two work queues (5 workers
 * each, kube's concurrent syncs).
 *
 * Deployment: creates its ReplicaSet `<deployment>-<pod-template-hash>` (hash encoded with kube's
 * SafeEncodeString alphabet; the hash of the template is FNV-1a of its JSON, not Go's spew), labels,
 * selector and template with `pod-template-hash`, a controller ownerReference with
 * blockOwnerDeletion, revision annotations; PUTs deployments/<d>/status when its figures change.
 * ReplicaSet: creates missing pods (`generateName: <rs>-`, controller ownerReference) in slow-start
 * batches 1, 2, 4, … of at most 500 per sync, with expectations (no new sync until the watch saw
 * the creations), deletes surplus pods, PUTs replicasets/<rs>/status when its figures change.
 * Deletion of a Deployment is left to plinth's garbage collector.
 */
import { Agent } from 'node:https';
import { createHollowClient, kubeUserAgent, TokenBucket, type HollowClient, type LatencyRecorder, type ServerInfo } from './client.js';
import { createInformer, type Informer, type KubeObject } from './informer.js';
import { createWorkQueue, type WorkQueue } from './queue.js';

/** Where plinth is, the two controllers' tokens, and where latencies go. */
export interface ControllerOptions {
  info: ServerInfo;
  /** Tokens of system:serviceaccount:kube-system:deployment-controller and …:replicaset-controller. */
  deploymentToken: string;
  replicaSetToken: string;
  recorder: LatencyRecorder;
}

/** The running stand-ins. */
export interface Controllers {
  readonly synced: Promise<void>;
  readonly errors: string[];
  /** The pods informer's store (every pod the controllers know). */
  readonly pods: Informer;
  stop(): void;
}

/** apimachinery rand.SafeEncodeString: each character → alphanums[code % 27]. */
export function safeEncode(s: string): string {
  const alphanums = 'bcdfghjklmnpqrstvwxz2456789';
  let out = '';
  for (let i = 0; i < s.length; i++) out += alphanums[s.charCodeAt(i) % alphanums.length];
  return out;
}

/** A stable pod-template-hash: FNV-1a 32 of the template's JSON, decimal, safe-encoded (ComputeHash's shape). */
export function podTemplateHash(template: unknown): string {
  const text = JSON.stringify(template);
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i) & 0xff;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return safeEncode(String(h));
}

const controllerOf = (o: KubeObject): string | undefined => o.metadata.ownerReferences?.find((r) => r.controller)?.uid;
const isReady = (p: KubeObject): boolean =>
  ((p.status?.['conditions'] as Array<{ type: string; status: string }> | undefined) ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
type Spec = Record<string, unknown>;

/** Starts the Deployment and ReplicaSet controller stand-ins and their shared informers. */
export function createControllers(opts: ControllerOptions): Controllers {
  const agent = new Agent({ ca: opts.info.caPem, keepAlive: true, maxSockets: 16, maxFreeSockets: 16 });
  const watchAgent = new Agent({ ca: opts.info.caPem, keepAlive: false, maxSockets: Infinity });
  const ua = (suffix: string): string => kubeUserAgent('kube-controller-manager', suffix);
  const mk = (token: string, suffix: string): HollowClient =>
    createHollowClient({ info: opts.info, token, userAgent: ua(suffix), agent, recorder: opts.recorder, limit: new TokenBucket(100, 100) });
  const informerClient = mk(opts.deploymentToken, 'shared-informers');
  const dc = mk(opts.deploymentToken, 'deployment-controller');
  const rsc = mk(opts.replicaSetToken, 'replicaset-controller');
  const errors: string[] = [];
  const onError = (key: string, e: unknown): void => {
    if (errors.length < 50) errors.push(`${key}: ${String(e)}`);
  };
  const keyOf = (o: KubeObject): string => `${o.metadata.namespace}/${o.metadata.name}`;
  /** uid → key, to find an owner from an ownerReference. */
  const rsByUid = new Map<string, string>();
  const depByUid = new Map<string, string>();
  /** ReplicaSet key → pod creations (+) / deletions (−) not yet seen by the watch. */
  const expectations = new Map<string, number>();
  let dq: WorkQueue;
  let rq: WorkQueue;

  const deployments = createInformer({
    client: informerClient,
    path: '/apis/apps/v1/deployments',
    watchAgent,
    onEvent(type, d) {
      if (type === 'DELETED') depByUid.delete(d.metadata.uid);
      else depByUid.set(d.metadata.uid, keyOf(d));
      if (type !== 'DELETED') dq.add(keyOf(d));
    },
  });
  const replicaSets = createInformer({
    client: informerClient,
    path: '/apis/apps/v1/replicasets',
    watchAgent,
    onEvent(type, rs) {
      if (type === 'DELETED') {
        rsByUid.delete(rs.metadata.uid);
        expectations.delete(keyOf(rs));
      } else {
        rsByUid.set(rs.metadata.uid, keyOf(rs));
        rq.add(keyOf(rs));
      }
      const owner = depByUid.get(controllerOf(rs) ?? '');
      if (owner) dq.add(owner);
    },
  });
  /** ReplicaSet key → its pods' keys (from the pods informer). */
  const podsOf = new Map<string, Set<string>>();
  const pods = createInformer({
    client: informerClient,
    path: '/api/v1/pods',
    watchAgent,
    onEvent(type, p) {
      const rs = rsByUid.get(controllerOf(p) ?? '');
      if (!rs) return;
      let set = podsOf.get(rs);
      if (!set) podsOf.set(rs, (set = new Set()));
      const k = keyOf(p);
      if (type === 'ADDED' && !set.has(k)) {
        const e = expectations.get(rs);
        if (e !== undefined && e > 0) expectations.set(rs, e - 1);
      }
      if (type === 'DELETED') {
        set.delete(k);
        const e = expectations.get(rs);
        if (e !== undefined && e < 0) expectations.set(rs, e + 1);
      } else set.add(k);
      rq.add(rs);
    },
  });

  const syncDeployment = async (key: string): Promise<void> => {
    const d = deployments.store.get(key);
    if (!d || d.metadata.deletionTimestamp) return;
    const spec = d.spec as Spec & { replicas?: number; template: { metadata?: { labels?: Record<string, string> } }; selector: { matchLabels?: Record<string, string> } };
    const replicas = spec.replicas ?? 1;
    const hash = podTemplateHash(spec.template);
    const [ns] = key.split('/') as [string];
    let rs = [...replicaSets.store.values()].find((r) => r.metadata.namespace === ns && controllerOf(r) === d.metadata.uid);
    if (!rs) {
      const labels = { ...(spec.template.metadata?.labels ?? {}), 'pod-template-hash': hash };
      const r = await dc.call<KubeObject>('POST', `/apis/apps/v1/namespaces/${ns}/replicasets`, {
        apiVersion: 'apps/v1',
        kind: 'ReplicaSet',
        metadata: {
          name: `${d.metadata.name}-${hash}`,
          namespace: ns,
          labels,
          annotations: { 'deployment.kubernetes.io/revision': '1', 'deployment.kubernetes.io/desired-replicas': String(replicas), 'deployment.kubernetes.io/max-replicas': String(replicas + Math.ceil(replicas / 4)) },
          ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: d.metadata.name, uid: d.metadata.uid, controller: true, blockOwnerDeletion: true }],
        },
        spec: {
          replicas,
          selector: { ...spec.selector, matchLabels: { ...(spec.selector.matchLabels ?? {}), 'pod-template-hash': hash } },
          template: { ...spec.template, metadata: { ...(spec.template.metadata ?? {}), labels } },
        },
      });
      if (r.status !== 201 && r.status !== 409) throw new Error(`POST replicaset: ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
      if (r.status === 201) rs = r.body;
    }
    if (!rs) return;
    const rss = (rs.status ?? {}) as { replicas?: number; readyReplicas?: number; availableReplicas?: number };
    const want = {
      observedGeneration: d.metadata.generation ?? 1,
      replicas: rss.replicas ?? 0,
      updatedReplicas: rss.replicas ?? 0,
      readyReplicas: rss.readyReplicas ?? 0,
      availableReplicas: rss.availableReplicas ?? 0,
      unavailableReplicas: Math.max(0, replicas - (rss.availableReplicas ?? 0)),
    };
    const have = (d.status ?? {}) as Record<string, unknown>;
    const same = (Object.keys(want) as Array<keyof typeof want>).every((k) => (have[k] ?? 0) === want[k]) && have['conditions'] !== undefined;
    if (same) return;
    const t = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    const available = want.availableReplicas >= replicas;
    const status = {
      ...want,
      conditions: [
        { type: 'Available', status: available ? 'True' : 'False', reason: available ? 'MinimumReplicasAvailable' : 'MinimumReplicasUnavailable', message: available ? 'Deployment has minimum availability.' : 'Deployment does not have minimum availability.', lastUpdateTime: t, lastTransitionTime: t },
        { type: 'Progressing', status: 'True', reason: available ? 'NewReplicaSetAvailable' : 'ReplicaSetUpdated', message: `ReplicaSet "${rs.metadata.name}" ${available ? 'has successfully progressed.' : 'is progressing.'}`, lastUpdateTime: t, lastTransitionTime: t },
      ],
    };
    const r = await dc.call('PUT', `/apis/apps/v1/namespaces/${ns}/deployments/${d.metadata.name}/status`, { ...d, status });
    // 409: a newer version is on its way through the informer, which queues the key again.
    if (r.status !== 200 && r.status !== 409 && r.status !== 404) throw new Error(`PUT deployment status: ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
  };

  const syncReplicaSet = async (key: string): Promise<void> => {
    const rs = replicaSets.store.get(key);
    if (!rs || rs.metadata.deletionTimestamp) return;
    if ((expectations.get(key) ?? 0) !== 0) return;
    const [ns] = key.split('/') as [string];
    const spec = rs.spec as Spec & { replicas?: number; template: Spec & { metadata?: Record<string, unknown> } };
    const want = spec.replicas ?? 1;
    const mine = [...(podsOf.get(key) ?? [])].map((k) => pods.store.get(k)).filter((p): p is KubeObject => !!p && !p.metadata.deletionTimestamp);
    const diff = want - mine.length;
    if (diff > 0) {
      // replica_set.go: at most burstReplicas (500) a sync, slow-start batches 1, 2, 4, ….
      let left = Math.min(500, diff);
      expectations.set(key, left);
      const body = {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {
          ...(spec.template.metadata ?? {}),
          generateName: `${rs.metadata.name}-`,
          namespace: ns,
          ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: rs.metadata.name, uid: rs.metadata.uid, controller: true, blockOwnerDeletion: true }],
        },
        spec: spec.template['spec'],
      };
      for (let batch = 1; left > 0; batch *= 2) {
        const n = Math.min(batch, left);
        const results = await Promise.all(Array.from({ length: n }, () => rsc.call('POST', `/api/v1/namespaces/${ns}/pods`, body)));
        left -= n;
        const failed = results.filter((r) => r.status !== 201);
        if (failed.length) {
          expectations.set(key, Math.max(0, (expectations.get(key) ?? 0) - failed.length - left));
          throw new Error(`POST pod: ${failed[0]!.status} ${JSON.stringify(failed[0]!.body).slice(0, 200)}`);
        }
      }
      return;
    }
    if (diff < 0) {
      const victims = mine.slice(0, Math.min(500, -diff));
      expectations.set(key, -victims.length);
      await Promise.all(victims.map((p) => rsc.call('DELETE', `/api/v1/namespaces/${ns}/pods/${p.metadata.name}`)));
      return;
    }
    const ready = mine.filter(isReady).length;
    const status = { replicas: mine.length, fullyLabeledReplicas: mine.length, readyReplicas: ready, availableReplicas: ready, observedGeneration: rs.metadata.generation ?? 1 };
    const have = (rs.status ?? {}) as Record<string, unknown>;
    if ((Object.keys(status) as Array<keyof typeof status>).every((k) => (have[k] ?? 0) === status[k])) return;
    const r = await rsc.call('PUT', `/apis/apps/v1/namespaces/${ns}/replicasets/${rs.metadata.name}/status`, { ...rs, status });
    if (r.status !== 200 && r.status !== 409 && r.status !== 404) throw new Error(`PUT replicaset status: ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
  };

  dq = createWorkQueue(5, syncDeployment, onError);
  rq = createWorkQueue(5, syncReplicaSet, onError);
  return {
    synced: Promise.all([deployments.synced, replicaSets.synced, pods.synced]).then(() => undefined),
    errors,
    pods,
    stop() {
      dq.stop();
      rq.stop();
      deployments.stop();
      replicaSets.stop();
      pods.stop();
      agent.destroy();
      watchAgent.destroy();
    },
  };
}
