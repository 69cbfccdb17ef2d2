/**
 * Real CustomResourceDefinitions and ClusterRoles installed the way users install them, with the
 * real kubectl and helm and their client-side validation on (their default): `kubectl apply -f`,
 * `kubectl apply --server-side` and `helm install`. kubectl and helm validate against plinth's
 * published OpenAPI, so a CRD's string enum, scalar default or example must find
 * JSONSchemaProps' `default`/`enum`/`example` untyped there (kube's `JSON` definition has no
 * type), and custom resources must find their schemas published as kube publishes them (values
 * that keep any JSON untyped). A ClusterRole created by server-side apply must not gain an empty
 * aggregationRule. Fixtures: test/fixtures/crds/ (written for these tests in the style of
 * cert-manager and prometheus-operator).
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT, eventually, kubectlPath, tempDir, usePlinth } from './harness.js';
import { expectCode } from './assertions.js';

const env = usePlinth();
const FIXTURES = join(REPO_ROOT, 'test/fixtures/crds');
const work = tempDir('plinth-crd-install-');
after(() => rmSync(work, { recursive: true, force: true }));

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function run(cmd: string, args: string[], extraEnv: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(cmd, args, { encoding: 'utf8', timeout: 120_000, env: { ...process.env, ...extraEnv } }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

/** kubectl with a cache of its own (its OpenAPI cache must not outlive the server). */
function kubectl(...args: string[]): Promise<Run> {
  return run(kubectlPath(), ['--kubeconfig', env.plinth.server.kubeconfigPath, '--cache-dir', join(work, 'kubectl-cache'), ...args]);
}

function helmPath(): string {
  if (process.env['HELM']) return process.env['HELM'];
  const local = join(REPO_ROOT, '.tools/bin/helm');
  return existsSync(local) ? local : 'helm';
}

function helm(...args: string[]): Promise<Run> {
  const dirs = { HELM_CACHE_HOME: join(work, 'helm-cache'), HELM_CONFIG_HOME: join(work, 'helm-config'), HELM_DATA_HOME: join(work, 'helm-data') };
  return run(helmPath(), ['--kubeconfig', env.plinth.server.kubeconfigPath, ...args], dirs);
}

const fixture = (name: string): string => join(FIXTURES, name);

async function established(name: string): Promise<void> {
  await eventually(
    async () => {
      const crd = (await env.plinth.client.get(`/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`)).body;
      return crd?.status?.conditions?.some((c: { type: string; status: string }) => c.type === 'Established' && c.status === 'True');
    },
    15_000,
    `${name} established`,
  );
}

type Obj = Record<string, unknown>;
const o = (v: unknown): Obj => v as Obj;

