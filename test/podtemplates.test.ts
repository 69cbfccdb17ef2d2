/**
 * core/v1 PodTemplates on a real server: the resource added as one module (groups/core/podtemplates.ts)
 * gets discovery, decoding from the schema source (unknown fields dropped, Quantity and
 * IntOrString), kube's generation rule, its validation causes, kubectl's columns, strategic merge
 * patch and server-side apply by kube's merge keys, Protobuf, default field selectors and OpenAPI.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { decodeProtobuf } from '@plinth/apiserver';
import { kubectlPath, usePlinth } from './harness.js';
import { causeFields, expectCode, expectStatus } from './assertions.js';

const env = usePlinth();
const NS = 'default';
const PT = `/api/v1/namespaces/${NS}/podtemplates`;

function kubectl(...args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(kubectlPath(), ['--kubeconfig', env.plinth.server.kubeconfigPath, ...args], { encoding: 'utf8', timeout: 60_000 }, (err, stdout, stderr) =>
      err ? reject(new Error(`kubectl ${args.join(' ')}: ${stderr}`)) : resolve(stdout),
    );
  });
}

const template = (name: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  apiVersion: 'v1',
  kind: 'PodTemplate',
  metadata: { name },
  template: {
    metadata: { labels: { app: name, tier: 'web' } },
    spec: {
      containers: [
        {
          name: 'app',
          image: 'nginx:1.25',
          ports: [{ name: 'http', containerPort: 8080 }],
          resources: { limits: { cpu: 1, memory: '64Mi' } },
          readinessProbe: { httpGet: { path: '/', port: 'http' } },
          env: [{ name: 'A', value: '1' }],
        },
        { name: 'sidecar', image: 'busybox:1.36' },
      ],
    },
  },
  ...extra,
});

describe('podtemplates', () => {
  it('are served in discovery as kube serves them', async () => {
    const res = await env.plinth.client.get('/api/v1');
    expectCode(res, 200);
    const r = (res.body.resources as Array<Record<string, unknown>>).find((x) => x['name'] === 'podtemplates');
    assert.ok(r, 'podtemplates listed');
    assert.equal(r['kind'], 'PodTemplate');
    assert.equal(r['namespaced'], true);
    assert.deepEqual(r['verbs'], ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch']);
    assert.equal(r['shortNames'], undefined);
  });

  it('decode by the schema source, start at generation 1 and count template changes only', async () => {
    const created = await env.plinth.client.post(PT, template('web', { junk: true }));
    expectCode(created, 201);
    assert.equal(created.body.metadata.generation, 1);
    assert.equal(created.body.junk, undefined, 'an unknown field is dropped');
    const app = created.body.template.spec.containers[0];
    assert.deepEqual(app.resources.limits, { cpu: '1', memory: '64Mi' }, 'a Quantity given as a number reads as a string');
    assert.equal(app.readinessProbe.httpGet.port, 'http', 'an IntOrString keeps its string');

    const labelled = await env.plinth.client.put(`${PT}/web`, { ...created.body, metadata: { ...created.body.metadata, labels: { x: 'y' } } });
    expectCode(labelled, 200);
    assert.equal(labelled.body.metadata.generation, 1, 'metadata is no template change');
    const changed = structuredClone(labelled.body);
    changed.template.spec.containers[1].image = 'busybox:1.37';
    const updated = await env.plinth.client.put(`${PT}/web`, changed);
    expectCode(updated, 200);
    assert.equal(updated.body.metadata.generation, 2);
  });

  it("refuse a bad template with kube's causes", async () => {
    const bad = template('bad');
    (bad['template'] as { metadata: { labels: Record<string, string> } }).metadata.labels = { 'bad key!': 'x' };
    ((bad['template'] as { spec: Record<string, unknown> }).spec)['ephemeralContainers'] = [{ name: 'debug', image: 'busybox' }];
    const res = await env.plinth.client.post(PT, bad);
    expectStatus(res, 422, 'Invalid', /^PodTemplate "bad" is invalid: \[template\.labels: Invalid value: "bad key!": /);
    assert.deepEqual(causeFields(res), ['template.labels', 'template.spec.ephemeralContainers']);
  });

  it("get kube's pod spec defaults and the whole template validated, --allow-privileged included", async () => {
    const created = await env.plinth.client.post(PT, { apiVersion: 'v1', kind: 'PodTemplate', metadata: { name: 'defaults' }, template: { spec: { containers: [{ name: 'c', image: 'nginx' }] } } });
    expectCode(created, 201);
    const spec = created.body.template.spec;
    assert.equal(spec.restartPolicy, 'Always');
    assert.equal(spec.dnsPolicy, 'ClusterFirst');
    assert.equal(spec.terminationGracePeriodSeconds, 30);
    assert.equal(spec.schedulerName, 'default-scheduler');
    assert.equal(spec.containers[0].imagePullPolicy, 'Always', 'no tag: Always');
    assert.equal(spec.containers[0].terminationMessagePath, '/dev/termination-log');
    const bad = await env.plinth.client.post(PT, {
      apiVersion: 'v1',
      kind: 'PodTemplate',
      metadata: { name: 'bad-spec' },
      template: { spec: { containers: [{ name: 'c', image: '' }, { name: 'p', image: 'nginx', securityContext: { privileged: true } }] } },
    });
    expectStatus(bad, 422, 'Invalid', /^PodTemplate "bad-spec" is invalid: /);
    assert.deepEqual(causeFields(bad), ['template.spec.containers[0].image', 'template.spec.containers[1].securityContext.privileged']);
  });

  it('print kube\'s columns in kubectl get', async () => {
    const out = (await kubectl('get', 'podtemplates', 'web', '-n', NS)).trimEnd().split('\n');
    assert.match(out[0]!, /^NAME\s+CONTAINERS\s+IMAGES\s+POD LABELS$/);
    assert.match(out[1]!, /^web\s+app,sidecar\s+nginx:1\.25,busybox:1\.37\s+app=web,tier=web$/);
  });

  it('merge containers by name in a strategic merge patch and in server-side apply', async () => {
    const patched = await env.plinth.client.request('PATCH', `${PT}/web`, {
      headers: { 'content-type': 'application/strategic-merge-patch+json' },
      body: { template: { spec: { containers: [{ name: 'app', env: [{ name: 'B', value: '2' }] }] } } },
    });
    expectCode(patched, 200);
    const containers = patched.body.template.spec.containers as Array<{ name: string; image: string; env?: unknown[] }>;
    assert.deepEqual(containers.map((c) => c.name), ['app', 'sidecar']);
    assert.deepEqual(containers[0]!.env, [{ name: 'B', value: '2' }, { name: 'A', value: '1' }], 'env merged by name');

    const applied = await env.plinth.client.request('PATCH', `${PT}/web?fieldManager=tool`, {
      headers: { 'content-type': 'application/apply-patch+yaml' },
      body: { apiVersion: 'v1', kind: 'PodTemplate', metadata: { name: 'web' }, template: { spec: { containers: [{ name: 'extra', image: 'redis:7' }] } } },
    });
    expectCode(applied, 200);
    assert.deepEqual((applied.body.template.spec.containers as Array<{ name: string }>).map((c) => c.name), ['app', 'sidecar', 'extra']);
  });

  it('are served as Protobuf and list with the default field selectors only', async () => {
    const pb = await env.plinth.client.get(`${PT}/web`, { headers: { accept: 'application/vnd.kubernetes.protobuf' } });
    expectCode(pb, 200);
    const decoded = decodeProtobuf(pb.raw) as { kind: string; template: { spec: { containers: Array<{ resources?: unknown }> } } };
    assert.equal(decoded.kind, 'PodTemplate');
    assert.deepEqual(decoded.template.spec.containers[0]!.resources, { limits: { cpu: '1', memory: '64Mi' } });

    const byName = await env.plinth.client.get(`${PT}?fieldSelector=metadata.name%3Dweb`);
    expectCode(byName, 200);
    assert.deepEqual(byName.body.items.map((i: { metadata: { name: string } }) => i.metadata.name), ['web']);
    const other = await env.plinth.client.get(`${PT}?fieldSelector=spec.x%3D1`);
    expectStatus(other, 400, 'BadRequest', '"spec.x" is not a known field selector: only "metadata.name", "metadata.namespace"');
  });

  it('are in OpenAPI, so kubectl explains them', async () => {
    const out = await kubectl('explain', 'podtemplate.template.spec.containers.ports');
    assert.match(out, /^KIND:\s+PodTemplate$/m);
    assert.match(out, /^ {2}containerPort\t<integer> -required-$/m);
  });
});
