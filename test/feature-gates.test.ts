/**
 * --feature-gates: kube's validation at start (unknown gate, locked gate), and the gates plinth
 * wires to behaviour: APIListChunking, ServerSideApply, ServerSideFieldValidation and
 * ConsistentListFromCache.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { EXECUTABLE, withInProcess, startInProcess, startTestEtcd, tempDir, type InProcessPlinth, type TestEtcd } from './harness.js';

let etcd: TestEtcd;

before(async () => {
  etcd = await startTestEtcd();
});

after(async () => {
  await etcd.stop();
});

const withPlinth = <T>(args: string[], fn: (p: InProcessPlinth) => Promise<T>): Promise<T> => withInProcess(etcd, args, fn);

function runExecutable(args: string[]): { code: number | null; output: string } {
  const r = spawnSync(process.execPath, [EXECUTABLE, '--secure-port=0', '--bind-address=127.0.0.1', `--data-dir=${tempDir('plinth-fg-')}`, `--etcd-servers=${etcd.endpoint}`, ...args], { encoding: 'utf8', timeout: 30_000 });
  return { code: r.status, output: `${r.stdout}${r.stderr}` };
}

test('an unknown gate and a locked gate set away from its default stop the start', () => {
  let r = runExecutable(['--feature-gates=NoSuchGate=true']);
  assert.notEqual(r.code, 0, r.output);
  assert.match(r.output, /unrecognized feature gate: NoSuchGate/);
  r = runExecutable(['--feature-gates=WatchBookmark=false']);
  assert.notEqual(r.code, 0, r.output);
  assert.match(r.output, /cannot set feature gate WatchBookmark to false, feature is locked to true/);
});

test('--help lists every gate kube’s way and says which change nothing', () => {
  const r = spawnSync(process.execPath, [EXECUTABLE, '--help'], { encoding: 'utf8' });
  assert.equal(r.status, 0);
  assert.match(r.stdout, /APIListChunking=true\|false \(BETA - default=true\)\n/);
  assert.match(r.stdout, /ServerSideFieldValidation=true\|false \(ALPHA - default=false\)\n/);
  assert.match(r.stdout, /WatchBookmark=true\|false \(GA - default=true, locked\)\n/);
  assert.match(r.stdout, /OpenAPIEnums=true\|false \(BETA - default=true\) \[declared, not implemented\]/);
  assert.match(r.stdout, /PodSecurity=true\|false \(BETA - default=true\)\n/);
});

test('APIListChunking=false: limit and continue are ignored, the whole list comes back without a continue token', async () => {
  // The selector leaves out the namespace's kube-root-ca.crt, published whenever its controller gets to it.
  await withPlinth(['--feature-gates=APIListChunking=false'], async ({ client }) => {
    await client.post('/api/v1/namespaces', { metadata: { name: 'chunks' } });
    for (let i = 0; i < 5; i++) assert.equal((await client.post('/api/v1/namespaces/chunks/configmaps', { metadata: { name: `cm-${i}`, labels: { t: 'c' } } })).status, 201);
    const list = await client.get('/api/v1/namespaces/chunks/configmaps?labelSelector=t%3Dc&limit=2');
    assert.equal(list.status, 200);
    assert.equal(list.body.items.length, 5);
    assert.ok(!list.body.metadata.continue, 'no continue token');
    // A continue token (here a made-up one) is ignored too.
    const cont = await client.get('/api/v1/namespaces/chunks/configmaps?labelSelector=t%3Dc&limit=2&continue=junk');
    assert.equal(cont.status, 200);
    assert.equal(cont.body.items.length, 5);
  });
  // The gate on (default): the same list is paged.
  await withPlinth([], async ({ client }) => {
    const list = await client.get('/api/v1/namespaces/chunks/configmaps?labelSelector=t%3Dc&limit=2');
    assert.equal(list.body.items.length, 2);
    assert.ok(list.body.metadata.continue);
  });
});

test('ServerSideApply=false: an apply patch gets 415 and writes record no managedFields', async () => {
  await withPlinth(['--feature-gates=ServerSideApply=false'], async ({ client }) => {
    const apply = await client.request('PATCH', '/api/v1/namespaces/default/configmaps/applied?fieldManager=me', {
      body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'applied' }, data: { a: '1' } },
      headers: { 'content-type': 'application/apply-patch+yaml' },
    });
    assert.equal(apply.status, 415);
    assert.equal(apply.body.reason, 'UnsupportedMediaType');
    assert.ok(!apply.body.message.includes('apply-patch'), apply.body.message);
    const created = await client.post('/api/v1/namespaces/default/configmaps', { metadata: { name: 'untracked' }, data: { a: '1' } });
    assert.equal(created.status, 201);
    assert.equal(created.body.metadata.managedFields, undefined);
    const merged = await client.request('PATCH', '/api/v1/namespaces/default/configmaps/untracked', { body: { data: { b: '2' } }, headers: { 'content-type': 'application/merge-patch+json' } });
    assert.equal(merged.status, 200);
    assert.equal(merged.body.metadata.managedFields, undefined);
  });
});

test('ServerSideFieldValidation=true: Strict rejects unknown fields, Warn warns, Ignore drops; a bad value is refused', async () => {
  await withPlinth(['--feature-gates=ServerSideFieldValidation=true'], async ({ client }) => {
    const cm = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, bogus: 1 }, data: { a: '1' }, spec: { foo: 1 } });
    const strict = await client.post('/api/v1/namespaces/default/configmaps?fieldValidation=Strict', cm('strict'));
    assert.equal(strict.status, 400);
    assert.equal(strict.body.reason, 'BadRequest');
    assert.equal(strict.body.message, 'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "metadata.bogus", unknown field "spec"');
    assert.equal((await client.get('/api/v1/namespaces/default/configmaps/strict')).status, 404);

    const warn = await client.post('/api/v1/namespaces/default/configmaps?fieldValidation=Warn', cm('warn'));
    assert.equal(warn.status, 201);
    const warnings = String(warn.headers['warning']);
    assert.ok(warnings.includes('299 - "unknown field \\"metadata.bogus\\""'), warnings);
    assert.ok(warnings.includes('299 - "unknown field \\"spec\\""'), warnings);
    assert.equal(warn.body.spec, undefined);

    const ignore = await client.post('/api/v1/namespaces/default/configmaps?fieldValidation=Ignore', cm('ignore'));
    assert.equal(ignore.status, 201);
    assert.equal(ignore.headers['warning'], undefined);

    // Update and patch are checked the same way (nested paths, list indexes).
    const update = await client.put('/api/v1/namespaces/default/serviceaccounts/default?fieldValidation=Strict', {
      apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default' }, secrets: [{ name: 's', junk: true }],
    });
    assert.equal(update.status, 400);
    assert.match(update.body.message, /strict decoding error: unknown field "secrets\[0\]\.junk"/);
    const patch = await client.request('PATCH', '/api/v1/namespaces/default/configmaps/warn?fieldValidation=Strict', { body: { extra: { x: 1 } }, headers: { 'content-type': 'application/merge-patch+json' } });
    assert.equal(patch.status, 400);
    assert.match(patch.body.message, /unknown field "extra"/);

    // Duplicate keys in a YAML body: kept (the last value) unless strict, reported as yaml.v2 words
    // them (kube 1.24: the strict serializer's YAMLToJSONStrict, applyPatcher's UnmarshalStrict).
    const dupYaml = (name: string): string => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  a: first\n  a: last\n`;
    const yamlPost = (name: string, v: string) =>
      client.request('POST', `/api/v1/namespaces/default/configmaps?fieldValidation=${v}`, { rawBody: dupYaml(name), headers: { 'content-type': 'application/yaml' } });
    const dupStrict = await yamlPost('dup-strict', 'Strict');
    assert.equal(dupStrict.status, 400);
    assert.equal(dupStrict.body.message, 'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: yaml: unmarshal errors:\n  line 7: key "a" already set in map');
    const dupWarn = await yamlPost('dup-warn', 'Warn');
    assert.equal(dupWarn.status, 201);
    assert.equal(dupWarn.body.data.a, 'last');
    assert.ok(String(dupWarn.headers['warning']).includes('299 - "line 7: key \\"a\\" already set in map"'), String(dupWarn.headers['warning']));
    const dupApply = await client.request('PATCH', '/api/v1/namespaces/default/configmaps/dup-apply?fieldManager=m&fieldValidation=Strict', { rawBody: dupYaml('dup-apply'), headers: { 'content-type': 'application/apply-patch+yaml' } });
    assert.equal(dupApply.status, 400);
    assert.equal(dupApply.body.message, 'error strict decoding YAML: error converting YAML to JSON: yaml: unmarshal errors:\n  line 7: key "a" already set in map');

    // OpenAPI advertises the parameter (what kubectl checks before sending it).
    const put = (await client.get('/openapi/v2')).body.paths['/api/v1/namespaces/{namespace}/configmaps/{name}'].put;
    assert.ok(put.parameters.some((q: { name: string }) => q.name === 'fieldValidation'));

    const bad = await client.post('/api/v1/namespaces/default/configmaps?fieldValidation=Loud', cm('bad'));
    assert.equal(bad.status, 422);
    assert.equal(bad.body.message, 'CreateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "Loud": supported values: "", "Ignore", "Strict", "Warn"');
  });
  // The gate off (default): unknown fields are dropped whatever the parameter says.
  await withPlinth([], async ({ client }) => {
    const r = await client.post('/api/v1/namespaces/default/configmaps?fieldValidation=Strict', { metadata: { name: 'gate-off' }, spec: { foo: 1 } });
    assert.equal(r.status, 201);
    assert.equal(r.headers['warning'], undefined);
    const put = (await client.get('/openapi/v2')).body.paths['/api/v1/namespaces/{namespace}/configmaps/{name}'].put;
    assert.ok(!put.parameters.some((q: { name: string }) => q.name === 'fieldValidation'));
  });
});

test('ConsistentListFromCache=false: consistent reads go to etcd, not the watch cache', async () => {
  const reads = (p: InProcessPlinth) => {
    const all = p.server.watchCaches!.all().map((c) => c.stats());
    return { cache: all.reduce((n, s) => n + s.consistentReadsFromCache, 0), etcd: all.reduce((n, s) => n + s.consistentReadsFromEtcd, 0) };
  };
  await withPlinth(['--feature-gates=ConsistentListFromCache=false'], async (p) => {
    const before = reads(p);
    assert.equal((await p.client.get('/api/v1/namespaces/default/configmaps')).status, 200);
    assert.equal((await p.client.get('/api/v1/namespaces/default')).status, 200);
    const after = reads(p);
    assert.equal(after.cache, before.cache);
    assert.ok(after.etcd >= before.etcd + 2, `${JSON.stringify({ before, after })}`);
  });
  await withPlinth([], async (p) => {
    const before = reads(p);
    assert.equal((await p.client.get('/api/v1/namespaces/default/configmaps')).status, 200);
    const after = reads(p);
    assert.ok(after.cache > before.cache);
    assert.equal(after.etcd, before.etcd);
  });
});
