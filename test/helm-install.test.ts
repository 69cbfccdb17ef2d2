/**
 * The chart installed for real into a running plinth: `helm install` (no dry run, no post-renderer,
 * no kind stripped) with default values and with every documented value set, each in its own
 * namespace; `helm upgrade` keeping the generated certificates and credentials; `helm test` with
 * this test standing in for the kubelet (it runs the hook Pod's kubectl commands against plinth and
 * reports the Pod's phase); `helm uninstall` removing the objects and leaving the kept Secrets.
 * plinth must accept its own chart as kube 1.24 would.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { request as httpsRequest } from 'node:https';
import { createServer, type AddressInfo } from 'node:net';
import { parse as parseYaml } from 'yaml';
import { CHART, FIXTURES, helm, parseManifests, run, values, type Obj } from './helm.js';
import { eventually, kubectlPath, startInProcess, startTestEtcd, tempDir, type InProcessPlinth, type TestEtcd } from './harness.js';

const RELEASE = 'api';
const FULLNAME = 'api-plinth';
const env = {} as { plinth: InProcessPlinth; etcd: TestEtcd };
const work = tempDir('plinth-helm-install-');
let kubeconfig = '';

/** The path of a namespaced object of the chart in plinth's API. */
function pathOf(o: Obj, ns: string): string {
  const group = o.apiVersion.includes('/') ? `/apis/${o.apiVersion}` : `/api/${o.apiVersion}`;
  // The chart's kinds all pluralize by an "s" (configmaps, poddisruptionbudgets, servicemonitors...).
  return `${group}/namespaces/${ns}/${o.kind.toLowerCase()}s/${o.metadata.name}`;
}

