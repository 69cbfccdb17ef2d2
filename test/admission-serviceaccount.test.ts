/**
 * kube 1.24's ServiceAccount, DefaultTolerationSeconds and TaintNodesByCondition admission plugins
 * and the root-ca-cert-publisher controller on a real server: the projected kube-api-access volume
 * and its mounts, automountServiceAccountToken, a missing account refused, mountable-secret
 * enforcement, mirror pods, kube-root-ca.crt in every namespace, default tolerations, the not-ready
 * taint of a new Node, and kubectl's view of a pod.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { eventually, kubectlPath, usePlinth } from './harness.js';
import { expectCode, expectStatus } from './assertions.js';

const env = usePlinth();
const MOUNT = '/var/run/secrets/kubernetes.io/serviceaccount';
const VOLUME_NAME = /^kube-api-access-[bcdfghjklmnpqrstvwxz2456789]{5}$/;
const DESCRIPTION =
  'Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters.';

type Obj = Record<string, unknown>;
const pods = (ns: string): string => `/api/v1/namespaces/${ns}/pods`;
const pod = (name: string, spec: Obj = {}, meta: Obj = {}): Obj => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, ...meta }, spec: { containers: [{ name: 'c', image: 'nginx' }], ...spec } });

function kubectl(...args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(kubectlPath(), ['--kubeconfig', env.plinth.server.kubeconfigPath, ...args], { encoding: 'utf8', timeout: 60_000 }, (err, stdout, stderr) =>
      err ? reject(new Error(`kubectl ${args.join(' ')}: ${stderr}`)) : resolve(stdout),
    );
  });
}

/** A namespace whose `default` ServiceAccount exists (as a kube client waits for it). */
async function namespace(name: string): Promise<void> {
  expectCode(await env.plinth.client.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } }), 201);
  await eventually(async () => (await env.plinth.client.get(`/api/v1/namespaces/${name}/serviceaccounts/default`)).status === 200, 10_000, 'default ServiceAccount');
}

async function serviceAccount(ns: string, name: string, extra: Obj = {}, annotations: Obj = {}): Promise<void> {
  const body = { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, annotations }, ...extra };
  expectCode(await env.plinth.client.post(`/api/v1/namespaces/${ns}/serviceaccounts`, body), 201);
}

