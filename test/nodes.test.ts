/**
 * core/v1 Nodes on a real server: status kept on create, status/spec isolation, kube's update
 * causes, field selectors, kubectl's columns (`get nodes -o wide`), `kubectl cordon/uncordon`,
 * Protobuf, and nodes/proxy answered as kube's node ResourceLocation answers without a kubelet.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { networkInterfaces } from 'node:os';
import type { AddressInfo } from 'node:net';
import { decodeProtobuf } from '@plinth/apiserver';
import { kubectlPath, usePlinth } from './harness.js';
import { causeFields, expectCode, expectStatus } from './assertions.js';

const env = usePlinth();
const NODES = '/api/v1/nodes';

function kubectl(...args: string[]): Promise<{ stdout: string; stderr: string; code: number }> {
  return new Promise((resolve) => {
    execFile(kubectlPath(), ['--kubeconfig', env.plinth.server.kubeconfigPath, ...args], { encoding: 'utf8', timeout: 60_000 }, (err, stdout, stderr) =>
      resolve({ stdout, stderr, code: err ? ((err as { code?: number }).code ?? 1) : 0 }),
    );
  });
}

/** A non-loopback IPv4 of this machine (a proxyable address), if it has one. */
const hostIP = Object.values(networkInterfaces())
  .flat()
  .find((a) => a && a.family === 'IPv4' && !a.internal)?.address;

const node = (name: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  apiVersion: 'v1',
  kind: 'Node',
  metadata: { name, labels: { 'node-role.kubernetes.io/control-plane': '', 'kubernetes.io/role': 'worker' } },
  spec: { podCIDRs: ['10.244.1.0/24'], providerID: 'kind://n1' },
  status: {
    capacity: { cpu: '4', memory: '8Gi', pods: '110' },
    conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady' }],
    addresses: [
      { type: 'InternalIP', address: '10.0.0.5' },
      { type: 'ExternalIP', address: '203.0.113.9' },
      { type: 'Hostname', address: name },
    ],
    nodeInfo: { kubeletVersion: 'v1.24.17', osImage: 'Debian GNU/Linux 12', kernelVersion: '6.1.0', containerRuntimeVersion: 'containerd://1.7.2', machineID: '', systemUUID: '', bootID: '', kubeProxyVersion: '', operatingSystem: 'linux', architecture: 'amd64' },
  },
  ...extra,
});