/** helm against the test's plinth; fails the test with helm's output when helm fails. */
async function helmOk(args: string[]): Promise<string> {
  const r = await helm([...args, '--kubeconfig', kubeconfig]);
  assert.equal(r.code, 0, `helm ${args.join(' ')} failed:\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

/** The release's manifest as helm stored it (the objects it created). */
async function manifestOf(ns: string): Promise<Obj[]> {
  return parseManifests(await helmOk(['get', 'manifest', RELEASE, '-n', ns]));
}

/** Every object of the manifest as plinth serves it (each must exist). */
async function liveObjects(ns: string, objs: Obj[]): Promise<Obj[]> {
  const out: Obj[] = [];
  for (const o of objs) {
    const res = await env.plinth.client.get(pathOf(o, o.metadata.namespace ?? ns));
    assert.equal(res.status, 200, `${o.kind} ${o.metadata.name} not in plinth: ${res.raw.toString()}`);
    out.push(res.body);
  }
  return out;
}

/** The data of the chart's Secrets in `ns`, by name. */
async function secretsOf(ns: string, names: string[]): Promise<Record<string, Record<string, string>>> {
  const out: Record<string, Record<string, string>> = {};
  for (const name of names) {
    const res = await env.plinth.client.get(`/api/v1/namespaces/${ns}/secrets/${name}`);
    assert.equal(res.status, 200, `Secret ${name}`);
    out[name] = res.body.data;
  }
  return out;
}

const GENERATED = ['admin-token', 'sa-key', 'metrics-token', 'tokens', 'tls', 'etcd-tls'].map((s) => `${FULLNAME}-${s}`);
const KEPT = ['admin-token', 'sa-key', 'tls'].map((s) => `${FULLNAME}-${s}`);

before(async () => {
  env.etcd = await startTestEtcd();
  env.plinth = await startInProcess({ etcd: env.etcd });
  kubeconfig = env.plinth.server.kubeconfigPath;
  // A cluster running the Prometheus Operator and cert-manager has their CRDs: the value sets that
  // render a ServiceMonitor or a Certificate install on top of them.
  const c = env.plinth.client;
  const crds = parseManifests(readFileSync(join(FIXTURES, 'crds.yaml'), 'utf8'));
  for (const crd of crds) assert.equal((await c.post('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd)).status, 201);
  for (const crd of crds) {
    await eventually(async () => (await c.get(`/apis/${crd.spec.group}/v1`)).status === 200, 10_000, `${crd.spec.group}/v1 served`);
  }
});

after(async () => {
  await env.plinth?.stop();
  await env.etcd?.stop();
  rmSync(work, { recursive: true, force: true });
});

test('helm install with default values: every object of the chart created in plinth, the generated Secrets among them', async () => {
  const out = await helmOk(['install', RELEASE, CHART, '-n', 'defaults', '--create-namespace']);
  assert.match(out, /^STATUS: deployed$/m);
  // NOTES: how to read the admin credential and the generated CA, and to run helm test.
  assert.match(out, /kubectl -n defaults get secret api-plinth-admin-token -o jsonpath='\{\.data\.token\}' \| base64 -d/);
  assert.match(out, /kubectl -n defaults get secret api-plinth-tls -o jsonpath='\{\.data\.ca\\\.crt\}'/);
  assert.match(out, /The chart generated this CA and certificate/);
  assert.match(out, /^ {5}helm test api -n defaults$/m);
  const manifest = await manifestOf('defaults');
  assert.deepEqual(
    manifest.map((o) => `${o.kind} ${o.metadata.name}`).sort(),
    [
      `ConfigMap ${FULLNAME}-dashboard`,
      `Deployment ${FULLNAME}`,
      `PodDisruptionBudget ${FULLNAME}`,
      `PodDisruptionBudget ${FULLNAME}-etcd`,
      ...GENERATED.map((n) => `Secret ${n}`).sort(),
      `Service ${FULLNAME}`,
      `Service ${FULLNAME}-etcd-headless`,
      `ServiceAccount ${FULLNAME}`,
      `StatefulSet ${FULLNAME}-etcd`,
    ].sort(),
  );
  const live = await liveObjects('defaults', manifest);
  const sts = live.find((o) => o.kind === 'StatefulSet');
  assert.equal(sts.spec.replicas, 3);
  assert.equal(sts.spec.volumeClaimTemplates[0].spec.resources.requests.storage, '8Gi');
  assert.equal(live.find((o) => o.metadata.name === `${FULLNAME}-tls`).type, 'kubernetes.io/tls');
});

test('helm upgrade keeps every generated certificate and credential (lookup of the live Secrets); new names make a new serving certificate', async () => {
  const before = await secretsOf('defaults', GENERATED);
  const out = await helmOk(['upgrade', RELEASE, CHART, '-n', 'defaults', '--set', 'replicaCount=5']);
  assert.match(out, /^REVISION: 2$/m);
  assert.equal((await env.plinth.client.get(`/apis/apps/v1/namespaces/defaults/deployments/${FULLNAME}`)).body.spec.replicas, 5);
  assert.deepEqual(await secretsOf('defaults', GENERATED), before);

  // An extra name for the serving certificate: a new one (and CA) for the new names; the rest kept.
  await helmOk(['upgrade', RELEASE, CHART, '-n', 'defaults', '--reuse-values', '--set', 'tls.generated.extraDnsNames={plinth.example.com}']);
  const after = await secretsOf('defaults', GENERATED);
  assert.notEqual(after[`${FULLNAME}-tls`]!['tls.crt'], before[`${FULLNAME}-tls`]!['tls.crt']);
  for (const name of GENERATED.filter((n) => n !== `${FULLNAME}-tls`)) assert.deepEqual(after[name], before[name], name);
});

let podRuns = 0;

/** Plays the kubelet for the hook Pod: runs its containers' kubectl commands against plinth, in order. */
async function runTestPod(pod: Obj, files: { kubeconfig: string; ca: string; token: string }): Promise<{ exitCode: number; output: string }> {
  const dir = join(work, `pod-${++podRuns}`);
  mkdirSync(dir);
  // The projected volume: the kubeconfig from the ConfigMap beside ca.crt and the token.
  writeFileSync(join(dir, 'kubeconfig'), files.kubeconfig);
  writeFileSync(join(dir, 'ca.crt'), files.ca);
  writeFileSync(join(dir, 'token'), files.token);
  const projected = pod.spec.volumes.find((v: Obj) => v.projected);
  const mount: string = pod.spec.containers[0].volumeMounts.find((m: Obj) => m.name === projected.name).mountPath;
  let output = '';
  for (const c of [...pod.spec.initContainers, ...pod.spec.containers]) {
    assert.deepEqual(c.command, ['kubectl']);
    // The Service's DNS name resolves only in a cluster: here it is the test's plinth.
    const args = (c.args as string[]).map((a) => a.replace(mount, dir));
    const r = await run(kubectlPath(), [...args, `--server=${env.plinth.server.url}`], { HOME: dir });
    output += `${c.name}: ${r.stdout.trim()}${r.stderr}\n`;
    if (r.code !== 0) return { exitCode: r.code, output };
  }
  return { exitCode: 0, output };
}

test('helm test: the hook Pod is accepted by plinth, and its checks (/readyz with the CA, kubectl with the admin token) pass against plinth', async () => {
  const c = env.plinth.client;
  const testing = helm(['test', RELEASE, '-n', 'defaults', '--kubeconfig', kubeconfig, '--timeout', '30s']);
  const pod = await eventually(async () => {
    const res = await c.get(`/api/v1/namespaces/defaults/pods/${FULLNAME}-test`);
    return res.status === 200 ? (res.body as Obj) : undefined;
  }, 30_000, 'the test Pod created by helm test');
  assert.equal(pod.metadata.annotations['helm.sh/hook'], 'test');
  const cm = await c.get(`/api/v1/namespaces/defaults/configmaps/${FULLNAME}-test`);
  assert.equal(cm.status, 200, 'the kubeconfig ConfigMap hook is created before the Pod');
  const kc = parseYaml(cm.body.data.kubeconfig as string) as Obj;
  assert.equal(kc.clusters[0].cluster.server, `https://${FULLNAME}.defaults.svc:443`);
  assert.deepEqual(
    pod.spec.volumes[0].projected.sources.map((s: Obj) => (s.configMap ?? s.secret).name),
    [`${FULLNAME}-test`, `${FULLNAME}-tls`, `${FULLNAME}-admin-token`],
  );

  // The local stand-ins for the mounted files: plinth's own CA and admin token (the chart's are for
  // the Service's names and the replicas' token file, which this plinth does not serve with).
  const own = parseYaml(readFileSync(kubeconfig, 'utf8')) as Obj;
  const ca = Buffer.from(own.clusters[0].cluster['certificate-authority-data'], 'base64').toString();
  const files = { kubeconfig: cm.body.data.kubeconfig as string, ca, token: own.users[0].user.token as string };
  const ran = await runTestPod(pod, files);
  assert.equal(ran.exitCode, 0, ran.output);
  assert.match(ran.output, /^readyz: ok$/m);
  assert.match(ran.output, /^admin: yes$/m);
  // The checks can fail: a token plinth does not know, or a CA that did not sign plinth's certificate.
  assert.notEqual((await runTestPod(pod, { ...files, token: 'not-a-token' })).exitCode, 0);
  const otherCa = Buffer.from((await c.get(`/api/v1/namespaces/defaults/secrets/${FULLNAME}-tls`)).body.data['ca.crt'], 'base64').toString();
  assert.notEqual((await runTestPod(pod, { ...files, ca: otherCa })).exitCode, 0);

  // The kubelet's report: the Pod succeeded; helm test reads it from plinth.
  const status = await c.request('PATCH', `/api/v1/namespaces/defaults/pods/${FULLNAME}-test/status`, {
    headers: { 'content-type': 'application/merge-patch+json' },
    body: { status: { phase: 'Succeeded' } },
  });
  assert.equal(status.status, 200, status.raw.toString());
  const r = await testing;
  assert.equal(r.code, 0, `helm test failed:\n${r.stdout}\n${r.stderr}`);
  assert.match(r.stdout, new RegExp(`TEST SUITE:\\s+${FULLNAME}-test[\\s\\S]*Phase:\\s+Succeeded`));
});