describe('ServiceAccount admission', () => {
  it('defaults the account and mounts the projected kube-api-access volume in every init and regular container', async () => {
    await namespace('sa-mount');
    const res = await env.plinth.client.post(pods('sa-mount'), pod('p', {
      initContainers: [{ name: 'init', image: 'busybox' }],
      containers: [
        { name: 'c', image: 'nginx', volumeMounts: [{ name: 'data', mountPath: '/data' }] },
        { name: 'own', image: 'nginx', volumeMounts: [{ name: 'data', mountPath: MOUNT }] },
      ],
      volumes: [{ name: 'data', emptyDir: {} }],
    }));
    expectCode(res, 201);
    const spec = res.body.spec;
    assert.equal(spec.serviceAccountName, 'default');
    assert.equal(spec.serviceAccount, 'default');
    assert.equal(spec.volumes.length, 2);
    const vol = spec.volumes[1];
    assert.match(vol.name, VOLUME_NAME);
    assert.deepEqual(vol.projected, {
      defaultMode: 420,
      sources: [
        { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
        { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
        { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
      ],
    });
    const mount = { name: vol.name, readOnly: true, mountPath: MOUNT };
    assert.deepEqual(spec.initContainers[0].volumeMounts, [mount]);
    assert.deepEqual(spec.containers[0].volumeMounts, [{ name: 'data', mountPath: '/data' }, mount]);
    // A container that mounts the path itself keeps its own mount.
    assert.deepEqual(spec.containers[1].volumeMounts, [{ name: 'data', mountPath: MOUNT }]);
    // A second pod gets another random name.
    const again = await env.plinth.client.post(pods('sa-mount'), pod('q'));
    expectCode(again, 201);
    assert.match(again.body.spec.volumes[0].name, VOLUME_NAME);
  });

  it('honours automountServiceAccountToken: false on the pod and on the account, the pod first; copies imagePullSecrets', async () => {
    await namespace('sa-auto');
    await serviceAccount('sa-auto', 'quiet', { automountServiceAccountToken: false, imagePullSecrets: [{ name: 'regcred' }] });
    const noPod = await env.plinth.client.post(pods('sa-auto'), pod('off', { automountServiceAccountToken: false }));
    expectCode(noPod, 201);
    assert.equal(noPod.body.spec.volumes, undefined);
    assert.equal(noPod.body.spec.containers[0].volumeMounts, undefined);
    const noSa = await env.plinth.client.post(pods('sa-auto'), pod('quiet', { serviceAccountName: 'quiet' }));
    expectCode(noSa, 201);
    assert.equal(noSa.body.spec.volumes, undefined);
    assert.deepEqual(noSa.body.spec.imagePullSecrets, [{ name: 'regcred' }]);
    const podWins = await env.plinth.client.post(pods('sa-auto'), pod('on', { serviceAccountName: 'quiet', automountServiceAccountToken: true, imagePullSecrets: [{ name: 'mine' }] }));
    expectCode(podWins, 201);
    assert.match(podWins.body.spec.volumes[0].name, VOLUME_NAME);
    assert.deepEqual(podWins.body.spec.imagePullSecrets, [{ name: 'mine' }]);
  });

  it('refuses a pod whose account does not exist with kube\'s 403', async () => {
    const res = await env.plinth.client.post(pods('default'), pod('lost', { serviceAccountName: 'nope' }));
    expectStatus(res, 403, 'Forbidden', 'pods "lost" is forbidden: error looking up service account default/nope: serviceaccount "nope" not found');
    const gen = await env.plinth.client.post(pods('default'), { ...pod('x', { serviceAccountName: 'nope' }), metadata: { generateName: 'gen-' } });
    expectStatus(gen, 403, 'Forbidden', 'pods "gen-" is forbidden: error looking up service account default/nope: serviceaccount "nope" not found');
    // An account created a moment before its pod is found (a cache miss is confirmed in etcd).
    await serviceAccount('default', 'fresh');
    expectCode(await env.plinth.client.post(pods('default'), pod('fresh', { serviceAccountName: 'fresh' })), 201);
  });

  it('waits for the default account of a namespace created a moment ago, as kube\'s retries do', async () => {
    expectCode(await env.plinth.client.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'sa-race' } }), 201);
    const res = await env.plinth.client.post(pods('sa-race'), pod('first'));
    expectCode(res, 201);
    assert.equal(res.body.spec.serviceAccountName, 'default');
  });

  it('enforces mountable secrets only with the account\'s kubernetes.io/enforce-mountable-secrets annotation', async () => {
    await namespace('sa-enforce');
    await serviceAccount('sa-enforce', 'strict', { secrets: [{ name: 'ok' }], imagePullSecrets: [{ name: 'pull' }] }, { 'kubernetes.io/enforce-mountable-secrets': 'true' });
    await serviceAccount('sa-enforce', 'loose', { secrets: [{ name: 'ok' }] });
    const secretVolume = (name: string) => ({ volumes: [{ name: 'sec', secret: { secretName: name } }] });
    expectCode(await env.plinth.client.post(pods('sa-enforce'), pod('loose', { serviceAccountName: 'loose', ...secretVolume('other') })), 201);
    expectCode(await env.plinth.client.post(pods('sa-enforce'), pod('allowed', { serviceAccountName: 'strict', ...secretVolume('ok') })), 201);
    expectStatus(await env.plinth.client.post(pods('sa-enforce'), pod('vol', { serviceAccountName: 'strict', ...secretVolume('other') })), 403, 'Forbidden',
      'pods "vol" is forbidden: volume with secret.secretName="other" is not allowed because service account strict does not reference that secret');
    const env1 = { name: 'c', image: 'nginx', env: [{ name: 'PASS', valueFrom: { secretKeyRef: { name: 'other', key: 'k' } } }] };
    expectStatus(await env.plinth.client.post(pods('sa-enforce'), pod('env', { serviceAccountName: 'strict', containers: [env1] })), 403, 'Forbidden',
      'pods "env" is forbidden: container c with envVar PASS referencing secret.secretName="other" is not allowed because service account strict does not reference that secret');
    expectStatus(await env.plinth.client.post(pods('sa-enforce'), pod('pull', { serviceAccountName: 'strict', imagePullSecrets: [{ name: 'pull' }, { name: 'nope' }] })), 403, 'Forbidden',
      'pods "pull" is forbidden: imagePullSecrets[1].name="nope" is not allowed because service account strict does not reference that imagePullSecret');
    // Ephemeral containers added later are held to the same list (kube 1.24.15+, CVE-2023-2728):
    // kube returns that error unwrapped, a 500 without a reason.
    const EC = `${pods('sa-enforce')}/allowed/ephemeralcontainers`;
    const current = (await env.plinth.client.get(`${pods('sa-enforce')}/allowed`)).body;
    const debug = (secret: string) => ({ name: 'dbg', image: 'busybox', env: [{ name: 'TOKEN', valueFrom: { secretKeyRef: { name: secret, key: 'k' } } }] });
    const bad = await env.plinth.client.put(EC, { ...current, spec: { ...current.spec, ephemeralContainers: [debug('other')] } });
    expectStatus(bad, 500, '', 'ephemeral container dbg with envVar TOKEN referencing secret.secretName="other" is not allowed because service account strict does not reference that secret');
    expectCode(await env.plinth.client.put(EC, { ...current, spec: { ...current.spec, ephemeralContainers: [debug('ok')] } }), 200);
  });

  it('leaves a mirror pod as the kubelet wrote it, refusing one that names an account or a secret', async () => {
    const mirror = { 'kubernetes.io/config.mirror': 'abc' };
    const ok = await env.plinth.client.post(pods('default'), pod('mirror', { nodeName: 'n0' }, { annotations: mirror }));
    expectCode(ok, 201);
    assert.equal(ok.body.spec.serviceAccountName, undefined);
    assert.equal(ok.body.spec.volumes, undefined);
    expectStatus(await env.plinth.client.post(pods('default'), pod('mirror-sa', { nodeName: 'n0', serviceAccountName: 'default' }, { annotations: mirror })), 403, 'Forbidden',
      'pods "mirror-sa" is forbidden: a mirror pod may not reference service accounts');
    const envFrom = { name: 'c', image: 'nginx', envFrom: [{ secretRef: { name: 's' } }] };
    expectStatus(await env.plinth.client.post(pods('default'), pod('mirror-secret', { nodeName: 'n0', containers: [envFrom] }, { annotations: mirror })), 403, 'Forbidden',
      'pods "mirror-secret" is forbidden: a mirror pod may not reference secrets');
  });
});

