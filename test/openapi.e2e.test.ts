/**
 * End-to-end: the OpenAPI documents as the real kubectl uses them against the real executable —
 * `kubectl explain` (OpenAPI v3) and client-side schema validation on create/apply (OpenAPI v2
 * protobuf, chosen because the server does not advertise `fieldValidation` on PATCH).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { kubectlPath, startProcess, tempDir, type PlinthProcess } from './harness.js';

let dataDir: string;
let cacheDir: string;
let plinth: PlinthProcess;

function kubectl(...args: string[]): { code: number; stdout: string; stderr: string } {
  // A private discovery/OpenAPI cache: kubectl caches by host:port and revalidates by ETag.
  const r = spawnSync(kubectlPath(), ['--kubeconfig', plinth.kubeconfig, '--cache-dir', cacheDir, ...args], { encoding: 'utf8', timeout: 60_000 });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

function ok(...args: string[]): string {
  const r = kubectl(...args);
  assert.equal(r.code, 0, `kubectl ${args.join(' ')} failed:\n${r.stderr}\n--- server log ---\n${plinth.output().slice(-2000)}`);
  return r.stdout;
}

function manifest(name: string, text: string): string {
  const file = join(dataDir, name);
  writeFileSync(file, text);
  return file;
}

before(async () => {
  dataDir = tempDir('plinth-openapi-e2e-');
  cacheDir = tempDir('plinth-kubectl-cache-');
  plinth = await startProcess(dataDir);
});

after(async () => {
  await plinth?.stop();
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(cacheDir, { recursive: true, force: true });
});

test('the documents are served: /openapi/v3 discovery, group-version documents, /openapi/v2 JSON and protobuf', async () => {
  const disco = await plinth.client.get('/openapi/v3');
  assert.equal(disco.status, 200);
  // One document per served group version, as discovery lists them.
  const apis = (await plinth.client.get('/apis')).body as { groups: Array<{ versions: Array<{ groupVersion: string }> }> };
  const served = ['api/v1', ...apis.groups.flatMap((g) => g.versions.map((v) => `apis/${v.groupVersion}`))];
  assert.ok(served.includes('apis/rbac.authorization.k8s.io/v1') && served.includes('apis/events.k8s.io/v1beta1'));
  assert.deepEqual(Object.keys(disco.body.paths).sort(), served.sort());
  const gv = await plinth.client.get(disco.body.paths['apis/rbac.authorization.k8s.io/v1'].serverRelativeURL);
  assert.equal(gv.status, 200);
  assert.equal(gv.headers['cache-control'], 'public, immutable');
  assert.ok(gv.body.components.schemas['io.k8s.api.rbac.v1.ClusterRoleBinding']);
  assert.equal((await plinth.client.get('/openapi/v3/apis/nope.example.com/v1')).status, 404);
  const v2 = await plinth.client.get('/openapi/v2');
  assert.equal(v2.status, 200);
  assert.equal(v2.body.swagger, '2.0');
  assert.equal((await plinth.client.get('/openapi/v2', { headers: { 'if-none-match': String(v2.headers['etag']) } })).status, 304);
  const pb = await plinth.client.get('/openapi/v2', { headers: { accept: 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf' } });
  assert.equal(pb.status, 200);
  assert.equal(pb.raw[0], 0x0a); // field 1 (swagger), length-delimited
  assert.equal(pb.raw.subarray(2, 5).toString(), '2.0');
});

test('kubectl explain clusterrolebinding.subjects prints the Subject fields', () => {
  const out = ok('explain', 'clusterrolebinding.subjects');
  assert.match(out, /^GROUP:\s+rbac\.authorization\.k8s\.io$/m);
  assert.match(out, /^KIND:\s+ClusterRoleBinding$/m);
  assert.match(out, /^FIELD: subjects <\[\]Subject>$/m);
  assert.match(out, /^FIELDS:$/m);
  assert.match(out, /^ {2}apiGroup\t<string>$/m);
  assert.match(out, /^ {2}kind\t<string> -required-$/m);
  assert.match(out, /^ {2}name\t<string> -required-$/m);
  assert.match(out, /^ {2}namespace\t<string>$/m);
});

test('kubectl explain serviceaccount prints the kind and its fields', () => {
  const out = ok('explain', 'serviceaccount');
  assert.match(out, /^KIND:\s+ServiceAccount$/m);
  assert.match(out, /^VERSION:\s+v1$/m);
  // plinth's own one line about the kind (kube's prose is not copied).
  assert.match(out, /A ServiceAccount is an identity for processes that run in pods\./);
  assert.match(out, /^ {2}automountServiceAccountToken\t<boolean>$/m);
  assert.match(out, /^ {2}imagePullSecrets\t<\[\]LocalObjectReference>$/m);
  assert.match(out, /^ {2}metadata\t<ObjectMeta>$/m);
  assert.match(out, /^ {2}secrets\t<\[\]ObjectReference>$/m);
  assert.match(ok('explain', 'namespace.spec.finalizers'), /^FIELD: finalizers <\[\]string>$/m);
});

const GOOD = `apiVersion: v1
kind: ServiceAccount
metadata:
  name: openapi-robot
  namespace: default
  labels:
    app: openapi
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: openapi-robot-view
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: view
subjects:
- kind: ServiceAccount
  name: openapi-robot
  namespace: default
`;

test('kubectl apply --dry-run=client and create with client-side validation accept a valid manifest', () => {
  const file = manifest('good.yaml', GOOD);
  const dry = ok('apply', '--dry-run=client', '--validate=strict', '-f', file);
  assert.match(dry, /serviceaccount\/openapi-robot created \(dry run\)/);
  assert.match(dry, /clusterrolebinding\.rbac\.authorization\.k8s\.io\/openapi-robot-view created \(dry run\)/);
  // kubectl 1.33 validates with --validate=strict by default.
  const created = ok('create', '-f', file);
  assert.match(created, /serviceaccount\/openapi-robot created/);
  assert.match(created, /clusterrolebinding\.rbac\.authorization\.k8s\.io\/openapi-robot-view created/);
  const crb = JSON.parse(ok('get', 'clusterrolebinding', 'openapi-robot-view', '-o', 'json'));
  assert.deepEqual(crb.subjects, [{ kind: 'ServiceAccount', name: 'openapi-robot', namespace: 'default' }]);
});

test('kubectl client-side validation rejects an unknown field, naming it, and nothing is created', () => {
  const file = manifest(
    'bad.yaml',
    `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: openapi-bad
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: view
subjects:
- kind: ServiceAccount
  name: openapi-robot
  namespace: default
  bogusField: true
`,
  );
  for (const args of [['create', '--validate=strict', '-f', file], ['create', '-f', file], ['apply', '--dry-run=client', '-f', file]]) {
    const r = kubectl(...args);
    assert.notEqual(r.code, 0, `kubectl ${args.join(' ')} should fail`);
    assert.match(r.stderr, /unknown field "bogusField" in io\.k8s\.api\.rbac\.v1\.Subject/);
  }
  const sa = manifest('bad-sa.yaml', 'apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: openapi-bad\n  namespace: default\nsecretz: []\n');
  assert.match(kubectl('create', '-f', sa).stderr, /unknown field "secretz" in io\.k8s\.api\.core\.v1\.ServiceAccount/);
  assert.notEqual(kubectl('get', 'clusterrolebinding', 'openapi-bad').code, 0);
  // With validation off the unknown field is dropped by the server's decoder.
  ok('create', '--validate=false', '-f', file);
  assert.equal(JSON.parse(ok('get', 'clusterrolebinding', 'openapi-bad', '-o', 'json')).subjects[0].bogusField, undefined);
});
