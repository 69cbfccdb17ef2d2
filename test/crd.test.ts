/**
 * CustomResourceDefinitions served as kube's apiextensions-apiserver serves them, against real
 * plinth servers sharing one etcd: Established status, custom resources with every verb, schema
 * validation, defaulting and pruning, status and scale sub-resources, printer columns through
 * kubectl, apply with list-map keys, a deprecated version, media types, CRD deletion, and a
 * second replica serving what the first created.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { rmSync } from 'node:fs';
import { Etcd3 } from 'etcd3';
import { eventually, kubectlPath, startInProcess, startTestEtcd, tempDir, type InProcessPlinth, type TestEtcd } from './harness.js';
import { expectCode, expectStatus } from './assertions.js';

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const widgets = (ns: string, name = '', version = 'v1'): string => `/apis/example.com/${version}/namespaces/${ns}/widgets${name ? `/${name}` : ''}`;

const schema = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      properties: {
        size: { type: 'integer', maximum: 100 },
        color: { type: 'string', default: 'blue' },
        replicas: { type: 'integer' },
        ports: {
          type: 'array',
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['name'],
          items: { type: 'object', required: ['name'], properties: { name: { type: 'string' }, port: { type: 'integer' } } },
        },
      },
    },
    status: { type: 'object', properties: { replicas: { type: 'integer' }, selector: { type: 'string' }, phase: { type: 'string' } } },
  },
};

const version = (name: string, extra: object = {}): object => ({
  name,
  served: true,
  storage: name === 'v1',
  schema: { openAPIV3Schema: schema },
  subresources: { status: {}, scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.selector' } },
  additionalPrinterColumns: [
    { name: 'Size', type: 'integer', jsonPath: '.spec.size' },
    { name: 'Color', type: 'string', jsonPath: '.spec.color' },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  ],
  ...extra,
});

const widgetCRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.example.com' },
  spec: {
    group: 'example.com',
    scope: 'Namespaced',
    names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList', shortNames: ['wd'] },
    versions: [version('v1'), version('v1beta1', { deprecated: true })],
  },
};

const widget = (name: string, spec: object = { size: 3 }, extra: object = {}): object => ({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name }, spec, ...extra });

let etcd: TestEtcd;
let a: InProcessPlinth;
let b: InProcessPlinth;
const cacheDir = tempDir('plinth-kubectl-cache-');

function kubectl(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(kubectlPath(), ['--kubeconfig', a.server.kubeconfigPath, '--cache-dir', cacheDir, ...args], { encoding: 'utf8', timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

async function established(name: string, server = a): Promise<any> {
  return eventually(async () => {
    const r = await server.client.get(`${CRDS}/${name}`);
    const ok = r.body?.status?.conditions?.some((c: { type: string; status: string }) => c.type === 'Established' && c.status === 'True');
    return ok ? r.body : undefined;
  }, 10_000, `${name} Established`);
}

before(async () => {
  etcd = await startTestEtcd();
  a = await startInProcess({ etcd });
  b = await startInProcess({ etcd });
  await a.client.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'crd' } });
  expectCode(await a.client.post(CRDS, widgetCRD), 201, 'create CRD');
  await established('widgets.example.com');
  await eventually(async () => (await a.client.get(widgets('crd'))).status === 200, 5000, 'widgets served');
});

after(async () => {
  await b?.stop();
  await a?.stop();
  await etcd?.stop();
  rmSync(cacheDir, { recursive: true, force: true });
});

describe('CRD status and discovery', () => {
  it('is Established with its names accepted and its storage version recorded', async () => {
    const crd = (await a.client.get(`${CRDS}/widgets.example.com`)).body;
    const cond = (t: string) => crd.status.conditions.find((c: { type: string }) => c.type === t);
    assert.deepEqual([cond('NamesAccepted').status, cond('NamesAccepted').reason, cond('NamesAccepted').message], ['True', 'NoConflicts', 'no conflicts found']);
    assert.deepEqual([cond('Established').status, cond('Established').reason], ['True', 'InitialNamesAccepted']);
    assert.deepEqual(crd.status.acceptedNames, widgetCRD.spec.names);
    assert.deepEqual(crd.status.storedVersions, ['v1']);
  });

  it('a second CRD of the group with a taken plural is not accepted, with kube reason and message', async () => {
    const clash = structuredClone(widgetCRD) as any;
    clash.metadata.name = 'gadgets.example.com';
    clash.spec.names = { plural: 'gadgets', singular: 'gadget', kind: 'Widget', listKind: 'GadgetList' };
    expectCode(await a.client.post(CRDS, clash), 201);
    const crd = await eventually(async () => {
      const r = await a.client.get(`${CRDS}/gadgets.example.com`);
      return r.body?.status?.conditions?.some((c: { type: string }) => c.type === 'NamesAccepted') ? r.body : undefined;
    }, 10_000, 'NamesAccepted condition');
    const na = crd.status.conditions.find((c: { type: string }) => c.type === 'NamesAccepted');
    assert.deepEqual([na.status, na.reason, na.message], ['False', 'KindConflict', '"Widget" is already in use']);
    const est = crd.status.conditions.find((c: { type: string }) => c.type === 'Established');
    assert.deepEqual([est.status, est.reason], ['False', 'NotAccepted']);
    expectCode(await a.client.get('/apis/example.com/v1/namespaces/crd/gadgets'), 404);
    expectCode(await a.client.delete(`${CRDS}/gadgets.example.com`), 200);
  });

  it('discovery lists every served version, the highest-priority one preferred', async () => {
    const group = (await a.client.get('/apis/example.com')).body;
    assert.deepEqual(group.versions.map((v: { version: string }) => v.version), ['v1', 'v1beta1']);
    assert.equal(group.preferredVersion.version, 'v1');
    const list = (await a.client.get('/apis/example.com/v1')).body;
    const names = list.resources.map((r: { name: string }) => r.name);
    assert.deepEqual(names, ['widgets', 'widgets/status', 'widgets/scale']);
    const main = list.resources[0];
    assert.equal(main.kind, 'Widget');
    assert.equal(main.namespaced, true);
    assert.deepEqual(main.shortNames, ['wd']);
    assert.deepEqual([...main.verbs].sort(), ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch']);
    const scale = list.resources[2];
    assert.deepEqual([scale.group, scale.version, scale.kind], ['autoscaling', 'v1', 'Scale']);
  });
});

describe('custom resources', () => {
  it('create defaults, prunes unknown fields and counts generations; get, list, update, delete', async () => {
    const created = await a.client.post(widgets('crd'), widget('w1', { size: 3, bogus: true }, { extra: 1 }));
    expectCode(created, 201);
    assert.deepEqual(created.body.spec, { size: 3, color: 'blue' });
    assert.equal(created.body.extra, undefined);
    assert.equal(created.body.metadata.generation, 1);
    assert.equal((await a.client.get(widgets('crd', 'w1'))).body.spec.color, 'blue');

    const updated = await a.client.put(widgets('crd', 'w1'), { ...created.body, spec: { size: 4, color: 'red' } });
    expectCode(updated, 200);
    assert.equal(updated.body.metadata.generation, 2);
    const labelled = await a.client.put(widgets('crd', 'w1'), { ...updated.body, metadata: { ...updated.body.metadata, labels: { tier: 'x' } } });
    expectCode(labelled, 200);
    assert.equal(labelled.body.metadata.generation, 2, 'a metadata change is not a new generation');

    const list = await a.client.get(widgets('crd'));
    assert.equal(list.body.kind, 'WidgetList');
    assert.equal(list.body.apiVersion, 'example.com/v1');
    assert.ok(list.body.items.some((i: { metadata: { name: string } }) => i.metadata.name === 'w1'));
    expectCode(await a.client.delete(widgets('crd', 'w1')), 200);
    expectStatus(await a.client.get(widgets('crd', 'w1')), 404, 'NotFound', 'widgets.example.com "w1" not found');
  });

  it('an object stored without a defaulted field gets the default on every read; one stored with it is served as stored', async () => {
    // Objects written without the default (an older schema, another writer): kube defaults them
    // when it reads them from storage. The key's layout is read off an object plinth wrote.
    expectCode(await a.client.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'crd-read' } }), 201);
    expectCode(await a.client.post(widgets('crd-read'), widget('full', { size: 1, color: 'green' })), 201);
    const raw = new Etcd3({ hosts: [etcd.endpoint] });
    try {
      const keys = await raw.getAll().prefix('/registry/').keys();
      const fullKey = keys.find((k) => k.endsWith('/crd-read/full'))!;
      assert.ok(fullKey, 'the stored key of a widget');
      const stored = JSON.parse((await raw.get(fullKey).string())!) as { metadata: Record<string, unknown>; spec: Record<string, unknown> };
      const bare = { ...stored, metadata: { ...stored.metadata, name: 'bare', uid: 'bare-uid' }, spec: { size: 2 } };
      await raw.put(fullKey.replace(/\/full$/, '/bare')).value(JSON.stringify(bare));
    } finally {
      raw.close();
    }
    const specs = (items: Array<{ metadata: { name: string }; spec: unknown }>): Record<string, unknown> => Object.fromEntries(items.map((i) => [i.metadata.name, i.spec]));
    const want = { bare: { size: 2, color: 'blue' }, full: { size: 1, color: 'green' } };
    await eventually(async () => (await a.client.get(widgets('crd-read', 'bare'))).status === 200, 10_000, 'the written object in the cache');
    // Twice: the second read of each is the cache's, after its check of the defaults.
    for (let i = 0; i < 2; i++) {
      assert.deepEqual((await a.client.get(widgets('crd-read', 'bare'))).body.spec, want.bare, 'get');
      assert.deepEqual((await a.client.get(widgets('crd-read', 'full'))).body.spec, want.full, 'get');
      assert.deepEqual((await a.client.get(`${widgets('crd-read', 'bare')}?resourceVersion=0`)).body.spec, want.bare, 'get rv=0');
      assert.deepEqual(specs((await a.client.get(widgets('crd-read'))).body.items), want, 'list');
      assert.deepEqual(specs((await a.client.get(`${widgets('crd-read')}?resourceVersion=0`)).body.items), want, 'list rv=0');
      const first = await a.client.get(`${widgets('crd-read')}?limit=1`);
      const second = await a.client.get(`${widgets('crd-read')}?limit=1&continue=${encodeURIComponent(first.body.metadata.continue)}`);
      assert.deepEqual(specs([...first.body.items, ...second.body.items]), want, 'paged list');
      const exact = await a.client.get(`${widgets('crd-read')}?resourceVersion=${first.body.metadata.resourceVersion}&resourceVersionMatch=Exact`);
      assert.deepEqual(specs(exact.body.items), want, 'list at an exact version (etcd)');
    }
  });

  it('schema violations are 422 with kube causes', async () => {
    const res = await a.client.post(widgets('crd'), widget('big', { size: 500 }));
    expectStatus(res, 422, 'Invalid');
    assert.match(res.body.message, /spec\.size: Invalid value: 500: spec\.size in body should be less than or equal to 100/);
    const wrongType = await a.client.post(widgets('crd'), widget('str', { size: 'x' }));
    expectStatus(wrongType, 422, 'Invalid');
    assert.match(wrongType.body.message, /spec\.size in body must be of type integer/);
  });

  it('label selectors, paging and watch', async () => {
    for (const [n, tier] of [['p1', 'a'], ['p2', 'b'], ['p3', 'a']]) {
      expectCode(await a.client.post(widgets('crd'), widget(n!, { size: 1 }, { metadata: { name: n, labels: { tier } } })), 201);
    }
    const sel = await a.client.get(`${widgets('crd')}?labelSelector=tier%3Da`);
    assert.deepEqual(sel.body.items.map((i: any) => i.metadata.name), ['p1', 'p3']);
    const page = await a.client.get(`${widgets('crd')}?labelSelector=tier&limit=2`);
    assert.equal(page.body.items.length, 2);
    assert.ok(page.body.metadata.continue);
    const rest = await a.client.get(`${widgets('crd')}?labelSelector=tier&limit=2&continue=${encodeURIComponent(page.body.metadata.continue)}`);
    assert.deepEqual(rest.body.items.map((i: any) => i.metadata.name), ['p3']);
    const rv = sel.body.metadata.resourceVersion;
    const watching = a.client.watch(`${widgets('crd')}?watch=1&resourceVersion=${rv}&labelSelector=tier%3Db`, (ev) => ev.length >= 1, 10_000);
    expectCode(await a.client.request('PATCH', widgets('crd', 'p2'), { rawBody: JSON.stringify({ spec: { size: 9 } }), headers: { 'content-type': 'application/merge-patch+json' } }), 200);
    const { events } = await watching;
    assert.equal(events[0].type, 'MODIFIED');
    assert.equal(events[0].object.kind, 'Widget');
    assert.equal(events[0].object.spec.size, 9);
  });

  it('JSON and merge patches work; strategic merge patch and Protobuf are refused as kube does', async () => {
    expectCode(await a.client.post(widgets('crd'), widget('pt')), 201);
    const jp = await a.client.request('PATCH', widgets('crd', 'pt'), { rawBody: JSON.stringify([{ op: 'replace', path: '/spec/size', value: 7 }]), headers: { 'content-type': 'application/json-patch+json' } });
    expectCode(jp, 200);
    assert.equal(jp.body.spec.size, 7);
    const smp = await a.client.request('PATCH', widgets('crd', 'pt'), { rawBody: '{"spec":{"size":8}}', headers: { 'content-type': 'application/strategic-merge-patch+json' } });
    expectStatus(smp, 415, 'UnsupportedMediaType', 'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml');
    expectStatus(await a.client.get(widgets('crd', 'pt'), { headers: { accept: 'application/vnd.kubernetes.protobuf' } }), 406, 'NotAcceptable', 'only the following media types are accepted: application/json, application/yaml');
    const both = await a.client.get(widgets('crd', 'pt'), { headers: { accept: 'application/vnd.kubernetes.protobuf, application/json' } });
    expectCode(both, 200);
    assert.match(String(both.headers['content-type']), /^application\/json/);
    const pb = await a.client.request('POST', widgets('crd'), { rawBody: Buffer.from([0x6b, 0x38, 0x73, 0x00]), headers: { 'content-type': 'application/vnd.kubernetes.protobuf' } });
    expectStatus(pb, 415, 'UnsupportedMediaType', 'the body of the request was in an unknown format - accepted media types include: application/json, application/yaml');
  });

  it('the body apiVersion must be the URL version', async () => {
    const res = await a.client.post(widgets('crd'), { ...widget('av'), apiVersion: 'example.com/v9' });
    expectStatus(res, 400, 'BadRequest');
  });
});

describe('sub-resources', () => {
  it('status: the main resource ignores status, the status sub-resource changes only status', async () => {
    const created = await a.client.post(widgets('crd'), widget('st', { size: 1 }, { status: { phase: 'Ignored' } }));
    expectCode(created, 201);
    assert.equal(created.body.status, undefined);
    const st = await a.client.put(`${widgets('crd', 'st')}/status`, { ...created.body, spec: { size: 99 }, status: { phase: 'Ready', replicas: 2 } });
    expectCode(st, 200);
    assert.deepEqual(st.body.status, { phase: 'Ready', replicas: 2 });
    assert.equal(st.body.spec.size, 1);
    assert.equal(st.body.metadata.generation, 1);
    const patched = await a.client.request('PATCH', `${widgets('crd', 'st')}/status`, { rawBody: '{"status":{"phase":"Done"}}', headers: { 'content-type': 'application/merge-patch+json' } });
    expectCode(patched, 200);
    assert.equal(patched.body.status.phase, 'Done');
    const main = await a.client.put(widgets('crd', 'st'), { ...patched.body, status: { phase: 'Hacked' } });
    expectCode(main, 200);
    assert.equal(main.body.status.phase, 'Done');
  });

  it('scale: an autoscaling/v1 Scale read from and written to the CRD paths', async () => {
    expectCode(await a.client.post(widgets('crd'), widget('sc', { size: 1, replicas: 2 })), 201);
    await a.client.request('PATCH', `${widgets('crd', 'sc')}/status`, { rawBody: '{"status":{"replicas":2,"selector":"app=sc"}}', headers: { 'content-type': 'application/merge-patch+json' } });
    const scale = await a.client.get(`${widgets('crd', 'sc')}/scale`);
    expectCode(scale, 200);
    assert.deepEqual([scale.body.apiVersion, scale.body.kind, scale.body.spec, scale.body.status], ['autoscaling/v1', 'Scale', { replicas: 2 }, { replicas: 2, selector: 'app=sc' }]);
    const put = await a.client.put(`${widgets('crd', 'sc')}/scale`, { apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name: 'sc' }, spec: { replicas: 5 } });
    expectCode(put, 200);
    assert.equal(put.body.spec.replicas, 5);
    const obj = (await a.client.get(widgets('crd', 'sc'))).body;
    assert.equal(obj.spec.replicas, 5);
    assert.equal(obj.metadata.generation, 2);
    const patched = await a.client.request('PATCH', `${widgets('crd', 'sc')}/scale`, { rawBody: '{"spec":{"replicas":1}}', headers: { 'content-type': 'application/merge-patch+json' } });
    expectCode(patched, 200);
    assert.equal((await a.client.get(widgets('crd', 'sc'))).body.spec.replicas, 1);
    expectStatus(await a.client.put(`${widgets('crd', 'sc')}/scale`, { apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name: 'sc', resourceVersion: '1' }, spec: { replicas: 3 } }), 409, 'Conflict');
  });
});

describe('apply, versions and kubectl', () => {
  it('server-side apply merges list-map entries by their keys', async () => {
    const apply = (manager: string, body: object) =>
      a.client.request('PATCH', `${widgets('crd', 'ap')}?fieldManager=${manager}`, { rawBody: JSON.stringify(body), headers: { 'content-type': 'application/apply-patch+yaml' } });
    expectCode(await apply('one', widget('ap', { ports: [{ name: 'http', port: 80 }] })), 201);
    const second = await apply('two', widget('ap', { ports: [{ name: 'https', port: 443 }] }));
    expectCode(second, 200);
    assert.deepEqual(second.body.spec.ports, [{ name: 'http', port: 80 }, { name: 'https', port: 443 }]);
  });

  it('a deprecated version serves the same objects with kube default warning', async () => {
    expectCode(await a.client.post(widgets('crd'), widget('dep')), 201);
    const res = await a.client.get(widgets('crd', 'dep', 'v1beta1'));
    expectCode(res, 200);
    assert.equal(res.body.apiVersion, 'example.com/v1beta1');
    assert.equal(res.headers['warning'], '299 - "example.com/v1beta1 Widget is deprecated; use example.com/v1 Widget"');
    assert.equal((await a.client.get(widgets('crd', 'dep'))).headers['warning'], undefined);
    const viaBeta = await a.client.post(widgets('crd', '', 'v1beta1'), { ...widget('beta'), apiVersion: 'example.com/v1beta1' });
    expectCode(viaBeta, 201);
    assert.equal((await a.client.get(widgets('crd', 'beta'))).body.apiVersion, 'example.com/v1');
  });

  it('kubectl get prints the printer columns', async () => {
    expectCode(await a.client.post(widgets('crd'), widget('kc', { size: 42, color: 'green' })), 201);
    const r = await kubectl('get', 'widgets', '-n', 'crd', 'kc');
    assert.equal(r.code, 0, r.stderr);
    const [header, row] = r.stdout.trim().split('\n');
    assert.match(header!, /^NAME\s+SIZE\s+COLOR\s+AGE$/);
    assert.match(row!, /^kc\s+42\s+green\s+\d+s$/);
    const short = await kubectl('get', 'wd', '-n', 'crd', 'kc', '-o', 'jsonpath={.spec.size}');
    assert.equal(short.stdout, '42', short.stderr);
  });

  it('kubectl explain reads the published schema', async () => {
    const r = await kubectl('explain', 'widgets.spec');
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /size/);
    assert.match(r.stdout, /ports/);
  });
});

describe('replicas and deletion', () => {
  it('a second replica serves a CR created through the first within a second', async () => {
    const crd = structuredClone(widgetCRD) as any;
    crd.metadata.name = 'dials.replica.example.com';
    crd.spec.group = 'replica.example.com';
    crd.spec.names = { plural: 'dials', singular: 'dial', kind: 'Dial', listKind: 'DialList' };
    crd.spec.versions = [version('v1')];
    expectCode(await a.client.post(CRDS, crd), 201);
    await established('dials.replica.example.com');
    const path = '/apis/replica.example.com/v1/namespaces/crd/dials';
    await eventually(async () => (await a.client.get(path)).status === 200, 5000, 'dials served on a');
    expectCode(await a.client.post(path, { apiVersion: 'replica.example.com/v1', kind: 'Dial', metadata: { name: 'd1' }, spec: { size: 1 } }), 201);
    await eventually(async () => (await b.client.get(`${path}/d1`)).status === 200, 1000, 'd1 served by the second replica');
  });

  it("kubectl with a warm discovery cache finds a CRD created after it cached; once deleted it is not found", async () => {
    // Warm kubectl's disk cache (discovery and OpenAPI) before the CRD exists.
    expectCode(await a.client.get('/api/v1/namespaces'), 200);
    assert.equal((await kubectl('api-resources', '-o', 'name')).code, 0);
    const crd = structuredClone(widgetCRD) as any;
    crd.metadata.name = 'knobs.late.example.com';
    crd.spec.group = 'late.example.com';
    crd.spec.names = { plural: 'knobs', singular: 'knob', kind: 'Knob', listKind: 'KnobList' };
    crd.spec.versions = [version('v1')];
    expectCode(await a.client.post(CRDS, crd), 201);
    await established('knobs.late.example.com');
    await eventually(async () => (await a.client.get('/apis/late.example.com/v1/namespaces/crd/knobs')).status === 200, 5000, 'knobs served');
    expectCode(await a.client.post('/apis/late.example.com/v1/namespaces/crd/knobs', { apiVersion: 'late.example.com/v1', kind: 'Knob', metadata: { name: 'k1' }, spec: { size: 2 } }), 201);
    // kubectl does not know `knobs` from its cache: it invalidates the cache and discovers again.
    const got = await kubectl('get', 'knobs', '-n', 'crd', '-o', 'name');
    assert.equal(got.code, 0, got.stderr);
    assert.equal(got.stdout.trim(), 'knob.late.example.com/k1');
    expectCode(await a.client.delete(`${CRDS}/knobs.late.example.com`), 200);
    await eventually(async () => (await a.client.get('/apis/late.example.com')).status === 404, 15_000, 'late.example.com gone');
    // With its cache still mapping knobs, kubectl asks and gets kube's 404 for a resource no longer served.
    const gone = await kubectl('get', 'knobs', '-n', 'crd');
    assert.notEqual(gone.code, 0);
    assert.match(gone.stderr, /the server could not find the requested resource|the server doesn't have a resource type "knobs"/);
  });

  it('deleting a CRD marks it Terminating, deletes its objects, then it and its group go', async () => {
    const crd = structuredClone(widgetCRD) as any;
    crd.metadata.name = 'gizmos.gone.example.com';
    crd.spec.group = 'gone.example.com';
    crd.spec.names = { plural: 'gizmos', singular: 'gizmo', kind: 'Gizmo' };
    crd.spec.versions = [version('v1')];
    expectCode(await a.client.post(CRDS, crd), 201);
    await established('gizmos.gone.example.com');
    const path = (ns: string) => `/apis/gone.example.com/v1/namespaces/${ns}/gizmos`;
    await eventually(async () => (await a.client.get(path('crd'))).status === 200, 5000, 'gizmos served');
    await a.client.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'crd2' } });
    for (const ns of ['crd', 'crd2']) expectCode(await a.client.post(path(ns), { apiVersion: 'gone.example.com/v1', kind: 'Gizmo', metadata: { name: 'g' } }), 201);
    const del = await a.client.delete(`${CRDS}/gizmos.gone.example.com`);
    expectCode(del, 200);
    assert.ok(del.body.metadata.deletionTimestamp);
    assert.ok(del.body.metadata.finalizers.includes('customresourcecleanup.apiextensions.k8s.io'));
    await eventually(async () => (await a.client.get(`${CRDS}/gizmos.gone.example.com`)).status === 404, 15_000, 'CRD gone');
    await eventually(async () => (await a.client.get('/apis/gone.example.com')).status === 404, 5000, 'group gone from discovery');
    const groups = (await a.client.get('/apis')).body.groups.map((g: { name: string }) => g.name);
    assert.ok(!groups.includes('gone.example.com'));
    const left = await a.server.storage.list('/registry/gone.example.com/gizmos/');
    assert.equal(left.items.length, 0, 'no custom resource left in etcd');
  });
});