describe('root-ca-cert-publisher', () => {
  it('publishes kube-root-ca.crt with the serving CA in every namespace, restoring it when deleted or changed', async () => {
    const kubeconfig = readFileSync(env.plinth.server.kubeconfigPath, 'utf8');
    const ca = Buffer.from(/certificate-authority-data: (\S+)/.exec(kubeconfig)![1]!, 'base64').toString('utf8');
    expectCode(await env.plinth.client.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ca-pub' } }), 201);
    const CM = '/api/v1/namespaces/ca-pub/configmaps/kube-root-ca.crt';
    const published = await eventually(async () => {
      const r = await env.plinth.client.get(CM);
      return r.status === 200 && r.body;
    }, 10_000, 'kube-root-ca.crt');
    assert.deepEqual(published.data, { 'ca.crt': ca });
    assert.deepEqual(published.metadata.annotations, { 'kubernetes.io/description': DESCRIPTION });
    for (const ns of ['default', 'kube-system', 'kube-public', 'kube-node-lease']) expectCode(await env.plinth.client.get(`/api/v1/namespaces/${ns}/configmaps/kube-root-ca.crt`), 200);

    expectCode(await env.plinth.client.delete(CM), 200);
    const back = await eventually(async () => {
      const r = await env.plinth.client.get(CM);
      return r.status === 200 && r.body.metadata.uid !== published.metadata.uid && r.body;
    }, 10_000, 'kube-root-ca.crt recreated');
    assert.deepEqual(back.data, { 'ca.crt': ca });

    expectCode(await env.plinth.client.put(CM, { ...back, data: { 'ca.crt': 'forged', extra: 'x' }, metadata: { ...back.metadata, annotations: {} } }), 200);
    const restored = await eventually(async () => {
      const r = await env.plinth.client.get(CM);
      return r.body.data?.['ca.crt'] === ca && r.body;
    }, 10_000, 'kube-root-ca.crt restored');
    assert.deepEqual(restored.data, { 'ca.crt': ca });
    assert.equal(restored.metadata.annotations['kubernetes.io/description'], DESCRIPTION);
  });
});

describe('DefaultTolerationSeconds and TaintNodesByCondition', () => {
  it('adds the not-ready and unreachable NoExecute tolerations of 300 s unless the pod tolerates them', async () => {
    const res = await env.plinth.client.post(pods('default'), pod('tol', { tolerations: [{ key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 10 }] }));
    expectCode(res, 201);
    assert.deepEqual(res.body.spec.tolerations, [
      { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 10 },
      { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
    ]);
    const plain = await env.plinth.client.post(pods('default'), pod('tol-plain'));
    assert.deepEqual(plain.body.spec.tolerations, [
      { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
      { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
    ]);
    // A toleration of every taint (empty key and effect) covers both.
    const all = await env.plinth.client.post(pods('default'), pod('tol-all', { tolerations: [{ operator: 'Exists' }] }));
    assert.deepEqual(all.body.spec.tolerations, [{ operator: 'Exists' }]);
  });

  it('taints a created Node node.kubernetes.io/not-ready:NoSchedule, once', async () => {
    const node = (name: string, taints?: Obj[]) => ({ apiVersion: 'v1', kind: 'Node', metadata: { name }, ...(taints ? { spec: { taints } } : {}) });
    const res = await env.plinth.client.post('/api/v1/nodes', node('n1', [{ key: 'dedicated', value: 'db', effect: 'NoSchedule' }]));
    expectCode(res, 201);
    assert.deepEqual(res.body.spec.taints, [{ key: 'dedicated', value: 'db', effect: 'NoSchedule' }, { key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }]);
    const has = await env.plinth.client.post('/api/v1/nodes', node('n2', [{ key: 'node.kubernetes.io/not-ready', value: 'x', effect: 'NoSchedule' }]));
    assert.deepEqual(has.body.spec.taints, [{ key: 'node.kubernetes.io/not-ready', value: 'x', effect: 'NoSchedule' }]);
    // Only a create is tainted: an update may remove the taint (the node lifecycle controller does).
    const upd = await env.plinth.client.put('/api/v1/nodes/n1', { ...res.body, spec: { ...res.body.spec, taints: [] } });
    expectCode(upd, 200);
    assert.equal(upd.body.spec.taints, undefined);
  });
});

describe('kubectl', () => {
  it('kubectl run makes a pod whose YAML shows the kube-api-access volume and mount', async () => {
    await kubectl('run', 'web', '--image=nginx', '--restart=Never', '-n', 'default');
    const yaml = await kubectl('get', 'pod', 'web', '-n', 'default', '-o', 'yaml');
    assert.match(yaml, /serviceAccountName: default/);
    assert.match(yaml, /- mountPath: \/var\/run\/secrets\/kubernetes.io\/serviceaccount\n\s+name: kube-api-access-[a-z0-9]{5}\n\s+readOnly: true/);
    assert.match(yaml, /expirationSeconds: 3607/);
    assert.match(yaml, /name: kube-root-ca.crt/);
    assert.match(yaml, /tolerationSeconds: 300/);
  });
});
