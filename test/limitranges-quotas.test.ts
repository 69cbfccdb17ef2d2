/**
 * core/v1 LimitRanges and ResourceQuotas on a real server (groups/core/limitranges.ts,
 * resourcequotas.ts): kube 1.24's defaults, validation causes, update rules (quota scopes
 * immutable, status isolation both ways), create on update and UUID names for LimitRanges,
 * kubectl's columns (with PVs and PVCs in one `kubectl get`), `kubectl describe quota`, field
 * selectors and Protobuf.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { decodeProtobuf } from '@plinth/apiserver';
import { eventually, kubectlPath, usePlinth } from './harness.js';
import { causeFields, expectCode, expectStatus } from './assertions.js';

const env = usePlinth();
const NS = 'default';
const LR = `/api/v1/namespaces/${NS}/limitranges`;
const RQ = `/api/v1/namespaces/${NS}/resourcequotas`;

function kubectl(...args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(kubectlPath(), ['--kubeconfig', env.plinth.server.kubeconfigPath, ...args], { encoding: 'utf8', timeout: 60_000 }, (err, stdout, stderr) =>
      err ? reject(new Error(`kubectl ${args.join(' ')}: ${stderr}`)) : resolve(stdout),
    );
  });
}

type Causes = Array<{ field: string; reason: string; message: string }>;
type Named = { metadata: { name: string } };

describe('limitranges', () => {
  it('are served in discovery as kube serves them', async () => {
    const res = await env.plinth.client.get('/api/v1');
    const all = res.body.resources as Array<Record<string, unknown>>;
    const lr = all.find((x) => x['name'] === 'limitranges');
    assert.ok(lr);
    assert.deepEqual(lr['shortNames'], ['limits']);
    assert.equal(lr['namespaced'], true);
    assert.deepEqual(lr['verbs'], ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch']);
    assert.equal(all.some((x) => x['name'] === 'limitranges/status'), false);
  });

  it("get kube's container defaults from max and min, in canonical quantities", async () => {
    const created = await env.plinth.client.post(LR, {
      apiVersion: 'v1',
      kind: 'LimitRange',
      metadata: { name: 'compute' },
      spec: {
        limits: [
          { type: 'Container', max: { cpu: '2000m', memory: '1.5Gi' }, min: { cpu: '100m', memory: '64Mi' }, defaultRequest: { memory: '128Mi' } },
          { type: 'PersistentVolumeClaim', max: { storage: '10Gi' } },
        ],
      },
    });
    expectCode(created, 201);
    const [container, claims] = created.body.spec.limits;
    assert.deepEqual(container.max, { cpu: '2', memory: '1536Mi' });
    assert.deepEqual(container.default, { cpu: '2', memory: '1536Mi' }, 'the default limit is the max');
    assert.deepEqual(container.defaultRequest, { memory: '128Mi', cpu: '2' }, 'the default request is the default limit');
    assert.equal(claims.default, undefined, 'only Container items get defaults');
  });

  it('name an unnamed LimitRange with a UUID and create one on update', async () => {
    const unnamed = await env.plinth.client.post(LR, { apiVersion: 'v1', kind: 'LimitRange', metadata: {}, spec: { limits: [{ type: 'Pod', max: { cpu: '4' } }] } });
    expectCode(unnamed, 201);
    assert.match(unnamed.body.metadata.name, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expectCode(await env.plinth.client.delete(`${LR}/${unnamed.body.metadata.name}`), 200);

    const put = await env.plinth.client.put(`${LR}/by-put`, { apiVersion: 'v1', kind: 'LimitRange', metadata: { name: 'by-put' }, spec: { limits: [{ type: 'Pod', max: { memory: '1Gi' } }] } });
    expectCode(put, 201);
  });

  it("refuse bad limits with kube's causes", async () => {
    const res = await env.plinth.client.post(LR, {
      apiVersion: 'v1',
      kind: 'LimitRange',
      metadata: { name: 'bad' },
      spec: {
        limits: [
          { type: 'Container', max: { cpu: '1' }, min: { cpu: '2' } },
          { type: 'Pod', default: { cpu: '1' }, maxLimitRequestRatio: { cpu: '0.5' } },
          { type: 'PersistentVolumeClaim', min: { cpu: '1' } },
          { type: 'Pod' },
        ],
      },
    });
    expectStatus(res, 422, 'Invalid', /^LimitRange "bad" is invalid: \[spec\.limits\[0\]\.min\[cpu\]: Invalid value: resource\.Quantity\{i:resource\.int64Amount\{value:2, scale:0\}, d:resource\.infDecAmount\{Dec:\(\*inf\.Dec\)\(nil\)\}, s:"2", Format:"DecimalSI"\}: min value 2 is greater than max value 1, /);
    assert.deepEqual(causeFields(res), [
      'spec.limits[0].min[cpu]',
      'spec.limits[0].defaultRequest[cpu]',
      'spec.limits[0].default[cpu]',
      'spec.limits[1].default',
      'spec.limits[1].maxLimitRequestRatio[cpu]',
      'spec.limits[2].limits',
      'spec.limits[3].type',
    ]);
    const causes = res.body.details.causes as Causes;
    // kube prints a Quantity bad value with Go's %#v.
    assert.equal(
      causes[1]!.message,
      'Invalid value: resource.Quantity{i:resource.int64Amount{value:1, scale:0}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:"1", Format:"DecimalSI"}: min value 2 is greater than default request value 1',
    );
    assert.equal(causes[3]!.message, "Forbidden: may not be specified when `type` is 'Pod'");
    assert.match(causes[4]!.message, /^Invalid value: resource\.Quantity\{i:resource\.int64Amount\{value:500, scale:-3\}, .*\}: ratio 500m is less than 1$/);
    assert.equal(causes[5]!.message, 'Required value: either minimum or maximum storage value is required, but neither was provided');
    assert.equal(causes[6]!.message, 'Duplicate value: "Pod"');

    const cur = (await env.plinth.client.get(`${LR}/compute`)).body;
    cur.spec.limits[0].min.cpu = '3';
    expectStatus(await env.plinth.client.put(`${LR}/compute`, cur), 422, 'Invalid', /min value 3 is greater than max value 2/);
  });
});

describe('resourcequotas', () => {
  it('are served in discovery as kube serves them', async () => {
    const res = await env.plinth.client.get('/api/v1');
    const all = res.body.resources as Array<Record<string, unknown>>;
    const rq = all.find((x) => x['name'] === 'resourcequotas');
    assert.ok(rq);
    assert.deepEqual(rq['shortNames'], ['quota']);
    assert.deepEqual(rq['verbs'], ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch']);
    assert.deepEqual(all.find((x) => x['name'] === 'resourcequotas/status')?.['verbs'], ['get', 'patch', 'update']);
  });

  it('start with an empty status, hard amounts in canonical quantities', async () => {
    const created = await env.plinth.client.post(RQ, {
      apiVersion: 'v1',
      kind: 'ResourceQuota',
      metadata: { name: 'team' },
      spec: { hard: { 'requests.cpu': '1000m', 'limits.memory': '2048Mi', pods: '10', 'count/deployments.apps': '3' } },
      status: { hard: { pods: '1' }, used: { pods: '0' } },
    });
    expectCode(created, 201);
    assert.deepEqual(created.body.spec.hard, { 'requests.cpu': '1', 'limits.memory': '2Gi', pods: '10', 'count/deployments.apps': '3' });
    assert.deepEqual(created.body.status, {}, 'the status starts empty: the quota controller fills it in afterwards');
  });

  it("refuse bad names, quantities and scopes with kube's causes", async () => {
    const res = await env.plinth.client.post(RQ, {
      apiVersion: 'v1',
      kind: 'ResourceQuota',
      metadata: { name: 'bad' },
      spec: { hard: { cpus: '1', pods: '1.5', memory: '-1' }, scopes: ['BestEffort', 'NotBestEffort'] },
    });
    expectStatus(res, 422, 'Invalid', /^ResourceQuota "bad" is invalid: \[/);
    const causes = res.body.details.causes as Causes;
    assert.deepEqual(
      causes.map((c) => [c.field, c.message]),
      [
        ['spec.hard[cpus]', 'Invalid value: "cpus": must be a standard resource type or fully qualified'],
        ['spec.hard[cpus]', 'Invalid value: "cpus": must be a standard resource for quota'],
        ['spec.hard[memory]', 'Invalid value: "-1": must be greater than or equal to 0'],
        ['spec.hard[pods]', 'Invalid value: resource.Quantity{i:resource.int64Amount{value:1500, scale:-3}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:"1500m", Format:"DecimalSI"}: must be an integer'],
        ['spec.scopes', 'Invalid value: []core.ResourceQuotaScope{"BestEffort", "NotBestEffort"}: unsupported scope applied to resource'],
        ['spec.scopes', 'Invalid value: []core.ResourceQuotaScope{"BestEffort", "NotBestEffort"}: conflicting scopes'],
      ],
    );
  });

  it('keep scopes immutable, status on /status only and spec away from /status', async () => {
    // Once the quota controller has written the status, nothing else writes this quota.
    const cur = await eventually(async () => {
      const q = (await env.plinth.client.get(`${RQ}/team`)).body;
      return q.status?.hard ? q : undefined;
    }, 10_000, 'the quota controller');
    const scoped = structuredClone(cur);
    scoped.spec.scopes = ['NotTerminating'];
    expectStatus(
      await env.plinth.client.put(`${RQ}/team`, scoped),
      422,
      'Invalid',
      'ResourceQuota "team" is invalid: spec.scopes: Invalid value: []core.ResourceQuotaScope{"NotTerminating"}: field is immutable',
    );

    const st = structuredClone(cur);
    st.spec.hard.pods = '99';
    st.status = {
      hard: { 'requests.cpu': '1', 'limits.memory': '2Gi', pods: '10', 'count/deployments.apps': '3' },
      used: { 'requests.cpu': '250m', 'limits.memory': '512Mi', pods: '2', 'count/deployments.apps': '1' },
    };
    const sres = await env.plinth.client.put(`${RQ}/team/status`, st);
    expectCode(sres, 200);
    assert.equal(sres.body.spec.hard.pods, '10', '/status keeps the spec');
    assert.equal(sres.body.status.used['requests.cpu'], '250m');

    const main = structuredClone(sres.body);
    main.spec.hard.pods = '20';
    main.status.used.pods = '7';
    const mres = await env.plinth.client.put(`${RQ}/team`, main);
    expectCode(mres, 200);
    assert.equal(mres.body.spec.hard.pods, '20');
    assert.equal(mres.body.status.used.pods, '2', 'the resource keeps the status');

    // The controller recalculates the usage of the new hard limits: the real counts replace the ones written above.
    const synced = await eventually(async () => {
      const q = (await env.plinth.client.get(`${RQ}/team`)).body;
      return q.status.hard.pods === '20' && q.status.used.pods === '0' ? q : undefined;
    }, 10_000, 'the recalculated quota');
    assert.deepEqual(synced.status.used, { 'requests.cpu': '0', 'limits.memory': '0', pods: '0', 'count/deployments.apps': '0' });
    const badStatus = structuredClone(synced);
    badStatus.status.used.pods = '-3';
    expectStatus(await env.plinth.client.put(`${RQ}/team/status`, badStatus), 422, 'Invalid', 'ResourceQuota "team" is invalid: status.used[pods]: Invalid value: "-3": must be greater than or equal to 0');
  });

  it("print kube's columns for pv, pvc, limits and quota in one kubectl get, and describe a quota", async () => {
    expectCode(
      await env.plinth.client.post('/api/v1/persistentvolumes', {
        apiVersion: 'v1',
        kind: 'PersistentVolume',
        metadata: { name: 'disk' },
        spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], nfs: { server: 'nfs.example', path: '/x' } },
      }),
      201,
    );
    expectCode(
      await env.plinth.client.post(`/api/v1/namespaces/${NS}/persistentvolumeclaims`, {
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        metadata: { name: 'claim' },
        spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
      }),
      201,
    );
    const out = await kubectl('get', 'pv,pvc,limits,quota', '-n', NS);
    const blocks = out.trimEnd().split('\n\n').map((b) => b.split('\n'));
    assert.equal(blocks.length, 4);
    assert.match(blocks[0]![0]!, /^NAME\s+CAPACITY\s+ACCESS MODES\s+RECLAIM POLICY\s+STATUS\s+CLAIM\s+STORAGECLASS\s+REASON\s+AGE$/);
    assert.match(blocks[0]![1]!, /^persistentvolume\/disk\s+1Gi\s+RWO\s+Retain\s+Pending\s+\d+s$/);
    assert.match(blocks[1]![0]!, /^NAME\s+STATUS\s+VOLUME\s+CAPACITY\s+ACCESS MODES\s+STORAGECLASS\s+AGE$/);
    assert.match(blocks[1]![1]!, /^persistentvolumeclaim\/claim\s+Pending\s+\d+s$/);
    assert.match(blocks[2]![0]!, /^NAME\s+CREATED AT$/);
    assert.match(blocks[2]![1]!, /^limitrange\/by-put\s+\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.match(blocks[3]![0]!, /^NAME\s+AGE\s+REQUEST\s+LIMIT$/);
    assert.match(blocks[3]![1]!, /^resourcequota\/team\s+\d+s\s+count\/deployments\.apps: 0\/3, pods: 0\/20, requests\.cpu: 0\/1\s+limits\.memory: 0\/2Gi$/);

    const described = await kubectl('describe', 'quota', 'team', '-n', NS);
    assert.match(described, /^Name:\s+team$/m);
    assert.match(described, /^Resource\s+Used\s+Hard$/m);
    assert.match(described, /^requests\.cpu\s+0\s+1$/m);
    assert.match(described, /^pods\s+0\s+20$/m);
  });

  it('select by metadata fields only, and answer in Protobuf', async () => {
    const byName = await env.plinth.client.get(`${RQ}?fieldSelector=metadata.name%3Dteam`);
    expectCode(byName, 200);
    assert.deepEqual(byName.body.items.map((i: Named) => i.metadata.name), ['team']);
    expectStatus(await env.plinth.client.get(`${RQ}?fieldSelector=spec.hard%3D1`), 400, 'BadRequest', '"spec.hard" is not a known field selector: only "metadata.name", "metadata.namespace"');
    const lrs = await env.plinth.client.get(`${LR}?fieldSelector=metadata.name!%3Dcompute`);
    assert.deepEqual(lrs.body.items.map((i: Named) => i.metadata.name), ['by-put']);

    const pb = await env.plinth.client.get(`${RQ}/team`, { headers: { accept: 'application/vnd.kubernetes.protobuf' } });
    expectCode(pb, 200);
    const quota = decodeProtobuf(pb.raw) as { kind: string; spec: { hard: Record<string, string> }; status: { used: Record<string, string> } };
    assert.equal(quota.kind, 'ResourceQuota');
    assert.equal(quota.spec.hard['requests.cpu'], '1');
    assert.equal(quota.status.used['limits.memory'], '0');
    const lpb = await env.plinth.client.get(`${LR}/compute`, { headers: { accept: 'application/vnd.kubernetes.protobuf' } });
    expectCode(lpb, 200);
    const lr = decodeProtobuf(lpb.raw) as { kind: string; spec: { limits: Array<{ type: string; max: unknown }> } };
    assert.equal(lr.kind, 'LimitRange');
    assert.deepEqual(lr.spec.limits[0]!.max, { cpu: '2', memory: '1536Mi' });
  });
});
