/**
 * policy on a real server: PodDisruptionBudgets in v1 and v1beta1 over one storage version with
 * kube's empty-selector rule, validation causes, status isolation and generation, the printer;
 * PodSecurityPolicies (policy/v1beta1, deprecated); pods/eviction checking budgets as kube's
 * EvictionREST (429 with the DisruptionBudget cause, or 201 with the budget decremented and the
 * pod recorded); kubectl create pdb and get pdb,hpa.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { kubectlPath, usePlinth } from './harness.js';
import { causeFields, expectCode, expectStatus } from './assertions.js';

const env = usePlinth();
const NS = '/namespaces/default';
const pdbPath = (v: string, name = ''): string => `/apis/policy/${v}${NS}/poddisruptionbudgets${name ? `/${name}` : ''}`;
type Obj = Record<string, any>;
const MARKER = 'pdb.kubernetes.io/deprecated-v1beta1-empty-selector-match';

function kubectl(...args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(kubectlPath(), ['--kubeconfig', env.plinth.server.kubeconfigPath, ...args], { encoding: 'utf8', timeout: 60_000 }, (err, stdout, stderr) =>
      err ? reject(new Error(`kubectl ${args.join(' ')}: ${stderr}`)) : resolve(stdout),
    );
  });
}

const pdb = (v: string, name: string, spec: Obj): Obj => ({ apiVersion: `policy/${v}`, kind: 'PodDisruptionBudget', metadata: { name }, spec });

async function runningPod(name: string, labels: Record<string, string>): Promise<void> {
  const created = await env.plinth.client.post(`/api/v1${NS}/pods`, { apiVersion: 'v1', kind: 'Pod', metadata: { name, labels }, spec: { containers: [{ name: 'c', image: 'nginx' }] } });
  expectCode(created, 201);
  const st = await env.plinth.client.put(`/api/v1${NS}/pods/${name}/status`, { ...created.body, status: { phase: 'Running' } });
  expectCode(st, 200);
}

const evict = (name: string): Promise<any> =>
  env.plinth.client.post(`/api/v1${NS}/pods/${name}/eviction`, { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name } });

describe('policy', () => {
  it('serves PDBs in v1 and v1beta1 with the empty-selector rule', async () => {
    const beta = await env.plinth.client.post(pdbPath('v1beta1'), pdb('v1beta1', 'none', { minAvailable: 1, selector: {} }));
    expectCode(beta, 201);
    assert.equal(beta.headers['warning'], '299 - "policy/v1beta1 PodDisruptionBudget is deprecated in v1.21+, unavailable in v1.25+; use policy/v1 PodDisruptionBudget"');
    assert.deepEqual(beta.body.spec.selector, {}, 'v1beta1 reads its own empty selector back');
    const asV1 = await env.plinth.client.get(pdbPath('v1', 'none'));
    assert.deepEqual(asV1.body.spec.selector, { matchExpressions: [{ key: MARKER, operator: 'Exists' }] }, 'v1 sees a selector that matches nothing');

    const all = await env.plinth.client.post(pdbPath('v1'), pdb('v1', 'all', { maxUnavailable: '50%', selector: {} }));
    expectCode(all, 201);
    assert.equal(all.body.metadata.generation, 1);
    const allBeta = await env.plinth.client.get(pdbPath('v1beta1', 'all'));
    assert.deepEqual(allBeta.body.spec.selector, { matchExpressions: [{ key: MARKER, operator: 'DoesNotExist' }] }, 'v1beta1 sees a selector that matches every pod');
    const put = await env.plinth.client.put(pdbPath('v1beta1', 'all'), allBeta.body);
    expectCode(put, 200);
    assert.deepEqual((await env.plinth.client.get(pdbPath('v1', 'all'))).body.spec.selector, {}, 'and writes it back as v1\'s empty selector');
  });

  it('validates PDBs with kube\'s causes and isolates status', async () => {
    const bad = await env.plinth.client.post(pdbPath('v1'), pdb('v1', 'bad', { minAvailable: '120%', maxUnavailable: -1, selector: { matchLabels: { app: 'a' } } }));
    expectStatus(bad, 422, 'Invalid');
    assert.deepEqual(causeFields(bad), ['spec', 'spec.minAvailable', 'spec.maxUnavailable']);
    assert.match(bad.body.message, /spec\.minAvailable: Invalid value: .*must not be greater than 100%/);
    const pct = await env.plinth.client.post(pdbPath('v1'), pdb('v1', 'bad2', { minAvailable: 'x%' }));
    expectStatus(pct, 422, 'Invalid', /a valid percent string must be a numeric string followed by an ending '%'/);

    const created = await env.plinth.client.post(pdbPath('v1'), { ...pdb('v1', 'iso', { minAvailable: 1, selector: { matchLabels: { app: 'iso' } } }), status: { disruptionsAllowed: 5 } });
    expectCode(created, 201);
    assert.equal(created.body.status.disruptionsAllowed, 0);
    const spec = await env.plinth.client.put(pdbPath('v1', 'iso'), { ...created.body, spec: { ...created.body.spec, minAvailable: 2 } });
    expectCode(spec, 200);
    assert.equal(spec.body.metadata.generation, 2);
    const st = await env.plinth.client.put(pdbPath('v1', 'iso') + '/status', { ...spec.body, spec: { ...spec.body.spec, minAvailable: 9 }, status: { disruptionsAllowed: 1, observedGeneration: 2 } });
    expectCode(st, 200);
    assert.equal(st.body.spec.minAvailable, 2);
    assert.equal(st.body.metadata.generation, 2);
    const table = await env.plinth.client.get(pdbPath('v1', 'iso'), { headers: { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' } });
    assert.deepEqual(table.body.columnDefinitions.map((c: Obj) => c.name), ['Name', 'Min Available', 'Max Unavailable', 'Allowed Disruptions', 'Age']);
    assert.deepEqual(table.body.rows[0].cells.slice(0, 4), ['iso', '2', 'N/A', 1]);
  });

  it('serves PodSecurityPolicies in policy/v1beta1, cluster-scoped and deprecated', async () => {
    const psp = { apiVersion: 'policy/v1beta1', kind: 'PodSecurityPolicy', metadata: { name: 'restricted' }, spec: { runAsUser: { rule: 'MustRunAsNonRoot' }, seLinux: { rule: 'RunAsAny' }, supplementalGroups: { rule: 'MustRunAs', ranges: [{ min: 1, max: 65535 }] }, fsGroup: { rule: 'RunAsAny' } } };
    const created = await env.plinth.client.post('/apis/policy/v1beta1/podsecuritypolicies', psp);
    expectCode(created, 201);
    assert.equal(created.headers['warning'], '299 - "policy/v1beta1 PodSecurityPolicy is deprecated in v1.21+, unavailable in v1.25+"');
    const bad = await env.plinth.client.post('/apis/policy/v1beta1/podsecuritypolicies', { ...psp, metadata: { name: 'bad' }, spec: { ...psp.spec, runAsUser: { rule: 'Nope' }, fsGroup: { rule: 'MustRunAs', ranges: [{ min: 5, max: 2 }] } } });
    expectStatus(bad, 422, 'Invalid');
    assert.deepEqual(causeFields(bad), ['spec.runAsUser.rule', 'spec.fsGroup.ranges[0].min']);
    const disc = await env.plinth.client.get('/apis/policy/v1beta1');
    const r = disc.body.resources.find((x: Obj) => x.name === 'podsecuritypolicies');
    assert.equal(r.namespaced, false);
    assert.deepEqual(r.shortNames, ['psp']);
  });

  it('evicts through budgets: 429 at zero, else decrement and record the pod', async () => {
    await runningPod('e1', { app: 'evict' });
    await runningPod('e2', { app: 'evict' });
    const created = await env.plinth.client.post(pdbPath('v1'), pdb('v1', 'evict', { minAvailable: 1, selector: { matchLabels: { app: 'evict' } } }));
    expectCode(created, 201);
    // The controller has not observed the budget yet: kube refuses.
    const pending = await evict('e1');
    expectStatus(pending, 429, 'TooManyRequests', "Cannot evict pod as it would violate the pod's disruption budget.");
    assert.deepEqual(pending.body.details.causes, [{ reason: 'DisruptionBudget', message: 'The disruption budget evict is still being processed by the server.' }]);
    const st = await env.plinth.client.put(pdbPath('v1', 'evict') + '/status', { ...created.body, status: { observedGeneration: 1, disruptionsAllowed: 1, currentHealthy: 2, desiredHealthy: 1, expectedPods: 2 } });
    expectCode(st, 200);
    const ok = await evict('e1');
    expectCode(ok, 201);
    const after = await env.plinth.client.get(pdbPath('v1', 'evict'));
    assert.equal(after.body.status.disruptionsAllowed, 0);
    assert.ok(after.body.status.disruptedPods.e1, 'the evicted pod is recorded with its eviction time');
    expectCode(await env.plinth.client.get(`/api/v1${NS}/pods/e1`), 404);
    const refused = await evict('e2');
    expectStatus(refused, 429, 'TooManyRequests');
    assert.deepEqual(refused.body.details.causes, [{ reason: 'DisruptionBudget', message: 'The disruption budget evict needs 1 healthy pods and has 2 currently' }]);
    expectCode(await env.plinth.client.get(`/api/v1${NS}/pods/e2`), 200);
  });

  it('kubectl create pdb and get pdb,hpa', async () => {
    const out = await kubectl('create', 'pdb', 'x', '--selector=app=a', '--min-available=1');
    assert.match(out, /poddisruptionbudget.policy\/x created/);
    const got = await kubectl('get', 'pdb,hpa');
    assert.match(got, /NAME\s+MIN AVAILABLE\s+MAX UNAVAILABLE\s+ALLOWED DISRUPTIONS\s+AGE/);
    assert.match(got, /poddisruptionbudget.policy\/x\s+1\s+N\/A\s+0\s+/);
  });
});
