/**
 * core/v1 Pods on a real server (groups/core/pods, registry/pod-storages.ts, pod-connect.ts):
 * defaults and the QoS class, kube's validation causes, spec immutability, status isolation,
 * binding, eviction (policy/v1 and v1beta1), ephemeral containers, graceful deletion, field
 * selectors, kubectl's columns, Protobuf, canonical quantities, and what log, exec, attach,
 * portforward and proxy answer without a kubelet.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeProtobuf } from '@plinth/apiserver';
import { kubectlPath, usePlinth } from './harness.js';
import { causeFields, expectCode, expectStatus } from './assertions.js';

const env = usePlinth();
const NS = 'default';
const PODS = `/api/v1/namespaces/${NS}/pods`;

function kubectl(...args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(kubectlPath(), ['--kubeconfig', env.plinth.server.kubeconfigPath, ...args], { encoding: 'utf8', timeout: 60_000 }, (err, stdout, stderr) =>
      err ? reject(new Error(`kubectl ${args.join(' ')}: ${stderr}`)) : resolve(stdout),
    );
  });
}

function kubectlFails(...args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(kubectlPath(), ['--kubeconfig', env.plinth.server.kubeconfigPath, ...args], { encoding: 'utf8', timeout: 60_000 }, (err, _stdout, stderr) =>
      err ? resolve(stderr) : reject(new Error(`kubectl ${args.join(' ')} succeeded`)),
    );
  });
}

const pod = (name: string, spec: Record<string, unknown> = {}): Record<string, unknown> => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name },
  spec: { containers: [{ name: 'app', image: 'nginx:1.25' }], ...spec },
});

/** Binds `name` to `node` through pods/binding. */
async function bind(name: string, node: string): Promise<void> {
  const res = await env.plinth.client.post(`${PODS}/${name}/binding`, { apiVersion: 'v1', kind: 'Binding', metadata: { name }, target: { kind: 'Node', name: node } });
  expectCode(res, 201);
}

