/**
 * batch on a real server (groups/batch/): Jobs (defaults, generated selector and labels,
 * immutable template, restartPolicy, orphaning delete on batch/v1), CronJobs in batch/v1 and the
 * deprecated batch/v1beta1 (defaults, schedule causes, the round trip between versions, the
 * Warning), kubectl create job/cronjob and kube's columns, Protobuf.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { decodeProtobuf } from '@plinth/apiserver';
import { eventually, kubectlPath, usePlinth } from './harness.js';
import { causeFields, expectCode } from './assertions.js';

const env = usePlinth();
const B1 = '/apis/batch/v1/namespaces/default';
const B1B1 = '/apis/batch/v1beta1/namespaces/default';

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

const podSpec = (restartPolicy = 'Never'): Record<string, unknown> => ({ restartPolicy, containers: [{ name: 'c', image: 'busybox' }] });
const job = (name: string, spec: Record<string, unknown> = {}): Record<string, unknown> => ({ apiVersion: 'batch/v1', kind: 'Job', metadata: { name }, spec: { template: { spec: podSpec() }, ...spec } });
const cronJob = (apiVersion: string, name: string, schedule: string): Record<string, unknown> => ({
  apiVersion, kind: 'CronJob', metadata: { name }, spec: { schedule, jobTemplate: { spec: { template: { spec: podSpec('OnFailure') } } } },
});
const merge = (path: string, body: unknown) => env.plinth.client.request('PATCH', path, { headers: { 'content-type': 'application/merge-patch+json' }, body });

describe('batch', () => {
  it('serves batch/v1 (jobs, cronjobs) and batch/v1beta1 (cronjobs) in discovery', async () => {
    const v1 = await env.plinth.client.get('/apis/batch/v1');
    expectCode(v1, 200);
    assert.deepEqual(v1.body.resources.map((r: { name: string }) => r.name), ['cronjobs', 'cronjobs/status', 'jobs', 'jobs/status']);
    const cj = v1.body.resources.find((r: { name: string }) => r.name === 'cronjobs');
    assert.deepEqual(cj.shortNames, ['cj']);
    assert.deepEqual(cj.categories, ['all']);
    const b1 = await env.plinth.client.get('/apis/batch/v1beta1');
    assert.deepEqual(b1.body.resources.map((r: { name: string }) => r.name), ['cronjobs', 'cronjobs/status']);
  });

  it('defaults a Job and generates its selector and labels from its uid', async () => {
    const res = await env.plinth.client.post(`${B1}/jobs`, job('j1'));
    expectCode(res, 201);
    const { spec, metadata } = res.body;
    assert.equal(spec.completions, 1);
    assert.equal(spec.parallelism, 1);
    assert.equal(spec.backoffLimit, 6);
    assert.equal(spec.completionMode, 'NonIndexed');
    assert.equal(spec.suspend, false);
    assert.deepEqual(spec.selector, { matchLabels: { 'controller-uid': metadata.uid } });
    assert.deepEqual(spec.template.metadata.labels, { 'job-name': 'j1', 'controller-uid': metadata.uid });
    assert.equal(metadata.generation, 1);
  });

  it('refuses restartPolicy Always and a changed template, with kube causes', async () => {
    const bad = await env.plinth.client.post(`${B1}/jobs`, job('j2', { template: { spec: podSpec('Always') } }));
    expectCode(bad, 422);
    assert.deepEqual(causeFields(bad), ['spec.template.spec.restartPolicy']);
    assert.match(bad.body.message, /spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"/);
    const changed = await merge(`${B1}/jobs/j1`, { spec: { template: { spec: { containers: [{ name: 'c', image: 'busybox:2' }] } } } });
    expectCode(changed, 422);
    assert.deepEqual(causeFields(changed), ['spec.template']);
    assert.match(changed.body.message, /field is immutable/);
    const suspend = await merge(`${B1}/jobs/j1`, { spec: { suspend: true } });
    expectCode(suspend, 200);
    assert.equal(suspend.body.metadata.generation, 2);
  });

  it('keeps the manual selector and checks it matches', async () => {
    const res = await env.plinth.client.post(`${B1}/jobs`, job('j3', { manualSelector: true, selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'c' } }, spec: podSpec() } }));
    expectCode(res, 422);
    assert.deepEqual(causeFields(res), ['spec.template.metadata.labels']);
  });

  it('orphans the pods of a batch/v1 Job deleted without a policy', async () => {
    const j4 = await env.plinth.client.post(`${B1}/jobs`, job('j4'));
    expectCode(j4, 201);
    const ref = { apiVersion: 'batch/v1', kind: 'Job', name: 'j4', uid: j4.body.metadata.uid, controller: true, blockOwnerDeletion: true };
    expectCode(await env.plinth.client.post('/api/v1/namespaces/default/pods', { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'j4-pod', ownerReferences: [ref] }, spec: podSpec() }), 201);
    const del = await env.plinth.client.request('DELETE', `${B1}/jobs/j4`);
    expectCode(del, 200);
    // The orphan finalizer holds the Job until the garbage collector has orphaned its pods.
    assert.deepEqual(del.body.metadata.finalizers, ['orphan']);
    await eventually(async () => (await env.plinth.client.get(`${B1}/jobs/j4`)).status === 404, 20_000, 'the Job gone');
    const pod = await env.plinth.client.get('/api/v1/namespaces/default/pods/j4-pod');
    expectCode(pod, 200);
    assert.equal(pod.body.metadata.ownerReferences, undefined, 'the pod survives without its ownerReference');
  });

  it('defaults CronJobs, checks the schedule as robfig/cron, and round-trips batch/v1beta1 with a Warning', async () => {
    const c1 = await env.plinth.client.post(`${B1}/cronjobs`, cronJob('batch/v1', 'c1', '@hourly'));
    expectCode(c1, 201);
    assert.equal(c1.body.spec.concurrencyPolicy, 'Allow');
    assert.equal(c1.body.spec.suspend, false);
    assert.equal(c1.body.spec.successfulJobsHistoryLimit, 3);
    assert.equal(c1.body.spec.failedJobsHistoryLimit, 1);
    assert.equal(c1.body.spec.jobTemplate.spec.backoffLimit, 6);

    for (const [schedule, detail] of [
      ['* * * *', 'expected exactly 5 fields, found 4: [* * * *]'],
      ['61 * * * *', 'end of range (61) above maximum (59): 61'],
      ['@often', 'unrecognized descriptor: @often'],
      ['TZ=Mars/Base 0 * * * *', 'provided bad location Mars/Base: unknown time zone Mars/Base'],
    ] as const) {
      const bad = await env.plinth.client.post(`${B1}/cronjobs`, cronJob('batch/v1', 'bad', schedule));
      expectCode(bad, 422, schedule);
      assert.equal(bad.body.details.causes[0].message, `Invalid value: ${JSON.stringify(schedule)}: ${detail}`);
    }

    const old = await env.plinth.client.post(`${B1B1}/cronjobs`, cronJob('batch/v1beta1', 'c2', '*/5 * * * *'));
    expectCode(old, 201);
    assert.equal(old.headers['warning'], '299 - "batch/v1beta1 CronJob is deprecated in v1.21+, unavailable in v1.25+; use batch/v1 CronJob"');
    assert.equal(old.body.apiVersion, 'batch/v1beta1');
    const asV1 = await env.plinth.client.get(`${B1}/cronjobs/c2`);
    expectCode(asV1, 200);
    assert.equal(asV1.body.apiVersion, 'batch/v1');
    assert.deepEqual(asV1.body.spec, old.body.spec);
    const back = await env.plinth.client.get(`${B1B1}/cronjobs/c1`);
    expectCode(back, 200);
    assert.equal(back.body.apiVersion, 'batch/v1beta1');
    assert.deepEqual(back.body.spec, c1.body.spec);
    assert.equal(back.body.metadata.resourceVersion, c1.body.metadata.resourceVersion);
  });

  it('works with kubectl create job/cronjob and shows kube columns; answers Protobuf', async () => {
    await ok('create', 'job', 'kj', '--image=busybox');
    await ok('create', 'cronjob', 'kcj', '--image=busybox', '--schedule=*/1 * * * *');
    const jobs = await ok('get', 'jobs', 'kj', '-o', 'wide');
    assert.match(jobs, /^NAME\s+COMPLETIONS\s+DURATION\s+AGE\s+CONTAINERS\s+IMAGES\s+SELECTOR\n/);
    assert.match(jobs, /\nkj\s+0\/1\s+\S+\s+kj\s+busybox\s+controller-uid=/);
    const cjs = await ok('get', 'cj', 'kcj');
    assert.match(cjs, /^NAME\s+SCHEDULE\s+SUSPEND\s+ACTIVE\s+LAST SCHEDULE\s+AGE\n/);
    assert.match(cjs, /\nkcj\s+\*\/1 \* \* \* \*\s+False\s+0\s+<none>\s+\S+\n/);
    const pb = await env.plinth.client.get(`${B1}/jobs/kj`, { headers: { accept: 'application/vnd.kubernetes.protobuf' } });
    expectCode(pb, 200);
    const decoded = decodeProtobuf(pb.raw) as { kind: string; spec: { backoffLimit: number } };
    assert.equal(decoded.kind, 'Job');
    assert.equal(decoded.spec.backoffLimit, 6);
  });
});
