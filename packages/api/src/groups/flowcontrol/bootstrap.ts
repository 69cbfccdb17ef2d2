/**
 * kube 1.24's API Priority and Fairness bootstrap configuration
 * (k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap, v1beta2): the mandatory objects (`exempt` and
 * `catch-all`, both kinds) and the suggested ones, as the objects the config producer writes. The
 * one source of truth: the apiserver's filter compiles its start-up configuration from these, the
 * producer stores them, and validation compares the mandatory specs with them.
 */
import type { JsonObject } from '../../json.js';
import type { StoredObject } from '../../types.js';

export const FLOWCONTROL_GROUP = 'flowcontrol.apiserver.k8s.io';
/** kube's AutoUpdateAnnotationKey: "true" lets the config producer keep the spec as the bootstrap has it. */
export const AUTO_UPDATE_ANNOTATION = 'apf.kubernetes.io/autoupdate-spec';
/** Names of the mandatory objects (both kinds): kube's FlowSchemaNameExempt/CatchAll, PriorityLevelConfigurationNameExempt/CatchAll. */
export const FLOWCONTROL_NAME_EXEMPT = 'exempt';
export const FLOWCONTROL_NAME_CATCH_ALL = 'catch-all';

const ALL = '*';
const group = (name: string): JsonObject => ({ kind: 'Group', group: { name } });
const user = (name: string): JsonObject => ({ kind: 'User', user: { name } });
const kubeSystemServiceAccount = (name: string): JsonObject => ({ kind: 'ServiceAccount', serviceAccount: { namespace: 'kube-system', name } });
const authenticatedOrNot = [group('system:unauthenticated'), group('system:authenticated')];
const everyResource = (): JsonObject => ({ verbs: [ALL], apiGroups: [ALL], resources: [ALL], clusterScope: true, namespaces: [ALL] });
const everyNonResource = (): JsonObject => ({ verbs: [ALL], nonResourceURLs: [ALL] });
const everything = (subjects: JsonObject[]): JsonObject => ({ subjects, resourceRules: [everyResource()], nonResourceRules: [everyNonResource()] });
const getCreateUpdate = ['get', 'create', 'update'];
const namespaced = (verbs: string[], apiGroups: string[], resources: string[], namespaces: string[]): JsonObject => ({ verbs, apiGroups, resources, namespaces });

function priorityLevel(name: string, spec: JsonObject): StoredObject {
  return { apiVersion: `${FLOWCONTROL_GROUP}/v1beta2`, kind: 'PriorityLevelConfiguration', metadata: { name }, spec };
}
const queued = (shares: number, queues: number, handSize: number, queueLengthLimit: number): JsonObject => ({
  type: 'Limited',
  limited: { assuredConcurrencyShares: shares, limitResponse: { type: 'Queue', queuing: { queues, handSize, queueLengthLimit } } },
});

function flowSchema(name: string, priorityLevelName: string, matchingPrecedence: number, distinguisher: 'ByUser' | 'ByNamespace' | undefined, rules: JsonObject): StoredObject {
  const spec: JsonObject = { priorityLevelConfiguration: { name: priorityLevelName }, matchingPrecedence };
  if (distinguisher) spec['distinguisherMethod'] = { type: distinguisher };
  spec['rules'] = [rules];
  return { apiVersion: `${FLOWCONTROL_GROUP}/v1beta2`, kind: 'FlowSchema', metadata: { name }, spec };
}

/** kube's MandatoryPriorityLevelConfigurations. */
export const MANDATORY_PRIORITY_LEVELS: readonly StoredObject[] = [
  priorityLevel(FLOWCONTROL_NAME_EXEMPT, { type: 'Exempt' }),
  priorityLevel(FLOWCONTROL_NAME_CATCH_ALL, { type: 'Limited', limited: { assuredConcurrencyShares: 5, limitResponse: { type: 'Reject' } } }),
];

/** kube's MandatoryFlowSchemas. */
export const MANDATORY_FLOW_SCHEMAS: readonly StoredObject[] = [
  flowSchema(FLOWCONTROL_NAME_EXEMPT, 'exempt', 1, undefined, everything([group('system:masters')])),
  flowSchema(FLOWCONTROL_NAME_CATCH_ALL, 'catch-all', 10000, 'ByUser', everything(authenticatedOrNot)),
];

