/**
 * CRD conversion webhooks (issue 27 §2) against a real HTTPS conversion webhook started here (its
 * own CA, trusted through caBundle): v1 and v1beta1 ConversionReviews, url and service client
 * configs, reads/lists/watches/writes/apply through the version that is not stored, kubectl through
 * both versions, no call when versions match, storage-version migration reads, kube 1.24's errors
 * (500, no reason) for each way a webhook can fail, a watch ending on a failed conversion, and
 * apiserver_crd_webhook_conversion_duration_seconds.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { execFile } from 'node:child_process';
import { eventually, kubectlPath, tempDir, usePlinth } from './harness.js';
import { expectCode, expectStatus } from './assertions.js';
import { Pki } from './auth-fixtures.js';
import { parseExposition, samplesOf } from './metrics-parser.js';

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const GROUP = 'conv.example.com';
const NS = 'default';
/** The Service a service-referenced webhook is reached through. */
const SVC_NS = 'conv-system';
const SVC = 'converter';

/**
 * kube's Endpoints validation refuses loopback addresses: the service test needs the machine's
 * first non-loopback IPv4 address (skipped on a machine with none).
 */
const BACKEND_IP = Object.values(networkInterfaces()).flat().find((i) => i && !i.internal && i.family === 'IPv4')?.address;
const needsIP = BACKEND_IP ? {} : { skip: 'no non-loopback IPv4 address for an Endpoints object' };

const env = usePlinth();
const dir = tempDir('plinth-conversion-webhook-');
let server: Server;
let port = 0;
let deadPort = 0;
let caBundle = '';

/** Every review received, by path. */
const received = new Map<string, any[]>();
const calls = (path: string): number => received.get(path)?.length ?? 0;

/** How `/convert` misbehaves (the error cases); 'ok' converts. */
let mode = 'ok';

/** v1 has spec.color, v2 spec.colour: a real conversion, so a missed call shows. */
function convertOne(obj: any, desired: string): any {
  const out = structuredClone(obj);
  out.apiVersion = desired;
  const spec = out.spec ?? {};
  if (desired.endsWith('/v2') && 'color' in spec) {
    spec.colour = spec.color;
    delete spec.color;
  } else if (desired.endsWith('/v1') && 'colour' in spec) {
    spec.color = spec.colour;
    delete spec.colour;
  }
  return out;
}

function answer(review: any): { status?: number; body: unknown } {
  const req = review.request;
  const converted = req.objects.map((o: any) => convertOne(o, req.desiredAPIVersion));
  const response = (extra: object = {}) => ({ uid: req.uid, convertedObjects: converted, result: { status: 'Success' }, ...extra });
  const reviewOf = (resp: object) => ({ apiVersion: review.apiVersion, kind: 'ConversionReview', response: resp });
  switch (mode) {
    case 'failure':
      return { body: reviewOf(response({ convertedObjects: [], result: { status: 'Failure', message: 'cannot convert this' } })) };
    case 'failure-bare':
      return { body: reviewOf(response({ convertedObjects: [], result: { status: 'Failure' } })) };
    case 'http-500':
      return { status: 500, body: 'boom' };
    case 'wrong-review-kind':
      return { body: { apiVersion: 'apiextensions.k8s.io/v1', kind: 'AdmissionReview', response: response() } };
    case 'wrong-uid':
      return { body: reviewOf(response({ uid: 'not-the-uid' })) };
    case 'no-response':
      return { body: { apiVersion: review.apiVersion, kind: 'ConversionReview' } };
    case 'wrong-count':
      return { body: reviewOf(response({ convertedObjects: [...converted, ...converted] })) };
    case 'wrong-version':
      return { body: reviewOf(response({ convertedObjects: converted.map((o: any) => ({ ...o, apiVersion: `${GROUP}/v3` })) })) };
    case 'wrong-kind':
      return { body: reviewOf(response({ convertedObjects: converted.map((o: any) => ({ ...o, kind: 'Other' })) })) };
    case 'renamed':
      return { body: reviewOf(response({ convertedObjects: converted.map((o: any) => ({ ...o, metadata: { ...o.metadata, name: 'someone-else' } })) })) };
    case 'bad-label':
      return { body: reviewOf(response({ convertedObjects: converted.map((o: any) => ({ ...o, metadata: { ...o.metadata, labels: { ok: 'bad value!' } } })) })) };
    case 'metadata':
      // Labels and annotations are taken; every other metadata change is dropped.
      return {
        body: reviewOf(response({ convertedObjects: converted.map((o: any) => ({ ...o, metadata: { ...o.metadata, labels: { converted: 'yes' }, generation: 99, finalizers: ['x/y'] } })) })),
      };
    default:
      return { body: reviewOf(response()) };
  }
}

