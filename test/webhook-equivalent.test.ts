/**
 * Admission webhooks and matchPolicy (kube's generic.Webhook.ShouldCallHook with the
 * EquivalentResourceMapper): a webhook registered for one version of a resource sees writes made
 * through every other version or group that stores the same objects (matchPolicy Equivalent, v1's
 * default), with the object converted to its version and `kind`/`resource` of that version, and
 * `requestKind`/`requestResource`/`requestSubResource` as the request was made; a mutating
 * webhook's patch lands, converted back, on the object written. matchPolicy Exact sees only its
 * own version. Custom resources (a CRD with v1 storage and v2 served) and Events (core/v1 and
 * events.k8s.io), create, update, delete, dry-run and the status sub-resource, against a real
 * HTTPS webhook server started here.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { eventually, tempDir, usePlinth } from './harness.js';
import { expectCode, expectStatus } from './assertions.js';
import { Pki } from './auth-fixtures.js';

const AR = '/apis/admissionregistration.k8s.io/v1';
const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const GROUP = 'eq.example.com';

const env = usePlinth();
const dir = tempDir('plinth-webhook-equivalent-');
let server: Server;
let port = 0;
let caBundle = '';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- AdmissionReview JSON as received
type Review = any;
/** Every AdmissionReview request received, by path. */
const received = new Map<string, Review[]>();
const requestsTo = (path: string): Review[] => (received.get(path) ?? []).map((r) => r.request);

/** What each path answers: the response part of the AdmissionReview. */
const answers: Record<string, (review: Review) => Record<string, unknown>> = {
  // Refuses red widgets, allows anything else.
  '/no-red': (review) => (review.request.object?.spec?.color === 'red' ? { allowed: false, status: { code: 403, reason: 'Forbidden', message: 'red is not allowed' } } : { allowed: true }),
  // Sets spec.color and a label (on an Event: the label and the message).
  '/paint': (review) => {
    const obj = review.request.object;
    const ops: unknown[] = [];
    if (!obj.metadata.labels) ops.push({ op: 'add', path: '/metadata/labels', value: {} });
    ops.push({ op: 'add', path: '/metadata/labels/painted-as', value: review.request.kind.version });
    if (obj.kind === 'Event' && obj.apiVersion === 'v1') ops.push({ op: 'replace', path: '/message', value: `${obj.message} (checked)` });
    else if (obj.kind === 'Event') ops.push({ op: 'replace', path: '/note', value: `${obj.note} (checked)` });
    else ops.push({ op: 'add', path: '/spec/color', value: 'green' });
    return { allowed: true, patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(ops)).toString('base64') };
  },
};

before(async () => {
  const certs = join(dir, 'certs');
  mkdirSync(certs);
  const pki = new Pki(certs).rootCA('ca').serving('server', 'ca');
  caBundle = Buffer.from(pki.pem('ca')).toString('base64');
  server = createServer({ cert: pki.pem('server'), key: pki.keyPem('server') }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = new URL(req.url ?? '/', 'https://x').pathname;
      const review = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      received.set(path, [...(received.get(path) ?? []), review]);
      const answer = answers[path]?.(review) ?? { allowed: true };
      res.setHeader('Content-Type', 'application/json');
      res.end(JSON.stringify({ apiVersion: review.apiVersion, kind: 'AdmissionReview', response: { uid: review.request.uid, ...answer } }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;

});

after(async () => {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
  rmSync(dir, { recursive: true, force: true });
});

const c = () => env.plinth.client;
const widgets = (ns: string, version: string, name = ''): string => `/apis/${GROUP}/${version}/namespaces/${ns}/widgets${name ? `/${name}` : ''}`;
const widget = (version: string, name: string, spec: object): object => ({ apiVersion: `${GROUP}/${version}`, kind: 'Widget', metadata: { name }, spec });

interface Hook {
  name: string;
  path: string;
  rules: object[];
  test: string;
  matchPolicy?: 'Exact' | 'Equivalent';
}

/** A configuration whose webhooks see only namespaces labelled for `test`; resolves once admission has it. */
async function configure(mutating: boolean, name: string, hooks: Hook[]): Promise<void> {
  const path = `${AR}/${mutating ? 'mutating' : 'validating'}webhookconfigurations`;
  const res = await c().post(path, {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: mutating ? 'MutatingWebhookConfiguration' : 'ValidatingWebhookConfiguration',
    metadata: { name },
    webhooks: hooks.map((h) => ({
      name: h.name,
      clientConfig: { url: `https://127.0.0.1:${port}${h.path}`, caBundle },
      rules: h.rules,
      sideEffects: 'None',
      admissionReviewVersions: ['v1'],
      namespaceSelector: { matchLabels: { 'equivalent-test': h.test } },
      ...(h.matchPolicy ? { matchPolicy: h.matchPolicy } : {}),
    })),
  });
  expectCode(res, 201, `create ${name}`);
  await eventually(async () => (await c().get(`${path}?resourceVersion=0`)).body.items.some((i: { metadata: { name: string } }) => i.metadata.name === name), 10_000, `${name} in the watch cache`);
}

async function namespace(test: string): Promise<string> {
  const name = `eq-${test}`;
  expectCode(await c().post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: { 'equivalent-test': test } } }), 201);
  return name;
}

