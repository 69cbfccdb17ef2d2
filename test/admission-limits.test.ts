/**
 * The LimitRanger (default on) and EventRateLimit (enabled from an admission configuration file)
 * admission plugins on a real server: kube 1.24's defaults, annotation, 403 messages and 429s.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { EXECUTABLE, eventually, tempDir, usePlinth } from './harness.js';
import { expectCode, expectStatus } from './assertions.js';

/** Writes an AdmissionConfiguration with the given EventRateLimit configuration; returns its path. */
function admissionConfigFile(dir: string, configuration: unknown): string {
  const path = join(dir, 'admission.json');
  writeFileSync(path, JSON.stringify({ apiVersion: 'apiserver.config.k8s.io/v1', kind: 'AdmissionConfiguration', plugins: [{ name: 'EventRateLimit', configuration }] }));
  return path;
}

const configDir = tempDir('plinth-erl-');
const erlConfig = {
  apiVersion: 'eventratelimit.admission.k8s.io/v1alpha1',
  kind: 'Configuration',
  // A generous server-wide limit beside the per-namespace one under test.
  limits: [{ type: 'Server', qps: 1000, burst: 1000 }, { type: 'Namespace', qps: 1, burst: 3 }],
};
after(() => rmSync(configDir, { recursive: true, force: true }));
const env = usePlinth(['--enable-admission-plugins=EventRateLimit', `--admission-control-config-file=${admissionConfigFile(configDir, erlConfig)}`]);

const nsPath = (ns: string) => `/api/v1/namespaces/${ns}`;

async function namespaceWith(ns: string, limits: Array<Record<string, unknown>>): Promise<void> {
  expectCode(await env.plinth.client.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }), 201);
  if (limits.length === 0) return;
  const lr = { apiVersion: 'v1', kind: 'LimitRange', metadata: { name: 'limits' }, spec: { limits } };
  expectCode(await env.plinth.client.post(`${nsPath(ns)}/limitranges`, lr), 201);
}

const pod = (name: string, containers: Array<Record<string, unknown>>, initContainers?: Array<Record<string, unknown>>) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name },
  spec: { containers: containers.map((c) => ({ image: 'nginx', ...c })), ...(initContainers ? { initContainers: initContainers.map((c) => ({ image: 'busybox', ...c })) } : {}) },
});

