/**
 * The garbage collector (kube-controller-manager 1.24's, in-process on the leader) end to end: a
 * Deployment-like owner with three levels of dependents — custom resources and built-ins,
 * namespaced and cluster-scoped — deleted in each propagation mode (through the API and with
 * kubectl --cascade); kube's namespace rules (owner in another namespace, cluster-scoped
 * dependent of a namespaced owner kind); owners that never existed or were replaced; the
 * metrics; --enable-garbage-collector=false; a leader change in the middle of a foreground
 * deletion.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { eventually, kubectlPath, startInProcess, startTestEtcd, usePlinth, withInProcess, type InProcessPlinth, type TestClient, type TestEtcd } from './harness.js';

const env = usePlinth();
const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const GROUP = 'gc.example.com';
const HOLD = 'gc.example.com/hold';
const NS = 'gc-tree';

type Obj = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string; uid?: string; ownerReferences?: Ref[]; finalizers?: string[]; deletionTimestamp?: string } } & Record<string, unknown>;
type Ref = { apiVersion: string; kind: string; name: string; uid: string; blockOwnerDeletion?: boolean; controller?: boolean };

/** The collection path of a kind (the kinds these tests use). */
function pathOf(apiVersion: string, kind: string, namespace?: string): string {
  const plural: Record<string, string> = { ConfigMap: 'configmaps', Secret: 'secrets', ClusterRole: 'clusterroles', Deployment: 'deployments', App: 'apps', Stack: 'stacks', ClusterThing: 'clusterthings', Event: 'events' };
  const base = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
  return `${base}${namespace ? `/namespaces/${namespace}` : ''}/${plural[kind]}`;
}
const pathOfObj = (o: Obj): string => `${pathOf(o.apiVersion, o.kind, o.metadata.namespace)}/${o.metadata.name}`;

async function create(client: TestClient, o: Obj): Promise<Obj> {
  const r = await client.post(pathOf(o.apiVersion, o.kind, o.metadata.namespace), o);
  assert.equal(r.status, 201, `create ${o.kind} ${o.metadata.name}: ${r.raw.toString()}`);
  return r.body as Obj;
}

const refTo = (o: Obj, block = true): Ref => ({ apiVersion: o.apiVersion, kind: o.kind, name: o.metadata.name, uid: o.metadata.uid!, ...(block ? { blockOwnerDeletion: true } : {}) });

async function read(client: TestClient, o: Obj): Promise<Obj | undefined> {
  const r = await client.get(pathOfObj(o));
  if (r.status === 404) return undefined;
  assert.equal(r.status, 200, r.raw.toString());
  return r.body as Obj;
}

async function gone(client: TestClient, objs: Obj[], what: string, timeoutMs = 20_000): Promise<void> {
  await eventually(async () => (await Promise.all(objs.map((o) => read(client, o)))).every((x) => x === undefined), timeoutMs, what);
}

async function deleteWith(client: TestClient, o: Obj, propagationPolicy: string): Promise<number> {
  return (await client.delete(pathOfObj(o), { body: { apiVersion: 'v1', kind: 'DeleteOptions', propagationPolicy } })).status;
}

async function setFinalizers(client: TestClient, o: Obj, finalizers: string[]): Promise<void> {
  const r = await client.request('PATCH', pathOfObj(o), { body: { metadata: { finalizers } }, headers: { 'content-type': 'application/merge-patch+json' } });
  assert.equal(r.status, 200, r.raw.toString());
}

function kubectl(...args: string[]): Promise<string> {
  return new Promise((resolve, reject) =>
    execFile(kubectlPath(), ['--kubeconfig', env.plinth.server.kubeconfigPath, ...args], { encoding: 'utf8', timeout: 60_000 }, (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout))),
  );
}

