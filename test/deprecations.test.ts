/**
 * Deprecated APIs end to end: every resource discovery lists is requested once, and the three
 * signals of kube-apiserver 1.24 (the `Warning` header, the `k8s.io/deprecated` and
 * `k8s.io/removed-release` audit annotations, the `apiserver_requested_deprecated_apis` gauge)
 * are asserted against kube 1.24's prerelease-lifecycle values (k8s.io/api's generated
 * `APILifecycleDeprecated/Removed/Replacement` of each kind): present with kube's exact text on
 * the deprecated versions, absent on every other.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execFile } from 'node:child_process';
import { eventually, kubectlPath, tempDir, usePlinth } from './harness.js';
import { parseExposition, samplesOf } from './metrics-parser.js';

/**
 * kube 1.24's deprecated kinds among those plinth serves: `[deprecated in, removed in, replacement]`
 * (removed defaults to deprecated + 3 minors in prerelease-lifecycle-gen; core/v1 ComponentStatus
 * is hand-declared in k8s.io/api core/v1 lifecycle.go, with no removal).
 */
const KUBE_1_24: Record<string, [string, string, string?]> = {
  'v1 ComponentStatus': ['1.19', ''],
  'autoscaling/v2beta1 HorizontalPodAutoscaler': ['1.22', '1.25', 'autoscaling/v2 HorizontalPodAutoscaler'],
  'autoscaling/v2beta2 HorizontalPodAutoscaler': ['1.23', '1.26', 'autoscaling/v2 HorizontalPodAutoscaler'],
  'batch/v1beta1 CronJob': ['1.21', '1.25', 'batch/v1 CronJob'],
  'discovery.k8s.io/v1beta1 EndpointSlice': ['1.21', '1.25', 'discovery.k8s.io/v1 EndpointSlice'],
  'events.k8s.io/v1beta1 Event': ['1.22', '1.25'],
  'flowcontrol.apiserver.k8s.io/v1beta1 FlowSchema': ['1.23', '1.26', 'flowcontrol.apiserver.k8s.io/v1beta2 FlowSchema'],
  'flowcontrol.apiserver.k8s.io/v1beta1 PriorityLevelConfiguration': ['1.23', '1.26', 'flowcontrol.apiserver.k8s.io/v1beta2 PriorityLevelConfiguration'],
  'node.k8s.io/v1beta1 RuntimeClass': ['1.22', '1.25'],
  'policy/v1beta1 PodDisruptionBudget': ['1.21', '1.25', 'policy/v1 PodDisruptionBudget'],
  'policy/v1beta1 PodSecurityPolicy': ['1.21', '1.25'],
  'storage.k8s.io/v1beta1 CSIStorageCapacity': ['1.24', '1.27', 'storage.k8s.io/v1 CSIStorageCapacity'],
};

/** kube's deprecation.WarningMessage for a kind of the table. */
function expectedWarning(gvk: string): string {
  const [dep, removed, replacement] = KUBE_1_24[gvk]!;
  return `${gvk} is deprecated in v${dep}+${removed ? `, unavailable in v${removed}+` : ''}${replacement ? `; use ${replacement}` : ''}`;
}

const dir = tempDir('plinth-deprecations-');
const logPath = join(dir, 'audit.log');
writeFileSync(join(dir, 'policy.yaml'), 'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n  - level: Metadata\n');
const env = usePlinth([`--audit-policy-file=${join(dir, 'policy.yaml')}`, `--audit-log-path=${logPath}`]);

interface Endpoint {
  groupVersion: string;
  kind: string;
  group: string;
  version: string;
  resource: string;
  subresource: string;
  path: string;
  verb: 'get' | 'create';
}

/** One readable endpoint per discovered resource (list, or a get of a missing object), and the status sub-resources. */
async function discoverEndpoints(): Promise<Endpoint[]> {
  const c = env.plinth.client;
  const gvs: string[] = ['v1'];
  for (const g of (await c.get('/apis')).body.groups as Array<{ versions: Array<{ groupVersion: string }> }>) gvs.push(...g.versions.map((v) => v.groupVersion));
  const out: Endpoint[] = [];
  for (const gv of gvs) {
    const base = gv === 'v1' ? '/api/v1' : `/apis/${gv}`;
    const [group, version] = gv.includes('/') ? (gv.split('/') as [string, string]) : ['', gv];
    const resources = (await c.get(base)).body.resources as Array<{ name: string; kind: string; namespaced: boolean; verbs: string[] }>;
    for (const r of resources) {
      const [resource, subresource = ''] = r.name.split('/') as [string, string?];
      const parent = resources.find((p) => p.name === resource)!;
      const scope = parent.namespaced ? `${base}/namespaces/default` : base;
      let path: string | undefined;
      let verb: 'get' | 'create' = 'get';
      if (!subresource && r.verbs.includes('list')) path = `${scope}/${resource}`;
      else if (!subresource && r.verbs.includes('get')) path = `${scope}/${resource}/missing`;
      else if (subresource === 'status' && r.verbs.includes('get')) path = `${scope}/${resource}/missing/status`;
      else if (!subresource && r.verbs.includes('create')) {
        // create-only resources (reviews, bindings): a POST of an empty body still reaches the route.
        path = `${scope}/${resource}`;
        verb = 'create';
      }
      if (path) out.push({ groupVersion: gv, kind: subresource ? parent.kind : r.kind, group, version, resource, subresource, path, verb });
    }
  }
  return out;
}

