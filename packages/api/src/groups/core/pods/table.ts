/**
 * `kubectl get pods` as kube-apiserver 1.24 prints them (pkg/printers/internalversion printPod):
 * NAME READY STATUS RESTARTS AGE, and with -o wide IP NODE NOMINATED NODE READINESS GATES. STATUS
 * is computed from the phase, the status reason, the init and app container states and the
 * deletion timestamp; RESTARTS carries "(<age> ago)" once a container has a last termination.
 */
import { age, col, humanDuration, nameColumn, type TableDefinition } from '../../../tables.js';
import type { StoredObject } from '../../../types.js';
import { type JsonObject, asObject, num, objects, str } from '../validation/access.js';

/** kube's NodeUnreachablePodReason: a pod the node controller marked for deletion. */
const NODE_LOST = 'NodeLost';

function hasPodReadyCondition(conditions: unknown): boolean {
  return objects(conditions).some((c) => str(c['type']) === 'Ready' && str(c['status']) === 'True');
}

/** The later of `latest` and the finish time of a container's last termination. */
function lastRestart(latest: number, cs: JsonObject): number {
  const finished = str(asObject(asObject(cs['lastState'])?.['terminated'])?.['finishedAt']);
  const t = finished ? Date.parse(finished) : NaN;
  return Number.isNaN(t) || t <= latest ? latest : t;
}

function terminatedReason(t: JsonObject, prefix: string): string {
  if (str(t['reason'])) return `${prefix}${str(t['reason'])}`;
  if (num(t['signal']) !== 0) return `${prefix}Signal:${num(t['signal'])}`;
  return `${prefix}ExitCode:${num(t['exitCode'])}`;
}

interface PodSummary {
  ready: string;
  status: string;
  restarts: string;
}

/** The READY, STATUS and RESTARTS cells (printPod's loop over init and app container statuses). */
export function summarizePod(pod: StoredObject, now: number): PodSummary {
  const spec = asObject(pod['spec']) ?? {};
  const status = asObject(pod['status']) ?? {};
  let restarts = 0;
  let readyContainers = 0;
  let lastRestartDate = 0;
  let reason = str(status['reason']) || str(status['phase']);
  let initializing = false;
  const inits = objects(status['initContainerStatuses']);
  for (let i = 0; i < inits.length; i++) {
    const cs = inits[i]!;
    restarts += num(cs['restartCount']);
    lastRestartDate = lastRestart(lastRestartDate, cs);
    const state = asObject(cs['state']) ?? {};
    const terminated = asObject(state['terminated']);
    const waiting = asObject(state['waiting']);
    if (terminated && num(terminated['exitCode']) === 0) continue;
    if (terminated) reason = terminatedReason(terminated, 'Init:');
    else if (waiting && str(waiting['reason']) && str(waiting['reason']) !== 'PodInitializing') reason = `Init:${str(waiting['reason'])}`;
    else reason = `Init:${i}/${objects(spec['initContainers']).length}`;
    initializing = true;
    break;
  }
  if (!initializing) {
    restarts = 0;
    let hasRunning = false;
    const statuses = objects(status['containerStatuses']);
    for (let i = statuses.length - 1; i >= 0; i--) {
      const cs = statuses[i]!;
      restarts += num(cs['restartCount']);
      lastRestartDate = lastRestart(lastRestartDate, cs);
      const state = asObject(cs['state']) ?? {};
      const waiting = asObject(state['waiting']);
      const terminated = asObject(state['terminated']);
      if (waiting && str(waiting['reason'])) reason = str(waiting['reason']);
      else if (terminated) reason = terminatedReason(terminated, '');
      else if (cs['ready'] === true && asObject(state['running'])) {
        hasRunning = true;
        readyContainers++;
      }
    }
    // A container still running after others completed: Running (or NotReady without the Ready condition).
    if (reason === 'Completed' && hasRunning) reason = hasPodReadyCondition(status['conditions']) ? 'Running' : 'NotReady';
  }
  if (pod.metadata.deletionTimestamp && str(status['reason']) === NODE_LOST) reason = 'Unknown';
  else if (pod.metadata.deletionTimestamp) reason = 'Terminating';
  const restartsText = lastRestartDate > 0 ? `${restarts} (${humanDuration(now - lastRestartDate)} ago)` : String(restarts);
  return { ready: `${readyContainers}/${objects(spec['containers']).length}`, status: reason, restarts: restartsText };
}

/** The READINESS GATES cell: gates whose condition is True, of all gates; `<none>` without gates. */
function readinessGates(spec: JsonObject, status: JsonObject): string {
  const gates = objects(spec['readinessGates']);
  if (gates.length === 0) return '<none>';
  const conditions = objects(status['conditions']);
  let ok = 0;
  for (const g of gates) {
    const c = conditions.find((x) => str(x['type']) === str(g['conditionType']));
    if (c && str(c['status']) === 'True') ok++;
  }
  return `${ok}/${gates.length}`;
}

export const podTable: TableDefinition = {
  columns: [
    nameColumn,
    col('Ready', 'string', 'Ready containers of all containers.'),
    col('Status', 'string', 'What the pod is doing, from its phase and container states.'),
    col('Restarts', 'string', 'Container restarts, and how long ago the last one was.'),
    col('Age', 'string', 'The time since the pod was created.'),
    col('IP', 'string', "The pod's IP address.", { priority: 1 }),
    col('Node', 'string', 'The node the pod is bound to.', { priority: 1 }),
    col('Nominated Node', 'string', 'The node the scheduler nominated for the pod.', { priority: 1 }),
    col('Readiness Gates', 'string', "The pod's readiness gates that are met, of all.", { priority: 1 }),
  ],
  cells: (pod, now) => {
    const { ready, status: reason, restarts } = summarizePod(pod, now);
    const spec = asObject(pod['spec']) ?? {};
    const status = asObject(pod['status']) ?? {};
    const podIP = str(objects(status['podIPs'])[0]?.['ip']) || str(status['podIP']);
    return [
      pod.metadata.name ?? '',
      ready,
      reason,
      restarts,
      age(pod, now),
      podIP || '<none>',
      str(spec['nodeName']) || '<none>',
      str(status['nominatedNodeName']) || '<none>',
      readinessGates(spec, status),
    ];
  },
};
