/**
 * core/v1 Services on a real server, as kube-apiserver 1.24 serves them: discovery, defaults,
 * cluster IPs and node ports allocated in etcd (requested values honoured, duplicates 422 with
 * kube's messages, released on delete and on type change, nothing taken by a dry run or a failed
 * create), clusterIP immutable, headless and ExternalName, status isolation, kubectl's columns,
 * field selectors, Protobuf, the proxy's answers, the `kubernetes` Service and its Endpoints,
 * allocation shared by two replicas and kept across a restart, and kubectl, client-node and the
 * Python client writing Services.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { networkInterfaces } from 'node:os';
import { KubeConfig, CoreV1Api } from '@kubernetes/client-node';
import { decodeProtobuf } from '@plinth/apiserver';
import { eventually, kubectlPath, startInProcess, usePlinth } from './harness.js';
import { causeFields, expectCode, expectStatus } from './assertions.js';

const env = usePlinth();
const NS = 'default';
const SVC = `/api/v1/namespaces/${NS}/services`;

function kubectl(...args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(kubectlPath(), ['--kubeconfig', env.plinth.server.kubeconfigPath, ...args], { encoding: 'utf8', timeout: 60_000 }, (err, stdout, stderr) =>
      err ? reject(new Error(`kubectl ${args.join(' ')}: ${stderr}`)) : resolve(stdout),
    );
  });
}

const service = (name: string, spec: Record<string, unknown> = {}, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name },
  spec: { selector: { app: name }, ports: [{ port: 80 }], ...spec },
  ...extra,
});

/**
 * A cluster IP and a node port no Service holds now. Other Services of this file get theirs at
 * random (kube's allocators scan from a random offset), so a fixed value could be taken already.
 */
async function unused(): Promise<{ ip: string; nodePort: number }> {
  const list = await env.plinth.client.get('/api/v1/services');
  const ips = new Set<string>();
  const ports = new Set<number>();
  for (const s of list.body.items as Array<{ spec: { clusterIPs?: string[]; ports?: Array<{ nodePort?: number }> } }>) {
    for (const ip of s.spec.clusterIPs ?? []) ips.add(ip);
    for (const p of s.spec.ports ?? []) if (p.nodePort) ports.add(p.nodePort);
  }
  let host = 50;
  while (ips.has(`10.0.0.${host}`)) host++;
  let nodePort = 30170;
  while (ports.has(nodePort)) nodePort++;
  return { ip: `10.0.0.${host}`, nodePort };
}

/** The node port the `np` Service asks for; later tests read it back. */
let requestedNodePort = 0;

async function create(body: Record<string, unknown>, query = ''): Promise<Record<string, any>> {
  const res = await env.plinth.client.post(`${SVC}${query}`, body);
  expectCode(res, 201, JSON.stringify(res.body));
  return res.body;
}

async function remove(name: string): Promise<void> {
  expectCode(await env.plinth.client.delete(`${SVC}/${name}`), 200);
}

