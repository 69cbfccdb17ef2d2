/**
 * The Helm chart (charts/plinth): `helm lint` and `helm template` over the value sets in
 * test/fixtures/helm/, the rendered manifests checked as a user of the chart relies on them (probes,
 * the exact plinth-apiserver command line, replicas, PDB, spreading, etcd wiring, ServiceMonitor),
 * every rendered flag accepted by plinth's own flag parser, the chart's generated credentials
 * accepted by a running plinth, and `helm install --dry-run=server` against a running plinth.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { parseFlags } from '@plinth/apiserver';
import { CHART, FIXTURES, FULLNAME, NS, RELEASE, arg, argsOf, container, find, get, helm, parseManifests, render, secretData, values, type Obj } from './helm.js';
import { REPO_ROOT, tempDir, startTestEtcd, startInProcess, type InProcessPlinth, type TestEtcd } from './harness.js';

const GOOD_SETS = ['defaults', 'existing-secret', 'cert-manager', 'bundled-etcd', 'external-etcd-tls', 'service-monitor', 'flags', 'audit'];

test('the chart carries deploy/grafana/plinth-apiserver.json byte for byte (Helm reads only files inside the chart)', () => {
  const original = readFileSync(join(REPO_ROOT, 'deploy/grafana/plinth-apiserver.json'));
  const copy = readFileSync(join(CHART, 'dashboards/plinth-apiserver.json'));
  assert.ok(original.equals(copy), 'charts/plinth/dashboards/plinth-apiserver.json differs from deploy/grafana/plinth-apiserver.json: copy it again');
});

test('Chart.yaml: apiVersion v2, appVersion is plinth\'s version', async () => {
  const chart = parseManifests(readFileSync(join(CHART, 'Chart.yaml'), 'utf8'))[0];
  const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string };
  assert.equal(chart.apiVersion, 'v2');
  assert.equal(chart.appVersion, pkg.version);
  assert.equal(chart.kubeVersion, undefined);
});

test('helm lint passes on the default values and on every value set', async () => {
  const bare = await helm(['lint', CHART]);
  assert.equal(bare.code, 0, `helm lint (default values):\n${bare.stdout}\n${bare.stderr}`);
  for (const set of GOOD_SETS) {
    const r = await helm(['lint', CHART, '-f', values(set)]);
    assert.equal(r.code, 0, `helm lint ${set}:\n${r.stdout}\n${r.stderr}`);
    assert.match(r.stdout, /1 chart\(s\) linted, 0 chart\(s\) failed/);
  }
});

test('values.schema.json makes helm lint reject a value of the wrong type or a misspelt key', async () => {
  const r = await helm(['lint', CHART, '-f', values('defaults'), '--set', 'replicaCount=three', '--set', 'featureGates.AllAlpha=maybe', '--set', 'etcd.endpoint=x']);
  assert.notEqual(r.code, 0);
  const out = r.stdout + r.stderr;
  assert.match(out, /replicaCount: Invalid type\. Expected: integer, given: string/);
  assert.match(out, /featureGates\.AllAlpha: Invalid type\. Expected: boolean/);
  assert.match(out, /Additional property endpoint is not allowed/);
  // The values of the generated certificates, the bundled etcd's TLS and the test hook.
  const gen = await helm(['lint', CHART, '--set', 'tls.generated.days=ten', '--set', 'tls.generated.extraDnsNames=plinth.example.com', '--set', 'etcd.tls.enabled=yes', '--set', 'etcd.tls.generated.days=0', '--set', 'tests.enabled=1', '--set', 'tests.image.repository=', '--set', 'tests.image.tag=']);
  assert.notEqual(gen.code, 0);
  const genOut = gen.stdout + gen.stderr;
  assert.match(genOut, /tls\.generated\.days: Invalid type\. Expected: integer, given: string/);
  assert.match(genOut, /tls\.generated\.extraDnsNames: Invalid type\. Expected: array, given: string/);
  assert.match(genOut, /etcd\.tls\.enabled: Invalid type\. Expected: boolean, given: string/);
  assert.match(genOut, /etcd\.tls\.generated\.days: Must be greater than or equal to 1/);
  assert.match(genOut, /tests\.enabled: Invalid type\. Expected: boolean, given: integer/);
  assert.match(genOut, /tests\.image\.repository: String length must be greater than or equal to 1/);
  assert.equal((await helm(['lint', CHART, '--set', 'tls.generated.days=30', '--set', 'etcd.tls.enabled=false', '--set', 'tests.enabled=false'])).code, 0);
});

test('value sets that cannot work fail with the chart\'s message', async () => {
  const cases: Array<[string, RegExp]> = [
    ['fail-grace-period', /terminationGracePeriodSeconds \(20\) must be above preStop\.sleepSeconds \+ shutdownDelaySeconds \(20\)/],
    ['fail-no-etcd', /plinth needs etcd: set etcd\.endpoints .* or leave etcd\.bundled=true/],
  ];
  for (const [set, message] of cases) {
    const r = await helm(['template', RELEASE, CHART, '-n', NS, '-f', values(set)]);
    assert.notEqual(r.code, 0, `helm template ${set} succeeded`);
    assert.match(r.stderr, message, `helm template ${set}`);
    // helm lint reports a template's fail() as "[INFO] Fail: ..." and still passes (helm's lint
    // mode); the message is there for whoever reads it, install and template refuse.
    const lint = await helm(['lint', CHART, '-f', values(set)]);
    assert.match(lint.stdout + lint.stderr, message, `helm lint ${set}`);
  }
  // etcd.endpoints names an external etcd: the bundled one (on by default) is then off.
  const both = await render('existing-secret', ['--set', 'etcd.bundled=true']);
  assert.equal(find(both, 'StatefulSet'), undefined);
  assert.equal(arg(argsOf(both), '--etcd-servers'), 'https://etcd.storage.svc:2379');
});

test('existing Secret and external etcd: 3 replicas spread over nodes and zones, probes on /readyz and /livez over HTTPS, preStop, grace period above the shutdown delay', async () => {
  const objs = await render('existing-secret');
  const deploy = get(objs, 'Deployment', FULLNAME);
  const spec = deploy.spec.template.spec;
  const c = container(deploy);
  assert.equal(deploy.spec.replicas, 3);
  assert.equal(c.image, 'plinth-apiserver:0.1.0');

  const selector = deploy.spec.selector.matchLabels;
  assert.equal(selector['app.kubernetes.io/component'], 'apiserver');
  for (const [k, v] of Object.entries(selector)) assert.equal(deploy.spec.template.metadata.labels[k], v, `pod label ${k}`);
  for (const label of ['app.kubernetes.io/name', 'app.kubernetes.io/instance', 'app.kubernetes.io/version', 'app.kubernetes.io/managed-by', 'helm.sh/chart']) {
    assert.ok(deploy.metadata.labels[label], `label ${label}`);
  }

  const anti = spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0];
  assert.equal(anti.podAffinityTerm.topologyKey, 'kubernetes.io/hostname');
  assert.deepEqual(anti.podAffinityTerm.labelSelector.matchLabels, selector);
  assert.deepEqual(spec.topologySpreadConstraints.map((t: Obj) => t.topologyKey), ['topology.kubernetes.io/zone', 'kubernetes.io/hostname']);
  for (const t of spec.topologySpreadConstraints) assert.deepEqual(t.labelSelector.matchLabels, selector);

  assert.deepEqual(c.ports, [{ name: 'https', containerPort: 6443, protocol: 'TCP' }]);
  const probe = (p: Obj): string => `${p.httpGet.scheme} ${p.httpGet.port} ${p.httpGet.path}`;
  assert.equal(probe(c.readinessProbe), 'HTTPS https /readyz');
  assert.equal(probe(c.livenessProbe), 'HTTPS https /livez');
  assert.equal(probe(c.startupProbe), 'HTTPS https /livez');
  assert.ok(c.startupProbe.periodSeconds * c.startupProbe.failureThreshold >= 120, 'the startup probe allows at least two minutes');

  // preStop sleeps 5 s (node, the image has no shell), then SIGTERM: 15 s of failing /readyz, then drain.
  assert.deepEqual(c.lifecycle.preStop.exec.command, ['/nodejs/bin/node', '-e', 'setTimeout(() => {}, 5000)']);
  const args = c.args as string[];
  assert.equal(arg(args, '--shutdown-delay-duration'), '15s');
  assert.ok(spec.terminationGracePeriodSeconds > 5 + 15, `grace period ${spec.terminationGracePeriodSeconds}`);
  assert.equal(spec.terminationGracePeriodSeconds, 50);
  const explicit = await render('defaults', ['--set', 'terminationGracePeriodSeconds=90', '--set', 'preStop.action=sleep']);
  assert.equal(get(explicit, 'Deployment').spec.template.spec.terminationGracePeriodSeconds, 90);
  assert.deepEqual(container(get(explicit, 'Deployment')).lifecycle.preStop, { sleep: { seconds: 5 } });

  // Non-root, read-only root filesystem, --data-dir on an emptyDir.
  assert.equal(spec.securityContext.runAsNonRoot, true);
  assert.ok(spec.securityContext.runAsUser > 0);
  assert.equal(c.securityContext.readOnlyRootFilesystem, true);
  assert.equal(c.securityContext.allowPrivilegeEscalation, false);
  assert.deepEqual(c.securityContext.capabilities.drop, ['ALL']);
  assert.equal(arg(args, '--data-dir'), '/var/lib/plinth');
  const dataMount = c.volumeMounts.find((m: Obj) => m.mountPath === '/var/lib/plinth');
  assert.ok(spec.volumes.find((v: Obj) => v.name === dataMount.name).emptyDir, '--data-dir is an emptyDir');
  assert.ok(c.resources.requests.cpu && c.resources.requests.memory);

  // The TLS Secret's keys, the external etcd, the shared credentials.
  assert.equal(arg(args, '--tls-cert-file'), '/etc/plinth/tls/tls.crt');
  assert.equal(arg(args, '--tls-private-key-file'), '/etc/plinth/tls/tls.key');
  assert.equal(spec.volumes.find((v: Obj) => v.name === 'tls').secret.secretName, 'plinth-serving');
  assert.equal(arg(args, '--etcd-servers'), 'https://etcd.storage.svc:2379');
  assert.equal(arg(args, '--etcd-cafile'), undefined);
  assert.equal(arg(args, '--leader-elect'), 'true');
  assert.equal(arg(args, '--leader-elect-lease-duration'), '15s');
  assert.equal(arg(args, '--authorization-mode'), 'RBAC');
  assert.equal(arg(args, '--runtime-config'), undefined);

  const pdb = get(objs, 'PodDisruptionBudget', FULLNAME);
  assert.equal(pdb.spec.maxUnavailable, 1);
  assert.deepEqual(pdb.spec.selector.matchLabels, selector);

  const svc = get(objs, 'Service', FULLNAME);
  assert.equal(svc.spec.type, 'ClusterIP');
  assert.deepEqual(svc.spec.ports, [{ name: 'https', port: 443, targetPort: 'https', protocol: 'TCP' }]);
  assert.deepEqual(svc.spec.selector, selector);
  assert.equal(get(objs, 'ServiceAccount', FULLNAME).automountServiceAccountToken, false);
  assert.equal(spec.serviceAccountName, FULLNAME);

  const dashboard = get(objs, 'ConfigMap', `${FULLNAME}-dashboard`);
  assert.equal(dashboard.metadata.labels.grafana_dashboard, '1');
  assert.deepEqual(JSON.parse(dashboard.data['plinth-apiserver.json']), JSON.parse(readFileSync(join(REPO_ROOT, 'deploy/grafana/plinth-apiserver.json'), 'utf8')));

  assert.equal(find(objs, 'ServiceMonitor'), undefined, 'no ServiceMonitor unless enabled');
  assert.equal(find(objs, 'Certificate'), undefined);
  assert.equal(find(objs, 'StatefulSet'), undefined);
  assert.equal(find(objs, 'Secret', `${FULLNAME}-tls`), undefined, 'no generated serving certificate with tls.existingSecret');
  assert.equal(find(objs, 'Secret', `${FULLNAME}-etcd-tls`), undefined);
  assert.equal(deploy.spec.template.metadata.annotations, undefined, 'no scrape annotations unless asked');
});

test('cert-manager: a Certificate for the Service\'s DNS names, its Secret mounted', async () => {
  const objs = await render('cert-manager');
  const cert = get(objs, 'Certificate', FULLNAME);
  assert.equal(cert.apiVersion, 'cert-manager.io/v1');
  assert.equal(cert.spec.secretName, `${FULLNAME}-tls`);
  assert.deepEqual(cert.spec.dnsNames, [FULLNAME, `${FULLNAME}.${NS}`, `${FULLNAME}.${NS}.svc`, `${FULLNAME}.${NS}.svc.cluster.local`, 'plinth.example.com']);
  assert.deepEqual(cert.spec.issuerRef, { name: 'plinth-ca', kind: 'ClusterIssuer', group: 'cert-manager.io' });
  assert.ok(cert.spec.usages.includes('server auth'));
  const spec = get(objs, 'Deployment').spec.template.spec;
  assert.equal(spec.volumes.find((v: Obj) => v.name === 'tls').secret.secretName, `${FULLNAME}-tls`);
});

test('external etcd with client TLS: --etcd-servers joined, --etcd-cafile/--etcd-certfile/--etcd-keyfile from the Secret', async () => {
  const objs = await render('external-etcd-tls');
  const args = argsOf(objs);
  assert.equal(arg(args, '--etcd-servers'), 'https://etcd-a.example.internal:2379,https://etcd-b.example.internal:2379,https://etcd-c.example.internal:2379');
  assert.equal(arg(args, '--etcd-cafile'), '/etc/plinth/etcd/ca.crt');
  assert.equal(arg(args, '--etcd-certfile'), '/etc/plinth/etcd/tls.crt');
  assert.equal(arg(args, '--etcd-keyfile'), '/etc/plinth/etcd/tls.key');
  assert.equal(arg(args, '--etcd-compaction-interval'), '10m');
  const spec = get(objs, 'Deployment').spec.template.spec;
  const mount = container(get(objs, 'Deployment')).volumeMounts.find((m: Obj) => m.mountPath === '/etc/plinth/etcd');
  assert.equal(spec.volumes.find((v: Obj) => v.name === mount.name).secret.secretName, 'plinth-etcd-client');
  assert.equal(find(objs, 'StatefulSet'), undefined);
});

test('bundled etcd: a 3-member StatefulSet with a headless Service, --initial-cluster naming the 3 members, plinth pointed at them', async () => {
  const objs = await render('bundled-etcd');
  const sts = get(objs, 'StatefulSet', `${FULLNAME}-etcd`);
  const headless = get(objs, 'Service', `${FULLNAME}-etcd-headless`);
  assert.equal(sts.spec.replicas, 3);
  assert.equal(sts.spec.serviceName, headless.metadata.name);
  assert.equal(sts.spec.podManagementPolicy, 'Parallel');
  assert.equal(headless.spec.clusterIP, 'None');
  assert.equal(headless.spec.publishNotReadyAddresses, true);
  assert.deepEqual(headless.spec.selector, sts.spec.selector.matchLabels);
  // The API server Service must not select etcd pods, nor the etcd Service API server pods.
  assert.notDeepEqual(get(objs, 'Service', FULLNAME).spec.selector, headless.spec.selector);

  const member = (i: number): string => `${FULLNAME}-etcd-${i}.${FULLNAME}-etcd-headless.${NS}.svc.cluster.local`;
  const etcdArgs = sts.spec.template.spec.containers[0].args as string[];
  assert.equal(arg(etcdArgs, '--initial-cluster'), [0, 1, 2].map((i) => `${FULLNAME}-etcd-${i}=https://${member(i)}:2380`).join(','));
  assert.equal(arg(etcdArgs, '--name'), '$(POD_NAME)');
  assert.equal(arg(etcdArgs, '--initial-advertise-peer-urls'), `https://$(POD_NAME).${FULLNAME}-etcd-headless.${NS}.svc.cluster.local:2380`);
  assert.equal(arg(etcdArgs, '--client-cert-auth'), 'true');
  assert.equal(arg(etcdArgs, '--peer-client-cert-auth'), 'true');
  assert.equal(sts.spec.template.spec.volumes.find((v: Obj) => v.name === 'tls').secret.secretName, `${FULLNAME}-etcd-tls`);
  assert.equal(arg(etcdArgs, '--initial-cluster-state'), 'new');
  assert.equal(sts.spec.template.spec.securityContext.runAsNonRoot, true);
  const claim = sts.spec.volumeClaimTemplates[0];
  assert.equal(claim.spec.resources.requests.storage, '20Gi');
  assert.equal(claim.spec.storageClassName, 'fast-ssd');
  assert.equal(get(objs, 'PodDisruptionBudget', `${FULLNAME}-etcd`).spec.maxUnavailable, 1);

  const args = argsOf(objs);
  assert.equal(arg(args, '--etcd-servers'), [0, 1, 2].map((i) => `https://${member(i)}:2379`).join(','));
  assert.equal(arg(args, '--etcd-cafile'), '/etc/plinth/etcd/ca.crt');
  assert.equal(get(objs, 'Deployment').spec.template.spec.volumes.find((v: Obj) => v.name === 'etcd-client').secret.secretName, `${FULLNAME}-etcd-tls`);

  // etcd.tls.enabled=false: plain http inside the pod network, no certificate.
  const plain = await render('bundled-etcd', ['--set', 'etcd.tls.enabled=false']);
  const plainArgs = get(plain, 'StatefulSet').spec.template.spec.containers[0].args as string[];
  assert.equal(arg(plainArgs, '--initial-cluster'), [0, 1, 2].map((i) => `${FULLNAME}-etcd-${i}=http://${member(i)}:2380`).join(','));
  assert.equal(arg(plainArgs, '--client-cert-auth'), undefined);
  assert.equal(arg(argsOf(plain), '--etcd-servers'), [0, 1, 2].map((i) => `http://${member(i)}:2379`).join(','));
  assert.equal(arg(argsOf(plain), '--etcd-cafile'), undefined);
  assert.equal(find(plain, 'Secret', `${FULLNAME}-etcd-tls`), undefined);

  // With a TLS Secret of the user's: https for peers and clients, client-certificate auth, plinth presents it.
  const tls = await render('bundled-etcd', ['--set', 'etcd.tls.existingSecret=etcd-certs']);
  const tlsArgs = get(tls, 'StatefulSet').spec.template.spec.containers[0].args as string[];
  assert.match(arg(tlsArgs, '--initial-cluster')!, /^api-plinth-etcd-0=https:\/\//);
  assert.equal(arg(tlsArgs, '--client-cert-auth'), 'true');
  assert.equal(arg(tlsArgs, '--peer-client-cert-auth'), 'true');
  assert.equal(get(tls, 'StatefulSet').spec.template.spec.volumes.find((v: Obj) => v.name === 'tls').secret.secretName, 'etcd-certs');
  assert.equal(find(tls, 'Secret', `${FULLNAME}-etcd-tls`), undefined, 'no generated certificate beside a named Secret');
  assert.match(arg(argsOf(tls), '--etcd-servers')!, /^https:\/\//);
  assert.equal(arg(argsOf(tls), '--etcd-certfile'), '/etc/plinth/etcd/tls.crt');

  const bad = await helm(['template', RELEASE, CHART, '-f', values('bundled-etcd'), '--set', 'etcd.replicas=2']);
  assert.match(bad.stderr, /etcd\.replicas \(2\) must be odd/);
});

test('flags: maps rendered sorted, lists joined, leader election and extraArgs last', async () => {
  const args = argsOf(await render('flags'));
  assert.equal(arg(args, '--runtime-config'), 'api/alpha=true,events.k8s.io/v1beta1=false');
  assert.equal(arg(args, '--feature-gates'), 'APIPriorityAndFairness=false,AllAlpha=false,ServerSideFieldValidation=true');
  assert.equal(arg(args, '--etcd-servers'), 'https://10.0.0.1:2379,https://10.0.0.2:2379');
  assert.equal(arg(args, '--etcd-compaction-interval'), '2m');
  assert.equal(arg(args, '--authorization-mode'), 'RBAC,Webhook');
  assert.equal(arg(args, '--enable-admission-plugins'), 'NamespaceLifecycle');
  assert.equal(arg(args, '--disable-admission-plugins'), 'ValidatingAdmissionWebhook');
  assert.equal(arg(args, '--leader-elect-lease-duration'), '30s');
  assert.equal(arg(args, '--leader-elect-renew-deadline'), '20s');
  assert.equal(arg(args, '--leader-elect-retry-period'), '4s');
  assert.equal(arg(args, '--v'), '4');
  assert.equal(arg(args, '--shutdown-delay-duration'), '20s');
  assert.deepEqual(args.filter((a) => a.startsWith('--service-account-issuer=')), ['--service-account-issuer=https://plinth.example.com', '--service-account-issuer=https://kubernetes.default.svc.cluster.local']);
  assert.deepEqual(args.slice(-2), ['--event-ttl=30m', '--authorization-webhook-config-file=/etc/plinth/webhook/authz.kubeconfig']);
  // Map order in values files never changes the command line (no rollout for nothing).
  const again = argsOf(await render('flags', ['--set', 'featureGates.AAA=true']));
  assert.equal(arg(again, '--feature-gates'), 'AAA=true,APIPriorityAndFairness=false,AllAlpha=false,ServerSideFieldValidation=true');
  const off = argsOf(await render('defaults', ['--set', 'leaderElection.enabled=false']));
  assert.equal(arg(off, '--leader-elect'), 'false');
  assert.equal(arg(off, '--leader-elect-lease-duration'), undefined);
});

test('audit: the policy in a ConfigMap, the --audit-* flags, a writable directory for the log file', async () => {
  const objs = await render('audit');
  const args = argsOf(objs);
  assert.equal(arg(args, '--audit-policy-file'), '/etc/plinth/audit/policy.yaml');
  assert.equal(arg(args, '--audit-log-path'), '/var/log/plinth/audit.log');
  assert.equal(arg(args, '--audit-log-maxsize'), '50');
  assert.equal(arg(args, '--audit-log-maxbackup'), '3');
  assert.equal(arg(args, '--audit-log-maxage'), '7');
  assert.equal(arg(args, '--audit-log-format'), 'json');
  const policy = parseManifests(get(objs, 'ConfigMap', `${FULLNAME}-audit-policy`).data['policy.yaml'])[0];
  assert.equal(policy.kind, 'Policy');
  assert.equal(policy.apiVersion, 'audit.k8s.io/v1');
  const deploy = get(objs, 'Deployment');
  const logMount = container(deploy).volumeMounts.find((m: Obj) => m.mountPath === '/var/log/plinth');
  assert.ok(deploy.spec.template.spec.volumes.find((v: Obj) => v.name === logMount.name).emptyDir);
  assert.ok(deploy.spec.template.metadata.annotations['checksum/audit-policy'], 'a policy change rolls the pods');
});

test('metrics: a ServiceMonitor over https with the scraper token, scrape annotations on pods and Service', async () => {
  const objs = await render('service-monitor');
  const sm = get(objs, 'ServiceMonitor', FULLNAME);
  assert.equal(sm.apiVersion, 'monitoring.coreos.com/v1');
  assert.equal(sm.metadata.labels.release, 'kube-prometheus-stack');
  assert.deepEqual(sm.spec.selector.matchLabels, get(objs, 'Service', FULLNAME).spec.selector);
  const ep = sm.spec.endpoints[0];
  assert.equal(ep.port, 'https');
  assert.equal(ep.scheme, 'https');
  assert.equal(ep.path, '/metrics');
  assert.equal(ep.interval, '15s');
  assert.deepEqual(ep.bearerTokenSecret, { name: `${FULLNAME}-metrics-token`, key: 'token' });
  assert.equal(ep.tlsConfig.serverName, `${FULLNAME}.${NS}.svc`);
  assert.deepEqual(ep.tlsConfig.ca, { secret: { name: 'plinth-serving', key: 'ca.crt' } });
  // The scraper's token is in the token file, in group system:monitoring.
  const token = secretData(objs, `${FULLNAME}-metrics-token`, 'token');
  assert.equal(secretData(objs, `${FULLNAME}-tokens`, 'tokens.csv').trim(), `${token},system:plinth:metrics-scraper,plinth-metrics-scraper,"system:monitoring"`);
  const pod = get(objs, 'Deployment').spec.template.metadata.annotations;
  assert.equal(pod['prometheus.io/scrape'], 'true');
  assert.equal(pod['prometheus.io/scheme'], 'https');
  assert.equal(pod['prometheus.io/port'], '6443');
  assert.equal(get(objs, 'Service', FULLNAME).metadata.annotations['prometheus.io/scrape'], 'true');
});

test('every flag the chart renders is one plinth-apiserver accepts', async () => {
  for (const set of GOOD_SETS) {
    const args = argsOf(await render(set));
    assert.doesNotThrow(() => parseFlags(args), `${set}: ${args.join(' ')}`);
  }
  const opts = parseFlags(argsOf(await render('flags'))) as unknown as Record<string, unknown>;
  assert.deepEqual(opts['runtimeConfig'], { 'api/alpha': 'true', 'events.k8s.io/v1beta1': 'false' });
  assert.deepEqual(opts['featureGates'], { APIPriorityAndFairness: false, AllAlpha: false, ServerSideFieldValidation: true });
});

test('deploy/Containerfile: multi-stage, distroless Node 20, non-root, no latest tag, runs the plinth-apiserver entry', () => {
  const text = readFileSync(join(REPO_ROOT, 'deploy/Containerfile'), 'utf8');
  const froms = [...text.matchAll(/^FROM\s+(\S+)/gm)].map((m) => m[1]!);
  assert.ok(froms.length >= 2, 'multi-stage');
  for (const image of froms) assert.ok(/:[^/]+$/.test(image) && !image.endsWith(':latest'), `${image}: a pinned tag`);
  assert.match(froms.at(-1)!, /^gcr\.io\/distroless\/nodejs20-debian12:nonroot$/);
  assert.match(text, /^USER 65532:65532$/m);
  assert.match(text, /^EXPOSE 6443$/m);
  assert.match(text, /^ENTRYPOINT \["\/nodejs\/bin\/node", "\/app\/packages\/apiserver\/bin\/plinth-apiserver"\]$/m);
  assert.match(text, /npm ci --omit=dev/);
  assert.match(text, /^COPY proto\/ proto\/$/m, 'the .proto files loaded at start-up');
  assert.doesNotMatch(text, /^(RUN|COPY|ADD)\b.*\betcd\b/m, 'no etcd in the image');
});

// --- Against a running plinth -------------------------------------------------------------------

// The chart's generated credentials, rendered once and given to the plinth below: a replica started
// from the chart uses exactly these files.
const creds = tempDir('plinth-helm-creds-');
let rendered: Obj[] = [];
let etcd: TestEtcd | undefined;
let plinth: InProcessPlinth | undefined;
let kubeconfig = '';

before(async () => {
  rendered = await render('service-monitor');
  writeFileSync(join(creds, 'sa.key'), secretData(rendered, `${FULLNAME}-sa-key`, 'sa.key'), { mode: 0o600 });
  writeFileSync(join(creds, 'tokens.csv'), secretData(rendered, `${FULLNAME}-tokens`, 'tokens.csv'), { mode: 0o600 });
  // The flags the chart renders for these files.
  const chartArgs = argsOf(rendered).filter((a) => /^--(service-account-(signing-)?key-file|token-auth-file)=/.test(a));
  assert.equal(chartArgs.length, 3);
  etcd = await startTestEtcd();
  plinth = await startInProcess({ etcd, args: [...chartArgs.map((a) => a.replace(/=\/etc\/plinth\/(sa|tokens)\//, `=${creds}/`)), '--feature-gates=APISelfSubjectReview=true'] });
  kubeconfig = plinth.server.kubeconfigPath;
});

after(async () => {
  await plinth?.stop();
  await etcd?.stop();
  rmSync(creds, { recursive: true, force: true });
});

test('the chart\'s generated scraper token may GET /metrics (system:monitoring) and nothing else; its ECDSA key signs tokens plinth accepts', async () => {
  const c = plinth!.client;
  const token = secretData(rendered, `${FULLNAME}-metrics-token`, 'token');
  const metrics = await c.get('/metrics', { token });
  assert.equal(metrics.status, 200);
  assert.match(metrics.raw.toString(), /apiserver_request_total/);
  assert.equal((await c.get('/api/v1/namespaces', { token })).status, 403);

  assert.equal((await c.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'sa-check' } })).status, 201);
  assert.equal((await c.post('/api/v1/namespaces/sa-check/serviceaccounts', { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'robot' } })).status, 201);
  const tr = await c.post('/api/v1/namespaces/sa-check/serviceaccounts/robot/token', { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: {} });
  assert.equal(tr.status, 201);
  const who = await c.post('/apis/authentication.k8s.io/v1/selfsubjectreviews', { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' }, { token: tr.body.status.token });
  assert.equal(who.status, 201);
  assert.equal(who.body.status.userInfo.username, 'system:serviceaccount:sa-check:robot');
});

/** `apiVersion kind` of every rendered object whose kind plinth's discovery does not list. */
async function unservedKinds(objs: Obj[]): Promise<string[]> {
  const c = plinth!.client;
  const out = new Set<string>();
  for (const o of objs) {
    const path = o.apiVersion.includes('/') ? `/apis/${o.apiVersion}` : `/api/${o.apiVersion}`;
    const res = await c.get(path);
    const served = res.status === 200 && (res.body.resources as Array<{ kind: string; name: string }>).some((r) => r.kind === o.kind && !r.name.includes('/'));
    if (!served) out.add(`${o.apiVersion} ${o.kind}`);
  }
  return [...out].sort();
}

