/**
 * Custom resources as kube serves them beyond the basics: defaults of the storage version applied
 * when reading objects stored before the default existed, and PATCH of every status sub-resource
 * (custom resources' and built-ins') through the generic patch path, server-side apply included,
 * and the names kube's OpenAPI gives custom resource and apiextensions kinds.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { eventually, startInProcess, startTestEtcd, type InProcessPlinth, type TestEtcd } from './harness.js';
import { expectCode, expectStatus } from './assertions.js';

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

let etcd: TestEtcd;
let a: InProcessPlinth;

async function established(name: string): Promise<any> {
  return eventually(async () => {
    const r = await a.client.get(`${CRDS}/${name}`);
    const ok = r.body?.status?.conditions?.some((c: { type: string; status: string }) => c.type === 'Established' && c.status === 'True');
    return ok ? r.body : undefined;
  }, 10_000, `${name} Established`);
}

const patch = (path: string, type: string, body: unknown, query = '') =>
  a.client.request('PATCH', `${path}${query}`, { rawBody: typeof body === 'string' ? body : JSON.stringify(body), headers: { 'content-type': type } });

before(async () => {
  etcd = await startTestEtcd();
  a = await startInProcess({ etcd });
  expectCode(await a.client.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'sub' } }), 201);
});

after(async () => {
  await a?.stop();
  await etcd?.stop();
});

describe('defaulting on read', () => {
  const gauges = (version = 'v1', name = '') => `/apis/read.example.com/${version}/namespaces/sub/gauges${name ? `/${name}` : ''}`;
  const specSchema = (withDefaults: boolean): object => ({
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        properties: {
          size: { type: 'integer' },
          color: withDefaults ? { type: 'string', default: 'amber' } : { type: 'string' },
          ports: {
            type: 'array',
            items: { type: 'object', properties: { name: { type: 'string' }, protocol: withDefaults ? { type: 'string', default: 'TCP' } : { type: 'string' } } },
          },
        },
      },
    },
  });
  const crd = (withDefaults: boolean): any => ({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'gauges.read.example.com' },
    spec: {
      group: 'read.example.com',
      scope: 'Namespaced',
      names: { plural: 'gauges', singular: 'gauge', kind: 'Gauge' },
      versions: [
        { name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: specSchema(withDefaults) } },
        { name: 'v1beta1', served: true, storage: false, schema: { openAPIV3Schema: specSchema(false) } },
      ],
    },
  });

  it('a default added to the storage version later shows on get, list and watch of objects stored before', async () => {
    expectCode(await a.client.post(CRDS, crd(false)), 201);
    await established('gauges.read.example.com');
    await eventually(async () => (await a.client.get(gauges())).status === 200, 5000, 'gauges served');
    const created = await a.client.post(gauges(), { apiVersion: 'read.example.com/v1', kind: 'Gauge', metadata: { name: 'old' }, spec: { size: 1, ports: [{ name: 'a' }, { name: 'b', protocol: 'UDP' }] } });
    expectCode(created, 201);
    assert.equal(created.body.spec.color, undefined);

    const current = (await a.client.get(`${CRDS}/gauges.read.example.com`)).body;
    expectCode(await a.client.put(`${CRDS}/gauges.read.example.com`, { ...crd(true), metadata: current.metadata }), 200);
    const got = await eventually(async () => {
      const r = await a.client.get(gauges('v1', 'old'));
      return r.body?.spec?.color === 'amber' ? r.body : undefined;
    }, 10_000, 'the new default on get');
    assert.deepEqual(got.spec, { size: 1, color: 'amber', ports: [{ name: 'a', protocol: 'TCP' }, { name: 'b', protocol: 'UDP' }] });
    // kube defaults with the storage version's schema, whichever version is asked for.
    const beta = (await a.client.get(gauges('v1beta1', 'old'))).body;
    assert.equal(beta.apiVersion, 'read.example.com/v1beta1');
    assert.equal(beta.spec.color, 'amber');

    const list = (await a.client.get(gauges())).body;
    assert.deepEqual(list.items.map((i: any) => [i.metadata.name, i.spec.color, i.spec.ports[0].protocol]), [['old', 'amber', 'TCP']]);
    const { events } = await a.client.watch(`${gauges()}?watch=1&resourceVersion=0`, (ev) => ev.length >= 1);
    assert.equal(events[0].type, 'ADDED');
    assert.equal(events[0].object.spec.color, 'amber');

    // Nothing was written: etcd still holds the object as it was created.
    const stored = await a.server.storage.get('/registry/read.example.com/gauges/sub/old');
    assert.equal(stored.metadata.resourceVersion, created.body.metadata.resourceVersion);
    assert.equal((stored as any).spec.color, undefined);

    // An update of an old object that changes nothing is no new generation.
    const same = await a.client.put(gauges('v1', 'old'), got);
    expectCode(same, 200);
    assert.equal(same.body.metadata.generation, 1);
  });
});

describe('status and scale sub-resources', () => {
  const dials = (name = '', version = 'v1') => `/apis/sub.example.com/${version}/namespaces/sub/dials${name ? `/${name}` : ''}`;
  const dialSchema = {
    type: 'object',
    properties: {
      spec: { type: 'object', properties: { replicas: { type: 'integer' }, mode: { type: 'string' } } },
      status: {
        type: 'object',
        properties: {
          replicas: { type: 'integer' },
          phase: { type: 'string' },
          lastSeen: { type: 'string', format: 'date-time' },
          conditions: {
            type: 'array',
            'x-kubernetes-list-type': 'map',
            'x-kubernetes-list-map-keys': ['type'],
            items: { type: 'object', required: ['type'], properties: { type: { type: 'string' }, status: { type: 'string' } } },
          },
        },
      },
    },
  };
  const subresources = { status: {}, scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas' } };
  const dialCRD = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'dials.sub.example.com' },
    spec: {
      group: 'sub.example.com',
      scope: 'Namespaced',
      names: { plural: 'dials', singular: 'dial', kind: 'Dial' },
      versions: [
        { name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: dialSchema }, subresources },
        { name: 'v1beta1', served: true, storage: false, deprecated: true, schema: { openAPIV3Schema: dialSchema }, subresources },
      ],
    },
  };
  const dial = (name: string, extra: object = {}) => ({ apiVersion: 'sub.example.com/v1', kind: 'Dial', metadata: { name }, spec: { replicas: 1 }, ...extra });
  const entries = (obj: any) => (obj.metadata.managedFields ?? []).map((e: any) => [e.manager, e.operation, e.subresource ?? '']);

  before(async () => {
    expectCode(await a.client.post(CRDS, dialCRD), 201);
    await established('dials.sub.example.com');
    await eventually(async () => (await a.client.get(dials())).status === 200, 5000, 'dials served');
  });

  it('merge and JSON patches change only status; strategic merge patch is 415 as on the main resource', async () => {
    expectCode(await a.client.post(dials(), dial('mp')), 201);
    const merge = await patch(`${dials('mp')}/status`, 'application/merge-patch+json', { spec: { replicas: 9 }, status: { phase: 'Ready', replicas: 1 } }, '?fieldManager=ctl');
    expectCode(merge, 200);
    assert.deepEqual(merge.body.status, { phase: 'Ready', replicas: 1 });
    assert.equal(merge.body.spec.replicas, 1, 'spec does not change through status');
    assert.equal(merge.body.metadata.generation, 1);
    assert.deepEqual(entries(merge.body).filter((e: string[]) => e[0] === 'ctl'), [['ctl', 'Update', 'status']]);
    const json = await patch(`${dials('mp')}/status`, 'application/json-patch+json', [{ op: 'replace', path: '/status/phase', value: 'Done' }]);
    expectCode(json, 200);
    assert.equal(json.body.status.phase, 'Done');
    expectStatus(
      await patch(`${dials('mp')}/status`, 'application/strategic-merge-patch+json', { status: { phase: 'x' } }),
      415,
      'UnsupportedMediaType',
      'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml',
    );
    const dry = await patch(`${dials('mp')}/status`, 'application/merge-patch+json', { status: { phase: 'Dry' } }, '?dryRun=All');
    expectCode(dry, 200);
    assert.equal(dry.body.status.phase, 'Dry');
    assert.equal((await a.client.get(dials('mp'))).body.status.phase, 'Done');
    const beta = await patch(`${dials('mp', 'v1beta1')}/status`, 'application/merge-patch+json', { status: { phase: 'Beta' } });
    expectCode(beta, 200);
    assert.equal(beta.body.apiVersion, 'sub.example.com/v1beta1');
    assert.equal(beta.headers['warning'], '299 - "sub.example.com/v1beta1 Dial is deprecated; use sub.example.com/v1 Dial"');
  });

  it('server-side apply of status owns status fields under the status sub-resource, merges list-map entries, never creates', async () => {
    expectCode(await a.client.post(dials(), dial('ap')), 201);
    const apply = (manager: string, body: object, query = '') => patch(`${dials('ap')}/status`, 'application/apply-patch+yaml', body, `?fieldManager=${manager}${query}`);
    const first = await apply('ctl-a', dial('ap', { spec: { replicas: 7 }, status: { conditions: [{ type: 'A', status: 'True' }] } }));
    expectCode(first, 200);
    assert.deepEqual(first.body.status, { conditions: [{ type: 'A', status: 'True' }] });
    assert.equal(first.body.spec.replicas, 1, 'spec in a status apply is ignored');
    const mine = first.body.metadata.managedFields.find((e: any) => e.manager === 'ctl-a');
    assert.deepEqual([mine.operation, mine.subresource, mine.apiVersion], ['Apply', 'status', 'sub.example.com/v1']);
    assert.deepEqual(mine.fieldsV1, { 'f:status': { 'f:conditions': { 'k:{"type":"A"}': { '.': {}, 'f:status': {}, 'f:type': {} } } } });
    const second = await apply('ctl-b', dial('ap', { status: { conditions: [{ type: 'B', status: 'False' }] } }));
    expectCode(second, 200);
    assert.deepEqual(second.body.status.conditions, [{ type: 'A', status: 'True' }, { type: 'B', status: 'False' }]);
    const clash = await apply('ctl-b', dial('ap', { status: { conditions: [{ type: 'A', status: 'False' }] } }));
    expectStatus(clash, 409, 'Conflict', /conflict with "ctl-a" with subresource "status"/);
    expectCode(await apply('ctl-b', dial('ap', { status: { conditions: [{ type: 'A', status: 'False' }] } }), '&force=true'), 200);
    const missing = await patch(`${dials('nope')}/status`, 'application/apply-patch+yaml', dial('nope', { status: { phase: 'x' } }), '?fieldManager=ctl');
    expectStatus(missing, 404, 'NotFound', 'dials.sub.example.com "nope" not found');
    expectCode(await a.client.get(dials('nope')), 404);
  });

  it('PUT of status is recorded under the status sub-resource', async () => {
    const created = await a.client.post(dials(), dial('pu'));
    expectCode(created, 201);
    const put = await a.client.put(`${dials('pu')}/status?fieldManager=writer`, { ...created.body, status: { phase: 'Up' } });
    expectCode(put, 200);
    assert.deepEqual(entries(put.body).filter((e: string[]) => e[0] === 'writer'), [['writer', 'Update', 'status']]);
  });

  it('namespaces/status takes strategic merge patches and apply; namespaces/finalize takes no PATCH', async () => {
    const ns = '/api/v1/namespaces/sub';
    const smp = await patch(`${ns}/status`, 'application/strategic-merge-patch+json', { status: { conditions: [{ type: 'NamespaceDeletionDiscoveryFailure', status: 'False', reason: 'ResourcesDiscovered' }] } });
    expectCode(smp, 200);
    assert.equal(smp.body.status.conditions[0].reason, 'ResourcesDiscovered');
    assert.equal(smp.body.status.phase, 'Active');
    const applied = await patch(
      `${ns}/status`,
      'application/apply-patch+yaml',
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'sub' }, status: { conditions: [{ type: 'NamespaceContentRemaining', status: 'False', reason: 'ContentRemoved' }] } },
      '?fieldManager=nsctl',
    );
    expectCode(applied, 200);
    assert.deepEqual(applied.body.status.conditions.map((c: any) => c.type).sort(), ['NamespaceContentRemaining', 'NamespaceDeletionDiscoveryFailure']);
    assert.deepEqual(entries(applied.body).filter((e: string[]) => e[0] === 'nsctl'), [['nsctl', 'Apply', 'status']]);
    expectStatus(await patch(`${ns}/finalize`, 'application/merge-patch+json', { spec: {} }), 405, 'MethodNotAllowed');
  });

  it('customresourcedefinitions/status takes a JSON patch', async () => {
    const condition = { type: 'Custom', status: 'True', reason: 'Test', message: 'set by a test', lastTransitionTime: '2024-01-01T00:00:00Z' };
    const r = await patch(`${CRDS}/dials.sub.example.com/status`, 'application/json-patch+json', [{ op: 'add', path: '/status/conditions/-', value: condition }]);
    expectCode(r, 200);
    assert.deepEqual(r.body.status.conditions.map((c: any) => c.type).sort(), ['Custom', 'Established', 'NamesAccepted']);
    assert.equal(r.body.spec.group, 'sub.example.com');
  });

  it('scale: PUT and PATCH are recorded in the parent managedFields under sub-resource scale, taking spec.replicas from its owner', async () => {
    const created = await a.client.post(`${dials()}?fieldManager=creator`, dial('sc', { spec: { replicas: 2, mode: 'fast' } }));
    expectCode(created, 201);
    const put = await a.client.put(`${dials('sc')}/scale?fieldManager=scaler`, { apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name: 'sc' }, spec: { replicas: 3 } });
    expectCode(put, 200);
    assert.equal(put.body.spec.replicas, 3);
    const obj = (await a.client.get(dials('sc'))).body;
    assert.equal(obj.spec.replicas, 3);
    const byManager = Object.fromEntries(obj.metadata.managedFields.map((e: any) => [e.manager, e]));
    assert.deepEqual([byManager.scaler.operation, byManager.scaler.apiVersion, byManager.scaler.subresource], ['Update', 'sub.example.com/v1', 'scale']);
    assert.deepEqual(byManager.scaler.fieldsV1, { 'f:spec': { 'f:replicas': {} } });
    // A custom resource is created from kube's empty Unstructured: its creator owns spec itself too.
    assert.deepEqual(created.body.metadata.managedFields[0].fieldsV1['f:spec'], { '.': {}, 'f:mode': {}, 'f:replicas': {} });
    assert.deepEqual(byManager.creator.fieldsV1['f:spec'], { '.': {}, 'f:mode': {} }, 'the creator no longer owns spec.replicas');
    const merged = await patch(`${dials('sc')}/scale`, 'application/merge-patch+json', { spec: { replicas: 4 } }, '?fieldManager=patcher');
    expectCode(merged, 200);
    const after = (await a.client.get(dials('sc'))).body;
    assert.deepEqual(entries(after).filter((e: string[]) => e[0] !== 'creator').sort(), [['patcher', 'Update', 'scale']]);
  });

  it('scale: server-side apply owns spec.replicas, conflicts with another applier unless forced', async () => {
    expectCode(await a.client.post(`${dials()}?fieldManager=creator`, dial('sa', { spec: { replicas: 1 } })), 201);
    const applyScale = (manager: string, replicas: number, query = '', apiVersion = 'autoscaling/v1') =>
      patch(`${dials('sa')}/scale`, 'application/apply-patch+yaml', { apiVersion, kind: 'Scale', metadata: { name: 'sa' }, spec: { replicas } }, `?fieldManager=${manager}${query}`);
    // The creator owns spec.replicas: an applier takes it over only by force, as in kube.
    expectStatus(await applyScale('hpa', 5), 409, 'Conflict', 'Apply failed with 1 conflict: conflict with "creator" using autoscaling/v1: .spec.replicas');
    const first = await applyScale('hpa', 5, '&force=true');
    expectCode(first, 200);
    assert.equal(first.body.spec.replicas, 5);
    const obj = (await a.client.get(dials('sa'))).body;
    assert.equal(obj.spec.replicas, 5);
    const hpa = obj.metadata.managedFields.find((e: any) => e.manager === 'hpa');
    assert.deepEqual([hpa.operation, hpa.apiVersion, hpa.subresource, hpa.fieldsV1], ['Apply', 'sub.example.com/v1', 'scale', { 'f:spec': { 'f:replicas': {} } }]);
    expectStatus(await applyScale('other', 6), 409, 'Conflict', /conflict with "hpa" with subresource "scale": \.spec\.replicas/);
    const forced = await applyScale('other', 6, '&force=true');
    expectCode(forced, 200);
    assert.equal((await a.client.get(dials('sa'))).body.spec.replicas, 6);
    expectStatus(await applyScale('hpa', 7, '', 'autoscaling/v2'), 400, 'BadRequest', 'Incorrect version specified in apply patch. Specified patch version: autoscaling/v2, expected: autoscaling/v1');
    expectStatus(await patch(`${dials('sa')}/scale`, 'application/apply-patch+yaml', { apiVersion: 'autoscaling/v1', kind: 'Scale', spec: { replicas: 1 } }), 422, 'Invalid', /fieldManager: Required value/);
  });

  it('scale: a write that leaves spec replicas unset is a 400, a read of it a 500 as in kube', async () => {
    expectCode(await a.client.post(dials(), dial('nr', { spec: { mode: 'x' } })), 201);
    const r = await patch(`${dials('nr')}/scale`, 'application/merge-patch+json', { metadata: { labels: { a: 'b' } } });
    expectStatus(r, 400, 'BadRequest', 'the spec replicas field ".spec.replicas" cannot be empty');
    // kube's ScaleREST.Get answers such an object with an internal error.
    expectStatus(await a.client.get(`${dials('nr')}/scale`), 500, 'InternalError', 'Internal error occurred: the spec replicas field ".spec.replicas" does not exist');
  });
});

describe('OpenAPI names', () => {
  it('custom resource kinds are named by reversed group, date-time fields stay inline; apiextensions kinds are apiextensions-apiserver types', async () => {
    const crdName = 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition';
    const dial = 'com.example.sub.v1.Dial';
    const v2 = await eventually(async () => {
      const r = await a.client.get('/openapi/v2');
      return r.body?.definitions?.[dial] ? r.body : undefined;
    }, 10_000, 'the Dial kind published');
    const names = Object.keys(v2.definitions);
    assert.ok(names.includes(crdName));
    assert.ok(names.includes(`${crdName}List`));
    assert.ok(names.includes('io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionSpec'));
    assert.deepEqual(names.filter((n) => n.startsWith('io.k8s.api.apiextensions.') || n.startsWith('io.k8s.api.sub.')), []);
    assert.ok(names.includes('com.example.sub.v1.DialList'));
    assert.ok(names.includes('com.example.sub.v1beta1.Dial'));
    const d = v2.definitions[dial];
    assert.deepEqual(d['x-kubernetes-group-version-kind'], [{ group: 'sub.example.com', kind: 'Dial', version: 'v1' }]);
    assert.deepEqual(d.properties.status.properties.lastSeen, { type: 'string', format: 'date-time' });
    assert.equal(v2.definitions['com.example.sub.v1.DialList'].properties.items.items.$ref, '#/definitions/com.example.sub.v1.Dial');
    const get = v2.paths['/apis/sub.example.com/v1/namespaces/{namespace}/dials/{name}'].get;
    assert.equal(get.responses['200'].schema.$ref, '#/definitions/com.example.sub.v1.Dial');
    const v3 = await a.client.get('/openapi/v3/apis/sub.example.com/v1');
    expectCode(v3, 200);
    assert.ok(v3.body.components.schemas[dial]);
    const crdV3 = await a.client.get('/openapi/v3/apis/apiextensions.k8s.io/v1');
    assert.ok(crdV3.body.components.schemas[crdName]);
  });
});
