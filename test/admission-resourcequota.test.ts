/**
 * The ResourceQuota admission plugin and quota controller on a real server (kube 1.24's
 * plugin/pkg/admission/resourcequota, pkg/quota/v1/evaluator/core, pkg/controller/resourcequota):
 * status.hard and status.used set by the controller, usage charged in the request that creates
 * the object, kube's refusals, pod scopes, services and claims, object counts, recalculation after
 * deletes, and no over-admission when 20 creates race for the last unit.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { eventually, startInProcess, tempDir, usePlinth } from './harness.js';
import { expectCode, expectStatus } from './assertions.js';

const env = usePlinth();

type Spec = Record<string, unknown>;
const api = (ns: string, plural: string): string => `/api/v1/namespaces/${ns}/${plural}`;
const container = (name: string, resources?: Spec): Spec => ({ name, image: 'nginx', ...(resources ? { resources } : {}) });
const pod = (name: string, spec: Spec = {}): Spec => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [container('c')], ...spec } });
const withResources = (name: string, requests: Spec, limits: Spec = {}): Spec => pod(name, { containers: [container('c', { requests, limits })] });

async function namespace(name: string): Promise<void> {
  expectCode(await env.plinth.client.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } }), 201);
}

/** Creates a quota and waits for the controller to fill its status. */
async function quota(ns: string, name: string, hard: Record<string, string>, spec: Spec = {}) {
  expectCode(await env.plinth.client.post(api(ns, 'resourcequotas'), { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name }, spec: { hard, ...spec } }), 201);
  return eventually(async () => {
    const q = (await env.plinth.client.get(`${api(ns, 'resourcequotas')}/${name}`)).body;
    return q.status?.hard && Object.keys(q.status.used ?? {}).length === Object.keys(hard).length ? q : undefined;
  }, 10_000, `the status of quota ${ns}/${name}`);
}

const used = async (ns: string, name: string): Promise<Record<string, string>> => (await env.plinth.client.get(`${api(ns, 'resourcequotas')}/${name}`)).body.status.used;

