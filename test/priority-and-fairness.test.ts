/**
 * API Priority and Fairness (the APIPriorityAndFairness gate, on by default): every request is
 * classified by kube 1.24's bootstrap flow schemas (response headers name the stored objects' UIDs);
 * a saturated priority level queues its requests and answers kube's 429 once the flow's queues
 * are full or a request has waited too long, while exempt users and other levels are still served.
 * The server limit is tiny (1 + 1 in flight: one seat per level); a validating webhook served
 * here holds a create, and with it its level's only seat, for as long as the test wants.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, createServer, request, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { eventually, startInProcess, startTestEtcd, tempDir, type InProcessPlinth, type Response, type TestEtcd } from './harness.js';
import { Pki } from './auth-fixtures.js';

const dir = tempDir('plinth-apf-');
mkdirSync(join(dir, 'certs'));
const BOB = 'bob-token-0123456789';
writeFileSync(join(dir, 'tokens.csv'), `${BOB},bob,1001,"devs"\n`);
const env = {} as { plinth: InProcessPlinth; etcd: TestEtcd };

/** The bootstrap objects' UIDs (the headers name the stored objects), read once the server is up. */
const uids = new Map<string, string>();
function uid(kind: 'flowschemas' | 'prioritylevelconfigurations', name: string): string {
  return uids.get(`${kind}/${name}`) ?? `no ${kind} ${name}`;
}

function assertClassified(r: Response, flowSchema: string, priorityLevel: string, what: string): void {
  assert.equal(r.headers['x-kubernetes-pf-flowschema-uid'], uid('flowschemas', flowSchema), `${what}: flow schema ${flowSchema}`);
  assert.equal(r.headers['x-kubernetes-pf-prioritylevel-uid'], uid('prioritylevelconfigurations', priorityLevel), `${what}: priority level ${priorityLevel}`);
}

let webhookServer: Server;
/** Admission reviews the webhook holds: answering one lets its create go on. */
const heldReviews: Array<() => void> = [];
let saToken = '';
let kubeSystemToken = '';

async function tokenFor(namespace: string, name: string): Promise<string> {
  const c = env.plinth.client;
  assert.equal((await c.post(`/api/v1/namespaces/${namespace}/serviceaccounts`, { metadata: { name } })).status, 201);
  const r = await c.post(`/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`, { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: {} });
  assert.equal(r.status, 201);
  return r.body.status.token as string;
}