async function createCRD(client: TestClient, plural: string, kind: string, scope: 'Namespaced' | 'Cluster'): Promise<void> {
  const name = `${plural}.${GROUP}`;
  const r = await client.post(CRDS, {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name },
    spec: { group: GROUP, scope, names: { plural, singular: kind.toLowerCase(), kind }, versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }] },
  });
  assert.equal(r.status, 201, r.raw.toString());
  await eventually(async () => (await client.get(`${CRDS}/${name}`)).body?.status?.conditions?.some((c: { type: string; status: string }) => c.type === 'Established' && c.status === 'True'), 15_000, `${name} Established`);
}

const cm = (name: string, namespace: string, owners: Ref[] = [], finalizers?: string[]): Obj => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace, ownerReferences: owners, ...(finalizers ? { finalizers } : {}) } });

/**
 * The tree: App (cluster-scoped custom kind, a Deployment stand-in) →
 *   L1: Stack (namespaced CR), ConfigMap, ClusterRole (cluster-scoped built-in)
 *   L2: Secret (of the Stack), ClusterThing (cluster-scoped CR, of the ClusterRole), ConfigMap (of the ClusterRole)
 *   L3: Stack (of the Secret), ConfigMap (of the ClusterThing)
 * every ref blocking unless `nonBlocking` names the object; `finalizers` puts HOLD on named ones.
 */
async function buildTree(client: TestClient, tag: string, opts: { nonBlocking?: string[]; hold?: string[] } = {}): Promise<Record<string, Obj>> {
  const block = (name: string): boolean => !(opts.nonBlocking ?? []).includes(name);
  const fin = (name: string): string[] | undefined => ((opts.hold ?? []).includes(name) ? [HOLD] : undefined);
  const t: Record<string, Obj> = {};
  const mk = async (key: string, o: Obj, owner?: string): Promise<void> => {
    if (owner) o.metadata.ownerReferences = [refTo(t[owner]!, block(key))];
    const f = fin(key);
    if (f) o.metadata.finalizers = f;
    t[key] = await create(client, o);
  };
  await mk('app', { apiVersion: `${GROUP}/v1`, kind: 'App', metadata: { name: `app-${tag}` }, spec: { replicas: 3 } });
  await mk('stack1', { apiVersion: `${GROUP}/v1`, kind: 'Stack', metadata: { name: `stack1-${tag}`, namespace: NS } }, 'app');
  await mk('cm1', cm(`cm1-${tag}`, NS), 'app');
  await mk('role1', { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: `gc-role1-${tag}` }, rules: [] }, 'app');
  await mk('secret2', { apiVersion: 'v1', kind: 'Secret', metadata: { name: `secret2-${tag}`, namespace: NS }, stringData: { a: 'b' } }, 'stack1');
  await mk('thing2', { apiVersion: `${GROUP}/v1`, kind: 'ClusterThing', metadata: { name: `thing2-${tag}` } }, 'role1');
  await mk('cm2', cm(`cm2-${tag}`, NS), 'role1');
  await mk('stack3', { apiVersion: `${GROUP}/v1`, kind: 'Stack', metadata: { name: `stack3-${tag}`, namespace: NS } }, 'secret2');
  await mk('cm3', cm(`cm3-${tag}`, NS), 'thing2');
  return t;
}

const dependentsOf = (t: Record<string, Obj>): Obj[] => Object.entries(t).filter(([k]) => k !== 'app').map(([, o]) => o);

let setupDone: Promise<void> | undefined;
/** The namespaces and CRDs every suite uses, once (root hooks run once per suite). */
function setup(): Promise<void> {
  setupDone ??= (async () => {
  const c = env.plinth.client;
  for (const ns of [NS, 'gc-a', 'gc-b', 'gc-kubectl']) assert.equal((await c.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } })).status, 201);
  await createCRD(c, 'apps', 'App', 'Cluster');
  await createCRD(c, 'stacks', 'Stack', 'Namespaced');
  await createCRD(c, 'clusterthings', 'ClusterThing', 'Cluster');
  })();
  return setupDone;
}

