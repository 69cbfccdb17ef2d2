/**
 * Hollow nodes: the API traffic of kube 1.24's kubelet (research-28 §1, kubemark §2), many nodes
 * in one process. Each node has its own identity (`system:node:<name>` in `system:nodes`, so
 * plinth's Node authorizer and NodeRestriction apply), kubelet's user agent, a main client limited
 * to kubemark's QPS 10 / burst 20 and an unlimited heartbeat client. All nodes share one keep-alive
 * Agent for their main clients, one for their heartbeat clients, one for watches (a socket per
 * watch; plinth serves HTTP/1.1 only) and one timer.
 *
 * Per node: POST its Node (409 → GET), GET/POST its Lease, then PUT the Lease every 10 s
 * (+≤4 % jitter, the cached object, no GET: component-helpers lease controller); node status:
 * GET nodes/<n>?resourceVersion=0 then a strategic-merge PATCH of the heartbeat times every 60 s
 * (the issue's figure; kube 1.24 GETs every 10 s and PATCHes on change or every 5 min — a stated
 * deviation); its pods watched with `fieldSelector=spec.nodeName=<n>` (list then watch). A bound
 * pod gets GET + PATCH status twice (Pending/ContainerCreating, then Running/Ready, status_manager
 * shapes); a pod with a deletionTimestamp gets GET + PATCH (terminated) + DELETE with
 * gracePeriodSeconds 0 and a uid precondition.
 */
import { Agent } from 'node:https';
import { createHollowClient, kubeUserAgent, TokenBucket, type HollowClient, type LatencyRecorder, type ServerInfo } from './client.js';
import { createInformer, type Informer, type KubeObject } from './informer.js';

/** Which pods each node saw bound to it, running, and deleted (the watch-delivery ledger). */
export class Ledger {
  /** pod uid → node the scheduler bound it to. */
  readonly bound = new Map<string, string>();
  /** pod uid → node whose watch delivered the pod. */
  readonly seen = new Map<string, string>();
  /** pod uids whose node watch delivered DELETED. */
  readonly deleted = new Set<string>();
  /** pod uids the node moved to Running (status PATCH answered 200). */
  readonly running = new Set<string>();
}

/** The nodes to run, their identities, and their timers. */
export interface HollowNodesOptions {
  info: ServerInfo;
  /** Node names and their bearer tokens (users system:node:<name>). */
  nodes: Array<{ name: string; token: string }>;
  recorder: LatencyRecorder;
  ledger: Ledger;
  leaseIntervalMs?: number;
  statusIntervalMs?: number;
  /** Nodes registered per second while starting (kube's clusters come up staggered too). */
  startRatePerSec?: number;
  /** Sockets of the shared Agent of the nodes' main clients (default 64). */
  maxSockets?: number;
  /** Sockets of the shared Agent of the heartbeat clients (default 16). */
  heartbeatSockets?: number;
}

interface NodeState {
  name: string;
  main: HollowClient;
  heartbeat: HollowClient;
  lease?: KubeObject;
  nodeUid: string;
  nextLease: number;
  nextStatus: number;
  informer?: Informer;
  /** pod uid → what this node has done with it. */
  pods: Map<string, 'starting' | 'running' | 'terminating'>;
  busy: boolean;
}

/** The running hollow nodes. */
export interface HollowNodes {
  /** Resolves when every node is registered and its pod informer synced. */
  readonly ready: Promise<void>;
  readonly errors: string[];
  watchStats(): { watches: number; events: number; relists: number };
  stop(): void;
}

const LEASE_NS = 'kube-node-lease';
const nowMicro = (): string => new Date().toISOString().replace('Z', '000Z');
const nowSec = (): string => new Date().toISOString().replace(/\.\d+Z$/, 'Z');