before(async () => {
  env.etcd = await startTestEtcd();
  env.plinth = await startInProcess({ etcd: env.etcd, args: [`--token-auth-file=${join(dir, 'tokens.csv')}`, '--max-requests-inflight=1', '--max-mutating-requests-inflight=1'] });
  for (const kind of ['flowschemas', 'prioritylevelconfigurations']) {
    const items = (await env.plinth.client.get(`/apis/flowcontrol.apiserver.k8s.io/v1beta2/${kind}`)).body.items as Array<{ metadata: { name: string; uid: string } }>;
    for (const o of items) uids.set(`${kind}/${o.metadata.name}`, o.metadata.uid);
  }
  // The filter follows the objects once the config consumer has listed them.
  await eventually(async () => (await env.plinth.client.get('/version')).headers['x-kubernetes-pf-flowschema-uid'] === uid('flowschemas', 'exempt'), 10_000, 'APF configured from the objects');
  const pki = new Pki(join(dir, 'certs')).rootCA('ca').serving('server', 'ca');
  webhookServer = createServer({ cert: pki.pem('server'), key: pki.keyPem('server') }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const review = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      heldReviews.push(() => {
        res.setHeader('Content-Type', 'application/json');
        res.end(JSON.stringify({ apiVersion: review.apiVersion, kind: 'AdmissionReview', response: { uid: review.request.uid, allowed: true } }));
      });
    });
  });
  await new Promise<void>((r) => webhookServer.listen(0, '127.0.0.1', r));
  const port = (webhookServer.address() as AddressInfo).port;
  const c = env.plinth.client;
  // Creates of configmaps labelled hold=yes wait for the webhook (up to its 30 s timeout).
  const config = {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: { name: 'hold' },
    webhooks: [
      {
        name: 'hold.plinth.test',
        clientConfig: { url: `https://127.0.0.1:${port}/hold`, caBundle: Buffer.from(pki.pem('ca')).toString('base64') },
        rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
        objectSelector: { matchLabels: { hold: 'yes' } },
        sideEffects: 'None',
        admissionReviewVersions: ['v1'],
        timeoutSeconds: 30,
      },
    ],
  };
  assert.equal((await c.post('/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations', config)).status, 201);
  await eventually(async () => (await c.get('/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations?resourceVersion=0')).body.items.length === 1, 10_000, 'the webhook configuration in the cache');
  // bob may create and read configmaps.
  const rbac = '/apis/rbac.authorization.k8s.io/v1';
  assert.equal((await c.post(`${rbac}/clusterroles`, { metadata: { name: 'cm' }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['create', 'get', 'list', 'watch'] }] })).status, 201);
  assert.equal((await c.post(`${rbac}/clusterrolebindings`, { metadata: { name: 'bob-cm' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cm' }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'bob' }] })).status, 201);
  await eventually(async () => (await c.get('/api/v1/namespaces/default/configmaps/none', { token: BOB })).status === 404, 10_000, "bob's binding to take effect");
  saToken = await tokenFor('default', 'robot');
  kubeSystemToken = await tokenFor('kube-system', 'operator');
});

after(async () => {
  for (const release of heldReviews.splice(0)) release();
  webhookServer.closeAllConnections();
  await new Promise<void>((r) => webhookServer.close(() => r()));
  await env.plinth?.stop();
  await env.etcd?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('classification', () => {
  test("each request names its flow schema and priority level (kube 1.24's bootstrap configuration)", async () => {
    const c = env.plinth.client;
    assertClassified(await c.get('/api/v1/namespaces'), 'exempt', 'exempt', 'system:masters');
    assertClassified(await c.get('/readyz', { token: null }), 'probes', 'exempt', 'an anonymous probe');
    assertClassified(await c.get('/livez', { token: BOB }), 'probes', 'exempt', 'a probe by a user');
    assertClassified(await c.get('/version', { token: null }), 'global-default', 'global-default', 'anonymous /version');
    assertClassified(await c.get('/api/v1/namespaces/default/configmaps/none', { token: BOB }), 'global-default', 'global-default', 'an ordinary user');
    assertClassified(await c.get('/api/v1/namespaces/default/configmaps', { token: saToken }), 'service-accounts', 'workload-low', 'a service account');
    assertClassified(await c.get('/api/v1/namespaces/kube-system/configmaps', { token: kubeSystemToken }), 'kube-system-service-accounts', 'workload-high', 'a kube-system service account');
    // Leader election: leases anywhere (system-leader-election), configmaps and endpoints outside kube-system (workload-leader-election).
    assertClassified(await c.get('/apis/coordination.k8s.io/v1/namespaces/default/leases/x', { token: kubeSystemToken }), 'system-leader-election', 'leader-election', 'a lease read by a kube-system service account');
    assertClassified(await c.get('/api/v1/namespaces/default/configmaps/x', { token: kubeSystemToken }), 'workload-leader-election', 'leader-election', 'a configmap read by a kube-system service account');
    // Refused requests are classified too (authorization comes after priority and fairness).
    assertClassified(await c.get('/api/v1/nodes', { token: BOB }), 'global-default', 'global-default', 'a forbidden request');
  });
});

/** A GET sent on its own connection (the harness client keeps at most 64 sockets). */
function get(agent: Agent, path: string, token: string): Promise<Response> {
  return new Promise((resolve, reject) => {
    const req = request(new URL(path, env.plinth.client.base), { method: 'GET', agent, headers: { authorization: `Bearer ${token}` } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, raw: Buffer.concat(chunks), body: undefined }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** bob's create, held by the webhook: it holds global-default's only seat until released. */
async function holdSeat(name: string): Promise<{ done: Promise<Response>; release: () => void }> {
  const before = heldReviews.length;
  const done = env.plinth.client.post('/api/v1/namespaces/default/configmaps', { metadata: { name, labels: { hold: 'yes' } } }, { token: BOB });
  await eventually(async () => heldReviews.length > before, 10_000, 'the webhook to hold the create');
  return { done, release: heldReviews.splice(before, 1)[0]! };
}

describe('a saturated priority level', () => {
  test("queues the flow's requests, rejects with 429 once its queues are full, and still serves exempt users and other levels", async () => {
    const agent = new Agent({ ca: readFileSync(env.plinth.server.caFile!), keepAlive: false, maxSockets: 1000 });
    try {
      const held = await holdSeat('held-1');
      // bob's flow gets a hand of 6 queues of global-default, 50 requests each: 300 wait, more are refused.
      const burst = Array.from({ length: 310 }, () => get(agent, '/api/v1/namespaces/default/configmaps/none', BOB));
      const settled: Response[] = [];
      for (const p of burst) void p.then((r) => settled.push(r));
      await eventually(async () => settled.length >= 10, 20_000, '10 refusals');
      assert.equal(settled.length, 10);
      for (const r of settled) {
        assert.equal(r.status, 429);
        assert.equal(r.raw.toString(), 'Too many requests, please try again later.\n');
        assert.equal(r.headers['retry-after'], '1');
        assert.equal(r.headers['content-type'], 'text/plain; charset=utf-8');
        assertClassified(r, 'global-default', 'global-default', 'a refused request');
      }
      // The admin is exempt; a service account (workload-low) has seats of its own.
      assert.equal((await env.plinth.client.get('/api/v1/namespaces/default/configmaps')).status, 200);
      assert.equal((await get(agent, '/api/v1/namespaces/default/configmaps', saToken)).status, 403);
      assert.equal((await get(agent, '/readyz', BOB)).status, 200);
      assert.equal(settled.length, 10, 'the queued requests still wait');
      // Released: the held create completes, then every queued request is served.
      held.release();
      assert.equal((await held.done).status, 201);
      const all = await Promise.all(burst);
      assert.equal(all.filter((r) => r.status === 404).length, 300);
      assert.equal(all.filter((r) => r.status === 429).length, 10);
    } finally {
      agent.destroy();
    }
  });

  test('a watch gives its seat back once it has started (kube 1.24: once initialized)', async () => {
    const agent = new Agent({ ca: readFileSync(env.plinth.server.caFile!), keepAlive: false });
    const watch = request(new URL('/api/v1/namespaces/default/configmaps?watch=1', env.plinth.client.base), { agent, headers: { authorization: `Bearer ${BOB}` } });
    watch.on('error', () => undefined);
    try {
      const started = new Promise<number>((resolve) =>
        watch.on('response', (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        }),
      );
      watch.end();
      assert.equal(await started, 200);
      // The watch is open, and global-default's only seat is free: a create takes it.
      const held = await holdSeat('held-3');
      held.release();
      assert.equal((await held.done).status, 201);
    } finally {
      watch.destroy();
      agent.destroy();
    }
  });

  test('a request that waits longer than the limit (15 s: kube\'s --request-timeout / 4) gets 429', async () => {
    const agent = new Agent({ ca: readFileSync(env.plinth.server.caFile!), keepAlive: false });
    try {
      const held = await holdSeat('held-2');
      const waited = await get(agent, '/api/v1/namespaces/default/configmaps/none', BOB);
      assert.equal(waited.status, 429);
      assertClassified(waited, 'global-default', 'global-default', 'a request that waited too long');
      held.release();
      assert.equal((await held.done).status, 201);
      assert.equal((await get(agent, '/api/v1/namespaces/default/configmaps/none', BOB)).status, 404);
    } finally {
      agent.destroy();
    }
  });
});
