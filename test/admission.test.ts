/**
 * Admission plugins as kube-apiserver 1.24 configures them, against real plinth servers sharing
 * one etcd: the default chain, `--disable-admission-plugins`, `--enable-admission-plugins` (kube's
 * AlwaysDeny shows every write path — sub-resources and dry runs included — reaching admission,
 * and which resource and name it saw), and flag errors failing start-up with kube's messages.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { EXECUTABLE, eventually, startInProcess, startTestEtcd, tempDir, type InProcessPlinth, type TestEtcd } from './harness.js';
import { expectCode, expectStatus } from './assertions.js';

const ns = (name = ''): string => `/api/v1/namespaces${name ? `/${name}` : ''}`;
const secrets = (namespace: string, name = ''): string => `${ns(namespace)}/secrets${name ? `/${name}` : ''}`;
const secret = (name: string): object => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name }, stringData: { k: 'v' } });
const DENIED = 'admission control is denying all modifications';

let etcd: TestEtcd;
let defaults: InProcessPlinth;
let noLifecycle: InProcessPlinth;
let denyAll: InProcessPlinth;

before(async () => {
  etcd = await startTestEtcd();
  defaults = await startInProcess({ etcd });
  // Content for the deny-all server to refuse to touch: a namespace with its default ServiceAccount and a secret.
  expectCode(await defaults.client.post(ns(), { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'adm' } }), 201);
  expectCode(await defaults.client.post(secrets('adm'), secret('kept')), 201);
  await eventually(async () => (await defaults.client.get(`${ns('adm')}/serviceaccounts/default`)).status === 200, 15_000, 'default ServiceAccount');
  noLifecycle = await startInProcess({ etcd, args: ['--disable-admission-plugins=NamespaceLifecycle'] });
  denyAll = await startInProcess({ etcd, args: ['--enable-admission-plugins=AlwaysDeny'] });
});

after(async () => {
  await denyAll?.stop();
  await noLifecycle?.stop();
  await defaults?.stop();
  await etcd?.stop();
});

describe('the default chain and --disable-admission-plugins', () => {
  it('NamespaceLifecycle (on by default) refuses content in a missing namespace', async () => {
    expectStatus(await defaults.client.post(secrets('nowhere'), secret('s')), 404, 'NotFound', 'namespaces "nowhere" not found');
  });

  it('with NamespaceLifecycle disabled a create into a missing namespace goes through, as in kube', async () => {
    const res = await noLifecycle.client.post(secrets('nowhere'), secret('orphan'));
    expectCode(res, 201, 'create into a missing namespace');
    assert.equal(res.body.metadata.namespace, 'nowhere');
    // The other servers read it back from the shared etcd: it really was stored.
    expectCode(await defaults.client.get(secrets('nowhere', 'orphan')), 200);
  });

  it('the immortal namespaces are guarded by that plugin alone, as in kube', async () => {
    expectStatus(await defaults.client.delete(ns('kube-public')), 403, 'Forbidden', 'namespaces "kube-public" is forbidden: this namespace may not be deleted');
    const res = await noLifecycle.client.delete(ns('kube-public'));
    expectCode(res, 200, 'delete kube-public without NamespaceLifecycle');
    assert.equal(res.body.status.phase, 'Terminating');
  });
});

describe('--enable-admission-plugins=AlwaysDeny: every write meets admission, no read does', () => {
  const denied = (res: Awaited<ReturnType<InProcessPlinth['client']['get']>>, resource: string, name: string): void => {
    expectStatus(res, 403, 'Forbidden', `${resource} "${name}" is forbidden: ${DENIED}`);
    assert.equal(res.body.details.kind, resource);
    assert.equal(res.body.details.name, name);
  };

  it('create, dry-run create, update, patch and delete of a secret are refused', async () => {
    const c = denyAll.client;
    denied(await c.post(secrets('adm'), secret('new')), 'secrets', 'new');
    denied(await c.post(`${secrets('adm')}?dryRun=All`, secret('new')), 'secrets', 'new');
    const current = (await c.get(secrets('adm', 'kept'))).body;
    denied(await c.put(secrets('adm', 'kept'), { ...current, data: { k: 'dg==' } }), 'secrets', 'kept');
    const patch = await c.request('PATCH', secrets('adm', 'kept'), { body: { metadata: { labels: { a: 'b' } } }, headers: { 'content-type': 'application/merge-patch+json' } });
    denied(patch, 'secrets', 'kept');
    denied(await c.delete(secrets('adm', 'kept')), 'secrets', 'kept');
    expectCode(await c.get(secrets('adm', 'kept')), 200, 'a read');
  });

  it('sub-resource writes are refused as writes of their parent resource: namespaces/status, namespaces/finalize, serviceaccounts/token', async () => {
    const c = denyAll.client;
    const namespace = (await c.get(ns('adm'))).body;
    denied(await c.put(`${ns('adm')}/status`, namespace), 'namespaces', 'adm');
    denied(await c.put(`${ns('adm')}/finalize`, namespace), 'namespaces', 'adm');
    const request = { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { audiences: [] } };
    denied(await c.post(`${ns('adm')}/serviceaccounts/default/token`, request), 'serviceaccounts', 'default');
    // Nothing changed underneath.
    expectCode(await defaults.client.get(secrets('adm', 'kept')), 200);
  });
});

describe('admission flags that fail start-up', () => {
  it('an unknown name, and a kube plugin plinth does not implement, stop the real executable with kube\'s messages', () => {
    const dataDir = tempDir('plinth-admission-');
    try {
      const run = spawnSync(process.execPath, [EXECUTABLE, `--data-dir=${dataDir}`, '--enable-admission-plugins=NamespaceLifecycl,PersistentVolumeLabel', '--disable-admission-plugins=Bogus'], {
        encoding: 'utf8',
        timeout: 20_000,
      });
      assert.equal(run.status, 1, run.stderr);
      assert.match(run.stderr, /enable-admission-plugins plugin "NamespaceLifecycl" is unknown/);
      assert.match(run.stderr, /disable-admission-plugins plugin "Bogus" is unknown/);
      assert.match(run.stderr, /enable-admission-plugins plugin "PersistentVolumeLabel" is not implemented by plinth/);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