before(async () => {
  const certs = join(dir, 'certs');
  mkdirSync(certs);
  const pki = new Pki(certs)
    .rootCA('ca')
    .issue('server', '/CN=converter', 'ca', ['basicConstraints=critical,CA:FALSE', 'keyUsage=critical,digitalSignature', 'extendedKeyUsage=serverAuth', `subjectAltName=IP:127.0.0.1,DNS:${SVC}.${SVC_NS}.svc`]);
  caBundle = Buffer.from(pki.pem('ca')).toString('base64');
  server = createServer({ cert: pki.pem('server'), key: pki.keyPem('server') }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'https://x');
      const review = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      received.set(url.pathname, [...(received.get(url.pathname) ?? []), { review, query: url.search, contentType: req.headers['content-type'], userAgent: req.headers['user-agent'] }]);
      if (url.pathname === '/admit') {
        res.setHeader('Content-Type', 'application/json');
        res.end(JSON.stringify({ apiVersion: review.apiVersion, kind: 'AdmissionReview', response: { uid: review.request.uid, allowed: true } }));
        return;
      }
      const { status, body } = answer(review);
      res.statusCode = status ?? 200;
      res.setHeader('Content-Type', typeof body === 'string' ? 'text/plain' : 'application/json');
      res.end(typeof body === 'string' ? body : JSON.stringify(body));
    });
  });
  await new Promise<void>((r) => server.listen(0, BACKEND_IP ? '0.0.0.0' : '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  deadPort = (probe.address() as AddressInfo).port;
  await new Promise<void>((r) => probe.close(() => r()));
});

after(async () => {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
  rmSync(dir, { recursive: true, force: true });
});

const c = () => env.plinth.client;
/** kubectl, run asynchronously (plinth runs in this process). */
async function kubectl(...args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(kubectlPath(), ['--kubeconfig', env.plinth.server.kubeconfigPath, '--cache-dir', join(dir, 'kube-cache'), ...args], { encoding: 'utf8', timeout: 60_000 }, (err, stdout, stderr) =>
      err ? reject(new Error(`kubectl ${args.join(' ')}: ${stderr}`)) : resolve(stdout),
    );
  });
}

const schema = { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } } };

/** A CRD of `plural` with v1 (storage) and v2, converted by the webhook `clientConfig`. */
function crdOf(plural: string, kind: string, clientConfig: object, reviewVersions = ['v1']): any {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${GROUP}` },
    spec: {
      group: GROUP,
      scope: 'Namespaced',
      names: { plural, singular: kind.toLowerCase(), kind, listKind: `${kind}List` },
      versions: [
        { name: 'v1', served: true, storage: true, schema },
        { name: 'v2', served: true, storage: false, schema },
      ],
      conversion: { strategy: 'Webhook', webhook: { clientConfig, conversionReviewVersions: reviewVersions } },
    },
  };
}

const path = (plural: string, version: string, name = ''): string => `/apis/${GROUP}/${version}/namespaces/${NS}/${plural}${name ? `/${name}` : ''}`;

async function install(crd: any): Promise<void> {
  expectCode(await c().post(CRDS, crd), 201, 'CRD create');
  for (const v of ['v1', 'v2']) await eventually(async () => (await c().get(path(crd.spec.names.plural, v))).status === 200, 20_000, `${crd.metadata.name} ${v} served`);
}

const objOf = (kind: string, version: string, name: string, spec: object): object => ({ apiVersion: `${GROUP}/${version}`, kind, metadata: { name }, spec });

describe('conversion webhook, v1 reviews through a url', () => {
  const P = 'things';
  before(async () => {
    await install(crdOf(P, 'Thing', { url: `https://127.0.0.1:${port}/convert`, caBundle }));
  });

  it('reads and writes through the stored version make no call', async () => {
    const before = calls('/convert');
    expectCode(await c().post(path(P, 'v1'), objOf('Thing', 'v1', 'same', { color: 'red' })), 201);
    expectCode(await c().get(path(P, 'v1', 'same')), 200);
    expectCode(await c().get(path(P, 'v1')), 200);
    expectCode(await c().request('PATCH', path(P, 'v1', 'same'), { rawBody: JSON.stringify({ spec: { color: 'blue' } }), headers: { 'content-type': 'application/merge-patch+json' } }), 200);
    assert.equal(calls('/convert'), before);
  });

  it('a get through v2 sends one v1 ConversionReview and serves the converted object', async () => {
    expectCode(await c().post(path(P, 'v1'), objOf('Thing', 'v1', 'one', { color: 'green' })), 201);
    const before = calls('/convert');
    const res = await c().get(path(P, 'v2', 'one'));
    expectCode(res, 200);
    assert.equal(res.body.apiVersion, `${GROUP}/v2`);
    assert.deepEqual(res.body.spec, { colour: 'green' });
    assert.equal(calls('/convert'), before + 1);
    const { review, query, contentType, userAgent } = received.get('/convert')!.at(-1);
    assert.equal(userAgent, 'kube-apiserver-admission');
    assert.equal(review.apiVersion, 'apiextensions.k8s.io/v1');
    assert.equal(review.kind, 'ConversionReview');
    assert.equal(review.request.desiredAPIVersion, `${GROUP}/v2`);
    assert.match(review.request.uid, /^[0-9a-f-]{36}$/);
    assert.equal(review.request.objects.length, 1);
    assert.equal(review.request.objects[0].apiVersion, `${GROUP}/v1`);
    assert.equal(query, '?timeout=30s');
    assert.equal(contentType, 'application/json');
  });

  it('a list through v2 is one review for the page', async () => {
    for (const n of ['l1', 'l2']) expectCode(await c().post(path(P, 'v1'), objOf('Thing', 'v1', n, { color: n })), 201);
    const before = calls('/convert');
    const res = await c().get(path(P, 'v2'));
    expectCode(res, 200);
    assert.equal(res.body.apiVersion, `${GROUP}/v2`);
    const l1 = res.body.items.find((i: any) => i.metadata.name === 'l1');
    assert.deepEqual(l1.spec, { colour: 'l1' });
    assert.equal(calls('/convert'), before + 1);
    assert.equal(received.get('/convert')!.at(-1).review.request.objects.length, res.body.items.length);
  });

  it('a list page answered with more than 3 MiB of converted objects is served', async () => {
    // Five objects of ~800 kB: the review and its answer are ~4 MB, over the admission webhooks'
    // 3 MiB cap, which a conversion answer (a whole page) is not held to.
    const big = 'x'.repeat(800_000);
    for (let i = 0; i < 5; i++) {
      const o = objOf('Thing', 'v1', `big-${i}`, { color: big }) as { metadata: Record<string, unknown> };
      o.metadata['labels'] = { size: 'big' };
      expectCode(await c().post(path(P, 'v1'), o), 201);
    }
    const res = await c().get(`${path(P, 'v2')}?labelSelector=size%3Dbig`);
    expectCode(res, 200);
    assert.equal(res.body.items.length, 5);
    for (const item of res.body.items) assert.equal(item.spec.colour.length, big.length);
    for (let i = 0; i < 5; i++) expectCode(await c().delete(path(P, 'v1', `big-${i}`)), 200);
  });

  it('create, merge patch and apply through v2 store v1 objects', async () => {
    const created = await c().post(path(P, 'v2'), objOf('Thing', 'v2', 'w2', { colour: 'cyan' }));
    expectCode(created, 201);
    assert.deepEqual(created.body.spec, { colour: 'cyan' });
    assert.equal(created.body.apiVersion, `${GROUP}/v2`);
    assert.deepEqual((await c().get(path(P, 'v1', 'w2'))).body.spec, { color: 'cyan' });
    const patched = await c().request('PATCH', path(P, 'v2', 'w2'), { rawBody: JSON.stringify({ spec: { colour: 'teal' } }), headers: { 'content-type': 'application/merge-patch+json' } });
    expectCode(patched, 200);
    assert.deepEqual(patched.body.spec, { colour: 'teal' });
    assert.deepEqual((await c().get(path(P, 'v1', 'w2'))).body.spec, { color: 'teal' });
    const applied = await c().request('PATCH', `${path(P, 'v2', 'ap')}?fieldManager=tester`, {
      rawBody: JSON.stringify(objOf('Thing', 'v2', 'ap', { colour: 'olive' })),
      headers: { 'content-type': 'application/apply-patch+yaml' },
    });
    expectCode(applied, 201);
    assert.deepEqual(applied.body.spec, { colour: 'olive' });
    assert.deepEqual((await c().get(path(P, 'v1', 'ap'))).body.spec, { color: 'olive' });
    const deleted = await c().delete(path(P, 'v2', 'ap'));
    expectCode(deleted, 200);
  });

  it('kubectl gets the objects through both versions', async () => {
    const v1 = JSON.parse(await kubectl('get', `things.v1.${GROUP}`, 'one', '-n', NS, '-o', 'json'));
    assert.deepEqual(v1.spec, { color: 'green' });
    const v2 = JSON.parse(await kubectl('get', `things.v2.${GROUP}`, 'one', '-n', NS, '-o', 'json'));
    assert.deepEqual(v2.spec, { colour: 'green' });
    assert.match(await kubectl('get', `things.v2.${GROUP}`, '-n', NS), /\bone\b/);
  });

  it('a watch through v2 gets converted events', async () => {
    const w = c().watch(`${path(P, 'v2')}?watch=1&fieldSelector=metadata.name%3Dwatched`, (ev) => ev.some((e) => e.type === 'ADDED'), 10_000);
    await new Promise((r) => setTimeout(r, 300));
    expectCode(await c().post(path(P, 'v1'), objOf('Thing', 'v1', 'watched', { color: 'pink' })), 201);
    const { events } = await w;
    const added = events.find((e) => e.type === 'ADDED');
    assert.ok(added, JSON.stringify(events));
    assert.equal(added.object.apiVersion, `${GROUP}/v2`);
    assert.deepEqual(added.object.spec, { colour: 'pink' });
  });

  it('an admission webhook registered for v1 (matchPolicy Equivalent) gets a v2 request\'s object converted by the webhook', async () => {
    const cfg = {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: 'things-v1' },
      webhooks: [
        {
          name: 'things.v1.check',
          clientConfig: { url: `https://127.0.0.1:${port}/admit`, caBundle },
          rules: [{ operations: ['CREATE'], apiGroups: [GROUP], apiVersions: ['v1'], resources: ['things'] }],
          matchPolicy: 'Equivalent',
          sideEffects: 'None',
          admissionReviewVersions: ['v1'],
        },
      ],
    };
    expectCode(await c().post('/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations', cfg), 201);
    try {
      // The configuration reaches admission through the watch cache: retry until it is called.
      await eventually(async () => {
        await c().delete(path(P, 'v2', 'admitted'));
        expectCode(await c().post(path(P, 'v2'), objOf('Thing', 'v2', 'admitted', { colour: 'navy' })), 201);
        return calls('/admit') > 0;
      }, 10_000, 'the admission webhook is called');
      const { review } = received.get('/admit')!.at(-1);
      assert.deepEqual(review.request.kind, { group: GROUP, version: 'v1', kind: 'Thing' });
      assert.deepEqual(review.request.requestKind, { group: GROUP, version: 'v2', kind: 'Thing' });
      assert.equal(review.request.object.apiVersion, `${GROUP}/v1`);
      assert.deepEqual(review.request.object.spec, { color: 'navy' });
    } finally {
      await c().delete('/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/things-v1');
    }
  });

  it('labels and annotations come from the webhook; other metadata changes are dropped', async () => {
    mode = 'metadata';
    try {
      const res = await c().get(path(P, 'v2', 'one'));
      expectCode(res, 200);
      assert.deepEqual(res.body.metadata.labels, { converted: 'yes' });
      assert.equal(res.body.metadata.generation, 1);
      assert.equal(res.body.metadata.finalizers, undefined);
    } finally {
      mode = 'ok';
    }
  });

  it('each way the webhook fails is a 500 with kube\'s message and no reason', async () => {
    const gvk = `${GROUP}/v1, Kind=Thing`;
    const cases: Array<[string, string | RegExp]> = [
      ['failure', `conversion webhook for ${gvk} failed: cannot convert this`],
      ['failure-bare', `conversion webhook for ${gvk} failed: response.result.status was 'Failure', not 'Success'`],
      ['http-500', `conversion webhook for ${gvk} failed: an error on the server ("boom") has prevented the request from succeeding`],
      ['wrong-review-kind', `conversion webhook for ${gvk} failed: expected webhook response of apiextensions.k8s.io/v1, Kind=ConversionReview, got apiextensions.k8s.io/v1, Kind=AdmissionReview`],
      ['wrong-uid', new RegExp(`^conversion webhook for ${gvk} failed: expected response\\.uid="[0-9a-f-]{36}", got "not-the-uid"$`)],
      ['no-response', `conversion webhook for ${gvk} failed: no response provided`],
      ['wrong-count', `conversion webhook for ${gvk} returned 2 objects, expected 1`],
      ['wrong-version', `conversion webhook for ${gvk} returned invalid object at index 0: invalid groupVersion (expected ${GROUP}/v2, received ${GROUP}/v3)`],
      ['wrong-kind', `conversion webhook for ${gvk} returned invalid object at index 0: invalid kind (expected Thing, received Other)`],
      ['renamed', `conversion webhook for ${gvk} returned invalid object: must have the same name: one != someone-else`],
      ['bad-label', /^conversion webhook for conv\.example\.com\/v1, Kind=Thing returned invalid metadata: metadata\.labels: Invalid value: "bad value!": /],
    ];
    try {
      for (const [m, message] of cases) {
        mode = m;
        const res = await c().get(path(P, 'v2', 'one'));
        expectStatus(res, 500, '', message);
      }
    } finally {
      mode = 'ok';
    }
  });

  it('a write through v2 fails when the webhook does, and nothing is stored', async () => {
    mode = 'failure';
    try {
      expectStatus(await c().post(path(P, 'v2'), objOf('Thing', 'v2', 'never', { colour: 'x' })), 500, '', `conversion webhook for ${GROUP}/v2, Kind=Thing failed: cannot convert this`);
    } finally {
      mode = 'ok';
    }
    expectStatus(await c().get(path(P, 'v1', 'never')), 404, 'NotFound');
  });

  it('a watch through v2 ends when a conversion fails', async () => {
    const w = c().watch(`${path(P, 'v2')}?watch=1&resourceVersion=${(await c().get(path(P, 'v1'))).body.metadata.resourceVersion}`, () => false, 8_000);
    await new Promise((r) => setTimeout(r, 300));
    mode = 'failure';
    const started = Date.now();
    try {
      expectCode(await c().post(path(P, 'v1'), objOf('Thing', 'v1', 'ends-watch', { color: 'x' })), 201);
      const { events } = await w;
      assert.equal(events.length, 0);
      assert.ok(Date.now() - started < 7_000, 'the stream ended before the client gave up');
    } finally {
      mode = 'ok';
    }
  });

  it('an unreachable webhook is a 500 naming the address', async () => {
    const crd = crdOf('deads', 'Dead', { url: `https://127.0.0.1:${deadPort}/convert`, caBundle });
    await install(crd);
    expectCode(await c().post(path('deads', 'v1'), objOf('Dead', 'v1', 'd', { color: 'x' })), 201);
    expectStatus(
      await c().get(path('deads', 'v2', 'd')),
      500,
      '',
      `conversion webhook for ${GROUP}/v1, Kind=Dead failed: Post "https://127.0.0.1:${deadPort}/convert?timeout=30s": dial tcp 127.0.0.1:${deadPort}: connect: connection refused`,
    );
  });

  it('apiserver_crd_webhook_conversion_duration_seconds counts conversions, failed ones apart', async () => {
    const metrics = parseExposition((await c().get('/metrics')).raw.toString());
    const count = (succeeded: string, from: string, to: string) =>
      samplesOf(metrics, 'apiserver_crd_webhook_conversion_duration_seconds_count', { crd_name: `things.${GROUP}`, from_version: from, to_version: to, succeeded })[0]?.value ?? 0;
    assert.ok(count('true', 'v1', 'v2') >= 3);
    assert.ok(count('true', 'v2', 'v1') >= 1);
    assert.ok(count('false', 'v1', 'v2') >= 10);
    assert.equal(metrics.get('apiserver_crd_webhook_conversion_duration_seconds')?.help, '[ALPHA] CRD webhook conversion duration in seconds');
    const buckets = samplesOf(metrics, 'apiserver_crd_webhook_conversion_duration_seconds_bucket', { crd_name: `things.${GROUP}`, from_version: 'v1', to_version: 'v2', succeeded: 'true' }).map((s) => s.labels['le']);
    assert.deepEqual(buckets, ['0.001', '0.002', '0.004', '0.008', '0.016', '0.032', '0.064', '0.128', '0.256', '0.512', '1.024', '2.048', '4.096', '8.192', '16.384', '+Inf']);
  });
});

