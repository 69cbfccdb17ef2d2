/**
 * Deleting a CRD while clients keep creating its custom resources, on two plinth replicas that
 * share one etcd: once the CRD is marked for deletion (Terminating, in the same write as its
 * deletionTimestamp) no create may land, on either replica, however far behind its view of the
 * CRD is; the cleanup deletes everything that landed before, so when the CRD is gone no key of
 * its resources is left in etcd, and a CRD created again with the same name starts empty.
 * Creates refused meanwhile get kube's 405 MethodNotAllowed (or 404 once the CRD is gone). The
 * last round slows every create down in a validating webhook, so creates that passed the
 * handler's check before the CRD was marked reach etcd after the cleanup listed.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Etcd3 } from 'etcd3';
import { eventually, startInProcess, startTestEtcd, tempDir, type InProcessPlinth, type TestEtcd } from './harness.js';
import { expectCode } from './assertions.js';
import { Pki } from './auth-fixtures.js';

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const GROUP = 'race.example.com';
const NAME = `tokens.${GROUP}`;
const NAMESPACES = ['race-a', 'race-b'];

let etcd: TestEtcd;
let a: InProcessPlinth;
let b: InProcessPlinth;
let raw: Etcd3;
const dir = tempDir('plinth-crd-race-');
/** A webhook that allows every request after WEBHOOK_DELAY_MS. */
let webhook: Server;
let webhookURL = '';
let caBundle = '';
const WEBHOOK_DELAY_MS = 1500;

const crd = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: NAME },
  spec: {
    group: GROUP,
    scope: 'Namespaced',
    names: { plural: 'tokens', singular: 'token', kind: 'Token' },
    versions: [
      { name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { n: { type: 'integer' } } } } } } },
      { name: 'v2', served: true, storage: false, schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { n: { type: 'integer' } } } } } } },
    ],
  },
};

const tokens = (ns: string, version = 'v1'): string => `/apis/${GROUP}/${version}/namespaces/${ns}/tokens`;

/** Keys of the CRD's custom resources in etcd (what would come back with a CRD of this name). */
async function storedKeys(): Promise<string[]> {
  return raw.getAll().prefix(`/registry/${GROUP}/tokens/`).keys();
}

async function install(): Promise<void> {
  expectCode(await a.client.post(CRDS, crd), 201, 'create CRD');
  for (const p of [a, b]) {
    for (const v of ['v1', 'v2']) await eventually(async () => (await p.client.get(tokens(NAMESPACES[0]!, v))).status === 200, 20_000, `tokens ${v} served`);
  }
}

before(async () => {
  etcd = await startTestEtcd();
  a = await startInProcess({ etcd });
  b = await startInProcess({ etcd });
  raw = new Etcd3({ hosts: [etcd.endpoint] });
  mkdirSync(join(dir, 'certs'));
  const pki = new Pki(join(dir, 'certs')).rootCA('ca').serving('server', 'ca');
  caBundle = Buffer.from(pki.pem('ca')).toString('base64');
  webhook = createServer({ cert: pki.pem('server'), key: pki.keyPem('server') }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const review = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      setTimeout(() => {
        res.setHeader('Content-Type', 'application/json');
        res.end(JSON.stringify({ apiVersion: review.apiVersion, kind: 'AdmissionReview', response: { uid: review.request.uid, allowed: true } }));
      }, WEBHOOK_DELAY_MS);
    });
  });
  await new Promise<void>((r) => webhook.listen(0, '127.0.0.1', r));
  webhookURL = `https://127.0.0.1:${(webhook.address() as AddressInfo).port}/slow`;
  for (const ns of NAMESPACES) expectCode(await a.client.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }), 201);
});

after(async () => {
  webhook?.closeAllConnections();
  await new Promise<void>((r) => (webhook ? webhook.close(() => r()) : r()));
  rmSync(dir, { recursive: true, force: true });
  raw?.close();
  await b?.stop();
  await a?.stop();
  await etcd?.stop();
});

/** A validating webhook on creates of the CRD's resources that answers after WEBHOOK_DELAY_MS. */
async function slowWebhook(): Promise<() => Promise<void>> {
  const path = '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations';
  expectCode(
    await a.client.post(path, {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: 'slow-tokens' },
      webhooks: [
        {
          name: 'slow.race.example.com',
          clientConfig: { url: webhookURL, caBundle },
          rules: [{ operations: ['CREATE'], apiGroups: [GROUP], apiVersions: ['*'], resources: ['tokens'] }],
          sideEffects: 'None',
          admissionReviewVersions: ['v1'],
          timeoutSeconds: 10,
        },
      ],
    }),
    201,
  );
  for (const p of [a, b]) await eventually(async () => (await p.client.get(`${path}?resourceVersion=0`)).body.items.length === 1, 10_000, 'webhook configured');
  return async () => {
    expectCode(await a.client.delete(`${path}/slow-tokens`), 200);
  };
}

describe('deleting a CRD under a concurrent write load', () => {
  for (const round of [1, 2, 3]) {
    const slow = round === 3;
    it(`leaves no custom resource behind, and a CRD created again shows none (round ${round}${slow ? ', slow admission' : ''})`, async () => {
      await install();
      const unhook = slow ? await slowWebhook() : undefined;
      let stop = false;
      let created = 0;
      const refusals = new Map<string, number>();
      // Writers on both replicas, through both versions, in both namespaces, until the CRD is gone.
      const writer = async (p: InProcessPlinth, id: string, ns: string, version: string): Promise<void> => {
        for (let i = 0; !stop; i++) {
          const res = await p.client.post(tokens(ns, version), { apiVersion: `${GROUP}/${version}`, kind: 'Token', metadata: { name: `${id}-${round}-${i}` }, spec: { n: i } });
          if (res.status === 201) created++;
          else {
            const key = `${res.status} ${res.body?.reason ?? ''}`;
            refusals.set(key, (refusals.get(key) ?? 0) + 1);
          }
        }
      };
      const writers: Promise<void>[] = [];
      for (const [p, name] of [[a, 'a'], [b, 'b']] as const) {
        for (const ns of NAMESPACES) for (const v of ['v1', 'v2']) for (let k = 0; k < 2; k++) writers.push(writer(p, `${name}${k}-${v}`, ns, v));
      }
      // Let the load build up, then delete the CRD (on one replica) while it goes on.
      await eventually(async () => created >= (slow ? 16 : 60), 30_000, 'custom resources created');
      expectCode(await b.client.delete(`${CRDS}/${NAME}`), 200, 'delete CRD');
      await eventually(async () => (await a.client.get(`${CRDS}/${NAME}`)).status === 404, 60_000, 'CRD gone');
      // Writers go on a little longer: every create must be refused now.
      await new Promise((r) => setTimeout(r, 300));
      stop = true;
      await Promise.all(writers);
      await unhook?.();
      const refused = [...refusals.keys()];
      assert.ok(refused.every((k) => k === '405 MethodNotAllowed' || k === '404 NotFound'), `refusals: ${JSON.stringify([...refusals])}`);
      assert.deepEqual(await storedKeys(), [], `custom resources left in etcd after the CRD was deleted (${created} created)`);
      // A CRD of the same name starts empty on both replicas.
      await install();
      for (const p of [a, b]) for (const ns of NAMESPACES) assert.deepEqual((await p.client.get(tokens(ns))).body.items, []);
      expectCode(await a.client.delete(`${CRDS}/${NAME}`), 200);
      await eventually(async () => (await a.client.get(`${CRDS}/${NAME}`)).status === 404, 60_000, 'CRD gone');
    });
  }
});