function nodeBody(name: string): unknown {
  const t = nowSec();
  const cond = (type: string, status: string, reason: string): unknown => ({ type, status, reason, message: reason, lastHeartbeatTime: t, lastTransitionTime: t });
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      labels: { 'kubernetes.io/hostname': name, 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'amd64', 'beta.kubernetes.io/os': 'linux', 'beta.kubernetes.io/arch': 'amd64' },
    },
    spec: { providerID: `kubemark://${name}` },
    status: {
      // kubemark's fake cadvisor: a 1-core, ~4 GB node with kubelet's maxPods 110.
      capacity: { cpu: '1', memory: '3840Mi', pods: '110', 'ephemeral-storage': '100Gi' },
      allocatable: { cpu: '1', memory: '3840Mi', pods: '110', 'ephemeral-storage': '100Gi' },
      conditions: [
        cond('MemoryPressure', 'False', 'KubeletHasSufficientMemory'),
        cond('DiskPressure', 'False', 'KubeletHasNoDiskPressure'),
        cond('PIDPressure', 'False', 'KubeletHasSufficientPID'),
        cond('Ready', 'True', 'KubeletReady'),
      ],
      addresses: [
        { type: 'InternalIP', address: '10.64.0.1' },
        { type: 'Hostname', address: name },
      ],
      daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
      nodeInfo: {
        machineID: '', systemUUID: '', bootID: '', kernelVersion: '5.10.0', osImage: 'Debian GNU/Linux 12', containerRuntimeVersion: 'containerd://1.6.4',
        kubeletVersion: 'v1.24.0', kubeProxyVersion: 'v1.24.0', operatingSystem: 'linux', architecture: 'amd64',
      },
    },
  };
}

/** The heartbeat-only node status patch kubelet sends (kubelet_node_status.go, research §1.3). */
function heartbeatPatch(): unknown {
  const t = nowSec();
  const types = ['MemoryPressure', 'DiskPressure', 'PIDPressure', 'Ready'];
  return { status: { '$setElementOrder/conditions': types.map((type) => ({ type })), conditions: types.map((type) => ({ type, lastHeartbeatTime: t })) } };
}

function containerNames(pod: KubeObject): string[] {
  const cs = (pod.spec?.['containers'] as Array<{ name: string }> | undefined) ?? [];
  return cs.map((c) => c.name);
}

const CONDITION_ORDER = { '$setElementOrder/conditions': ['Initialized', 'Ready', 'ContainersReady', 'PodScheduled'].map((type) => ({ type })) };

function pendingPatch(pod: KubeObject): unknown {
  const t = nowSec();
  const names = containerNames(pod);
  const msg = `containers with unready status: [${names.join(' ')}]`;
  return {
    metadata: { uid: pod.metadata.uid },
    status: {
      ...CONDITION_ORDER,
      conditions: [
        { type: 'Initialized', status: 'True', lastProbeTime: null, lastTransitionTime: t },
        { type: 'Ready', status: 'False', reason: 'ContainersNotReady', message: msg, lastProbeTime: null, lastTransitionTime: t },
        { type: 'ContainersReady', status: 'False', reason: 'ContainersNotReady', message: msg, lastProbeTime: null, lastTransitionTime: t },
      ],
      containerStatuses: names.map((name) => ({ name, image: 'k8s.gcr.io/pause:3.1', imageID: '', lastState: {}, ready: false, restartCount: 0, started: false, state: { waiting: { reason: 'ContainerCreating' } } })),
      hostIP: '10.64.0.1',
      startTime: t,
    },
  };
}

function runningPatch(pod: KubeObject, ip: string): unknown {
  const t = nowSec();
  return {
    metadata: { uid: pod.metadata.uid },
    status: {
      ...CONDITION_ORDER,
      conditions: [
        { type: 'Ready', status: 'True', reason: null, message: null, lastTransitionTime: t },
        { type: 'ContainersReady', status: 'True', reason: null, message: null, lastTransitionTime: t },
      ],
      containerStatuses: containerNames(pod).map((name) => ({
        name, containerID: `containerd://${pod.metadata.uid.replace(/-/g, '')}`, image: 'k8s.gcr.io/pause:3.1', imageID: 'k8s.gcr.io/pause@sha256:0000', lastState: {}, ready: true, restartCount: 0, started: true, state: { running: { startedAt: t } },
      })),
      phase: 'Running',
      podIP: ip,
      podIPs: [{ ip }],
    },
  };
}

function terminatedPatch(pod: KubeObject): unknown {
  const t = nowSec();
  return {
    metadata: { uid: pod.metadata.uid },
    status: {
      ...CONDITION_ORDER,
      conditions: [
        { type: 'Ready', status: 'False', reason: 'ContainersNotReady', message: 'containers with unready status', lastTransitionTime: t },
        { type: 'ContainersReady', status: 'False', reason: 'ContainersNotReady', message: 'containers with unready status', lastTransitionTime: t },
      ],
      containerStatuses: containerNames(pod).map((name) => ({
        name, image: 'k8s.gcr.io/pause:3.1', imageID: 'k8s.gcr.io/pause@sha256:0000', lastState: {}, ready: false, restartCount: 0, started: false,
        state: { terminated: { exitCode: 0, reason: 'Completed', startedAt: t, finishedAt: t } },
      })),
    },
  };
}

