/**
 * The whole of core/v1 as kubectl users meet it, against the real executable (as `make run` starts
 * it): `kubectl api-resources` as on kube 1.24, discovery listing every core/v1 resource and
 * sub-resource of kube 1.24 with kube's verbs, and the everyday commands the issue names —
 * `get all`, `cluster-info`, `run`, `expose`, `cordon`, `scale rc`, `get pods -o wide`.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { kubectlOf, kubectlPath, startProcess, tempDir, REPO_ROOT, type PlinthProcess } from './harness.js';

let dataDir: string;
let plinth: PlinthProcess;

const { kubectl, ok } = kubectlOf(() => plinth);

/** A table's rows as arrays of cells (kubectl pads with spaces; no cell here holds two spaces). */
function rows(out: string): string[][] {
  return out
    .trim()
    .split('\n')
    .map((l) => l.trim().split(/\s{2,}/));
}

before(async () => {
  dataDir = tempDir('plinth-core-v1-');
  plinth = await startProcess(dataDir);
});

after(async () => {
  await plinth?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

test('kubectl api-resources lists core/v1 exactly as kube 1.24 does', () => {
  // kube-apiserver 1.24's `kubectl api-resources --api-group=''` (NAME SHORTNAMES APIVERSION NAMESPACED KIND).
  const kube124 = [
    ['bindings', '', 'v1', 'true', 'Binding'],
    ['componentstatuses', 'cs', 'v1', 'false', 'ComponentStatus'],
    ['configmaps', 'cm', 'v1', 'true', 'ConfigMap'],
    ['endpoints', 'ep', 'v1', 'true', 'Endpoints'],
    ['events', 'ev', 'v1', 'true', 'Event'],
    ['limitranges', 'limits', 'v1', 'true', 'LimitRange'],
    ['namespaces', 'ns', 'v1', 'false', 'Namespace'],
    ['nodes', 'no', 'v1', 'false', 'Node'],
    ['persistentvolumeclaims', 'pvc', 'v1', 'true', 'PersistentVolumeClaim'],
    ['persistentvolumes', 'pv', 'v1', 'false', 'PersistentVolume'],
    ['pods', 'po', 'v1', 'true', 'Pod'],
    ['podtemplates', '', 'v1', 'true', 'PodTemplate'],
    ['replicationcontrollers', 'rc', 'v1', 'true', 'ReplicationController'],
    ['resourcequotas', 'quota', 'v1', 'true', 'ResourceQuota'],
    ['secrets', '', 'v1', 'true', 'Secret'],
    ['serviceaccounts', 'sa', 'v1', 'true', 'ServiceAccount'],
    ['services', 'svc', 'v1', 'true', 'Service'],
  ];
  const out = ok('api-resources', '--api-group=', '-o', 'wide');
  const [header, ...body] = out.trim().split('\n');
  assert.match(header!, /^NAME\s+SHORTNAMES\s+APIVERSION\s+NAMESPACED\s+KIND\s+VERBS/);
  // Columns by the header's offsets: an empty SHORTNAMES cell is blanks.
  const at = (name: string): number => header!.indexOf(name);
  const cols = ['NAME', 'SHORTNAMES', 'APIVERSION', 'NAMESPACED', 'KIND', 'VERBS'].map(at);
  const got = body.map((l) => cols.slice(0, 5).map((c, i) => l.slice(c, cols[i + 1]).trim()));
  assert.deepEqual(got, kube124);
  // The `all` category: what `kubectl get all` lists from core/v1.
  const all = ok('api-resources', '--api-group=', '--categories=all', '-o', 'name').trim().split('\n').sort();
  assert.deepEqual(all, ['pods', 'replicationcontrollers', 'services']);
});

test('discovery has every core/v1 resource and sub-resource of kube 1.24, with kube verbs', async () => {
  const expected = (JSON.parse(readFileSync(join(REPO_ROOT, '..', 'shared', 'kube-1.24-resources.json'), 'utf8')) as Array<{ gv: string; resource: string; subresources: string[] }>).filter((r) => r.gv === 'v1');
  const list = JSON.parse(ok('get', '--raw', '/api/v1')) as { resources: Array<{ name: string; verbs: string[]; group?: string; version?: string; kind: string }> };
  const names = new Set(list.resources.map((r) => r.name));
  for (const r of expected) {
    assert.ok(names.has(r.resource), `${r.resource} is served`);
    for (const s of r.subresources) assert.ok(names.has(`${r.resource}/${s}`), `${r.resource}/${s} is served`);
  }
  const verbs = (name: string): string[] => [...(list.resources.find((r) => r.name === name)?.verbs ?? [])].sort();
  // kube 1.24's verbs for the sub-resources that are not plain status updates.
  assert.deepEqual(verbs('bindings'), ['create']);
  assert.deepEqual(verbs('componentstatuses'), ['get', 'list']);
  assert.deepEqual(verbs('pods/binding'), ['create']);
  assert.deepEqual(verbs('pods/eviction'), ['create']);
  assert.deepEqual(verbs('pods/log'), ['get']);
  for (const s of ['pods/exec', 'pods/attach', 'pods/portforward']) assert.deepEqual(verbs(s), ['create', 'get'], s);
  for (const s of ['pods/proxy', 'services/proxy', 'nodes/proxy']) assert.deepEqual(verbs(s), ['create', 'delete', 'get', 'patch', 'update'], s);
  for (const s of ['pods/ephemeralcontainers', 'pods/status', 'replicationcontrollers/scale', 'services/status', 'nodes/status']) {
    assert.deepEqual(verbs(s), ['get', 'patch', 'update'], s);
  }
  const eviction = list.resources.find((r) => r.name === 'pods/eviction')!;
  assert.deepEqual([eviction.group, eviction.version, eviction.kind], ['policy', 'v1', 'Eviction']);
  const scale = list.resources.find((r) => r.name === 'replicationcontrollers/scale')!;
  assert.deepEqual([scale.group, scale.version, scale.kind], ['autoscaling', 'v1', 'Scale']);
});

test('kubectl cluster-info names the control plane at the kubernetes Service', () => {
  const out = ok('cluster-info');
  assert.match(out, /Kubernetes control plane.* is running at .*https:\/\/127\.0\.0\.1:\d+/);
  const svc = JSON.parse(ok('-n', 'default', 'get', 'service', 'kubernetes', '-o', 'json'));
  assert.equal(svc.spec.type, 'ClusterIP');
  assert.deepEqual(
    svc.spec.ports.map((p: { name: string; port: number; protocol: string }) => [p.name, p.port, p.protocol]),
    [['https', 443, 'TCP']],
  );
});

test('kubectl run, get pods -o wide, expose, get all', () => {
  ok('create', 'namespace', 'apps');
  ok('-n', 'apps', 'run', 'web', '--image=nginx:1.23', '--port=80', '--labels=app=web');
  const wide = rows(ok('-n', 'apps', 'get', 'pods', '-o', 'wide'));
  assert.deepEqual(wide[0], ['NAME', 'READY', 'STATUS', 'RESTARTS', 'AGE', 'IP', 'NODE', 'NOMINATED NODE', 'READINESS GATES']);
  assert.deepEqual(wide[1]!.slice(0, 4), ['web', '0/1', 'Pending', '0']);
  assert.deepEqual(wide[1]!.slice(5), ['<none>', '<none>', '<none>', '<none>']);
  const pod = JSON.parse(ok('-n', 'apps', 'get', 'pod', 'web', '-o', 'json'));
  assert.equal(pod.status.qosClass, 'BestEffort');
  assert.equal(pod.spec.containers[0].terminationMessagePolicy, 'File');

  ok('-n', 'apps', 'expose', 'pod', 'web', '--port=8080', '--target-port=80', '--name=web');
  const svc = JSON.parse(ok('-n', 'apps', 'get', 'svc', 'web', '-o', 'json'));
  assert.deepEqual(svc.spec.selector, { app: 'web' });
  assert.match(svc.spec.clusterIP, /^\d+\.\d+\.\d+\.\d+$/);
  assert.deepEqual(svc.spec.ports[0].targetPort, 80);

  const all = ok('-n', 'apps', 'get', 'all');
  assert.match(all, /^pod\/web\s+0\/1\s+Pending\s+0\s/m);
  assert.match(all, new RegExp(`^service/web\\s+ClusterIP\\s+${svc.spec.clusterIP.replace(/\./g, '\\.')}\\s+<none>\\s+8080/TCP\\s`, 'm'));
});

test('kubectl scale rc and cordon a node', () => {
  ok('create', 'namespace', 'ctl');
  const rc = {
    apiVersion: 'v1',
    kind: 'ReplicationController',
    metadata: { name: 'frontend', namespace: 'ctl' },
    spec: { replicas: 1, template: { metadata: { labels: { app: 'frontend' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } },
  };
  const node = { apiVersion: 'v1', kind: 'Node', metadata: { name: 'worker-1', labels: { 'node-role.kubernetes.io/worker': '' } } };
  const apply = spawnSync(kubectlPath(), ['--kubeconfig', plinth.kubeconfig, 'apply', '-f', '-'], { input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [rc, node] }), encoding: 'utf8' });
  assert.equal(apply.status, 0, apply.stderr);
  assert.match(ok('-n', 'ctl', 'scale', 'rc', 'frontend', '--replicas=3'), /replicationcontroller\/frontend scaled/);
  const scaled = JSON.parse(ok('-n', 'ctl', 'get', 'rc', 'frontend', '-o', 'json'));
  assert.equal(scaled.spec.replicas, 3);
  assert.deepEqual(scaled.spec.selector, { app: 'frontend' });
  assert.equal(scaled.metadata.generation, 2);
  const refused = kubectl('-n', 'ctl', 'scale', 'rc', 'frontend', '--current-replicas=1', '--replicas=5');
  assert.notEqual(refused.code, 0);
  assert.match(refused.stderr, /Expected replicas to be 1, was 3/);

  assert.match(ok('cordon', 'worker-1'), /node\/worker-1 cordoned/);
  assert.equal(JSON.parse(ok('get', 'node', 'worker-1', '-o', 'json')).spec.unschedulable, true);
  assert.deepEqual(rows(ok('get', 'nodes', '--field-selector=spec.unschedulable=true', '-o', 'name')), [['node/worker-1']]);
  assert.match(ok('get', 'node', 'worker-1'), /^worker-1\s+Unknown,SchedulingDisabled\s+worker\s/m);
  assert.match(ok('uncordon', 'worker-1'), /node\/worker-1 uncordoned/);
});