function auditEvent(id: string): Promise<{ annotations?: Record<string, string> }> {
  return eventually(async () => {
    if (!existsSync(logPath)) return undefined;
    const evs = readFileSync(logPath, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
    return evs.find((e) => e.auditID === id && e.stage === 'ResponseComplete');
  }, 10_000, `the audit event ${id}`);
}

test('every discovered endpoint: kube 1.24’s Warning, audit annotations and gauge series on deprecated versions only', async () => {
  const c = env.plinth.client;
  const endpoints = await discoverEndpoints();
  // Every deprecated kind of kube 1.24 that discovery lists is in the walk; nothing else is deprecated.
  const served = new Set(endpoints.map((e) => `${e.groupVersion} ${e.kind}`));
  assert.ok(served.has('batch/v1beta1 CronJob') && served.has('policy/v1beta1 PodSecurityPolicy') && served.has('v1 ComponentStatus'), [...served].join('\n'));
  let n = 0;
  for (const e of endpoints) {
    const id = `deprecations-${++n}-${process.pid}`;
    const isCreateOnly = e.verb === 'create';
    const res = isCreateOnly ? await c.post(e.path, {}, { headers: { 'audit-id': id } }) : await c.get(e.path, { headers: { 'audit-id': id } });
    const gvk = `${e.groupVersion} ${e.kind}`;
    const what = `${isCreateOnly ? 'POST' : 'GET'} ${e.path} (${res.status})`;
    const ev = await auditEvent(id);
    if (KUBE_1_24[gvk]) {
      assert.equal(res.headers['warning'], `299 - "${expectedWarning(gvk)}"`, what);
      assert.equal(ev.annotations?.['k8s.io/deprecated'], 'true', what);
      const removed = KUBE_1_24[gvk]![1];
      assert.equal(ev.annotations?.['k8s.io/removed-release'], removed || undefined, what);
    } else {
      assert.equal(res.headers['warning'], undefined, what);
      assert.equal(ev.annotations?.['k8s.io/deprecated'], undefined, what);
      assert.equal(ev.annotations?.['k8s.io/removed-release'], undefined, what);
    }
  }

  // The gauge: exactly one series per deprecated endpoint requested, labelled as kube labels it.
  const families = parseExposition((await c.get('/metrics')).raw.toString('utf8'));
  const series = samplesOf(families, 'apiserver_requested_deprecated_apis').map((s) => {
    assert.equal(s.value, 1);
    return JSON.stringify(s.labels);
  });
  const expected = endpoints
    .filter((e) => KUBE_1_24[`${e.groupVersion} ${e.kind}`])
    .map((e) => JSON.stringify({ group: e.group, version: e.version, resource: e.resource, subresource: e.subresource, removed_release: KUBE_1_24[`${e.groupVersion} ${e.kind}`]![1] }));
  assert.ok(expected.some((s) => s.includes('"subresource":"status"')), 'a deprecated status sub-resource is walked');
  assert.deepEqual(series.map((s) => JSON.parse(s)).map((l) => JSON.stringify({ group: l.group, version: l.version, resource: l.resource, subresource: l.subresource, removed_release: l.removed_release })).sort(), expected.sort());
});

test('kubectl prints the deprecation warning of a deprecated version', async () => {
  const out = await new Promise<{ stderr: string; code: number }>((resolve) => {
    execFile(kubectlPath(), ['--kubeconfig', env.plinth.server.kubeconfigPath, '--cache-dir', tempDir('kubectl-cache-'), 'get', 'cronjobs.v1beta1.batch', '-A'], { encoding: 'utf8' }, (err, _stdout, stderr) => resolve({ stderr, code: err ? 1 : 0 }));
  });
  assert.equal(out.code, 0, out.stderr);
  assert.match(out.stderr, /^Warning: batch\/v1beta1 CronJob is deprecated in v1\.21\+, unavailable in v1\.25\+; use batch\/v1 CronJob$/m);
});

/** kube-apiserver 1.24's `kubectl api-versions` with its default --runtime-config. */
const KUBE_1_24_VERSIONS = [
  'admissionregistration.k8s.io/v1', 'apiextensions.k8s.io/v1', 'apiregistration.k8s.io/v1', 'apps/v1', 'authentication.k8s.io/v1',
  'authorization.k8s.io/v1', 'autoscaling/v1', 'autoscaling/v2', 'autoscaling/v2beta1', 'autoscaling/v2beta2', 'batch/v1', 'batch/v1beta1',
  'certificates.k8s.io/v1', 'coordination.k8s.io/v1', 'discovery.k8s.io/v1', 'discovery.k8s.io/v1beta1', 'events.k8s.io/v1', 'events.k8s.io/v1beta1',
  'flowcontrol.apiserver.k8s.io/v1beta1', 'flowcontrol.apiserver.k8s.io/v1beta2', 'networking.k8s.io/v1', 'node.k8s.io/v1', 'node.k8s.io/v1beta1',
  'policy/v1', 'policy/v1beta1', 'rbac.authorization.k8s.io/v1', 'scheduling.k8s.io/v1', 'storage.k8s.io/v1', 'storage.k8s.io/v1beta1', 'v1',
];

test('kubectl api-versions: kube 1.24’s versions of every group plinth serves, and no API kube 1.24 lacks', async () => {
  const out = await new Promise<{ stdout: string; stderr: string; code: number }>((resolve) => {
    execFile(kubectlPath(), ['--kubeconfig', env.plinth.server.kubeconfigPath, '--cache-dir', tempDir('kubectl-cache-'), 'api-versions'], { encoding: 'utf8' }, (err, stdout, stderr) => resolve({ stdout, stderr, code: err ? 1 : 0 }));
  });
  assert.equal(out.code, 0, out.stderr);
  const got = out.stdout.trim().split('\n');
  const groupOf = (gv: string) => (gv.includes('/') ? gv.slice(0, gv.indexOf('/')) : '');
  const served = new Set(got.map(groupOf));
  assert.deepEqual(got, KUBE_1_24_VERSIONS.filter((gv) => served.has(groupOf(gv))));
  // authentication.k8s.io/v1 is kube 1.24's: tokenreviews only (selfsubjectreviews came in 1.28).
  const authn = (await env.plinth.client.get('/apis/authentication.k8s.io/v1')).body.resources.map((r: { name: string }) => r.name);
  assert.deepEqual(authn, ['tokenreviews']);
});

test('selfsubjectreviews are off by default (the APISelfSubjectReview gate): 404, and system:basic-user is not granted them', async () => {
  const c = env.plinth.client;
  const res = await c.post('/apis/authentication.k8s.io/v1/selfsubjectreviews', { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' });
  assert.equal(res.status, 404);
  const basic = (await c.get('/apis/rbac.authorization.k8s.io/v1/clusterroles/system:basic-user')).body.rules as Array<{ resources?: string[] }>;
  assert.ok(!basic.some((r) => r.resources?.includes('selfsubjectreviews')), JSON.stringify(basic));
  const v2 = (await c.get('/openapi/v2')).body;
  assert.ok(!Object.keys(v2.paths).some((p) => p.includes('selfsubjectreviews')));
});

test('a deprecated custom resource version: the Warning, k8s.io/deprecated without a removed release, and a gauge series with removed_release=""', async () => {
  const c = env.plinth.client;
  const schema = { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } } };
  const versions = [
    { name: 'v1', served: true, storage: true, schema },
    { name: 'v1beta1', served: true, storage: false, deprecated: true, schema },
  ];
  const crd = { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'gadgets.dep.example.com' }, spec: { group: 'dep.example.com', scope: 'Namespaced', names: { plural: 'gadgets', kind: 'Gadget' }, versions } };
  assert.equal((await c.post('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd)).status, 201);
  const path = '/apis/dep.example.com/v1beta1/namespaces/default/gadgets';
  await eventually(async () => (await c.get(path)).status === 200, 15_000, 'gadgets served');
  const id = `deprecations-crd-${process.pid}`;
  const res = await c.get(path, { headers: { 'audit-id': id } });
  assert.equal(res.headers['warning'], '299 - "dep.example.com/v1beta1 Gadget is deprecated; use dep.example.com/v1 Gadget"');
  const ev = await auditEvent(id);
  assert.equal(ev.annotations?.['k8s.io/deprecated'], 'true');
  assert.equal(ev.annotations?.['k8s.io/removed-release'], undefined);
  const families = parseExposition((await c.get('/metrics')).raw.toString('utf8'));
  assert.deepEqual(samplesOf(families, 'apiserver_requested_deprecated_apis', { group: 'dep.example.com' }).map((s) => s.labels), [{ group: 'dep.example.com', version: 'v1beta1', resource: 'gadgets', subresource: '', removed_release: '' }]);
  assert.equal((await c.get('/apis/dep.example.com/v1/namespaces/default/gadgets')).headers['warning'], undefined);
});
