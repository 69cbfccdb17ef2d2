/**
 * kube 1.24's simple default-off admission plugins, all enabled on one real server: AlwaysPullImages,
 * DenyServiceExternalIPs, LimitPodHardAntiAffinityTopology, SecurityContextDeny, PodNodeSelector
 * (with a configuration file), ExtendedResourceToleration, NamespaceAutoProvision and
 * PodTolerationRestriction.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { tempDir, usePlinth } from './harness.js';
import { expectCode, expectStatus } from './assertions.js';

const configPath = join(tempDir('plinth-adm-off-'), 'admission.yaml');
writeFileSync(
  configPath,
  JSON.stringify({
    apiVersion: 'apiserver.config.k8s.io/v1',
    kind: 'AdmissionConfiguration',
    plugins: [{ name: 'PodNodeSelector', configuration: { podNodeSelectorPluginConfig: { clusterDefaultNodeSelector: 'tier=general', 'pns-white': 'zone=a' } } }],
  }),
);
after(() => rmSync(dirname(configPath), { recursive: true, force: true }));
const PLUGINS = ['AlwaysPullImages', 'DenyServiceExternalIPs', 'LimitPodHardAntiAffinityTopology', 'SecurityContextDeny', 'PodNodeSelector', 'ExtendedResourceToleration', 'NamespaceAutoProvision', 'PodTolerationRestriction'];
const env = usePlinth([`--enable-admission-plugins=${PLUGINS.join(',')}`, `--admission-control-config-file=${configPath}`]);

const pod = (name: string, spec: Record<string, unknown> = {}, container: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name },
  spec: { containers: [{ name: 'c', image: 'nginx', imagePullPolicy: 'IfNotPresent', ...container }], ...spec },
});
const podsIn = (ns: string) => `/api/v1/namespaces/${ns}/pods`;

async function namespace(name: string, annotations?: Record<string, string>): Promise<void> {
  expectCode(await env.plinth.client.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name, ...(annotations ? { annotations } : {}) } }), 201);
}

describe('default-off admission plugins', () => {
  it('NamespaceAutoProvision creates the missing namespace of a new object (not for a dry run)', async () => {
    const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } };
    expectStatus(await env.plinth.client.post('/api/v1/namespaces/auto-dry/configmaps?dryRun=All', cm), 404, 'NotFound', 'namespaces "auto-dry" not found');
    expectCode(await env.plinth.client.post('/api/v1/namespaces/auto-made/configmaps', cm), 201);
    expectCode(await env.plinth.client.get('/api/v1/namespaces/auto-made'), 200);
  });

  it('AlwaysPullImages sets imagePullPolicy Always on every container', async () => {
    await namespace('apl');
    const res = await env.plinth.client.post(podsIn('apl'), pod('p', { initContainers: [{ name: 'i', image: 'busybox', imagePullPolicy: 'Never' }] }));
    expectCode(res, 201);
    assert.equal(res.body.spec.containers[0].imagePullPolicy, 'Always');
    assert.equal(res.body.spec.initContainers[0].imagePullPolicy, 'Always');
  });

  it('SecurityContextDeny refuses runAsUser, seLinuxOptions, fsGroup and supplementalGroups with kube\'s messages', async () => {
    await namespace('scd');
    expectStatus(await env.plinth.client.post(podsIn('scd'), pod('fs', { securityContext: { fsGroup: 2000 } })), 403, 'Forbidden', 'pods "fs" is forbidden: pod.Spec.SecurityContext.FSGroup is forbidden');
    expectStatus(await env.plinth.client.post(podsIn('scd'), pod('ru', {}, { securityContext: { runAsUser: 1000 } })), 403, 'Forbidden', 'pods "ru" is forbidden: SecurityContext.RunAsUser is forbidden');
    expectCode(await env.plinth.client.post(podsIn('scd'), pod('ok', { securityContext: { runAsNonRoot: true } })), 201);
  });

  it('LimitPodHardAntiAffinityTopology allows only the hostname topology key for required anti-affinity', async () => {
    await namespace('aff');
    const anti = (topologyKey: string) => ({ affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels: { app: 'a' } }, topologyKey }] } } });
    expectStatus(
      await env.plinth.client.post(podsIn('aff'), pod('zone', anti('topology.kubernetes.io/zone'))),
      403,
      'Forbidden',
      'pods "zone" is forbidden: affinity.PodAntiAffinity.RequiredDuringScheduling has TopologyKey topology.kubernetes.io/zone but only key kubernetes.io/hostname is allowed',
    );
    expectCode(await env.plinth.client.post(podsIn('aff'), pod('host', anti('kubernetes.io/hostname'))), 201);
  });

  it('ExtendedResourceToleration adds a NoSchedule toleration per extended resource requested', async () => {
    await namespace('ert');
    const gpu = { resources: { requests: { 'example.com/gpu': '1', cpu: '100m' }, limits: { 'example.com/gpu': '1' } } };
    const res = await env.plinth.client.post(podsIn('ert'), pod('gpu', {}, gpu));
    expectCode(res, 201);
    assert.deepEqual(
      res.body.spec.tolerations.filter((t: { key?: string }) => t.key === 'example.com/gpu'),
      [{ key: 'example.com/gpu', operator: 'Exists', effect: 'NoSchedule' }],
    );
  });

  it('DenyServiceExternalIPs refuses new external IPs, allows keeping them', async () => {
    await namespace('dse');
    const svc = (name: string, externalIPs?: string[]) => ({ apiVersion: 'v1', kind: 'Service', metadata: { name }, spec: { ports: [{ port: 80 }], ...(externalIPs ? { externalIPs } : {}) } });
    expectStatus(await env.plinth.client.post('/api/v1/namespaces/dse/services', svc('ext', ['1.2.3.4'])), 403, 'Forbidden', 'services "ext" is forbidden: Use of external IPs is denied by admission control');
    const plain = await env.plinth.client.post('/api/v1/namespaces/dse/services', svc('plain'));
    expectCode(plain, 201);
    const added = { ...plain.body, spec: { ...plain.body.spec, externalIPs: ['5.6.7.8'] } };
    expectStatus(await env.plinth.client.put('/api/v1/namespaces/dse/services/plain', added), 403, 'Forbidden', 'services "plain" is forbidden: Use of external IPs is denied by admission control');
  });

  it('PodNodeSelector merges the namespace\'s selector (else the cluster default), refuses conflicts and selectors outside the whitelist', async () => {
    await namespace('pns', { 'scheduler.alpha.kubernetes.io/node-selector': 'disk=ssd' });
    const merged = await env.plinth.client.post(podsIn('pns'), pod('m', { nodeSelector: { gpu: 'yes' } }));
    expectCode(merged, 201);
    assert.deepEqual(merged.body.spec.nodeSelector, { disk: 'ssd', gpu: 'yes' });
    expectStatus(
      await env.plinth.client.post(podsIn('pns'), pod('c', { nodeSelector: { disk: 'hdd' } })),
      403,
      'Forbidden',
      'pods "c" is forbidden: pod node label selector conflicts with its namespace node label selector',
    );
    await namespace('pns-default');
    const dflt = await env.plinth.client.post(podsIn('pns-default'), pod('d'));
    expectCode(dflt, 201);
    assert.deepEqual(dflt.body.spec.nodeSelector, { tier: 'general' });
    // pns-white's whitelist is zone=a: the cluster default (tier=general) is outside it.
    await namespace('pns-white', { 'scheduler.alpha.kubernetes.io/node-selector': '' });
    expectStatus(
      await env.plinth.client.post(podsIn('pns-white'), pod('w', { nodeSelector: { zone: 'b' } })),
      403,
      'Forbidden',
      'pods "w" is forbidden: pod node label selector labels conflict with its namespace whitelist',
    );
    expectCode(await env.plinth.client.post(podsIn('pns-white'), pod('w', { nodeSelector: { zone: 'a' } })), 201);
  });

  it('PodTolerationRestriction adds the namespace\'s default tolerations (and memory-pressure unless BestEffort) and enforces its whitelist', async () => {
    await namespace('ptr', {
      'scheduler.alpha.kubernetes.io/defaultTolerations': '[{"key":"dedicated","operator":"Equal","value":"db","effect":"NoSchedule"}]',
      // NoExecute tolerations stay allowed (DefaultTolerationSeconds may add not-ready/unreachable ones).
      'scheduler.alpha.kubernetes.io/tolerationsWhitelist': '[{"key":"dedicated","operator":"Equal","value":"db"},{"key":"node.kubernetes.io/memory-pressure","operator":"Exists"},{"operator":"Exists","effect":"NoExecute"}]',
    });
    const keys = (res: { body: { spec: { tolerations?: Array<{ key?: string }> } } }) => (res.body.spec.tolerations ?? []).map((t) => t.key).filter((k) => k === 'dedicated' || k === 'node.kubernetes.io/memory-pressure');
    const be = await env.plinth.client.post(podsIn('ptr'), pod('be'));
    expectCode(be, 201);
    assert.deepEqual(keys(be), ['dedicated']);
    const bu = await env.plinth.client.post(podsIn('ptr'), pod('bu', {}, { resources: { requests: { cpu: '100m' } } }));
    expectCode(bu, 201);
    assert.deepEqual(keys(bu), ['dedicated', 'node.kubernetes.io/memory-pressure']);
    // kube refuses with a plain error, which its handler answers as a 500 without a reason.
    expectStatus(
      await env.plinth.client.post(podsIn('ptr'), pod('other', { tolerations: [{ key: 'other', operator: 'Exists', effect: 'NoSchedule' }] })),
      500,
      '',
      'pod tolerations (possibly merged with namespace default tolerations) conflict with its namespace whitelist',
    );
  });
});
