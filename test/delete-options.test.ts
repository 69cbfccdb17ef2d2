/**
 * DeleteOptions on the real server, as kube 1.24's generic store answers them: propagationPolicy
 * and orphanDependents (the `orphan` / `foregroundDeletion` finalizers, their removal, kube's
 * 422s), 200 vs 202, preconditions (kube's 409 messages), deletecollection, dry run, the query
 * form, a resource whose default policy is Unsupported (Events), and graceful deletion
 * (gracePeriodSeconds) through a graceful-delete strategy installed for this test only.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { configmaps, type ResourceStrategy } from '@plinth/api';
import { eventually, kubectlPath, usePlinth, type TestClient } from './harness.js';
import { expectCode, expectStatus } from './assertions.js';

const NS = 'delete-options';
const CM = `/api/v1/namespaces/${NS}/configmaps`;
// The apiserver side alone, as kube-apiserver without kube-controller-manager: the garbage
// collector would act on the finalizers these tests look at (its own tests: garbage-collector.test.ts).
const env = usePlinth(['--controllers=*,-garbagecollector']);
let c: TestClient;

function cm(name: string, meta: Record<string, unknown> = {}): Record<string, unknown> {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, ...meta }, data: { k: 'v' } };
}

async function create(name: string, meta: Record<string, unknown> = {}): Promise<any> {
  const res = await c.post(CM, cm(name, meta));
  expectCode(res, 201, `create ${name}`);
  return res.body;
}

function del(name: string, body?: Record<string, unknown>, query = ''): Promise<import('./harness.js').Response> {
  return c.delete(`${CM}/${name}${query}`, body ? { body: { apiVersion: 'v1', kind: 'DeleteOptions', ...body } } : {});
}

async function get(name: string): Promise<any> {
  const res = await c.get(`${CM}/${name}`);
  return res.status === 200 ? res.body : undefined;
}

/** Removes every finalizer so the object goes (PUT, as a controller would). */
async function release(name: string): Promise<void> {
  const cur = await get(name);
  if (!cur) return;
  expectCode(await c.put(`${CM}/${name}`, { ...cur, metadata: { ...cur.metadata, finalizers: [] } }), 200, `release ${name}`);
}

let ready: Promise<void> | undefined;
/** Once per file, in each suite's `before`: the client, and the namespace the tests use. */
function setup(): Promise<void> {
  return (ready ??= (async () => {
    c = (await eventually(async () => env.plinth, 60_000, 'plinth')).client;
    expectCode(await c.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } }), 201);
  })());
}

