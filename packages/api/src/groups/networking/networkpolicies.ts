/**
 * networking.k8s.io/v1 NetworkPolicies as kube-apiserver 1.24 has them
 * (pkg/registry/networking/networkpolicy, printNetworkPolicy): short name `netpol`, a `status`
 * sub-resource whose conditions are dropped (kube's dropDisabledStatusFields with the alpha
 * NetworkPolicyStatus gate off, the only state plinth implements) unless the stored object already
 * has some, policyTypes defaulted from the rules, port protocols TCP, generation on spec change.
 */
import { isDeepStrictEqual } from 'node:util';
import type { ResourceStrategy } from '../../catalog.js';
import { age, ageColumn, col, fieldAt, nameColumn, type TableDefinition } from '../../tables.js';
import { isPlainObject } from '../../types.js';
import { defineResource } from '../define.js';
import { NETWORKING_GROUP } from './ingresses.js';
import { validateNetworkPolicy } from './validation.js';

const networkPolicyStrategy: ResourceStrategy = {
  defaults(obj) {
    const spec = obj['spec'];
    if (!isPlainObject(spec)) return;
    for (const dir of ['ingress', 'egress']) {
      for (const rule of Array.isArray(spec[dir]) ? (spec[dir] as unknown[]) : []) {
        if (!isPlainObject(rule) || !Array.isArray(rule['ports'])) continue;
        for (const port of rule['ports']) if (isPlainObject(port) && port['protocol'] == null) port['protocol'] = 'TCP';
      }
    }
    if (!Array.isArray(spec['policyTypes']) || spec['policyTypes'].length === 0) {
      spec['policyTypes'] = Array.isArray(spec['egress']) && spec['egress'].length > 0 ? ['Ingress', 'Egress'] : ['Ingress'];
    }
  },
  prepareForCreate(obj) {
    // Go's encoder writes the empty status struct: kube 1.24 answers `status: {}`.
    obj['status'] = {};
    obj.metadata.generation = 1;
  },
  prepareForUpdate(obj, old) {
    obj['status'] = old['status'] ?? {};
    if (!isDeepStrictEqual(obj['spec'], old['spec'])) obj.metadata.generation = (old.metadata.generation ?? 0) + 1;
  },
  validate: validateNetworkPolicy,
};

const hasConditions = (status: unknown): boolean => isPlainObject(status) && Array.isArray(status['conditions']) && status['conditions'].length > 0;

/** kube's networkPolicyStatusStrategy: the spec stays; with the gate off, new conditions are dropped. */
const networkPolicyStatusStrategy: ResourceStrategy = {
  prepareForUpdate(obj, old) {
    obj['spec'] = old['spec'];
    if (!hasConditions(old['status'])) obj['status'] = {};
  },
  validate: () => [],
  validateOnUpdate: false,
};

/** metav1.FormatLabelSelector: the selector's requirements sorted by key, `<none>` when empty. */
export function formatLabelSelector(selector: unknown): string {
  if (!isPlainObject(selector)) return '<none>';
  const reqs: Array<[string, string]> = [];
  const labels = isPlainObject(selector['matchLabels']) ? selector['matchLabels'] : {};
  for (const [k, v] of Object.entries(labels)) reqs.push([k, `${k}=${String(v)}`]);
  for (const e of Array.isArray(selector['matchExpressions']) ? selector['matchExpressions'] : []) {
    if (!isPlainObject(e)) continue;
    const key = String(e['key'] ?? '');
    const values = (Array.isArray(e['values']) ? (e['values'] as string[]) : []).slice().sort();
    const text: Record<string, string> = { In: `${key} in (${values.join(',')})`, NotIn: `${key} notin (${values.join(',')})`, Exists: key, DoesNotExist: `!${key}` };
    reqs.push([key, text[String(e['operator'])] ?? key]);
  }
  reqs.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return reqs.length ? reqs.map((r) => r[1]).join(',') : '<none>';
}

/** kube's printNetworkPolicy: NAME, POD-SELECTOR, AGE. */
const networkPolicyTable: TableDefinition = {
  columns: [nameColumn, col('Pod-Selector', 'string', 'The pods the policy applies to.'), ageColumn],
  cells: (obj, now) => [obj.metadata.name ?? '', formatLabelSelector(fieldAt(obj, 'spec', 'podSelector')), age(obj, now)],
};

export const networkpolicies = defineResource({
  group: NETWORKING_GROUP,
  version: 'v1',
  kind: 'NetworkPolicy',
  plural: 'networkpolicies',
  shortNames: ['netpol'],
  namespaced: true,
  description: 'A NetworkPolicy says which traffic the selected pods may receive and send.',
  strategy: networkPolicyStrategy,
  subresources: [{ name: 'status', verbs: ['get', 'patch', 'update'], strategy: networkPolicyStatusStrategy }],
  table: networkPolicyTable,
});