describe('installing real CRDs and ClusterRoles with validating clients', () => {
  it('publishes JSONSchemaProps default, enum, example and the schema-or-* fields untyped, as kube does', async () => {
    const JSON_DEF = 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON';
    const v2 = await env.plinth.client.get('/openapi/v2');
    expectCode(v2, 200);
    const defs = o(v2.body.definitions);
    const props = o(o(defs['io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps'])['properties']);
    assert.equal(o(props['default'])['$ref'], `#/definitions/${JSON_DEF}`);
    assert.equal(o(props['example'])['$ref'], `#/definitions/${JSON_DEF}`);
    assert.deepEqual(o(props['enum'])['items'], { $ref: `#/definitions/${JSON_DEF}` });
    for (const [field, def] of [['items', 'JSONSchemaPropsOrArray'], ['additionalProperties', 'JSONSchemaPropsOrBool'], ['additionalItems', 'JSONSchemaPropsOrBool']]) {
      assert.equal(o(props[field!])['$ref'], `#/definitions/io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.${def}`, field);
    }
    assert.equal(o(o(props['dependencies'])['additionalProperties'])['$ref'], '#/definitions/io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrStringArray');
    for (const name of ['JSON', 'JSONSchemaPropsOrArray', 'JSONSchemaPropsOrBool', 'JSONSchemaPropsOrStringArray']) {
      const def = o(defs[`io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.${name}`]);
      assert.equal(def['type'], undefined, `${name} has no type`);
    }
    const v3 = await env.plinth.client.get('/openapi/v3/apis/apiextensions.k8s.io/v1');
    expectCode(v3, 200);
    const schemas = o(o(v3.body.components)['schemas']);
    assert.equal(o(schemas[JSON_DEF])['type'], undefined);
    const v3props = o(o(schemas['io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps'])['properties']);
    // v3 carries kube-openapi's enforced default of a struct element, beside the wrapped $ref.
    assert.deepEqual(o(v3props['enum'])['items'], { allOf: [{ $ref: `#/components/schemas/${JSON_DEF}` }], default: {} });
  });

  it('kubectl apply -f installs a CRD with string enums, scalar defaults and examples', async () => {
    const r = await kubectl('apply', '-f', fixture('credentials.yaml'));
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /customresourcedefinition\.apiextensions\.k8s\.io\/credentials\.pki\.example\.org created/);
    await established('credentials.pki.example.org');
    const crd = (await env.plinth.client.get('/apis/apiextensions.k8s.io/v1/customresourcedefinitions/credentials.pki.example.org')).body;
    const key = crd.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.key.properties;
    assert.deepEqual(key.algorithm.enum, ['RSA', 'ECDSA', 'Ed25519']);
    assert.equal(key.size.default, 2048);
  });

  it('kubectl apply --server-side installs a CRD with enums, defaults, int-or-string and fields of any JSON', async () => {
    const r = await kubectl('apply', '--server-side', '-f', fixture('monitors.yaml'));
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /customresourcedefinition\.apiextensions\.k8s\.io\/probes\.metrics\.example\.org serverside-applied/);
    await established('probes.metrics.example.org');
  });

  it('kubectl apply -f validates custom resources against their published schemas as kube publishes them', async () => {
    // Both CRDs must be in the published OpenAPI before kubectl reads it.
    await eventually(async () => {
      const defs = o((await env.plinth.client.get('/openapi/v2')).body.definitions);
      return defs['org.example.pki.v1.Credential'] && defs['org.example.metrics.v1.Probe'];
    }, 15_000, 'custom resource schemas published');
    const r = await kubectl('apply', '-f', fixture('instances.yaml'));
    assert.equal(r.code, 0, r.stderr);
    const web = (await env.plinth.client.get('/apis/pki.example.org/v1/namespaces/default/credentials/web')).body;
    // The schema's defaults were applied by the server.
    assert.equal(web.spec.validFor, '2160h');
    assert.equal(web.spec.key.rotation, 'Never');
    const api = (await env.plinth.client.get('/apis/metrics.example.org/v1/namespaces/default/probes/api')).body;
    assert.deepEqual(api.spec.extraConfig, ['first', 'second']);
    assert.equal(api.spec.port, 8443);
    assert.equal(api.spec.interval, '30s');
    // kubectl still refuses what the schema types: a string where an integer belongs.
    const bad = join(work, 'bad-probe.yaml');
    writeFileSync(bad, 'apiVersion: metrics.example.org/v1\nkind: Probe\nmetadata: {name: bad, namespace: default}\nspec: {sampleLimit: lots}\n');
    const refused = await kubectl('apply', '-f', bad);
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /sampleLimit/);
  });

  it('publishes custom resource schemas for Swagger 2.0 as kube filters them for kubectl', async () => {
    const defs = o((await env.plinth.client.get('/openapi/v2')).body.definitions);
    const spec = o(o(o(defs['org.example.metrics.v1.Probe'])['properties'])['spec']);
    const props = o(spec['properties']);
    // Any JSON: untyped. An object keeping unknown fields: untyped, no properties.
    assert.equal(o(props['extraConfig'])['type'], undefined);
    assert.equal(o(props['extraConfig'])['x-kubernetes-preserve-unknown-fields'], true);
    assert.equal(o(props['selector'])['type'], undefined);
    assert.equal(o(props['port'])['type'], undefined);
    assert.equal(o(props['port'])['x-kubernetes-int-or-string'], true);
    const cred = o(o(o(o(defs['org.example.pki.v1.Credential'])['properties'])['spec'])['properties']);
    // Nullable: untyped in Swagger 2.0 (kube's ToStructuralOpenAPIV2).
    assert.equal(o(cred['renewBefore'])['type'], undefined);
    assert.equal(o(cred['commonName'])['type'], 'string');
    // A version whose root keeps unknown fields is a bare object.
    assert.deepEqual(o(defs['org.example.metrics.v1beta1.Probe'])['properties'], undefined);
    // OpenAPI v3 keeps the types and says what is nullable.
    const v3 = o(o((await env.plinth.client.get('/openapi/v3/apis/pki.example.org/v1')).body.components)['schemas']);
    const v3cred = o(o(o(o(v3['org.example.pki.v1.Credential'])['properties'])['spec'])['properties']);
    assert.deepEqual(o(v3cred['renewBefore']), { nullable: true, type: 'string' });
  });

  it('kubectl apply --server-side creates ClusterRoles without an aggregationRule, and keeps one that has it', async () => {
    const r = await kubectl('apply', '--server-side', '-f', fixture('clusterroles.yaml'));
    assert.equal(r.code, 0, r.stderr);
    for (const name of ['pki-example-viewer', 'metrics-example-editor']) {
      const role = await env.plinth.client.get(`/apis/rbac.authorization.k8s.io/v1/clusterroles/${name}`);
      expectCode(role, 200);
      assert.equal(role.body.aggregationRule, undefined, `${name} has no aggregationRule`);
    }
    const agg = (await env.plinth.client.get('/apis/rbac.authorization.k8s.io/v1/clusterroles/pki-example-aggregate')).body;
    assert.deepEqual(agg.aggregationRule, { clusterRoleSelectors: [{ matchLabels: { 'pki.example.org/aggregate-to-view': 'true' } }] });
    // Applying the same file again changes nothing.
    const again = await kubectl('apply', '--server-side', '-f', fixture('clusterroles.yaml'));
    assert.equal(again.code, 0, again.stderr);
  });

  it('server-side apply creates Events without a series (a pointer in kube: absent unless set)', async () => {
    const apply = (path: string, body: object) =>
      env.plinth.client.request('PATCH', `${path}?fieldManager=recorder`, { rawBody: JSON.stringify(body), headers: { 'content-type': 'application/apply-patch+yaml' } });
    const core = await apply('/api/v1/namespaces/default/events/ssa-core', {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: 'ssa-core' },
      involvedObject: { kind: 'ConfigMap', name: 'c', namespace: 'default' },
      reason: 'Synced',
      message: 'ok',
      type: 'Normal',
    });
    expectCode(core, 201);
    assert.equal(core.body.series, undefined);
    const grouped = await apply('/apis/events.k8s.io/v1/namespaces/default/events/ssa-grouped', {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: { name: 'ssa-grouped' },
      eventTime: '2024-05-01T10:00:00.000000Z',
      regarding: { kind: 'ConfigMap', name: 'c', namespace: 'default' },
      reason: 'Synced',
      note: 'ok',
      type: 'Normal',
      action: 'Sync',
      reportingController: 'example.org/syncer',
      reportingInstance: 'syncer-1',
    });
    expectCode(grouped, 201);
    assert.equal(grouped.body.series, undefined);
  });

  it('helm install of a chart that templates a CRD with enums and defaults, and a ClusterRole', async () => {
    const chart = join(work, 'chart');
    mkdirSync(join(chart, 'templates'), { recursive: true });
    writeFileSync(join(chart, 'Chart.yaml'), 'apiVersion: v2\nname: pki-example\nversion: 0.1.0\n');
    // The CRD goes through templates/ (as charts with an installCRDs value do), so helm validates it.
    const crd = readFileSync(fixture('credentials.yaml'), 'utf8').replaceAll('credentials', 'keypairs').replaceAll('Credential', 'KeyPair').replaceAll('credential', 'keypair').replace('shortNames: [cred]', 'shortNames: [kp]');
    writeFileSync(join(chart, 'templates', 'crd.yaml'), crd);
    writeFileSync(
      join(chart, 'templates', 'role.yaml'),
      'apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: {{ .Release.Name }}-keypair-viewer\nrules:\n  - apiGroups: [pki.example.org]\n    resources: [keypairs]\n    verbs: [get, list, watch]\n',
    );
    const r = await helm('install', 'pki', chart, '--namespace', 'default');
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /STATUS: deployed/);
    await established('keypairs.pki.example.org');
    expectCode(await env.plinth.client.get('/apis/rbac.authorization.k8s.io/v1/clusterroles/pki-keypair-viewer'), 200);
  });
});
