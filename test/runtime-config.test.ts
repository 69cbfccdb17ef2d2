/**
 * --runtime-config: versions and resources turned off answer 404 and vanish from discovery and
 * OpenAPI; their objects stay in etcd and are served again once re-enabled; a storage version
 * turned off still stores the versions that convert to it; unknown keys stop the start.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { EXECUTABLE, withInProcess, kubectlPath, startInProcess, startTestEtcd, tempDir, type InProcessPlinth, type TestEtcd } from './harness.js';

let etcd: TestEtcd;

before(async () => {
  etcd = await startTestEtcd();
});

after(async () => {
  await etcd.stop();
});

const withPlinth = <T>(args: string[], fn: (p: InProcessPlinth) => Promise<T>): Promise<T> => withInProcess(etcd, args, fn);

const event = (name: string) => ({
  apiVersion: 'events.k8s.io/v1',
  kind: 'Event',
  metadata: { name, namespace: 'default' },
  eventTime: '2024-01-01T00:00:00.000000Z',
  reportingController: 'example.com/ctl',
  reportingInstance: 'ctl-1',
  action: 'Test',
  reason: 'Testing',
  regarding: { kind: 'Pod', name: 'p', namespace: 'default' },
  type: 'Normal',
});

/** kubectl, run without blocking this process (the in-process server must answer it). */
function kubectl(kubeconfig: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(kubectlPath(), ['--kubeconfig', kubeconfig, '--cache-dir', tempDir('kubectl-cache-'), ...args], { encoding: 'utf8', timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr });
    });
  });
}

test('a version off: 404, gone from /apis, the group document, OpenAPI v2/v3 and kubectl api-resources; objects served again when re-enabled', async () => {
  // Stored while the version is on.
  await withPlinth([], async ({ client }) => {
    assert.equal((await client.post('/apis/coordination.k8s.io/v1/namespaces/default/leases', { metadata: { name: 'kept' }, spec: { holderIdentity: 'a' } })).status, 201);
  });
  await withPlinth(['--runtime-config=coordination.k8s.io/v1=false'], async ({ client, server }) => {
    const get = await client.get('/apis/coordination.k8s.io/v1/namespaces/default/leases/kept');
    assert.equal(get.status, 404);
    assert.equal((await client.get('/apis/coordination.k8s.io/v1/namespaces/default/leases')).status, 404);
    assert.equal((await client.post('/apis/coordination.k8s.io/v1/namespaces/default/leases', { metadata: { name: 'new' } })).status, 404);
    assert.equal((await client.get('/apis/coordination.k8s.io/v1')).status, 404);
    assert.equal((await client.get('/apis/coordination.k8s.io')).status, 404);
    const groups = (await client.get('/apis')).body.groups.map((g: { name: string }) => g.name);
    assert.ok(!groups.includes('coordination.k8s.io'), `${groups}`);
    assert.ok(groups.includes('rbac.authorization.k8s.io'));
    const v2 = (await client.get('/openapi/v2')).body;
    assert.ok(!Object.keys(v2.paths).some((p) => p.includes('coordination.k8s.io')));
    assert.ok(!Object.keys(v2.definitions).some((d) => d.includes('coordination')), 'no Lease definition');
    const v3 = (await client.get('/openapi/v3')).body;
    assert.ok(!Object.keys(v3.paths).some((p) => p.includes('coordination.k8s.io')));
    assert.equal((await client.get('/openapi/v3/apis/coordination.k8s.io/v1')).status, 404);
    const r = await kubectl(server.kubeconfigPath, 'api-resources', '--no-headers');
    assert.equal(r.code, 0, r.stderr);
    assert.ok(!/\bleases\b/.test(r.stdout), r.stdout);
    assert.ok(/\bconfigmaps\b/.test(r.stdout));
  });
  // The same etcd, the version on again: the object is there.
  await withPlinth(['--runtime-config=coordination.k8s.io/v1=true'], async ({ client }) => {
    const get = await client.get('/apis/coordination.k8s.io/v1/namespaces/default/leases/kept');
    assert.equal(get.status, 200);
    assert.equal(get.body.spec.holderIdentity, 'a');
  });
});

test('a resource off: only it is gone from its version', async () => {
  await withPlinth(['--runtime-config=v1/configmaps=false'], async ({ client }) => {
    assert.equal((await client.get('/api/v1/namespaces/default/configmaps')).status, 404);
    const names = (await client.get('/api/v1')).body.resources.map((r: { name: string }) => r.name);
    assert.ok(!names.includes('configmaps'), `${names}`);
    assert.ok(names.includes('secrets'));
    assert.equal((await client.get('/api/v1/namespaces/default/secrets')).status, 200);
    const v2 = (await client.get('/openapi/v2')).body;
    assert.ok(!Object.keys(v2.paths).some((p) => p.includes('/configmaps')));
  });
  // api/v1/<resource> is the same key.
  await withPlinth(['--runtime-config=api/v1/configmaps=false'], async ({ client }) => {
    assert.equal((await client.get('/api/v1/namespaces/default/configmaps')).status, 404);
  });
});