describe('conversion webhook, v1beta1 reviews and storage-version migration', () => {
  const P = 'gadgets';
  before(async () => {
    await install(crdOf(P, 'Gadget', { url: `https://127.0.0.1:${port}/convert-beta`, caBundle }, ['v1beta1', 'v1']));
  });

  it('sends v1beta1 reviews (the first known of the CRD\'s list); their uid is not checked', async () => {
    expectCode(await c().post(path(P, 'v1'), objOf('Gadget', 'v1', 'old', { color: 'red' })), 201);
    mode = 'wrong-uid';
    try {
      const res = await c().get(path(P, 'v2', 'old'));
      expectCode(res, 200);
      assert.deepEqual(res.body.spec, { colour: 'red' });
    } finally {
      mode = 'ok';
    }
    assert.equal(received.get('/convert-beta')!.at(-1).review.apiVersion, 'apiextensions.k8s.io/v1beta1');
  });

  it('after the storage version moves to v2, objects stored at v1 are converted when read', async () => {
    const crd = (await c().get(`${CRDS}/${P}.${GROUP}`)).body;
    crd.spec.versions = crd.spec.versions.map((v: any) => ({ ...v, storage: v.name === 'v2' }));
    expectCode(await c().put(`${CRDS}/${P}.${GROUP}`, crd), 200);
    // The new storage version is in use once a v2 write stores v2 (read through v1: a conversion).
    await eventually(async () => {
      await c().delete(path(P, 'v2', 'probe'));
      if ((await c().post(path(P, 'v2'), objOf('Gadget', 'v2', 'probe', { colour: 'x' }))).status !== 201) return false;
      const before = calls('/convert-beta');
      await c().get(path(P, 'v2', 'probe'));
      return calls('/convert-beta') === before;
    }, 20_000, 'v2 is the storage version');
    // The object stored at v1 reads through v2, the storage version now, by one conversion.
    const before = calls('/convert-beta');
    const res = await c().get(path(P, 'v2', 'old'));
    expectCode(res, 200);
    assert.deepEqual(res.body.spec, { colour: 'red' });
    assert.equal(calls('/convert-beta'), before + 1);
    const list = await c().get(path(P, 'v2'));
    expectCode(list, 200);
    assert.deepEqual(list.body.items.find((i: any) => i.metadata.name === 'old').spec, { colour: 'red' });
  });
});