describe('LimitRanger', () => {
  it('fills container and init container resources from the Container item, and annotates the pod as kube', async () => {
    await namespaceWith('lr-defaults', [{ type: 'Container', default: { cpu: '500m', memory: '128Mi' }, defaultRequest: { cpu: '250m' } }]);
    const res = await env.plinth.client.post(`${nsPath('lr-defaults')}/pods`, pod('p', [{ name: 'c' }], [{ name: 'i', resources: { limits: { memory: '64Mi' } } }]));
    expectCode(res, 201);
    const spec = res.body.spec;
    assert.deepEqual(spec.containers[0].resources, { limits: { cpu: '500m', memory: '128Mi' }, requests: { cpu: '250m', memory: '128Mi' } });
    // The init container's memory request came from its own limit (pod defaults run before admission).
    assert.deepEqual(spec.initContainers[0].resources, { limits: { cpu: '500m', memory: '64Mi' }, requests: { cpu: '250m', memory: '64Mi' } });
    assert.equal(
      res.body.metadata.annotations['kubernetes.io/limit-ranger'],
      'LimitRanger plugin set: cpu, memory request for container c; cpu, memory limit for container c; cpu request for init container i; cpu limit for init container i',
    );
    // A pod stating everything is left alone, without the annotation.
    const full = await env.plinth.client.post(`${nsPath('lr-defaults')}/pods`, pod('full', [{ name: 'c', resources: { limits: { cpu: '1', memory: '1Gi' }, requests: { cpu: '1', memory: '1Gi' } } }]));
    expectCode(full, 201);
    assert.equal(full.body.metadata.annotations?.['kubernetes.io/limit-ranger'], undefined);
  });

  it('refuses containers outside min, max and maxLimitRequestRatio with 403 and kube\'s aggregated message', async () => {
    await namespaceWith('lr-bounds', [{ type: 'Container', min: { memory: '64Mi' }, max: { cpu: '1' }, maxLimitRequestRatio: { cpu: '2' } }]);
    const base = `${nsPath('lr-bounds')}/pods`;
    expectStatus(
      await env.plinth.client.post(base, pod('too-big', [{ name: 'c', resources: { limits: { cpu: '2', memory: '32Mi' }, requests: { cpu: '500m' } } }])),
      403,
      'Forbidden',
      'pods "too-big" is forbidden: [minimum memory usage per Container is 64Mi, but request is 32Mi, maximum cpu usage per Container is 1, but limit is 2, cpu max limit to request ratio per Container is 2, but provided ratio is 4.000000]',
    );
    // One violation alone is not bracketed; the max defaults the limit and request (LimitRange defaults).
    expectStatus(
      await env.plinth.client.post(base, pod('small', [{ name: 'c', resources: { requests: { memory: '16Mi' } } }])),
      403,
      'Forbidden',
      'pods "small" is forbidden: minimum memory usage per Container is 64Mi, but request is 16Mi',
    );
    const ok = await env.plinth.client.post(base, pod('ok', [{ name: 'c' }]));
    expectCode(ok, 201);
    assert.deepEqual(ok.body.spec.containers[0].resources, { limits: { cpu: '1' }, requests: { cpu: '1', memory: '64Mi' } });
    // Pod updates are not checked (containers' resources cannot change); a later LimitRange does not block them.
    await env.plinth.client.post(`${nsPath('lr-bounds')}/limitranges`, { apiVersion: 'v1', kind: 'LimitRange', metadata: { name: 'later' }, spec: { limits: [{ type: 'Container', max: { cpu: '100m' } }] } });
    const upd = { ...ok.body, metadata: { ...ok.body.metadata, labels: { a: 'b' } } };
    expectCode(await env.plinth.client.put(`${base}/ok`, upd), 200);
  });

  it('bounds the pod\'s total (containers summed, the largest init container) with the Pod item', async () => {
    await namespaceWith('lr-pod', [{ type: 'Pod', max: { memory: '1Gi' } }]);
    const base = `${nsPath('lr-pod')}/pods`;
    const two = [{ name: 'a', resources: { limits: { memory: '600Mi' } } }, { name: 'b', resources: { limits: { memory: '600Mi' } } }];
    expectStatus(await env.plinth.client.post(base, pod('two', two)), 403, 'Forbidden', 'pods "two" is forbidden: maximum memory usage per Pod is 1Gi, but limit is 1258291200');
    const init = [{ name: 'i', resources: { limits: { memory: '2Gi' } } }];
    expectStatus(await env.plinth.client.post(base, pod('init', [{ name: 'a', resources: { limits: { memory: '100Mi' } } }], init)), 403, 'Forbidden', 'pods "init" is forbidden: maximum memory usage per Pod is 1Gi, but limit is 2Gi');
    expectCode(await env.plinth.client.post(base, pod('one', [two[0]!])), 201);
  });

  it('bounds a claim\'s storage request with the PersistentVolumeClaim item, on create and update', async () => {
    await namespaceWith('lr-pvc', [{ type: 'PersistentVolumeClaim', min: { storage: '1Gi' }, max: { storage: '10Gi' } }]);
    const base = `${nsPath('lr-pvc')}/persistentvolumeclaims`;
    const pvc = (name: string, storage: string) => ({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage } } } });
    expectStatus(await env.plinth.client.post(base, pvc('big', '20Gi')), 403, 'Forbidden', 'persistentvolumeclaims "big" is forbidden: maximum storage usage per PersistentVolumeClaim is 10Gi, but request is 20Gi');
    expectStatus(await env.plinth.client.post(base, pvc('tiny', '500Mi')), 403, 'Forbidden', 'persistentvolumeclaims "tiny" is forbidden: minimum storage usage per PersistentVolumeClaim is 1Gi, but request is 500Mi');
    const ok = await env.plinth.client.post(base, pvc('ok', '5Gi'));
    expectCode(ok, 201);
    // Claims are checked on update too: a tighter LimitRange refuses a later change of the claim.
    const tighter = { apiVersion: 'v1', kind: 'LimitRange', metadata: { name: 'tighter' }, spec: { limits: [{ type: 'PersistentVolumeClaim', max: { storage: '2Gi' } }] } };
    expectCode(await env.plinth.client.post(`${nsPath('lr-pvc')}/limitranges`, tighter), 201);
    // The watch cache (kube: the informer) may take a moment to see the new LimitRange: an update
    // it lets through changes the claim, so each try starts from the claim as it is now.
    let attempt = 0;
    const refused = await eventually(async () => {
      const cur = (await env.plinth.client.get(`${base}/ok`)).body;
      const r = await env.plinth.client.put(`${base}/ok`, { ...cur, metadata: { ...cur.metadata, labels: { a: String(++attempt) } } });
      return r.status === 403 ? r : undefined;
    });
    expectStatus(refused, 403, 'Forbidden', 'persistentvolumeclaims "ok" is forbidden: maximum storage usage per PersistentVolumeClaim is 2Gi, but request is 5Gi');
  });
});