/** The CRD of these tests: v1 (storage) and v2, both served, with a status sub-resource. */
async function installWidgets(): Promise<void> {
  const c = env.plinth.client;
  const schema = {
    openAPIV3Schema: {
      type: 'object',
      properties: {
        spec: { type: 'object', properties: { size: { type: 'integer' }, color: { type: 'string' } } },
        status: { type: 'object', properties: { phase: { type: 'string' } } },
      },
    },
  };
  const version = (name: string, storage: boolean): object => ({ name, served: true, storage, schema, subresources: { status: {} } });
  expectCode(
    await c.post(CRDS, {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: `widgets.${GROUP}` },
      spec: { group: GROUP, scope: 'Namespaced', names: { plural: 'widgets', singular: 'widget', kind: 'Widget' }, versions: [version('v1', true), version('v2', false)] },
    }),
    201,
  );
  for (const v of ['v1', 'v2']) await eventually(async () => (await c.get(`/apis/${GROUP}/${v}/namespaces/default/widgets`)).status === 200, 15_000, `widgets ${v} served`);
}

const widgetRule = (version: string, resources = ['widgets'], operations = ['*']): object => ({ operations, apiGroups: [GROUP], apiVersions: [version], resources });
const gvk = (group: string, version: string, kind: string) => ({ group, version, kind });
const gvr = (group: string, version: string, resource: string) => ({ group, version, resource });