/** kube's SuggestedPriorityLevelConfigurations. */
export const SUGGESTED_PRIORITY_LEVELS: readonly StoredObject[] = [
  priorityLevel('system', queued(30, 64, 6, 50)),
  priorityLevel('node-high', queued(40, 64, 6, 50)),
  priorityLevel('leader-election', queued(10, 16, 4, 50)),
  priorityLevel('workload-high', queued(40, 128, 6, 50)),
  priorityLevel('workload-low', queued(100, 128, 6, 50)),
  priorityLevel('global-default', queued(20, 128, 6, 50)),
];

/** kube's SuggestedFlowSchemas. */
export const SUGGESTED_FLOW_SCHEMAS: readonly StoredObject[] = [
  flowSchema('system-nodes', 'system', 500, 'ByUser', everything([group('system:nodes')])),
  flowSchema('system-node-high', 'node-high', 400, 'ByUser', {
    subjects: [group('system:nodes')],
    resourceRules: [
      { verbs: [ALL], apiGroups: [''], resources: ['nodes', 'nodes/status'], clusterScope: true, namespaces: [ALL] },
      namespaced([ALL], ['coordination.k8s.io'], ['leases'], [ALL]),
    ],
  }),
  flowSchema('probes', 'exempt', 2, undefined, { subjects: authenticatedOrNot, nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['/healthz', '/readyz', '/livez'] }] }),
  flowSchema('system-leader-election', 'leader-election', 100, 'ByUser', {
    subjects: [user('system:kube-controller-manager'), user('system:kube-scheduler'), kubeSystemServiceAccount(ALL)],
    resourceRules: [namespaced(getCreateUpdate, [''], ['endpoints', 'configmaps'], ['kube-system']), namespaced(getCreateUpdate, ['coordination.k8s.io'], ['leases'], [ALL])],
  }),
  flowSchema('workload-leader-election', 'leader-election', 200, 'ByUser', {
    subjects: [kubeSystemServiceAccount(ALL)],
    resourceRules: [namespaced(getCreateUpdate, [''], ['endpoints', 'configmaps'], [ALL]), namespaced(getCreateUpdate, ['coordination.k8s.io'], ['leases'], [ALL])],
  }),
  flowSchema('endpoint-controller', 'workload-high', 150, 'ByUser', {
    subjects: [user('system:kube-controller-manager'), kubeSystemServiceAccount('endpoint-controller'), kubeSystemServiceAccount('endpointslicemirroring-controller')],
    resourceRules: [namespaced(getCreateUpdate, [''], ['endpoints'], [ALL])],
  }),
  flowSchema('kube-controller-manager', 'workload-high', 800, 'ByNamespace', everything([user('system:kube-controller-manager')])),
  flowSchema('kube-scheduler', 'workload-high', 800, 'ByNamespace', everything([user('system:kube-scheduler')])),
  flowSchema('kube-system-service-accounts', 'workload-high', 900, 'ByNamespace', everything([kubeSystemServiceAccount(ALL)])),
  flowSchema('service-accounts', 'workload-low', 9000, 'ByUser', everything([group('system:serviceaccounts')])),
  flowSchema('global-default', 'global-default', 9900, 'ByUser', everything(authenticatedOrNot)),
];

/** Every bootstrap priority level (mandatory first), and every bootstrap flow schema. */
export const BOOTSTRAP_PRIORITY_LEVEL_OBJECTS: readonly StoredObject[] = [...MANDATORY_PRIORITY_LEVELS, ...SUGGESTED_PRIORITY_LEVELS];
export const BOOTSTRAP_FLOW_SCHEMA_OBJECTS: readonly StoredObject[] = [...MANDATORY_FLOW_SCHEMAS, ...SUGGESTED_FLOW_SCHEMAS];

/**
 * A spec in a canonical form for comparison as kube's semantic equality does: empty lists and
 * absent fields are the same, `clusterScope: false` is the zero value.
 */
export function canonicalSpec(v: unknown): unknown {
  if (Array.isArray(v)) return v.length === 0 ? undefined : v.map(canonicalSpec);
  if (v && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) {
      const c = canonicalSpec((v as Record<string, unknown>)[k]);
      if (c !== undefined && c !== null && c !== false && c !== '' && c !== 0) out[k] = c;
    }
    return Object.keys(out).length === 0 ? undefined : out;
  }
  return v === null || v === false || v === '' || v === 0 ? undefined : v;
}
