/**
 * autoscaling HorizontalPodAutoscalers on a real server: v2 (storage), v1, v2beta1 and v2beta2
 * over one storage version with kube's round-trip annotations, each version's defaults, kube's
 * validation causes (v2 field paths whatever the version), status isolation, the printer's
 * columns, Protobuf, the betas' deprecation Warnings, and kubectl autoscale / get hpa.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { decodeProtobuf } from '@plinth/apiserver';
import { execFile } from 'node:child_process';
import { kubectlPath, usePlinth } from './harness.js';
import { causeFields, expectCode, expectStatus } from './assertions.js';

const env = usePlinth();
function kubectl(...args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(kubectlPath(), ['--kubeconfig', env.plinth.server.kubeconfigPath, ...args], { encoding: 'utf8', timeout: 60_000 }, (err, stdout, stderr) =>
      err ? reject(new Error(`kubectl ${args.join(' ')}: ${stderr}`)) : resolve(stdout),
    );
  });
}
const path = (v: string, name = ''): string => `/apis/autoscaling/${v}/namespaces/default/horizontalpodautoscalers${name ? `/${name}` : ''}`;
type Obj = Record<string, any>;

const v2hpa = (name: string, spec: Obj = {}): Obj => ({
  apiVersion: 'autoscaling/v2',
  kind: 'HorizontalPodAutoscaler',
  metadata: { name },
  spec: { scaleTargetRef: { apiVersion: 'v1', kind: 'ReplicationController', name: 'web' }, maxReplicas: 5, ...spec },
});

const memory = { type: 'Resource', resource: { name: 'memory', target: { type: 'AverageValue', averageValue: '100Mi' } } };
const pods = { type: 'Pods', pods: { metric: { name: 'qps' }, target: { type: 'AverageValue', averageValue: '10' } } };
const cpu = { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 60 } } };

describe('horizontalpodautoscalers', () => {
  it('are served in four versions, v2 preferred, with kube discovery facts', async () => {
    const group = await env.plinth.client.get('/apis/autoscaling');
    expectCode(group, 200);
    assert.deepEqual(group.body.versions.map((v: Obj) => v.version), ['v2', 'v1', 'v2beta1', 'v2beta2']);
    assert.equal(group.body.preferredVersion.version, 'v2');
    for (const v of ['v1', 'v2', 'v2beta1', 'v2beta2']) {
      const res = await env.plinth.client.get(`/apis/autoscaling/${v}`);
      const names = res.body.resources.map((r: Obj) => r.name);
      assert.deepEqual(names, ['horizontalpodautoscalers', 'horizontalpodautoscalers/status']);
      const r = res.body.resources[0];
      assert.deepEqual(r.shortNames, ['hpa']);
      assert.deepEqual(r.categories, ['all']);
    }
  });

  it('default per version: v2 CPU 80% and behavior rules, v1 minReplicas', async () => {
    const created = await env.plinth.client.post(path('v2'), v2hpa('defaults', { behavior: { scaleDown: { stabilizationWindowSeconds: 60 } } }));
    expectCode(created, 201);
    assert.equal(created.body.spec.minReplicas, 1);
    assert.deepEqual(created.body.spec.metrics, [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } }]);
    assert.deepEqual(created.body.spec.behavior, {
      scaleUp: { stabilizationWindowSeconds: 0, selectPolicy: 'Max', policies: [{ type: 'Pods', value: 4, periodSeconds: 15 }, { type: 'Percent', value: 100, periodSeconds: 15 }] },
      scaleDown: { stabilizationWindowSeconds: 60, selectPolicy: 'Max', policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }] },
    });
    const v1 = await env.plinth.client.post(path('v1'), { apiVersion: 'autoscaling/v1', kind: 'HorizontalPodAutoscaler', metadata: { name: 'v1-defaults' }, spec: { scaleTargetRef: { kind: 'ReplicationController', name: 'web' }, maxReplicas: 3 } });
    expectCode(v1, 201);
    assert.equal(v1.body.spec.minReplicas, 1);
    assert.equal(v1.body.spec.targetCPUUtilizationPercentage, 80, 'v1 with no target reads back kube\'s explicit 80% CPU');
    const asV2 = await env.plinth.client.get(path('v2', 'v1-defaults'));
    assert.deepEqual(asV2.body.spec.metrics, [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } }]);
  });

  it('round-trip v2 → v1 → v2 losslessly, v1 carrying what it cannot express in annotations', async () => {
    const spec = { minReplicas: 2, metrics: [memory, cpu, pods], behavior: { scaleUp: { selectPolicy: 'Min', policies: [{ type: 'Pods', value: 2, periodSeconds: 30 }] } } };
    const created = await env.plinth.client.post(path('v2'), v2hpa('trip', spec));
    expectCode(created, 201);
    const status = { currentReplicas: 2, desiredReplicas: 3, currentMetrics: [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: 42, averageValue: '120m' } } }], conditions: [{ type: 'AbleToScale', status: 'True', reason: 'ReadyForNewScale', lastTransitionTime: '2024-01-01T00:00:00Z' }] };
    const st = await env.plinth.client.put(path('v2', 'trip') + '/status', { ...created.body, status });
    expectCode(st, 200);

    const v1 = await env.plinth.client.get(path('v1', 'trip'));
    expectCode(v1, 200);
    assert.equal(v1.body.apiVersion, 'autoscaling/v1');
    assert.equal(v1.body.spec.targetCPUUtilizationPercentage, 60);
    assert.equal(v1.body.status.currentCPUUtilizationPercentage, 42);
    const ann = v1.body.metadata.annotations;
    assert.deepEqual(JSON.parse(ann['autoscaling.alpha.kubernetes.io/metrics']), [
      { type: 'Resource', resource: { name: 'memory', targetAverageValue: '100Mi' } },
      { type: 'Pods', pods: { metricName: 'qps', targetAverageValue: '10' } },
    ]);
    assert.deepEqual(JSON.parse(ann['autoscaling.alpha.kubernetes.io/current-metrics']), [{ type: 'Resource', resource: { name: 'cpu', currentAverageUtilization: 42, currentAverageValue: '120m' } }]);
    assert.equal(JSON.parse(ann['autoscaling.alpha.kubernetes.io/conditions'])[0].reason, 'ReadyForNewScale');
    // kube marshals its internal Go type: Go field names.
    assert.equal(JSON.parse(ann['autoscaling.alpha.kubernetes.io/behavior']).ScaleUp.SelectPolicy, 'Min');

    // A v1 client writes the object back unchanged (but for maxReplicas): nothing is lost.
    const put = await env.plinth.client.put(path('v1', 'trip'), { ...v1.body, spec: { ...v1.body.spec, maxReplicas: 7 } });
    expectCode(put, 200);
    const back = await env.plinth.client.get(path('v2', 'trip'));
    assert.equal(back.body.spec.maxReplicas, 7);
    assert.deepEqual(back.body.spec.metrics, [memory, pods, cpu].map((m) => back.body.spec.metrics.find((x: Obj) => JSON.stringify(x) === JSON.stringify(m)) ?? m));
    assert.equal(back.body.spec.metrics.length, 3);
    assert.equal(back.body.spec.behavior.scaleUp.selectPolicy, 'Min');
    assert.deepEqual(back.body.status.conditions, status.conditions);
    assert.deepEqual(back.body.status.currentMetrics, status.currentMetrics);
    assert.equal(back.body.metadata.annotations, undefined, 'no round-trip annotation is stored');
  });

  it('round-trip v2beta1 → v2 → v2beta1 and v2beta2', async () => {
    const beta1 = {
      apiVersion: 'autoscaling/v2beta1',
      kind: 'HorizontalPodAutoscaler',
      metadata: { name: 'beta1' },
      spec: { scaleTargetRef: { kind: 'ReplicationController', name: 'web' }, maxReplicas: 4, metrics: [{ type: 'Resource', resource: { name: 'cpu', targetAverageUtilization: 70 } }, { type: 'External', external: { metricName: 'queue', targetValue: '30' } }] },
    };
    const created = await env.plinth.client.post(path('v2beta1'), beta1);
    expectCode(created, 201);
    assert.deepEqual(created.body.spec.metrics, beta1.spec.metrics);
    const v2 = await env.plinth.client.get(path('v2', 'beta1'));
    assert.deepEqual(v2.body.spec.metrics, [
      { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 70 } } },
      { type: 'External', external: { metric: { name: 'queue' }, target: { type: 'Value', value: '30' } } },
    ]);
    const withBehavior = await env.plinth.client.request('PATCH', path('v2', 'beta1'), { body: { spec: { behavior: { scaleDown: { policies: [{ type: 'Pods', value: 1, periodSeconds: 60 }] } } } }, headers: { 'content-type': 'application/merge-patch+json' } });
    expectCode(withBehavior, 200);
    const b1 = await env.plinth.client.get(path('v2beta1', 'beta1'));
    assert.deepEqual(b1.body.spec.metrics, beta1.spec.metrics);
    assert.equal(JSON.parse(b1.body.metadata.annotations['autoscaling.alpha.kubernetes.io/behavior']).ScaleDown.Policies[0].Value, 1);
    const b2 = await env.plinth.client.get(path('v2beta2', 'beta1'));
    assert.equal(b2.body.apiVersion, 'autoscaling/v2beta2');
    assert.deepEqual(b2.body.spec, v2.body.spec.behavior ? v2.body.spec : { ...v2.body.spec, behavior: withBehavior.body.spec.behavior });
  });

  it('refuse invalid objects with kube\'s causes, in v2 paths from every version', async () => {
    const bad = await env.plinth.client.post(path('v2'), v2hpa('bad', { minReplicas: 0, maxReplicas: 0, scaleTargetRef: { kind: '', name: 'a/b' }, metrics: [{ type: 'Pods', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } } }] }));
    expectStatus(bad, 422, 'Invalid');
    assert.deepEqual(causeFields(bad), ['spec.minReplicas', 'spec.maxReplicas', 'spec.scaleTargetRef.kind', 'spec.scaleTargetRef.name', 'spec.metrics[0].pods', 'spec.metrics']);
    assert.match(bad.body.message, /spec\.minReplicas: Invalid value: 0: must be greater than or equal to 1/);
    const v1 = await env.plinth.client.post(path('v1'), { apiVersion: 'autoscaling/v1', kind: 'HorizontalPodAutoscaler', metadata: { name: 'bad1' }, spec: { scaleTargetRef: { kind: 'ReplicationController', name: 'web' }, maxReplicas: 3, targetCPUUtilizationPercentage: 0 } });
    expectStatus(v1, 422, 'Invalid', /spec\.metrics\[0\]\.resource\.target\.averageUtilization: Invalid value: 0: must be greater than 0/);
  });

  it('keep status out of spec writes and spec out of status writes', async () => {
    const created = await env.plinth.client.post(path('v2'), { ...v2hpa('iso'), status: { currentReplicas: 9, desiredReplicas: 9 } });
    expectCode(created, 201);
    assert.equal(created.body.status.currentReplicas, undefined);
    const st = await env.plinth.client.put(path('v2', 'iso') + '/status', { ...created.body, spec: { ...created.body.spec, maxReplicas: 9 }, status: { currentReplicas: 2, desiredReplicas: 2 } });
    expectCode(st, 200);
    assert.equal(st.body.spec.maxReplicas, 5);
    assert.equal(st.body.status.currentReplicas, 2);
    const neg = await env.plinth.client.put(path('v2', 'iso') + '/status', { ...st.body, status: { currentReplicas: -1, desiredReplicas: 2 } });
    expectStatus(neg, 422, 'Invalid', /status\.currentReplicas: Invalid value: -1: must be greater than or equal to 0/);
  });

  it('print kube\'s columns, answer Protobuf, and warn on the betas', async () => {
    const table = await env.plinth.client.get(path('v1', 'trip'), { headers: { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' } });
    expectCode(table, 200);
    assert.deepEqual(table.body.columnDefinitions.map((c: Obj) => c.name), ['Name', 'Reference', 'Targets', 'MinPods', 'MaxPods', 'Replicas', 'Age']);
    assert.deepEqual(table.body.rows[0].cells.slice(0, 6), ['trip', 'ReplicationController/web', // kube pairs statuses with specs by position: the CPU status shows under the memory target.
      '120m/100Mi, <unknown>/10 + 1 more...', '2', 7, 2]);
    const pb = await env.plinth.client.get(path('v2', 'trip'), { headers: { accept: 'application/vnd.kubernetes.protobuf' } });
    expectCode(pb, 200);
    const decoded = decodeProtobuf(pb.raw) as Obj;
    assert.equal(decoded.kind, 'HorizontalPodAutoscaler');
    assert.equal(decoded.spec.maxReplicas, 7);
    const beta1 = await env.plinth.client.get(path('v2beta1'));
    assert.equal(beta1.headers['warning'], '299 - "autoscaling/v2beta1 HorizontalPodAutoscaler is deprecated in v1.22+, unavailable in v1.25+; use autoscaling/v2 HorizontalPodAutoscaler"');
    const beta2 = await env.plinth.client.get(path('v2beta2'));
    assert.equal(beta2.headers['warning'], '299 - "autoscaling/v2beta2 HorizontalPodAutoscaler is deprecated in v1.23+, unavailable in v1.26+; use autoscaling/v2 HorizontalPodAutoscaler"');
    assert.equal((await env.plinth.client.get(path('v1'))).headers['warning'], undefined);
  });

  it('kubectl autoscale rc and get hpa', async () => {
    const rc = await env.plinth.client.post('/api/v1/namespaces/default/replicationcontrollers', {
      apiVersion: 'v1', kind: 'ReplicationController', metadata: { name: 'web' },
      spec: { replicas: 1, selector: { app: 'web' }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } },
    });
    expectCode(rc, 201);
    const out = await kubectl('autoscale', 'rc', 'web', '--max=5', '--cpu-percent=60');
    assert.match(out, /horizontalpodautoscaler.autoscaling\/web autoscaled/);
    const hpa = await env.plinth.client.get(path('v1', 'web'));
    assert.equal(hpa.body.spec.targetCPUUtilizationPercentage, 60);
    const got = await kubectl('get', 'hpa', 'web');
    assert.match(got, /^NAME\s+REFERENCE\s+TARGETS\s+MINPODS\s+MAXPODS\s+REPLICAS\s+AGE\n/);
    assert.match(got, /\nweb\s+ReplicationController\/web\s+<unknown>\/60%\s+1\s+5\s+0\s+/);
  });
});
