/**
 * kube's DefaultTolerationSeconds plugin (plugin/pkg/admission/defaulttolerationseconds, 1.24): a
 * pod written (create or update) without a toleration of the NoExecute `not-ready` /
 * `unreachable` node taints gets one, lasting `--default-not-ready-toleration-seconds` /
 * `--default-unreachable-toleration-seconds` (300 s each), so the node lifecycle controller evicts
 * it five minutes after its node goes away rather than at once.
 */
import { isPlainObject } from '@plinth/api';
import type { AdmissionPlugin } from './interfaces.js';
import { isMainResource } from './forbidden.js';

export const TAINT_NODE_NOT_READY = 'node.kubernetes.io/not-ready';
export const TAINT_NODE_UNREACHABLE = 'node.kubernetes.io/unreachable';

export interface DefaultTolerationSecondsOptions {
  /** `--default-not-ready-toleration-seconds` (kube's default 300). */
  notReadySeconds: number;
  /** `--default-unreachable-toleration-seconds` (kube's default 300). */
  unreachableSeconds: number;
}

/** Whether `t` tolerates the NoExecute taint `key` (an empty key or effect matches any). */
function tolerates(t: Record<string, unknown>, key: string): boolean {
  const k = t['key'] ?? '';
  const effect = t['effect'] ?? '';
  return (k === key || k === '') && (effect === 'NoExecute' || effect === '');
}

export function createDefaultTolerationSeconds(opts: DefaultTolerationSecondsOptions): AdmissionPlugin {
  return {
    name: 'DefaultTolerationSeconds',
    handles: (op) => op === 'CREATE' || op === 'UPDATE',
    admit(attrs) {
      if (!isMainResource(attrs, '', 'pods') || !attrs.object) return;
      const pod = attrs.object;
      if (!isPlainObject(pod['spec'])) pod['spec'] = {};
      const spec = pod['spec'] as Record<string, unknown>;
      const existing = Array.isArray(spec['tolerations']) ? (spec['tolerations'] as unknown[]).filter(isPlainObject) : [];
      const add: Record<string, unknown>[] = [];
      if (!existing.some((t) => tolerates(t, TAINT_NODE_NOT_READY))) add.push({ key: TAINT_NODE_NOT_READY, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: opts.notReadySeconds });
      if (!existing.some((t) => tolerates(t, TAINT_NODE_UNREACHABLE))) add.push({ key: TAINT_NODE_UNREACHABLE, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: opts.unreachableSeconds });
      if (add.length === 0) return;
      if (!Array.isArray(spec['tolerations'])) spec['tolerations'] = [];
      (spec['tolerations'] as unknown[]).push(...add);
    },
  };
}