describe('propagationPolicy and orphanDependents', () => {
  before(setup);
  it('Foreground keeps the object with the foregroundDeletion finalizer (200 with the object), until it is removed', async () => {
    await create('fg');
    const res = await del('fg', { propagationPolicy: 'Foreground' });
    expectCode(res, 200);
    assert.equal(res.body.kind, 'ConfigMap');
    assert.deepEqual(res.body.metadata.finalizers, ['foregroundDeletion']);
    assert.ok(res.body.metadata.deletionTimestamp);
    assert.equal(res.body.metadata.deletionGracePeriodSeconds, 0);
    const stored = await get('fg');
    assert.deepEqual(stored.metadata.finalizers, ['foregroundDeletion']);
    assert.equal(stored.metadata.resourceVersion, res.body.metadata.resourceVersion);
    await release('fg');
    assert.equal(await get('fg'), undefined, 'gone once its finalizer is removed');
  });

  it('Orphan, and orphanDependents: true, add the orphan finalizer; the query form works alike', async () => {
    await create('or-1');
    const a = await del('or-1', { propagationPolicy: 'Orphan' });
    expectCode(a, 200);
    assert.deepEqual(a.body.metadata.finalizers, ['orphan']);
    await create('or-2');
    const b = await del('or-2', { orphanDependents: true });
    expectCode(b, 200);
    assert.deepEqual(b.body.metadata.finalizers, ['orphan']);
    await create('or-3');
    const q = await del('or-3', undefined, '?propagationPolicy=Orphan');
    expectCode(q, 200);
    assert.deepEqual(q.body.metadata.finalizers, ['orphan']);
    await create('or-4');
    const q2 = await del('or-4', undefined, '?orphanDependents=true');
    assert.deepEqual(q2.body.metadata.finalizers, ['orphan']);
    for (const n of ['or-1', 'or-2', 'or-3', 'or-4']) await release(n);
  });

  it('a body takes the place of the query: its options alone count (kube reads one or the other)', async () => {
    await create('body-wins');
    // The query asks for a dry run and an orphan finalizer; the body (options of its own) wins.
    const res = await del('body-wins', { propagationPolicy: 'Background' }, '?dryRun=All&propagationPolicy=Orphan');
    expectCode(res, 200);
    assert.equal(res.body.kind, 'Status', 'deleted: the query options were not read');
    assert.equal(await get('body-wins'), undefined);
  });

  it('the other GC finalizer is taken away, other finalizers stay; with none left the object goes at once', async () => {
    await create('swap', { finalizers: ['example.com/keep', 'orphan'] });
    const res = await del('swap', { propagationPolicy: 'Foreground' });
    expectCode(res, 200);
    assert.deepEqual(res.body.metadata.finalizers, ['example.com/keep', 'foregroundDeletion']);
    // Already deleting: the options still set the GC finalizers (only a graceful deletion freezes them).
    const again = await del('swap', { propagationPolicy: 'Background' });
    expectCode(again, 200);
    assert.deepEqual(again.body.metadata.finalizers, ['example.com/keep']);
    await release('swap');

    await create('only-orphan', { finalizers: ['orphan'] });
    const bg = await del('only-orphan', { propagationPolicy: 'Background' });
    expectCode(bg, 200);
    assert.equal(bg.body.kind, 'Status');
    assert.equal(bg.body.status, 'Success');
    assert.equal(await get('only-orphan'), undefined);

    // An orphan finalizer already there is kept by a delete that names no policy.
    await create('keep-orphan', { finalizers: ['orphan'] });
    const kept = await del('keep-orphan');
    expectCode(kept, 200);
    assert.deepEqual(kept.body.metadata.finalizers, ['orphan']);
    assert.ok(kept.body.metadata.deletionTimestamp);
    await release('keep-orphan');
  });

  it('202 only for orphanDependents: false on an object finalizers keep; 200 with a Status when it is gone', async () => {
    await create('accepted', { finalizers: ['example.com/keep'] });
    const res = await del('accepted', { orphanDependents: false });
    expectCode(res, 202);
    assert.equal(res.body.kind, 'ConfigMap');
    assert.deepEqual(res.body.metadata.finalizers, ['example.com/keep']);
    await release('accepted');

    await create('plain');
    const gone = await del('plain', { orphanDependents: false });
    expectCode(gone, 200);
    assert.equal(gone.body.kind, 'Status');
    assert.equal(gone.body.details.name, 'plain');
    assert.equal(gone.body.details.kind, 'configmaps');

    // Other pending deletions are 200, as kube keeps them for older clients.
    await create('kept', { finalizers: ['example.com/keep'] });
    expectCode(await del('kept', { propagationPolicy: 'Background' }), 200);
    await release('kept');
  });

  it('orphanDependents with propagationPolicy, or an unknown policy, is kube\'s 422', async () => {
    await create('bad-opts');
    expectStatus(
      await del('bad-opts', { orphanDependents: true, propagationPolicy: 'Orphan' }),
      422,
      'Invalid',
      'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Invalid value: "Orphan": orphanDependents and deletionPropagation cannot be both set',
    );
    expectStatus(
      await del('bad-opts', undefined, '?orphanDependents=false&propagationPolicy=Background'),
      422,
      'Invalid',
      'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Invalid value: "Background": orphanDependents and deletionPropagation cannot be both set',
    );
    const unknown = await del('bad-opts', { propagationPolicy: 'Sideways' });
    expectStatus(
      unknown,
      422,
      'Invalid',
      'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "Sideways": supported values: "Foreground", "Background", "Orphan", "nil"',
    );
    assert.deepEqual(unknown.body.details.causes, [
      { reason: 'FieldValueNotSupported', message: 'Unsupported value: "Sideways": supported values: "Foreground", "Background", "Orphan", "nil"', field: 'propagationPolicy' },
    ]);
    assert.ok(await get('bad-opts'), 'nothing was deleted');
  });

  it('Events, unlike ConfigMaps, never get GC finalizers (their default policy is Unsupported)', async () => {
    await create('not-an-event');
    assert.deepEqual((await del('not-an-event', { propagationPolicy: 'Foreground' })).body.metadata.finalizers, ['foregroundDeletion']);
    await release('not-an-event');
    const ev = { apiVersion: 'v1', kind: 'Event', metadata: { name: 'ev' }, involvedObject: { kind: 'ConfigMap', name: 'x', namespace: NS }, reason: 'R', message: 'm' };
    expectCode(await c.post(`/api/v1/namespaces/${NS}/events`, ev), 201);
    const res = await c.delete(`/api/v1/namespaces/${NS}/events/ev`, { body: { propagationPolicy: 'Foreground' } });
    expectCode(res, 200);
    assert.equal(res.body.kind, 'Status');
    expectCode(await c.get(`/api/v1/namespaces/${NS}/events/ev`), 404);
  });
});