describe('propagation policies over a three-level tree of built-in and custom, namespaced and cluster-scoped dependents', () => {
  before(() => setup());
  it('Background: the owner goes at once, then every dependent at every level', async () => {
    const c = env.plinth.client;
    const t = await buildTree(c, 'bg');
    assert.equal(await deleteWith(c, t['app']!, 'Background'), 200);
    assert.equal(await read(c, t['app']!), undefined, 'the owner is deleted at once');
    await gone(c, dependentsOf(t), 'all dependents collected');
  });

  it('Foreground: the owner waits with foregroundDeletion for its blocking dependents; a non-blocking one may outlive it and is collected', async () => {
    const c = env.plinth.client;
    // cm3 (blocking, at the bottom of App → role1 → thing2 → cm3) and cm1 (not blocking) are held by the test's finalizer.
    const t = await buildTree(c, 'fg', { nonBlocking: ['cm1'], hold: ['cm3', 'cm1'] });
    assert.equal(await deleteWith(c, t['app']!, 'Foreground'), 200);
    // The held bottom dependent is being deleted: the GC went down the chain.
    await eventually(async () => (await read(c, t['cm3']!))?.metadata.deletionTimestamp, 20_000, 'cm3 being deleted');
    await eventually(async () => (await read(c, t['cm1']!))?.metadata.deletionTimestamp, 20_000, 'cm1 being deleted');
    // Everything not held nor waiting is gone; the chain above cm3 waits in the foreground.
    await gone(c, [t['stack1']!, t['secret2']!, t['stack3']!, t['cm2']!], 'the unheld branches collected');
    for (const k of ['app', 'role1', 'thing2']) {
      const o = await read(c, t[k]!);
      assert.ok(o?.metadata.deletionTimestamp, `${k} is being deleted`);
      assert.deepEqual(o?.metadata.finalizers, ['foregroundDeletion'], `${k} waits for its blocking dependents`);
    }
    await setFinalizers(c, t['cm3']!, []);
    await gone(c, [t['cm3']!, t['thing2']!, t['role1']!, t['app']!], 'the chain and the owner gone once the blocking dependent is');
    const cm1 = await read(c, t['cm1']!);
    assert.ok(cm1?.metadata.deletionTimestamp, 'the non-blocking dependent outlived its owner, being deleted');
    await setFinalizers(c, t['cm1']!, []);
    await gone(c, [t['cm1']!], 'the non-blocking dependent collected');
  });

  it('Orphan: the owner goes, its dependents stay without the ownerReference; deeper references are kept', async () => {
    const c = env.plinth.client;
    const t = await buildTree(c, 'or');
    assert.equal(await deleteWith(c, t['app']!, 'Orphan'), 200);
    await gone(c, [t['app']!], 'the owner gone once orphaning is done');
    for (const k of ['stack1', 'cm1', 'role1']) {
      const o = await read(c, t[k]!);
      assert.ok(o, `${k} survives`);
      assert.equal(o.metadata.ownerReferences, undefined, `${k} lost its ownerReference`);
      assert.equal(o.metadata.deletionTimestamp, undefined);
    }
    for (const k of ['secret2', 'thing2', 'cm2', 'stack3', 'cm3']) {
      const o = await read(c, t[k]!);
      assert.equal(o?.metadata.ownerReferences?.length, 1, `${k} keeps its owner`);
    }
    // Cleanup of the cluster-scoped survivors (their dependents follow in the background).
    for (const k of ['role1']) await deleteWith(c, t[k]!, 'Background');
    await gone(c, [t['thing2']!, t['cm2']!, t['cm3']!], 'the survivor subtree collected in turn');
  });
});

describe('kubectl delete --cascade', () => {
  before(() => setup());
  const deployment = (name: string): Obj => ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: 'gc-kubectl' },
    spec: { replicas: 1, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } },
  });

  for (const cascade of ['background', 'foreground', 'orphan'] as const) {
    it(`--cascade=${cascade}`, async () => {
      const c = env.plinth.client;
      const d = await create(c, deployment(`web-${cascade}`));
      const dep = await create(c, cm(`web-${cascade}-conf`, 'gc-kubectl', [{ ...refTo(d), controller: true }]));
      const out = await kubectl('delete', 'deployment', d.metadata.name, '-n', 'gc-kubectl', `--cascade=${cascade}`);
      assert.match(out, new RegExp(`deployment.apps "${d.metadata.name}" deleted`));
      assert.equal(await read(c, d), undefined, 'kubectl waited for the deployment to go');
      if (cascade === 'orphan') {
        const kept = await read(c, dep);
        assert.ok(kept, 'the dependent is orphaned, not deleted');
        assert.equal(kept.metadata.ownerReferences, undefined);
      } else {
        await gone(c, [dep], 'the dependent collected');
      }
    });
  }
});

