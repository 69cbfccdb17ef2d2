/**
 * Issue 28 §1, the bounded smoke of the hollow cluster (bench/hollow/): 5 hollow nodes, each with
 * its own `system:node:<name>` token (plinth runs with `--authorization-mode=Node,RBAC`), the
 * scheduler and Deployment/ReplicaSet controller stand-ins with their kube identities, and 15 pods
 * through one Deployment. Every pod must be bound, reach Running, be seen by its node's
 * `spec.nodeName` watch, and be collected when the Deployment is deleted (plinth's garbage
 * collector, then the node's DELETE); the run produces the SLO report from plinth's metrics.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir, usePlinth } from './harness.js';
// The generator is bench code (bench/hollow/, built by `tsc -b` before the tests): types from its
// declarations here, the modules loaded beside this file's compiled copy (test/dist/).
import type * as DensityModule from '../bench/dist/hollow/density.js';
import type * as IdentitiesModule from '../bench/dist/hollow/identities.js';
import type * as SloModule from '../bench/dist/hollow/slo.js';
import type * as HttpModule from '../bench/dist/lib/http.js';
import type * as ClientModule from '../bench/dist/hollow/client.js';

const benchModule = <T>(path: string): Promise<T> => import(new URL(`../../bench/dist/${path}`, import.meta.url).href) as Promise<T>;
const { runDensity } = await benchModule<typeof DensityModule>('hollow/density.js');
const { createIdentities, writeTokenFile } = await benchModule<typeof IdentitiesModule>('hollow/identities.js');
const { formatSlos, histogramQuantile, sloThreshold, parseDurationBuckets, diffBuckets } = await benchModule<typeof SloModule>('hollow/slo.js');
const { requestKey } = await benchModule<typeof ClientModule>('hollow/client.js');
const { parseKubeconfig } = await benchModule<typeof HttpModule>('lib/http.js');

const ids = createIdentities(5);
const tokenFile = join(tempDir('plinth-hollow-'), 'tokens.csv');
writeTokenFile(tokenFile, ids);
const env = usePlinth([`--token-auth-file=${tokenFile}`, '--authorization-mode=Node,RBAC']);

describe('hollow cluster smoke (5 nodes × 3 pods through a Deployment)', () => {
  it('runs every pod, every node sees its pods, the Deployment deletion collects everything, and reports the SLOs', async () => {
    const kc = parseKubeconfig(readFileSync(env.plinth.server.kubeconfigPath, 'utf8'));
    const report = await runDensity({
      info: { server: kc.server, caPem: kc.caPem },
      adminToken: kc.token,
      ids,
      nodes: 5,
      podsPerNode: 3,
      namespacePrefix: 'hollow-smoke',
      phaseTimeoutMs: 30_000,
    });
    const summary = `${JSON.stringify({ ...report, slos: undefined }, null, 1)}\n${formatSlos(report.slos)}`;
    assert.deepEqual(report.errors, [], summary);
    assert.equal(report.podsWanted, 15);
    assert.equal(report.podsRunning, 15, summary);
    assert.equal(report.bindings, 15, summary);
    assert.deepEqual(report.ledger, { bound: 15, seenByItsNode: 15, seenDeleted: 15, missing: [] }, summary);
    assert.equal(report.allDeleted, true, summary);
    assert.equal(report.held, true, summary);

    // The SLO report: plinth's own histogram per kube key, the hollow actors' calls among them.
    const keys = new Map(report.slos.map((k) => [k.key, k]));
    for (const key of ['POST nodes resource', 'POST pods/binding resource', 'PATCH pods/status resource', 'DELETE pods resource', 'LIST pods cluster']) {
      const k = keys.get(key);
      assert.ok(k && k.count > 0 && k.thresholdS > 0 && k.client, `${key} in the SLO report:\n${formatSlos(report.slos)}`);
    }
    assert.equal(keys.get('POST pods/binding resource')!.count, 15);
    assert.equal(keys.get('LIST pods cluster')!.thresholdS, 30);

    // Registered with the nodes' own identities; the collector removed the ReplicaSet and pods.
    const nodes = await env.plinth.client.get('/api/v1/nodes');
    assert.deepEqual(((nodes.body as { items: Array<{ metadata: { name: string } }> }).items.map((n) => n.metadata.name)).sort(), ids.nodes.map((n) => n.name).sort());
    const lease = await env.plinth.client.get('/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/hollow-node-0');
    assert.equal(lease.status, 200);
    for (const path of ['/apis/apps/v1/namespaces/hollow-smoke-0/replicasets', '/api/v1/namespaces/hollow-smoke-0/pods', '/apis/apps/v1/namespaces/hollow-smoke-0/deployments']) {
      const r = await env.plinth.client.get(path);
      assert.deepEqual((r.body as { items: unknown[] }).items, [], path);
    }
  });

  it('computes SLO keys and percentiles as kube and ClusterLoader2 do', () => {
    // apiserver metrics.go CleanScope (1.24): a create is `resource` scoped; a GET without a name is a LIST.
    assert.equal(requestKey('POST', '/api/v1/namespaces/a/pods'), 'POST pods resource');
    assert.equal(requestKey('GET', '/api/v1/pods?fieldSelector=spec.nodeName%3Dn'), 'LIST pods cluster');
    assert.equal(requestKey('GET', '/api/v1/namespaces/a/pods'), 'LIST pods namespace');
    assert.equal(requestKey('PATCH', '/api/v1/namespaces/a/pods/p/status'), 'PATCH pods/status resource');
    assert.equal(requestKey('PUT', '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n'), 'PUT leases resource');
    assert.equal(requestKey('DELETE', '/apis/apps/v1/namespaces/a/deployments'), 'DELETECOLLECTION deployments namespace');
    // CL2 getSLOThreshold: 1 s, LIST namespace 5 s, LIST cluster 30 s.
    assert.deepEqual(['GET pods resource', 'LIST pods namespace', 'LIST pods cluster'].map(sloThreshold), [1, 5, 30]);
    // Prometheus histogram_quantile: linear within the bucket; the +Inf bucket answers the top bound.
    const b = new Map([[0.05, 90], [0.1, 99], [0.2, 100], [Infinity, 100]]);
    assert.ok(Math.abs(histogramQuantile(0.99, b) - 0.1) < 1e-9);
    assert.ok(Math.abs(histogramQuantile(0.5, b) - 0.05 * (50 / 90)) < 1e-9);
    assert.equal(histogramQuantile(0.99, new Map([[1, 0], [60, 10], [Infinity, 100]])), 60);
    // Scrapes: WATCH and CONNECT-like subresources left out, buckets diffed between two scrapes.
    const scrape = (n: number): string =>
      [
        `apiserver_request_duration_seconds_bucket{component="apiserver",dry_run="",group="",resource="pods",scope="resource",subresource="binding",verb="POST",version="v1",le="0.05"} ${n}`,
        `apiserver_request_duration_seconds_bucket{component="apiserver",dry_run="",group="",resource="pods",scope="resource",subresource="binding",verb="POST",version="v1",le="+Inf"} ${n}`,
        'apiserver_request_duration_seconds_bucket{component="apiserver",dry_run="",group="",resource="pods",scope="cluster",subresource="",verb="WATCH",version="v1",le="+Inf"} 7',
        'apiserver_request_duration_seconds_bucket{component="apiserver",dry_run="",group="",resource="pods",scope="resource",subresource="exec",verb="CONNECT",version="v1",le="+Inf"} 7',
      ].join('\n');
    const d = diffBuckets(parseDurationBuckets(scrape(12)), parseDurationBuckets(scrape(2)));
    assert.deepEqual([...d.keys()], ['POST pods/binding resource']);
    assert.equal(d.get('POST pods/binding resource')!.get(Infinity), 10);
  });
});