describe('matchPolicy Equivalent: custom resources', () => {
  before(installWidgets);

  it('a v1 validating webhook sees writes through v2, converted to v1, with the request as made', async () => {
    const ns = await namespace('validate');
    await configure(false, 'eq-validate', [
      { name: 'v1-equivalent.eq.test', path: '/no-red', rules: [widgetRule('v1')], test: 'validate' },
      { name: 'v1-exact.eq.test', path: '/exact', rules: [widgetRule('v1')], test: 'validate', matchPolicy: 'Exact' },
    ]);
    expectCode(await c().post(widgets(ns, 'v2'), widget('v2', 'w1', { size: 1, color: 'blue' })), 201);
    const [create] = requestsTo('/no-red').filter((r) => r.name === 'w1');
    assert.ok(create, 'the v1 webhook was called for a v2 write');
    assert.equal(create.operation, 'CREATE');
    assert.deepEqual(create.kind, gvk(GROUP, 'v1', 'Widget'));
    assert.deepEqual(create.resource, gvr(GROUP, 'v1', 'widgets'));
    assert.deepEqual(create.requestKind, gvk(GROUP, 'v2', 'Widget'));
    assert.deepEqual(create.requestResource, gvr(GROUP, 'v2', 'widgets'));
    assert.equal(create.object.apiVersion, `${GROUP}/v1`);
    assert.equal(create.object.kind, 'Widget');
    assert.deepEqual(create.object.spec, { size: 1, color: 'blue' });
    assert.equal(create.oldObject, null);
    // matchPolicy Exact: only writes of its own version.
    assert.equal(requestsTo('/exact').filter((r) => r.name === 'w1').length, 0);

    // A refusal through v2 holds: nothing is stored.
    expectStatus(await c().post(widgets(ns, 'v2'), widget('v2', 'w-red', { color: 'red' })), 403, 'Forbidden', 'admission webhook "v1-equivalent.eq.test" denied the request: red is not allowed');
    expectCode(await c().get(widgets(ns, 'v1', 'w-red')), 404);

    // Update through v2: object and oldObject in v1.
    const current = (await c().get(widgets(ns, 'v2', 'w1'))).body;
    expectCode(await c().put(widgets(ns, 'v2', 'w1'), { ...current, spec: { size: 2, color: 'blue' } }), 200);
    const update = requestsTo('/no-red').find((r) => r.name === 'w1' && r.operation === 'UPDATE');
    assert.ok(update);
    assert.equal(update.object.apiVersion, `${GROUP}/v1`);
    assert.equal(update.oldObject.apiVersion, `${GROUP}/v1`);
    assert.deepEqual([update.oldObject.spec.size, update.object.spec.size], [1, 2]);
    assert.deepEqual(update.requestKind, gvk(GROUP, 'v2', 'Widget'));
    const latest = (await c().get(widgets(ns, 'v2', 'w1'))).body;
    expectStatus(await c().put(widgets(ns, 'v2', 'w1'), { ...latest, spec: { color: 'red' } }), 403, 'Forbidden');

    // Dry run through v2: the webhook is asked (it has no side effects), nothing is stored.
    expectCode(await c().post(`${widgets(ns, 'v2')}?dryRun=All`, widget('v2', 'w-dry', { size: 5 })), 201);
    const dry = requestsTo('/no-red').find((r) => r.name === 'w-dry');
    assert.equal(dry?.dryRun, true);
    assert.equal(dry?.object.apiVersion, `${GROUP}/v1`);
    expectCode(await c().get(widgets(ns, 'v1', 'w-dry')), 404);

    // The Exact webhook still sees v1 writes.
    expectCode(await c().post(widgets(ns, 'v1'), widget('v1', 'w-v1', { size: 3 })), 201);
    const exact = requestsTo('/exact').find((r) => r.name === 'w-v1');
    assert.deepEqual(exact?.requestKind, gvk(GROUP, 'v1', 'Widget'));
    assert.deepEqual(exact?.kind, gvk(GROUP, 'v1', 'Widget'));

    // Delete through v2: the old object in v1, no object.
    expectCode(await c().delete(widgets(ns, 'v2', 'w1')), 200);
    const del = requestsTo('/no-red').find((r) => r.name === 'w1' && r.operation === 'DELETE');
    assert.ok(del, 'the v1 webhook was called for a delete through v2');
    assert.equal(del.object, null);
    assert.equal(del.oldObject.apiVersion, `${GROUP}/v1`);
    assert.deepEqual(del.oldObject.spec, { size: 2, color: 'blue' });
    assert.deepEqual(del.requestResource, gvr(GROUP, 'v2', 'widgets'));
  });

  it('a v1 webhook on widgets/status sees status writes through v2 with the sub-resource named', async () => {
    const ns = await namespace('status');
    await configure(false, 'eq-status', [{ name: 'status.eq.test', path: '/status', rules: [widgetRule('v1', ['widgets/status'], ['UPDATE'])], test: 'status' }]);
    expectCode(await c().post(widgets(ns, 'v2'), widget('v2', 's1', { size: 1 })), 201);
    assert.equal(requestsTo('/status').length, 0, 'a main-resource write is not a status write');
    const res = await c().request('PATCH', `${widgets(ns, 'v2', 's1')}/status`, { rawBody: JSON.stringify({ status: { phase: 'Ready' } }), headers: { 'content-type': 'application/merge-patch+json' } });
    expectCode(res, 200);
    assert.equal(res.body.apiVersion, `${GROUP}/v2`);
    const [r] = requestsTo('/status');
    assert.ok(r);
    assert.equal(r.subResource, 'status');
    assert.equal(r.requestSubResource, 'status');
    assert.deepEqual(r.resource, gvr(GROUP, 'v1', 'widgets'));
    assert.deepEqual(r.requestResource, gvr(GROUP, 'v2', 'widgets'));
    assert.deepEqual(r.kind, gvk(GROUP, 'v1', 'Widget'));
    assert.equal(r.object.apiVersion, `${GROUP}/v1`);
    assert.deepEqual(r.object.status, { phase: 'Ready' });
    assert.equal(r.oldObject.apiVersion, `${GROUP}/v1`);
  });

  it('a v1 mutating webhook patches v2 writes in v1; the patch lands on the object written', async () => {
    const ns = await namespace('mutate');
    await configure(true, 'eq-mutate', [{ name: 'paint.eq.test', path: '/paint', rules: [widgetRule('v1', ['widgets'], ['CREATE'])], test: 'mutate' }]);
    const created = await c().post(widgets(ns, 'v2'), widget('v2', 'm1', { size: 1, color: 'blue' }));
    expectCode(created, 201);
    assert.equal(created.body.apiVersion, `${GROUP}/v2`);
    assert.equal(created.body.spec.color, 'green');
    // The webhook saw (and patched) the object in its own version.
    assert.equal(created.body.metadata.labels['painted-as'], 'v1');
    const stored = (await c().get(widgets(ns, 'v1', 'm1'))).body;
    assert.equal(stored.spec.color, 'green');
    assert.equal(stored.metadata.labels['painted-as'], 'v1');
    const [r] = requestsTo('/paint').filter((x) => x.name === 'm1');
    assert.equal(r.object.apiVersion, `${GROUP}/v1`);
    assert.deepEqual(r.requestKind, gvk(GROUP, 'v2', 'Widget'));
    // Dry run: patched in the answer, nothing stored.
    const dry = await c().post(`${widgets(ns, 'v2')}?dryRun=All`, widget('v2', 'm-dry', { color: 'blue' }));
    expectCode(dry, 201);
    assert.equal(dry.body.spec.color, 'green');
    expectCode(await c().get(widgets(ns, 'v2', 'm-dry')), 404);
  });
});