describe('services', () => {
  it('are served in discovery as kube serves them, with status and proxy', async () => {
    const res = await env.plinth.client.get('/api/v1');
    const byName = new Map((res.body.resources as Array<Record<string, any>>).map((r) => [r['name'], r]));
    const svc = byName.get('services')!;
    assert.deepEqual(svc['shortNames'], ['svc']);
    assert.deepEqual(svc['categories'], ['all']);
    assert.deepEqual(svc['verbs'], ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch']);
    assert.deepEqual(byName.get('services/status')!['verbs'], ['get', 'patch', 'update']);
    assert.deepEqual(byName.get('services/proxy')!['verbs'], ['create', 'delete', 'get', 'patch', 'update']);
  });

  it("are defaulted and get a cluster IP of the range, with kube's family fields and an empty status", async () => {
    const created = await create(service('web', { ports: [{ name: 'http', port: 80, targetPort: 'http' }, { name: 'm', port: 9090 }] }));
    const spec = created['spec'];
    assert.match(spec.clusterIP, /^10\.0\.0\.\d+$/);
    assert.notEqual(spec.clusterIP, '10.0.0.1', 'the first address is the kubernetes Service');
    assert.deepEqual(spec.clusterIPs, [spec.clusterIP]);
    assert.equal(spec.type, 'ClusterIP');
    assert.equal(spec.sessionAffinity, 'None');
    assert.deepEqual(spec.ipFamilies, ['IPv4']);
    assert.equal(spec.ipFamilyPolicy, 'SingleStack');
    assert.equal(spec.internalTrafficPolicy, 'Cluster');
    assert.deepEqual(spec.ports, [
      { name: 'http', protocol: 'TCP', port: 80, targetPort: 'http' },
      { name: 'm', protocol: 'TCP', port: 9090, targetPort: 9090 },
    ]);
    assert.deepEqual(created['status'], { loadBalancer: {} });
  });

  it("refuse a bad Service with kube's causes and keep no allocation of it", async () => {
    const { ip } = await unused();
    const bad = service('Bad_name', { clusterIP: ip, sessionAffinity: 'Sometimes', ports: [{ port: 0 }] });
    const res = await env.plinth.client.post(SVC, bad);
    expectStatus(res, 422, 'Invalid', /^Service "Bad_name" is invalid: \[metadata\.name: Invalid value: "Bad_name": a DNS-1035 label must consist of/);
    assert.deepEqual(causeFields(res), ['metadata.name', 'spec.ports[0].port', 'spec.ports[0].targetPort', 'spec.sessionAffinity']);
    // The IP the refused create asked for was given back.
    const ok = await create(service('after-bad', { clusterIP: ip }));
    assert.equal(ok['spec'].clusterIP, ip);
  });

  it("honour a requested IP, refuse a taken one with kube's message, and release it on delete", async () => {
    const { ip } = await unused();
    const a = await create(service('ip-a', { clusterIP: ip }));
    assert.deepEqual(a['spec'].clusterIPs, [ip]);
    const dup = await env.plinth.client.post(SVC, service('ip-b', { clusterIP: ip }));
    expectStatus(dup, 422, 'Invalid', `Service "ip-b" is invalid: spec.clusterIPs: Invalid value: []string{"${ip}"}: failed to allocate IP ${ip}: provided IP is already allocated`);
    const outside = await env.plinth.client.post(SVC, service('ip-c', { clusterIP: '10.1.0.5' }));
    expectStatus(outside, 422, 'Invalid', /the provided IP \(10\.1\.0\.5\) is not in the valid range\. The range of valid IPs is 10\.0\.0\.0\/24$/);
    const deleted = await env.plinth.client.delete(`${SVC}/ip-a`);
    expectCode(deleted, 200);
    assert.equal(deleted.body.kind, 'Service', 'kube answers the deleted Service');
    const b = await create(service('ip-b', { clusterIP: ip }));
    assert.equal(b['spec'].clusterIP, ip);
  });

  it('take nothing on a dry run', async () => {
    const { ip, nodePort } = await unused();
    const dry = await create(service('dry', { type: 'NodePort', clusterIP: ip, ports: [{ port: 80, nodePort }] }), '?dryRun=All');
    assert.equal(dry['spec'].clusterIP, ip);
    expectCode(await env.plinth.client.get(`${SVC}/dry`), 404);
    const real = await create(service('dry', { type: 'NodePort', clusterIP: ip, ports: [{ port: 80, nodePort }] }));
    assert.equal(real['spec'].ports[0].nodePort, nodePort);
    // A dry-run delete gives nothing back either.
    expectCode(await env.plinth.client.delete(`${SVC}/dry?dryRun=All`), 200);
    expectStatus(await env.plinth.client.post(SVC, service('dry2', { clusterIP: ip })), 422, 'Invalid', /provided IP is already allocated/);
    await remove('dry');
  });

  it('keep the cluster IP immutable, and keep it when a PUT leaves it out', async () => {
    const svc = await create(service('immutable'));
    const changed = structuredClone(svc);
    // Another address than the one allocated at random (a 1-in-254 chance it was .99).
    const other = svc['spec'].clusterIP === '10.0.0.99' ? '10.0.0.98' : '10.0.0.99';
    changed['spec'].clusterIP = other;
    changed['spec'].clusterIPs = [other];
    const res = await env.plinth.client.put(`${SVC}/immutable`, changed);
    expectStatus(res, 422, 'Invalid', `Service "immutable" is invalid: spec.clusterIPs[0]: Invalid value: []string{"${other}"}: may not change once set`);
    const omitted = structuredClone(svc);
    delete omitted['spec'].clusterIP;
    delete omitted['spec'].clusterIPs;
    const put = await env.plinth.client.put(`${SVC}/immutable`, omitted);
    expectCode(put, 200);
    assert.equal(put.body.spec.clusterIP, svc['spec'].clusterIP);
  });

  it("allocate node ports in the range, refuse taken or outside ones with kube's messages", async () => {
    // The requested port comes first: kube allocates in order, so a random pick before it could take it.
    requestedNodePort = (await unused()).nodePort;
    const np = await create(service('np', { type: 'NodePort', ports: [{ name: 'b', port: 81, nodePort: requestedNodePort }, { name: 'a', port: 80 }] }));
    const [p0, p1] = np['spec'].ports;
    assert.equal(p0.nodePort, requestedNodePort);
    assert.ok(p1.nodePort >= 30000 && p1.nodePort <= 32767 && p1.nodePort !== requestedNodePort, String(p1.nodePort));
    assert.equal(np['spec'].externalTrafficPolicy, 'Cluster');
    const dup = await env.plinth.client.post(SVC, service('np2', { type: 'NodePort', ports: [{ port: 80, nodePort: requestedNodePort }] }));
    expectStatus(dup, 422, 'Invalid', `Service "np2" is invalid: spec.ports[0].nodePort: Invalid value: ${requestedNodePort}: provided port is already allocated`);
    const outside = await env.plinth.client.post(SVC, service('np2', { type: 'NodePort', ports: [{ port: 80, nodePort: 29999 }] }));
    expectStatus(outside, 422, 'Invalid', 'Service "np2" is invalid: spec.ports[0].nodePort: Invalid value: 29999: provided port is not in the valid range. The range of valid ports is 30000-32767');
  });

  it('release node ports and cluster IPs on type changes, and allocate on the way back', async () => {
    const { ip, nodePort } = await unused();
    const np = await create(service('types', { type: 'NodePort', clusterIP: ip, ports: [{ port: 80, nodePort }] }));
    // NodePort → ClusterIP: the node port the user left as it was goes (kube's dropTypeDependentFields).
    const toClusterIP = structuredClone(np);
    toClusterIP['spec'].type = 'ClusterIP';
    const cip = await env.plinth.client.put(`${SVC}/types`, toClusterIP);
    expectCode(cip, 200, JSON.stringify(cip.body));
    assert.equal(cip.body.spec.ports[0].nodePort, undefined);
    assert.equal(cip.body.spec.externalTrafficPolicy, undefined);
    const reuse = await create(service('types-port', { type: 'NodePort', ports: [{ port: 80, nodePort }] }));
    assert.equal(reuse['spec'].ports[0].nodePort, nodePort, 'the released node port is free');
    // ClusterIP → ExternalName: the IP goes back.
    const toExternal = structuredClone(cip.body);
    toExternal.spec.type = 'ExternalName';
    toExternal.spec.externalName = 'db.example.com';
    const ext = await env.plinth.client.put(`${SVC}/types`, toExternal);
    expectCode(ext, 200, JSON.stringify(ext.body));
    assert.equal(ext.body.spec.clusterIP, undefined);
    assert.equal(ext.body.spec.ipFamilies, undefined);
    const ipReuse = await create(service('types-ip', { clusterIP: ip }));
    assert.equal(ipReuse['spec'].clusterIP, ip, 'the released IP is free');
    // ExternalName → LoadBalancer (Local): a new IP, node ports and a health check node port.
    const toLB = structuredClone(ext.body);
    toLB.spec.type = 'LoadBalancer';
    toLB.spec.externalTrafficPolicy = 'Local';
    delete toLB.spec.externalName;
    const lb = await env.plinth.client.put(`${SVC}/types`, toLB);
    expectCode(lb, 200, JSON.stringify(lb.body));
    assert.match(lb.body.spec.clusterIP, /^10\.0\.0\.\d+$/);
    assert.ok(lb.body.spec.ports[0].nodePort >= 30000);
    assert.ok(lb.body.spec.healthCheckNodePort >= 30000);
    assert.equal(lb.body.spec.allocateLoadBalancerNodePorts, true);
    await remove('types');
    await remove('types-port');
    await remove('types-ip');
    // Everything the LoadBalancer held is free again.
    const again = await create(service('types-hc', { type: 'NodePort', clusterIP: lb.body.spec.clusterIP, ports: [{ port: 80, nodePort: lb.body.spec.healthCheckNodePort }] }));
    assert.equal(again['spec'].clusterIP, lb.body.spec.clusterIP);
    await remove('types-hc');
  });

  it('serve headless and ExternalName Services without a cluster IP', async () => {
    const headless = await create(service('headless', { clusterIP: 'None' }));
    assert.deepEqual(headless['spec'].clusterIPs, ['None']);
    assert.deepEqual(headless['spec'].ipFamilies, ['IPv4']);
    assert.equal(headless['spec'].ipFamilyPolicy, 'SingleStack');
    const ext = await create({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'external' }, spec: { type: 'ExternalName', externalName: 'example.com' } });
    assert.equal(ext['spec'].clusterIP, undefined);
    assert.equal(ext['spec'].ipFamilies, undefined);
    const missing = await env.plinth.client.post(SVC, { apiVersion: 'v1', kind: 'Service', metadata: { name: 'ext2' }, spec: { type: 'ExternalName' } });
    expectStatus(missing, 422, 'Invalid', 'Service "ext2" is invalid: spec.externalName: Required value');
  });

  it('keep status out of the main resource and spec out of /status', async () => {
    const lb = await create(service('lb', { type: 'LoadBalancer' }));
    const withStatus = structuredClone(lb);
    withStatus['status'] = { loadBalancer: { ingress: [{ ip: '192.0.2.10' }] } };
    withStatus['metadata'].labels = { changed: 'yes' };
    const put = await env.plinth.client.put(`${SVC}/lb`, withStatus);
    expectCode(put, 200);
    assert.deepEqual(put.body.status, { loadBalancer: {} }, 'the main resource ignores status');
    assert.deepEqual(put.body.metadata.labels, { changed: 'yes' });
    const viaStatus = structuredClone(put.body);
    viaStatus.status = { loadBalancer: { ingress: [{ ip: '192.0.2.10' }] } };
    viaStatus.spec.sessionAffinity = 'ClientIP';
    const st = await env.plinth.client.put(`${SVC}/lb/status`, viaStatus);
    expectCode(st, 200, JSON.stringify(st.body));
    assert.deepEqual(st.body.status, { loadBalancer: { ingress: [{ ip: '192.0.2.10' }] } });
    assert.equal(st.body.spec.sessionAffinity, 'None', '/status ignores spec');
    const badStatus = structuredClone(st.body);
    badStatus.status = { loadBalancer: { ingress: [{ ip: 'nope' }] } };
    expectStatus(await env.plinth.client.put(`${SVC}/lb/status`, badStatus), 422, 'Invalid', 'Service "lb" is invalid: status.loadBalancer.ingress[0].ip: Invalid value: "nope": must be a valid IP address');
  });

  it("print kube's columns in kubectl get, the selector with -o wide", async () => {
    const out = (await kubectl('get', 'svc', 'lb', 'np', 'external', 'headless', '-n', NS)).trimEnd().split('\n');
    assert.match(out[0]!, /^NAME\s+TYPE\s+CLUSTER-IP\s+EXTERNAL-IP\s+PORT\(S\)\s+AGE$/);
    assert.match(out[1]!, /^lb\s+LoadBalancer\s+10\.0\.0\.\d+\s+192\.0\.2\.10\s+80:3\d{4}\/TCP\s+\d+s$/);
    assert.match(out[2]!, new RegExp(`^np\\s+NodePort\\s+10\\.0\\.0\\.\\d+\\s+<none>\\s+81:${requestedNodePort}/TCP,80:3\\d{4}/TCP\\s+\\d+s$`));
    assert.match(out[3]!, /^external\s+ExternalName\s+<none>\s+example\.com\s+<none>\s+\d+s$/);
    assert.match(out[4]!, /^headless\s+ClusterIP\s+None\s+<none>\s+80\/TCP\s+\d+s$/);
    const wide = (await kubectl('get', 'svc', 'headless', '-o', 'wide', '-n', NS)).trimEnd().split('\n');
    assert.match(wide[0]!, /\s+AGE\s+SELECTOR$/);
    assert.match(wide[1]!, /\s+app=headless$/);
  });

  it('list with the default field selectors only, and are served as Protobuf', async () => {
    const byName = await env.plinth.client.get(`${SVC}?fieldSelector=metadata.name%3Dnp`);
    expectCode(byName, 200);
    assert.deepEqual(byName.body.items.map((i: { metadata: { name: string } }) => i.metadata.name), ['np']);
    expectStatus(await env.plinth.client.get(`${SVC}?fieldSelector=spec.type%3DNodePort`), 400, 'BadRequest', '"spec.type" is not a known field selector: only "metadata.name", "metadata.namespace"');
    const pb = await env.plinth.client.get(`${SVC}/np`, { headers: { accept: 'application/vnd.kubernetes.protobuf' } });
    expectCode(pb, 200);
    const decoded = decodeProtobuf(pb.raw) as { kind: string; spec: { ports: Array<{ nodePort: number }>; clusterIPs: string[] } };
    assert.equal(decoded.kind, 'Service');
    assert.equal(decoded.spec.ports[0]!.nodePort, requestedNodePort);
    const json = await env.plinth.client.get(`${SVC}/np`);
    assert.deepEqual(decoded.spec.clusterIPs, json.body.spec.clusterIPs);
  });

  it("answer the proxy as kube does when there is nothing to proxy to", async () => {
    await create(service('px', { ports: [{ name: 'http', port: 80 }] }));
    const noEndpoints = await env.plinth.client.get(`${SVC}/px/proxy/`);
    expectStatus(noEndpoints, 404, 'NotFound', 'endpoints "px" not found');
    const ep = await env.plinth.client.post(`/api/v1/namespaces/${NS}/endpoints`, { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'px' } });
    expectCode(ep, 201);
    expectStatus(await env.plinth.client.get(`${SVC}/px/proxy/`), 503, 'ServiceUnavailable', 'no endpoints available for service "px"');
    // An address that is no pod of the namespace is never proxied to.
    const withAddr = { ...ep.body, subsets: [{ addresses: [{ ip: '192.0.2.55' }], ports: [{ name: 'http', port: 80 }] }] };
    expectCode(await env.plinth.client.put(`/api/v1/namespaces/${NS}/endpoints/px`, withAddr), 200);
    expectStatus(await env.plinth.client.get(`${SVC}/https:px:80/proxy/x`), 503, 'ServiceUnavailable', 'no endpoints available for service "https:px:80"');
    expectStatus(await env.plinth.client.get(`${SVC}/px:81/proxy/`), 503, 'ServiceUnavailable', 'no service port 81 found for service "px"');
    expectStatus(await env.plinth.client.get(`${SVC}/ftp:px:80/proxy/`), 400, 'BadRequest', 'invalid service request "ftp:px:80"');
    expectStatus(await env.plinth.client.get(`${SVC}/nope:80/proxy/`), 404, 'NotFound', 'services "nope" not found');
    // Deleting the Service deletes its Endpoints (kube's afterDelete).
    await remove('px');
    await eventually(async () => (await env.plinth.client.get(`/api/v1/namespaces/${NS}/endpoints/px`)).status === 404, 5000, 'the endpoints deleted');
  });

  it('proxy to a pod endpoint without the client\'s credentials, never following redirects (once pods are served)', async (t) => {
    const discovery = await env.plinth.client.get('/api/v1');
    if (!(discovery.body.resources as Array<{ name: string }>).some((r) => r.name === 'pods/status')) return t.skip('pods are not served yet');
    const hostIP = Object.values(networkInterfaces()).flat().find((a) => a && a.family === 'IPv4' && !a.internal)?.address;
    if (!hostIP) return t.skip('no non-loopback address to run a backend on');
    const seen: Array<{ url: string; auth: string | undefined; fwd: string | undefined }> = [];
    const backend = createServer((req, res) => {
      seen.push({ url: req.url ?? '', auth: req.headers.authorization, fwd: req.headers['x-forwarded-uri'] as string | undefined });
      if (req.url === '/go') {
        res.writeHead(302, { location: '/landing' });
        res.end();
        return;
      }
      if (req.url === '/away') {
        res.writeHead(302, { location: 'https://elsewhere.example.com/' });
        res.end();
        return;
      }
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(`hello ${req.method} ${req.url}`);
    });
    await new Promise<void>((r) => backend.listen(0, hostIP, () => r()));
    try {
      const port = (backend.address() as AddressInfo).port;
      const pod = await env.plinth.client.post(`/api/v1/namespaces/${NS}/pods`, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'backend' }, spec: { containers: [{ name: 'c', image: 'nginx' }] } });
      expectCode(pod, 201, JSON.stringify(pod.body));
      const withIP = { ...pod.body, status: { ...pod.body.status, podIP: hostIP, podIPs: [{ ip: hostIP }] } };
      expectCode(await env.plinth.client.put(`/api/v1/namespaces/${NS}/pods/backend/status`, withIP), 200);
      await create(service('px2', { ports: [{ name: 'http', port: 80, targetPort: port }] }));
      const ep = await env.plinth.client.post(`/api/v1/namespaces/${NS}/endpoints`, {
        apiVersion: 'v1',
        kind: 'Endpoints',
        metadata: { name: 'px2' },
        subsets: [{ addresses: [{ ip: hostIP, targetRef: { kind: 'Pod', namespace: NS, name: 'backend' } }], ports: [{ name: 'http', port }] }],
      });
      expectCode(ep, 201);
      const base = `${SVC}/px2:80/proxy`;
      const ok = await env.plinth.client.get(`${base}/a/b?x=1`);
      expectCode(ok, 200);
      assert.equal(ok.raw.toString(), 'hello GET /a/b?x=1');
      assert.equal(seen.at(-1)!.auth, undefined, 'the client\'s token never reaches the backend');
      assert.equal(seen.at(-1)!.fwd, `${base}/a/b`);
      const escape = await env.plinth.client.get(`${base}/a/%2e%2e/%2e%2e/b`);
      assert.equal(escape.raw.toString(), 'hello GET /b', '.. stays inside the backend root');
      const redirect = await env.plinth.client.get(`${base}/go`);
      expectCode(redirect, 302);
      assert.equal(redirect.headers['location'], `${base}/landing`, "the backend's own redirect stays under the proxy");
      const away = await env.plinth.client.get(`${base}/away`);
      expectCode(away, 302);
      assert.equal(seen.filter((s) => s.url === '/').length, 0, 'a redirect elsewhere is not followed');
      const bare = await env.plinth.client.get(base);
      expectCode(bare, 301);
      assert.equal(bare.headers['location'], `${base}/`);
    } finally {
      backend.close();
    }
  });

  it('include the kubernetes Service (first IP, 443 → the secure port) and Endpoints listing this replica; cluster-info names it', async () => {
    const port = env.plinth.server.port;
    const svc = await env.plinth.client.get(`${SVC}/kubernetes`);
    expectCode(svc, 200);
    assert.equal(svc.body.spec.clusterIP, '10.0.0.1');
    assert.deepEqual(svc.body.spec.ports, [{ name: 'https', protocol: 'TCP', port: 443, targetPort: port }]);
    assert.deepEqual(svc.body.metadata.labels, { component: 'apiserver', provider: 'kubernetes' });
    const ep = await env.plinth.client.get(`/api/v1/namespaces/${NS}/endpoints/kubernetes`);
    expectCode(ep, 200);
    assert.equal(ep.body.subsets.length, 1);
    assert.equal(ep.body.subsets[0].addresses.length, 1);
    assert.doesNotMatch(ep.body.subsets[0].addresses[0].ip, /^127\./, 'an address other replicas and clients can reach');
    assert.deepEqual(ep.body.subsets[0].ports, [{ name: 'https', port, protocol: 'TCP' }]);
    const info = await kubectl('cluster-info');
    assert.match(info, new RegExp(`Kubernetes control plane\\S* is running at \\S*https://127\\.0\\.0\\.1:${port}`));
  });

  it('are created with kubectl create service and listed with kubectl get svc,ep', async () => {
    await kubectl('create', 'service', 'clusterip', 'kc-cip', '--tcp=80:8080', '-n', NS);
    await kubectl('create', 'service', 'nodeport', 'kc-np', '--tcp=8443:443', '--node-port=30443', '-n', NS);
    await kubectl('create', 'service', 'externalname', 'kc-ext', '--external-name=db.example.com', '-n', NS);
    const cip = await env.plinth.client.get(`${SVC}/kc-cip`);
    assert.deepEqual(cip.body.spec.ports, [{ name: '80-8080', protocol: 'TCP', port: 80, targetPort: 8080 }]);
    assert.deepEqual(cip.body.spec.selector, { app: 'kc-cip' });
    const out = await kubectl('get', 'svc,ep', '-n', NS);
    assert.match(out, /^service\/kc-np\s+NodePort\s+10\.0\.0\.\d+\s+<none>\s+8443:30443\/TCP\s+\d+s$/m);
    assert.match(out, /^service\/kc-ext\s+ExternalName\s+<none>\s+db\.example\.com\s+<none>\s+\d+s$/m);
    assert.match(out, /^endpoints\/kubernetes\s+\S+:\d+\s+\d+s$/m);
    await kubectl('delete', 'svc', 'kc-cip', 'kc-np', 'kc-ext', '-n', NS);
  });

  it('are written by client-node and the Python client', async () => {
    const kc = new KubeConfig();
    kc.loadFromFile(env.plinth.server.kubeconfigPath);
    const core = kc.makeApiClient(CoreV1Api);
    const made = await core.createNamespacedService({ namespace: NS, body: { metadata: { name: 'cn-svc' }, spec: { type: 'NodePort', selector: { a: 'b' }, ports: [{ port: 80, targetPort: 8080 }] } } });
    assert.match(made.spec?.clusterIP ?? '', /^10\.0\.0\.\d+$/);
    assert.ok((made.spec?.ports?.[0]?.nodePort ?? 0) >= 30000);
    const read = await core.readNamespacedService({ namespace: NS, name: 'cn-svc' });
    assert.equal(read.spec?.clusterIP, made.spec?.clusterIP);
    await core.deleteNamespacedService({ namespace: NS, name: 'cn-svc' });

    const script = [
      'import sys',
      'from kubernetes import client, config',
      'config.load_kube_config(sys.argv[1])',
      'core = client.CoreV1Api()',
      'svc = core.create_namespaced_service("default", client.V1Service(metadata=client.V1ObjectMeta(name="py-svc"), spec=client.V1ServiceSpec(selector={"a": "b"}, ports=[client.V1ServicePort(port=80, target_port=8080)])))',
      'assert svc.spec.cluster_ip.startswith("10.0.0."), svc.spec.cluster_ip',
      'assert core.read_namespaced_service("py-svc", "default").spec.ports[0].target_port == 8080',
      'assert "py-svc" in [s.metadata.name for s in core.list_namespaced_service("default").items]',
      'core.delete_namespaced_service("py-svc", "default")',
      'print("ok")',
    ].join('\n');
    // Asynchronously: the server answering it runs in this process.
    const out = await new Promise<string>((resolve, reject) => {
      execFile('/usr/bin/python3', ['-c', script, env.plinth.server.kubeconfigPath], { encoding: 'utf8', timeout: 60_000 }, (err, stdout, stderr) =>
        err ? reject(new Error(`python: ${stdout}\n${stderr}`)) : resolve(stdout),
      );
    });
    assert.match(out, /^ok$/m);
  });

  it('never give one IP to two Services created at once on two replicas, and keep allocations across a restart', async () => {
    const endpointIPs = async (): Promise<string[]> =>
      ((await env.plinth.client.get(`/api/v1/namespaces/${NS}/endpoints/kubernetes`)).body.subsets?.[0]?.addresses ?? []).map((a: { ip: string }) => a.ip);
    const [own] = await endpointIPs();
    const second = await startInProcess({ etcd: env.etcd, args: ['--advertise-address=198.51.100.7'] });
    let taken: string[];
    try {
      // Each replica's address is in the kubernetes Endpoints (kube's lease reconciler).
      await eventually(async () => (await endpointIPs()).includes('198.51.100.7'), 15_000, 'the second replica listed');
      assert.deepEqual((await endpointIPs()).sort(), [own!, '198.51.100.7'].sort());
      const clients = [env.plinth.client, second.client];
      const results = await Promise.all(Array.from({ length: 12 }, (_, i) => clients[i % 2]!.post(SVC, service(`race-${i}`))));
      for (const r of results) expectCode(r, 201, JSON.stringify(r.body));
      taken = results.map((r) => r.body.spec.clusterIP as string);
      assert.equal(new Set(taken).size, taken.length, `distinct IPs: ${taken.join(' ')}`);
    } finally {
      await second.stop();
    }
    // A clean shutdown takes the replica's address out at once.
    assert.deepEqual(await endpointIPs(), [own!]);
    // A replica started afresh on the same etcd sees every allocation.
    const third = await startInProcess({ etcd: env.etcd });
    try {
      expectStatus(await third.client.post(SVC, service('race-dup', { clusterIP: taken[0] })), 422, 'Invalid', /provided IP is already allocated/);
      const fresh = await third.client.post(SVC, service('race-new'));
      expectCode(fresh, 201);
      assert.ok(!taken.includes(fresh.body.spec.clusterIP), 'a new IP');
    } finally {
      await third.stop();
    }
  });
});