test('api/beta=false: events.k8s.io/v1beta1 is gone, v1 stays and is the preferred version', async () => {
  await withPlinth(['--runtime-config=api/beta=false', '--enable-priority-and-fairness=false'], async ({ client }) => {
    assert.equal((await client.get('/apis/events.k8s.io/v1beta1/namespaces/default/events')).status, 404);
    assert.equal((await client.post('/apis/events.k8s.io/v1/namespaces/default/events', event('beta-off'))).status, 201);
    const group = (await client.get('/apis/events.k8s.io')).body;
    assert.deepEqual(group.versions.map((v: { version: string }) => v.version), ['v1']);
    assert.equal(group.preferredVersion.version, 'v1');
  });
  // The preferred version off: the other one is preferred.
  await withPlinth(['--runtime-config=events.k8s.io/v1=false'], async ({ client }) => {
    const group = (await client.get('/apis/events.k8s.io')).body;
    assert.deepEqual(group.versions.map((v: { version: string }) => v.version), ['v1beta1']);
    assert.equal(group.preferredVersion.version, 'v1beta1');
    assert.equal((await client.get('/apis/events.k8s.io/v1beta1/namespaces/default/events/beta-off')).status, 200);
  });
  // A later specific key overrides api/beta: the beta version is back.
  await withPlinth(['--runtime-config=api/beta=false,events.k8s.io/v1beta1=true', '--enable-priority-and-fairness=false'], async ({ client }) => {
    assert.equal((await client.get('/apis/events.k8s.io/v1beta1/namespaces/default/events')).status, 200);
  });
});

test('the storage version off (core/v1 events) still stores what events.k8s.io/v1 serves', async () => {
  await withPlinth(['--runtime-config=v1/events=false'], async ({ client }) => {
    assert.equal((await client.get('/api/v1/namespaces/default/events')).status, 404);
    assert.equal((await client.post('/apis/events.k8s.io/v1/namespaces/default/events', event('stored-through'))).status, 201);
    const got = await client.get('/apis/events.k8s.io/v1/namespaces/default/events/stored-through');
    assert.equal(got.status, 200);
    assert.equal(got.body.reason, 'Testing');
    const list = await client.get('/apis/events.k8s.io/v1/namespaces/default/events');
    assert.ok(list.body.items.some((e: { metadata: { name: string } }) => e.metadata.name === 'stored-through'));
  });
  await withPlinth([], async ({ client }) => {
    assert.equal((await client.get('/api/v1/namespaces/default/events/stored-through')).status, 200);
  });
});

test('apiextensions.k8s.io/v1=false removes the CRD API', async () => {
  await withPlinth(['--runtime-config=apiextensions.k8s.io/v1=false'], async ({ client }) => {
    assert.equal((await client.get('/apis/apiextensions.k8s.io/v1/customresourcedefinitions')).status, 404);
    const groups = (await client.get('/apis')).body.groups.map((g: { name: string }) => g.name);
    assert.ok(!groups.includes('apiextensions.k8s.io'));
  });
});

function runExecutable(args: string[]): { code: number | null; output: string } {
  const dataDir = tempDir('plinth-rc-');
  const r = spawnSync(process.execPath, [EXECUTABLE, '--secure-port=0', '--bind-address=127.0.0.1', `--data-dir=${dataDir}`, `--etcd-servers=${etcd.endpoint}`, ...args], { encoding: 'utf8', timeout: 30_000 });
  return { code: r.status, output: `${r.stdout}${r.stderr}` };
}

test('unknown keys and bad values stop the executable at start with kube’s message', () => {
  const cases: Array<[string, string]> = [
    ['--runtime-config=foo.example.com/v1=false', 'unknown api groups foo.example.com'],
    ['--runtime-config=coordination.k8s.io/v9=false', 'group version coordination.k8s.io/v9 that has not been registered'],
    ['--runtime-config=coordination.k8s.io/v1/widgets=false', 'invalid key coordination.k8s.io/v1/widgets'],
    ['--runtime-config=a/b/c/d', 'runtime-config invalid key a/b/c/d'],
    ['--runtime-config=api/all=maybe', 'invalid value api/all=maybe'],
    ['--runtime-config=coordination.k8s.io/v1=yes', 'invalid value of coordination.k8s.io/v1: yes'],
    ['--runtime-config=api/all=false', 'invalid key with only api/all=false'],
    // kube 1.24's validateAPIPriorityAndFairness: APF needs the flowcontrol API it is configured from.
    ['--runtime-config=api/beta=false', '--runtime-config=api/beta=false conflicts with --enable-priority-and-fairness=true and --feature-gates=APIPriorityAndFairness=true'],
    ['--runtime-config=flowcontrol.apiserver.k8s.io/v1beta2=false', '--runtime-config=flowcontrol.apiserver.k8s.io/v1beta2=false conflicts with --enable-priority-and-fairness=true'],
  ];
  for (const [flag, message] of cases) {
    const r = runExecutable([flag]);
    assert.notEqual(r.code, 0, `${flag} must fail:\n${r.output}`);
    assert.ok(r.output.includes(message), `${flag}: expected "${message}" in:\n${r.output}`);
  }
});