describe('EventRateLimit', () => {
  const event = (name: string, ns: string) => ({
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name },
    involvedObject: { kind: 'Pod', namespace: ns, name: 'p' },
    reason: 'Test',
    message: 'hello',
    source: { component: 'test' },
  });

  it('refuses core Events past a namespace\'s burst with 429 and kube\'s message; dry runs and other namespaces pass', async () => {
    await namespaceWith('erl', []);
    await namespaceWith('erl-other', []);
    const base = `${nsPath('erl')}/events`;
    for (let i = 0; i < 3; i++) expectCode(await env.plinth.client.post(base, event(`e${i}`, 'erl')), 201, `event ${i} within the burst`);
    // One token a second refills the bucket: send until refused (at most a few more).
    let refused;
    for (let i = 3; i < 8 && !refused; i++) {
      const r = await env.plinth.client.post(base, event(`e${i}`, 'erl'));
      if (r.status !== 201) refused = r;
    }
    assert.ok(refused, 'an event past the burst is refused');
    expectStatus(refused, 429, 'TooManyRequests', 'Too many requests: limit reached on type Namespace for key erl');
    assert.equal(refused.body.details, undefined);
    // Not counted: dry runs, another namespace's bucket, and events.k8s.io Events (kube limits core Events only).
    expectCode(await env.plinth.client.post(`${base}?dryRun=All`, event('dry', 'erl')), 201);
    expectCode(await env.plinth.client.post(`${nsPath('erl-other')}/events`, event('x', 'erl-other')), 201);
    const modern = { apiVersion: 'events.k8s.io/v1', kind: 'Event', metadata: { name: 'modern' }, eventTime: '2024-01-01T00:00:00.000000Z', reportingController: 'test/ctl', reportingInstance: 'i', action: 'Test', reason: 'Test', type: 'Normal', regarding: { kind: 'Pod', namespace: 'erl', name: 'p' } };
    expectCode(await env.plinth.client.post('/apis/events.k8s.io/v1/namespaces/erl/events', modern), 201);
  });

  it('fails start-up when enabled without a configuration or with a bad one, with kube\'s messages', () => {
    const run = (args: string[]) => {
      const dataDir = tempDir('plinth-erl-data-');
      try {
        return spawnSync(process.execPath, [EXECUTABLE, `--data-dir=${dataDir}`, '--secure-port=0', '--bind-address=127.0.0.1', `--etcd-servers=${env.etcd.endpoint}`, '--enable-admission-plugins=EventRateLimit', ...args], { encoding: 'utf8', timeout: 60_000 });
      } finally {
        rmSync(dataDir, { recursive: true, force: true });
      }
    };
    const none = run([]);
    assert.equal(none.status, 1, none.stderr);
    assert.match(none.stderr, /failed to initialize admission: couldn't init admission plugin "EventRateLimit": limits: Invalid value: \[\]eventratelimit.Limit\(nil\): must not be empty/);
    const dir = tempDir('plinth-erl-bad-');
    try {
      const bad = { ...erlConfig, limits: [{ type: 'Cluster', qps: 0, burst: 5, cacheSize: -1 }] };
      const res = run([`--admission-control-config-file=${admissionConfigFile(dir, bad)}`]);
      assert.equal(res.status, 1, res.stderr);
      assert.ok(
        res.stderr.includes(
          'couldn\'t init admission plugin "EventRateLimit": [limits[0].type: Unsupported value: "Cluster": supported values: "Namespace", "Server", "SourceAndObject", "User", limits[0].qps: Invalid value: 0: must be positive, limits[0].cacheSize: Invalid value: -1: must not be negative]',
        ),
        res.stderr,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
