/** Protobuf over HTTP: bodies in and out, kube's envelope, watch frames; JSON stays the default. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeProtobuf, encodeProtobuf, decodeWatchEventFrames } from '@plinth/apiserver';
import { execFile } from 'node:child_process';
import { eventually, kubectlPath, tempDir, usePlinth } from './harness.js';

const env = usePlinth();
const PB = 'application/vnd.kubernetes.protobuf';

test('an object created in JSON reads back as Protobuf with the k8s envelope', async () => {
  const c = env.plinth.client;
  assert.equal((await c.post('/api/v1/namespaces/default/serviceaccounts', { metadata: { name: 'pb-json', labels: { a: 'b' } } })).status, 201);
  for (const accept of [PB, 'application/vnd.platform.protobuf', `${PB},application/json`]) {
    const r = await c.get('/api/v1/namespaces/default/serviceaccounts/pb-json', { headers: { accept } });
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-type'], accept.split(',')[0]);
    assert.deepEqual([...r.raw.subarray(0, 4)], [0x6b, 0x38, 0x73, 0x00]);
    const obj = decodeProtobuf(r.raw) as { kind: string; metadata: { name: string; labels: Record<string, string> } };
    assert.equal(obj.kind, 'ServiceAccount');
    assert.equal(obj.metadata.name, 'pb-json');
    assert.deepEqual(obj.metadata.labels, { a: 'b' });
  }
  const list = await c.get('/api/v1/namespaces/default/serviceaccounts', { headers: { accept: PB } });
  const decoded = decodeProtobuf(list.raw) as { kind: string; items: Array<{ metadata: { name: string } }> };
  assert.equal(decoded.kind, 'ServiceAccountList');
  assert.ok(decoded.items.some((i) => i.metadata.name === 'pb-json'));
});

test('an object created from a Protobuf body reads back as JSON', async () => {
  const body = encodeProtobuf({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: 'pb-crb' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
    subjects: [{ kind: 'User', name: 'alice' }],
  });
  const r = await env.plinth.client.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', { rawBody: body, headers: { 'content-type': PB } });
  assert.equal(r.status, 201, r.raw.toString());
  const got = await env.plinth.client.get('/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/pb-crb');
  assert.equal(got.headers['content-type'], 'application/json');
  assert.deepEqual(got.body.subjects, [{ kind: 'User', name: 'alice', apiGroup: 'rbac.authorization.k8s.io' }]);
});

test('a Protobuf body with a wrong prefix is 400 and stores nothing; unsupported types are 415 and 406', async () => {
  const good = encodeProtobuf({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'pb-bad' } });
  const bad = Buffer.concat([Buffer.from([0x6b, 0x38, 0x73, 0x01]), good.subarray(4)]);
  const r = await env.plinth.client.request('POST', '/api/v1/namespaces/default/serviceaccounts', { rawBody: bad, headers: { 'content-type': PB } });
  assert.equal(r.status, 400);
  assert.equal(r.body.reason, 'BadRequest');
  assert.equal((await env.plinth.client.get('/api/v1/namespaces/default/serviceaccounts/pb-bad')).status, 404);
  const unsupported = await env.plinth.client.request('POST', '/api/v1/namespaces/default/serviceaccounts', { rawBody: 'x', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
  assert.equal(unsupported.status, 415);
  assert.equal(unsupported.body.reason, 'UnsupportedMediaType');
  const notAcceptable = await env.plinth.client.get('/api/v1/namespaces/default/serviceaccounts', { headers: { accept: 'application/xml' } });
  assert.equal(notAcceptable.status, 406);
  assert.equal(notAcceptable.body.reason, 'NotAcceptable');
});

test('a Protobuf watch streams length-prefixed WatchEvent frames', async () => {
  const c = env.plinth.client;
  const rv = (await c.get('/api/v1/namespaces/default/serviceaccounts')).body.metadata.resourceVersion;
  // The watch starts after rv, so the create below is seen however the two race.
  const pending = c.get(`/api/v1/namespaces/default/serviceaccounts?watch=1&resourceVersion=${rv}&timeoutSeconds=2`, { headers: { accept: PB } });
  await c.post('/api/v1/namespaces/default/serviceaccounts', { metadata: { name: 'pb-watch' } });
  const r = await pending;
  assert.equal(r.headers['content-type'], `${PB};stream=watch`);
  const events = decodeWatchEventFrames(r.raw);
  const added = events.find((e) => e.type === 'ADDED');
  assert.ok(added, 'an ADDED frame');
  assert.equal((added!.object as { metadata: { name: string } }).metadata.name, 'pb-watch');
});

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

async function established(name: string): Promise<any> {
  return eventually(async () => {
    const r = await env.plinth.client.get(`${CRDS}/${name}`);
    const ok = r.body?.status?.conditions?.some((c: { type: string; status: string }) => c.type === 'Established' && c.status === 'True');
    return ok ? r.body : undefined;
  }, 10_000, `${name} Established`);
}

function kubectl(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(kubectlPath(), ['--kubeconfig', env.plinth.server.kubeconfigPath, '--cache-dir', cacheDir, ...args], { encoding: 'utf8', timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}
const cacheDir = tempDir('plinth-kubectl-cache-');

const gadgetSchema = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      required: ['size'],
      properties: {
        size: { type: 'integer', minimum: 0, maximum: 10, default: 1 },
        mode: { type: 'string', enum: ['fast', 'slow'] },
        port: { 'x-kubernetes-int-or-string': true },
        labels: { type: 'object', additionalProperties: { type: 'string' } },
        free: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
        ports: {
          type: 'array',
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['name'],
          items: { type: 'object', required: ['name'], properties: { name: { type: 'string' }, number: { type: 'integer' } } },
        },
      },
    },
    status: { type: 'object', properties: { replicas: { type: 'integer' } } },
  },
};

const gadgetCRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'gadgets.pb.example.com' },
  spec: {
    group: 'pb.example.com',
    scope: 'Namespaced',
    names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget', listKind: 'GadgetList', shortNames: ['gd'] },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: { openAPIV3Schema: gadgetSchema },
        subresources: { status: {}, scale: { specReplicasPath: '.spec.size', statusReplicasPath: '.status.replicas' } },
        additionalPrinterColumns: [{ name: 'Size', type: 'integer', jsonPath: '.spec.size' }],
      },
    ],
    conversion: { strategy: 'None' },
  },
};

test('a CustomResourceDefinition created from a Protobuf body reads back as Protobuf and JSON, serves its resources, and kubectl get crd lists it', async () => {
  const c = env.plinth.client;
  const created = await c.request('POST', CRDS, { rawBody: encodeProtobuf(gadgetCRD), headers: { 'content-type': PB, accept: PB } });
  assert.equal(created.status, 201, created.raw.toString());
  assert.equal(created.headers['content-type'], PB);
  const fromCreate = decodeProtobuf(created.raw) as any;
  assert.equal(fromCreate.kind, 'CustomResourceDefinition');
  assert.deepEqual(fromCreate.spec.versions[0].schema.openAPIV3Schema, gadgetSchema);

  await established(gadgetCRD.metadata.name);
  const asJson = await c.get(`${CRDS}/${gadgetCRD.metadata.name}`);
  assert.equal(asJson.headers['content-type'], 'application/json');
  assert.deepEqual(asJson.body.spec.versions[0].schema.openAPIV3Schema, gadgetSchema);
  assert.deepEqual(asJson.body.spec.versions[0].subresources, gadgetCRD.spec.versions[0]!.subresources);
  assert.deepEqual(asJson.body.spec.names, gadgetCRD.spec.names);
  const asPb = await c.get(`${CRDS}/${gadgetCRD.metadata.name}`, { headers: { accept: PB } });
  assert.equal(asPb.headers['content-type'], PB);
  // The Protobuf form carries exactly what the JSON form does, status included.
  assert.deepEqual(decodeProtobuf(asPb.raw), asJson.body);
  const list = await c.get(CRDS, { headers: { accept: PB } });
  const decoded = decodeProtobuf(list.raw) as { kind: string; items: Array<{ metadata: { name: string } }> };
  assert.equal(decoded.kind, 'CustomResourceDefinitionList');
  assert.ok(decoded.items.some((i) => i.metadata.name === gadgetCRD.metadata.name));

  // The schema sent as Protobuf validates and defaults the custom resources.
  const gadgets = '/apis/pb.example.com/v1/namespaces/default/gadgets';
  await eventually(async () => (await c.get(gadgets)).status === 200, 5000, 'gadgets served');
  const cr = await c.post(gadgets, { apiVersion: 'pb.example.com/v1', kind: 'Gadget', metadata: { name: 'g1' }, spec: { size: 2, port: 'http', free: { any: ['thing'] }, ports: [{ name: 'a', number: 1 }] } });
  assert.equal(cr.status, 201, JSON.stringify(cr.body));
  const invalid = await c.post(gadgets, { apiVersion: 'pb.example.com/v1', kind: 'Gadget', metadata: { name: 'g2' }, spec: { size: 11, mode: 'medium' } });
  assert.equal(invalid.status, 422);
  assert.equal(invalid.body.reason, 'Invalid');

  const r = await kubectl('get', 'crd', gadgetCRD.metadata.name);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^NAME\s+CREATED AT\n/);
  assert.match(r.stdout, /\ngadgets\.pb\.example\.com\s+\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z\n/);
  const yaml = await kubectl('get', 'crd', gadgetCRD.metadata.name, '-o', 'jsonpath={.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.port.x-kubernetes-int-or-string}');
  assert.equal(yaml.code, 0, yaml.stderr);
  assert.equal(yaml.stdout, 'true');
});

test('a Protobuf CustomResourceDefinition body that fails validation is 422 and stores nothing', async () => {
  const c = env.plinth.client;
  const bad = { ...gadgetCRD, metadata: { name: 'bad.pb.example.com' } };
  const r = await c.request('POST', CRDS, { rawBody: encodeProtobuf(bad), headers: { 'content-type': PB } });
  assert.equal(r.status, 422, r.raw.toString());
  assert.equal(r.body.reason, 'Invalid');
  assert.equal((await c.get(`${CRDS}/bad.pb.example.com`)).status, 404);
});

test('custom resources have no Protobuf form: JSON to a Protobuf-first Accept, 406 to Protobuf only, 415 to a Protobuf body', async () => {
  const c = env.plinth.client;
  const crd = {
    ...gadgetCRD,
    metadata: { name: 'things.json.example.com' },
    spec: { ...gadgetCRD.spec, group: 'json.example.com', names: { plural: 'things', singular: 'thing', kind: 'Thing', listKind: 'ThingList' } },
  };
  assert.equal((await c.post(CRDS, crd)).status, 201);
  await established(crd.metadata.name);
  const things = '/apis/json.example.com/v1/namespaces/default/things';
  await eventually(async () => (await c.get(things)).status === 200, 5000, 'things served');
  assert.equal((await c.post(things, { apiVersion: 'json.example.com/v1', kind: 'Thing', metadata: { name: 't1' }, spec: { size: 1 } })).status, 201);
  for (const path of [things, `${things}/t1`]) {
    const fallback = await c.get(path, { headers: { accept: `${PB}, application/json` } });
    assert.equal(fallback.status, 200);
    assert.equal(fallback.headers['content-type'], 'application/json');
    assert.ok(fallback.body.kind === 'ThingList' || fallback.body.kind === 'Thing');
    const only = await c.get(path, { headers: { accept: PB } });
    assert.equal(only.status, 406);
    assert.equal(only.body.reason, 'NotAcceptable');
  }
  const body = encodeProtobuf({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'not-a-thing' } });
  const posted = await c.request('POST', things, { rawBody: body, headers: { 'content-type': PB } });
  assert.equal(posted.status, 415);
  assert.equal(posted.body.reason, 'UnsupportedMediaType');
  assert.equal((await c.get(`${things}/not-a-thing`)).status, 404);
});
