/**
 * apps/v1 on a real server (groups/apps/): discovery, kube 1.24's defaults, validation causes,
 * the immutable selector, the generation rule, status isolation, the scale sub-resource,
 * kubectl's columns and commands (create deployment, scale, set image, rollout history) and Protobuf.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { decodeProtobuf } from '@plinth/apiserver';
import { kubectlPath, usePlinth } from './harness.js';
import { causeFields, expectCode } from './assertions.js';

const env = usePlinth();
const NS = 'default';
const APPS = `/apis/apps/v1/namespaces/${NS}`;

function kubectl(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(kubectlPath(), ['--kubeconfig', env.plinth.server.kubeconfigPath, ...args], { encoding: 'utf8', timeout: 60_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}
async function ok(...args: string[]): Promise<string> {
  const r = await kubectl(...args);
  assert.equal(r.code, 0, `kubectl ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

const podTemplate = (labels: Record<string, string>): Record<string, unknown> => ({ metadata: { labels }, spec: { containers: [{ name: 'app', image: 'nginx:1.25' }] } });
const deployment = (name: string, spec: Record<string, unknown> = {}): Record<string, unknown> => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name },
  spec: { selector: { matchLabels: { app: name } }, template: podTemplate({ app: name }), ...spec },
});

describe('apps/v1', () => {
  it('is served in discovery with kube 1.24 names, short names, categories and sub-resources', async () => {
    const res = await env.plinth.client.get('/apis/apps/v1');
    expectCode(res, 200);
    const rs = res.body.resources as Array<{ name: string; shortNames?: string[]; categories?: string[]; verbs: string[] }>;
    assert.deepEqual(rs.map((r) => r.name), ['controllerrevisions', 'daemonsets', 'daemonsets/status', 'deployments', 'deployments/scale', 'deployments/status', 'replicasets', 'replicasets/scale', 'replicasets/status', 'statefulsets', 'statefulsets/scale', 'statefulsets/status']);
    const by = (n: string) => rs.find((r) => r.name === n)!;
    assert.deepEqual(by('deployments').shortNames, ['deploy']);
    assert.deepEqual(by('replicasets').shortNames, ['rs']);
    assert.deepEqual(by('statefulsets').shortNames, ['sts']);
    assert.deepEqual(by('daemonsets').shortNames, ['ds']);
    for (const n of ['deployments', 'replicasets', 'statefulsets', 'daemonsets']) assert.deepEqual(by(n).categories, ['all']);
    assert.equal(by('controllerrevisions').categories, undefined);
  });

  it('defaults a Deployment as kube 1.24 and starts it at generation 1 with an empty status', async () => {
    const res = await env.plinth.client.post(`${APPS}/deployments`, { ...deployment('d1'), status: { replicas: 9 } });
    expectCode(res, 201);
    const spec = res.body.spec;
    assert.equal(spec.replicas, 1);
    assert.equal(spec.revisionHistoryLimit, 10);
    assert.equal(spec.progressDeadlineSeconds, 600);
    assert.deepEqual(spec.strategy, { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: '25%' } });
    assert.equal(spec.template.spec.restartPolicy, 'Always');
    assert.equal(spec.template.spec.containers[0].terminationMessagePath, '/dev/termination-log');
    assert.equal(res.body.metadata.generation, 1);
    assert.deepEqual(res.body.status, {});
  });

  it('defaults StatefulSets and DaemonSets as kube 1.24 (no PVC retention policy: its gate is off)', async () => {
    const sts = await env.plinth.client.post(`${APPS}/statefulsets`, {
      apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 's1' },
      spec: { serviceName: 's1', selector: { matchLabels: { app: 's1' } }, template: podTemplate({ app: 's1' }), persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Delete' } },
    });
    expectCode(sts, 201);
    assert.equal(sts.body.spec.podManagementPolicy, 'OrderedReady');
    assert.deepEqual(sts.body.spec.updateStrategy, { type: 'RollingUpdate', rollingUpdate: { partition: 0 } });
    assert.equal(sts.body.spec.replicas, 1);
    assert.equal(sts.body.spec.revisionHistoryLimit, 10);
    assert.equal(sts.body.spec.persistentVolumeClaimRetentionPolicy, undefined);
    const ds = await env.plinth.client.post(`${APPS}/daemonsets`, {
      apiVersion: 'apps/v1', kind: 'DaemonSet', metadata: { name: 'ds1' },
      spec: { selector: { matchLabels: { app: 'ds1' } }, template: podTemplate({ app: 'ds1' }) },
    });
    expectCode(ds, 201);
    assert.deepEqual(ds.body.spec.updateStrategy, { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } });
    assert.equal(ds.body.spec.revisionHistoryLimit, 10);
    // apps/v1 carries kube's internal spec.templateGeneration as an annotation.
    assert.equal(ds.body.spec.templateGeneration, undefined);
    assert.equal(ds.body.metadata.annotations['deprecated.daemonset.template.generation'], '1');
  });

  it('moves a DaemonSet\'s template generation annotation with its template only', async () => {
    const TG = 'deprecated.daemonset.template.generation';
    const path = `${APPS}/daemonsets`;
    const body = (name: string, annotations?: Record<string, string>) => ({
      apiVersion: 'apps/v1', kind: 'DaemonSet', metadata: { name, ...(annotations ? { annotations } : {}) },
      spec: { selector: { matchLabels: { app: name } }, template: podTemplate({ app: name }) },
    });
    // A create takes the client's value when it is at least 1, as kube's PrepareForCreate.
    const five = await env.plinth.client.post(path, body('tg5', { [TG]: '5' }));
    expectCode(five, 201);
    assert.equal(five.body.metadata.annotations[TG], '5');
    const bad = await env.plinth.client.post(path, body('tgbad', { [TG]: 'x1' }));
    expectCode(bad, 400);
    assert.equal(bad.body.message, 'strconv.ParseInt: parsing "x1": invalid syntax');
    const huge = await env.plinth.client.post(path, body('tghuge', { [TG]: '9'.repeat(30) }));
    expectCode(huge, 400);
    assert.equal(huge.body.message, `strconv.ParseInt: parsing "${'9'.repeat(30)}": value out of range`);
    // An update keeps the stored value whatever the client sends, and adds one with a new template.
    const same = await env.plinth.client.request('PATCH', `${path}/tg5`, { body: { metadata: { annotations: { [TG]: '9' } } }, headers: { 'content-type': 'application/merge-patch+json' } });
    expectCode(same, 200);
    assert.equal(same.body.metadata.annotations[TG], '5');
    assert.equal(same.body.metadata.generation, 1);
    const changed = await env.plinth.client.request('PATCH', `${path}/tg5`, { body: { spec: { template: { metadata: { labels: { app: 'tg5', v: '2' } } } } }, headers: { 'content-type': 'application/merge-patch+json' } });
    expectCode(changed, 200);
    assert.equal(changed.body.metadata.annotations[TG], '6');
    assert.equal(changed.body.metadata.generation, 2);
    // A status write keeps it too.
    const status = await env.plinth.client.request('PATCH', `${path}/tg5/status`, { body: { metadata: { annotations: { [TG]: '1' } }, status: { numberReady: 1 } }, headers: { 'content-type': 'application/merge-patch+json' } });
    expectCode(status, 200);
    assert.equal(status.body.metadata.annotations[TG], '6');
  });

  it('refuses with kube causes: no selector, selector not matching, restartPolicy, zero surge and unavailable', async () => {
    const noSel = deployment('bad1');
    delete (noSel['spec'] as Record<string, unknown>)['selector'];
    const r1 = await env.plinth.client.post(`${APPS}/deployments`, noSel);
    expectCode(r1, 422);
    assert.deepEqual(causeFields(r1), ['spec.selector', 'spec.template.metadata.labels']);
    assert.match(r1.body.message, /^Deployment.apps "bad1" is invalid: \[spec.selector: Required value, spec.template.metadata.labels: Invalid value: map\[string\]string\{"app":"bad1"\}: `selector` does not match template `labels`\]$/);

    const r2 = await env.plinth.client.post(`${APPS}/deployments`, deployment('bad2', {
      template: { ...podTemplate({ app: 'bad2' }), spec: { restartPolicy: 'Never', containers: [{ name: 'app', image: 'nginx' }] } },
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 0 } },
    }));
    expectCode(r2, 422);
    assert.deepEqual(r2.body.details.causes.map((c: { field: string; message: string }) => `${c.field}: ${c.message}`), [
      'spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"',
      'spec.strategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString{Type:0, IntVal:0, StrVal:""}: may not be 0 when `maxSurge` is 0',
    ]);
  });

  it('keeps the selector immutable and bumps the generation on spec changes only; status writes go to /status', async () => {
    const created = await env.plinth.client.post(`${APPS}/deployments`, deployment('d2'));
    expectCode(created, 201);
    const sel = await env.plinth.client.request('PATCH', `${APPS}/deployments/d2`, {
      headers: { 'content-type': 'application/merge-patch+json' },
      body: { spec: { selector: { matchLabels: { app: 'd2', x: 'y' } }, template: { metadata: { labels: { app: 'd2', x: 'y' } } } } },
    });
    expectCode(sel, 422);
    assert.deepEqual(causeFields(sel), ['spec.selector']);
    assert.match(sel.body.message, /field is immutable/);

    const merge = (path: string, body: unknown) => env.plinth.client.request('PATCH', path, { headers: { 'content-type': 'application/merge-patch+json' }, body });
    const labels = await merge(`${APPS}/deployments/d2`, { metadata: { labels: { team: 'a' } } });
    expectCode(labels, 200);
    assert.equal(labels.body.metadata.generation, 1, 'a label change is not a new generation');
    const statusViaMain = await merge(`${APPS}/deployments/d2`, { status: { replicas: 3 }, spec: { replicas: 2 } });
    expectCode(statusViaMain, 200);
    assert.equal(statusViaMain.body.metadata.generation, 2);
    assert.equal(statusViaMain.body.status.replicas, undefined, 'status is not written through the main resource');
    const status = await merge(`${APPS}/deployments/d2/status`, { status: { replicas: 2, readyReplicas: 1 }, spec: { replicas: 7 } });
    expectCode(status, 200);
    assert.equal(status.body.status.replicas, 2);
    assert.equal(status.body.spec.replicas, 2, 'spec is not written through /status');
    assert.equal(status.body.metadata.generation, 2);
    const badStatus = await merge(`${APPS}/deployments/d2/status`, { status: { readyReplicas: 5 } });
    expectCode(badStatus, 422);
    assert.deepEqual(causeFields(badStatus), ['status.readyReplicas']);
  });

  it('serves scale with the selector as kube ScaleREST', async () => {
    const scale = await env.plinth.client.get(`${APPS}/deployments/d1/scale`);
    expectCode(scale, 200);
    assert.equal(scale.body.kind, 'Scale');
    assert.equal(scale.body.apiVersion, 'autoscaling/v1');
    assert.deepEqual(scale.body.spec, { replicas: 1 });
    assert.deepEqual(scale.body.status, { replicas: 0, selector: 'app=d1' });
  });

  it('works with kubectl: create deployment, scale, set image, get -o wide, rollout history', async () => {
    await ok('create', 'deployment', 'web', '--image=nginx');
    await ok('scale', 'deployment', 'web', '--replicas=3');
    await ok('set', 'image', 'deployment/web', 'nginx=nginx:1.23');
    const dep = JSON.parse(await ok('get', 'deploy', 'web', '-o', 'json'));
    assert.equal(dep.spec.replicas, 3);
    assert.equal(dep.spec.template.spec.containers[0].image, 'nginx:1.23');
    assert.equal(dep.metadata.generation, 3);
    const wide = await ok('get', 'deployments', 'web', '-o', 'wide');
    assert.match(wide, /^NAME\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+AGE\s+CONTAINERS\s+IMAGES\s+SELECTOR\n/);
    assert.match(wide, /\nweb\s+0\/3\s+0\s+0\s+\S+\s+nginx\s+nginx:1\.23\s+app=web\n/);
    // Without a controller there are no ReplicaSets: kubectl lists them and finds no revision.
    const history = await ok('rollout', 'history', 'deployment/web');
    assert.match(history, /deployment.apps\/web/);
    const all = await ok('get', 'all');
    assert.match(all, /deployment.apps\/web/);
    assert.match(all, /statefulset.apps\/s1/);
    assert.match(all, /daemonset.apps\/ds1/);
  });

  it('answers Protobuf', async () => {
    const pb = await env.plinth.client.get(`${APPS}/deployments/d1`, { headers: { accept: 'application/vnd.kubernetes.protobuf' } });
    expectCode(pb, 200);
    const decoded = decodeProtobuf(pb.raw) as { kind: string; spec: { replicas: number; strategy: { rollingUpdate: { maxSurge: unknown } } } };
    assert.equal(decoded.kind, 'Deployment');
    assert.equal(decoded.spec.replicas, 1);
    assert.equal(decoded.spec.strategy.rollingUpdate.maxSurge, '25%');
  });
});
