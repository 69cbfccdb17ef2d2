/**
 * discovery.k8s.io EndpointSlices on a real server: v1 and the deprecated v1beta1 over one storage
 * version (round trips both ways with the topology ↔ nodeName/zone/deprecatedTopology rules,
 * deprecatedTopology not writable through v1, kube's Warning with its replacement), defaults,
 * validation causes and the immutable address type, the generation, kubectl's columns, and the
 * `kubernetes` EndpointSlice the apiserver keeps beside the `kubernetes` Endpoints.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { eventually, kubectlPath, usePlinth } from './harness.js';
import { causeFields, expectCode, expectStatus } from './assertions.js';
import { parseExposition, samplesOf } from './metrics-parser.js';
import { decodeProtobuf } from '@plinth/apiserver';

const env = usePlinth();
const V1 = '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices';
const V1BETA1 = '/apis/discovery.k8s.io/v1beta1/namespaces/default/endpointslices';
const WARNING = '299 - "discovery.k8s.io/v1beta1 EndpointSlice is deprecated in v1.21+, unavailable in v1.25+; use discovery.k8s.io/v1 EndpointSlice"';

const slice = (version: string, name: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: `discovery.k8s.io/${version}`,
  kind: 'EndpointSlice',
  metadata: { name, labels: { 'kubernetes.io/service-name': 'web' } },
  addressType: 'IPv4',
  endpoints: [{ addresses: ['10.1.0.1'], conditions: { ready: true } }],
  ports: [{ name: 'http', port: 80 }],
  ...extra,
});

function kubectl(...args: string[]): Promise<string> {
  return new Promise((resolve, reject) =>
    execFile(kubectlPath(), ['--kubeconfig', env.plinth.server.kubeconfigPath, ...args], { encoding: 'utf8', timeout: 60_000 }, (err, stdout, stderr) =>
      err ? reject(new Error(`kubectl ${args.join(' ')}: ${stderr}`)) : resolve(stdout),
    ),
  );
}

describe('endpointslices', () => {
  it('v1beta1 topology becomes nodeName, zone and deprecatedTopology in v1, and comes back the same (kube\'s Warning on v1beta1)', async () => {
    const endpoints = [
      { addresses: ['10.1.0.1'], conditions: { ready: true }, nodeName: 'node-a', topology: { 'kubernetes.io/hostname': 'node-a', 'topology.kubernetes.io/zone': 'z1', rack: 'r1' } },
      // v1beta1 may name a host in topology that differs from nodeName: both are kept.
      { addresses: ['10.1.0.2'], nodeName: 'node-b', topology: { 'kubernetes.io/hostname': 'other' } },
      { addresses: ['10.1.0.3'], topology: { 'kubernetes.io/hostname': 'node-c' }, hints: { forZones: [{ name: 'z1' }] } },
    ];
    const created = await env.plinth.client.post(V1BETA1, slice('v1beta1', 'beta', { endpoints }));
    expectCode(created, 201);
    assert.equal(created.headers['warning'], WARNING);
    assert.deepEqual(created.body.ports, [{ name: 'http', port: 80, protocol: 'TCP' }]);
    const v1 = (await env.plinth.client.get(`${V1}/beta`)).body;
    assert.equal(v1.apiVersion, 'discovery.k8s.io/v1');
    assert.equal(v1.metadata.generation, 1);
    assert.deepEqual(v1.endpoints, [
      { addresses: ['10.1.0.1'], conditions: { ready: true }, nodeName: 'node-a', zone: 'z1', deprecatedTopology: { rack: 'r1' } },
      { addresses: ['10.1.0.2'], conditions: {}, nodeName: 'node-b', deprecatedTopology: { 'kubernetes.io/hostname': 'other' } },
      { addresses: ['10.1.0.3'], conditions: {}, deprecatedTopology: { 'kubernetes.io/hostname': 'node-c' }, hints: { forZones: [{ name: 'z1' }] } },
    ]);
    const back = (await env.plinth.client.get(`${V1BETA1}/beta`)).body;
    assert.deepEqual(back.endpoints, endpoints.map((e) => ({ conditions: {}, ...e })));
    assert.equal(back.metadata.resourceVersion, v1.metadata.resourceVersion);
  });

  it('serves both versions as Protobuf (the pinned schema\'s messages); v1beta1 requests set kube\'s deprecated-API gauge', async () => {
    const accept = { accept: 'application/vnd.kubernetes.protobuf' };
    const v1 = await env.plinth.client.get(`${V1}/beta`, { headers: accept });
    expectCode(v1, 200);
    const one = decodeProtobuf(v1.raw) as { kind: string; endpoints: Array<Record<string, unknown>> };
    assert.deepEqual([one.kind, one.endpoints[0]!['zone'], one.endpoints[0]!['deprecatedTopology']], ['EndpointSlice', 'z1', { rack: 'r1' }]);
    const beta = await env.plinth.client.get(`${V1BETA1}/beta`, { headers: accept });
    expectCode(beta, 200);
    const b = decodeProtobuf(beta.raw) as { apiVersion: string; endpoints: Array<Record<string, unknown>> };
    assert.deepEqual([b.apiVersion, b.endpoints[0]!['topology']], ['discovery.k8s.io/v1beta1', { 'kubernetes.io/hostname': 'node-a', 'topology.kubernetes.io/zone': 'z1', rack: 'r1' }]);
    const m = parseExposition((await env.plinth.client.get('/metrics')).raw.toString());
    assert.deepEqual(samplesOf(m, 'apiserver_requested_deprecated_apis').filter((x) => x.labels['group'] === 'discovery.k8s.io').map((x) => x.labels), [
      { group: 'discovery.k8s.io', version: 'v1beta1', resource: 'endpointslices', subresource: '', removed_release: '1.25' },
    ]);
  });

  it('v1 writes cannot set deprecatedTopology; a v1 update keeps the node of a v1beta1 host name; v1 round-trips through v1beta1', async () => {
    const created = await env.plinth.client.post(V1, slice('v1', 'one', { endpoints: [{ addresses: ['10.1.0.1'], nodeName: 'n1', zone: 'z2', deprecatedTopology: { rack: 'r1' } }] }));
    expectCode(created, 201);
    assert.equal(created.headers['warning'], undefined);
    assert.deepEqual(created.body.endpoints, [{ addresses: ['10.1.0.1'], conditions: {}, nodeName: 'n1', zone: 'z2' }]);
    const beta = (await env.plinth.client.get(`${V1BETA1}/one`)).body;
    assert.deepEqual(beta.endpoints, [{ addresses: ['10.1.0.1'], conditions: {}, nodeName: 'n1', topology: { 'topology.kubernetes.io/zone': 'z2', 'kubernetes.io/hostname': 'n1' } }]);
    // Written back through v1beta1 unchanged: the v1 object is the same.
    expectCode(await env.plinth.client.put(`${V1BETA1}/one`, beta), 200);
    const again = (await env.plinth.client.get(`${V1}/one`)).body;
    assert.deepEqual(again.endpoints, created.body.endpoints);
    assert.equal(again.metadata.generation, 1);

    // A slice written through v1beta1 with the host only in topology, then updated through v1.
    expectCode(await env.plinth.client.post(V1BETA1, slice('v1beta1', 'legacy', { endpoints: [{ addresses: ['10.1.0.5'], topology: { 'kubernetes.io/hostname': 'n5', rack: 'r' } }] })), 201);
    const legacy = (await env.plinth.client.get(`${V1}/legacy`)).body;
    legacy.endpoints[0].conditions = { ready: false };
    const upd = await env.plinth.client.put(`${V1}/legacy`, legacy);
    expectCode(upd, 200);
    assert.deepEqual(upd.body.endpoints, [{ addresses: ['10.1.0.5'], conditions: { ready: false }, nodeName: 'n5' }]);
    assert.equal(upd.body.metadata.generation, 2);
    // A label change bumps the generation too; an unchanged write does not.
    expectCode(await env.plinth.client.put(`${V1}/legacy`, upd.body), 200);
    assert.equal((await env.plinth.client.get(`${V1}/legacy`)).body.metadata.generation, 2);
    const labelled = { ...upd.body, metadata: { ...upd.body.metadata, resourceVersion: undefined, labels: { x: 'y' } } };
    assert.equal((await env.plinth.client.put(`${V1}/legacy`, labelled)).body.metadata.generation, 3);
  });

  it('a v1 write is seen by a v1beta1 watch, converted', async () => {
    const c = env.plinth.client;
    const rv = (await c.get(V1)).body.metadata.resourceVersion;
    const watch = c.watch(`${V1BETA1}?watch=1&resourceVersion=${rv}`, (evs) => evs.some((e) => e.object.metadata.name === 'watched'));
    expectCode(await c.post(V1, slice('v1', 'watched', { endpoints: [{ addresses: ['10.1.0.7'], nodeName: 'n7', zone: 'z7' }] })), 201);
    const ev = (await watch).events.find((e) => e.object.metadata.name === 'watched');
    assert.deepEqual([ev.type, ev.object.apiVersion], ['ADDED', 'discovery.k8s.io/v1beta1']);
    assert.deepEqual(ev.object.endpoints[0].topology, { 'kubernetes.io/hostname': 'n7', 'topology.kubernetes.io/zone': 'z7' });
  });

  it('validates as kube: address formats per type, limits, port names, hints; the address type is immutable', async () => {
    const bad = await env.plinth.client.post(V1, slice('v1', 'bad', {
      endpoints: [
        { addresses: ['10.0.0.300', '127.0.0.1', 'fe80::1'], nodeName: 'Bad_Node', hostname: 'a.b', hints: { forZones: [{ name: 'z' }, { name: 'z' }] } },
        { addresses: [] },
      ],
      ports: [{ name: 'http' }, { name: 'http' }, { name: 'Bad_Name', protocol: 'ICMP', appProtocol: 'a/b/c' }, {}],
    }));
    expectStatus(bad, 422, 'Invalid');
    assert.deepEqual(causeFields(bad), [
      'endpoints[0].addresses[0]', 'endpoints[0].addresses[0]',
      'endpoints[0].addresses[1]',
      'endpoints[0].addresses[2]', 'endpoints[0].addresses[2]',
      'endpoints[0].nodeName', 'endpoints[0].hostname', 'endpoints[0].hints.forZones[1].name',
      'endpoints[1].addresses',
      'ports[1].name', 'ports[2].name', 'ports[2].protocol', 'ports[2].appProtocol',
    ]);
    const msgs = bad.body.details.causes.map((c: { message: string }) => c.message);
    assert.equal(msgs[0], 'Invalid value: "10.0.0.300": must be a valid IPv4 address');
    assert.equal(msgs[2], 'Invalid value: "127.0.0.1": may not be in the loopback range (127.0.0.0/8, ::1/128)');
    assert.equal(msgs[3], 'Invalid value: "fe80::1": must be a valid IPv4 address');
    assert.equal(msgs[8], 'Required value: must contain at least 1 address');
    assert.equal(msgs[9], 'Duplicate value: "http"');
    assert.equal(msgs[11], 'Unsupported value: "ICMP": supported values: "SCTP", "TCP", "UDP"');

    expectStatus(await env.plinth.client.post(V1, slice('v1', 'type', { addressType: 'IP' })), 422, 'Invalid',
      'EndpointSlice.discovery.k8s.io "type" is invalid: addressType: Unsupported value: "IP": supported values: "FQDN", "IPv4", "IPv6"');
    expectStatus(await env.plinth.client.post(V1, slice('v1', 'fqdn', { addressType: 'FQDN', endpoints: [{ addresses: ['example.com', 'single'] }] })), 422, 'Invalid',
      'EndpointSlice.discovery.k8s.io "fqdn" is invalid: endpoints[0].addresses[1]: Invalid value: "single": should be a domain with at least two segments separated by dots');
    const many = Array.from({ length: 101 }, (_, i) => `10.2.${Math.floor(i / 250)}.${(i % 250) + 1}`);
    expectStatus(await env.plinth.client.post(V1, slice('v1', 'many', { endpoints: [{ addresses: many }] })), 422, 'Invalid',
      'EndpointSlice.discovery.k8s.io "many" is invalid: endpoints[0].addresses: Too many: 101: must have at most 100 items');
    // v1beta1 topology errors name the internal field, as kube's do.
    expectStatus(await env.plinth.client.post(V1BETA1, slice('v1beta1', 'topo', { endpoints: [{ addresses: ['10.1.0.1'], topology: { 'a/b/c': 'x' } }] })), 422, 'Invalid',
      /^EndpointSlice\.discovery\.k8s\.io "topo" is invalid: endpoints\[0\]\.deprecatedTopology: Invalid value: "a\/b\/c"/);

    expectCode(await env.plinth.client.post(V1, slice('v1', 'v6', { addressType: 'IPv6', endpoints: [{ addresses: ['2001:db8::1'] }] })), 201);
    const v6 = (await env.plinth.client.get(`${V1}/v6`)).body;
    expectStatus(await env.plinth.client.put(`${V1}/v6`, { ...v6, addressType: 'IPv4', endpoints: [{ addresses: ['10.1.0.9'] }] }), 422, 'Invalid',
      'EndpointSlice.discovery.k8s.io "v6" is invalid: addressType: Invalid value: "IPv4": field is immutable');
  });

  it('kubectl get endpointslices prints NAME ADDRESSTYPE PORTS ENDPOINTS AGE as kube', async () => {
    const endpoints = [{ addresses: ['10.3.0.1', '10.3.0.2'] }, { addresses: ['10.3.0.3', '10.3.0.4', '10.3.0.5'] }];
    const ports = [{ port: 1 }, { name: 'b', port: 2 }, { name: 'c' }, { name: 'd', port: 4 }];
    expectCode(await env.plinth.client.post(V1, slice('v1', 'wide', { endpoints, ports: ports.map((p) => ({ ...p, name: p.name ?? 'a' })) })), 201);
    expectCode(await env.plinth.client.post(V1, slice('v1', 'empty', { endpoints: [], ports: [] })), 201);
    const out = await kubectl('get', 'endpointslices', 'wide', 'empty', '-n', 'default');
    const lines = out.trim().split('\n').map((l) => l.trim().split(/\s{2,}/));
    assert.deepEqual(lines[0], ['NAME', 'ADDRESSTYPE', 'PORTS', 'ENDPOINTS', 'AGE']);
    assert.deepEqual(lines[1]!.slice(0, 4), ['wide', 'IPv4', '1,2,c + 1 more...', '10.3.0.1,10.3.0.2,10.3.0.3 + 2 more...']);
    assert.deepEqual(lines[2]!.slice(0, 4), ['empty', 'IPv4', '<unset>', '<unset>']);
  });

  it('the apiserver keeps the kubernetes EndpointSlice beside the kubernetes Endpoints', async () => {
    const got = await eventually(async () => {
      const r = await env.plinth.client.get(`${V1}/kubernetes`);
      return r.status === 200 ? r.body : undefined;
    }, 20_000, 'the kubernetes EndpointSlice');
    const ep = (await env.plinth.client.get('/api/v1/namespaces/default/endpoints/kubernetes')).body;
    const subset = ep.subsets[0];
    assert.deepEqual(got.metadata.labels, { 'kubernetes.io/service-name': 'kubernetes' });
    assert.equal(got.addressType, subset.addresses[0].ip.includes(':') ? 'IPv6' : 'IPv4');
    assert.deepEqual(got.endpoints, subset.addresses.map((a: { ip: string }) => ({ addresses: [a.ip], conditions: { ready: true } })));
    assert.deepEqual(got.ports, subset.ports);
    const list = (await env.plinth.client.get('/apis/discovery.k8s.io/v1/endpointslices?labelSelector=kubernetes.io%2Fservice-name%3Dkubernetes')).body;
    assert.deepEqual(list.items.map((i: { metadata: { namespace: string; name: string } }) => `${i.metadata.namespace}/${i.metadata.name}`), ['default/kubernetes']);
  });
});