describe('ResourceQuota', () => {
  it("gets status.hard and a zero status.used from the controller", async () => {
    await namespace('rq-status');
    const q = await quota('rq-status', 'q', { pods: '3', 'requests.cpu': '1', 'count/deployments.apps': '2', services: '1' });
    assert.deepEqual(q.status.hard, { pods: '3', 'requests.cpu': '1', 'count/deployments.apps': '2', services: '1' });
    assert.deepEqual(q.status.used, { pods: '0', 'requests.cpu': '0', 'count/deployments.apps': '0', services: '0' });
  });

  it('charges pods in the create request, refuses with kube\'s messages, and frees usage after a delete', async () => {
    const ns = 'rq-pods';
    await namespace(ns);
    await quota(ns, 'compute', { pods: '2', 'requests.cpu': '500m', 'limits.memory': '1Gi', 'requests.example.com/gpu': '1' });

    const bare = await env.plinth.client.post(api(ns, 'pods'), pod('bare', { initContainers: [container('init')] }));
    expectStatus(bare, 403, 'Forbidden', 'pods "bare" is forbidden: failed quota: compute: must specify limits.memory for: c,init; requests.cpu for: c,init');

    expectCode(await env.plinth.client.post(api(ns, 'pods'), withResources('a', { cpu: '300m' }, { memory: '512Mi' })), 201);
    assert.deepEqual(await used(ns, 'compute'), { 'limits.memory': '512Mi', pods: '1', 'requests.cpu': '300m', 'requests.example.com/gpu': '0' }, 'charged before the create returned');

    expectStatus(
      await env.plinth.client.post(api(ns, 'pods'), withResources('b', { cpu: '300m' }, { memory: '256Mi' })),
      403,
      'Forbidden',
      'pods "b" is forbidden: exceeded quota: compute, requested: requests.cpu=300m, used: requests.cpu=300m, limited: requests.cpu=500m',
    );
    expectStatus(
      await env.plinth.client.post(api(ns, 'pods'), withResources('g', { cpu: '100m', 'example.com/gpu': '2' }, { memory: '1', 'example.com/gpu': '2' })),
      403,
      'Forbidden',
      'pods "g" is forbidden: exceeded quota: compute, requested: requests.example.com/gpu=2, used: requests.example.com/gpu=0, limited: requests.example.com/gpu=1',
    );
    expectCode(await env.plinth.client.post(api(ns, 'pods'), withResources('c', { cpu: '100m' }, { memory: '256Mi' })), 201);
    expectStatus(
      await env.plinth.client.post(api(ns, 'pods'), withResources('d', { cpu: '1m' }, { memory: '1Mi' })),
      403,
      'Forbidden',
      'pods "d" is forbidden: exceeded quota: compute, requested: pods=1, used: pods=2, limited: pods=2',
    );
    // A dry run is checked but not charged.
    expectStatus(await env.plinth.client.post(`${api(ns, 'pods')}?dryRun=All`, withResources('e', { cpu: '1m' }, { memory: '1Mi' })), 403, 'Forbidden');

    expectCode(await env.plinth.client.delete(`${api(ns, 'pods')}/a?gracePeriodSeconds=0`), 200);
    const after = await eventually(async () => {
      const u = await used(ns, 'compute');
      return u.pods === '1' ? u : undefined;
    }, 10_000, 'the controller to recalculate after the delete');
    assert.deepEqual(after, { 'limits.memory': '256Mi', pods: '1', 'requests.cpu': '100m', 'requests.example.com/gpu': '0' });

    // A pod that ended is no longer charged (kube's QuotaV1Pod): the controller recalculates on the change.
    const c = (await env.plinth.client.get(`${api(ns, 'pods')}/c`)).body;
    c.status = { phase: 'Succeeded' };
    expectCode(await env.plinth.client.put(`${api(ns, 'pods')}/c/status`, c), 200);
    const ended = await eventually(async () => {
      const u = await used(ns, 'compute');
      return u.pods === '0' ? u : undefined;
    }, 10_000, 'the controller to recalculate after the pod ended');
    assert.deepEqual(ended, { 'limits.memory': '0', pods: '0', 'requests.cpu': '0', 'requests.example.com/gpu': '0' });
  });

  it('matches pods by scope: BestEffort, NotTerminating and PriorityClass selectors', async () => {
    const ns = 'rq-scopes';
    await namespace(ns);
    expectCode(await env.plinth.client.post('/apis/scheduling.k8s.io/v1/priorityclasses', { apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name: 'rq-high' }, value: 1000 }), 201);
    await quota(ns, 'best-effort', { pods: '1' }, { scopes: ['BestEffort'] });
    await quota(ns, 'terminating', { pods: '1' }, { scopes: ['Terminating'] });
    await quota(ns, 'high', { pods: '1' }, { scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', operator: 'In', values: ['rq-high'] }] } });

    expectCode(await env.plinth.client.post(api(ns, 'pods'), pod('be1')), 201);
    expectStatus(await env.plinth.client.post(api(ns, 'pods'), pod('be2')), 403, 'Forbidden',
      'pods "be2" is forbidden: exceeded quota: best-effort, requested: pods=1, used: pods=1, limited: pods=1');
    // Not best-effort, not terminating, no class: no quota matches.
    expectCode(await env.plinth.client.post(api(ns, 'pods'), withResources('burstable', { cpu: '10m' })), 201);
    expectCode(await env.plinth.client.post(api(ns, 'pods'), pod('t1', { activeDeadlineSeconds: 60, containers: [container('c', { requests: { cpu: '10m' } })] })), 201);
    expectStatus(await env.plinth.client.post(api(ns, 'pods'), pod('t2', { activeDeadlineSeconds: 60, containers: [container('c', { requests: { cpu: '10m' } })] })), 403, 'Forbidden',
      'pods "t2" is forbidden: exceeded quota: terminating, requested: pods=1, used: pods=1, limited: pods=1');
    expectCode(await env.plinth.client.post(api(ns, 'pods'), pod('h1', { priorityClassName: 'rq-high', containers: [container('c', { requests: { cpu: '10m' } })] })), 201);
    expectStatus(await env.plinth.client.post(api(ns, 'pods'), pod('h2', { priorityClassName: 'rq-high', containers: [container('c', { requests: { cpu: '10m' } })] })), 403, 'Forbidden',
      'pods "h2" is forbidden: exceeded quota: high, requested: pods=1, used: pods=1, limited: pods=1');
    assert.deepEqual(await used(ns, 'best-effort'), { pods: '1' });
    assert.deepEqual(await used(ns, 'terminating'), { pods: '1' });
    assert.deepEqual(await used(ns, 'high'), { pods: '1' });
  });

  it('charges services, node ports and load balancers, also when an update changes the type', async () => {
    const ns = 'rq-services';
    await namespace(ns);
    await quota(ns, 'svc', { services: '3', 'services.nodeports': '1', 'services.loadbalancers': '0' });
    const svc = (name: string, type: string, ports: number[]): Spec => ({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name },
      spec: { type, selector: { app: name }, ports: ports.map((p) => ({ name: `p${p}`, port: p })) },
    });
    expectCode(await env.plinth.client.post(api(ns, 'services'), svc('plain', 'ClusterIP', [80, 443])), 201);
    expectStatus(await env.plinth.client.post(api(ns, 'services'), svc('np', 'NodePort', [80, 443])), 403, 'Forbidden',
      'services "np" is forbidden: exceeded quota: svc, requested: services.nodeports=2, used: services.nodeports=0, limited: services.nodeports=1');
    expectStatus(await env.plinth.client.post(api(ns, 'services'), svc('lb', 'LoadBalancer', [80])), 403, 'Forbidden',
      'services "lb" is forbidden: exceeded quota: svc, requested: services.loadbalancers=1, used: services.loadbalancers=0, limited: services.loadbalancers=0');
    expectCode(await env.plinth.client.post(api(ns, 'services'), svc('one', 'ClusterIP', [80])), 201);
    assert.deepEqual(await used(ns, 'svc'), { services: '2', 'services.loadbalancers': '0', 'services.nodeports': '0' });

    const cur = (await env.plinth.client.get(`${api(ns, 'services')}/one`)).body;
    cur.spec.type = 'NodePort';
    expectCode(await env.plinth.client.put(`${api(ns, 'services')}/one`, cur), 200);
    assert.deepEqual(await used(ns, 'svc'), { services: '2', 'services.loadbalancers': '0', 'services.nodeports': '1' }, 'the update is charged its node port');
    const plain = (await env.plinth.client.get(`${api(ns, 'services')}/plain`)).body;
    plain.spec.type = 'NodePort';
    expectStatus(await env.plinth.client.put(`${api(ns, 'services')}/plain`, plain), 403, 'Forbidden',
      'services "plain" is forbidden: exceeded quota: svc, requested: services.nodeports=2, used: services.nodeports=1, limited: services.nodeports=1');

    expectCode(await env.plinth.client.delete(`${api(ns, 'services')}/one`), 200);
    await eventually(async () => {
      const u = await used(ns, 'svc');
      return u.services === '1' && u['services.nodeports'] === '0';
    }, 10_000, 'services usage after the delete');
  });

  it('charges claims by storage and by storage class, and a resize by the difference', async () => {
    const ns = 'rq-claims';
    await namespace(ns);
    await quota(ns, 'storage', { persistentvolumeclaims: '3', 'requests.storage': '3Gi', 'gold.storageclass.storage.k8s.io/requests.storage': '1Gi', 'gold.storageclass.storage.k8s.io/persistentvolumeclaims': '1' });
    const claim = (name: string, size: string, storageClassName?: string): Spec => ({
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: size } }, ...(storageClassName ? { storageClassName } : {}) },
    });
    expectStatus(await env.plinth.client.post(api(ns, 'persistentvolumeclaims'), claim('big-gold', '2Gi', 'gold')), 403, 'Forbidden',
      'persistentvolumeclaims "big-gold" is forbidden: exceeded quota: storage, requested: gold.storageclass.storage.k8s.io/requests.storage=2Gi, used: gold.storageclass.storage.k8s.io/requests.storage=0, limited: gold.storageclass.storage.k8s.io/requests.storage=1Gi');
    expectCode(await env.plinth.client.post(api(ns, 'persistentvolumeclaims'), claim('gold', '1Gi', 'gold')), 201);
    expectCode(await env.plinth.client.post(api(ns, 'persistentvolumeclaims'), claim('plain', '1500Mi')), 201);
    expectStatus(await env.plinth.client.post(api(ns, 'persistentvolumeclaims'), claim('more', '1Gi')), 403, 'Forbidden',
      'persistentvolumeclaims "more" is forbidden: exceeded quota: storage, requested: requests.storage=1Gi, used: requests.storage=2524Mi, limited: requests.storage=3Gi');
    assert.deepEqual(await used(ns, 'storage'), {
      'gold.storageclass.storage.k8s.io/persistentvolumeclaims': '1',
      'gold.storageclass.storage.k8s.io/requests.storage': '1Gi',
      persistentvolumeclaims: '2',
      'requests.storage': '2524Mi',
    });

    // A resize of a bound claim is charged the difference (kube evaluates claim updates).
    for (const name of ['gold', 'silver']) {
      expectCode(await env.plinth.client.post('/apis/storage.k8s.io/v1/storageclasses', { apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name }, provisioner: 'example.com/disk', allowVolumeExpansion: true }), 201);
    }
    expectCode(await env.plinth.client.post(api(ns, 'persistentvolumeclaims'), claim('silver', '100Mi', 'silver')), 201);
    const bind = async (name: string) => {
      const cur = (await env.plinth.client.get(`${api(ns, 'persistentvolumeclaims')}/${name}`)).body;
      cur.status = { phase: 'Bound', capacity: cur.spec.resources.requests };
      const res = await env.plinth.client.put(`${api(ns, 'persistentvolumeclaims')}/${name}/status`, cur);
      expectCode(res, 200);
      return res.body;
    };
    const silver = await bind('silver');
    silver.spec.resources.requests.storage = '200Mi';
    expectCode(await env.plinth.client.put(`${api(ns, 'persistentvolumeclaims')}/silver`, silver), 200);
    assert.equal((await used(ns, 'storage'))['requests.storage'], '2724Mi');
    const gold = await bind('gold');
    gold.spec.resources.requests.storage = '2Gi';
    expectStatus(await env.plinth.client.put(`${api(ns, 'persistentvolumeclaims')}/gold`, gold), 403, 'Forbidden',
      'persistentvolumeclaims "gold" is forbidden: exceeded quota: storage, requested: gold.storageclass.storage.k8s.io/requests.storage=1Gi,requests.storage=1Gi, ' +
        'used: gold.storageclass.storage.k8s.io/requests.storage=1Gi,requests.storage=2724Mi, limited: gold.storageclass.storage.k8s.io/requests.storage=1Gi,requests.storage=3Gi');
  });

  it('counts every resource as count/<resource>.<group>, and the legacy names', async () => {
    const ns = 'rq-counts';
    await namespace(ns);
    await quota(ns, 'counts', { 'count/deployments.apps': '1', secrets: '100', 'count/secrets': '100' });
    const deploy = (name: string): Spec => ({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name },
      spec: { selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [container('c')] } } },
    });
    expectCode(await env.plinth.client.post(`/apis/apps/v1/namespaces/${ns}/deployments`, deploy('one')), 201);
    expectStatus(await env.plinth.client.post(`/apis/apps/v1/namespaces/${ns}/deployments`, deploy('two')), 403, 'Forbidden',
      'deployments.apps "two" is forbidden: exceeded quota: counts, requested: count/deployments.apps=1, used: count/deployments.apps=1, limited: count/deployments.apps=1');
    const before = await used(ns, 'counts');
    expectCode(await env.plinth.client.post(api(ns, 'secrets'), { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' } }), 201);
    const after = await used(ns, 'counts');
    assert.equal(Number(after['secrets']), Number(before['secrets']) + 1);
    assert.equal(Number(after['count/secrets']), Number(before['count/secrets']) + 1);
    expectCode(await env.plinth.client.delete(`/apis/apps/v1/namespaces/${ns}/deployments/one`), 200);
    await eventually(async () => (await used(ns, 'counts'))['count/deployments.apps'] === '0', 10_000, 'the deployment count after the delete');
  });

  it('counts custom resources as count/<plural>.<group>', async () => {
    const ns = 'rq-crs';
    await namespace(ns);
    const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
    expectCode(
      await env.plinth.client.post(CRDS, {
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        metadata: { name: 'widgets.quota.example.com' },
        spec: {
          group: 'quota.example.com',
          scope: 'Namespaced',
          names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
          versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
        },
      }),
      201,
    );
    await eventually(async () => {
      const r = await env.plinth.client.get(`${CRDS}/widgets.quota.example.com`);
      return r.body?.status?.conditions?.some((c: { type: string; status: string }) => c.type === 'Established' && c.status === 'True');
    }, 10_000, 'the CRD Established');
    const widgets = `/apis/quota.example.com/v1/namespaces/${ns}/widgets`;
    const widget = (name: string): Spec => ({ apiVersion: 'quota.example.com/v1', kind: 'Widget', metadata: { name } });
    expectCode(await env.plinth.client.post(widgets, widget('w1')), 201);
    const q = await quota(ns, 'crs', { 'count/widgets.quota.example.com': '2' });
    assert.deepEqual(q.status.used, { 'count/widgets.quota.example.com': '1' }, 'the controller counts the existing one');
    expectCode(await env.plinth.client.post(widgets, widget('w2')), 201);
    expectStatus(await env.plinth.client.post(widgets, widget('w3')), 403, 'Forbidden',
      'widgets.quota.example.com "w3" is forbidden: exceeded quota: crs, requested: count/widgets.quota.example.com=1, used: count/widgets.quota.example.com=2, limited: count/widgets.quota.example.com=2');
  });

  it('admits exactly one of 20 concurrent pod creates racing for the last unit', async () => {
    const ns = 'rq-race-pods';
    await namespace(ns);
    await quota(ns, 'pods', { pods: '5' });
    for (let i = 0; i < 4; i++) expectCode(await env.plinth.client.post(api(ns, 'pods'), pod(`p${i}`)), 201);
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => env.plinth.client.post(api(ns, 'pods'), pod(`race-${i}`))));
    assert.equal(results.filter((r) => r.status === 201).length, 1, results.map((r) => r.status).join(','));
    for (const r of results.filter((x) => x.status !== 201)) {
      expectStatus(r, 403, 'Forbidden', /^pods "race-\d+" is forbidden: exceeded quota: pods, requested: pods=1, used: pods=5, limited: pods=5$/);
    }
    assert.equal((await env.plinth.client.get(api(ns, 'pods'))).body.items.length, 5);
    assert.deepEqual(await used(ns, 'pods'), { pods: '5' });
  });

  it('admits exactly the remaining configmaps of 20 concurrent creates', async () => {
    const ns = 'rq-race-configmaps';
    await namespace(ns);
    await quota(ns, 'cm', { 'count/configmaps': '5' });
    const start = Number((await used(ns, 'cm'))['count/configmaps']);
    for (let i = start; i < 4; i++) expectCode(await env.plinth.client.post(api(ns, 'configmaps'), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `c${i}` } }), 201);
    const before = Number((await used(ns, 'cm'))['count/configmaps']);
    assert.equal(before, 4);
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => env.plinth.client.post(api(ns, 'configmaps'), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `race-${i}` } })));
    assert.equal(results.filter((r) => r.status === 201).length, 1, results.map((r) => r.status).join(','));
    for (const r of results.filter((x) => x.status !== 201)) {
      expectStatus(r, 403, 'Forbidden', /^configmaps "race-\d+" is forbidden: exceeded quota: cm, requested: count\/configmaps=1, used: count\/configmaps=5, limited: count\/configmaps=5$/);
    }
    assert.equal((await env.plinth.client.get(api(ns, 'configmaps'))).body.items.length, 5);
  });

  it('admits all of 20 concurrent creates when there is room, each charged once', async () => {
    const ns = 'rq-room';
    await namespace(ns);
    await quota(ns, 'cm', { configmaps: '50' });
    const start = Number((await used(ns, 'cm'))['configmaps']);
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => env.plinth.client.post(api(ns, 'configmaps'), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `room-${i}` } })));
    assert.deepEqual(results.map((r) => r.status), Array(20).fill(201));
    assert.equal(Number((await used(ns, 'cm'))['configmaps']), start + 20);
  });

  it('never over-admits while deletes make the controller recount during creates', async () => {
    const ns = 'rq-churn';
    await namespace(ns);
    await quota(ns, 'cm', { 'count/configmaps': '5' });
    const cm = (name: string): Spec => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name } });
    const start = Number((await used(ns, 'cm'))['count/configmaps']);
    for (let i = start; i < 5; i++) expectCode(await env.plinth.client.post(api(ns, 'configmaps'), cm(`seed-${i}`)), 201);
    const count = async (): Promise<number> => (await env.plinth.client.get(api(ns, 'configmaps'))).body.items.length;
    for (let round = 0; round < 15; round++) {
      const victim = (await env.plinth.client.get(api(ns, 'configmaps'))).body.items.find((c: { metadata: { name: string } }) => c.metadata.name !== 'kube-root-ca.crt');
      // One delete frees one unit; the controller recounts while the creates are charged and stored.
      await Promise.all([
        victim && env.plinth.client.delete(`${api(ns, 'configmaps')}/${victim.metadata.name}`),
        ...Array.from({ length: 3 }, (_, i) => new Promise((r) => setTimeout(r, i * 15)).then(() => env.plinth.client.post(api(ns, 'configmaps'), cm(`r${round}-${i}`)))),
      ]);
      assert.ok((await count()) <= 5, `round ${round}: ${await count()} configmaps under a quota of 5`);
      await new Promise((r) => setTimeout(r, 100));
    }
    await eventually(async () => Number((await used(ns, 'cm'))['count/configmaps']) === (await count()), 10_000, 'usage to match the configmaps');
  });

  it('admits exactly one of 20 creates split across two replicas: the quota status write is a compare-and-swap', async () => {
    const ns = 'rq-replicas';
    await namespace(ns);
    await quota(ns, 'pods', { pods: '3' });
    for (let i = 0; i < 2; i++) expectCode(await env.plinth.client.post(api(ns, 'pods'), pod(`p${i}`)), 201);
    const second = await startInProcess({ etcd: env.etcd });
    try {
      await eventually(async () => (await second.client.get(`${api(ns, 'resourcequotas')}/pods?resourceVersion=0`)).body.status?.used?.pods === '2', 10_000, 'the second replica\'s cache');
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? env.plinth.client : second.client).post(api(ns, 'pods'), pod(`race-${i}`))),
      );
      assert.equal(results.filter((r) => r.status === 201).length, 1, results.map((r) => r.status).join(','));
      for (const r of results.filter((x) => x.status !== 201)) {
        // A replica that loses the race re-reads the quota and refuses; only conflicts past kube's
        // three retries would answer 409.
        if (r.status === 409) expectStatus(r, 409, 'Conflict');
        else expectStatus(r, 403, 'Forbidden', /exceeded quota: pods, requested: pods=1, used: pods=3, limited: pods=3$/);
      }
    } finally {
      await second.stop();
    }
    assert.equal((await env.plinth.client.get(api(ns, 'pods'))).body.items.length, 3);
    assert.deepEqual(await used(ns, 'pods'), { pods: '3' });
  });

  it("limits resources to namespaces whose quotas cover them, from the plugin's configuration (limitedResources)", async () => {
    const ns = 'rq-limited';
    await namespace(ns);
    expectCode(await env.plinth.client.post('/apis/scheduling.k8s.io/v1/priorityclasses', { apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name: 'rq-critical' }, value: 100 }), 201);
    const dir = tempDir();
    const file = join(dir, 'admission.yaml');
    writeFileSync(
      file,
      JSON.stringify({
        apiVersion: 'apiserver.config.k8s.io/v1',
        kind: 'AdmissionConfiguration',
        plugins: [
          {
            name: 'ResourceQuota',
            configuration: {
              apiVersion: 'apiserver.config.k8s.io/v1',
              kind: 'ResourceQuotaConfiguration',
              limitedResources: [
                { resource: 'pods', matchContains: ['requests.cpu'] },
                { resource: 'pods', matchScopes: [{ scopeName: 'PriorityClass', operator: 'In', values: ['rq-critical'] }] },
              ],
            },
          },
        ],
      }),
    );
    const limitedServer = await startInProcess({ etcd: env.etcd, args: [`--admission-control-config-file=${file}`] });
    try {
      const client = limitedServer.client;
      expectCode(await client.post(api(ns, 'pods'), pod('free')), 201);
      expectStatus(await client.post(api(ns, 'pods'), withResources('cpu', { cpu: '1' })), 403, 'Forbidden', 'pods "cpu" is forbidden: insufficient quota to consume: requests.cpu');
      expectStatus(await client.post(api(ns, 'pods'), pod('critical', { priorityClassName: 'rq-critical' })), 500, '', 'insufficient quota to match these scopes: [{PriorityClass In [rq-critical]}]');
      await quota(ns, 'critical', { pods: '10' }, { scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', operator: 'In', values: ['rq-critical'] }] } });
      await quota(ns, 'cpu', { 'requests.cpu': '2' });
      await eventually(async () => (await client.get(`${api(ns, 'resourcequotas')}?resourceVersion=0`)).body.items.filter((q: { status?: { hard?: unknown } }) => q.status?.hard).length === 2, 10_000, 'the quotas in the second replica\'s cache');
      expectCode(await client.post(api(ns, 'pods'), withResources('cpu', { cpu: '1' })), 201);
      expectCode(await client.post(api(ns, 'pods'), pod('critical', { priorityClassName: 'rq-critical', containers: [container('c', { requests: { cpu: '100m' } })] })), 201);
    } finally {
      await limitedServer.stop();
    }
  });
});
