/**
 * Dynamic admission webhooks against a local HTTPS webhook server started here (its own CA,
 * trusted through caBundle): refusals, JSONPatch mutations visible on the stored object, timeouts
 * and unreachable webhooks under failurePolicy Fail and Ignore, service references, dry-run,
 * namespace and object selectors, warnings (response headers and kubectl's stderr), the
 * AdmissionReview content, and the configuration resources themselves (defaults, validation,
 * kubectl's table).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { eventually, kubectlPath, tempDir, usePlinth, type Response } from './harness.js';
import { expectCode, expectStatus } from './assertions.js';
import { Pki } from './auth-fixtures.js';

const AR = '/apis/admissionregistration.k8s.io/v1';
const MUTATING = `${AR}/mutatingwebhookconfigurations`;
const VALIDATING = `${AR}/validatingwebhookconfigurations`;

const env = usePlinth();
const dir = tempDir('plinth-admission-webhooks-');
let server: Server;
let port = 0;
let caBundle = '';
/** Every AdmissionReview received, by path. */
const received = new Map<string, any[]>();
/** A port nothing listens on. */
let deadPort = 0;

type Answer = (review: any) => Record<string, unknown>;

/** What each path answers: the response part of the AdmissionReview. */
const answers: Record<string, Answer> = {
  '/allow': () => ({ allowed: true }),
  '/deny': () => ({ allowed: false, status: { code: 403, reason: 'Forbidden', message: 'no secrets here' }, warnings: ['denied, sorry'] }),
  '/deny-bare': () => ({ allowed: false }),
  '/warn': () => ({ allowed: true, warnings: ['careful: "quoted"', 'second warning'] }),
  '/mutate': (review) => {
    const hasLabels = !!review.request.object?.metadata?.labels;
    const ops = [
      ...(hasLabels ? [] : [{ op: 'add', path: '/metadata/labels', value: {} }]),
      { op: 'add', path: '/metadata/labels/mutated', value: 'yes' },
    ];
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
      const url = new URL(req.url ?? '/', 'https://x');
      const review = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      received.set(url.pathname, [...(received.get(url.pathname) ?? []), { review, query: url.search }]);
      const reply = (): void => {
        const answer = answers[url.pathname]?.(review) ?? { allowed: true };
        res.setHeader('Content-Type', 'application/json');
        res.end(JSON.stringify({ apiVersion: review.apiVersion, kind: 'AdmissionReview', response: { uid: review.request.uid, ...answer } }));
      };
      // Slower than any timeout the tests configure (1 s).
      if (url.pathname === '/slow') setTimeout(reply, 2500);
      else reply();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
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

function url(path: string): string {
  return `https://127.0.0.1:${port}${path}`;
}

interface HookSpec {
  name: string;
  path?: string;
  clientConfig?: Record<string, unknown>;
  rules?: unknown[];
  namespaceSelector?: unknown;
  objectSelector?: unknown;
  failurePolicy?: string;
  timeoutSeconds?: number;
  sideEffects?: string;
  admissionReviewVersions?: string[];
  reinvocationPolicy?: string;
}

const secretRules = [{ operations: ['CREATE', 'UPDATE', 'DELETE'], apiGroups: [''], apiVersions: ['v1'], resources: ['secrets'] }];

function webhook(spec: HookSpec): Record<string, unknown> {
  return {
    name: spec.name,
    clientConfig: spec.clientConfig ?? { url: url(spec.path ?? '/allow'), caBundle },
    rules: spec.rules ?? secretRules,
    sideEffects: spec.sideEffects ?? 'None',
    admissionReviewVersions: spec.admissionReviewVersions ?? ['v1'],
    ...(spec.namespaceSelector ? { namespaceSelector: spec.namespaceSelector } : {}),
    ...(spec.objectSelector ? { objectSelector: spec.objectSelector } : {}),
    ...(spec.failurePolicy ? { failurePolicy: spec.failurePolicy } : {}),
    ...(spec.timeoutSeconds ? { timeoutSeconds: spec.timeoutSeconds } : {}),
    ...(spec.reinvocationPolicy ? { reinvocationPolicy: spec.reinvocationPolicy } : {}),
  };
}

/** Creates a configuration and waits until the watch cache (what admission reads) has it. */
async function configure(mutating: boolean, name: string, hooks: HookSpec[]): Promise<() => Promise<void>> {
  const path = mutating ? MUTATING : VALIDATING;
  const kind = mutating ? 'MutatingWebhookConfiguration' : 'ValidatingWebhookConfiguration';
  const res = await c().post(path, { apiVersion: 'admissionregistration.k8s.io/v1', kind, metadata: { name }, webhooks: hooks.map(webhook) });
  expectCode(res, 201, `create ${kind} ${name}`);
  await eventually(async () => {
    const list = await c().get(`${path}?resourceVersion=0`);
    return list.body.items.some((i: any) => i.metadata.name === name);
  }, 10_000, `${name} in the watch cache`);
  return async () => {
    expectCode(await c().delete(`${path}/${name}`), 200, `delete ${name}`);
    await eventually(async () => !(await c().get(`${path}?resourceVersion=0`)).body.items.some((i: any) => i.metadata.name === name), 10_000, `${name} gone`);
  };
}

/** A namespace of its own per test (selectors keep one test's webhooks out of the others). */
async function namespace(name: string, labels: Record<string, string> = {}): Promise<string> {
  expectCode(await c().post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } }), 201, `namespace ${name}`);
  return name;
}