describe('matchPolicy Equivalent: Events across groups', () => {
  const coreEvents = (ns: string, name = ''): string => `/api/v1/namespaces/${ns}/events${name ? `/${name}` : ''}`;
  const groupEvents = (ns: string, name = ''): string => `/apis/events.k8s.io/v1/namespaces/${ns}/events${name ? `/${name}` : ''}`;
  const groupEvent = (ns: string, name: string, note: string): object => ({
    apiVersion: 'events.k8s.io/v1',
    kind: 'Event',
    metadata: { name, namespace: ns },
    eventTime: '2024-05-01T10:00:00.000000Z',
    regarding: { kind: 'ConfigMap', name: 'settings', namespace: ns, apiVersion: 'v1' },
    reason: 'Synced',
    note,
    type: 'Normal',
    action: 'Sync',
    reportingController: 'example.org/syncer',
    reportingInstance: 'syncer-1',
  });

  it('a core/v1 events webhook sees events.k8s.io/v1 writes as core/v1 Events', async () => {
    const ns = await namespace('events');
    await configure(false, 'eq-events', [{ name: 'core-events.eq.test', path: '/core-events', rules: [{ operations: ['CREATE', 'DELETE'], apiGroups: [''], apiVersions: ['v1'], resources: ['events'] }], test: 'events' }]);
    expectCode(await c().post(groupEvents(ns), groupEvent(ns, 'e1', 'config reloaded')), 201);
    const [r] = requestsTo('/core-events').filter((x) => x.name === 'e1');
    assert.ok(r, 'the core/v1 webhook was called for an events.k8s.io write');
    assert.deepEqual(r.kind, gvk('', 'v1', 'Event'));
    assert.deepEqual(r.resource, gvr('', 'v1', 'events'));
    assert.deepEqual(r.requestKind, gvk('events.k8s.io', 'v1', 'Event'));
    assert.deepEqual(r.requestResource, gvr('events.k8s.io', 'v1', 'events'));
    assert.equal(r.object.apiVersion, 'v1');
    assert.equal(r.object.kind, 'Event');
    // Converted as kube converts: regarding → involvedObject, note → message.
    assert.equal(r.object.message, 'config reloaded');
    assert.deepEqual(r.object.involvedObject, { kind: 'ConfigMap', name: 'settings', namespace: ns, apiVersion: 'v1' });
    assert.equal(r.object.note, undefined);
    expectCode(await c().delete(groupEvents(ns, 'e1')), 200);
    const del = requestsTo('/core-events').find((x) => x.name === 'e1' && x.operation === 'DELETE');
    assert.equal(del?.oldObject.apiVersion, 'v1');
    assert.equal(del?.oldObject.message, 'config reloaded');
  });

  it('an events.k8s.io/v1 webhook sees core/v1 writes as events.k8s.io Events, and mutating ones patch them', async () => {
    const ns = await namespace('events-rev');
    await configure(true, 'eq-events-rev', [{ name: 'group-events.eq.test', path: '/paint', rules: [{ operations: ['CREATE'], apiGroups: ['events.k8s.io'], apiVersions: ['v1'], resources: ['events'] }], test: 'events-rev' }]);
    const created = await c().post(coreEvents(ns), {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: 'c1' },
      involvedObject: { kind: 'ConfigMap', name: 'settings', namespace: ns },
      reason: 'Synced',
      message: 'done',
      type: 'Normal',
    });
    expectCode(created, 201);
    const [r] = requestsTo('/paint').filter((x) => x.name === 'c1');
    assert.ok(r);
    assert.deepEqual(r.kind, gvk('events.k8s.io', 'v1', 'Event'));
    assert.deepEqual(r.requestKind, gvk('', 'v1', 'Event'));
    assert.equal(r.object.apiVersion, 'events.k8s.io/v1');
    assert.equal(r.object.note, 'done');
    // The patch was made to `note` in events.k8s.io/v1; the core Event written has it as `message`.
    assert.equal(created.body.apiVersion, 'v1');
    assert.equal(created.body.message, 'done (checked)');
    assert.equal(created.body.metadata.labels['painted-as'], 'v1');
    assert.equal((await c().get(groupEvents(ns, 'c1'))).body.note, 'done (checked)');
  });
});

