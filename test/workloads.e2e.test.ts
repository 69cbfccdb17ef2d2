/**
 * The workload groups (apps, batch, autoscaling, policy, networking.k8s.io, scheduling.k8s.io) as
 * their users meet them: kubectl's create/scale/set image/rollout/autoscale commands and table
 * columns, then the same objects through @kubernetes/client-node and the official Python client.
 * One shared in-process server; kubectl and python run through execFile (spawnSync would block the
 * event loop that serves them).
 */
import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { KubeConfig, AppsV1Api, BatchV1Api, AutoscalingV1Api, AutoscalingV2Api, PolicyV1Api, NetworkingV1Api, ApiException, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { REPO_ROOT, kubectlPath, usePlinth } from './harness.js';
import { expectCode } from './assertions.js';

const env = usePlinth();
const NS = 'wl';

function run(file: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(file, args, { encoding: 'utf8', timeout: 60_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}
const kubectl = (...args: string[]) => run(kubectlPath(), ['--kubeconfig', env.plinth.server.kubeconfigPath, '-n', NS, ...args]);
async function ok(...args: string[]): Promise<string> {
  const r = await kubectl(...args);
  assert.equal(r.code, 0, `kubectl ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}
/** A table's cells, cut at the header's column offsets (kubectl's tabwriter aligns every cell on them). */
function rows(out: string): string[][] {
  const [header, ...body] = out.replace(/\n+$/, '').split('\n');
  const starts = [...header!.matchAll(/\S+(?: \S+)*/g)].map((m) => m.index!);
  const cut = (l: string) => starts.map((s, i) => l.slice(s, starts[i + 1]).trim());
  return [cut(header!), ...body.map(cut)];
}
/** A table without its AGE cells (they change by the second). */
function withoutAge(out: string): string[][] {
  const table = rows(out);
  const at = table[0]!.indexOf('AGE');
  return table.map((r) => r.filter((_, i) => i !== at));
}

describe('kubectl', () => {
  before(async () => {
    expectCode(await env.plinth.client.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } }), 201);
  });

  it('create deployment, get deploy (kube 1.24 columns), scale, set image (generation bumps)', async () => {
    assert.match(await ok('create', 'deployment', 'web', '--image=nginx:1.23', '--replicas=2'), /^deployment.apps\/web created$/m);
    assert.deepEqual(withoutAge(await ok('get', 'deploy')), [
      ['NAME', 'READY', 'UP-TO-DATE', 'AVAILABLE'],
      ['web', '0/2', '0', '0'],
    ]);
    assert.match(await ok('scale', 'deployment', 'web', '--replicas=4'), /^deployment.apps\/web scaled$/m);
    let dep = JSON.parse(await ok('get', 'deploy', 'web', '-o', 'json'));
    assert.equal(dep.spec.replicas, 4);
    assert.equal(dep.metadata.generation, 2);
    assert.match(await ok('set', 'image', 'deployment/web', 'nginx=nginx:2'), /^deployment.apps\/web image updated$/m);
    dep = JSON.parse(await ok('get', 'deploy', 'web', '-o', 'json'));
    assert.equal(dep.spec.template.spec.containers[0].image, 'nginx:2');
    assert.equal(dep.metadata.generation, 3);
    // The same image again is no spec change: no new generation.
    await ok('set', 'image', 'deployment/web', 'nginx=nginx:2');
    assert.equal(JSON.parse(await ok('get', 'deploy', 'web', '-o', 'json')).metadata.generation, 3);
    assert.deepEqual(withoutAge(await ok('get', 'deploy', '-o', 'wide')), [
      ['NAME', 'READY', 'UP-TO-DATE', 'AVAILABLE', 'CONTAINERS', 'IMAGES', 'SELECTOR'],
      ['web', '0/4', '0', '0', 'nginx', 'nginx:2', 'app=web'],
    ]);
    // --subresource: kube 1.24 answers a status GET with the resource's columns and a scale GET
    // with its Scale columns.
    assert.deepEqual(withoutAge(await ok('get', 'deploy', 'web', '--subresource=status')), [
      ['NAME', 'READY', 'UP-TO-DATE', 'AVAILABLE'],
      ['web', '0/4', '0', '0'],
    ]);
    assert.deepEqual(withoutAge(await ok('get', 'deploy', 'web', '--subresource=scale')), [
      ['NAME', 'DESIRED', 'AVAILABLE'],
      ['web', '4', '0'],
    ]);
  });

  it('rollout history: without a controller-manager there are no ReplicaSets, as on a bare kube-apiserver', async () => {
    // kubectl lists the ReplicaSets the Deployment controls and reads their revision annotation;
    // kube-apiserver alone creates none, and kubectl says so (exit 0).
    const out = await ok('rollout', 'history', 'deployment/web');
    assert.match(out, /^deployment.apps\/web \nNo rollout history found.\n$/);
    // A ReplicaSet a controller would write, owned by the Deployment with a revision, is a revision.
    const dep = JSON.parse(await ok('get', 'deploy', 'web', '-o', 'json'));
    const rs = await env.plinth.client.post(`/apis/apps/v1/namespaces/${NS}/replicasets`, {
      apiVersion: 'apps/v1', kind: 'ReplicaSet',
      metadata: {
        name: 'web-1', labels: { app: 'web' },
        annotations: { 'deployment.kubernetes.io/revision': '1' },
        ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: dep.metadata.uid, controller: true, blockOwnerDeletion: true }],
      },
      spec: { replicas: 0, selector: { matchLabels: { app: 'web' } }, template: dep.spec.template },
    });
    expectCode(rs, 201);
    assert.match(await ok('rollout', 'history', 'deployment/web'), /^deployment.apps\/web \nREVISION\s+CHANGE-CAUSE\n1\s+<none>\n/);
    assert.deepEqual(withoutAge(await ok('get', 'rs', '-o', 'wide')), [
      ['NAME', 'DESIRED', 'CURRENT', 'READY', 'CONTAINERS', 'IMAGES', 'SELECTOR'],
      ['web-1', '0', '0', '0', 'nginx', 'nginx:2', 'app=web'],
    ]);
  });

  it('create job, create cronjob, create job --from=cronjob', async () => {
    await ok('create', 'job', 'once', '--image=busybox', '--', 'echo', 'hi');
    const job = JSON.parse(await ok('get', 'job', 'once', '-o', 'json'));
    // kube's Job strategy generates the selector and labels (no manualSelector).
    assert.deepEqual(job.spec.selector, { matchLabels: { 'controller-uid': job.metadata.uid } });
    assert.equal(job.spec.template.metadata.labels['job-name'], 'once');
    assert.equal(job.spec.backoffLimit, 6);
    assert.deepEqual(job.spec.template.spec.containers[0].command, ['echo', 'hi']);
    assert.deepEqual(withoutAge(await ok('get', 'jobs', 'once', '-o', 'wide')), [
      ['NAME', 'COMPLETIONS', 'DURATION', 'CONTAINERS', 'IMAGES', 'SELECTOR'],
      ['once', '0/1', '', 'once', 'busybox', `controller-uid=${job.metadata.uid}`],
    ]);

    await ok('create', 'cronjob', 'tick', '--image=busybox', '--schedule=*/5 * * * *', '--', 'date');
    assert.deepEqual(withoutAge(await ok('get', 'cronjobs', '-o', 'wide')), [
      ['NAME', 'SCHEDULE', 'SUSPEND', 'ACTIVE', 'LAST SCHEDULE', 'CONTAINERS', 'IMAGES', 'SELECTOR'],
      ['tick', '*/5 * * * *', 'False', '0', '<none>', 'tick', 'busybox', '<none>'],
    ]);
    const bad = await kubectl('create', 'cronjob', 'never', '--image=busybox', '--schedule=not a schedule');
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /spec.schedule: Invalid value: "not a schedule"/);

    await ok('create', 'job', 'manual', '--from=cronjob/tick');
    const cj = JSON.parse(await ok('get', 'cronjob', 'tick', '-o', 'json'));
    const fromCron = JSON.parse(await ok('get', 'job', 'manual', '-o', 'json'));
    assert.equal(fromCron.metadata.annotations['cronjob.kubernetes.io/instantiate'], 'manual');
    assert.deepEqual(fromCron.metadata.ownerReferences, [{ apiVersion: 'batch/v1', kind: 'CronJob', name: 'tick', uid: cj.metadata.uid, controller: true }]);
    assert.deepEqual(fromCron.spec.template.spec.containers[0].command, ['date']);
    assert.equal(fromCron.spec.selector.matchLabels['controller-uid'], fromCron.metadata.uid);
  });

  it('create ingress, create pdb, create priorityclass', async () => {
    await ok('create', 'ingress', 'site', '--rule=foo.com/bar=svc1:8080,tls=my-cert', '--rule=foo.com/static*=static:http');
    const ing = JSON.parse(await ok('get', 'ingress', 'site', '-o', 'json'));
    assert.deepEqual(ing.spec.rules, [{
      host: 'foo.com',
      http: {
        paths: [
          { path: '/bar', pathType: 'Exact', backend: { service: { name: 'svc1', port: { number: 8080 } } } },
          { path: '/static', pathType: 'Prefix', backend: { service: { name: 'static', port: { name: 'http' } } } },
        ],
      },
    }]);
    assert.deepEqual(ing.spec.tls, [{ hosts: ['foo.com'], secretName: 'my-cert' }]);
    assert.deepEqual(withoutAge(await ok('get', 'ing')), [
      ['NAME', 'CLASS', 'HOSTS', 'ADDRESS', 'PORTS'],
      ['site', '<none>', 'foo.com', '', '80, 443'],
    ]);

    await ok('create', 'pdb', 'guard', '--selector=app=web', '--min-available=1');
    const pdb = JSON.parse(await ok('get', 'pdb', 'guard', '-o', 'json'));
    assert.equal(pdb.spec.minAvailable, 1);
    assert.deepEqual(pdb.status, { disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0 });
    await ok('create', 'pdb', 'cap', '--selector=app=web', '--max-unavailable=25%');
    assert.deepEqual(withoutAge(await ok('get', 'pdb')), [
      ['NAME', 'MIN AVAILABLE', 'MAX UNAVAILABLE', 'ALLOWED DISRUPTIONS'],
      ['cap', 'N/A', '25%', '0'],
      ['guard', '1', 'N/A', '0'],
    ]);

    await ok('create', 'priorityclass', 'high', '--value=1000', '--description=high priority');
    assert.deepEqual(withoutAge(await ok('get', 'pc')), [
      ['NAME', 'VALUE', 'GLOBAL-DEFAULT'],
      ['high', '1000', 'false'],
      ['system-cluster-critical', '2000000000', 'false'],
      ['system-node-critical', '2000001000', 'false'],
    ]);
    const pc = JSON.parse(await ok('get', 'pc', 'high', '-o', 'json'));
    assert.equal(pc.preemptionPolicy, 'PreemptLowerPriority');
    const reserved = await kubectl('create', 'priorityclass', 'system-mine', '--value=2000000001');
    assert.notEqual(reserved.code, 0);
    assert.match(reserved.stderr, /metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: system-mine is not a known system priority class/);
  });

  it('autoscale deployment, then get all', async () => {
    await ok('autoscale', 'deployment', 'web', '--min=2', '--max=10', '--cpu-percent=80');
    const hpa = JSON.parse(await ok('get', 'horizontalpodautoscalers.v2.autoscaling', 'web', '-o', 'json'));
    assert.deepEqual(hpa.spec, {
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
      minReplicas: 2,
      maxReplicas: 10,
      metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } }],
    });
    const v1 = JSON.parse(await ok('get', 'horizontalpodautoscalers.v1.autoscaling', 'web', '-o', 'json'));
    assert.equal(v1.spec.targetCPUUtilizationPercentage, 80);
    assert.deepEqual(withoutAge(await ok('get', 'hpa')), [
      ['NAME', 'REFERENCE', 'TARGETS', 'MINPODS', 'MAXPODS', 'REPLICAS'],
      ['web', 'Deployment/web', '<unknown>/80%', '2', '10', '0'],
    ]);
    // kube 1.24's `all` category, in discovery order: core, apps, autoscaling, batch.
    const all = await ok('get', 'all', '-o', 'name');
    assert.deepEqual(all.trim().split('\n'), [
      'deployment.apps/web',
      'replicaset.apps/web-1',
      'horizontalpodautoscaler.autoscaling/web',
      'cronjob.batch/tick',
      'job.batch/manual',
      'job.batch/once',
    ]);
    const table = await ok('get', 'all');
    assert.match(table, /^NAME\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+AGE\ndeployment.apps\/web\s+0\/4\s+0\s+0\s+/m);
    assert.match(table, /^NAME\s+COMPLETIONS\s+DURATION\s+AGE\njob.batch\/manual\s+0\/1\s+\S+\njob.batch\/once\s+0\/1\s+\S+\n/m);
  });
});

describe('@kubernetes/client-node', () => {
  const CN = 'default';
  let kc: KubeConfig;
  before(() => {
    kc = new KubeConfig();
    kc.loadFromFile(env.plinth.server.kubeconfigPath);
  });
  const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
  const notFound = (e: unknown) => e instanceof ApiException && e.code === 404;

  it('AppsV1Api: create, read, patch, replace, scale and delete a Deployment', async () => {
    const apps = kc.makeApiClient(AppsV1Api);
    const created = await apps.createNamespacedDeployment({
      namespace: CN,
      body: { metadata: { name: 'cn-web' }, spec: { selector: { matchLabels: { app: 'cn-web' } }, template: { metadata: { labels: { app: 'cn-web' } }, spec: { containers: [{ name: 'web', image: 'nginx:1.25' }] } } } },
    });
    assert.equal(created.spec?.replicas, 1);
    assert.equal(created.spec?.strategy?.rollingUpdate?.maxSurge, '25%');
    assert.equal(created.metadata?.generation, 1);
    const read = await apps.readNamespacedDeployment({ name: 'cn-web', namespace: CN });
    assert.equal(read.metadata?.uid, created.metadata?.uid);
    const patched = await apps.patchNamespacedDeployment({ name: 'cn-web', namespace: CN, body: { spec: { replicas: 2 } } }, merge);
    assert.equal(patched.spec?.replicas, 2);
    assert.equal(patched.metadata?.generation, 2);
    patched.spec!.template.spec!.containers[0]!.image = 'nginx:1.26';
    const replaced = await apps.replaceNamespacedDeployment({ name: 'cn-web', namespace: CN, body: patched });
    assert.equal(replaced.spec?.template.spec?.containers[0]?.image, 'nginx:1.26');
    assert.equal(replaced.metadata?.generation, 3);
    await assert.rejects(apps.replaceNamespacedDeployment({ name: 'cn-web', namespace: CN, body: patched }), (e: unknown) => e instanceof ApiException && e.code === 409);

    const scale = await apps.readNamespacedDeploymentScale({ name: 'cn-web', namespace: CN });
    assert.equal(scale.spec?.replicas, 2);
    assert.equal(scale.status?.selector, 'app=cn-web');
    const scaled = await apps.patchNamespacedDeploymentScale({ name: 'cn-web', namespace: CN, body: { spec: { replicas: 5 } } }, merge);
    assert.equal(scaled.spec?.replicas, 5);
    scaled.spec!.replicas = 6;
    assert.equal((await apps.replaceNamespacedDeploymentScale({ name: 'cn-web', namespace: CN, body: scaled })).spec?.replicas, 6);
    assert.equal((await apps.readNamespacedDeployment({ name: 'cn-web', namespace: CN })).spec?.replicas, 6);

    await apps.deleteNamespacedDeployment({ name: 'cn-web', namespace: CN });
    await assert.rejects(apps.readNamespacedDeployment({ name: 'cn-web', namespace: CN }), notFound);
  });

  it('BatchV1Api: a Job (generated selector) and a CronJob', async () => {
    const batch = kc.makeApiClient(BatchV1Api);
    const job = await batch.createNamespacedJob({
      namespace: CN,
      body: { metadata: { name: 'cn-job' }, spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } } } },
    });
    assert.equal(job.spec?.selector?.matchLabels?.['controller-uid'], job.metadata?.uid);
    assert.equal(job.spec?.completions, 1);
    assert.equal(job.spec?.completionMode, 'NonIndexed');
    const suspended = await batch.patchNamespacedJob({ name: 'cn-job', namespace: CN, body: { spec: { suspend: true } } }, merge);
    assert.equal(suspended.spec?.suspend, true);
    const cj = await batch.createNamespacedCronJob({
      namespace: CN,
      body: { metadata: { name: 'cn-cron' }, spec: { schedule: '@hourly', jobTemplate: { spec: { template: { spec: { restartPolicy: 'OnFailure', containers: [{ name: 'c', image: 'busybox' }] } } } } } },
    });
    assert.equal(cj.spec?.concurrencyPolicy, 'Allow');
    assert.equal(cj.spec?.successfulJobsHistoryLimit, 3);
    assert.equal(cj.spec?.failedJobsHistoryLimit, 1);
    const list = await batch.listNamespacedCronJob({ namespace: CN });
    assert.deepEqual(list.items.map((c) => c.metadata?.name), ['cn-cron']);
    await batch.deleteNamespacedCronJob({ name: 'cn-cron', namespace: CN });
    await batch.deleteNamespacedJob({ name: 'cn-job', namespace: CN, propagationPolicy: 'Background' });
    await assert.rejects(batch.readNamespacedJob({ name: 'cn-job', namespace: CN }), notFound);
  });

  it('AutoscalingV1Api and V2Api: one HPA read and written through both versions', async () => {
    const v2 = kc.makeApiClient(AutoscalingV2Api);
    const v1 = kc.makeApiClient(AutoscalingV1Api);
    await v2.createNamespacedHorizontalPodAutoscaler({
      namespace: CN,
      body: {
        metadata: { name: 'cn-hpa' },
        spec: {
          scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, minReplicas: 1, maxReplicas: 4,
          metrics: [
            { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 60 } } },
            { type: 'Resource', resource: { name: 'memory', target: { type: 'AverageValue', averageValue: '100Mi' } } },
          ],
        },
      },
    });
    const asV1 = await v1.readNamespacedHorizontalPodAutoscaler({ name: 'cn-hpa', namespace: CN });
    assert.equal(asV1.spec?.targetCPUUtilizationPercentage, 60);
    assert.equal(asV1.spec?.maxReplicas, 4);
    // Patched through v1, the memory metric v1 cannot express survives (kept in an annotation); as
    // kube's v1 conversion, the annotation's metrics come back first and the CPU target last.
    await v1.patchNamespacedHorizontalPodAutoscaler({ name: 'cn-hpa', namespace: CN, body: { spec: { maxReplicas: 8 } } }, merge);
    const asV2 = await v2.readNamespacedHorizontalPodAutoscaler({ name: 'cn-hpa', namespace: CN });
    assert.equal(asV2.spec?.maxReplicas, 8);
    assert.deepEqual(asV2.spec?.metrics?.map((m) => m.resource?.name), ['memory', 'cpu']);
    assert.equal(asV2.spec?.metrics?.[0]?.resource?.target.averageValue, '100Mi');
    assert.equal(asV2.metadata?.annotations, undefined, 'the round-trip annotation is not shown through v2');
    await v1.deleteNamespacedHorizontalPodAutoscaler({ name: 'cn-hpa', namespace: CN });
    await assert.rejects(v2.readNamespacedHorizontalPodAutoscaler({ name: 'cn-hpa', namespace: CN }), notFound);
  });

  it('PolicyV1Api: a PodDisruptionBudget', async () => {
    const policy = kc.makeApiClient(PolicyV1Api);
    const pdb = await policy.createNamespacedPodDisruptionBudget({ namespace: CN, body: { metadata: { name: 'cn-pdb' }, spec: { maxUnavailable: 1, selector: { matchLabels: { app: 'cn' } } } } });
    assert.equal(pdb.spec?.maxUnavailable, 1);
    assert.equal(pdb.status?.disruptionsAllowed, 0);
    const patched = await policy.patchNamespacedPodDisruptionBudget({ name: 'cn-pdb', namespace: CN, body: { spec: { maxUnavailable: '50%' } } }, merge);
    assert.equal(patched.spec?.maxUnavailable, '50%');
    await policy.deleteNamespacedPodDisruptionBudget({ name: 'cn-pdb', namespace: CN });
  });

  it('NetworkingV1Api: an Ingress and its status', async () => {
    const net = kc.makeApiClient(NetworkingV1Api);
    const ing = await net.createNamespacedIngress({
      namespace: CN,
      body: { metadata: { name: 'cn-ing' }, spec: { rules: [{ host: 'cn.example.com', http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } }] } }] } },
    });
    assert.equal(ing.spec?.rules?.[0]?.http?.paths[0]?.backend.service?.port?.number, 80);
    const status = await net.patchNamespacedIngressStatus({ name: 'cn-ing', namespace: CN, body: { status: { loadBalancer: { ingress: [{ ip: '10.1.2.3' }] } } } }, merge);
    assert.equal(status.status?.loadBalancer?.ingress?.[0]?.ip, '10.1.2.3');
    const list = await net.listNamespacedIngress({ namespace: CN });
    assert.deepEqual(list.items.map((i) => i.metadata?.name), ['cn-ing']);
    await net.deleteNamespacedIngress({ name: 'cn-ing', namespace: CN });
  });
});

describe('the Python client', () => {
  it('apps, batch, autoscaling, policy and networking flows', async () => {
    // Debian's package is importable only from the system python.
    const r = await run('/usr/bin/python3', [join(REPO_ROOT, 'test/python/workload_flows.py'), env.plinth.server.kubeconfigPath]);
    assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
    assert.match(r.stdout, /^ok$/m);
  });
});
