/**
 * Custom resources as kube serves them beyond the basics: defaults of the storage version applied
 * when reading objects stored before the default existed, and PATCH of every status sub-resource
 * (custom resources' and built-ins') through the generic patch path, server-side apply included.
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
