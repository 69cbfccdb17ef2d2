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

const benchModule = <T>(path: string): Promise<T> => import(new URL(`../../bench/dist/${path}`, import.meta.url).href) as Promise<T>;
const { runDensity } = await benchModule<typeof DensityModule>('hollow/density.js');
const { createIdentities, writeTokenFile } = await benchModule<typeof IdentitiesModule>('hollow/identities.js');
const { formatSlos } = await benchModule<typeof SloModule>('hollow/slo.js');
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
});