describe('preconditions', () => {
  before(setup);
  it('a wrong uid or resourceVersion is kube\'s 409; matching ones delete', async () => {
    const obj = await create('pre');
    const uid = await del('pre', { preconditions: { uid: 'not-the-uid' } });
    expectStatus(
      uid,
      409,
      'Conflict',
      `Operation cannot be fulfilled on ConfigMap "pre": the UID in the precondition (not-the-uid) does not match the UID in record (${obj.metadata.uid}). The object might have been deleted and then recreated`,
    );
    assert.deepEqual(uid.body.details, { name: 'pre', kind: 'ConfigMap' });
    expectStatus(
      await del('pre', { preconditions: { resourceVersion: '1' } }),
      409,
      'Conflict',
      `Operation cannot be fulfilled on ConfigMap "pre": the ResourceVersion in the precondition (1) does not match the ResourceVersion in record (${obj.metadata.resourceVersion}). The object might have been modified`,
    );
    assert.ok(await get('pre'));
    const ok = await del('pre', { preconditions: { uid: obj.metadata.uid, resourceVersion: obj.metadata.resourceVersion } });
    expectCode(ok, 200);
    assert.equal(ok.body.details.uid, obj.metadata.uid);
    assert.equal(await get('pre'), undefined);
  });

  it('a resourceVersion precondition still holds through the finalizer update', async () => {
    const obj = await create('pre-fin', { finalizers: ['example.com/keep'] });
    const res = await del('pre-fin', { preconditions: { resourceVersion: obj.metadata.resourceVersion }, propagationPolicy: 'Orphan' });
    expectCode(res, 200);
    assert.deepEqual(res.body.metadata.finalizers, ['example.com/keep', 'orphan']);
    await release('pre-fin');
  });
});

describe('deletecollection and dry run', () => {
  before(setup);
  it('deletecollection applies the options to every object and answers with the list it read', async () => {
    await create('dc-1', { labels: { set: 'dc' } });
    await create('dc-2', { labels: { set: 'dc' } });
    const res = await c.delete(`${CM}?labelSelector=set%3Ddc`, { body: { propagationPolicy: 'Orphan' } });
    expectCode(res, 200);
    assert.equal(res.body.kind, 'ConfigMapList');
    assert.deepEqual(res.body.items.map((i: any) => i.metadata.name).sort(), ['dc-1', 'dc-2']);
    for (const n of ['dc-1', 'dc-2']) {
      const o = await get(n);
      assert.deepEqual(o.metadata.finalizers, ['orphan']);
      assert.ok(o.metadata.deletionTimestamp);
      await release(n);
    }
  });

  it('a dry-run delete with a policy answers with the would-be object and stores nothing', async () => {
    const obj = await create('dry');
    const res = await del('dry', { propagationPolicy: 'Foreground', dryRun: ['All'] });
    expectCode(res, 200);
    assert.deepEqual(res.body.metadata.finalizers, ['foregroundDeletion']);
    const stored = await get('dry');
    assert.equal(stored.metadata.resourceVersion, obj.metadata.resourceVersion);
    assert.equal(stored.metadata.finalizers, undefined);
    assert.equal(stored.metadata.deletionTimestamp, undefined);
    const dc = await c.delete(`${CM}?dryRun=All&fieldSelector=metadata.name%3Ddry&propagationPolicy=Orphan`);
    expectCode(dc, 200);
    assert.equal((await get('dry')).metadata.finalizers, undefined);
  });

  it('kubectl delete --cascade=orphan sets the orphan finalizer', async () => {
    await create('kubectl-orphan');
    // Asynchronously: the server runs in this process.
    const r = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(kubectlPath(), ['--kubeconfig', env.plinth.server.kubeconfigPath, '-n', NS, 'delete', 'configmap', 'kubectl-orphan', '--cascade=orphan', '--wait=false'], { encoding: 'utf8', timeout: 60_000 }, (err, stdout, stderr) =>
        resolve({ code: err ? 1 : 0, stdout, stderr }),
      );
    });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /configmap "kubectl-orphan" deleted/);
    assert.deepEqual((await get('kubectl-orphan')).metadata.finalizers, ['orphan']);
    await release('kubectl-orphan');
  });
});