describe('nodes', () => {
  it('are in discovery: cluster-scoped, no, proxy (NodeProxyOptions) and status', async () => {
    const all = (await env.plinth.client.get('/api/v1')).body.resources as Array<Record<string, unknown>>;
    const main = all.find((r) => r['name'] === 'nodes')!;
    assert.deepEqual([main['namespaced'], main['shortNames']], [false, ['no']]);
    const proxy = all.find((r) => r['name'] === 'nodes/proxy')!;
    assert.deepEqual([proxy['kind'], proxy['verbs']], ['NodeProxyOptions', ['create', 'delete', 'get', 'patch', 'update']]);
    assert.ok(all.some((r) => r['name'] === 'nodes/status'));
  });

  it('keep the status given on create (allocatable defaulted from capacity), and drop a new configSource', async () => {
    const res = await env.plinth.client.post(NODES, node('n1', { spec: { podCIDRs: ['10.244.1.0/24'], providerID: 'kind://n1', configSource: { configMap: { namespace: 'kube-system', name: 'c', kubeletConfigKey: 'k' } } } }));
    expectCode(res, 201);
    assert.equal(res.body.status.conditions[0].type, 'Ready');
    assert.deepEqual(res.body.status.allocatable, { cpu: '4', memory: '8Gi', pods: '110' });
    assert.equal(res.body.spec.configSource, undefined);
  });

  it('ignore status on update and spec on /status', async () => {
    const cur = (await env.plinth.client.get(`${NODES}/n1`)).body;
    const upd = await env.plinth.client.put(`${NODES}/n1`, { ...cur, status: { ...cur.status, conditions: [] } });
    expectCode(upd, 200);
    assert.equal(upd.body.status.conditions.length, 1);
    const st = await env.plinth.client.put(`${NODES}/n1/status`, { ...upd.body, spec: { ...upd.body.spec, unschedulable: true }, status: { ...upd.body.status, conditions: [{ type: 'Ready', status: 'False' }] } });
    expectCode(st, 200);
    assert.equal(st.body.spec.unschedulable, undefined);
    assert.equal(st.body.status.conditions[0].status, 'False');
    // Back to Ready for the columns below.
    const back = await env.plinth.client.put(`${NODES}/n1/status`, { ...st.body, status: { ...st.body.status, conditions: [{ type: 'Ready', status: 'True' }] } });
    expectCode(back, 200);
  });

  it("refuse changes of podCIDRs and providerID once set, and bad taints, with kube's causes", async () => {
    const cur = (await env.plinth.client.get(`${NODES}/n1`)).body;
    const res = await env.plinth.client.put(`${NODES}/n1`, {
      ...cur,
      spec: { podCIDRs: ['10.244.2.0/24'], providerID: 'kind://other', taints: [{ key: 'a', effect: 'Sometimes' }] },
    });
    expectStatus(res, 422, 'Invalid', /^Node "n1" is invalid: \[/);
    assert.deepEqual(causeFields(res), ['metadata.taints[0].effect', 'spec.podCIDRs', 'spec.providerID', 'metadata.taints[0].effect']);
    assert.match(res.body.message, /spec\.podCIDRs: Forbidden: node updates may not change podCIDR except from "" to valid/);
    assert.match(res.body.message, /spec\.providerID: Forbidden: node updates may not change providerID except from "" to valid/);
  });

  it('cordon and uncordon with kubectl, and select by spec.unschedulable', async () => {
    await env.plinth.client.post(NODES, node('n2'));
    const cordon = await kubectl('cordon', 'n1');
    assert.equal(cordon.code, 0, cordon.stderr);
    assert.match(cordon.stdout, /^node\/n1 cordoned$/m);
    assert.equal((await env.plinth.client.get(`${NODES}/n1`)).body.spec.unschedulable, true);
    const names = async (sel: string): Promise<string[]> => (await env.plinth.client.get(`${NODES}?fieldSelector=${encodeURIComponent(sel)}`)).body.items.map((i: { metadata: { name: string } }) => i.metadata.name);
    assert.deepEqual(await names('spec.unschedulable=true'), ['n1']);
    assert.deepEqual(await names('spec.unschedulable=false'), ['n2']);
    assert.deepEqual(await names('metadata.name=n2'), ['n2']);
    expectStatus(await env.plinth.client.get(`${NODES}?fieldSelector=metadata.namespace%3Dx`), 400, 'BadRequest', 'field label not supported: metadata.namespace');

    const out = (await kubectl('get', 'nodes', '-o', 'wide')).stdout.trimEnd().split('\n');
    assert.match(out[0]!, /^NAME\s+STATUS\s+ROLES\s+AGE\s+VERSION\s+INTERNAL-IP\s+EXTERNAL-IP\s+OS-IMAGE\s+KERNEL-VERSION\s+CONTAINER-RUNTIME$/);
    assert.match(out[1]!, /^n1\s+Ready,SchedulingDisabled\s+control-plane,worker\s+\S+\s+v1\.24\.17\s+10\.0\.0\.5\s+203\.0\.113\.9\s+Debian GNU\/Linux 12\s+6\.1\.0\s+containerd:\/\/1\.7\.2$/);

    const uncordon = await kubectl('uncordon', 'n1');
    assert.equal(uncordon.code, 0, uncordon.stderr);
    assert.match(uncordon.stdout, /^node\/n1 uncordoned$/m);
    assert.notEqual((await env.plinth.client.get(`${NODES}/n1`)).body.spec.unschedulable, true);
  });

  it('round-trip Protobuf', async () => {
    const pb = await env.plinth.client.get(`${NODES}/n1`, { headers: { accept: 'application/vnd.kubernetes.protobuf' } });
    expectCode(pb, 200);
    const decoded = decodeProtobuf(pb.raw) as { kind: string; spec: { podCIDRs: string[] }; status: { capacity: Record<string, string> } };
    assert.equal(decoded.kind, 'Node');
    assert.deepEqual(decoded.spec.podCIDRs, ['10.244.1.0/24']);
    assert.equal(decoded.status.capacity['memory'], '8Gi');
  });

  describe('proxy', () => {
    it('answers kube\'s errors for a missing node, no usable address and a non-proxyable one', async () => {
      expectStatus(await env.plinth.client.get(`${NODES}/ghost/proxy/healthz`), 404, 'NotFound', 'nodes "ghost" not found');
      expectStatus(await env.plinth.client.get(`${NODES}/a:b:c:d/proxy/`), 400, 'BadRequest', 'invalid node request "a:b:c:d"');
      await env.plinth.client.post(NODES, { apiVersion: 'v1', kind: 'Node', metadata: { name: 'bare' } });
      const bare = await env.plinth.client.get(`${NODES}/bare/proxy/healthz`);
      expectCode(bare, 500);
      assert.equal(bare.body.message, 'no preferred addresses found; known addresses: []');
      await env.plinth.client.post(NODES, { apiVersion: 'v1', kind: 'Node', metadata: { name: 'local' }, status: { addresses: [{ type: 'InternalIP', address: '127.0.0.1' }] } });
      expectStatus(await env.plinth.client.get(`${NODES}/local/proxy/healthz`), 400, 'BadRequest', 'address not allowed');
    });

    it('proxies to the address and port, without the client\'s Authorization', { skip: hostIP === undefined && 'no non-loopback address' }, async () => {
      let seen: { url?: string; headers?: IncomingHttpHeaders } = {};
      const kubelet = createServer((req, res) => {
        seen = { url: req.url!, headers: req.headers };
        res.setHeader('content-type', 'text/plain');
        res.end('ok from kubelet');
      });
      await new Promise<void>((r) => kubelet.listen(0, hostIP, r));
      after(() => kubelet.close());
      const port = (kubelet.address() as AddressInfo).port;
      await env.plinth.client.post(NODES, { apiVersion: 'v1', kind: 'Node', metadata: { name: 'real' }, status: { addresses: [{ type: 'InternalIP', address: hostIP }] } });
      const res = await env.plinth.client.request('GET', `${NODES}/real:${port}/proxy/stats/summary?only=cpu`, { headers: { accept: '*/*' } });
      expectCode(res, 200);
      assert.equal(res.raw.toString(), 'ok from kubelet');
      assert.equal(seen.url, '/stats/summary?only=cpu');
      assert.equal(seen.headers?.authorization, undefined, 'the client credential stays at the API server');

      // The kubelet port (10250 by default) with nothing listening: kube's 503.
      const refused = await env.plinth.client.get(`${NODES}/real/proxy/healthz`);
      expectStatus(refused, 503, 'ServiceUnavailable', `error trying to reach service: dial tcp ${hostIP}:10250: connect: connection refused`);
    });
  });
});