test('helm uninstall removes the release\'s objects and keeps the kept Secrets; a reinstall reuses them', async () => {
  const c = env.plinth.client;
  const manifest = await manifestOf('defaults');
  const kept = await secretsOf('defaults', KEPT);
  await helmOk(['uninstall', RELEASE, '-n', 'defaults']);
  for (const o of manifest) {
    const status = (await c.get(pathOf(o, 'defaults'))).status;
    if (KEPT.includes(o.metadata.name)) assert.equal(status, 200, `${o.kind} ${o.metadata.name} is kept`);
    else await eventually(async () => (await c.get(pathOf(o, 'defaults'))).status === 404, 10_000, `${o.kind} ${o.metadata.name} gone`);
  }
  const releases = await c.get('/api/v1/namespaces/defaults/secrets?labelSelector=owner%3Dhelm');
  assert.equal(releases.body.items.length, 0, 'no release record left');

  // The same values as the last upgrade (the serving certificate's extra name): nothing regenerated.
  await helmOk(['install', RELEASE, CHART, '-n', 'defaults', '--set', 'tls.generated.extraDnsNames={plinth.example.com}']);
  assert.deepEqual(await secretsOf('defaults', KEPT), kept);
});

test('every documented value set installs into plinth, each in its own namespace', async () => {
  const sets = ['existing-secret', 'cert-manager', 'bundled-etcd', 'external-etcd-tls', 'service-monitor', 'flags', 'audit'];
  for (const set of sets) {
    const out = await helmOk(['install', RELEASE, CHART, '-n', set, '--create-namespace', '-f', values(set)]);
    assert.match(out, /^STATUS: deployed$/m, set);
    const live = await liveObjects(set, await manifestOf(set));
    const kinds = new Set(live.map((o) => o.kind));
    if (set === 'cert-manager') assert.ok(kinds.has('Certificate'), set);
    if (set === 'service-monitor') assert.ok(kinds.has('ServiceMonitor'), set);
    if (set === 'audit') assert.ok(live.some((o) => o.metadata.name === `${FULLNAME}-audit-policy`), set);
    assert.equal(kinds.has('StatefulSet'), set === 'bundled-etcd', `${set}: the bundled etcd only without etcd.endpoints`);
  }
});