describe('conversion webhook through a service', () => {
  const P = 'widgets';
  before(async () => {
    await install(crdOf(P, 'Widget', { service: { namespace: SVC_NS, name: SVC, path: '/convert-svc', port: 8443 }, caBundle }));
  });

  it('a missing Service is a 500 naming it', async () => {
    expectCode(await c().post(path(P, 'v1'), objOf('Widget', 'v1', 's', { color: 'red' })), 201);
    expectStatus(
      await c().get(path(P, 'v2', 's')),
      500,
      '',
      `conversion webhook for ${GROUP}/v1, Kind=Widget failed: Post "https://${SVC}.${SVC_NS}.svc:8443/convert-svc?timeout=30s": service "${SVC}" not found`,
    );
  });

  it('the Service\'s endpoint is called, with the service name as the TLS server name', needsIP, async () => {
    expectCode(await c().post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: SVC_NS } }), 201);
    expectCode(await c().post(`/api/v1/namespaces/${SVC_NS}/services`, { apiVersion: 'v1', kind: 'Service', metadata: { name: SVC }, spec: { ports: [{ name: 'https', port: 8443, targetPort: port }] } }), 201);
    expectCode(await c().post(`/api/v1/namespaces/${SVC_NS}/endpoints`, { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: SVC }, subsets: [{ addresses: [{ ip: BACKEND_IP }], ports: [{ name: 'https', port }] }] }), 201);
    const res = await eventually(async () => {
      const r = await c().get(path(P, 'v2', 's'));
      return r.status === 200 ? r : undefined;
    }, 10_000, 'the service resolves');
    assert.deepEqual(res.body.spec, { colour: 'red' });
    assert.ok(calls('/convert-svc') >= 1);
  });
});