describe('pods', () => {
  it('are in discovery as kube 1.24 lists them', async () => {
    const res = await env.plinth.client.get('/api/v1');
    const byName = new Map((res.body.resources as Array<Record<string, unknown>>).map((r) => [r['name'] as string, r]));
    const p = byName.get('pods')!;
    assert.deepEqual(p['shortNames'], ['po']);
    assert.deepEqual(p['categories'], ['all']);
    assert.deepEqual(p['verbs'], ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch']);
    const subs = [...byName.keys()].filter((n) => n.startsWith('pods/'));
    assert.deepEqual(subs, ['pods/attach', 'pods/binding', 'pods/ephemeralcontainers', 'pods/eviction', 'pods/exec', 'pods/log', 'pods/portforward', 'pods/proxy', 'pods/status']);
    assert.deepEqual(byName.get('pods/eviction'), { name: 'pods/eviction', singularName: '', namespaced: true, group: 'policy', version: 'v1', kind: 'Eviction', verbs: ['create'] });
    assert.deepEqual(byName.get('pods/binding'), { name: 'pods/binding', singularName: '', namespaced: true, kind: 'Binding', verbs: ['create'] });
    assert.equal(byName.get('pods/exec')!['kind'], 'PodExecOptions');
    assert.equal(byName.get('pods/log')!['kind'], 'Pod');
    assert.deepEqual(byName.get('pods/proxy')!['verbs'], ['create', 'delete', 'get', 'patch', 'update']);
    assert.deepEqual(byName.get('bindings')!['verbs'], ['create']);
    assert.equal(byName.get('bindings')!['kind'], 'Binding');
  });

  it('are created with kube\'s defaults, phase Pending, the QoS class and canonical quantities', async () => {
    const res = await env.plinth.client.post(PODS, pod('web', {
      containers: [{ name: 'app', image: 'nginx:1.25', resources: { limits: { cpu: '1000m', memory: '0.5Gi' }, requests: { cpu: 1, memory: '512Mi' } } }],
    }));
    expectCode(res, 201);
    const spec = res.body.spec;
    assert.equal(spec.restartPolicy, 'Always');
    assert.equal(spec.terminationGracePeriodSeconds, 30);
    assert.equal(spec.dnsPolicy, 'ClusterFirst');
    assert.equal(spec.schedulerName, 'default-scheduler');
    assert.equal(spec.containers[0].imagePullPolicy, 'IfNotPresent');
    assert.equal(spec.containers[0].terminationMessagePath, '/dev/termination-log');
    assert.deepEqual(spec.containers[0].resources, { limits: { cpu: '1', memory: '512Mi' }, requests: { cpu: '1', memory: '512Mi' } });
    assert.deepEqual(res.body.status, { phase: 'Pending', qosClass: 'Guaranteed' });
    assert.equal(res.body.metadata.generation, undefined);
    const best = await env.plinth.client.post(PODS, { ...pod('best'), status: { phase: 'Running', podIP: '10.0.0.1' } });
    expectCode(best, 201);
    assert.deepEqual(best.body.status, { phase: 'Pending', qosClass: 'BestEffort' }, 'a client cannot set the status at create');
  });

  it('refuse a bad quantity at decoding with kube\'s 400', async () => {
    const res = await env.plinth.client.post(PODS, pod('badq', { containers: [{ name: 'app', image: 'x', resources: { limits: { cpu: 'lots' } } }] }));
    expectStatus(res, 400, 'BadRequest', "Pod in version \"v1\" cannot be handled as a Pod: quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
  });

  it('refuse a bad pod with kube\'s causes in kube\'s order', async () => {
    const res = await env.plinth.client.post(PODS, pod('bad', {
      containers: [{ name: 'app', image: '' }, { name: 'app', image: 'x', securityContext: { privileged: true } }],
      restartPolicy: 'Sometimes',
    }));
    expectStatus(res, 422, 'Invalid', /^Pod "bad" is invalid: \[/);
    assert.deepEqual(causeFields(res), ['spec.containers[0].image', 'spec.containers[1].name', 'spec.containers[1].securityContext.privileged', 'spec.restartPolicy']);
    const privileged = (res.body.details.causes as Array<{ field: string; message: string }>).find((c) => c.field.endsWith('privileged'))!;
    assert.equal(privileged.message, 'Forbidden: disallowed by cluster policy');
  });

  it('keep the spec immutable but for kube\'s fields, with kube\'s message and diff', async () => {
    const cur = (await env.plinth.client.get(`${PODS}/web`)).body;
    const image = structuredClone(cur);
    image.spec.containers[0].image = 'nginx:1.26';
    image.spec.activeDeadlineSeconds = 600;
    const ok = await env.plinth.client.put(`${PODS}/web`, image);
    expectCode(ok, 200);
    assert.equal(ok.body.spec.containers[0].image, 'nginx:1.26');
    const changed = structuredClone(ok.body);
    changed.spec.restartPolicy = 'Never';
    const res = await env.plinth.client.put(`${PODS}/web`, changed);
    expectStatus(res, 422, 'Invalid');
    assert.deepEqual(causeFields(res), ['spec']);
    const msg = res.body.details.causes[0].message as string;
    assert.ok(msg.startsWith('Forbidden: pod updates may not change fields other than `spec.containers[*].image`, `spec.initContainers[*].image`, `spec.activeDeadlineSeconds`, `spec.tolerations` (only additions to existing tolerations) or `spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)\n  core.PodSpec{\n'), msg);
    assert.match(msg, /^-\s+RestartPolicy:\s+"Always",$/m);
    assert.match(msg, /^\+\s+RestartPolicy:\s+"Never",$/m);
  });

  it('keep status and spec apart: the main resource ignores status, /status ignores spec', async () => {
    const cur = (await env.plinth.client.get(`${PODS}/web`)).body;
    const withStatus = structuredClone(cur);
    withStatus.status.phase = 'Running';
    const main = await env.plinth.client.put(`${PODS}/web`, withStatus);
    expectCode(main, 200);
    assert.equal(main.body.status.phase, 'Pending');
    const viaStatus = structuredClone(main.body);
    viaStatus.status = { ...viaStatus.status, phase: 'Running', podIP: '10.1.2.3' };
    viaStatus.spec.containers[0].image = 'changed:1';
    const st = await env.plinth.client.put(`${PODS}/web/status`, viaStatus);
    expectCode(st, 200);
    assert.equal(st.body.status.phase, 'Running');
    assert.deepEqual(st.body.status.podIPs, [{ ip: '10.1.2.3' }]);
    assert.equal(st.body.spec.containers[0].image, 'nginx:1.26', 'spec is ignored through /status');
  });

  it('bind through pods/binding (201, Success), then 409 once bound; bindings takes the same', async () => {
    const res = await env.plinth.client.post(`${PODS}/web/binding`, { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'web' }, target: { kind: 'Node', name: 'node-1' } });
    expectCode(res, 201);
    assert.deepEqual(res.body, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 });
    const bound = (await env.plinth.client.get(`${PODS}/web`)).body;
    assert.equal(bound.spec.nodeName, 'node-1');
    const cond = bound.status.conditions.find((c: { type: string }) => c.type === 'PodScheduled');
    assert.equal(cond.status, 'True');
    const again = await env.plinth.client.post(`${PODS}/web/binding`, { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'web' }, target: { kind: 'Node', name: 'node-2' } });
    expectStatus(again, 409, 'Conflict', 'Operation cannot be fulfilled on pods/binding "web": pod web is already assigned to node "node-1"');
    const missing = await env.plinth.client.post(`${PODS}/nope/binding`, { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'nope' }, target: { name: 'node-1' } });
    expectStatus(missing, 404, 'NotFound', 'pods "nope" not found');
    const kind = await env.plinth.client.post(`${PODS}/best/binding`, { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'best' }, target: { kind: 'Pod', name: 'x' } });
    expectStatus(kind, 500, '', 'target.kind: Unsupported value: "Pod": supported values: "Node", "<empty>"');
    const mismatch = await env.plinth.client.post(`${PODS}/best/binding`, { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'other' }, target: { name: 'x' } });
    expectStatus(mismatch, 400, 'BadRequest', 'name in URL does not match name in Binding object');
    const legacy = await env.plinth.client.post(`/api/v1/namespaces/${NS}/bindings`, { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'best' }, target: { name: 'node-2' } });
    expectCode(legacy, 201);
    assert.equal((await env.plinth.client.get(`${PODS}/best`)).body.spec.nodeName, 'node-2');
  });

  it('add ephemeral containers through pods/ephemeralcontainers, never change or remove them', async () => {
    const cur = (await env.plinth.client.get(`${PODS}/web/ephemeralcontainers`)).body;
    cur.spec.ephemeralContainers = [{ name: 'debug', image: 'busybox:1.36', stdin: true }];
    const added = await env.plinth.client.put(`${PODS}/web/ephemeralcontainers`, cur);
    expectCode(added, 200);
    assert.equal(added.body.spec.ephemeralContainers[0].terminationMessagePolicy, 'File');
    const removed = structuredClone(added.body);
    removed.spec.ephemeralContainers = [];
    const res = await env.plinth.client.put(`${PODS}/web/ephemeralcontainers`, removed);
    expectStatus(res, 422, 'Invalid');
    assert.equal(res.body.details.causes[0].message, 'Forbidden: existing ephemeral containers "debug" may not be removed\n');
    const create = await env.plinth.client.post(PODS, pod('eph', { ephemeralContainers: [{ name: 'd', image: 'busybox' }] }));
    expectStatus(create, 422, 'Invalid', 'Pod "eph" is invalid: spec.ephemeralContainers: Forbidden: cannot be set on create');
  });

  it('select by kube\'s field labels, and refuse others', async () => {
    const names = async (sel: string): Promise<string[]> => {
      const res = await env.plinth.client.get(`${PODS}?fieldSelector=${encodeURIComponent(sel)}`);
      expectCode(res, 200);
      return (res.body.items as Array<{ metadata: { name: string } }>).map((i) => i.metadata.name).sort();
    };
    assert.deepEqual(await names('spec.nodeName=node-1'), ['web']);
    assert.deepEqual(await names('spec.nodeName=node-2'), ['best']);
    assert.deepEqual(await names('spec.host=node-2'), ['best']);
    assert.deepEqual(await names('status.phase=Running'), ['web']);
    assert.deepEqual(await names('status.podIP=10.1.2.3,spec.restartPolicy=Always'), ['web']);
    const bad = await env.plinth.client.get(`${PODS}?fieldSelector=spec.containers%3Dx`);
    expectStatus(bad, 400, 'BadRequest', 'field label not supported: spec.containers');
  });

  it('print kube\'s columns, wide too, through kubectl', async () => {
    const out = (await kubectl('get', 'pods', 'web', '-n', NS)).trimEnd().split('\n');
    assert.match(out[0]!, /^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE$/);
    assert.match(out[1]!, /^web\s+0\/1\s+Running\s+0\s+\d+s$/);
    const wide = (await kubectl('get', 'po', 'web', '-n', NS, '-o', 'wide')).trimEnd().split('\n');
    assert.match(wide[0]!, /^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE\s+IP\s+NODE\s+NOMINATED NODE\s+READINESS GATES$/);
    assert.match(wide[1]!, /^web\s+0\/1\s+Running\s+0\s+\d+s\s+10\.1\.2\.3\s+node-1\s+<none>\s+<none>$/);
  });

  it('round-trip as Protobuf', async () => {
    const pb = await env.plinth.client.get(`${PODS}/web`, { headers: { accept: 'application/vnd.kubernetes.protobuf' } });
    expectCode(pb, 200);
    const decoded = decodeProtobuf(pb.raw) as { kind: string; spec: { nodeName: string; containers: Array<{ resources: unknown }> }; status: { qosClass: string } };
    assert.equal(decoded.kind, 'Pod');
    assert.equal(decoded.spec.nodeName, 'node-1');
    assert.deepEqual(decoded.spec.containers[0]!.resources, { limits: { cpu: '1', memory: '512Mi' }, requests: { cpu: '1', memory: '512Mi' } });
    assert.equal(decoded.status.qosClass, 'Guaranteed');
  });

  it('answer pods/log without a kubelet as kube does', async () => {
    await env.plinth.client.post(PODS, pod('two', { containers: [{ name: 'a', image: 'x' }, { name: 'b', image: 'x' }], initContainers: [{ name: 'i', image: 'x' }] }));
    const unscheduled = await env.plinth.client.get(`${PODS}/two/log?container=a`);
    expectCode(unscheduled, 200);
    assert.equal(unscheduled.raw.length, 0, 'an unscheduled pod has no log yet');
    assert.match(String(unscheduled.headers['content-type']), /^text\/plain/);
    expectStatus(await env.plinth.client.get(`${PODS}/two/log`), 400, 'BadRequest', 'a container name must be specified for pod two, choose one of: [a b] or one of the init containers: [i]');
    expectStatus(await env.plinth.client.get(`${PODS}/two/log?container=z`), 400, 'BadRequest', 'container z is not valid for pod two');
    const neg = await env.plinth.client.get(`${PODS}/two/log?container=a&tailLines=-1&limitBytes=0`);
    expectStatus(neg, 422, 'Invalid', 'PodLogOptions "two" is invalid: [tailLines: Invalid value: -1: must be greater than or equal to 0, limitBytes: Invalid value: 0: must be greater than 0]');
    expectStatus(await env.plinth.client.get(`${PODS}/two/log?tailLines=x`), 400, 'BadRequest', 'strconv.ParseInt: parsing "x": invalid syntax');
    expectStatus(await env.plinth.client.get(`${PODS}/nope/log`), 404, 'NotFound', 'pods "nope" not found');
    // Bound to a node plinth does not know.
    expectStatus(await env.plinth.client.get(`${PODS}/web/log`), 404, 'NotFound', 'nodes "node-1" not found');
  });

  it('answer exec, attach and portforward without a kubelet as kube does', async () => {
    for (const sub of ['exec', 'attach']) {
      expectStatus(await env.plinth.client.post(`${PODS}/two/${sub}?container=a&command=ls&stdout=true`, undefined), 400, 'BadRequest', 'pod two does not have a host assigned');
      expectStatus(await env.plinth.client.get(`${PODS}/two/${sub}?command=ls`), 400, 'BadRequest', /^a container name must be specified for pod two/);
      expectStatus(await env.plinth.client.get(`${PODS}/web/${sub}?command=ls&stdout=x`), 400, 'BadRequest', 'strconv.ParseBool: parsing "x": invalid syntax');
      expectStatus(await env.plinth.client.get(`${PODS}/web/${sub}?command=ls`), 404, 'NotFound', 'nodes "node-1" not found');
    }
    expectStatus(await env.plinth.client.post(`${PODS}/two/portforward?ports=80`, undefined), 400, 'BadRequest', 'pod two does not have a host assigned');
    const stderr = await kubectlFails('exec', 'two', '-n', NS, '-c', 'a', '--', 'ls');
    assert.match(stderr, /pod two does not have a host assigned/);
  });

  describe('pods/proxy', () => {
    let backend: Server;
    let port = 0;
    const seen: Array<{ url: string; auth: string | undefined; method: string }> = [];
    after(() => backend?.close());

    it('proxies to a pod IP and port, never to a loopback address, without the client\'s credentials', async () => {
      backend = createServer((req, res) => {
        seen.push({ url: req.url ?? '', auth: req.headers.authorization, method: req.method ?? '' });
        if (req.url?.startsWith('/redirect')) {
          res.writeHead(302, { location: 'http://169.254.169.254/latest' });
          res.end();
          return;
        }
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end(`hello ${req.url}`);
      });
      await new Promise<void>((resolve) => backend.listen(0, '0.0.0.0', resolve));
      port = (backend.address() as AddressInfo).port;
      // 127.0.0.1: not a pod address kube proxies to.
      const loop = structuredClone((await env.plinth.client.get(`${PODS}/two`)).body);
      loop.status.podIP = '127.0.0.1';
      expectCode(await env.plinth.client.put(`${PODS}/two/status`, loop), 200);
      expectStatus(await env.plinth.client.get(`${PODS}/two:${port}/proxy/`), 400, 'BadRequest', 'address not allowed');
      expectStatus(await env.plinth.client.get(`${PODS}/best/proxy/`), 400, 'BadRequest', 'address not allowed');
      expectStatus(await env.plinth.client.get(`${PODS}/a:b:c:d/proxy/`), 400, 'BadRequest', 'invalid pod request "a:b:c:d"');
      expectStatus(await env.plinth.client.get(`${PODS}/ftp:two:80/proxy/`), 400, 'BadRequest', 'invalid pod request "ftp:two:80"');
      // The machine's own non-loopback address stands for a pod IP (kube: any global unicast address).
      const ip = (await import('node:os')).networkInterfaces();
      const own = Object.values(ip).flat().find((a) => a && a.family === 'IPv4' && !a.internal)?.address;
      if (!own) return;
      const routable = structuredClone((await env.plinth.client.get(`${PODS}/two`)).body);
      routable.status.podIP = own;
      expectCode(await env.plinth.client.put(`${PODS}/two/status`, routable), 200);
      const res = await env.plinth.client.get(`${PODS}/http:two:${port}/proxy/some/path?x=1`);
      expectCode(res, 200);
      assert.equal(res.raw.toString(), 'hello /some/path?x=1');
      assert.deepEqual(seen.at(-1), { url: '/some/path?x=1', auth: undefined, method: 'GET' });
      const redirect = await env.plinth.client.get(`${PODS}/two:${port}/proxy/redirect`);
      assert.equal(redirect.status, 302, 'a redirect is answered, never followed');
      assert.equal(seen.filter((s) => s.url.startsWith('/latest')).length, 0);
      // A closed port: kube's 500 with Go's dial error.
      backend.close();
      const refused = await env.plinth.client.get(`${PODS}/two:${port}/proxy/`);
      expectStatus(refused, 500, '', `dial tcp ${own}:${port}: connect: connection refused`);
    });
  });

  it('evict through policy/v1 and policy/v1beta1 Evictions (201, Success)', async () => {
    await env.plinth.client.post(PODS, pod('ev1'));
    await env.plinth.client.post(PODS, pod('ev2'));
    const v1 = await env.plinth.client.post(`${PODS}/ev1/eviction`, { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'ev1' } });
    expectCode(v1, 201);
    assert.deepEqual(v1.body, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 });
    expectCode(await env.plinth.client.get(`${PODS}/ev1`), 404);
    const beta = await env.plinth.client.post(`${PODS}/ev2/eviction`, { apiVersion: 'policy/v1beta1', kind: 'Eviction', metadata: { name: 'ev2' }, deleteOptions: { gracePeriodSeconds: 0 } });
    expectCode(beta, 201);
    expectCode(await env.plinth.client.get(`${PODS}/ev2`), 404);
    expectStatus(await env.plinth.client.post(`${PODS}/ev3/eviction`, { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'ev3' } }), 404, 'NotFound', 'pods "ev3" not found');
    expectStatus(await env.plinth.client.post(`${PODS}/web/eviction`, { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'x' } }), 400, 'BadRequest', 'name in URL does not match name in Eviction object');
  });

  it('delete a scheduled pod gracefully and an unscheduled one at once', async () => {
    const res = await env.plinth.client.delete(`${PODS}/web`);
    expectCode(res, 200);
    assert.equal(res.body.kind, 'Pod');
    assert.equal(res.body.metadata.deletionGracePeriodSeconds, 30);
    assert.ok(res.body.metadata.deletionTimestamp);
    const still = await env.plinth.client.get(`${PODS}/web`);
    expectCode(still, 200);
    const table = (await kubectl('get', 'pods', 'web', '-n', NS)).trimEnd().split('\n');
    assert.match(table[1]!, /^web\s+0\/1\s+Terminating\s+0\s+\d+s$/);
    // A terminating pod cannot be bound, and evicting it deletes it again (a no-op).
    const ev = await env.plinth.client.post(`${PODS}/web/eviction`, { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'web' } });
    expectCode(ev, 201);
    const now = await env.plinth.client.delete(`${PODS}/web`, { body: { gracePeriodSeconds: 0 } });
    expectCode(now, 200);
    expectCode(await env.plinth.client.get(`${PODS}/web`), 404);
    const unscheduled = await env.plinth.client.delete(`${PODS}/two`);
    expectCode(unscheduled, 200);
    expectCode(await env.plinth.client.get(`${PODS}/two`), 404);
  });

  it('work end to end with kubectl run, get -o wide, logs and delete', async () => {
    await kubectl('run', 'nginx', '--image=nginx', '-n', NS);
    const wide = (await kubectl('get', 'pods', 'nginx', '-n', NS, '-o', 'wide')).trimEnd().split('\n');
    assert.match(wide[1]!, /^nginx\s+0\/1\s+Pending\s+0\s+\d+s\s+<none>\s+<none>\s+<none>\s+<none>$/);
    assert.equal(await kubectl('logs', 'nginx', '-n', NS), '');
    await bind('nginx', 'node-9');
    const err = await kubectlFails('logs', 'nginx', '-n', NS);
    assert.match(err, /nodes "node-9" not found/);
    const graceful = await kubectl('delete', 'pod', 'nginx', '-n', NS, '--wait=false');
    assert.match(graceful, /pod "nginx" deleted/);
    expectCode(await env.plinth.client.get(`${PODS}/nginx`), 200);
    const forced = await kubectl('delete', 'pod', 'nginx', '-n', NS, '--grace-period=0', '--force');
    assert.match(forced, /pod "nginx" force deleted/);
    expectCode(await env.plinth.client.get(`${PODS}/nginx`), 404);
  });
});
