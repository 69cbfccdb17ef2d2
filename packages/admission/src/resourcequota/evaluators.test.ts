/** kube 1.24's quota evaluators as pure functions (pkg/quota/v1/evaluator/core's unit cases). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { StoredObject } from '@plinth/api';
import { createEvaluatorRegistry, isQuotaChargedPod, mayBeUnchargedPod, objectCountName, quotaMatches } from './evaluators.js';
import { writeList } from './resources.js';

const evaluatorFor = createEvaluatorRegistry();
const pods = evaluatorFor('', 'pods');
const obj = (kind: string, rest: Record<string, unknown>, metadata: Record<string, unknown> = {}): StoredObject =>
  ({ apiVersion: 'v1', kind, metadata: { name: 'x', namespace: 'ns', ...metadata }, ...rest }) as StoredObject;
const c = (name: string, requests?: Record<string, string>, limits?: Record<string, string>) => ({ name, image: 'i', resources: { ...(requests ? { requests } : {}), ...(limits ? { limits } : {}) } });

test('pod usage: containers add up, init containers count at their largest, overhead on top', () => {
  const pod = obj('Pod', {
    spec: {
      containers: [c('a', { cpu: '100m', memory: '1Gi', 'example.com/gpu': '1', 'hugepages-2Mi': '4Mi' }, { cpu: '200m' }), c('b', { cpu: '300m' }, { cpu: '1' })],
      initContainers: [c('i', { cpu: '2' }, { memory: '3Gi' })],
      overhead: { cpu: '10m' },
    },
  });
  assert.deepEqual(writeList(pods.usage(pod)), {
    'count/pods': '1',
    cpu: '2010m',
    'hugepages-2Mi': '4Mi',
    'limits.cpu': '1210m',
    'limits.memory': '3Gi',
    memory: '1Gi',
    pods: '1',
    'requests.cpu': '2010m',
    'requests.example.com/gpu': '1',
    'requests.hugepages-2Mi': '4Mi',
    'requests.memory': '1Gi',
  });
});

test('a pod that ended, or is past its deletion grace period, charges only its object count', () => {
  const spec = { containers: [c('a', { cpu: '1' })] };
  assert.deepEqual(writeList(pods.usage(obj('Pod', { spec, status: { phase: 'Failed' } }))), { 'count/pods': '1' });
  const deleting = { deletionTimestamp: '2024-01-01T00:00:00Z', deletionGracePeriodSeconds: 30 };
  assert.deepEqual(writeList(pods.usage(obj('Pod', { spec }, deleting), Date.parse('2024-01-01T00:00:31Z'))), { 'count/pods': '1' });
  assert.equal(writeList(pods.usage(obj('Pod', { spec }, deleting), Date.parse('2024-01-01T00:00:29Z')))['requests.cpu'], '1');
});

test("the text test before decoding a pod passes every pod the quota no longer charges", () => {
  const spec = { containers: [c('a', { cpu: '1' })] };
  const deleting = { deletionTimestamp: '2024-01-01T00:00:00Z', deletionGracePeriodSeconds: 0 };
  const uncharged = [obj('Pod', { spec, status: { phase: 'Failed' } }), obj('Pod', { spec, status: { phase: 'Succeeded' } }), obj('Pod', { spec }, deleting)];
  for (const pod of uncharged) {
    assert.equal(isQuotaChargedPod(pod), false);
    assert.equal(mayBeUnchargedPod(JSON.stringify(pod)), true, JSON.stringify(pod));
  }
  const running = obj('Pod', { spec, status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] } }, { labels: { app: 'web' } });
  assert.equal(isQuotaChargedPod(running), true);
  assert.equal(mayBeUnchargedPod(JSON.stringify(running)), false, 'a running pod is not decoded');
});

test("a quota on compute resources needs every container to state them (kube's message)", () => {
  const pod = obj('Pod', { spec: { containers: [c('b', { cpu: '1' }), c('a')], initContainers: [c('i', {}, { memory: '1' })] } });
  assert.equal(
    pods.constraints(['requests.cpu', 'limits.memory', 'pods', 'requests.storage'], pod),
    'must specify limits.memory for: a,b; requests.cpu for: a,i',
  );
  assert.equal(pods.constraints(['pods', 'count/pods'], pod), undefined);
});

test('pod scopes: terminating, best effort, priority class operators, cross-namespace affinity', () => {
  const be = obj('Pod', { spec: { containers: [c('a', { cpu: '0' })], activeDeadlineSeconds: 0, priorityClassName: 'high' } });
  const burstable = obj('Pod', { spec: { containers: [c('a', { memory: '1' })] } });
  const scope = (scopeName: string, operator = 'Exists', values?: string[]) => ({ scopeName, operator, ...(values ? { values } : {}) });
  assert.equal(pods.matchesScope(scope('Terminating'), be), true);
  assert.equal(pods.matchesScope(scope('NotTerminating'), burstable), true);
  assert.equal(pods.matchesScope(scope('BestEffort'), be), true, 'a zero request is no request');
  assert.equal(pods.matchesScope(scope('NotBestEffort'), burstable), true);
  assert.equal(pods.matchesScope(scope('PriorityClass', 'In', ['high', 'low']), be), true);
  assert.equal(pods.matchesScope(scope('PriorityClass', 'NotIn', ['high']), be), false);
  assert.equal(pods.matchesScope(scope('PriorityClass', 'NotIn', ['high']), burstable), true, 'no class is not in any set');
  assert.equal(pods.matchesScope(scope('PriorityClass', 'Exists'), burstable), false);
  assert.equal(pods.matchesScope(scope('PriorityClass', 'DoesNotExist'), burstable), true);
  const affinity = obj('Pod', {
    spec: { containers: [c('a')], affinity: { podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 1, podAffinityTerm: { topologyKey: 'k', namespaceSelector: {} } }] } } },
  });
  assert.equal(pods.matchesScope(scope('CrossNamespacePodAffinity'), affinity), true);
  assert.equal(pods.matchesScope(scope('CrossNamespacePodAffinity'), burstable), false);
});

test('a quota matches by its status.hard and every scope', () => {
  const quota = (status: Record<string, unknown>, spec: Record<string, unknown> = {}) => obj('ResourceQuota', { spec, status });
  const pod = obj('Pod', { spec: { containers: [c('a')] } });
  assert.equal(quotaMatches(pods, quota({}), pod), false, 'no status.hard yet: not enforced');
  assert.equal(quotaMatches(pods, quota({ hard: { pods: '1' } }), pod), true);
  assert.equal(quotaMatches(pods, quota({ hard: { services: '1' } }), pod), false);
  assert.equal(quotaMatches(pods, quota({ hard: { pods: '1' } }, { scopes: ['NotBestEffort'] }), pod), false);
});

test('services: node ports per port, load balancers, node ports only where allocated when allocation is off', () => {
  const services = evaluatorFor('', 'services');
  const svc = (spec: Record<string, unknown>) => obj('Service', { spec });
  const ports = [{ port: 80, nodePort: 30080 }, { port: 81 }];
  assert.deepEqual(writeList(services.usage(svc({ type: 'NodePort', ports }))), { 'count/services': '1', services: '1', 'services.loadbalancers': '0', 'services.nodeports': '2' });
  assert.deepEqual(writeList(services.usage(svc({ type: 'LoadBalancer', ports, allocateLoadBalancerNodePorts: false }))), {
    'count/services': '1',
    services: '1',
    'services.loadbalancers': '1',
    'services.nodeports': '1',
  });
  assert.equal(services.handles('UPDATE'), true);
});

test('claims: the beta class annotation wins over storageClassName; storage rounded up to whole bytes', () => {
  const claims = evaluatorFor('', 'persistentvolumeclaims');
  const pvc = obj('PersistentVolumeClaim', { spec: { storageClassName: 'b', resources: { requests: { storage: '1500m' } } } }, { annotations: { 'volume.beta.kubernetes.io/storage-class': 'a' } });
  assert.deepEqual(writeList(claims.usage(pvc)), {
    'a.storageclass.storage.k8s.io/persistentvolumeclaims': '1',
    'a.storageclass.storage.k8s.io/requests.storage': '2',
    'count/persistentvolumeclaims': '1',
    persistentvolumeclaims: '1',
    'requests.storage': '2',
  });
  assert.deepEqual(claims.matchingResources(['x.storageclass.storage.k8s.io/requests.storage', 'requests.cpu', 'persistentvolumeclaims']), [
    'x.storageclass.storage.k8s.io/requests.storage',
    'persistentvolumeclaims',
  ]);
});

test('object counts: count/<resource>.<group>, count/<resource> for core, legacy aliases; created objects only', () => {
  assert.equal(objectCountName('apps', 'deployments'), 'count/deployments.apps');
  assert.equal(objectCountName('', 'secrets'), 'count/secrets');
  assert.deepEqual(writeList(evaluatorFor('', 'configmaps').usage(obj('ConfigMap', {}))), { configmaps: '1', 'count/configmaps': '1' });
  const deployments = evaluatorFor('apps', 'deployments');
  assert.deepEqual(deployments.matchingResources(['count/deployments.apps', 'deployments']), ['count/deployments.apps']);
  assert.equal(deployments.handles('UPDATE'), false);
});