/** kube-apiserver 1.24's answer to a path no served API has (its NotFound handler). */
function assertKubeNotFound(res: { status: number; body: { kind?: string; reason?: string; message?: string; code?: number } }, what: string): void {
  assert.equal(res.status, 404, what);
  assert.deepEqual({ kind: res.body.kind, reason: res.body.reason, message: res.body.message, code: res.body.code }, { kind: 'Status', reason: 'NotFound', message: 'the server could not find the requested resource', code: 404 }, what);
}

const versionsOf = async (client: InProcessPlinth['client']): Promise<string[]> =>
  ((await client.get('/apis')).body.groups as Array<{ versions: Array<{ groupVersion: string }> }>).flatMap((g) => g.versions.map((v) => v.groupVersion));

test('batch/v1=false (the spec’s example): jobs and v1 cronjobs 404, batch/v1beta1 cronjobs stay and become the preferred version', async () => {
  await withPlinth(['--runtime-config=batch/v1=false'], async ({ client, server }) => {
    assertKubeNotFound(await client.get('/apis/batch/v1/namespaces/default/jobs'), 'jobs');
    assertKubeNotFound(await client.get('/apis/batch/v1/namespaces/default/cronjobs'), 'v1 cronjobs');
    assertKubeNotFound(await client.get('/apis/batch/v1'), 'the v1 document');
    const group = (await client.get('/apis/batch')).body;
    assert.deepEqual(group.versions.map((v: { version: string }) => v.version), ['v1beta1']);
    assert.equal(group.preferredVersion.version, 'v1beta1');
    assert.equal((await client.get('/apis/batch/v1beta1/namespaces/default/cronjobs')).status, 200);
    const r = await kubectl(server.kubeconfigPath, 'api-versions');
    assert.equal(r.code, 0, r.stderr);
    assert.ok(!r.stdout.split('\n').includes('batch/v1') && r.stdout.split('\n').includes('batch/v1beta1'), r.stdout);
  });
});

test('batch/v1beta1/cronjobs=false (a resource key): the version loses its only resource and leaves discovery', async () => {
  await withPlinth(['--runtime-config=batch/v1beta1/cronjobs=false'], async ({ client }) => {
    assertKubeNotFound(await client.get('/apis/batch/v1beta1/namespaces/default/cronjobs'), 'v1beta1 cronjobs');
    assert.equal((await client.get('/apis/batch/v1/namespaces/default/cronjobs')).status, 200);
    const group = (await client.get('/apis/batch')).body;
    assert.deepEqual(group.versions.map((v: { version: string }) => v.version), ['v1']);
    assert.ok(!(await versionsOf(client)).includes('batch/v1beta1'));
  });
});

test('api/beta=false: every beta version plinth serves is gone, every GA version stays', async () => {
  await withPlinth(['--runtime-config=api/beta=false', '--enable-priority-and-fairness=false'], async ({ client }) => {
    const gvs = await versionsOf(client);
    assert.deepEqual(gvs.filter((gv) => /\/v\d+beta\d+$/.test(gv)), []);
    for (const gv of ['apps/v1', 'autoscaling/v2', 'autoscaling/v1', 'batch/v1', 'policy/v1', 'node.k8s.io/v1', 'events.k8s.io/v1']) assert.ok(gvs.includes(gv), `${gv} in ${gvs}`);
    for (const path of ['/apis/autoscaling/v2beta1/horizontalpodautoscalers', '/apis/autoscaling/v2beta2/horizontalpodautoscalers', '/apis/batch/v1beta1/cronjobs', '/apis/policy/v1beta1/poddisruptionbudgets', '/apis/policy/v1beta1/podsecuritypolicies', '/apis/node.k8s.io/v1beta1/runtimeclasses']) {
      assertKubeNotFound(await client.get(path), path);
    }
    assert.equal((await client.get('/apis/autoscaling/v2/horizontalpodautoscalers')).status, 200);
  });
});

test('api/all=false,v1=true: only the core group is served', async () => {
  await withPlinth(['--runtime-config=api/all=false,v1=true', '--enable-priority-and-fairness=false'], async ({ client, server }) => {
    assert.deepEqual((await client.get('/apis')).body.groups, []);
    assert.equal((await client.get('/api/v1/namespaces/default/configmaps')).status, 200);
    assert.deepEqual((await client.get('/api')).body.versions, ['v1']);
    for (const path of ['/apis/apps/v1/namespaces/default/deployments', '/apis/apps', '/apis/rbac.authorization.k8s.io/v1/clusterroles', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions']) {
      assertKubeNotFound(await client.get(path), path);
    }
    const r = await kubectl(server.kubeconfigPath, 'api-versions');
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.trim(), 'v1');
  });
});
