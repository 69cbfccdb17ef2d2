/**
 * kube's TaintNodesByCondition plugin (plugin/pkg/admission/nodetaint, 1.24): a created Node gets
 * the `node.kubernetes.io/not-ready:NoSchedule` taint (unless it has a taint of that key and
 * effect), so nothing is scheduled on it before the node lifecycle controller has seen it ready.
 */
import { isPlainObject } from '@plinth/api';
import type { AdmissionPlugin } from './interfaces.js';
import { isMainResource } from './forbidden.js';
import { TAINT_NODE_NOT_READY } from './default-toleration-seconds.js';

export function createTaintNodesByCondition(): AdmissionPlugin {
  return {
    name: 'TaintNodesByCondition',
    handles: (op) => op === 'CREATE',
    admit(attrs) {
      if (!isMainResource(attrs, '', 'nodes') || !attrs.object) return;
      const node = attrs.object;
      if (!isPlainObject(node['spec'])) node['spec'] = {};
      const spec = node['spec'] as Record<string, unknown>;
      const taints = Array.isArray(spec['taints']) ? (spec['taints'] as unknown[]) : (spec['taints'] = []);
      // kube's Taint.MatchTaint: the same key and effect (the value does not count).
      if (taints.some((t) => isPlainObject(t) && t['key'] === TAINT_NODE_NOT_READY && t['effect'] === 'NoSchedule')) return;
      taints.push({ key: TAINT_NODE_NOT_READY, effect: 'NoSchedule' });
    },
  };
}
