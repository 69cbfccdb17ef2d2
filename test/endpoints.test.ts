/**
 * core/v1 Endpoints on a real server, as kube-apiserver 1.24 serves them: discovery (`ep`), ports
 * defaulted to TCP, kube's validation causes, create on update, kubectl's ENDPOINTS column
 * (kube's formatEndpoints: at most three, then `+ N more...`), field selectors and Protobuf.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { decodeProtobuf } from '@plinth/apiserver';
import { kubectlPath, usePlinth } from './harness.js';
import { causeFields, expectCode, expectStatus } from './assertions.js';

const env = usePlinth();
const NS = 'default';
const EP = `/api/v1/namespaces/${NS}/endpoints`;

function kubectl(...args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(kubectlPath(), ['--kubeconfig', env.plinth.server.kubeconfigPath, ...args], { encoding: 'utf8', timeout: 60_000 }, (err, stdout, stderr) =>
      err ? reject(new Error(`kubectl ${args.join(' ')}: ${stderr}`)) : resolve(stdout),
    );
  });
}

const endpoints = (name: string, subsets: unknown[]): Record<string, unknown> => ({ apiVersion: 'v1', kind: 'Endpoints', metadata: { name }, subsets });

describe('endpoints', () => {
  it('are served in discovery as kube serves them', async () => {
    const res = await env.plinth.client.get('/api/v1');
    const r = (res.body.resources as Array<Record<string, unknown>>).find((x) => x['name'] === 'endpoints')!;
    assert.deepEqual(r['shortNames'], ['ep']);
    assert.equal(r['kind'], 'Endpoints');
    assert.equal(r['categories'], undefined);
    assert.deepEqual(r['verbs'], ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch']);
  });

  it('default port protocols to TCP and are created by a PUT (create on update)', async () => {
    const created = await env.plinth.client.post(EP, endpoints('web', [{ addresses: [{ ip: '192.0.2.1' }, { ip: '192.0.2.2' }], ports: [{ name: 'http', port: 80 }, { name: 'https', port: 443 }] }]));
    expectCode(created, 201);
    assert.deepEqual(created.body.subsets[0].ports, [{ name: 'http', port: 80, protocol: 'TCP' }, { name: 'https', port: 443, protocol: 'TCP' }]);
    const put = await env.plinth.client.put(`${EP}/by-put`, endpoints('by-put', [{ addresses: [{ ip: '2001:db8::1' }], ports: [{ port: 53, protocol: 'UDP' }] }]));
    expectCode(put, 201);
  });

  it("refuse bad subsets with kube's causes", async () => {
    const res = await env.plinth.client.post(
      EP,
      endpoints('bad', [
        { ports: [{ port: 80 }] },
        { addresses: [{ ip: '127.0.0.1' }, { ip: 'nope', hostname: 'Not_A_Label' }], ports: [{ name: 'a', port: 70000 }, { port: 1, protocol: 'ICMP' }] },
      ]),
    );
    expectStatus(res, 422, 'Invalid', /^Endpoints "bad" is invalid: \[subsets\[0\]: Required value: must specify `addresses` or `notReadyAddresses`, subsets\[1\]\.addresses\[0\]\.ip: Invalid value: "127\.0\.0\.1": may not be in the loopback range \(127\.0\.0\.0\/8, ::1\/128\), /);
    assert.deepEqual(causeFields(res), [
      'subsets[0]',
      'subsets[1].addresses[0].ip',
      'subsets[1].addresses[1].ip',
      'subsets[1].addresses[1].hostname',
      'subsets[1].addresses[1].ip',
      'subsets[1].ports[0].port',
      'subsets[1].ports[1].name',
      'subsets[1].ports[1].protocol',
    ]);
  });

  it("print kube's ENDPOINTS column: three at most, then + N more", async () => {
    const many = [{ addresses: ['192.0.2.1', '192.0.2.2', '192.0.2.3', '192.0.2.4'].map((ip) => ({ ip })), ports: [{ port: 8080 }] }];
    expectCode(await env.plinth.client.post(EP, endpoints('many', many)), 201);
    expectCode(await env.plinth.client.post(EP, endpoints('empty', [])), 201);
    expectCode(await env.plinth.client.post(EP, endpoints('noports', [{ addresses: [{ ip: '192.0.2.9' }] }])), 201);
    const out = (await kubectl('get', 'ep', 'many', 'empty', 'noports', 'web', '-n', NS)).trimEnd().split('\n');
    assert.match(out[0]!, /^NAME\s+ENDPOINTS\s+AGE$/);
    assert.match(out[1]!, /^many\s+192\.0\.2\.1:8080,192\.0\.2\.2:8080,192\.0\.2\.3:8080 \+ 1 more\.\.\.\s+\d+s$/);
    assert.match(out[2]!, /^empty\s+<none>\s+\d+s$/);
    assert.match(out[3]!, /^noports\s+192\.0\.2\.9\s+\d+s$/);
    assert.match(out[4]!, /^web\s+192\.0\.2\.1:80,192\.0\.2\.2:80,192\.0\.2\.1:443 \+ 1 more\.\.\.\s+\d+s$/);
  });

  it('list with the default field selectors only, and are served as Protobuf', async () => {
    const byName = await env.plinth.client.get(`${EP}?fieldSelector=metadata.name%3Dweb`);
    expectCode(byName, 200);
    assert.deepEqual(byName.body.items.map((i: { metadata: { name: string } }) => i.metadata.name), ['web']);
    expectStatus(await env.plinth.client.get(`${EP}?fieldSelector=subsets.x%3D1`), 400, 'BadRequest', '"subsets.x" is not a known field selector: only "metadata.name", "metadata.namespace"');
    const pb = await env.plinth.client.get(`${EP}/web`, { headers: { accept: 'application/vnd.kubernetes.protobuf' } });
    expectCode(pb, 200);
    const decoded = decodeProtobuf(pb.raw) as { kind: string; subsets: Array<{ addresses: Array<{ ip: string }>; ports: Array<{ port: number; protocol: string }> }> };
    assert.equal(decoded.kind, 'Endpoints');
    assert.deepEqual(decoded.subsets[0]!.addresses.map((a) => a.ip), ['192.0.2.1', '192.0.2.2']);
    assert.deepEqual(decoded.subsets[0]!.ports[1], { name: 'https', port: 443, protocol: 'TCP' });
  });
});