describe("kube's rules for owners that are not where the reference says", () => {
  before(() => setup());
  it('an owner in another namespace: the dependent is collected, with a Warning OwnerRefInvalidNamespace event as kube writes it', async () => {
    const c = env.plinth.client;
    const owner = await create(c, cm('owner', 'gc-a'));
    // The owner must be in the collector's graph before the dependent names it (kube writes the
    // event only then): a probe ConfigMap created after it, collected, was seen after it.
    const probe = await create(c, cm('probe', 'gc-a', [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'never-there', uid: randomUUID() }]));
    await gone(c, [probe], 'the probe collected');
    const dep = await create(c, cm('dependent', 'gc-b', [refTo(owner)]));
    await gone(c, [dep], 'the dependent of an owner in another namespace collected');
    assert.ok(await read(c, owner), 'the owner is untouched');
    const events = await eventually(async () => {
      const list = (await c.get('/api/v1/namespaces/gc-b/events')).body.items as any[];
      const e = list.filter((x) => x.reason === 'OwnerRefInvalidNamespace' && x.involvedObject.name === 'dependent');
      return e.length > 0 && e;
    }, 10_000, 'the OwnerRefInvalidNamespace event');
    const e = events[0];
    assert.equal(e.type, 'Warning');
    assert.equal(e.message, `ownerRef [v1/ConfigMap, namespace: gc-b, name: owner, uid: ${owner.metadata.uid}] does not exist in namespace "gc-b"`);
    assert.deepEqual(e.source, { component: 'garbage-collector-controller' });
    assert.deepEqual(e.involvedObject, { kind: 'ConfigMap', namespace: 'gc-b', name: 'dependent', uid: dep.metadata.uid, apiVersion: 'v1' });
    assert.equal(e.count, 1);
    assert.match(e.metadata.name, /^dependent\.[0-9a-f]+$/);
  });

  it('an owner that never existed, and an ownerRef with another UID than the live owner: collected; a cluster-scoped dependent of a namespaced owner kind: never collected', async () => {
    const c = env.plinth.client;
    const live = await create(c, cm('live', 'gc-a'));
    const ghost = await create(c, cm('of-ghost', 'gc-a', [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'never-existed', uid: randomUUID() }]));
    const replaced = await create(c, cm('of-replaced', 'gc-a', [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'live', uid: randomUUID() }]));
    const clusterScoped = await create(c, { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'gc-of-namespaced', ownerReferences: [refTo(live, false)] }, rules: [] });
    const sibling = await create(c, { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'gc-of-missing-cluster-owner', ownerReferences: [{ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', name: 'nope', uid: randomUUID() }] }, rules: [] });
    await gone(c, [ghost, replaced, sibling], 'dependents of absent or replaced owners collected');
    assert.ok(await read(c, live), 'the live object named by a stale UID stays');
    // The cluster-scoped dependent was handled in the same round (its sibling is gone): still there.
    await new Promise((r) => setTimeout(r, 1000));
    const kept = await read(c, clusterScoped);
    assert.ok(kept, 'a cluster-scoped object naming a namespaced owner kind is never collected');
    assert.equal(kept.metadata.deletionTimestamp, undefined);
  });
});