describe('graceful deletion (a graceful strategy installed for this test: objects labelled graceful=yes, default 30 s)', () => {
  const strategy = configmaps.strategy as ResourceStrategy;
  before(async () => {
    await setup();
    strategy.checkGracefulDelete = (obj, opts) => {
      if (obj.metadata.labels?.['graceful'] !== 'yes') return false;
      opts.gracePeriodSeconds ??= 30;
      return true;
    };
  });
  after(() => {
    delete strategy.checkGracefulDelete;
  });
  const seconds = (ts: string): number => Date.parse(ts) / 1000;

  it('a graceful delete keeps the object until now + grace; a longer grace changes nothing; a shorter one moves the deadline; 0 deletes', async () => {
    await create('gr', { labels: { graceful: 'yes' } });
    const t0 = Date.now() / 1000;
    const first = await del('gr');
    expectCode(first, 200);
    assert.equal(first.body.kind, 'ConfigMap');
    assert.equal(first.body.metadata.deletionGracePeriodSeconds, 30);
    const deadline = seconds(first.body.metadata.deletionTimestamp);
    assert.ok(deadline >= Math.floor(t0) + 29 && deadline <= t0 + 32, `deadline ${deadline} ~ now + 30`);
    assert.equal((await get('gr')).metadata.deletionGracePeriodSeconds, 30);

    const longer = await del('gr', { gracePeriodSeconds: 60 });
    expectCode(longer, 200);
    // A graceful deletion already under way: kube answers as for a deleted object.
    assert.equal(longer.body.kind, 'Status');
    assert.equal((await get('gr')).metadata.deletionGracePeriodSeconds, 30);

    const shorter = await del('gr', { gracePeriodSeconds: 10 });
    expectCode(shorter, 200);
    assert.equal(shorter.body.metadata.deletionGracePeriodSeconds, 10);
    assert.equal(seconds(shorter.body.metadata.deletionTimestamp), deadline - 20);

    const now = await del('gr', undefined, '?gracePeriodSeconds=0');
    expectCode(now, 200);
    assert.equal(now.body.kind, 'Status');
    assert.equal(await get('gr'), undefined);

    // Objects the strategy does not delete gracefully go at once, whatever grace is asked.
    await create('not-graceful');
    const res = await del('not-graceful', { gracePeriodSeconds: 30 });
    expectCode(res, 200);
    assert.equal(res.body.kind, 'Status');
    assert.equal(await get('not-graceful'), undefined);
  });

  it('with finalizers: removing them does not delete while the grace period runs; a delete with grace 0 then does', async () => {
    await create('gr-fin', { labels: { graceful: 'yes' }, finalizers: ['example.com/keep'] });
    const res = await del('gr-fin', { gracePeriodSeconds: 5, propagationPolicy: 'Orphan' });
    expectCode(res, 200);
    assert.equal(res.body.metadata.deletionGracePeriodSeconds, 5);
    assert.deepEqual(res.body.metadata.finalizers, ['example.com/keep', 'orphan']);
    // Graceful deletion under way: the options no longer change the finalizers.
    expectCode(await del('gr-fin', { gracePeriodSeconds: 5, propagationPolicy: 'Foreground' }), 200);
    assert.deepEqual((await get('gr-fin')).metadata.finalizers, ['example.com/keep', 'orphan']);
    await release('gr-fin');
    const kept = await get('gr-fin');
    assert.ok(kept, 'still there: its grace period runs');
    assert.equal(kept.metadata.finalizers, undefined);
    const gone = await del('gr-fin', { gracePeriodSeconds: 0 });
    expectCode(gone, 200);
    assert.equal(await get('gr-fin'), undefined);
  });

  it('a negative grace period counts as 1 s; bad values are 400', async () => {
    await create('gr-neg', { labels: { graceful: 'yes' } });
    const res = await del('gr-neg', { gracePeriodSeconds: -5 });
    expectCode(res, 200);
    assert.equal(res.body.metadata.deletionGracePeriodSeconds, 1);
    expectStatus(await del('gr-neg', undefined, '?gracePeriodSeconds=soon'), 400, 'BadRequest', 'strconv.ParseInt: parsing "soon": invalid syntax');
    expectStatus(await del('gr-neg', { gracePeriodSeconds: 'soon' }), 400, 'BadRequest');
    expectCode(await del('gr-neg', { gracePeriodSeconds: 0 }), 200);
  });
});