/** A free loopback port. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

/** TLS material and what to send in httpsStatus(). */
interface HttpsCall {
  ca: string;
  cert?: string;
  key?: string;
  /** The name the server's certificate must carry (default: the URL's host). */
  servername?: string;
  method?: string;
  token?: string;
  body?: unknown;
}

/** An https request's status, or the error's code when the handshake fails. */
function httpsStatus(url: string, call: HttpsCall): Promise<number | string> {
  const { method = 'GET', token, body, ...tls } = call;
  const payload = body === undefined ? undefined : JSON.stringify(body);
  const headers: Record<string, string> = {};
  if (token) headers['authorization'] = `Bearer ${token}`;
  if (payload) headers['content-type'] = 'application/json';
  return new Promise((resolve) => {
    const req = httpsRequest(url, { ...tls, method, headers, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    req.end(payload);
  });
}

test('the generated certificates with the chart\'s flags: 3 etcd members on loopback form a cluster over peer TLS with client certificates, a client without one is refused; plinth serves the generated serving certificate and stores through the members', async (t) => {
  const c = env.plinth.client;
  const dir = join(work, 'etcd-tls');
  mkdirSync(dir);
  const secret = (await c.get(`/api/v1/namespaces/defaults/secrets/${FULLNAME}-etcd-tls`)).body.data as Record<string, string>;
  for (const key of ['ca.crt', 'tls.crt', 'tls.key']) writeFileSync(join(dir, key), Buffer.from(secret[key]!, 'base64'), { mode: 0o600 });
  const pem = (key: string): string => readFileSync(join(dir, key), 'utf8');

  // The members' TLS flags exactly as the installed StatefulSet has them, the mount mapped to `dir`;
  // the URLs on loopback (the certificate names 127.0.0.1 beside the members' DNS names).
  const sts = (await c.get(`/apis/apps/v1/namespaces/defaults/statefulsets/${FULLNAME}-etcd`)).body;
  const tlsFlags = (sts.spec.template.spec.containers[0].args as string[])
    .filter((a) => /^--(peer-)?(cert-file|key-file|trusted-ca-file|client-cert-auth)=/.test(a))
    .map((a) => a.replace('/etc/etcd/tls', dir));
  assert.equal(tlsFlags.length, 8);
  const ports = await Promise.all([0, 1, 2, 3, 4, 5].map(() => freePort()));
  const member = (i: number): { client: string; peer: string } => ({ client: `https://127.0.0.1:${ports[i]}`, peer: `https://127.0.0.1:${ports[i + 3]}` });
  const cluster = [0, 1, 2].map((i) => `m${i}=${member(i).peer}`).join(',');
  const members = [0, 1, 2].map((i) =>
    spawn('etcd', [
      `--name=m${i}`,
      `--data-dir=${join(dir, `m${i}`)}`,
      `--listen-client-urls=${member(i).client}`,
      `--advertise-client-urls=${member(i).client}`,
      `--listen-peer-urls=${member(i).peer}`,
      `--initial-advertise-peer-urls=${member(i).peer}`,
      `--initial-cluster=${cluster}`,
      '--initial-cluster-state=new',
      '--initial-cluster-token=helm-install-test',
      ...tlsFlags,
    ], { stdio: 'ignore' }),
  );
  t.after(() => {
    for (const m of members) m.kill();
  });
  const withCert = { ca: pem('ca.crt'), cert: pem('tls.crt'), key: pem('tls.key') };
  // /health answers 200 only once the member sees a leader: the three found each other over peer TLS.
  for (const i of [0, 1, 2]) await eventually(async () => (await httpsStatus(`${member(i).client}/health`, withCert)) === 200, 20_000, `member m${i} healthy`);
  // Client-certificate auth: the CA alone does not get a client in.
  assert.notEqual(await httpsStatus(`${member(0).client}/health`, { ca: withCert.ca }), 200);

  // plinth with the Deployment's etcd and serving-certificate flags (the Secrets mounted at
  // /etc/plinth/etcd and /etc/plinth/tls).
  const serving = (await c.get(`/api/v1/namespaces/defaults/secrets/${FULLNAME}-tls`)).body.data as Record<string, string>;
  const tlsDir = join(dir, 'serving');
  mkdirSync(tlsDir);
  for (const key of ['ca.crt', 'tls.crt', 'tls.key']) writeFileSync(join(tlsDir, key), Buffer.from(serving[key]!, 'base64'), { mode: 0o600 });
  const deploy = (await c.get(`/apis/apps/v1/namespaces/defaults/deployments/${FULLNAME}`)).body;
  const flags = (deploy.spec.template.spec.containers[0].args as string[])
    .filter((a) => /^--(etcd-(cafile|certfile|keyfile)|tls-cert-file|tls-private-key-file)=/.test(a))
    .map((a) => a.replace('/etc/plinth/etcd', dir).replace('/etc/plinth/tls', tlsDir));
  assert.equal(flags.length, 5);
  const p = await startInProcess({ args: [`--etcd-servers=${[0, 1, 2].map((i) => member(i).client).join(',')}`, ...flags] });
  try {
    // A client in the cluster: the Service's name, verified with the generated ca.crt.
    const url = new URL(p.server.url);
    const inCluster = { ca: readFileSync(join(tlsDir, 'ca.crt'), 'utf8'), servername: `${FULLNAME}.defaults.svc`, token: p.client.token };
    assert.equal(await httpsStatus(`https://127.0.0.1:${url.port}/readyz`, inCluster), 200);
    const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'through-tls' }, data: { k: 'v' } };
    assert.equal(await httpsStatus(`https://127.0.0.1:${url.port}/api/v1/namespaces/default/configmaps`, { ...inCluster, method: 'POST', body: cm }), 201);
    assert.equal(await httpsStatus(`https://127.0.0.1:${url.port}/api/v1/namespaces/default/configmaps/through-tls`, inCluster), 200);
    assert.equal(await httpsStatus(`https://127.0.0.1:${url.port}/readyz`, { ...inCluster, servername: 'other.example.com' }), 'ERR_TLS_CERT_ALTNAME_INVALID');
  } finally {
    await p.stop();
  }
});