describe('metrics', () => {
  it("exposes kube's GC sync error counter and the workqueue metrics of its queues", async () => {
    const m = (await env.plinth.client.get('/metrics')).raw.toString();
    assert.match(m, /^# HELP garbagecollector_controller_resources_sync_error_total \[ALPHA\] Number of garbage collector resources sync errors$/m);
    assert.match(m, /^garbagecollector_controller_resources_sync_error_total 0$/m);
    assert.match(m, /^workqueue_adds_total\{name="garbage_collector_attempt_to_delete"\} [1-9]\d*$/m);
    assert.match(m, /^workqueue_adds_total\{name="garbage_collector_attempt_to_orphan"\} [1-9]\d*$/m);
    assert.match(m, /^workqueue_depth\{name="garbage_collector_attempt_to_delete"\} \d+$/m);
    assert.match(m, /^workqueue_work_duration_seconds_count\{name="garbage_collector_attempt_to_delete"\} [1-9]\d*$/m);
  });
});

describe('--enable-garbage-collector=false', () => {
  before(() => setup());
  it('DELETE adds no GC finalizer and no collector runs', async () => {
    // A second apiserver on the same etcd, alone in its election (another lease name), so its own controllers run.
    await withInProcess(env.etcd, ['--enable-garbage-collector=false', '--leader-elect-resource-name=gc-off', '--controllers=garbagecollector'], async (p) => {
      const c = p.client;
      const owner = await create(c, cm('off-owner', 'gc-a', [], [HOLD]));
      // The DELETE answers with the object it left (the other server's collector, on the same
      // etcd, would remove a foregroundDeletion finalizer soon after: the answer is what counts).
      const r = await c.delete(pathOfObj(owner), { body: { apiVersion: 'v1', kind: 'DeleteOptions', propagationPolicy: 'Foreground' } });
      assert.equal(r.status, 200);
      assert.ok(r.body.metadata.deletionTimestamp);
      assert.deepEqual(r.body.metadata.finalizers, [HOLD], 'no foregroundDeletion finalizer added');
      await setFinalizers(c, owner, []);
      await gone(c, [owner], 'the owner gone');
      const m = (await c.get('/metrics')).raw.toString();
      assert.doesNotMatch(m, /workqueue_adds_total\{name="garbage_collector_attempt_to_delete"\}/, 'this server runs no collector');
    });
  });
});

describe('leader change in the middle of a foreground deletion', () => {
  const ELECTION = ['--leader-elect-lease-duration=4s', '--leader-elect-renew-deadline=3s', '--leader-elect-retry-period=1s', '--controllers=garbagecollector'];
  let etcd: TestEtcd;
  let a: InProcessPlinth | undefined;
  let b: InProcessPlinth | undefined;
  const LEASE = '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/plinth-apiserver';
  after(async () => {
    await a?.stop();
    await b?.stop();
    await etcd?.stop();
  });

  it('the new leader rebuilds the graph and finishes the deletion once the blocking dependent goes', async () => {
    etcd = await startTestEtcd();
    a = await startInProcess({ etcd, args: ELECTION });
    const first = await eventually(async () => (await a!.client.get(LEASE)).body?.spec?.holderIdentity, 20_000, 'a leader');
    b = await startInProcess({ etcd, args: ELECTION });
    const c = b.client;
    assert.equal((await c.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'gc-le' } })).status, 201);
    const owner = await create(c, cm('owner', 'gc-le'));
    const held = await create(c, cm('held', 'gc-le', [refTo(owner)], [HOLD]));
    const free = await create(c, cm('free', 'gc-le', [refTo(owner)]));
    assert.equal(await deleteWith(c, owner, 'Foreground'), 200);
    await gone(c, [free], 'the unheld dependent collected by the first leader');
    await eventually(async () => (await read(c, held))?.metadata.deletionTimestamp, 20_000, 'the held dependent being deleted');
    assert.deepEqual((await read(c, owner))?.metadata.finalizers, ['foregroundDeletion']);
    // The leader stops (handing the lease over); the other replica takes over.
    await a.stop();
    a = undefined;
    await eventually(async () => {
      const h = (await c.get(LEASE)).body?.spec?.holderIdentity;
      return h && h !== first && h;
    }, 30_000, 'the second replica leading');
    await setFinalizers(c, held, []);
    await gone(c, [held, owner], 'the owner deleted through the new leader', 30_000);
  });
});