const SMP = 'application/strategic-merge-patch+json';

/** Starts the hollow nodes (registration staggered at `startRatePerSec`) and their shared timer. */
export function createHollowNodes(opts: HollowNodesOptions): HollowNodes {
  const leaseMs = opts.leaseIntervalMs ?? 10_000;
  const statusMs = opts.statusIntervalMs ?? 60_000;
  const agent = new Agent({ ca: opts.info.caPem, keepAlive: true, maxSockets: opts.maxSockets ?? 64, maxFreeSockets: opts.maxSockets ?? 64 });
  // kubelet's heartbeat clientset has a connection of its own (server.go), so lease renewals do not
  // queue behind pod traffic: here an Agent of its own.
  const heartbeatAgent = new Agent({ ca: opts.info.caPem, keepAlive: true, maxSockets: opts.heartbeatSockets ?? 16, maxFreeSockets: opts.heartbeatSockets ?? 16 });
  const watchAgent = new Agent({ ca: opts.info.caPem, keepAlive: false, maxSockets: Infinity });
  const ua = kubeUserAgent('kubelet');
  const errors: string[] = [];
  const fail = (msg: string): void => {
    if (errors.length < 50) errors.push(msg);
  };
  let stopped = false;
  let ipSeq = 0;
  const states: NodeState[] = opts.nodes.map(({ name, token }) => ({
    name,
    // kubemark: main client QPS 10 / burst 20; heartbeat client without a limit (server.go).
    main: createHollowClient({ info: opts.info, token, userAgent: ua, agent, recorder: opts.recorder, limit: new TokenBucket(10, 20) }),
    heartbeat: createHollowClient({ info: opts.info, token, userAgent: ua, agent: heartbeatAgent, recorder: opts.recorder }),
    nodeUid: '',
    nextLease: Infinity,
    nextStatus: Infinity,
    pods: new Map(),
    busy: false,
  }));

  const podPath = (p: KubeObject): string => `/api/v1/namespaces/${p.metadata.namespace}/pods/${p.metadata.name}`;

  /** status_manager's syncPod: GET the pod, then PATCH its status (uid as precondition). */
  const syncStatus = async (s: NodeState, pod: KubeObject, patch: (p: KubeObject) => unknown): Promise<boolean> => {
    const got = await s.main.call<KubeObject>('GET', podPath(pod));
    if (got.status !== 200) return false;
    const r = await s.main.call('PATCH', `${podPath(pod)}/status`, patch(got.body), SMP);
    if (r.status !== 200 && r.status !== 404 && r.status !== 409) fail(`${s.name}: PATCH pod status ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
    return r.status === 200;
  };

  const startPod = async (s: NodeState, pod: KubeObject): Promise<void> => {
    if (!(await syncStatus(s, pod, pendingPatch))) return;
    const ip = `10.${64 + ((ipSeq >> 16) & 63)}.${(ipSeq >> 8) & 255}.${ipSeq++ & 255}`;
    if (!(await syncStatus(s, pod, (p) => runningPatch(p, ip)))) return;
    if (s.pods.get(pod.metadata.uid) === 'starting') s.pods.set(pod.metadata.uid, 'running');
    opts.ledger.running.add(pod.metadata.uid);
  };

  const killPod = async (s: NodeState, pod: KubeObject): Promise<void> => {
    await syncStatus(s, pod, terminatedPatch);
    const r = await s.main.call('DELETE', podPath(pod), { kind: 'DeleteOptions', apiVersion: 'v1', gracePeriodSeconds: 0, preconditions: { uid: pod.metadata.uid } });
    if (r.status !== 200 && r.status !== 404 && r.status !== 409) fail(`${s.name}: DELETE pod ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
  };

  const onPod = (s: NodeState, type: string, pod: KubeObject): void => {
    const uid = pod.metadata.uid;
    if (type === 'DELETED') {
      s.pods.delete(uid);
      opts.ledger.deleted.add(uid);
      return;
    }
    if (!opts.ledger.seen.has(uid)) opts.ledger.seen.set(uid, s.name);
    const state = s.pods.get(uid);
    if (pod.metadata.deletionTimestamp) {
      if (state === 'terminating') return;
      s.pods.set(uid, 'terminating');
      killPod(s, pod).catch((e: unknown) => fail(`${s.name}: kill ${pod.metadata.name}: ${String(e)}`));
      return;
    }
    if (state === undefined) {
      s.pods.set(uid, 'starting');
      startPod(s, pod).catch((e: unknown) => fail(`${s.name}: start ${pod.metadata.name}: ${String(e)}`));
    }
  };

  const register = async (s: NodeState): Promise<void> => {
    const created = await s.main.call<KubeObject>('POST', '/api/v1/nodes', nodeBody(s.name));
    let node = created.body;
    if (created.status === 409) node = await s.main.must<KubeObject>('GET', `/api/v1/nodes/${s.name}`, undefined, [200]);
    else if (created.status !== 201) throw new Error(`${s.name}: POST node ${created.status} ${JSON.stringify(created.body).slice(0, 300)}`);
    s.nodeUid = node.metadata.uid;
    const leasePath = `/apis/coordination.k8s.io/v1/namespaces/${LEASE_NS}/leases`;
    const got = await s.heartbeat.call<KubeObject>('GET', `${leasePath}/${s.name}`);
    if (got.status === 200) s.lease = got.body;
    else {
      s.lease = await s.heartbeat.must<KubeObject>('POST', leasePath, {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name: s.name, namespace: LEASE_NS, ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: s.name, uid: s.nodeUid }] },
        spec: { holderIdentity: s.name, leaseDurationSeconds: 40, renewTime: nowMicro() },
      }, [201]);
    }
    const now = Date.now();
    s.nextLease = now + leaseMs * (1 + Math.random() * 0.04);
    s.nextStatus = now + Math.random() * statusMs;
    s.informer = createInformer({
      client: s.main,
      path: '/api/v1/pods',
      query: `fieldSelector=${encodeURIComponent(`spec.nodeName=${s.name}`)}`,
      watchAgent,
      onEvent: (type, pod) => onPod(s, type, pod),
    });
    await s.informer.synced;
  };

  const renewLease = async (s: NodeState): Promise<void> => {
    const lease = s.lease!;
    const path = `/apis/coordination.k8s.io/v1/namespaces/${LEASE_NS}/leases/${s.name}`;
    const r = await s.heartbeat.call<KubeObject>('PUT', path, { ...lease, spec: { ...lease.spec, renewTime: nowMicro() } });
    if (r.status === 200) s.lease = r.body;
    else if (r.status === 409) s.lease = await s.heartbeat.must<KubeObject>('GET', path, undefined, [200]);
    else fail(`${s.name}: PUT lease ${r.status}`);
  };

  const updateStatus = async (s: NodeState): Promise<void> => {
    await s.heartbeat.must('GET', `/api/v1/nodes/${s.name}?resourceVersion=0`, undefined, [200]);
    await s.heartbeat.must('PATCH', `/api/v1/nodes/${s.name}/status`, heartbeatPatch(), [200], SMP);
  };

  // One timer for every node: each 100 ms, whatever is due runs (at most one call chain per node).
  const timer = setInterval(() => {
    const now = Date.now();
    for (const s of states) {
      if (s.busy) continue;
      if (now >= s.nextLease) {
        s.busy = true;
        s.nextLease = Infinity;
        renewLease(s)
          .catch((e: unknown) => fail(`${s.name}: lease: ${String(e)}`))
          .finally(() => {
            s.busy = false;
            // JitterUntil sliding: the next period starts after this sync ends.
            s.nextLease = Date.now() + leaseMs * (1 + Math.random() * 0.04);
          });
      } else if (now >= s.nextStatus) {
        s.busy = true;
        s.nextStatus = Infinity;
        updateStatus(s)
          .catch((e: unknown) => fail(`${s.name}: status: ${String(e)}`))
          .finally(() => {
            s.busy = false;
            s.nextStatus = Date.now() + statusMs * (1 + Math.random() * 0.04);
          });
      }
    }
  }, 100);

  const ready = (async (): Promise<void> => {
    const rate = opts.startRatePerSec ?? 50;
    const started: Array<Promise<void>> = [];
    for (let i = 0; i < states.length && !stopped; i++) {
      started.push(register(states[i]!));
      if ((i + 1) % Math.max(1, Math.round(rate / 10)) === 0) await new Promise((r) => setTimeout(r, 100));
    }
    await Promise.all(started);
  })();

  return {
    ready,
    errors,
    watchStats() {
      const out = { watches: 0, events: 0, relists: 0 };
      for (const s of states) {
        if (!s.informer) continue;
        out.watches += s.informer.stats.watches;
        out.events += s.informer.stats.events;
        out.relists += s.informer.stats.relists;
      }
      return out;
    },
    stop() {
      stopped = true;
      clearInterval(timer);
      for (const s of states) s.informer?.stop();
      agent.destroy();
      heartbeatAgent.destroy();
      watchAgent.destroy();
    },
  };
}