describe('the scale sub-resource of a custom resource', () => {
  // kube admits a scale write as the `scale` sub-resource with autoscaling/v1 Scale objects:
  // a webhook on gadgets/scale sees it (through every served version), one on gadgets does not.
  answers['/scale-limit'] = (review) => (review.request.object?.spec?.replicas > 5 ? { allowed: false, status: { code: 403, reason: 'Forbidden', message: 'at most 5 replicas' } } : { allowed: true });
  answers['/scale-bump'] = (review) =>
    review.request.object?.spec?.replicas === 3 ? { allowed: true, patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify([{ op: 'replace', path: '/spec/replicas', value: 4 }])).toString('base64') } : { allowed: true };
  const gadgets = (ns: string, version: string, name = '', sub = ''): string => `/apis/${GROUP}/${version}/namespaces/${ns}/gadgets${name ? `/${name}` : ''}${sub ? `/${sub}` : ''}`;
  const mergePatch = (path: string, body: object) => c().request('PATCH', path, { body, headers: { 'content-type': 'application/merge-patch+json' } });
  const specReplicas = async (ns: string, name: string): Promise<number> => (await c().get(gadgets(ns, 'v1', name))).body.spec.replicas;

  before(async () => {
    const schema = { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { replicas: { type: 'integer' } } }, status: { type: 'object', properties: { replicas: { type: 'integer' } } } } } };
    const subresources = { scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas' } };
    const version = (name: string, storage: boolean): object => ({ name, served: true, storage, schema, subresources });
    expectCode(
      await c().post(CRDS, {
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        metadata: { name: `gadgets.${GROUP}` },
        spec: { group: GROUP, scope: 'Namespaced', names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget' }, versions: [version('v1', true), version('v2', false)] },
      }),
      201,
    );
    for (const v of ['v1', 'v2']) await eventually(async () => (await c().get(gadgets('default', v))).status === 200, 15_000, `gadgets ${v} served`);
  });

  it('scale writes are admitted as gadgets/scale with Scale objects, never as writes of the gadget', async () => {
    const ns = await namespace('scale');
    await configure(false, 'eq-scale-validate', [
      { name: 'scale-limit.eq.test', path: '/scale-limit', rules: [widgetRule('v1', ['gadgets/scale'], ['UPDATE'])], test: 'scale' },
      { name: 'gadget-main.eq.test', path: '/gadget-main', rules: [widgetRule('v1', ['gadgets'])], test: 'scale' },
    ]);
    await configure(true, 'eq-scale-mutate', [{ name: 'scale-bump.eq.test', path: '/scale-bump', rules: [widgetRule('v1', ['gadgets/scale'], ['UPDATE'])], test: 'scale' }]);
    expectCode(await c().post(gadgets(ns, 'v1'), { apiVersion: `${GROUP}/v1`, kind: 'Gadget', metadata: { name: 'g1' }, spec: { replicas: 1 } }), 201);
    assert.equal(requestsTo('/gadget-main').filter((r) => r.name === 'g1' && r.operation === 'CREATE').length, 1);

    // PUT of the Scale through v2: the v1 scale webhook sees a Scale, the request as made.
    const scale = (await c().get(gadgets(ns, 'v2', 'g1', 'scale'))).body;
    expectCode(await c().put(gadgets(ns, 'v2', 'g1', 'scale'), { ...scale, spec: { replicas: 2 } }), 200);
    const seen = requestsTo('/scale-limit').filter((r) => r.name === 'g1');
    assert.equal(seen.length, 1);
    assert.deepEqual(seen[0].kind, gvk('autoscaling', 'v1', 'Scale'));
    assert.deepEqual(seen[0].resource, gvr(GROUP, 'v1', 'gadgets'));
    assert.equal(seen[0].subResource, 'scale');
    assert.deepEqual(seen[0].requestKind, gvk('autoscaling', 'v1', 'Scale'));
    assert.deepEqual(seen[0].requestResource, gvr(GROUP, 'v2', 'gadgets'));
    assert.equal(seen[0].requestSubResource, 'scale');
    assert.deepEqual([seen[0].object.kind, seen[0].object.spec.replicas, seen[0].oldObject.kind, seen[0].oldObject.spec.replicas], ['Scale', 2, 'Scale', 1]);
    assert.equal(await specReplicas(ns, 'g1'), 2);

    // A refusal of the Scale holds; a merge patch is admitted the same way.
    expectStatus(await mergePatch(gadgets(ns, 'v1', 'g1', 'scale'), { spec: { replicas: 7 } }), 403, 'Forbidden', 'admission webhook "scale-limit.eq.test" denied the request: at most 5 replicas');
    assert.equal(await specReplicas(ns, 'g1'), 2);
    // The mutating webhook's patch of the Scale lands on the gadget.
    const patched = await mergePatch(gadgets(ns, 'v1', 'g1', 'scale'), { spec: { replicas: 3 } });
    expectCode(patched, 200);
    assert.equal(patched.body.spec.replicas, 4);
    assert.equal(await specReplicas(ns, 'g1'), 4);

    // The gadget's own webhook saw none of the scale writes.
    assert.equal(requestsTo('/gadget-main').filter((r) => r.name === 'g1' && r.operation === 'UPDATE').length, 0);
  });
});