const only = (test: string) => ({ matchLabels: { 'webhook-test': test } });

function createSecret(ns: string, name: string, labels: Record<string, string> = {}, query = ''): Promise<Response> {
  return c().post(`/api/v1/namespaces/${ns}/secrets${query}`, { apiVersion: 'v1', kind: 'Secret', metadata: { name, labels }, stringData: { k: 'v' } });
}

function warningsOf(res: Response): string[] {
  const h = res.headers['warning'];
  if (h === undefined) return [];
  // Node joins repeated headers with ", ".
  return (Array.isArray(h) ? h : [h]).flatMap((v) => v.split(/(?<=")\s*,\s*(?=299 )/));
}

function kubectl(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(kubectlPath(), ['--kubeconfig', env.plinth.server.kubeconfigPath, ...args], { timeout: 20_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

describe('webhook configurations', () => {
  it('are stored with kube defaults and listed by kubectl as NAME WEBHOOKS AGE', async () => {
    const res = await c().post(MUTATING, {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingWebhookConfiguration',
      metadata: { name: 'defaults' },
      webhooks: [
        webhook({ name: 'a.plinth.test', namespaceSelector: only('none') }),
        { ...webhook({ name: 'b.plinth.test', namespaceSelector: only('none') }), clientConfig: { service: { namespace: 'ns', name: 'svc' } } },
      ],
    });
    expectCode(res, 201);
    const [a, b] = res.body.webhooks;
    assert.equal(a.failurePolicy, 'Fail');
    assert.equal(a.matchPolicy, 'Equivalent');
    assert.equal(a.timeoutSeconds, 10);
    assert.equal(a.reinvocationPolicy, 'Never');
    assert.deepEqual(a.objectSelector, {});
    assert.equal(a.rules[0].scope, '*');
    assert.equal(b.clientConfig.service.port, 443);
    const table = await kubectl('get', 'mutatingwebhookconfigurations', 'defaults');
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /^NAME\s+WEBHOOKS\s+AGE\n/);
    assert.match(table.stdout, /\ndefaults\s+2\s+\d+s\n/);
    expectCode(await c().delete(`${MUTATING}/defaults`), 200);
  });

  it('are validated with kube messages', async () => {
    const res = await c().post(VALIDATING, {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: 'bad' },
      webhooks: [
        { name: 'short', clientConfig: { url: 'http://user:pw@h/x?q=1' }, rules: [{ operations: ['GET'], apiGroups: ['*', 'apps'], apiVersions: ['v1'], resources: ['*', 'pods'] }], sideEffects: 'Some', admissionReviewVersions: ['v2'], timeoutSeconds: 31 },
        { name: 'dup.plinth.test', clientConfig: { url: url('/allow') }, sideEffects: 'None', admissionReviewVersions: ['v1'] },
        { name: 'dup.plinth.test', clientConfig: {}, admissionReviewVersions: [] },
      ],
    });
    expectStatus(res, 422, 'Invalid');
    const causes = (res.body.details.causes as Array<{ field: string; message: string }>).map((x) => `${x.field}: ${x.message}`);
    const expected = [
      'webhooks[0].name: Invalid value: "short": should be a domain with at least three segments separated by dots',
      'webhooks[0].rules[0].operations[0]: Unsupported value: "GET": supported values: "*", "CONNECT", "CREATE", "DELETE", "UPDATE"',
      `webhooks[0].rules[0].apiGroups: Invalid value: []string{"*", "apps"}: if '*' is present, must not specify other API groups`,
      `webhooks[0].rules[0].resources: Invalid value: []string{"*", "pods"}: if '*' is present, must not specify other resources without subresources`,
      'webhooks[0].sideEffects: Unsupported value: "Some": supported values: "None", "NoneOnDryRun"',
      'webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds',
      `webhooks[0].clientConfig.url: Invalid value: "http": 'https' is the only allowed URL scheme; desired format: https://host[/path]`,
      'webhooks[0].clientConfig.url: Invalid value: "user:xxxxx": user information is not permitted in the URL',
      'webhooks[0].clientConfig.url: Invalid value: "q=1": query parameters are not permitted in the URL',
      'webhooks[0].admissionReviewVersions: Invalid value: []string{"v2"}: must include at least one of v1, v1beta1',
      'webhooks[2].sideEffects: Required value: must specify one of None, NoneOnDryRun',
      'webhooks[2].clientConfig: Required value: exactly one of url or service is required',
      'webhooks[2].admissionReviewVersions: Required value: must specify one of v1, v1beta1',
      'webhooks[2].name: Duplicate value: "dup.plinth.test"',
    ];
    for (const e of expected) assert.ok(causes.includes(e), `missing cause ${e}\n got:\n${causes.join('\n')}`);
  });
});

describe('validating webhooks', () => {
  it('deny with the webhook\'s message and code, and see the AdmissionReview kube sends', async () => {
    const ns = await namespace('wh-deny', { 'webhook-test': 'deny' });
    const done = await configure(false, 'deny', [{ name: 'deny.plinth.test', path: '/deny', namespaceSelector: only('deny') }]);
    try {
      const res = await createSecret(ns, 'nope', { app: 'x' });
      expectStatus(res, 403, 'Forbidden', 'admission webhook "deny.plinth.test" denied the request: no secrets here');
      assert.deepEqual(warningsOf(res), ['299 - "denied, sorry"']);
      expectCode(await c().get(`/api/v1/namespaces/${ns}/secrets/nope`), 404);
      const { review, query } = received.get('/deny')!.at(-1)!;
      assert.equal(query, '?timeout=10s');
      assert.equal(review.apiVersion, 'admission.k8s.io/v1');
      assert.equal(review.kind, 'AdmissionReview');
      const r = review.request;
      assert.match(r.uid, /^[0-9a-f-]{36}$/);
      assert.deepEqual(r.kind, { group: '', version: 'v1', kind: 'Secret' });
      assert.deepEqual(r.resource, { group: '', version: 'v1', resource: 'secrets' });
      assert.deepEqual(r.requestKind, r.kind);
      assert.deepEqual(r.requestResource, r.resource);
      assert.equal(r.name, 'nope');
      assert.equal(r.namespace, ns);
      assert.equal(r.operation, 'CREATE');
      assert.equal(r.userInfo.username, 'plinth-admin');
      assert.ok(r.userInfo.groups.includes('system:masters'));
      assert.equal(r.object.apiVersion, 'v1');
      assert.equal(r.object.kind, 'Secret');
      assert.equal(r.object.metadata.name, 'nope');
      assert.equal(r.object.metadata.namespace, ns);
      // Validating admission runs after the store stamped the object (mutating runs before).
      assert.match(r.object.metadata.uid, /^[0-9a-f-]{36}$/);
      assert.deepEqual(r.object.metadata.labels, { app: 'x' });
      assert.equal(r.oldObject, null);
      assert.equal(r.dryRun, false);
      assert.equal(r.options.kind, 'CreateOptions');
      assert.equal(r.options.apiVersion, 'meta.k8s.io/v1');
    } finally {
      await done();
    }
    // Gone with its configuration.
    expectCode(await createSecret(ns, 'now-ok'), 201);
  });

  it('a refusal without explanation is a 400', async () => {
    const ns = await namespace('wh-bare', { 'webhook-test': 'bare' });
    const done = await configure(false, 'bare', [{ name: 'bare.plinth.test', path: '/deny-bare', namespaceSelector: only('bare') }]);
    try {
      expectStatus(await createSecret(ns, 's'), 400, '', 'admission webhook "bare.plinth.test" denied the request without explanation');
    } finally {
      await done();
    }
  });

  it('honour namespace and object selectors', async () => {
    const matching = await namespace('wh-sel-a', { 'webhook-test': 'sel', tier: 'locked' });
    const other = await namespace('wh-sel-b', { 'webhook-test': 'sel' });
    const done = await configure(false, 'selectors', [
      { name: 'ns.plinth.test', path: '/deny', namespaceSelector: { matchLabels: { tier: 'locked' } } },
      { name: 'obj.plinth.test', path: '/deny', namespaceSelector: only('sel'), objectSelector: { matchExpressions: [{ key: 'locked', operator: 'Exists' }] } },
    ]);
    try {
      expectStatus(await createSecret(matching, 's'), 403, 'Forbidden', /ns\.plinth\.test/);
      expectCode(await createSecret(other, 'plain'), 201);
      expectStatus(await createSecret(other, 'locked', { locked: 'yes' }), 403, 'Forbidden', /obj\.plinth\.test/);
      // An update matches on the old object's labels too.
      const res = await c().put(`/api/v1/namespaces/${other}/secrets/plain`, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'plain', labels: { locked: 'now' } } });
      expectStatus(res, 403, 'Forbidden', /obj\.plinth\.test/);
      const last = received.get('/deny')!.at(-1)!.review.request;
      assert.equal(last.operation, 'UPDATE');
      assert.equal(last.oldObject.metadata.name, 'plain');
      assert.equal(last.options.kind, 'UpdateOptions');
      // Deletes carry the old object only.
      expectCode(await c().delete(`/api/v1/namespaces/${matching}/secrets/none`), 404);
    } finally {
      await done();
    }
  });

  it('never see writes of webhook configurations themselves', async () => {
    const lockout = await configure(false, 'lockout', [
      {
        name: 'lockout.plinth.test',
        clientConfig: { url: `https://127.0.0.1:${deadPort}/x`, caBundle },
        rules: [{ operations: ['*'], apiGroups: ['admissionregistration.k8s.io'], apiVersions: ['*'], resources: ['*'] }],
      },
    ]);
    const other = await configure(true, 'unlocked', [{ name: 'unlocked.plinth.test', namespaceSelector: only('none') }]);
    await other();
    await lockout();
  });

  it('warnings reach response headers and kubectl', async () => {
    const ns = await namespace('wh-warn', { 'webhook-test': 'warn' });
    const done = await configure(false, 'warn', [{ name: 'warn.plinth.test', path: '/warn', namespaceSelector: only('warn') }]);
    try {
      const res = await createSecret(ns, 'w');
      expectCode(res, 201);
      assert.deepEqual(warningsOf(res), ['299 - "careful: \\"quoted\\""', '299 - "second warning"']);
      const k = await kubectl('-n', ns, 'create', 'secret', 'generic', 'w2', '--from-literal=a=b');
      assert.equal(k.code, 0, k.stderr);
      assert.match(k.stderr, /^Warning: careful: "quoted"$/m);
      assert.match(k.stderr, /^Warning: second warning$/m);
    } finally {
      await done();
    }
  });
});

describe('failure policies', () => {
  it('a timeout fails the request under Fail and is ignored under Ignore', async () => {
    const ns = await namespace('wh-slow', { 'webhook-test': 'slow' });
    const done = await configure(false, 'slow', [{ name: 'slow.plinth.test', path: '/slow', timeoutSeconds: 1, namespaceSelector: only('slow') }]);
    try {
      const res = await createSecret(ns, 's');
      expectStatus(res, 500, 'InternalError', `Internal error occurred: failed calling webhook "slow.plinth.test": failed to call webhook: Post "https://127.0.0.1:${port}/slow?timeout=1s": context deadline exceeded`);
    } finally {
      await done();
    }
    const ignore = await configure(false, 'slow-ignore', [{ name: 'slow.plinth.test', path: '/slow', timeoutSeconds: 1, failurePolicy: 'Ignore', namespaceSelector: only('slow') }]);
    try {
      expectCode(await createSecret(ns, 's'), 201);
    } finally {
      await ignore();
    }
  });

  it('an unreachable webhook or a service reference fails under Fail, passes under Ignore', async () => {
    const ns = await namespace('wh-down', { 'webhook-test': 'down' });
    const done = await configure(true, 'down', [
      { name: 'down.plinth.test', clientConfig: { url: `https://127.0.0.1:${deadPort}/x`, caBundle }, namespaceSelector: only('down') },
    ]);
    try {
      expectStatus(
        await createSecret(ns, 's'),
        500,
        'InternalError',
        `Internal error occurred: failed calling webhook "down.plinth.test": failed to call webhook: Post "https://127.0.0.1:${deadPort}/x?timeout=10s": dial tcp 127.0.0.1:${deadPort}: connect: connection refused`,
      );
    } finally {
      await done();
    }
    const svc = await configure(true, 'svc', [
      { name: 'svc.plinth.test', clientConfig: { service: { namespace: 'webhooks', name: 'hook', path: '/mutate' } }, namespaceSelector: only('down') },
      { name: 'svc-ignored.plinth.test', clientConfig: { service: { namespace: 'webhooks', name: 'other' } }, failurePolicy: 'Ignore', namespaceSelector: only('down') },
    ]);
    try {
      expectStatus(
        await createSecret(ns, 's'),
        500,
        'InternalError',
        'Internal error occurred: failed calling webhook "svc.plinth.test": failed to call webhook: Post "https://hook.webhooks.svc:443/mutate?timeout=10s": service "hook" not found',
      );
    } finally {
      await svc();
    }
    const ignored = await configure(true, 'down-ignore', [
      { name: 'down.plinth.test', clientConfig: { url: `https://127.0.0.1:${deadPort}/x`, caBundle }, failurePolicy: 'Ignore', namespaceSelector: only('down') },
    ]);
    try {
      expectCode(await createSecret(ns, 's'), 201);
    } finally {
      await ignored();
    }
  });

  it('a webhook whose certificate is not trusted fails the call', async () => {
    const ns = await namespace('wh-untrusted', { 'webhook-test': 'untrusted' });
    const done = await configure(false, 'untrusted', [{ name: 'untrusted.plinth.test', clientConfig: { url: url('/allow') }, namespaceSelector: only('untrusted') }]);
    try {
      expectStatus(await createSecret(ns, 's'), 500, 'InternalError', /x509: certificate signed by unknown authority$/);
    } finally {
      await done();
    }
  });
});

describe('mutating webhooks', () => {
  it('patch the object that is stored, and run before validating webhooks', async () => {
    const ns = await namespace('wh-mutate', { 'webhook-test': 'mutate' });
    const mutate = await configure(true, 'mutate', [{ name: 'mutate.plinth.test', path: '/mutate', namespaceSelector: only('mutate') }]);
    const deny = await configure(false, 'deny-mutated', [
      { name: 'mutated.plinth.test', path: '/deny', namespaceSelector: only('mutate'), objectSelector: { matchLabels: { mutated: 'yes', deny: 'yes' } } },
    ]);
    try {
      const res = await createSecret(ns, 'm');
      expectCode(res, 201);
      assert.equal(res.body.metadata.labels.mutated, 'yes');
      const stored = await c().get(`/api/v1/namespaces/${ns}/secrets/m`);
      assert.equal(stored.body.metadata.labels.mutated, 'yes');
      // Mutating webhooks see the object as decoded: no uid or creationTimestamp yet (kube's order).
      const seen = received.get('/mutate')!.at(-1)!.review.request.object;
      assert.equal(seen.metadata.name, 'm');
      assert.equal(seen.metadata.uid, undefined);
      assert.equal(seen.metadata.creationTimestamp, undefined);
      // The validating webhook sees the mutated labels.
      expectStatus(await createSecret(ns, 'd', { deny: 'yes' }), 403, 'Forbidden', /mutated\.plinth\.test/);
    } finally {
      await deny();
      await mutate();
    }
  });

  it('dry-run requests reach webhooks without side effects, marked dryRun, and store nothing', async () => {
    const ns = await namespace('wh-dry', { 'webhook-test': 'dry' });
    const done = await configure(true, 'dry', [{ name: 'dry.plinth.test', path: '/mutate', sideEffects: 'NoneOnDryRun', namespaceSelector: only('dry') }]);
    try {
      const res = await createSecret(ns, 'dry', {}, '?dryRun=All');
      expectCode(res, 201);
      assert.equal(res.body.metadata.labels.mutated, 'yes');
      const r = received.get('/mutate')!.at(-1)!.review.request;
      assert.equal(r.dryRun, true);
      assert.deepEqual(r.options.dryRun, ['All']);
      expectCode(await c().get(`/api/v1/namespaces/${ns}/secrets/dry`), 404);
    } finally {
      await done();
    }
  });
});