test('helm install --dry-run=server into plinth: discovery, lookup, OpenAPI validation and conflict checks against plinth', async (t) => {
  const c = plinth!.client;
  assert.equal((await c.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } })).status, 201);

  const base = ['install', RELEASE, CHART, '--dry-run=server', '--kubeconfig', kubeconfig, '-n', NS, '-f', values('service-monitor'), '-f', values('cert-manager'), '--set', 'tls.existingSecret='];

  // Without the CRDs and a filter, helm stops at the first kind plinth does not serve.
  const bare = await helm(base);
  assert.notEqual(bare.code, 0);
  assert.match(bare.stderr, /no matches for kind "(ServiceMonitor|Certificate)" in version/);

  // Register the optional kinds' CRDs (CRDs are served), then filter out only what plinth lacks.
  t.diagnostic(`helm ${(await helm(['version', '--short'])).stdout.trim()}`);
  const crds = parseManifests(readFileSync(join(FIXTURES, 'crds.yaml'), 'utf8'));
  for (const crd of crds) assert.equal((await c.post('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd)).status, 201);
  for (const crd of crds) {
    const gv = `/apis/${crd.spec.group}/v1`;
    await (async () => {
      for (let i = 0; i < 100; i++) {
        if ((await c.get(gv)).status === 200) return;
        await new Promise((r) => setTimeout(r, 100));
      }
      assert.fail(`${gv} never served`);
    })();
  }
  // An admin token Secret kept from an earlier install (resource-policy keep: it keeps helm's
  // ownership labels): lookup must find it and the install must adopt it, not regenerate it.
  const kept = 'kept-admin-token-from-an-earlier-install';
  const keptMeta = {
    name: `${FULLNAME}-admin-token`,
    labels: { 'app.kubernetes.io/managed-by': 'Helm' },
    annotations: { 'meta.helm.sh/release-name': RELEASE, 'meta.helm.sh/release-namespace': NS, 'helm.sh/resource-policy': 'keep' },
  };
  assert.equal((await c.post(`/api/v1/namespaces/${NS}/secrets`, { apiVersion: 'v1', kind: 'Secret', metadata: keptMeta, stringData: { token: kept } })).status, 201);

  const objs = await render('service-monitor', ['-f', values('cert-manager'), '--set', 'tls.existingSecret=']);
  const drop = await unservedKinds(objs);
  t.diagnostic(`kinds plinth does not serve, dropped by the post-renderer: ${drop.join(', ')}`);
  // Every kind of the chart's own is served: nothing is dropped.
  assert.deepEqual(drop, []);

  const log = join(creds, 'dropped.log');
  const env = { PLINTH_DROP_KINDS: drop.join(','), PLINTH_DROPPED_LOG: log };
  const r = await helm([...base, '--post-renderer', join(FIXTURES, 'drop-unserved-kinds.mjs')], env);
  assert.equal(r.code, 0, `helm install --dry-run=server failed:\n${r.stderr}`);
  assert.equal(existsSync(log) ? readFileSync(log, 'utf8').trim() : '', '');
  assert.match(r.stdout, /^STATUS: pending-install$/m);
  const manifest = parseManifests(r.stdout.slice(r.stdout.indexOf('MANIFEST:') + 'MANIFEST:'.length, r.stdout.indexOf('NOTES:')));
  assert.deepEqual(
    manifest.map((o) => `${o.kind} ${o.metadata.name}`).sort(),
    [
      `Certificate ${FULLNAME}`,
      `ConfigMap ${FULLNAME}-dashboard`,
      `Deployment ${FULLNAME}`,
      `PodDisruptionBudget ${FULLNAME}`,
      `Secret ${FULLNAME}-admin-token`,
      `Secret ${FULLNAME}-metrics-token`,
      `Secret ${FULLNAME}-sa-key`,
      `Secret ${FULLNAME}-tokens`,
      `Service ${FULLNAME}`,
      `ServiceAccount ${FULLNAME}`,
      `ServiceMonitor ${FULLNAME}`,
    ],
  );
  // lookup read the live Secret from plinth: the token is reused, not regenerated.
  assert.equal(Buffer.from(manifest.find((o) => o.metadata.name === `${FULLNAME}-admin-token`).data.token, 'base64').toString(), kept);
  assert.match(r.stdout, /NOTES:[\s\S]*kubectl -n plinth-system rollout status deployment\/api-plinth/);
  // A dry run writes nothing: no release record, no objects.
  const secrets = await c.get(`/api/v1/namespaces/${NS}/secrets?labelSelector=owner%3Dhelm`);
  assert.equal(secrets.body.items.length, 0);
  assert.equal((await c.get(`/api/v1/namespaces/${NS}/serviceaccounts/${FULLNAME}`)).status, 404);

  // helm validates the objects against plinth's OpenAPI: an unknown field is refused.
  const broken = await helm([...base, '--post-renderer', join(FIXTURES, 'drop-unserved-kinds.mjs')], { ...env, PLINTH_ADD_FIELD: 'ServiceAccount' });
  assert.notEqual(broken.code, 0);
  assert.match(broken.stderr, /unknown field "bogusField" in io\.k8s\.api\.core\.v1\.ServiceAccount/);
});
